"""Row programs, TTNN's normalization ops: softmax, layernorm and rmsnorm over the
last dimension, one row of Wt tiles at a time, with the padding of the last tile
masked (tt_hal.kernels.common)."""

from __future__ import annotations

import math

from tt_hal.kernels.common import (
    CB_IN0,
    CB_LAST,
    CB_MASK,
    CB_OUT,
    CB_SCALER,
    address_generators,
    buffer_args,
    circular_buffers,
    intermediate_format,
    last_index,
    mask_when,
    masked_last,
    noc_page,
    read_tile,
    scaler_tile,
    stage,
    tile_range,
)
from tt_hal.target.isa import Broadcast, Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, Program, Stage
from tt_hal.target.sizes import TILE, ceil_div

CB_GAMMA, CB_BETA = 1, 2
CB_STAT, CB_WORK, CB_STAT2, CB_SQUARES, CB_TEMP = 25, 26, 27, 28, 29


def _row_reader(x: DataFormat, constants: list[tuple[int, DataFormat]]):
    """Reads the constant inputs once (gamma and beta: a row of Wt tiles; the mask: one
    tile), then for each tile row t of this workgroup its Wt tiles of x."""
    k = KernelBuilder("reader")
    first, end = tile_range(k)
    ptr, page, wt = k.reg("ptr"), k.reg("page"), k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    bindings = address_generators(k, [x] + [fmt for _, fmt in constants])
    for pages, (cb, _) in zip(bindings[1:], constants):
        with k.loop(1 if cb == CB_MASK else wt, "w") as w:
            read_tile(k, pages, cb, w, ptr)
    with k.loop_range(first, end, "t") as t, k.loop(wt, "w") as w:
        k.emit(Op.MUL, page, t, wt)
        k.emit(Op.ADD, page, page, w)
        read_tile(k, bindings[0], CB_IN0, page, ptr)
    return k.build(Processor.RISCV_1), buffer_args(range(1 + len(constants)))


def _row_writer(out: DataFormat, binding: int):
    """Writes the Wt output tiles of each tile row t of this workgroup."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    ptr, page, wt = k.reg("ptr"), k.reg("page"), k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    [pages] = address_generators(k, [out])
    with k.loop_range(first, end, "t") as t, k.loop(wt, "w") as w:
        k.cb_wait_front(CB_OUT, 1)
        k.emit(Op.GET_READ_PTR, ptr, CB_OUT)
        k.emit(Op.MUL, page, t, wt)
        k.emit(Op.ADD, page, page, w)
        noc_page(k, Op.NOC_WRITE_PAGE, pages, page, ptr)
        k.cb_pop_front(CB_OUT, 1)
    return k.build(Processor.RISCV_0), buffer_args([binding])


def _each_tile(k: KernelBuilder, wt, masked: bool, body) -> None:
    """body(cb, index) for the row's tiles: CB_IN0's, with the last one from CB_LAST
    (masked) when the row is masked."""
    end = k.reg("end")
    k.emit(Op.ADDI, end, wt, -1 if masked else 0)
    with k.loop(end, "w") as w:
        body(CB_IN0, w)
    k.release(end)
    if masked:
        body(CB_LAST, 0)


def _row_program(name: str, x: DataFormat, out: DataFormat, width: int, constants, masked: bool,
                 fp32_dest_acc_en: bool, row_body, intermediates: dict) -> Export:
    """A program over tile rows of `width` elements: push constants (tile rows, Wt);
    bindings (x, constants..., [mask], out); `row_body(k, wt)` computes one row whose
    Wt tiles wait in CB_IN0 and pushes its Wt output tiles to CB_OUT. The
    intermediates {cb: pages or None for a row of tiles} are in the Dst-precision
    format."""
    row_pages = ceil_div(width, TILE)
    constants = list(constants) + ([(CB_MASK, DataFormat.bfloat16)] if masked else [])
    reader, reader_args = _row_reader(x, constants)
    k = KernelBuilder(name)
    first, end = tile_range(k)
    wt = k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    scaler_tile(k)
    for cb, _ in constants:
        k.cb_wait_front(cb, 1 if cb == CB_MASK else wt)
    with k.loop_range(first, end, "t"):
        k.cb_wait_front(CB_IN0, wt)
        row_body(k, wt)
        k.cb_pop_front(CB_IN0, wt)
    compute = k.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _row_writer(out, len(constants) + 1)
    inter = intermediate_format(fp32_dest_acc_en)
    extra = {CB_SCALER: (DataFormat.bfloat16, 1), CB_LAST: (inter, 1)}
    extra.update({cb: (inter, pages or row_pages) for cb, pages in intermediates.items()})
    program = Program(circular_buffers([(CB_IN0, x)] + constants, out, extra, input_pages=row_pages),
                      (reader, compute, writer), (reader_args, (), writer_args))
    return Export(name, 2, len(constants) + 2, (1, 1, 1), (Stage(program),))


def softmax(x: DataFormat, out: DataFormat, width: int, masked: bool = False,
            fp32_dest_acc_en: bool = False) -> Export:
    """out = softmax(x) over the last dimension, one tile row at a time: row max,
    exp(x - max), row sum, reciprocal, scale. Bindings (x, [mask], out)."""
    def row(k, wt):
        if masked:
            masked_last(k, CB_IN0, last_index(k, wt), SfpuOp.MASK_NEG_INF)

        def row_max():
            k.fill_tile(0, -math.inf)
            _each_tile(k, wt, masked, lambda cb, w: k.reduce_tile(int(ReduceKind.MAX_ROW), cb, CB_SCALER, w, 0, 0))
        stage(k, CB_STAT, row_max)
        k.cb_wait_front(CB_STAT, 1)

        def shifted_exp(cb, w):
            def body():
                k.sub_tiles(cb, CB_STAT, w, 0, 0, int(Broadcast.COL))
                k.sfpu_unary(SfpuOp.EXP, 0, 0.0)
            stage(k, CB_WORK, body)
        _each_tile(k, wt, masked, shifted_exp)
        k.cb_wait_front(CB_WORK, wt)

        def recip_sum():
            with k.loop(wt, "w") as w:
                k.reduce_tile(int(ReduceKind.SUM_ROW), CB_WORK, CB_SCALER, w, 0, 0)
            k.sfpu_unary(SfpuOp.RECIP, 0, 0.0)
        stage(k, CB_STAT2, recip_sum)
        k.cb_wait_front(CB_STAT2, 1)
        with k.loop(wt, "w") as w:
            stage(k, CB_OUT, lambda: k.mul_tiles(CB_WORK, CB_STAT2, w, 0, 0, int(Broadcast.COL)))
        for cb, pages in ((CB_WORK, wt), (CB_STAT, 1), (CB_STAT2, 1)) + (((CB_LAST, 1),) if masked else ()):
            k.cb_pop_front(cb, pages)

    return _row_program("softmax", x, out, width, [], masked, fp32_dest_acc_en, row,
                        {CB_STAT: 1, CB_WORK: None, CB_STAT2: 1})


def _binary_stage(k: KernelBuilder, target: int, op: Op, cb_a: int, cb_b: int, index_a, index_b,
                  broadcast: Broadcast, mask_at=None) -> None:
    """add/sub/mul_tiles(_bcast) of two CB tiles -> one page of `target`; with
    mask_at = (index, last), masked if index == last."""
    def body():
        getattr(k, op.name.lower())(cb_a, cb_b, index_a, index_b, 0, int(broadcast))
        if mask_at is not None:
            mask_when(k, *mask_at)
    stage(k, target, body)


def layernorm(x: DataFormat, out: DataFormat, width: int, epsilon: float, gamma: DataFormat | None = None,
              beta: DataFormat | None = None, rms: bool = False, masked: bool = False,
              fp32_dest_acc_en: bool = False) -> Export:
    """out = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension of
    `width` elements (rms: x / sqrt(mean(x^2) + eps) * gamma + beta); gamma and beta
    are optional rows of Wt tiles. Bindings (x, [gamma], [beta], [mask], out)."""
    constants = [(cb, fmt) for cb, fmt in ((CB_GAMMA, gamma), (CB_BETA, beta)) if fmt is not None]
    inverse_width = 1.0 / width

    def row(k, wt):
        last = last_index(k, wt) if masked else None
        if masked:
            masked_last(k, CB_IN0, last, SfpuOp.MASK)
        centred = CB_IN0  # the tiles the variance and the output are made of
        if not rms:
            def mean():
                _each_tile(k, wt, masked, lambda cb, w: k.reduce_tile(int(ReduceKind.SUM_ROW), cb, CB_SCALER, w, 0,
                                                                       0))
                k.sfpu_unary(SfpuOp.MUL_SCALAR, 0, inverse_width)
            stage(k, CB_STAT, mean)
            k.cb_wait_front(CB_STAT, 1)

            def centre(w):
                def body():
                    k.sub_tiles(CB_IN0, CB_STAT, w, 0, 0, int(Broadcast.COL))
                    if masked:  # the padding of the last tile back to 0
                        mask_when(k, w, last)
                stage(k, CB_WORK, body)
            with k.loop(wt, "w") as w:
                centre(w)
            k.cb_wait_front(CB_WORK, wt)
            centred = CB_WORK

        def square(cb, w):
            stage(k, CB_SQUARES, lambda: k.mul_tiles(cb, cb, w, w, 0, int(Broadcast.NONE)))
        if rms:
            _each_tile(k, wt, masked, square)
        else:
            with k.loop(wt, "w") as w:
                square(CB_WORK, w)
        k.cb_wait_front(CB_SQUARES, wt)

        def inverse_std():
            with k.loop(wt, "w") as w:
                k.reduce_tile(int(ReduceKind.SUM_ROW), CB_SQUARES, CB_SCALER, w, 0, 0)
            k.sfpu_unary(SfpuOp.MUL_SCALAR, 0, inverse_width)
            k.sfpu_unary(SfpuOp.ADD_SCALAR, 0, epsilon)
            k.sfpu_unary(SfpuOp.RSQRT, 0, 0.0)
        stage(k, CB_STAT2, inverse_std)
        k.cb_pop_front(CB_SQUARES, wt)
        k.cb_wait_front(CB_STAT2, 1)
        steps = [(CB_STAT2, Op.MUL_TILES, Broadcast.COL)] + [
            (cb, Op.MUL_TILES if cb == CB_GAMMA else Op.ADD_TILES, Broadcast.ROW) for cb, _ in constants]
        with k.loop(wt, "w") as w:
            source, index = centred, w
            for n, (operand, op, broadcast) in enumerate(steps):
                target = CB_OUT if n == len(steps) - 1 else CB_TEMP
                operand_index = 0 if operand == CB_STAT2 else w
                # zero the output's padding: it shares block-float exponents
                mask_at = (w, last) if masked and target == CB_OUT else None
                _binary_stage(k, target, op, source, operand, index, operand_index, broadcast, mask_at)
                if source == CB_TEMP:
                    k.cb_pop_front(CB_TEMP, 1)
                if target == CB_TEMP:
                    k.cb_wait_front(CB_TEMP, 1)
                source, index = target, 0
        pops = [(CB_STAT2, 1)] + ([] if rms else [(CB_STAT, 1), (CB_WORK, wt)]) + ([(CB_LAST, 1)] if masked else [])
        for cb, pages in pops:
            k.cb_pop_front(cb, pages)

    name = "rmsnorm" if rms else "layernorm"
    intermediates = {CB_STAT2: 1, CB_SQUARES: None, CB_TEMP: 2}
    if not rms:
        intermediates.update({CB_STAT: 1, CB_WORK: None})
    return _row_program(name, x, out, width, constants, masked, fp32_dest_acc_en, row, intermediates)
