"""Transpose of the last two dimensions, transpose_wh_tile per tile."""

from __future__ import annotations

from tt_hal.kernels.common import (
    CB_IN0,
    circular_buffers,
    compute_each_tile,
    tile_grid,
    tile_range,
    writer_unary,
)
from tt_hal.kernels.rowmajor import ROW_TILE_CONSTANTS, read_tiles, row_tile_writer, tile_sources
from tt_hal.target.isa import Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, Program, Stage


def transpose(a: DataFormat, out: DataFormat, fp32_dest_acc_en: bool = False, rows: tuple[bool] = (False,),
              row_output: bool = False) -> Export:
    """out (..., W, H) = a (..., H, W) with transpose_wh_tile; bindings (a, out); push
    constants: T output tiles, Ht and Wt of the output's tile grid; with rows[0], a is a
    row-major binding read as tiles (rowmajor.read_row_tiles), ROW_TILE_CONSTANTS more;
    with `row_output`, out is one too (rowmajor.write_row_tiles; its constants last)."""
    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page, scratch = r.reg("ptr"), r.reg("page"), r.reg("s")
    ht, wt = tile_grid(r)
    [pages], reader_args = tile_sources(r, [a], rows, 3)
    with r.loop_range(first, end, "t") as t:
        # t = (b, i, j) over (batch, Ht, Wt) -> input tile (b, j, i) of the (Wt, Ht) grid
        r.emit(Op.MUL, scratch, ht, wt)
        r.emit(Op.DIV, page, t, scratch)
        r.emit(Op.MUL, page, page, scratch)  # b * Ht * Wt
        r.emit(Op.MOD, scratch, t, wt)
        r.emit(Op.MUL, scratch, scratch, ht)
        r.emit(Op.ADD, page, page, scratch)  # + j * Ht
        r.emit(Op.DIV, scratch, t, wt)
        r.emit(Op.MOD, scratch, scratch, ht)
        r.emit(Op.ADD, page, page, scratch)  # + i
        read_tiles(r, pages, page, 1, CB_IN0, 1, ptr)
    reader = r.build(Processor.RISCV_1)
    compute, _ = compute_each_tile("transpose_wh", lambda k, zero: k.transpose_wh_tile(CB_IN0, zero, zero), 1,
                                   fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = (row_tile_writer(out, 1, 3 + ROW_TILE_CONSTANTS * sum(rows)) if row_output
                           else writer_unary(out, 1))
    program = Program(circular_buffers([(CB_IN0, a)], out, {}), (reader, compute, writer),
                      (reader_args, (), writer_args))
    return Export("transpose_wh", 3 + ROW_TILE_CONSTANTS * (sum(rows) + row_output), 2, (1, 1, 1),
                  (Stage(program),))
