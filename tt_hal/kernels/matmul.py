"""Matmul: batched, tiled, in strips of output tiles that accumulate their K products in Dst.

A strip is up to a Dst's worth of consecutive output tiles of one row (TT-Metal's
output subblock of 1 x ct tiles): for each step of K the reader brings the row's a
tile and the strip's ct b tiles (consecutive pages, one NoC span), and compute's one
matmul_block multiplies the a tile into each of them, unpacking every input tile once.
"""

from __future__ import annotations

import contextlib

from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    PAGES,
    address_generators,
    buffer_args,
    read_tile,
    tile_range,
    writer_unary,
)
from tt_hal.target.isa import MathFidelity, Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder, Reg
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import CircularBufferConfig, Export, KernelConfig, Program, Stage


def matmul(a: DataFormat, b: DataFormat, out: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
           fp32_dest_acc_en: bool = False) -> Export:
    """out (B, M, N) = a (B, M, K) @ b (B or 1, K, N) in tiles; bindings (a, b, out);
    push constants: output tiles B * Mt * Nt, Kt, Nt, Mt, and b's tiles per batch
    (Kt * Nt, or 0 when one b serves every batch). Workgroups split the output tiles;
    each strip of them accumulates its Kt products in Dst."""
    config = KernelConfig(math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    block = config.dst_capacity()  # a strip's most tiles: Dst's half (the packer drains the other)

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page, length = r.reg("ptr"), r.reg("page"), r.reg("length")
    k_tiles, n_tiles, m_tiles, b_stride = r.reg("Kt"), r.reg("Nt"), r.reg("Mt"), r.reg("b_stride")
    for index, reg in enumerate((k_tiles, n_tiles, m_tiles, b_stride), 1):
        r.emit(Op.CONSTANT, reg, index)
    a_pages, b_pages = address_generators(r, (a, b))
    a_base, b_base, pages = r.reg("a_base"), r.reg("b_base"), r.const(block, "block")
    with _strips(r, first, end, n_tiles, pages) as (t, ct):
        r.emit(Op.DIV, a_base, t, n_tiles)  # m over all batches: batch * Mt + row
        r.emit(Op.DIV, b_base, a_base, m_tiles)  # b tile (batch, 0, n)
        r.emit(Op.MUL, b_base, b_base, b_stride)
        r.emit(Op.MOD, page, t, n_tiles)
        r.emit(Op.ADD, b_base, b_base, page)
        r.emit(Op.ADD, b_base, b_base, b_pages.first)  # as a page of b's buffer
        r.emit(Op.MUL, a_base, a_base, k_tiles)  # a tile (m, 0)
        r.emit(Op.MULI, length, ct, b.tile_size)
        with r.loop(k_tiles, "k") as k:
            r.emit(Op.ADD, page, a_base, k)  # a tile (m, k)
            read_tile(r, a_pages, CB_IN0, page, ptr)
            # b tiles (batch, k, n .. n + ct): whole blocks of pages, so that none wraps
            r.cb_reserve_back(CB_IN1, pages)
            r.emit(Op.GET_WRITE_PTR, ptr, CB_IN1)
            r.emit(Op.MUL, page, k, n_tiles)
            r.emit(Op.ADD, page, page, b_base)
            r.emit(Op.MULI, page, page, b.tile_size)
            r.emit(Op.NOC_READ_SPAN, b_pages.slot, page, ptr, length)
            r.noc_read_barrier()
            r.cb_push_back(CB_IN1, pages)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder("matmul")
    first, end = tile_range(c)
    one, zero, pages = c.const(1, "one"), c.const(0, "zero"), c.const(block, "block")
    k_tiles, n_tiles = c.reg("Kt"), c.reg("Nt")
    c.emit(Op.CONSTANT, k_tiles, 1)
    c.emit(Op.CONSTANT, n_tiles, 2)
    with _strips(c, first, end, n_tiles, pages) as (t, ct):
        c.tile_regs_acquire()
        with c.loop(k_tiles, "k"):
            c.cb_wait_front(CB_IN0, one)
            c.cb_wait_front(CB_IN1, pages)
            c.matmul_block(CB_IN0, CB_IN1, zero, zero, zero, 0, ct, one, one)
            c.cb_pop_front(CB_IN0, one)
            c.cb_pop_front(CB_IN1, pages)
        c.tile_regs_commit()
        c.cb_reserve_back(CB_OUT, ct)
        c.tile_regs_wait()
        with c.loop(ct, "j") as j:
            c.pack_tile(j, CB_OUT, j)
        c.tile_regs_release()
        c.cb_push_back(CB_OUT, ct)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_unary(out, 2)
    cbs = (CircularBufferConfig(CB_IN0, a, a.tile_size, PAGES),
           CircularBufferConfig(CB_IN1, b, b.tile_size, PAGES * block),
           CircularBufferConfig(CB_OUT, out, out.tile_size, PAGES * block))
    program = Program(cbs, (reader, compute, writer), (buffer_args([0, 1]), (), writer_args))
    return Export("matmul", 5, 3, (1, 1, 1), (Stage(program),))


@contextlib.contextmanager
def _strips(k: KernelBuilder, first: Reg, end: Reg, n_tiles: Reg, block: Reg):
    """for each strip of the output tiles [first, end): (t, ct), its first tile and its
    length, up to `block` tiles and never past the end of t's row of Nt tiles."""
    t, ct, left = k.reg("t"), k.reg("ct"), k.reg("left")
    k.emit(Op.MOV, t, first)
    top, done = k.label("strip"), k.label("strips_done")
    k.place(top)
    k.emit(Op.BGE, t, end, done)
    k.emit(Op.MOV, ct, block)
    k.emit(Op.SUB, left, end, t)
    k.emit(Op.MIN, ct, ct, left)
    k.emit(Op.MOD, left, t, n_tiles)
    k.emit(Op.SUB, left, n_tiles, left)  # tiles left in t's row
    k.emit(Op.MIN, ct, ct, left)
    yield t, ct
    k.emit(Op.ADD, t, t, ct)
    k.emit(Op.JMP, top)
    k.place(done)
    k.release(t, ct, left)
