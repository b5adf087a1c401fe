"""Reductions: sum or max over the rows or the columns of the tile grid, with the
padding of the reduced dimension masked (tt_hal.kernels.common)."""

from __future__ import annotations

import math

from tt_hal.kernels.common import (
    CB_IN0,
    CB_LAST,
    CB_MASK,
    CB_OUT,
    CB_SCALER,
    circular_buffers,
    intermediate_format,
    last_index,
    mask_when,
    masked_last,
    read_tile,
    scaler_tile,
    stage,
    tile_range,
    writer_unary,
)
from tt_hal.kernels.rowmajor import ROW_TILE_CONSTANTS, read_tiles, row_tile_writer, tile_sources
from tt_hal.target.isa import Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, Program, Stage

CB_COLUMN_MASK = 5


def _rotated(k: KernelBuilder, j, count, masked: bool):
    """Tile index of step j when the masked last tile goes first: (j + count - 1) % count."""
    if not masked:
        return j
    index = k.reg("h")
    k.emit(Op.ADD, index, j, count)
    k.emit(Op.ADDI, index, index, -1)
    k.emit(Op.MOD, index, index, count)
    return index


def reduce(kind: ReduceKind, a: DataFormat, out: DataFormat, masked: bool = False, mask_columns: bool = False,
           fp32_dest_acc_en: bool = False, rows: tuple[bool] = (False,), row_output: bool = False) -> Export:
    """Sum or max over the last dimension (ReduceKind *_ROW: each tile row -> column 0
    of one tile) or the one before (*_COL: each tile column -> row 0). Bindings (a,
    [mask], [column mask], out); push constants: T output tiles, R tiles reduced into
    each, D: output tile t reads the input tiles (t // D) * R * D + h * D + t % D for
    h < R (D = 1 for rows, Wt for columns). With `masked`, the last of the R tiles is
    masked first; with `mask_columns`, the padding columns of the last output tile of
    each row are zeroed (they share block-float exponents with the results). With
    rows[0], a is a row-major binding read as tiles (rowmajor.read_row_tiles),
    ROW_TILE_CONSTANTS more push constants; with `row_output`, out is one too
    (rowmajor.write_row_tiles; its constants last)."""
    is_max = kind >= ReduceKind.MAX_ROW
    inputs = [(CB_IN0, a)] + [(cb, DataFormat.bfloat16) for cb, wanted in (
        (CB_MASK, masked), (CB_COLUMN_MASK, mask_columns)) if wanted]

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page = r.reg("ptr"), r.reg("page")
    count, d = r.reg("R"), r.reg("D")
    r.emit(Op.CONSTANT, count, 1)
    r.emit(Op.CONSTANT, d, 2)
    bindings, reader_args = tile_sources(r, [fmt for _, fmt in inputs], rows, 3)
    for pages, (cb, _) in zip(bindings[1:], inputs[1:]):
        read_tile(r, pages, cb, 0, ptr)
    base = r.reg("base")
    with r.loop_range(first, end, "t") as t:
        r.emit(Op.DIV, base, t, d)  # (t // D) * R * D + t % D
        r.emit(Op.MUL, base, base, count)
        r.emit(Op.MUL, base, base, d)
        r.emit(Op.MOD, page, t, d)
        r.emit(Op.ADD, base, base, page)
        with r.loop(count, "j") as j:
            h = _rotated(r, j, count, masked)
            r.emit(Op.MUL, page, h, d)
            r.emit(Op.ADD, page, page, base)
            read_tiles(r, bindings[0], page, 1, CB_IN0, 1, ptr)
            if masked:
                r.release(h)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder(f"reduce_{kind.name.lower()}")
    first, end = tile_range(c)
    count, d = c.reg("R"), c.reg("D")
    c.emit(Op.CONSTANT, count, 1)
    if mask_columns:
        c.emit(Op.CONSTANT, d, 2)
        last, column = last_index(c, d), c.reg("column")
    scaler_tile(c)
    for cb, _ in inputs[1:]:
        c.cb_wait_front(cb, 1)
    if masked:
        c.emit(Op.ADDI, count, count, -1)
    with c.loop_range(first, end, "t") as t:
        if masked:
            c.cb_wait_front(CB_IN0, 1)
            masked_last(c, CB_IN0, 0, SfpuOp.MASK_NEG_INF if is_max else SfpuOp.MASK)
            c.cb_pop_front(CB_IN0, 1)

        def body():
            if is_max:
                c.fill_tile(0, -math.inf)
            if masked:
                c.reduce_tile(int(kind), CB_LAST, CB_SCALER, 0, 0, 0)
                c.cb_pop_front(CB_LAST, 1)
            with c.loop(count, "h"):
                c.cb_wait_front(CB_IN0, 1)
                c.reduce_tile(int(kind), CB_IN0, CB_SCALER, 0, 0, 0)
                c.cb_pop_front(CB_IN0, 1)
            if mask_columns:
                c.emit(Op.MOD, column, t, d)
                mask_when(c, column, last, CB_COLUMN_MASK)
        stage(c, CB_OUT, body)
    compute = c.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = (row_tile_writer(out, len(inputs), 3 + ROW_TILE_CONSTANTS * sum(rows)) if row_output
                           else writer_unary(out, len(inputs)))
    cbs = circular_buffers(inputs, out, {CB_SCALER: (DataFormat.bfloat16, 1), CB_LAST: (intermediate_format(
        fp32_dest_acc_en), 1)})
    program = Program(cbs, (reader, compute, writer), (reader_args, (), writer_args))
    return Export(f"reduce_{kind.name.lower()}", 3 + ROW_TILE_CONSTANTS * (sum(rows) + row_output),
                  len(inputs) + 1, (1, 1, 1), (Stage(program),))
