"""Row-major tensors in IREE's buffers, tilized and untilized on the chip.

IREE binds byte ranges of row-major tensors at any (typically 16- or 64-byte aligned)
byte offset of its buffers, and packs other tensors right next to them. Compute needs
tiles, so these kernels assemble tiles on the reader side and take them apart on the
writer side:

- A tensor of 2- or 4-byte elements (bfloat16, float32, int32, ...) is a batch of
  (rows, columns) matrices, one after another, and starts at byte `base` of its
  binding's buffer: the binding's byte offset (BINDING_BYTE_OFFSET) plus,
  optionally, a push constant, as IREE passes some binding offsets.
- Tile t is the 32 x 32 block at row 32 (r // Wt), column 32 (r % Wt) of matrix
  t // (Ht Wt), r = t % (Ht Wt), Ht = ceil(rows / 32), Wt = ceil(columns / 32): the
  TILE layout of the batch (docs/layouts.md), each matrix padded on its own. A
  circular-buffer page holds a tile as four 16 x 16 faces. Elementwise programs fold
  the outer dimensions into the rows instead (one matrix): then a tile can span two
  of them, which is right for them and pads less.
- The reader (`gather_tile`) zeroes the page of a tile that sticks out of the matrix
  (L1_FILL), then reads each face row's elements inside the matrix, up to 16, one
  NoC read per page of the buffer they touch (a transfer stays within a page:
  BINDING_PAGE_SIZE; IREE's raw buffers have 4096-byte pages, or one page when
  smaller).
- The writer (`scatter_tile`) writes those bytes back and nothing else: no byte
  outside the rows x columns x element-size bytes from `base`.

The programs take push constants T = batches * Ht * Wt (the tiles, which workgroups
split as every library program does), rows and columns, and with
`offsets` one more byte offset per row-major binding, in binding order. Their
circular buffers have the tensor's data format (float32 tiles meet the unpacker's
tf32 numerics in compute).

Not yet for a card: TT-Metal's NoC wants DRAM and L1 addresses congruent modulo the
DRAM alignment (32 bytes on Wormhole, 64 on Blackhole), which face rows at arbitrary
element offsets are not; the simulator does not check NoC alignment
(docs/fidelity.md). A hardware reader would read aligned spans into scratch L1 and
copy from there.
"""

from __future__ import annotations

import dataclasses

from hal.status import HalError, StatusCode
from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    address_generators,
    buffer_args,
    circular_buffers,
    compute_each_tile,
    read_tile,
    tile_range,
    writer_unary,
)
from tt_hal.kernels.eltwise import binary_compute
from tt_hal.target.isa import MathFidelity, Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder, Reg
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, Export, Program, RuntimeArg, Stage
from tt_hal.target.sizes import FACE, FACE_ELEMENTS, TILE, TILE_ELEMENTS, ceil_div

OFFSET_CONSTANTS = 3  # push constants before the optional byte offsets: T, rows, columns
_ARGS = (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM, ArgKind.BINDING_PAGE_SIZE, ArgKind.BINDING_BYTE_OFFSET)


def push_constants(rows: int, columns: int, offsets=(), batches: int = 1) -> list[int]:
    """The push constants of this module's programs for `batches` (rows, columns)
    matrices, with the extra byte offsets of the row-major bindings when the program
    takes them."""
    return [batches * ceil_div(rows, TILE) * ceil_div(columns, TILE), rows, columns, *offsets]


@dataclasses.dataclass(frozen=True)
class RowMajorTensor:
    """A row-major binding as a kernel addresses it: its address generator slot,
    registers holding its first byte in the buffer and the buffer's page size, and
    the size of an element."""

    slot: int
    base: Reg
    page_size: Reg
    element_size: int


@dataclasses.dataclass(frozen=True)
class Matrix:
    """Registers holding a matrix's rows, columns, tiles per row (Wt) and tiles (Ht Wt)."""

    rows: Reg
    columns: Reg
    tiles_per_row: Reg
    tiles: Reg


@dataclasses.dataclass(frozen=True)
class TileWindow:
    """Registers of one tile's part inside the matrix: the row-major index of its first
    element, and how many of its 32 rows and columns hold data."""

    first: Reg
    height: Reg
    width: Reg

    def release(self, k: KernelBuilder) -> None:
        k.release(self.first, self.height, self.width)


def tensor_args(bindings) -> tuple[RuntimeArg, ...]:
    """(address, is_dram, page size, byte offset) runtime args of each binding, for
    tensor_generators."""
    return tuple(RuntimeArg(kind, b) for b in bindings for kind in _ARGS)


def tensor_generators(k: KernelBuilder, formats, offsets: bool, first_offset: int = 0) -> list[RowMajorTensor]:
    """Slot i: row-major binding i from runtime args 4i..4i + 3 (tensor_args); with
    `offsets`, its base moves on by push constant OFFSET_CONSTANTS + first_offset + i."""
    tensors = []
    for slot, fmt in enumerate(formats):
        arg = len(_ARGS) * slot
        address, is_dram = k.arg(arg, f"in{slot}_addr"), k.arg(arg + 1, f"in{slot}_is_dram")
        page_size, base = k.arg(arg + 2, f"in{slot}_page_size"), k.arg(arg + 3, f"in{slot}_base")
        k.addrgen(slot, address, page_size, is_dram)
        k.release(address, is_dram)
        if offsets:
            extra = k.reg("offset")
            k.emit(Op.CONSTANT, extra, OFFSET_CONSTANTS + first_offset + slot)
            k.emit(Op.ADD, base, base, extra)
            k.release(extra)
        tensors.append(RowMajorTensor(slot, base, page_size, element_size(fmt)))
    return tensors


def element_size(fmt: DataFormat) -> int:
    """Bytes per element of a format these kernels move: 2 or 4."""
    if fmt.is_block_float or fmt.element_size not in (2, 4):
        raise HalError(StatusCode.UNIMPLEMENTED, f"row-major tiles of {fmt.name}: the kernels move elements of "
                                                 f"2 or 4 bytes")
    return fmt.element_size


def matrix(k: KernelBuilder) -> Matrix:
    """The matrix of push constants 1 (rows) and 2 (columns)."""
    rows, columns, wt, tiles = k.reg("rows"), k.reg("columns"), k.reg("Wt"), k.reg("HtWt")
    k.emit(Op.CONSTANT, rows, 1)
    k.emit(Op.CONSTANT, columns, 2)
    tile = k.const(TILE)
    k.emit(Op.ADDI, wt, columns, TILE - 1)
    k.emit(Op.DIV, wt, wt, tile)
    k.emit(Op.ADDI, tiles, rows, TILE - 1)
    k.emit(Op.DIV, tiles, tiles, tile)
    k.emit(Op.MUL, tiles, tiles, wt)
    k.release(tile)
    return Matrix(rows, columns, wt, tiles)


def tile_window(k: KernelBuilder, m: Matrix, tile: Reg) -> TileWindow:
    """Tile `tile`'s part inside its matrix."""
    first, height, width, limit = k.reg("first_element"), k.reg("height"), k.reg("width"), k.const(TILE)
    k.emit(Op.DIV, first, tile, m.tiles)  # the tile's matrix
    k.emit(Op.MUL, first, first, m.rows)
    k.emit(Op.MOD, width, tile, m.tiles)  # its index in the matrix
    k.emit(Op.DIV, height, width, m.tiles_per_row)
    k.emit(Op.MULI, height, height, TILE)  # its first row
    k.emit(Op.ADD, first, first, height)
    k.emit(Op.MUL, first, first, m.columns)
    k.emit(Op.MOD, width, width, m.tiles_per_row)
    k.emit(Op.MULI, width, width, TILE)  # and column
    k.emit(Op.ADD, first, first, width)
    k.emit(Op.SUB, height, m.rows, height)
    k.emit(Op.MIN, height, height, limit)
    k.emit(Op.SUB, width, m.columns, width)
    k.emit(Op.MIN, width, width, limit)
    k.release(limit)
    return TileWindow(first, height, width)


def gather_tile(k: KernelBuilder, tensor: RowMajorTensor, m: Matrix, window: TileWindow, cb: int,
                ptr: Reg) -> None:
    """A tile of a row-major tensor into the back of `cb`, in face order; the padding
    of a tile that sticks out of the matrix is zero."""
    k.cb_reserve_back(cb, 1)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    fill, full, limit = k.label("fill"), k.label("full"), k.const(TILE)
    k.emit(Op.BLT, window.height, limit, fill)
    k.emit(Op.BGE, window.width, limit, full)
    k.place(fill)
    k.l1_fill(ptr, TILE_ELEMENTS * tensor.element_size, 0)
    k.place(full)
    k.release(limit)
    _face_rows(k, Op.NOC_READ, tensor, m, window, ptr)
    k.noc_read_barrier()
    k.cb_push_back(cb, 1)


def scatter_tile(k: KernelBuilder, tensor: RowMajorTensor, m: Matrix, window: TileWindow, cb: int,
                 ptr: Reg) -> None:
    """The front page of `cb`, a tile in face order, to its window of a row-major
    tensor: only the elements inside the matrix."""
    k.cb_wait_front(cb, 1)
    k.emit(Op.GET_READ_PTR, ptr, cb)
    _face_rows(k, Op.NOC_WRITE, tensor, m, window, ptr)
    k.noc_write_barrier()
    k.cb_pop_front(cb, 1)


def _face_rows(k: KernelBuilder, op: Op, tensor: RowMajorTensor, m: Matrix, window: TileWindow, ptr: Reg) -> None:
    """NOC_READ or NOC_WRITE (op) of each face row of a tile window between the tensor
    and the page at `ptr`: row i of face f holds up to 16 elements of one matrix row."""
    size = tensor.element_size
    rows, length, source, target, pitch = k.reg("rows"), k.reg("length"), k.reg("src"), k.reg("dst"), k.reg("pitch")
    zero, face_size = k.const(0, "zero"), k.const(FACE, "face")
    k.emit(Op.MULI, pitch, m.columns, size)  # bytes from one matrix row to the next
    for face in range(4):
        face_row, face_column = FACE * (face // 2), FACE * (face % 2)
        empty = k.label("face_done")
        k.emit(Op.ADDI, rows, window.height, -face_row)
        k.emit(Op.MIN, rows, rows, face_size)
        k.emit(Op.ADDI, length, window.width, -face_column)
        k.emit(Op.MIN, length, length, face_size)
        k.emit(Op.BGE, zero, length, empty)  # no column of this face is inside the matrix
        k.emit(Op.MULI, length, length, size)
        # source = base + (first + face_row * columns + face_column) * size
        k.emit(Op.MULI, source, m.columns, face_row)
        k.emit(Op.ADD, source, source, window.first)
        k.emit(Op.ADDI, source, source, face_column)
        k.emit(Op.MULI, source, source, size)
        k.emit(Op.ADD, source, source, tensor.base)
        k.emit(Op.ADDI, target, ptr, face * FACE_ELEMENTS * size)
        with k.loop(rows, "face_row"):
            _noc_bytes(k, op, tensor, source, target, length, zero)
            k.emit(Op.ADD, source, source, pitch)
            k.emit(Op.ADDI, target, target, FACE * size)
        k.place(empty)
    k.release(rows, length, source, target, pitch, zero, face_size)


def _noc_bytes(k: KernelBuilder, op: Op, tensor: RowMajorTensor, address: Reg, l1: Reg, length: Reg,
               zero: Reg) -> None:
    """NOC_READ or NOC_WRITE (op) of `length` > 0 bytes at byte `address` of the
    tensor's buffer, to or from L1 at `l1`: one transfer per buffer page they touch."""
    at, to, left, page, offset, chunk = (k.reg(name) for name in ("at", "to", "left", "page", "offset", "chunk"))
    k.emit(Op.MOV, at, address)
    k.emit(Op.MOV, to, l1)
    k.emit(Op.MOV, left, length)
    top = k.label("next_page")
    k.place(top)
    k.emit(Op.DIV, page, at, tensor.page_size)
    k.emit(Op.MOD, offset, at, tensor.page_size)
    k.emit(Op.SUB, chunk, tensor.page_size, offset)
    k.emit(Op.MIN, chunk, chunk, left)
    k.emit(op, tensor.slot, page, offset, to, chunk)
    k.emit(Op.ADD, at, at, chunk)
    k.emit(Op.ADD, to, to, chunk)
    k.emit(Op.SUB, left, left, chunk)
    k.emit(Op.BLT, zero, left, top)
    k.release(at, to, left, page, offset, chunk)


# ---- Kernels and programs ----

def reader(inputs: list[tuple[int, DataFormat]], offsets: bool):
    """The reader kernel: for each tile of this workgroup, row-major binding i's tile
    into CB inputs[i][0]."""
    k = KernelBuilder("reader")
    first, end = tile_range(k)
    m = matrix(k)
    tensors = tensor_generators(k, [fmt for _, fmt in inputs], offsets)
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "t") as tile:
        window = tile_window(k, m, tile)
        for tensor, (cb, _) in zip(tensors, inputs):
            gather_tile(k, tensor, m, window, cb, ptr)
        window.release(k)
    return k.build(Processor.RISCV_1), tensor_args(range(len(inputs)))


def writer(out: DataFormat, binding: int, offsets: bool, offset_index: int):
    """The writer kernel: each tile of this workgroup from CB_OUT to row-major
    `binding`, moved on by offset push constant `offset_index` with `offsets`."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    m = matrix(k)
    [tensor] = tensor_generators(k, [out], offsets, offset_index)
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "t") as tile:
        window = tile_window(k, m, tile)
        scatter_tile(k, tensor, m, window, CB_OUT, ptr)
        window.release(k)
    return k.build(Processor.RISCV_0), tensor_args([binding])


def _export(name: str, kernels, cbs, row_major_bindings: int, bindings: int, offsets: bool) -> Export:
    program = Program(cbs, tuple(kernel for kernel, _ in kernels), tuple(args for _, args in kernels))
    constants = OFFSET_CONSTANTS + (row_major_bindings if offsets else 0)
    return Export(name, constants, bindings, (1, 1, 1), (Stage(program),))


def tilize(fmt: DataFormat, offsets: bool = False) -> Export:
    """Row-major binding 0 -> tile pages of binding 1 (TILE layout of the folded
    matrix, padding zero); data movement only."""
    read = reader([(CB_OUT, fmt)], offsets)
    return _export("tilize", (read, writer_unary(fmt, 1)), circular_buffers([], fmt, {}), 1, 2, offsets)


def untilize(fmt: DataFormat, offsets: bool = False) -> Export:
    """Tile pages of binding 0 -> row-major binding 1; data movement only."""
    k = KernelBuilder("reader")
    first, end = tile_range(k)
    [pages] = address_generators(k, [fmt])
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "t") as tile:
        read_tile(k, pages, CB_OUT, tile, ptr)
    read = k.build(Processor.RISCV_1), buffer_args([0])
    return _export("untilize", (read, writer(fmt, 1, offsets, 0)), circular_buffers([], fmt, {}), 1, 2, offsets)


def eltwise_binary(op: str, fmt: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
                   fp32_dest_acc_en: bool = False, offsets: bool = False) -> Export:
    """out = a <op> b (add, sub, mul) over row-major tensors of one shape; bindings
    (a, b, out), each row-major; the compute kernel is eltwise's."""
    inputs = [(CB_IN0, fmt), (CB_IN1, fmt)]
    kernels = (reader(inputs, offsets), binary_compute(op, math_fidelity=math_fidelity,
                                                       fp32_dest_acc_en=fp32_dest_acc_en),
               writer(fmt, 2, offsets, 2))
    return _export(f"rowmajor_{op}", kernels, circular_buffers(inputs, fmt, {}), 3, 3, offsets)


def copy(fmt: DataFormat, offsets: bool = False) -> Export:
    """out = a through tiles: tilize, copy_tile, untilize; bindings (a, out), both
    row-major. copy_tile unpacks straight to a float32 Dst (fp32_dest_acc_en), so
    float32 keeps every bit, and bfloat16 every value but denormals and -0, which
    its packer flushes to +0."""
    inputs = [(CB_IN0, fmt)]
    compute = compute_each_tile("copy", lambda k, zero: k.copy_tile(CB_IN0, zero, zero), 1, fp32_dest_acc_en=True)
    kernels = (reader(inputs, offsets), compute, writer(fmt, 1, offsets, 1))
    return _export("rowmajor_copy", kernels, circular_buffers(inputs, fmt, {}), 2, 2, offsets)
