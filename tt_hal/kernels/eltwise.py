"""Eltwise programs: binary (add, sub, mul; with row, column or scalar broadcast of
B) on the FPU, and unary (the SFPU ops)."""

from __future__ import annotations

from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    address_generators,
    buffer_args,
    circular_buffers,
    compute_each_tile,
    read_tile,
    tile_range,
    writer_unary,
)
from tt_hal.target.isa import Broadcast, MathFidelity, Op, Processor, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import Export, Program, Stage


def _reader(inputs: list[tuple[int, DataFormat]], broadcast: Broadcast = Broadcast.NONE):
    """Reads tile t of every input into its CB; a broadcast second input is one row of
    tiles (ROW: tile t % Wt), one column (COL: tile t // Wt) or one tile (SCALAR),
    with Wt = push constant 1."""
    k = KernelBuilder("reader")
    first, end = tile_range(k)
    ptr, page = k.reg("ptr"), k.reg("page")
    tiles_per_row = k.reg("Wt")
    if broadcast in (Broadcast.ROW, Broadcast.COL):
        k.emit(Op.CONSTANT, tiles_per_row, 1)
    bindings = address_generators(k, [fmt for _, fmt in inputs])
    with k.loop_range(first, end, "t") as tile:
        for slot, (cb, _) in enumerate(inputs):
            if slot == 1 and broadcast == Broadcast.ROW:  # b's tile in this tile's column
                k.emit(Op.MOD, page, tile, tiles_per_row)
            elif slot == 1 and broadcast == Broadcast.COL:  # b's tile in this tile's row
                k.emit(Op.DIV, page, tile, tiles_per_row)
            elif slot == 1 and broadcast == Broadcast.SCALAR:
                k.emit(Op.LI, page, 0)
            else:
                k.emit(Op.MOV, page, tile)
            read_tile(k, bindings[slot], cb, page, ptr)
    return k.build(Processor.RISCV_1), buffer_args(range(len(inputs)))


_BINARY = {"add": Op.ADD_TILES, "sub": Op.SUB_TILES, "mul": Op.MUL_TILES}


def binary_compute(op: str, broadcast: Broadcast = Broadcast.NONE, **config):
    """The compute kernel of a binary op: add, sub or mul_tiles of CB_IN0 and CB_IN1 (B
    broadcast as `broadcast` says) for each tile."""
    instruction = _BINARY[op]
    return compute_each_tile(
        f"eltwise_{op}", lambda k, zero: k.emit(instruction, CB_IN0, CB_IN1, zero, zero, zero, int(broadcast)), 2,
        **config)


def eltwise_binary(op: str, a: DataFormat, b: DataFormat, out: DataFormat, broadcast: Broadcast = Broadcast.NONE,
                   math_fidelity: MathFidelity = MathFidelity.HiFi4, fp32_dest_acc_en: bool = False) -> Export:
    """out = a <op> b tile by tile; bindings (a, b, out); push constants: tiles of out,
    tiles per row (Wt). With a broadcast, b is a (1, W) row, an (H, 1) column (outer
    dimensions folded into H) or a scalar tensor whose row, column or element repeats."""
    reader, reader_args = _reader([(CB_IN0, a), (CB_IN1, b)], broadcast)
    compute, compute_args = binary_compute(op, broadcast, math_fidelity=math_fidelity,
                                           fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_unary(out, 2)
    cbs = circular_buffers([(CB_IN0, a), (CB_IN1, b)], out, {})
    program = Program(cbs, (reader, compute, writer), (reader_args, compute_args, writer_args))
    return Export(f"eltwise_{op}", 2, 3, (1, 1, 1), (Stage(program),))


def eltwise_unary(op: SfpuOp, a: DataFormat, out: DataFormat, parameter: float = 0.0,
                  fp32_dest_acc_en: bool = False) -> Export:
    """out = op(a) on the SFPU, tile by tile; bindings (a, out); push constant 0: tiles."""
    reader, reader_args = _reader([(CB_IN0, a)])

    def body(k, zero):
        k.copy_tile(CB_IN0, zero, zero)
        k.sfpu_unary(op, zero, parameter)

    compute, compute_args = compute_each_tile(f"eltwise_{op.name.lower()}", body, 1,
                                              fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = writer_unary(out, 1)
    cbs = circular_buffers([(CB_IN0, a)], out, {})
    program = Program(cbs, (reader, compute, writer), (reader_args, compute_args, writer_args))
    return Export(f"eltwise_{op.name.lower()}", 1, 2, (1, 1, 1), (Stage(program),))
