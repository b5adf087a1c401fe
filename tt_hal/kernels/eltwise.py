"""Eltwise programs: binary (add, sub, mul; with row, column or scalar broadcast of
B) on the FPU, and unary (the SFPU ops), each in strips of consecutive tiles: one NoC
span per input and output per strip, the tile ops in a loop over Dst."""

from __future__ import annotations

from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    PAGES,
    address_generators,
    buffer_args,
    pack_strip,
    read_strip,
    read_tile,
    strip_tiles,
    strips,
    tile_range,
    writer_strips,
)
from tt_hal.target.isa import Broadcast, MathFidelity, Op, Processor, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import CircularBufferConfig, Export, Program, Stage


def eltwise_binary(op: str, a: DataFormat, b: DataFormat, out: DataFormat, broadcast: Broadcast = Broadcast.NONE,
                   math_fidelity: MathFidelity = MathFidelity.HiFi4, fp32_dest_acc_en: bool = False) -> Export:
    """out = a <op> b tile by tile; bindings (a, b, out); push constants: tiles of out,
    tiles per row (Wt). With a broadcast, b is a (1, W) row, an (H, 1) column (outer
    dimensions folded into H) or a scalar tensor whose row, column or element repeats:
    tile t of out reads b's tile t % Wt (ROW), t // Wt (COL) or 0 (SCALAR). Strips of
    up to half of Dst's tiles (TT-Metal's per-core block), within a row when b's tile
    follows it."""
    block = strip_tiles(fp32_dest_acc_en)
    by_row = broadcast in (Broadcast.ROW, Broadcast.COL)
    b_strip = broadcast in (Broadcast.NONE, Broadcast.ROW)  # else one b tile serves the strip

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page, pages = r.reg("ptr"), r.reg("page"), r.const(block, "block")
    wt = _tiles_per_row(r) if by_row else None
    a_pages, b_pages = address_generators(r, [a, b])
    with strips(r, first, end, pages, wt) as (t, ct):
        read_strip(r, a_pages, CB_IN0, t, ct, pages, ptr)
        if broadcast == Broadcast.NONE:
            read_strip(r, b_pages, CB_IN1, t, ct, pages, ptr)
        elif broadcast == Broadcast.ROW:  # b's tiles in the strip's columns
            r.emit(Op.MOD, page, t, wt)
            read_strip(r, b_pages, CB_IN1, page, ct, pages, ptr)
        else:  # COL: b's tile in the strip's row; SCALAR: its only tile
            if broadcast == Broadcast.COL:
                r.emit(Op.DIV, page, t, wt)
            else:
                r.emit(Op.LI, page, 0)
            read_tile(r, b_pages, CB_IN1, page, ptr)
    reader = r.build(Processor.RISCV_1)

    instruction = _BINARY[op]
    c = KernelBuilder(f"eltwise_{op}")
    first, end = tile_range(c)
    one, zero, pages = c.const(1, "one"), c.const(0, "zero"), c.const(block, "block")
    b_pages_used = pages if b_strip else one
    with strips(c, first, end, pages, _tiles_per_row(c) if by_row else None) as (t, ct):
        c.cb_wait_front(CB_IN0, pages)
        c.cb_wait_front(CB_IN1, b_pages_used)
        c.tile_regs_acquire()
        if broadcast == Broadcast.NONE:  # add_block (...): the strip's tile pairs in one instruction
            c.emit(_BLOCK[op], CB_IN0, CB_IN1, zero, zero, zero, ct)
        else:
            with c.loop(ct, "i") as i:
                c.emit(instruction, CB_IN0, CB_IN1, i, i if b_strip else zero, i, int(broadcast))
        pack_strip(c, ct, pages)
        c.cb_pop_front(CB_IN0, pages)
        c.cb_pop_front(CB_IN1, b_pages_used)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_strips(out, 2, block, 1 if by_row else None)
    cbs = (CircularBufferConfig.of_tiles(CB_IN0, a, PAGES * block),
           CircularBufferConfig.of_tiles(CB_IN1, b, PAGES * (block if b_strip else 1)),
           CircularBufferConfig.of_tiles(CB_OUT, out, PAGES * block))
    program = Program(cbs, (reader, compute, writer), (buffer_args([0, 1]), (), writer_args))
    return Export(f"eltwise_{op}", 2, 3, (1, 1, 1), (Stage(program),))


def _tiles_per_row(k: KernelBuilder):
    """A register holding push constant 1, Wt."""
    wt = k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    return wt


_BINARY = {"add": Op.ADD_TILES, "sub": Op.SUB_TILES, "mul": Op.MUL_TILES}
_BLOCK = {"add": Op.ADD_BLOCK, "sub": Op.SUB_BLOCK, "mul": Op.MUL_BLOCK}


def eltwise_unary(op: SfpuOp, a: DataFormat, out: DataFormat, parameter: float = 0.0,
                  fp32_dest_acc_en: bool = False) -> Export:
    """out = op(a) on the SFPU, tile by tile, in strips as eltwise_binary's; bindings (a,
    out); push constant 0: tiles."""
    block = strip_tiles(fp32_dest_acc_en)
    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, pages = r.reg("ptr"), r.const(block, "block")
    [a_pages] = address_generators(r, [a])
    with strips(r, first, end, pages) as (t, ct):
        read_strip(r, a_pages, CB_IN0, t, ct, pages, ptr)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder(f"eltwise_{op.name.lower()}")
    first, end = tile_range(c)
    pages = c.const(block, "block")
    with strips(c, first, end, pages) as (t, ct):
        c.cb_wait_front(CB_IN0, pages)
        c.tile_regs_acquire()
        with c.loop(ct, "i") as i:
            c.copy_tile(CB_IN0, i, i)
            c.sfpu_unary(op, i, parameter)
        pack_strip(c, ct, pages)
        c.cb_pop_front(CB_IN0, pages)
    compute = c.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_strips(out, 1, block)
    cbs = (CircularBufferConfig.of_tiles(CB_IN0, a, PAGES * block),
           CircularBufferConfig.of_tiles(CB_OUT, out, PAGES * block))
    program = Program(cbs, (reader, compute, writer), (buffer_args([0]), (), writer_args))
    return Export(f"eltwise_{op.name.lower()}", 1, 2, (1, 1, 1), (Stage(program),))
