"""Compute instructions (sim/compute.py): the decoding of their operands' enums
(tt_hal.target.isa) covers every member, tilize_block / untilize_block move
bytes as numpy twins of the tile layout do, matmul_block is the matmul_tiles loop, and
the SFPU's integer ops over a tile are their scalar functions element by element."""

from __future__ import annotations

import numpy as np
import pytest

import hal
from tests import reference
from tests.fpu_twin import is_exact, twin_matmul_tiles
from tests.test_numerics import random_bf16_values, twin_matmul_tile
from tt_hal.sim import compute, numerics
from tt_hal.sim.faults import Fault
from tt_hal.target.isa import Broadcast, MathFidelity, Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, Export, Program, RuntimeArg, Stage
from tt_hal.target.sizes import FACE, TILE, TILE_ELEMENTS
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable


def test_reduce_kinds_decode_to_their_pool_and_dimension():
    for kind in ReduceKind:
        pool, dim = kind.name.split("_")
        assert (kind >> compute.DIM_BITS == compute.POOL_MAX) == (pool == "MAX")
        decoded = {ReduceKind.SUM_ROW: "ROW", ReduceKind.SUM_COL: "COL"}.get(kind & compute.DIM_MASK, "SCALAR")
        assert decoded == dim, kind


def test_broadcasts_are_those_compute_implements():
    """compute handles NONE, ROW and COL by name and SCALAR as the remaining case."""
    assert {b.name for b in Broadcast} == {"NONE", "ROW", "COL", "SCALAR"}


# ---- tilize_block and untilize_block ----
#
# They only move bytes: 32 row-major rows of block * 32 elements (over `block` tile-sized
# pages) <-> `block` tiles of four 16 x 16 faces. The numpy twins below say so with
# reshapes; the numba functions and the instructions in a dispatch are compared with
# them bit for bit, for every 1-, 2- and 4-byte format (NaN payloads and denormals
# included: nothing passes through the FPU).

BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32}  # element size -> the dtype of its bit patterns
LAYOUT_FORMATS = [DataFormat.float32, DataFormat.bfloat16, DataFormat.int32, DataFormat.uint16]


def tilize_twin(rows: np.ndarray, block: int) -> np.ndarray:
    """(32, block * 32) elements -> (block, 1024): each tile's faces TL, TR, BL, BR,
    row-major inside a face."""
    return rows.reshape(2, FACE, block, 2, FACE).transpose(2, 0, 3, 1, 4).reshape(block, TILE_ELEMENTS)


def untilize_twin(tiles: np.ndarray, block: int) -> np.ndarray:
    """(block, 1024) tiles -> their (32, block * 32) rows."""
    return tiles.reshape(block, 2, 2, FACE, FACE).transpose(1, 3, 0, 2, 4).reshape(TILE, block * TILE)


def random_bits(size: int, shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << (8 * size), shape, dtype=np.uint64).astype(BITS[size])


def test_twins_place_elements_as_the_tile_layout_says():
    rows = np.arange(TILE * 2 * TILE, dtype=np.uint32).reshape(TILE, 2 * TILE)
    tiles = tilize_twin(rows, 2)
    assert tiles[1, 2 * 256 + 3 * 16 + 5] == rows[16 + 3, 32 + 5]  # tile 1, face BL, row 3, column 5
    assert np.array_equal(tiles.reshape(-1), reference.tilize(rows).reshape(-1))
    assert np.array_equal(untilize_twin(tiles, 2), rows)


@pytest.mark.parametrize("size", [1, 2, 4])
@pytest.mark.parametrize("block", [1, 2, 5, 8])
def test_face_rows_match_the_tilize_twins(size, block):
    rows = random_bits(size, (TILE, block * TILE), block * size)
    nbytes = block * TILE_ELEMENTS * size
    tiles = np.full(nbytes + 24, 0xA5, np.uint8)  # the tiles from byte 16, with bytes on both sides to keep
    compute.face_rows(rows.view(np.uint8).reshape(-1), 0, tiles, 16, block, size, True)
    assert np.array_equal(tiles[16:16 + nbytes].view(BITS[size]).reshape(block, -1), tilize_twin(rows, block))
    assert (tiles[:16] == 0xA5).all() and (tiles[16 + nbytes:] == 0xA5).all()
    back = np.full(nbytes, 0x5A, np.uint8)
    compute.face_rows(back, 0, tiles, 16, block, size, False)
    assert np.array_equal(back.view(BITS[size]).reshape(TILE, -1), rows)
    other = random_bits(size, (block, TILE_ELEMENTS), block + size)  # tiles that are not some rows' tilize
    compute.face_rows(back, 0, other.view(np.uint8).reshape(-1), 0, block, size, False)
    assert np.array_equal(back.view(BITS[size]).reshape(TILE, -1), untilize_twin(other, block))


def block_program(op: Op, fmt: DataFormat) -> Export:
    """Binding 0's pages through `op`, a block at a time, into binding 1's pages. Push
    constants: blocks, and pages per block (a divisor of 8, the circular buffers'
    pages). The reader and writer move pages; compute runs `op` between TT-Metal's
    circular-buffer calls."""
    def mover(name, processor, cb, binding):
        k = KernelBuilder(name)
        blocks, pages, page, ptr = k.reg("blocks"), k.reg("w"), k.const(0, "page"), k.reg("ptr")
        k.constant(blocks, 0)
        k.constant(pages, 1)
        k.addrgen(0, k.arg(0), k.const(fmt.tile_size), k.arg(1))
        with k.loop(blocks):
            if processor == Processor.RISCV_1:
                k.cb_reserve_back(cb, pages)
                k.get_write_ptr(ptr, cb)
            else:
                k.cb_wait_front(cb, pages)
                k.get_read_ptr(ptr, cb)
            with k.loop(pages):
                k.emit(Op.NOC_READ_PAGE if processor == Processor.RISCV_1 else Op.NOC_WRITE_PAGE, 0, page, ptr)
                k.addi(page, page, 1)
                k.addi(ptr, ptr, fmt.tile_size)
            if processor == Processor.RISCV_1:
                k.noc_read_barrier()
                k.cb_push_back(cb, pages)
            else:
                k.noc_write_barrier()
                k.cb_pop_front(cb, pages)
        args = (RuntimeArg(ArgKind.BINDING_ADDRESS, binding), RuntimeArg(ArgKind.BINDING_IS_DRAM, binding))
        return k.build(processor), args

    k = KernelBuilder("convert")
    blocks, pages = k.reg("blocks"), k.reg("w")
    k.constant(blocks, 0)
    k.constant(pages, 1)
    with k.loop(blocks):
        k.cb_wait_front(0, pages)
        k.cb_reserve_back(16, pages)
        getattr(k, op.name.lower())(0, 16, pages)
        k.cb_push_back(16, pages)
        k.cb_pop_front(0, pages)
    kernels = (mover("reader", Processor.RISCV_1, 0, 0), (k.build(fp32_dest_acc_en=True, dst_full_sync_en=True), ()),
               mover("writer", Processor.RISCV_0, 16, 1))
    cbs = tuple(CircularBufferConfig(cb, fmt, fmt.tile_size, 8) for cb in (0, 16))
    program = Program(cbs, tuple(kernel for kernel, _ in kernels), tuple(args for _, args in kernels))
    return Export(op.name.lower(), 2, 2, (1, 1, 1), (Stage(program),))


def run_pages(device, export: Export, fmt: DataFormat, data: np.ndarray, blocks: int, pages: int) -> np.ndarray:
    """Dispatches `export` over a DRAM buffer of tile-sized pages holding `data` into a
    new one; its bytes."""
    def buffer(content):
        tensor = device.allocator.allocate_tensor((blocks * pages * TILE, TILE), fmt, "tile", hal.DRAM_MEMORY_CONFIG)
        tensor.get_buffer().map_write(0, np.ascontiguousarray(content).tobytes())
        return tensor.get_buffer()
    source, target = buffer(data), buffer(np.full(data.nbytes, 0xA5, np.uint8))
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable([export]))
    command_buffer = hal.HalCommandBuffer(device)
    command_buffer.dispatch(executable, 0, (1, 1, 1), np.array([blocks, pages], np.uint32).tobytes(),
                            [source, target])
    command_buffer.end()
    done = device.create_semaphore(0)
    device.queue_execute(command_buffer, [], [(done, 1)])
    assert done.wait(1, timeout=60 * 10**9)
    return np.frombuffer(target.map_read(0, None), np.uint8).copy()


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("pages", [1, 2, 8])
def test_tilize_block_and_untilize_block_in_a_dispatch(device, fmt, pages):
    """Three blocks of `pages` through TILIZE_BLOCK, and back through UNTILIZE_BLOCK:
    the twins' bytes, every bit."""
    size, blocks = fmt.element_size, 3
    rows = random_bits(size, (blocks, TILE, pages * TILE), pages)
    tiles = run_pages(device, block_program(Op.TILIZE_BLOCK, fmt), fmt, rows, blocks, pages)
    expected = np.stack([tilize_twin(block, pages) for block in rows])
    assert np.array_equal(tiles.view(BITS[size]).reshape(expected.shape), expected)
    back = run_pages(device, block_program(Op.UNTILIZE_BLOCK, fmt), fmt, tiles, blocks, pages)
    assert np.array_equal(back.view(BITS[size]).reshape(rows.shape), rows)


# ---- matmul_block ----
#
# One matmul_block per step of K computes a block of rt x ct Dst tiles, each input tile
# unpacked once (sim/compute.matmul_block). Its result must be the matmul_tiles loop's,
# bit for bit, in both numerics, and each Dst tile the twins' fold over K.

def tile_mover(name: str, processor: Processor, counts: dict[int, int], formats: dict[int, DataFormat]):
    """(kernel, runtime args): the reader (RISCV_1) of whole inputs, CB i's `counts[i]`
    tiles from binding i, or the writer (RISCV_0) of CB 16's to binding 2; DRAM pages of
    one tile of the CB's format."""
    cbs = (16,) if processor == Processor.RISCV_0 else tuple(cb for cb in counts if cb != 16)
    k = KernelBuilder(name)
    ptr = k.reg("ptr")
    for slot, cb in enumerate(cbs):
        fmt = formats[cb]
        k.addrgen(slot, k.arg(2 * slot), k.const(fmt.tile_size), k.arg(2 * slot + 1))
        if cb == 16:
            k.cb_wait_front(cb, counts[cb])
            k.get_read_ptr(ptr, cb)
        else:
            k.cb_reserve_back(cb, counts[cb])
            k.get_write_ptr(ptr, cb)
        for page in range(counts[cb]):
            k.emit(Op.NOC_WRITE_PAGE if cb == 16 else Op.NOC_READ_PAGE, slot, k.const(page), ptr)
            k.addi(ptr, ptr, fmt.tile_size)
        if cb == 16:
            k.noc_write_barrier()
            k.cb_pop_front(cb, counts[cb])
        else:
            k.noc_read_barrier()
            k.cb_push_back(cb, counts[cb])
    bindings = (2,) if processor == Processor.RISCV_0 else cbs
    kinds = (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM)
    return k.build(processor), tuple(RuntimeArg(kind, b) for b in bindings for kind in kinds)


def mover_export(name: str, compute_kernel, counts: dict[int, int], formats: dict[int, DataFormat]) -> Export:
    """An export of bindings (input 0, input 1, output) running `compute_kernel` between
    tile_mover's reader and writer, with a CB of `counts[i]` tiles of `formats[i]` each."""
    kernels = (tile_mover("reader", Processor.RISCV_1, counts, formats), (compute_kernel, ()),
               tile_mover("writer", Processor.RISCV_0, counts, formats))
    cbs = tuple(CircularBufferConfig.of_tiles(cb, fmt, counts[cb]) for cb, fmt in formats.items())
    program = Program(cbs, tuple(kernel for kernel, _ in kernels), tuple(args for _, args in kernels))
    return Export(name, 0, 3, (1, 1, 1), (Stage(program),))


def matmul_block_program(rt: int, ct: int, kt: int, transpose: bool, block: bool, **config) -> Export:
    """in0 (binding 0: rt x kt bf16 tiles, row-major) and in1 (binding 1: kt x ct tiles)
    read whole into CBs 0 and 1; compute accumulates their product over K in Dst, by
    one matmul_block per k (`block`) or by matmul_tiles per product, and packs the rt x ct
    Dst tiles as float32 (Dst's bits) into binding 2."""
    counts = {0: rt * kt, 1: kt * ct, 16: rt * ct}
    formats = {0: DataFormat.bfloat16, 1: DataFormat.bfloat16, 16: DataFormat.float32}

    k = KernelBuilder("mm")
    k.cb_wait_front(0, counts[0])
    k.cb_wait_front(1, counts[1])
    k.tile_regs_acquire()
    for step in range(kt):
        if block:
            k.matmul_block(0, 1, step, step * ct, 0, int(transpose), ct, rt, kt)
        else:
            for i in range(rt):
                for j in range(ct):
                    k.matmul_tiles(0, 1, i * kt + step, step * ct + j, i * ct + j, int(transpose))
    k.tile_regs_commit()
    k.cb_reserve_back(16, counts[16])
    k.tile_regs_wait()
    for tile in range(counts[16]):
        k.pack_tile(tile, 16, tile)
    k.tile_regs_release()
    k.cb_push_back(16, counts[16])
    return mover_export("mm", k.build(**config), counts, formats)


def run_tiles(device, export: Export, in0: np.ndarray, in1: np.ndarray, outputs: int,
              out_format: DataFormat = DataFormat.float32) -> np.ndarray:
    """Dispatches `export` on bf16 tiles in0 and in1 ((n, 32, 32) float32 values of bf16);
    the (outputs, 32, 32) tiles it writes in `out_format` (float32, or bf16 bits)."""
    def buffer(data: bytes, fmt=DataFormat.bfloat16):  # DRAM pages of one tile
        tiles = len(data) // fmt.tile_size
        memory = device.allocator.allocate_tensor((tiles * TILE, TILE), fmt, "tile", hal.DRAM_MEMORY_CONFIG)
        memory.get_buffer().map_write(0, data)
        return memory.get_buffer()

    def tile_bytes(tiles):  # face order, the bf16 bits: the high halves of the values
        faces = np.empty((len(tiles), TILE_ELEMENTS), np.uint32)
        faces[:, numerics.FACE_INDEX.ravel()] = tiles.reshape(len(tiles), -1).view(np.uint32)
        return (faces >> 16).astype(np.uint16).tobytes()
    out = buffer(bytes(outputs * out_format.tile_size), out_format)
    executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable([export]))
    command_buffer = hal.HalCommandBuffer(device)
    command_buffer.dispatch(executable, 0, (1, 1, 1), b"", [buffer(tile_bytes(in0)), buffer(tile_bytes(in1)), out])
    command_buffer.end()
    done = device.create_semaphore(0)
    device.queue_execute(command_buffer, [], [(done, 1)])
    assert done.wait(1, timeout=60 * 10**9)
    dtype = np.float32 if out_format == DataFormat.float32 else np.uint16
    faces = np.frombuffer(out.map_read(0, None), dtype).reshape(outputs, TILE_ELEMENTS)
    return faces[:, numerics.FACE_INDEX]


@pytest.mark.parametrize("rt, ct, kt", [(2, 2, 3), (1, 4, 2), (3, 1, 1)])
@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi3", "HiFi4"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("exact_products", [True, False], ids=["exact", "scalar"])
def test_matmul_block_is_the_matmul_tiles_loop(numerics_device, rt, ct, kt, fidelity, transpose, exact_products):
    """Dst after one matmul_block per k = after matmul_tiles of each product, every bit,
    with a bf16 or float32 Dst; = the twins' fold over k of each tile's product. With
    `exact_products` False a value of 2^70 sends the fast numerics to the scalar path."""
    rng = np.random.default_rng(rt * 100 + ct * 10 + kt)
    in0, in1 = (random_bf16_values(rng, n * TILE_ELEMENTS, -8, 8).reshape(n, TILE, TILE) for n in (rt * kt, kt * ct))
    in0, in1 = ((x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32) for x in (in0, in1))
    in0[rng.random(in0.shape) < 0.05] = -0.0
    if not exact_products:
        in1[-1, 5, 7] = 2.0 ** 70
    for fp32_dest in (False, True):
        phases = MathFidelity[fidelity]
        config = {"math_fidelity": phases, "fp32_dest_acc_en": fp32_dest}
        block, tiles = (run_tiles(numerics_device, matmul_block_program(rt, ct, kt, transpose, b, **config),
                                         in0, in1, rt * ct) for b in (True, False))
        np.testing.assert_array_equal(block.view(np.uint32), tiles.view(np.uint32))
        for i in range(rt):
            for j in range(ct):
                pairs = [(in0[i * kt + k], in1[k * ct + j]) for k in range(kt)]
                if is_exact(numerics_device):
                    if transpose:
                        continue  # the datapath twin takes in1 as SrcA unturned
                    want = twin_matmul_tiles(np.stack([a for a, _ in pairs]).view(np.uint32),
                                             np.stack([b for _, b in pairs]).view(np.uint32), int(phases),
                                             fp32_dest, numerics_device.backend.fpu_model).astype(np.uint32)
                else:
                    dst = np.zeros((TILE, TILE), np.float32)
                    for a, b in pairs:
                        dst = twin_matmul_tile(a, b, dst, int(phases), fp32_dest, transpose)
                    want = dst.view(np.uint32)
                np.testing.assert_array_equal(block[i * ct + j].view(np.uint32), want, err_msg=f"tile {i}, {j}")


# ---- add_block, sub_block, mul_block and pack_tiles ----
#
# A block instruction is the loop of its tile instruction (TT-Metal's add_block is a loop
# of add_tiles; pack_tiles one of pack_tile<true>): every bit of the output the same.

def binary_block_program(op: str, tiles: int, first: int, count: int, block: bool, out: DataFormat,
                         **config) -> Export:
    """a and b (bindings 0, 1: `tiles` bf16 tiles each) read whole into CBs 0 and 1; compute
    puts `op` of tile pairs first .. first + count - 1 into Dst tiles 1 .. count and packs
    them to pages 2 .. count + 1 of CB 16 (format `out`; binding 2) by one block
    instruction each (`block`), or by the loops of tile instructions."""
    counts = {0: tiles, 1: tiles, 16: count + 2}
    formats = {0: DataFormat.bfloat16, 1: DataFormat.bfloat16, 16: out}
    k = KernelBuilder(op)
    k.cb_wait_front(0, tiles)
    k.cb_wait_front(1, tiles)
    k.cb_reserve_back(16, counts[16])
    k.tile_regs_acquire()
    if block:
        getattr(k, f"{op}_block")(0, 1, first, first, 1, count)
    else:
        for j in range(count):
            getattr(k, f"{op}_tiles")(0, 1, first + j, first + j, 1 + j, 0)
    k.tile_regs_commit()
    k.tile_regs_wait()
    if block:
        k.pack_tiles(1, 16, 2, count)
    else:
        for j in range(count):
            k.pack_tile(1 + j, 16, 2 + j)
    k.tile_regs_release()
    k.cb_push_back(16, counts[16])
    return mover_export(op, k.build(**config), counts, formats)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("out", [DataFormat.float32, DataFormat.bfloat16], ids=["float32", "bf16"])
@pytest.mark.parametrize("first, count", [(1, 3), (0, 1), (3, 1)])
def test_binary_block_and_pack_tiles_are_their_tile_loops(numerics_device, op, out, first, count):
    """add/sub/mul_block of `count` tile pairs from `first`, packed by pack_tiles = the
    loops of add/sub/mul_tiles and pack_tile, every bit, with a bf16 or float32 Dst, in
    either numerics. In the fast numerics with a 32-bit Dst and float32 output, the add
    is numpy's float32 sum of the bf16 values."""
    rng = np.random.default_rng(count * 10 + first)
    a, b = ((random_bf16_values(rng, 4 * TILE_ELEMENTS, -8, 8).view(np.uint32) & np.uint32(0xFFFF0000))
            .view(np.float32).reshape(4, TILE, TILE) for _ in range(2))
    for fp32_dest in (False, True):
        config = {"math_fidelity": MathFidelity.HiFi4, "fp32_dest_acc_en": fp32_dest}
        block, loop = (run_tiles(numerics_device, binary_block_program(op, 4, first, count, form, out, **config),
                                 a, b, count + 2, out) for form in (True, False))
        bits = np.uint32 if out == DataFormat.float32 else np.uint16
        np.testing.assert_array_equal(block[2:].view(bits), loop[2:].view(bits))  # pages 0, 1: not packed
        if op == "add" and fp32_dest and out == DataFormat.float32 and not is_exact(numerics_device):
            np.testing.assert_array_equal(block[2:], a[first:first + count] + b[first:first + count])


def test_blocks_of_no_tiles_change_nothing(device):
    """add_block and pack_tiles of 0 tiles run (no fault) and write nothing: Dst tile 0
    stays as acquire left it (zeros), which pack_tile then writes out."""
    rng = np.random.default_rng(7)
    a, b = ((random_bf16_values(rng, TILE_ELEMENTS, -8, 8).view(np.uint32) & np.uint32(0xFFFF0000))
            .view(np.float32).reshape(1, TILE, TILE) for _ in range(2))
    counts = {0: 1, 1: 1, 16: 1}
    formats = {0: DataFormat.bfloat16, 1: DataFormat.bfloat16, 16: DataFormat.float32}
    k = KernelBuilder("empty")
    k.cb_wait_front(0, 1)
    k.cb_wait_front(1, 1)
    k.cb_reserve_back(16, 1)
    k.tile_regs_acquire()
    k.add_block(0, 1, 0, 0, 0, 0)
    k.tile_regs_commit()
    k.tile_regs_wait()
    k.pack_tiles(0, 16, 0, 0)
    k.pack_tile(0, 16, 0)
    k.tile_regs_release()
    k.cb_push_back(16, 1)
    out = run_tiles(device, mover_export("empty", k.build(), counts, formats), a, b, 1)
    np.testing.assert_array_equal(out, np.zeros((1, TILE, TILE), np.float32))


# ---- the SFPU's integer ops over a tile ----

BITS_OPS = [(Op.SFPU_UNARY, op) for op in SfpuOp if numerics.is_bits_unary(int(op))] + \
           [(Op.SFPU_BINARY, op) for op in SfpuOp if numerics.is_bits_binary(int(op))]


@pytest.mark.parametrize("kind, op", BITS_OPS, ids=lambda v: v.name)
def test_sfpu_tile_loops_are_the_scalar_ops(kind, op):
    """compute.sfpu runs the commonest integer ops in a loop of their own (the op a
    constant, vectorized by LLVM) and the rest in one that tests the op: every element
    of the tile is the scalar op's (numerics.sfpu_unary_bits / sfpu_binary_bits, whose
    twins are test_numerics'), edge words included."""
    rng = np.random.default_rng(int(op))
    edges = np.array([0, 1, 2, 31, 32, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x3F800000, 0xBF800000,
                      0x7F800000, 0x7FC00000, 0x4F000000, 0xCF000000], np.uint32)
    x = np.concatenate([np.repeat(edges, len(edges)), rng.integers(0, 2 ** 32, TILE_ELEMENTS, np.uint32)])
    y = np.concatenate([np.tile(edges, len(edges)), rng.integers(0, 2 ** 32, TILE_ELEMENTS, np.uint32)])
    y[len(edges) ** 2::3] %= 40  # shift counts and divisors in range too
    x, y = x[:TILE_ELEMENTS], y[:TILE_ELEMENTS]
    out, first = x.view(np.float32).copy(), y.view(np.float32).copy()
    results = np.zeros(TILE_ELEMENTS, np.float64)
    fault = compute.sfpu(int(kind), int(op), out, first, first.copy(), np.float32(0.0), True, results,
                         compute.kernel_addresses(None))
    assert fault == Fault.OK
    if kind == Op.SFPU_UNARY:
        expected = [numerics.sfpu_unary_bits(int(op), int(a)) for a in x]
    else:
        expected = [numerics.sfpu_binary_bits(int(op), int(a), int(b)) for a, b in zip(x, y)]
    np.testing.assert_array_equal(out.view(np.uint32), np.array(expected, np.int64).astype(np.uint32))
