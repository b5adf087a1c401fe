"""Matmul: batched, tiled, each output tile accumulating its K products in Dst."""

from __future__ import annotations

from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    address_generators,
    buffer_args,
    circular_buffers,
    read_tile,
    stage,
    tile_range,
    writer_unary,
)
from tt_hal.target.isa import MathFidelity, Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, Program, Stage


def matmul(a: DataFormat, b: DataFormat, out: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
           fp32_dest_acc_en: bool = False) -> Export:
    """out (B, M, N) = a (B, M, K) @ b (B or 1, K, N) in tiles; bindings (a, b, out);
    push constants: output tiles B * Mt * Nt, Kt, Nt, Mt, and b's tiles per batch
    (Kt * Nt, or 0 when one b serves every batch). Workgroups split the output tiles;
    each output tile accumulates its Kt products in Dst."""
    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ptr, page = r.reg("ptr"), r.reg("page")
    k_tiles, n_tiles, m_tiles, b_stride = r.reg("Kt"), r.reg("Nt"), r.reg("Mt"), r.reg("b_stride")
    for index, reg in enumerate((k_tiles, n_tiles, m_tiles, b_stride), 1):
        r.emit(Op.CONSTANT, reg, index)
    bindings = address_generators(r, (a, b))
    m, n, a_base, b_base = r.reg("m"), r.reg("n"), r.reg("a_base"), r.reg("b_base")
    with r.loop_range(first, end, "t") as t:
        r.emit(Op.DIV, m, t, n_tiles)  # m over all batches: batch * Mt + row
        r.emit(Op.MOD, n, t, n_tiles)
        r.emit(Op.MUL, a_base, m, k_tiles)  # a tile (m, 0)
        r.emit(Op.DIV, b_base, m, m_tiles)  # b tile (batch, 0, n)
        r.emit(Op.MUL, b_base, b_base, b_stride)
        r.emit(Op.ADD, b_base, b_base, n)
        with r.loop(k_tiles, "k") as k:
            for slot, cb in enumerate((CB_IN0, CB_IN1)):
                if slot == 0:  # a tile (m, k)
                    r.emit(Op.ADD, page, a_base, k)
                else:  # b tile (batch, k, n)
                    r.emit(Op.MUL, page, k, n_tiles)
                    r.emit(Op.ADD, page, page, b_base)
                read_tile(r, bindings[slot], cb, page, ptr)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder("matmul")
    first, end = tile_range(c)
    one, zero, k_tiles = c.const(1, "one"), c.const(0, "zero"), c.reg("Kt")
    c.emit(Op.CONSTANT, k_tiles, 1)
    def accumulate():
        with c.loop(k_tiles, "k"):
            c.cb_wait_front(CB_IN0, one)
            c.cb_wait_front(CB_IN1, one)
            c.matmul_tiles(CB_IN0, CB_IN1, zero, zero, zero, 0)
            c.cb_pop_front(CB_IN0, one)
            c.cb_pop_front(CB_IN1, one)

    with c.loop_range(first, end, "t"):
        stage(c, CB_OUT, accumulate)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_unary(out, 2)
    cbs = circular_buffers([(CB_IN0, a), (CB_IN1, b)], out, {})
    program = Program(cbs, (reader, compute, writer), (buffer_args([0, 1]), (), writer_args))
    return Export("matmul", 5, 3, (1, 1, 1), (Stage(program),))
