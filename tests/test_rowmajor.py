"""Row-major tensors tilized and untilized on the chip (tt_hal/kernels/rowmajor.py),
dispatched through the HAL over raw buffers as IREE binds them: byte ranges at any
offset, with other tensors right next to them.

- `tilize` and `untilize` only move bytes: they are compared bit for bit with numpy
  twins (tests/reference.py's tilize and untilize of the folded matrix) over shapes
  (heights and widths that are not multiples of 32, one row, one column), element
  sizes (1, 2 and 4 bytes), offsets (16-byte aligned, face rows crossing the buffer's 4096-byte pages,
  buffers of one page, an extra offset from a push constant) and the bytes around the
  tensor, which the writer must leave alone.
- The programs built on them (eltwise binary, copy) are checked against numpy twins of
  the compute numerics (docs/tensix.md#numerics).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hal
from tests import reference
from tt_hal.kernels import fused, reduce, rowmajor, transpose
from tt_hal.kernels.common import workgroup_count
from tt_hal.target.isa import Broadcast, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.sizes import TILE, ceil_div
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

F32, BF16 = DataFormat.float32, DataFormat.bfloat16
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32}  # element size -> the dtype of its bit patterns
RAW_PAGE = 4096  # a raw buffer's page size, when it is larger


@pytest.fixture(scope="module")
def executables(device):
    """Prepared once per program: executables[(builder, format, offsets)]."""
    cache = {}

    def get(builder, fmt, offsets=False, **options):
        key = (builder, fmt, offsets, tuple(sorted(options.items())))
        if key not in cache:
            export = builder(fmt, offsets=offsets, **options)
            cache[key] = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT,
                                                                           write_executable([export]))
        return cache[key]

    return get


def raw_buffer(device, data: np.ndarray):
    """A raw device buffer (IREE's: DRAM, pages of min(4096, size) bytes) holding `data`."""
    return device.allocator.allocate_buffer_copy(hal.MemoryType.DEVICE_LOCAL,
                                                 hal.BufferUsage.DEFAULT | hal.BufferUsage.MAPPING, device,
                                                 np.ascontiguousarray(data).view(np.uint8))


def tile_buffer(device, fmt: DataFormat, rows: int, columns: int, data: np.ndarray, batches: int = 1):
    """A DRAM buffer of the tile pages (page size: a tile) of `batches` (rows, columns)
    matrices, holding the bytes `data`."""
    buffer = device.allocator.allocate_tensor((batches, rows, columns), fmt, "tile",
                                              hal.DRAM_MEMORY_CONFIG).get_buffer()
    buffer.map_write(0, data.tobytes())
    return buffer


def host_bytes(buffer) -> np.ndarray:
    return np.frombuffer(buffer.map_read(0, None), np.uint8).copy()


def tiles(rows: int, columns: int, batches: int = 1) -> int:
    return batches * ceil_div(rows, TILE) * ceil_div(columns, TILE)


def window_layout(rows, columns, batches=1, window=(0, 0, None)) -> tuple[np.ndarray, list]:
    """(the index of each element of `batches` (rows, columns) matrices in the larger
    row-major tensor they are a window of, that tensor's window push constants).
    `window`: (extra rows, extra columns, segments[, row groups]): the larger tensor's
    rows and matrices further apart, with segments (columns, gap) each row runs of that
    many columns, `gap` elements between them (a (C, H*W) matrix in a padded
    (C, H + 2, W + 2) tensor), and with row groups (rows, gap) the rows in groups of that
    many, `gap` rows between them (an (H*W, C) matrix in a padded (H + 2, W + 2, C) one)."""
    extra_rows, extra_columns, segments, *row_groups = window
    segment, gap = segments or (columns, 0)
    group, group_gap = row_groups[0] if row_groups and row_groups[0] else (rows, 0)
    segment_stride = segment + gap
    row_stride = ceil_div(columns, segment) * segment_stride + extra_columns
    group_stride = (group + group_gap) * row_stride
    batch_stride = ceil_div(rows, group) * group_stride + extra_rows * row_stride
    column, row = np.arange(columns), np.arange(rows)
    indices = (np.arange(batches)[:, None, None] * batch_stride
               + (row // group * group_stride + row % group * row_stride)[None, :, None]
               + (column // segment * segment_stride + column % segment)[None, None, :])
    return indices, [row_stride, batch_stride, segment, segment_stride, group, group_stride]


def dispatch(device, executable, rows, columns, bindings, offsets=(), workgroups=1, batches=1,
             window=(0, 0, None)) -> None:
    """`window`: the larger tensor the row-major binding is a window of (window_layout)."""
    cb = hal.HalCommandBuffer(device)
    constants = rowmajor.push_constants(rows, columns, offsets, batches, *window_layout(rows, columns, 1, window)[1])
    cb.dispatch(executable, 0, workgroup_count(tiles(rows, columns, batches), workgroups),
                np.array(constants, np.uint32).tobytes(), bindings)
    cb.end()
    done = device.create_semaphore(0)
    device.queue_execute(cb, [], [(done, 1)])
    assert done.wait(1, timeout=60 * 10**9)


# ---- The numpy twins ----

def tilize_twin(tensor: np.ndarray) -> np.ndarray:
    """Tile pages (face order, zero padding) of a (rows, columns) array of bit
    patterns, or of a (batches, rows, columns) one, matrix after matrix."""
    return reference.tilize(tensor).view(np.uint8).reshape(-1)


def untilize_twin(pages: np.ndarray, rows: int, columns: int, size: int, batches: int = 1) -> np.ndarray:
    """The (batches, rows, columns) matrices of bit patterns the tile pages hold."""
    return reference.untilize(pages.view(BITS[size]), (batches, rows, columns))


def test_twins_invert_each_other():
    tensor = np.arange(45 * 70, dtype=np.uint16).reshape(45, 70)
    pages = tilize_twin(tensor)
    assert pages.size == 2 * 3 * 2048 and np.array_equal(untilize_twin(pages, 45, 70, 2)[0], tensor)
    tile = pages[:2048].view(np.uint16).reshape(4, 16, 16)  # tile (0, 0): four faces
    assert tile[1, 2, 3] == tensor[2, 19] and tile[2, 2, 3] == tensor[18, 3]
    last = pages[5 * 2048:].view(np.uint16).reshape(4, 16, 16)  # tile (1, 2): rows 32.., columns 64..
    assert last[0, 12, 5] == tensor[44, 69] and last[0, 12, 6] == 0 and not last[2:].any()


# ---- Data movement: tilize and untilize, bit for bit ----

LAYOUTS = dict(
    fmt=st.sampled_from([BF16, F32, DataFormat.int32, DataFormat.uint16, DataFormat.uint8]),  # uint8: booleans
    rows=st.one_of(st.integers(1, 80), st.sampled_from([1, 16, 32, 33, 64])),
    # Blocks hold up to 8 tiles of a tile row: 256 columns are one full block, wider rows several, the last
    # one narrower.
    columns=st.one_of(st.integers(1, 80), st.sampled_from([1, 16, 32, 47, 64, 256, 257, 300, 520])),
    offset=st.integers(0, 330).map(lambda n: 16 * n),  # IREE's bindings: 16-byte aligned, up past a 4096-byte page
    tail=st.integers(0, 5000),  # bytes after the tensor: makes some buffers one page, others several
    from_constant=st.booleans(),  # part of the offset is a push constant
    workgroups=st.integers(1, 4),
    batches=st.sampled_from([1, 1, 2, 3]),  # matrices one after another, each padded to tiles on its own
    # A window of a larger tensor (extra rows per matrix, extra columns per row, each row runs of
    # columns with gaps between them or not, rows in groups with gaps between them or not), or the whole one.
    window=st.sampled_from([(0, 0, None)] * 3 + [(0, 5, None), (3, 0, None), (2, 40, None), (0, 0, (16, 2)),
                                                  (1, 3, (7, 1)), (0, 0, (1, 3)), (2, 0, (40, 9)),
                                                  (0, 0, None, (16, 2)), (1, 0, None, (5, 1)), (0, 3, None, (1, 2)),
                                                  (0, 0, (7, 1), (40, 3)), (0, 0, None, (33, 1))]),
)


def placed(nbytes, offset, tail, from_constant, seed):
    """Random buffer bytes with a tensor of `nbytes` at `offset`; the binding's offset
    and the push-constant offset, which add up to `offset`."""
    data = np.random.default_rng(seed).integers(0, 256, offset + nbytes + tail, np.uint8)
    constant = offset % 64 if from_constant else 0
    return data, offset - constant, constant


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**LAYOUTS)
def test_tilize_matches_its_twin(device, executables, fmt, rows, columns, offset, tail, from_constant,
                                 workgroups, batches, window):
    size = fmt.element_size
    indices = window_layout(rows, columns, batches, window)[0]
    nbytes = (int(indices.max()) + 1) * size  # the tensor the window is of, up to its last element
    data, binding_offset, constant = placed(nbytes, offset, tail, from_constant, rows * columns)
    tensor = data[offset:offset + nbytes].view(BITS[size])[indices]
    source = raw_buffer(device, data)
    pages = tile_buffer(device, fmt, rows, columns,
                        np.full(tiles(rows, columns, batches) * fmt.tile_size, 0xA5, np.uint8), batches)
    dispatch(device, executables(rowmajor.tilize, fmt, from_constant), rows, columns,
             [(source, binding_offset, constant + nbytes), pages], [constant] if from_constant else (), workgroups,
             batches, window)
    assert np.array_equal(host_bytes(pages), tilize_twin(tensor))
    assert np.array_equal(host_bytes(source), data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**LAYOUTS)
def test_untilize_matches_its_twin_and_spares_the_neighbours(device, executables, fmt, rows, columns, offset, tail,
                                                             from_constant, workgroups, batches, window):
    size = fmt.element_size
    indices = window_layout(rows, columns, batches, window)[0]
    nbytes = (int(indices.max()) + 1) * size  # the tensor the window is of, up to its last element
    data, binding_offset, constant = placed(nbytes, offset, tail, from_constant, rows + columns)
    page_bytes = np.random.default_rng(offset).integers(0, 256, tiles(rows, columns, batches) * fmt.tile_size,
                                                        np.uint8)
    pages, target = tile_buffer(device, fmt, rows, columns, page_bytes, batches), raw_buffer(device, data)
    dispatch(device, executables(rowmajor.untilize, fmt, from_constant), rows, columns,
             [pages, (target, binding_offset, constant + nbytes)], [constant] if from_constant else (), workgroups,
             batches, window)
    expected = data.copy()
    expected[offset:offset + nbytes].view(BITS[size])[indices] = untilize_twin(
        page_bytes, rows, columns, size, batches)
    assert np.array_equal(host_bytes(target), expected)


def test_face_rows_cross_page_boundaries(device, executables):
    """A float32 tensor 70 wide at byte 4000 of a raw buffer: face rows straddle the
    4096-byte pages at many places, and each is split into one read per page."""
    rows, columns, offset = 40, 70, 4000
    data = np.random.default_rng(7).integers(0, 256, offset + rows * columns * 4 + 96, np.uint8)
    source = raw_buffer(device, data)
    assert source.allocation.backend_buffer.page_size == RAW_PAGE
    tensor = data[offset:offset + rows * columns * 4].view(np.uint32).reshape(rows, columns)
    pages = raw_buffer(device, np.zeros(2 * 3 * 4096, np.uint8))
    dispatch(device, executables(rowmajor.tilize, F32), rows, columns, [(source, offset, rows * columns * 4), pages])
    assert np.array_equal(host_bytes(pages), tilize_twin(tensor))
    target = raw_buffer(device, data)
    dispatch(device, executables(rowmajor.untilize, F32), rows, columns, [pages, (target, offset, rows * columns * 4)])
    assert np.array_equal(host_bytes(target), data)


# ---- Compute on tiles of row-major tensors ----

def tf32(x: np.ndarray) -> np.ndarray:
    """float32 through the unpacker's Src registers: 13 low mantissa bits dropped."""
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def bf16_truncated(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def eltwise_twin(op: str, a: np.ndarray, b: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """Tile-program numerics at HiFi4: bfloat16 operands exact, results rounded to bf16
    in Dst (nearest even); float32 with fp32_dest_acc_en: operands as tf32 for add and
    sub, and the multiplier's bf16 (truncated) for mul, results kept in float32."""
    if fmt is BF16:
        x, y = a.astype(np.float32), b.astype(np.float32)
        result = {"add": x + y, "sub": x - y, "mul": x * y}[op]
        return result.astype(ml_dtypes.bfloat16)
    if op == "mul":
        return bf16_truncated(a) * bf16_truncated(b)
    return tf32(a) + tf32(b) if op == "add" else tf32(a) - tf32(b)


def values(shape, fmt: DataFormat, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 8
    return x.astype(ml_dtypes.bfloat16) if fmt is BF16 else x


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("fmt", [F32, BF16], ids=lambda f: f.name)
@pytest.mark.parametrize("shape", [(3, 45, 70), (1, 1, 100), (70, 1), (2, 64, 32)], ids=str)
def test_eltwise_binary_on_row_major_tensors(device, executables, op, fmt, shape):
    """a <op> b for row-major tensors packed into one buffer, 16 bytes apart, as IREE
    lays them out; the output sits between two neighbours that must survive."""
    rows, columns = int(np.prod(shape[:-1])), shape[-1]
    size, nbytes = fmt.element_size, int(np.prod(shape)) * fmt.element_size
    a, b = values(shape, fmt, 1), values(shape, fmt, 2)
    gap = 16 - nbytes % 16 + 16  # the next tensor starts at the next 16-byte boundary, plus 16
    packed = np.zeros(2 * (nbytes + gap), np.uint8)
    packed[:nbytes], packed[nbytes + gap:2 * nbytes + gap] = a.view(np.uint8).reshape(-1), b.view(np.uint8).reshape(-1)
    inputs = raw_buffer(device, packed)
    background = np.random.default_rng(3).integers(0, 256, nbytes + 96, np.uint8)
    out = raw_buffer(device, background)
    export = rowmajor.eltwise_binary
    options = {"fp32_dest_acc_en": True} if fmt is F32 else {}
    executable = executables(lambda f, offsets: export(op, f, offsets=offsets, **options), fmt)
    dispatch(device, executable, rows, columns,
             [(inputs, 0, nbytes), (inputs, nbytes + gap, nbytes), (out, 48, nbytes)], workgroups=3)
    got = host_bytes(out)
    expected = eltwise_twin(op, a, b, fmt)
    np.testing.assert_array_equal(got[48:48 + nbytes].view(BITS[size]), expected.view(BITS[size]).reshape(-1))
    assert np.array_equal(got[:48], background[:48]) and np.array_equal(got[48 + nbytes:], background[48 + nbytes:])


@pytest.mark.parametrize("fmt", [F32, BF16], ids=lambda f: f.name)
@pytest.mark.parametrize("shape", [(5, 33, 31), (1, 1), (1, 300), (300, 1), (64, 64)], ids=str)
def test_copy_through_tiles_is_the_identity(device, executables, fmt, shape):
    """tilize -> copy_tile -> untilize, with the offsets from push constants: the
    values come back, and nothing else is written. float32 keeps every bit (NaN
    payloads, denormals); the bf16 packer would flush denormals and -0, so bfloat16
    takes normal values."""
    rows, columns = int(np.prod(shape[:-1])), shape[-1]
    nbytes = int(np.prod(shape)) * fmt.element_size
    generator = np.random.default_rng(4)
    bits = generator.integers(0, 256, nbytes, np.uint8) if fmt is F32 else values(shape, fmt, 4).view(np.uint8)
    bits = bits.reshape(-1)
    source = raw_buffer(device, np.concatenate([np.full(80, 0x11, np.uint8), bits]))
    background = np.random.default_rng(5).integers(0, 256, nbytes + 160, np.uint8)
    target = raw_buffer(device, background)
    dispatch(device, executables(rowmajor.copy, fmt, True), rows, columns,
             [(source, 64, 16 + nbytes), (target, 32, 32 + nbytes)], offsets=(16, 32), workgroups=2)
    expected = background.copy()
    expected[64:64 + nbytes] = bits
    assert np.array_equal(host_bytes(target), expected)


def test_formats_without_1_2_or_4_byte_elements_are_unimplemented():
    for fmt in (DataFormat.bfloat8_b, DataFormat.bfloat4_b):
        with pytest.raises(hal.HalError) as error:
            rowmajor.tilize(fmt)
        assert error.value.code == hal.StatusCode.UNIMPLEMENTED


def _span_export(start: int, length: int, target: int, rows: tuple[int, int, int, int] | None = None):
    """A reader kernel copying `length` bytes from byte `start` of binding 0 to byte
    `target` of binding 1 through L1: NOC_READ_SPAN, then NOC_WRITE_SPAN; or, given
    rows (count, source stride, L1 pitch, target stride), NOC_READ_ROWS and
    NOC_WRITE_ROWS of that many such spans."""
    from tt_hal.target.isa import Op, Processor
    from tt_hal.target.kernel_builder import KernelBuilder
    from tt_hal.target.program import CircularBufferConfig, Export, Program, Stage

    k = KernelBuilder("span")
    source, destination = rowmajor.tensor_generators(k, [DataFormat.uint8, DataFormat.uint8], offsets=False)
    ptr, address, count = k.reg("ptr"), k.reg("address"), k.reg("count")
    k.cb_reserve_back(0, 1)
    k.emit(Op.GET_WRITE_PTR, ptr, 0)
    k.emit(Op.LI, count, length)
    if rows is not None:
        number, stride, pitch, target_stride = (k.const(value) for value in rows)
    for read, tensor, at in ((True, source, start), (False, destination, target)):
        k.emit(Op.ADDI, address, tensor.base, at)
        if rows is None:
            k.emit(Op.NOC_READ_SPAN if read else Op.NOC_WRITE_SPAN, tensor.slot, address, ptr, count)
        else:
            k.emit(Op.NOC_READ_ROWS if read else Op.NOC_WRITE_ROWS, tensor.slot, address, ptr, count, number,
                   stride if read else target_stride, pitch)
    k.noc_write_barrier()
    program = Program((CircularBufferConfig(0, F32, F32.tile_size, 3),), (k.build(Processor.RISCV_1),),
                      (rowmajor.tensor_args([0, 1]),))
    return Export("span", 0, 2, (1, 1, 1), (Stage(program),))


def _run_span(device, export, source, destination) -> None:
    """Dispatches a _span_export between two raw buffers and waits; raises its fault."""
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable([export]))
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, 0, (1, 1, 1), b"", [source, destination])
    cb.end()
    device.execute_now(cb, timeout=60 * 10**9)


@pytest.mark.parametrize("start, length, target", [(4000, 5000, 100), (0, 3 * RAW_PAGE, 0), (8192, 1, 4095),
                                                   (5000, 0, 5000)])
def test_a_span_moves_bytes_across_pages(device, start, length, target):
    """NOC_READ_SPAN and NOC_WRITE_SPAN move a byte range of a buffer whatever pages it
    crosses (one transfer per page touched), and nothing else."""
    data = np.random.default_rng(start + length).integers(0, 256, 3 * RAW_PAGE, dtype=np.uint8)
    source, destination = raw_buffer(device, data), raw_buffer(device, np.zeros(3 * RAW_PAGE, np.uint8))
    _run_span(device, _span_export(start, length, target), source, destination)
    expected = np.zeros(3 * RAW_PAGE, np.uint8)
    expected[target:target + length] = data[start:start + length]
    assert np.array_equal(host_bytes(destination), expected)


@pytest.mark.parametrize("start, length, rows, target", [
    (4000, 300, (5, 1000, 400, 2000), 100),  # rows across page boundaries, each moved alone
    (0, RAW_PAGE, (2, RAW_PAGE, RAW_PAGE, RAW_PAGE), 0),  # whole pages
    (10, 8, (4, 4090, 8, 3), 5000),  # the target's rows packed closer than the source's
    (0, 100, (0, 100, 100, 100), 0),  # no rows
])
def test_rows_of_spans_move_each_row(device, start, length, rows, target):
    """NOC_READ_ROWS / NOC_WRITE_ROWS: `count` spans, each its stride after the last in
    the buffer and its pitch in L1, as that many NOC_READ_SPAN / NOC_WRITE_SPAN would."""
    data = np.random.default_rng(start + length).integers(0, 256, 3 * RAW_PAGE, dtype=np.uint8)
    source, destination = raw_buffer(device, data), raw_buffer(device, np.zeros(3 * RAW_PAGE, np.uint8))
    _run_span(device, _span_export(start, length, target, rows), source, destination)
    count, stride, _, target_stride = rows
    expected = np.zeros(3 * RAW_PAGE, np.uint8)
    for i in range(count):
        to, at = target + i * target_stride, start + i * stride
        expected[to:to + length] = data[at:at + length]
    assert np.array_equal(host_bytes(destination), expected)


@pytest.mark.parametrize("rows, target", [((3, 8, 8, RAW_PAGE), 2 * RAW_PAGE - 10), ((-1, 8, 8, 8), 0)],
                         ids=["last-row-past-the-end", "negative-count"])
def test_rows_past_the_buffer_fault_before_moving_any(device, rows, target):
    """Rows of spans are checked before any moves: a last row past the buffer's end (or a
    negative count) faults and the rows before it are not written."""
    source, destination = raw_buffer(device, np.full(3 * RAW_PAGE, 7, np.uint8)), \
        raw_buffer(device, np.zeros(3 * RAW_PAGE, np.uint8))
    with pytest.raises(hal.HalError) as info:
        _run_span(device, _span_export(0, 8, target, rows), source, destination)
    assert info.value.code == hal.StatusCode.ABORTED and "NoC access outside any bound buffer" in info.value.message
    assert not host_bytes(destination).any()


def test_a_span_past_the_buffer_faults(device):
    """A span that runs past the buffer's last page is a NoC access outside any bound buffer."""
    source, destination = (raw_buffer(device, np.zeros(3 * RAW_PAGE, np.uint8)) for _ in range(2))
    with pytest.raises(hal.HalError) as info:
        _run_span(device, _span_export(2 * RAW_PAGE, RAW_PAGE + 1, 0), source, destination)
    assert info.value.code == hal.StatusCode.ABORTED and "NoC access outside any bound buffer" in info.value.message
    assert not host_bytes(destination).any()


# ---- Row tiles: kernels reading a row-major binding's tile pages themselves ----

def _row_tile_kernels(fmt: DataFormat, batches: int, rows: int, columns: int):
    """(name, builder(rows flag, row output), push constants before the row-tile ones,
    output (rows, columns) per batch) of each library kernel that reads row tiles, over a
    (batches, rows, columns) input; its second input (fused) a broadcast row."""
    ht, wt = ceil_div(rows, TILE), ceil_div(columns, TILE)
    add = (fused.Input(0), fused.Input(1), fused.Binary(SfpuOp.ADD, 0, 1))
    inputs = (fused.FusedInput(fmt), fused.FusedInput(fmt, Broadcast.ROW, batch_broadcast=True))
    yield ("transpose", lambda flags, out: transpose.transpose(fmt, fmt, True, flags, out), [batches * ht * wt, wt, ht],
           (columns, rows))
    yield ("reduce_sum_row", lambda flags, out: reduce.reduce(ReduceKind.SUM_ROW, fmt, fmt, fp32_dest_acc_en=True,
                                                               rows=flags, row_output=out), [batches * ht, wt, 1],
           (rows, 1))
    yield ("reduce_max_col", lambda flags, out: reduce.reduce(ReduceKind.MAX_COL, fmt, fmt, fp32_dest_acc_en=True,
                                                               rows=flags, row_output=out), [batches * wt, ht, wt],
           (1, columns))
    yield ("eltwise_fused", lambda flags, out: fused.eltwise_fused("fused", inputs, add, fmt, fp32_dest_acc_en=True,
                                                                   rows=flags * 2, row_output=out),
           [batches * ht * wt, ht, wt], (rows, columns))


def run_export(device, export, workgroups: int, constants, bindings) -> None:
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable([export]))
    command_buffer = hal.HalCommandBuffer(device)
    command_buffer.dispatch(executable, 0, workgroup_count(constants[0], workgroups),
                            np.array(constants, np.uint32).tobytes(), bindings)
    command_buffer.end()
    done = device.create_semaphore(0)
    device.queue_execute(command_buffer, [], [(done, 1)])
    assert done.wait(1, timeout=60 * 10**9)


@pytest.mark.parametrize("fmt", [F32, BF16], ids=lambda f: f.name)
@pytest.mark.parametrize("batches, rows, columns, window, offset", [
    (1, 45, 70, (0, 0), 0), (2, 32, 64, (0, 0), 4000), (3, 17, 33, (2, 40), 48), (1, 1, 300, (0, 0), 16)], ids=str)
@pytest.mark.parametrize("kernel", range(4), ids=["transpose", "reduce_sum_row", "reduce_max_col", "eltwise_fused"])
def test_kernels_read_and_write_row_major_tensors_as_their_tiles(device, fmt, batches, rows, columns, window, offset,
                                                                 kernel):
    """A kernel reading its input from a row-major binding (rowmajor.read_row_tiles: the
    reader reads each tile's faces' rows, padding zero) computes what it computes on the
    tilized input, bit for bit; writing its output to a row-major binding
    (write_row_tiles) it writes the untilized tiles, and no byte around them:
    transpose, reductions along rows and columns, a fused elementwise kernel with a
    broadcast row also read from rows; shapes not multiples of 32, batches, windows of a
    larger tensor, offsets past a 4096-byte page, and (the third input shape) a
    push-constant part of the offset."""
    name, build, constants, (out_rows, out_columns) = list(_row_tile_kernels(fmt, batches, rows, columns))[kernel]
    size = fmt.element_size
    value = values((batches, rows, columns), fmt, rows * columns)
    row = values((1, columns), fmt, columns)
    full = (batches, rows + window[0], columns + window[1])
    nbytes = int(np.prod(full)) * size
    data, binding_offset, constant = placed(nbytes, offset, 100, window != (0, 0), batches)
    data[offset:offset + nbytes].view(value.dtype).reshape(full)[:, :rows, :columns] = value
    row_constants = rowmajor.row_tile_constants(rowmajor.push_constants(
        rows, columns, [constant], batches, full[2], full[1] * full[2]))
    tile_inputs = [tile_buffer(device, fmt, rows, columns, tilize_twin(value.view(BITS[size])), batches)]
    row_inputs = [(raw_buffer(device, data), binding_offset, constant + nbytes)]
    if name == "eltwise_fused":  # the broadcast row: tiles, or a whole row-major binding
        tile_inputs.append(tile_buffer(device, fmt, 1, columns, tilize_twin(row.view(BITS[size]))))
        row_inputs.append(raw_buffer(device, row.view(np.uint8).reshape(-1)))
        row_constants += rowmajor.row_tile_constants(rowmajor.push_constants(1, columns, [0]))
    outputs = []
    for inputs, flags, extra in ((tile_inputs, (False,), []), (row_inputs, (True,), row_constants)):
        out = tile_buffer(device, fmt, out_rows, out_columns,
                          np.full(tiles(out_rows, out_columns, batches) * fmt.tile_size, 0xA5, np.uint8), batches)
        run_export(device, build(flags, False), 3, constants + extra, [*inputs, out])
        outputs.append(host_bytes(out))
    assert np.array_equal(outputs[0], outputs[1])
    assert outputs[1].view(np.uint16).any()
    # The output row-major at byte 48 of a buffer of other bytes: the untilized tiles, nothing else changed.
    out_bytes = batches * out_rows * out_columns * size
    around = np.random.default_rng(size).integers(0, 256, 48 + out_bytes + 40, np.uint8)
    target = raw_buffer(device, around)
    out_constants = rowmajor.row_tile_constants(rowmajor.push_constants(out_rows, out_columns, [0], batches))
    run_export(device, build((True,), True), 3, constants + row_constants + out_constants,
               [*row_inputs, (target, 48, out_bytes)])
    expected = around.copy()
    untilized = untilize_twin(outputs[0], out_rows, out_columns, size, batches)
    expected[48:48 + out_bytes] = untilized.view(np.uint8).reshape(-1)
    assert np.array_equal(host_bytes(target), expected)
