"""The kernel library: parameterised Tensix programs as TTNN users know them, built
with hal.isa.KernelBuilder. Every program is multi-core: workgroup w of n takes the
tiles [w * T // n, (w + 1) * T // n) of the T tiles named by push constant 0.

So far: eltwise binary (add, sub, mul; with row, column or scalar broadcast of B)
and eltwise unary (the SFPU ops).
"""

from __future__ import annotations

from hal.isa import Broadcast, KernelBuilder, MathFidelity, Op, Processor, SfpuOp
from hal.layout import DataFormat
from hal.program import ArgKind, CircularBufferConfig, Export, Program, RuntimeArg

CB_IN0, CB_IN1, CB_OUT = 0, 1, 16
PAGES = 2  # double buffering


def _tile_range(k: KernelBuilder):
    """(first, end) tile of this workgroup."""
    total, wg, count, scratch = k.reg("total"), k.reg("wg"), k.reg("wgs"), k.reg("s")
    k.emit(Op.CONSTANT, total, 0)
    # The linear workgroup id (x fastest) and count over all three dimensions.
    k.emit(Op.WORKGROUP_ID, wg, 2)
    for dim in (1, 0):
        k.emit(Op.WORKGROUP_COUNT, scratch, dim)
        k.emit(Op.MUL, wg, wg, scratch)
        k.emit(Op.WORKGROUP_ID, scratch, dim)
        k.emit(Op.ADD, wg, wg, scratch)
    k.emit(Op.WORKGROUP_COUNT, count, 0)
    for dim in (1, 2):
        k.emit(Op.WORKGROUP_COUNT, scratch, dim)
        k.emit(Op.MUL, count, count, scratch)
    k.release(scratch)
    first, end = k.reg("first"), k.reg("end")
    k.emit(Op.MUL, first, wg, total)
    k.emit(Op.DIV, first, first, count)
    k.emit(Op.ADDI, end, wg, 1)
    k.emit(Op.MUL, end, end, total)
    k.emit(Op.DIV, end, end, count)
    k.release(total, wg, count)
    return first, end


def _address_generators(k: KernelBuilder, formats) -> None:
    """Slot i: binding i's tiles, from runtime args 2i (address) and 2i + 1 (is_dram)."""
    for slot, fmt in enumerate(formats):
        address, is_dram = k.arg(2 * slot, f"in{slot}_addr"), k.arg(2 * slot + 1, f"in{slot}_is_dram")
        k.addrgen(slot, address, k.const(fmt.tile_size), is_dram)
        k.release(address, is_dram)


def _reader(inputs: list[tuple[int, DataFormat]], broadcast: Broadcast = Broadcast.NONE):
    """Reads tile t of every input into its CB; a broadcast second input is one row of
    tiles (ROW: tile t % Wt), one column (COL: tile t // Wt) or one tile (SCALAR),
    with Wt = push constant 1."""
    k = KernelBuilder("reader")
    first, end = _tile_range(k)
    one, ptr, page = k.const(1, "one"), k.reg("ptr"), k.reg("page")
    tiles_per_row = k.reg("Wt")
    if broadcast in (Broadcast.ROW, Broadcast.COL):
        k.emit(Op.CONSTANT, tiles_per_row, 1)
    _address_generators(k, [fmt for _, fmt in inputs])
    with k.loop_range(first, end, "t") as tile:
        for slot, (cb, _) in enumerate(inputs):
            k.cb_reserve_back(cb, one)
            k.emit(Op.GET_WRITE_PTR, ptr, cb)
            if slot == 1 and broadcast == Broadcast.ROW:  # b's tile in this tile's column
                k.emit(Op.MOD, page, tile, tiles_per_row)
            elif slot == 1 and broadcast == Broadcast.COL:  # b's tile in this tile's row
                k.emit(Op.DIV, page, tile, tiles_per_row)
            elif slot == 1 and broadcast == Broadcast.SCALAR:
                k.emit(Op.LI, page, 0)
            else:
                k.emit(Op.MOV, page, tile)
            k.noc_read_page(slot, page, ptr)
            k.noc_read_barrier()
            k.cb_push_back(cb, one)
    return k.build(Processor.RISCV_1), _buffer_args(range(len(inputs)))


def _buffer_args(bindings) -> tuple[RuntimeArg, ...]:
    """(address, is_dram) runtime args of each binding, for its address generator."""
    return tuple(RuntimeArg(kind, b) for b in bindings for kind in (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM))


def _writer(output: DataFormat, binding: int):
    k = KernelBuilder("writer")
    first, end = _tile_range(k)
    one, ptr = k.const(1, "one"), k.reg("ptr")
    _address_generators(k, [output])
    with k.loop_range(first, end, "t") as tile:
        k.cb_wait_front(CB_OUT, one)
        k.emit(Op.GET_READ_PTR, ptr, CB_OUT)
        k.noc_write_page(0, tile, ptr)
        k.noc_write_barrier()
        k.cb_pop_front(CB_OUT, one)
    return k.build(Processor.RISCV_0), _buffer_args([binding])


def _compute(name: str, body, inputs: int, **config):
    """A compute kernel running `body(k, zero)` on each tile between waiting for its
    inputs and packing Dst tile 0 to the output CB."""
    k = KernelBuilder(name)
    first, end = _tile_range(k)
    one, zero = k.const(1, "one"), k.const(0, "zero")
    with k.loop_range(first, end, "t"):
        for cb in (CB_IN0, CB_IN1)[:inputs]:
            k.cb_wait_front(cb, one)
        k.tile_regs_acquire()
        body(k, zero)
        k.tile_regs_commit()
        k.cb_reserve_back(CB_OUT, one)
        k.tile_regs_wait()
        k.pack_tile(zero, CB_OUT, zero)
        k.tile_regs_release()
        k.cb_push_back(CB_OUT, one)
        for cb in (CB_IN0, CB_IN1)[:inputs]:
            k.cb_pop_front(cb, one)
    return k.build(Processor.COMPUTE, **config), ()


_BINARY = {"add": Op.ADD_TILES, "sub": Op.SUB_TILES, "mul": Op.MUL_TILES}


def eltwise_binary(op: str, a: DataFormat, b: DataFormat, out: DataFormat, broadcast: Broadcast = Broadcast.NONE,
                   math_fidelity: MathFidelity = MathFidelity.HiFi4, fp32_dest_acc_en: bool = False) -> Export:
    """out = a <op> b tile by tile; bindings (a, b, out); push constants: tiles of out,
    tiles per row (Wt). With a broadcast, b is a (1, W) row, an (H, 1) column (outer
    dimensions folded into H) or a scalar tensor whose row, column or element repeats."""
    instruction = _BINARY[op]
    reader, reader_args = _reader([(CB_IN0, a), (CB_IN1, b)], broadcast)
    compute, compute_args = _compute(
        f"eltwise_{op}", lambda k, zero: k.emit(instruction, CB_IN0, CB_IN1, zero, zero, zero, int(broadcast)), 2,
        math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, 2)
    cbs = (CircularBufferConfig(CB_IN0, a, a.tile_size, PAGES), CircularBufferConfig(CB_IN1, b, b.tile_size, PAGES),
           CircularBufferConfig(CB_OUT, out, out.tile_size, PAGES))
    program = Program(cbs, (reader, compute, writer), (reader_args, compute_args, writer_args))
    return Export(f"eltwise_{op}", 2, 3, (1, 1, 1), program)


def eltwise_unary(op: SfpuOp, a: DataFormat, out: DataFormat, parameter: float = 0.0,
                  fp32_dest_acc_en: bool = False) -> Export:
    """out = op(a) on the SFPU, tile by tile; bindings (a, out); push constant 0: tiles."""
    reader, reader_args = _reader([(CB_IN0, a)])

    def body(k, zero):
        k.copy_tile(CB_IN0, zero, zero)
        k.sfpu_unary(op, zero, parameter)

    compute, compute_args = _compute(f"eltwise_{op.name.lower()}", body, 1, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, 1)
    cbs = (CircularBufferConfig(CB_IN0, a, a.tile_size, PAGES), CircularBufferConfig(CB_OUT, out, out.tile_size, PAGES))
    program = Program(cbs, (reader, compute, writer), (reader_args, compute_args, writer_args))
    return Export(f"eltwise_{op.name.lower()}", 1, 2, (1, 1, 1), program)


def matmul(a: DataFormat, b: DataFormat, out: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
           fp32_dest_acc_en: bool = False) -> Export:
    """out (M, N) = a (M, K) @ b (K, N) in tiles; bindings (a, b, out); push constants:
    output tiles Mt * Nt, Kt, Nt. Workgroups split the output tiles; each output tile
    accumulates its Kt products in Dst."""
    r = KernelBuilder("reader")
    first, end = _tile_range(r)
    one, ptr, page = r.const(1, "one"), r.reg("ptr"), r.reg("page")
    k_tiles, n_tiles = r.reg("Kt"), r.reg("Nt")
    r.emit(Op.CONSTANT, k_tiles, 1)
    r.emit(Op.CONSTANT, n_tiles, 2)
    _address_generators(r, (a, b))
    m, n = r.reg("m"), r.reg("n")
    with r.loop_range(first, end, "t") as t:
        r.emit(Op.DIV, m, t, n_tiles)
        r.emit(Op.MOD, n, t, n_tiles)
        with r.loop(k_tiles, "k") as k:
            for slot, cb in enumerate((CB_IN0, CB_IN1)):
                r.cb_reserve_back(cb, one)
                r.emit(Op.GET_WRITE_PTR, ptr, cb)
                if slot == 0:  # a tile (m, k)
                    r.emit(Op.MUL, page, m, k_tiles)
                    r.emit(Op.ADD, page, page, k)
                else:  # b tile (k, n)
                    r.emit(Op.MUL, page, k, n_tiles)
                    r.emit(Op.ADD, page, page, n)
                r.noc_read_page(slot, page, ptr)
                r.noc_read_barrier()
                r.cb_push_back(cb, one)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder("matmul")
    first, end = _tile_range(c)
    one, zero, k_tiles = c.const(1, "one"), c.const(0, "zero"), c.reg("Kt")
    c.emit(Op.CONSTANT, k_tiles, 1)
    with c.loop_range(first, end, "t"):
        c.tile_regs_acquire()
        with c.loop(k_tiles, "k"):
            c.cb_wait_front(CB_IN0, one)
            c.cb_wait_front(CB_IN1, one)
            c.matmul_tiles(CB_IN0, CB_IN1, zero, zero, zero, 0)
            c.cb_pop_front(CB_IN0, one)
            c.cb_pop_front(CB_IN1, one)
        c.tile_regs_commit()
        c.cb_reserve_back(CB_OUT, one)
        c.tile_regs_wait()
        c.pack_tile(zero, CB_OUT, zero)
        c.tile_regs_release()
        c.cb_push_back(CB_OUT, one)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, 2)
    cbs = (CircularBufferConfig(CB_IN0, a, a.tile_size, PAGES), CircularBufferConfig(CB_IN1, b, b.tile_size, PAGES),
           CircularBufferConfig(CB_OUT, out, out.tile_size, PAGES))
    program = Program(cbs, (reader, compute, writer), (_buffer_args([0, 1]), (), writer_args))
    return Export("matmul", 3, 3, (1, 1, 1), program)
