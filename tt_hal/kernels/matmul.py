"""Matmul: batched, tiled, in strips of output tiles that accumulate their K products in Dst.

A strip is up to half of Dst's tiles, consecutive along a row of the output (TT-Metal's
output subblock of 1 x ct tiles): for each step of K the reader brings the row's a
tile and the strip's ct b tiles (consecutive pages, one NoC span), and compute's one
matmul_block multiplies the a tile into each of them, unpacking every input tile once.
An operand may be a row-major binding (IREE's), whose tiles the reader reads by their
faces' rows (rowmajor.read_row_tiles): a dispatch's matmul then needs no tilize launch
before it.
"""

from __future__ import annotations

from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    PAGES,
    pack_strip,
    strip_tiles,
    strips,
    tile_range,
    writer_strips,
)
from tt_hal.kernels.rowmajor import ROW_TILE_CONSTANTS, read_tile_column, read_tiles, row_tile_writer, tile_sources
from tt_hal.target.isa import MathFidelity, Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import CircularBufferConfig, Export, Program, Stage


def matmul(a: DataFormat, b: DataFormat, out: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
           fp32_dest_acc_en: bool = False, transpose_b: bool = False, rows: tuple[bool, bool] = (False, False),
           row_output: bool = False) -> Export:
    """out (B, M, N) = a (B, M, K) @ b (B or 1, K, N) in tiles; bindings (a, b, out);
    push constants: output tiles B * Mt * Nt, Kt, Nt, Mt, and b's tiles per batch
    (Kt * Nt, or 0 when one b serves every batch). Workgroups split the output tiles;
    each strip of them accumulates its Kt products in Dst. With `transpose_b`, b is held
    as (B or 1, N, K) (torch's Linear weight, (out, in)): the reader takes a strip's b
    tiles down a column of its tile grid and matmul_tiles transposes each as it unpacks
    it (TT-Metal's `transpose` argument), with no transpose launch before. Where rows[i],
    operand i is a row-major binding, with ROW_TILE_CONSTANTS more push constants (a's
    first); with `row_output`, out too (its constants last)."""
    block = strip_tiles(fp32_dest_acc_en)

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page = r.reg("ptr"), r.reg("page")
    k_tiles, n_tiles, m_tiles, b_stride = r.reg("Kt"), r.reg("Nt"), r.reg("Mt"), r.reg("b_stride")
    for index, reg in enumerate((k_tiles, n_tiles, m_tiles, b_stride), 1):
        r.emit(Op.CONSTANT, reg, index)
    (a_pages, b_pages), reader_args = tile_sources(r, (a, b), rows, 5)
    a_base, b_base, pages = r.reg("a_base"), r.reg("b_base"), r.const(block, "block")
    with strips(r, first, end, pages, n_tiles) as (t, ct):
        r.emit(Op.DIV, a_base, t, n_tiles)  # m over all batches: batch * Mt + row
        r.emit(Op.DIV, b_base, a_base, m_tiles)  # b tile (batch, 0, n)
        r.emit(Op.MUL, b_base, b_base, b_stride)
        r.emit(Op.MOD, page, t, n_tiles)
        r.emit(Op.ADD, b_base, b_base, page)
        r.emit(Op.MUL, a_base, a_base, k_tiles)  # a tile (m, 0)
        if transpose_b:  # b tile (batch, n, 0) instead (page holds n)
            r.emit(Op.SUB, b_base, b_base, page)
            r.emit(Op.MUL, page, page, k_tiles)
            r.emit(Op.ADD, b_base, b_base, page)
        with r.loop(k_tiles, "k") as k:
            r.emit(Op.ADD, page, a_base, k)  # a tile (m, k)
            read_tiles(r, a_pages, page, 1, CB_IN0, 1, ptr)
            if transpose_b:  # b tiles (batch, n .. n + ct, k)
                r.emit(Op.ADD, page, b_base, k)
                read_tile_column(r, b_pages, page, ct, k_tiles, CB_IN1, pages, ptr)
            else:  # b tiles (batch, k, n .. n + ct)
                r.emit(Op.MUL, page, k, n_tiles)
                r.emit(Op.ADD, page, page, b_base)
                read_tiles(r, b_pages, page, ct, CB_IN1, pages, ptr)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder("matmul")
    first, end = tile_range(c)
    one, zero, pages = c.const(1, "one"), c.const(0, "zero"), c.const(block, "block")
    k_tiles, n_tiles = c.reg("Kt"), c.reg("Nt")
    c.emit(Op.CONSTANT, k_tiles, 1)
    c.emit(Op.CONSTANT, n_tiles, 2)
    with strips(c, first, end, pages, n_tiles) as (t, ct):
        c.tile_regs_acquire()
        with c.loop(k_tiles, "k"):
            c.cb_wait_front(CB_IN0, one)
            c.cb_wait_front(CB_IN1, pages)
            c.matmul_block(CB_IN0, CB_IN1, zero, zero, zero, int(transpose_b), ct, one, one)
            c.cb_pop_front(CB_IN0, one)
            c.cb_pop_front(CB_IN1, pages)
        pack_strip(c, ct, pages)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    if row_output:
        writer, writer_args = row_tile_writer(out, 2, 5 + ROW_TILE_CONSTANTS * sum(rows), block, row_constant=2)
    else:
        writer, writer_args = writer_strips(out, 2, block, row_constant=2)
    cbs = (CircularBufferConfig.of_tiles(CB_IN0, a, PAGES),
           CircularBufferConfig.of_tiles(CB_IN1, b, PAGES * block),
           CircularBufferConfig.of_tiles(CB_OUT, out, PAGES * block))
    program = Program(cbs, (reader, compute, writer), (reader_args, (), writer_args))
    return Export("matmul", 5 + ROW_TILE_CONSTANTS * (sum(rows) + row_output), 3, (1, 1, 1), (Stage(program),))
