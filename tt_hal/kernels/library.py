"""The kernel library: parameterised Tensix programs as TTNN users know them, built
with tt_hal.target.isa.KernelBuilder. Every program is multi-core: workgroup w of n takes the
tiles [w * T // n, (w + 1) * T // n) of the T tiles named by push constant 0.

Programs: eltwise binary (add, sub, mul; with row, column or scalar broadcast of
B), eltwise unary (the SFPU ops), matmul, reductions (sum, max over rows or
columns), transpose, and the row-wise softmax, layernorm and rmsnorm.
"""

from __future__ import annotations

import dataclasses
import math

from tt_hal.target.isa import ADDRGEN_SLOTS, Broadcast, KernelBuilder, KernelConfig, MathFidelity, Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, Export, Program, RuntimeArg
from hal.status import HalError, StatusCode

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


def _stage(k: KernelBuilder, out_cb: int, body) -> None:
    """One Dst round: acquire, `body()` leaves its result in Dst tile 0, which is
    packed into one page of `out_cb`."""
    zero, one = k.const(0, "zero"), k.const(1, "one")
    k.tile_regs_acquire()
    body()
    k.tile_regs_commit()
    k.cb_reserve_back(out_cb, one)
    k.tile_regs_wait()
    k.pack_tile(zero, out_cb, zero)
    k.tile_regs_release()
    k.cb_push_back(out_cb, one)
    k.release(zero, one)


def _compute(name: str, body, inputs: int, **config):
    """A compute kernel running `body(k, zero)` on each tile between waiting for its
    inputs and packing Dst tile 0 to the output CB."""
    k = KernelBuilder(name)
    first, end = _tile_range(k)
    one, zero = k.const(1, "one"), k.const(0, "zero")
    with k.loop_range(first, end, "t"):
        for cb in (CB_IN0, CB_IN1)[:inputs]:
            k.cb_wait_front(cb, one)
        _stage(k, CB_OUT, lambda: body(k, zero))
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
    cbs = _circular_buffers([(CB_IN0, a), (CB_IN1, b)], out, {})
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
    cbs = _circular_buffers([(CB_IN0, a)], out, {})
    program = Program(cbs, (reader, compute, writer), (reader_args, compute_args, writer_args))
    return Export(f"eltwise_{op.name.lower()}", 1, 2, (1, 1, 1), program)


def matmul(a: DataFormat, b: DataFormat, out: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
           fp32_dest_acc_en: bool = False) -> Export:
    """out (B, M, N) = a (B, M, K) @ b (B or 1, K, N) in tiles; bindings (a, b, out);
    push constants: output tiles B * Mt * Nt, Kt, Nt, Mt, and b's tiles per batch
    (Kt * Nt, or 0 when one b serves every batch). Workgroups split the output tiles;
    each output tile accumulates its Kt products in Dst."""
    r = KernelBuilder("reader")
    first, end = _tile_range(r)
    one, ptr, page = r.const(1, "one"), r.reg("ptr"), r.reg("page")
    k_tiles, n_tiles, m_tiles, b_stride = r.reg("Kt"), r.reg("Nt"), r.reg("Mt"), r.reg("b_stride")
    for index, reg in enumerate((k_tiles, n_tiles, m_tiles, b_stride), 1):
        r.emit(Op.CONSTANT, reg, index)
    _address_generators(r, (a, b))
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
                r.cb_reserve_back(cb, one)
                r.emit(Op.GET_WRITE_PTR, ptr, cb)
                if slot == 0:  # a tile (m, k)
                    r.emit(Op.ADD, page, a_base, k)
                else:  # b tile (batch, k, n)
                    r.emit(Op.MUL, page, k, n_tiles)
                    r.emit(Op.ADD, page, page, b_base)
                r.noc_read_page(slot, page, ptr)
                r.noc_read_barrier()
                r.cb_push_back(cb, one)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder("matmul")
    first, end = _tile_range(c)
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
        _stage(c, CB_OUT, accumulate)
    compute = c.build(Processor.COMPUTE, math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, 2)
    cbs = _circular_buffers([(CB_IN0, a), (CB_IN1, b)], out, {})
    program = Program(cbs, (reader, compute, writer), (_buffer_args([0, 1]), (), writer_args))
    return Export("matmul", 5, 3, (1, 1, 1), program)


# ---- Reductions, transpose and row-wise normalisations ----
#
# Tiles of a reduced dimension whose size is not a multiple of 32 carry padding the
# op must not see: the host binds a mask tile (1.0 where the data is, 0.0 in the
# padding; tt_hal.ops.mask_tile) and the kernel masks the last tile in Dst (SFPU MASK,
# or MASK_NEG_INF before a max) before it is reduced.

CB_GAMMA, CB_BETA, CB_SCALER, CB_MASK, CB_COLUMN_MASK = 1, 2, 3, 4, 5
CB_LAST, CB_STAT, CB_WORK, CB_STAT2, CB_SQUARES, CB_TEMP = 24, 25, 26, 27, 28, 29


def _intermediate(fp32_dest_acc_en: bool) -> DataFormat:
    """Format of the CBs between a kernel's own stages (tt-metal: Float16_b unless fp32
    accumulation is on)."""
    return DataFormat.float32 if fp32_dest_acc_en else DataFormat.bfloat16


def _scaler_tile(k: KernelBuilder) -> None:
    """The 1.0 scaler tile reduce_tile multiplies by, packed into CB_SCALER once
    (tt-metal's reader generates it; here the compute kernel fills Dst)."""
    _stage(k, CB_SCALER, lambda: k.fill_tile(0, 1.0))
    k.cb_wait_front(CB_SCALER, 1)


def _masked_last(k: KernelBuilder, cb: int, index, kind: SfpuOp) -> None:
    """Tile `index` of `cb` with its padding masked (0 or -inf) -> one page of CB_LAST."""
    def body():
        k.copy_tile(cb, index, 0)
        k.copy_tile(CB_MASK, 0, 1)
        k.sfpu_binary(kind, 0, 1)
    _stage(k, CB_LAST, body)
    k.cb_wait_front(CB_LAST, 1)


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
           fp32_dest_acc_en: bool = False) -> Export:
    """Sum or max over the last dimension (ReduceKind *_ROW: each tile row -> column 0
    of one tile) or the one before (*_COL: each tile column -> row 0). Bindings (a,
    [mask], [column mask], out); push constants: T output tiles, R tiles reduced into
    each, D: output tile t reads the input tiles (t // D) * R * D + h * D + t % D for
    h < R (D = 1 for rows, Wt for columns). With `masked`, the last of the R tiles is
    masked first; with `mask_columns`, the padding columns of the last output tile of
    each row are zeroed (they share block-float exponents with the results)."""
    is_max = kind >= ReduceKind.MAX_ROW
    inputs = [(CB_IN0, a)] + [(cb, DataFormat.bfloat16) for cb, wanted in (
        (CB_MASK, masked), (CB_COLUMN_MASK, mask_columns)) if wanted]

    r = KernelBuilder("reader")
    first, end = _tile_range(r)
    ptr, page = r.reg("ptr"), r.reg("page")
    count, d = r.reg("R"), r.reg("D")
    r.emit(Op.CONSTANT, count, 1)
    r.emit(Op.CONSTANT, d, 2)
    _address_generators(r, [fmt for _, fmt in inputs])
    for slot, (cb, _) in enumerate(inputs[1:], 1):
        _read_tile(r, slot, cb, 0, ptr)
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
            _read_tile(r, 0, CB_IN0, page, ptr)
            if masked:
                r.release(h)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder(f"reduce_{kind.name.lower()}")
    first, end = _tile_range(c)
    count, d = c.reg("R"), c.reg("D")
    c.emit(Op.CONSTANT, count, 1)
    if mask_columns:
        c.emit(Op.CONSTANT, d, 2)
        last, column = _last_index(c, d), c.reg("column")
    _scaler_tile(c)
    for cb, _ in inputs[1:]:
        c.cb_wait_front(cb, 1)
    if masked:
        c.emit(Op.ADDI, count, count, -1)
    with c.loop_range(first, end, "t") as t:
        if masked:
            c.cb_wait_front(CB_IN0, 1)
            _masked_last(c, CB_IN0, 0, SfpuOp.MASK_NEG_INF if is_max else SfpuOp.MASK)
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
                _mask_when(c, column, last, CB_COLUMN_MASK)
        _stage(c, CB_OUT, body)
    compute = c.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, len(inputs))
    cbs = _circular_buffers(inputs, out, {CB_SCALER: (DataFormat.bfloat16, 1), CB_LAST: (_intermediate(
        fp32_dest_acc_en), 1)})
    program = Program(cbs, (reader, compute, writer), (_buffer_args(range(len(inputs))), (), writer_args))
    return Export(f"reduce_{kind.name.lower()}", 3, len(inputs) + 1, (1, 1, 1), program)


def _read_tile(k: KernelBuilder, slot: int, cb: int, page, ptr) -> None:
    """Reads page `page` of address generator `slot` into the back of `cb`."""
    k.cb_reserve_back(cb, 1)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    k.noc_read_page(slot, page, ptr)
    k.noc_read_barrier()
    k.cb_push_back(cb, 1)


def _circular_buffers(inputs, out: DataFormat, extra: dict, input_pages: int = PAGES):
    """CB configs: each input with `input_pages` pages (the mask: one), the output
    double-buffered, and `extra` {index: (format, pages)}."""
    cbs = [CircularBufferConfig(cb, fmt, fmt.tile_size, 1 if cb == CB_MASK else input_pages) for cb, fmt in inputs]
    cbs.append(CircularBufferConfig(CB_OUT, out, out.tile_size, PAGES))
    cbs += [CircularBufferConfig(cb, fmt, fmt.tile_size, pages) for cb, (fmt, pages) in extra.items()]
    return tuple(cbs)


def transpose(a: DataFormat, out: DataFormat, fp32_dest_acc_en: bool = False) -> Export:
    """out (..., W, H) = a (..., H, W) with transpose_wh_tile; bindings (a, out); push
    constants: T output tiles, Ht and Wt of the output's tile grid."""
    r = KernelBuilder("reader")
    first, end = _tile_range(r)
    ptr, page, scratch = r.reg("ptr"), r.reg("page"), r.reg("s")
    ht, wt = r.reg("Ht"), r.reg("Wt")
    r.emit(Op.CONSTANT, ht, 1)
    r.emit(Op.CONSTANT, wt, 2)
    _address_generators(r, [a])
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
        _read_tile(r, 0, CB_IN0, page, ptr)
    reader = r.build(Processor.RISCV_1)
    compute, _ = _compute("transpose_wh", lambda k, zero: k.transpose_wh_tile(CB_IN0, zero, zero), 1,
                          fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, 1)
    program = Program(_circular_buffers([(CB_IN0, a)], out, {}), (reader, compute, writer),
                      (_buffer_args([0]), (), writer_args))
    return Export("transpose_wh", 3, 2, (1, 1, 1), program)


def _row_reader(x: DataFormat, constants: list[tuple[int, DataFormat]]):
    """Reads the constant inputs once (gamma and beta: a row of Wt tiles; the mask: one
    tile), then for each tile row t of this workgroup its Wt tiles of x."""
    k = KernelBuilder("reader")
    first, end = _tile_range(k)
    ptr, page, wt = k.reg("ptr"), k.reg("page"), k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    _address_generators(k, [x] + [fmt for _, fmt in constants])
    for slot, (cb, _) in enumerate(constants, 1):
        with k.loop(1 if cb == CB_MASK else wt, "w") as w:
            _read_tile(k, slot, cb, w, ptr)
    with k.loop_range(first, end, "t") as t:
        with k.loop(wt, "w") as w:
            k.emit(Op.MUL, page, t, wt)
            k.emit(Op.ADD, page, page, w)
            _read_tile(k, 0, CB_IN0, page, ptr)
    return k.build(Processor.RISCV_1), _buffer_args(range(1 + len(constants)))


def _row_writer(out: DataFormat, binding: int):
    """Writes the Wt output tiles of each tile row t of this workgroup."""
    k = KernelBuilder("writer")
    first, end = _tile_range(k)
    ptr, page, wt = k.reg("ptr"), k.reg("page"), k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    _address_generators(k, [out])
    with k.loop_range(first, end, "t") as t:
        with k.loop(wt, "w") as w:
            k.cb_wait_front(CB_OUT, 1)
            k.emit(Op.GET_READ_PTR, ptr, CB_OUT)
            k.emit(Op.MUL, page, t, wt)
            k.emit(Op.ADD, page, page, w)
            k.noc_write_page(0, page, ptr)
            k.noc_write_barrier()
            k.cb_pop_front(CB_OUT, 1)
    return k.build(Processor.RISCV_0), _buffer_args([binding])


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
    row_pages = -(-width // 32)
    constants = list(constants) + ([(CB_MASK, DataFormat.bfloat16)] if masked else [])
    reader, reader_args = _row_reader(x, constants)
    k = KernelBuilder(name)
    first, end = _tile_range(k)
    wt = k.reg("Wt")
    k.emit(Op.CONSTANT, wt, 1)
    _scaler_tile(k)
    for cb, _ in constants:
        k.cb_wait_front(cb, 1 if cb == CB_MASK else wt)
    with k.loop_range(first, end, "t"):
        k.cb_wait_front(CB_IN0, wt)
        row_body(k, wt)
        k.cb_pop_front(CB_IN0, wt)
    compute = k.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _row_writer(out, len(constants) + 1)
    inter = _intermediate(fp32_dest_acc_en)
    extra = {CB_SCALER: (DataFormat.bfloat16, 1), CB_LAST: (inter, 1)}
    extra.update({cb: (inter, pages or row_pages) for cb, pages in intermediates.items()})
    return Export(name, 2, len(constants) + 2, (1, 1, 1),
                  Program(_circular_buffers([(CB_IN0, x)] + constants, out, extra, input_pages=row_pages),
                          (reader, compute, writer), (reader_args, (), writer_args)))


def softmax(x: DataFormat, out: DataFormat, width: int, masked: bool = False,
            fp32_dest_acc_en: bool = False) -> Export:
    """out = softmax(x) over the last dimension, one tile row at a time: row max,
    exp(x - max), row sum, reciprocal, scale. Bindings (x, [mask], out)."""
    def row(k, wt):
        if masked:
            _masked_last(k, CB_IN0, _last_index(k, wt), SfpuOp.MASK_NEG_INF)

        def row_max():
            k.fill_tile(0, -math.inf)
            _each_tile(k, wt, masked, lambda cb, w: k.reduce_tile(int(ReduceKind.MAX_ROW), cb, CB_SCALER, w, 0, 0))
        _stage(k, CB_STAT, row_max)
        k.cb_wait_front(CB_STAT, 1)

        def shifted_exp(cb, w):
            def body():
                k.sub_tiles(cb, CB_STAT, w, 0, 0, int(Broadcast.COL))
                k.sfpu_unary(SfpuOp.EXP, 0, 0.0)
            _stage(k, CB_WORK, body)
        _each_tile(k, wt, masked, shifted_exp)
        k.cb_wait_front(CB_WORK, wt)

        def recip_sum():
            with k.loop(wt, "w") as w:
                k.reduce_tile(int(ReduceKind.SUM_ROW), CB_WORK, CB_SCALER, w, 0, 0)
            k.sfpu_unary(SfpuOp.RECIP, 0, 0.0)
        _stage(k, CB_STAT2, recip_sum)
        k.cb_wait_front(CB_STAT2, 1)
        with k.loop(wt, "w") as w:
            _stage(k, CB_OUT, lambda: k.mul_tiles(CB_WORK, CB_STAT2, w, 0, 0, int(Broadcast.COL)))
        for cb, pages in ((CB_WORK, wt), (CB_STAT, 1), (CB_STAT2, 1)) + (((CB_LAST, 1),) if masked else ()):
            k.cb_pop_front(cb, pages)

    return _row_program("softmax", x, out, width, [], masked, fp32_dest_acc_en, row,
                        {CB_STAT: 1, CB_WORK: None, CB_STAT2: 1})


def _mask_when(k: KernelBuilder, index, last, mask_cb: int = CB_MASK) -> None:
    """If index == last: Dst tile 0 masked (0 where the mask tile is 0), via Dst tile 1."""
    skip = k.label("unmasked")
    k.emit(Op.BNE, index, last, skip)
    k.copy_tile(mask_cb, 0, 1)
    k.sfpu_binary(SfpuOp.MASK, 0, 1)
    k.place(skip)


def _last_index(k: KernelBuilder, wt):
    last = k.reg("last")
    k.emit(Op.ADDI, last, wt, -1)
    return last


def _binary_tile(k: KernelBuilder, op: Op, cb_a: int, cb_b: int, index_a, index_b, broadcast: Broadcast) -> None:
    """add/sub/mul_tiles(_bcast) of two CB tiles into Dst tile 0."""
    getattr(k, op.name.lower())(cb_a, cb_b, index_a, index_b, 0, int(broadcast))


def layernorm(x: DataFormat, out: DataFormat, width: int, epsilon: float, gamma: DataFormat | None = None,
              beta: DataFormat | None = None, rms: bool = False, masked: bool = False,
              fp32_dest_acc_en: bool = False) -> Export:
    """out = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension of
    `width` elements (rms: x / sqrt(mean(x^2) + eps) * gamma + beta); gamma and beta
    are optional rows of Wt tiles. Bindings (x, [gamma], [beta], [mask], out)."""
    constants = [(cb, fmt) for cb, fmt in ((CB_GAMMA, gamma), (CB_BETA, beta)) if fmt is not None]
    inverse_width = 1.0 / width

    def row(k, wt):
        last = _last_index(k, wt) if masked else None
        if masked:
            _masked_last(k, CB_IN0, last, SfpuOp.MASK)
        centred = CB_IN0  # the tiles the variance and the output are made of
        if not rms:
            def mean():
                _each_tile(k, wt, masked, lambda cb, w: k.reduce_tile(int(ReduceKind.SUM_ROW), cb, CB_SCALER, w, 0,
                                                                       0))
                k.sfpu_unary(SfpuOp.MUL_SCALAR, 0, inverse_width)
            _stage(k, CB_STAT, mean)
            k.cb_wait_front(CB_STAT, 1)

            def centre(w):
                def body():
                    k.sub_tiles(CB_IN0, CB_STAT, w, 0, 0, int(Broadcast.COL))
                    if masked:  # the padding of the last tile back to 0
                        _mask_when(k, w, last)
                _stage(k, CB_WORK, body)
            with k.loop(wt, "w") as w:
                centre(w)
            k.cb_wait_front(CB_WORK, wt)
            centred = CB_WORK

        def square(cb, w):
            _stage(k, CB_SQUARES, lambda: k.mul_tiles(cb, cb, w, w, 0, int(Broadcast.NONE)))
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
        _stage(k, CB_STAT2, inverse_std)
        k.cb_pop_front(CB_SQUARES, wt)
        k.cb_wait_front(CB_STAT2, 1)
        steps = [(CB_STAT2, Op.MUL_TILES, Broadcast.COL)] + [
            (cb, Op.MUL_TILES if cb == CB_GAMMA else Op.ADD_TILES, Broadcast.ROW) for cb, _ in constants]
        with k.loop(wt, "w") as w:
            source, index = centred, w
            for n, (operand, op, broadcast) in enumerate(steps):
                target = CB_OUT if n == len(steps) - 1 else CB_TEMP
                operand_index = 0 if operand == CB_STAT2 else w

                def body():
                    _binary_tile(k, op, source, operand, index, operand_index, broadcast)
                    if masked and target == CB_OUT:  # zero padding: it shares block-float exponents
                        _mask_when(k, w, last)
                _stage(k, target, body)
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


# ---- Fused elementwise: straight-line SFPU code over broadcast inputs ----
#
# What a compiler makes of a linalg.generic body: each output tile is computed in Dst
# from the input tiles by a short program of SFPU ops. An input is a full tensor of
# the output's shape, or a row (1, W), a column (H, 1) or a scalar repeated in the
# tile (loaded as 0 + b with add_tiles_bcast against a zero tile), and its outer
# (batch) dimensions are the output's or all 1.

CB_ZERO, CB_FUSED_COLUMN_MASK, CB_FUSED_ROW_MASK = 8, 9, 10
MAX_FUSED_INPUTS = ADDRGEN_SLOTS  # inputs and mask tiles, one address generator each


@dataclasses.dataclass(frozen=True)
class FusedInput:
    data_format: DataFormat
    broadcast: Broadcast = Broadcast.NONE  # within the tile grid: ROW = a (1, W) row, COL = an (H, 1) column
    batch_broadcast: bool = False  # one batch serves every batch of the output


# Fused code: a tuple of instructions, each defining the next value (value i is
# instruction i); the last value is the result.
#   ("input", i)            input i's tile
#   ("constant", x)         a tile of x
#   ("unary", op, param, v) SfpuOp op (< SfpuOp.ADD) of value v
#   ("binary", op, v, w)    SfpuOp op (>= SfpuOp.ADD) of values v and w
# Operand order may be swapped (to work in place on the dying operand) only where that
# is exact bit for bit: not for max/min, which keep the first operand on ties (+0 vs -0).
_COMMUTATIVE = {SfpuOp.ADD, SfpuOp.MUL}


def _allocate_fused(k: KernelBuilder, code, inputs, capacity: int) -> int:
    """Emits `code` into Dst tiles; returns the tile holding the result."""
    last_use = {}
    for i, ins in enumerate(code):
        for v in ins[3:] if ins[0] == "unary" else ins[2:] if ins[0] == "binary" else ():
            last_use[v] = i
    last_use[len(code) - 1] = len(code)
    free = list(range(capacity))
    where = {}

    def take(what):
        if not free:
            raise HalError(StatusCode.UNIMPLEMENTED, f"fused elementwise code needs more than {capacity} Dst tiles "
                                                     f"at {what}; split the computation")
        return free.pop(0)

    def writable(v, i):
        """v's tile if this is v's last use, else a copy of it in a fresh tile."""
        if last_use[v] == i:
            return where[v]
        tile = take(code[i])
        k.fill_tile(tile, -0.0)  # Dst has no move: -0 + v is v exactly, -0 included
        k.sfpu_binary(SfpuOp.ADD, tile, where[v])
        return tile

    for i, ins in enumerate(code):
        kind = ins[0]
        if kind == "input":
            tile, source = take(ins), inputs[ins[1]]
            if source.broadcast is Broadcast.NONE:
                k.copy_tile(ins[1], 0, tile)
            else:
                k.add_tiles(CB_ZERO, ins[1], 0, 0, tile, int(source.broadcast))
        elif kind == "constant":
            tile = take(ins)
            k.fill_tile(tile, ins[1])
        elif kind == "unary":
            tile = writable(ins[3], i)
            k.sfpu_unary(ins[1], tile, ins[2])
        else:
            op, a, b = ins[1], ins[2], ins[3]
            if last_use[a] != i and last_use[b] == i and op in _COMMUTATIVE and a != b:
                a, b = b, a
            tile = writable(a, i)
            k.sfpu_binary(op, tile, where[b])
            if last_use[b] == i and where[b] != tile and b != a:
                free.insert(0, where[b])
        where[i] = tile
        for v, use in last_use.items():  # values whose last use was this instruction, other than the result
            if use == i and where.get(v) not in (None, tile) and where[v] not in free:
                free.insert(0, where[v])
    return where[len(code) - 1]


def eltwise_fused(name: str, inputs: tuple[FusedInput, ...], code: tuple, out: DataFormat,
                  mask_columns: bool = False, mask_rows: bool = False, fp32_dest_acc_en: bool = False) -> Export:
    """out = code(inputs) tile by tile. Bindings (inputs..., [column mask], [row mask],
    out); push constants: T tiles of out, Ht and Wt of out's tile grid per batch.
    `mask_columns` / `mask_rows` zero the padding of out's last tile column / row
    (mask tiles as in `reduce`), so that padding stays zero for a later matmul."""
    masks = [cb for cb, wanted in ((CB_FUSED_COLUMN_MASK, mask_columns), (CB_FUSED_ROW_MASK, mask_rows)) if wanted]
    if not 1 <= len(inputs) <= MAX_FUSED_INPUTS - len(masks):
        raise HalError(StatusCode.UNIMPLEMENTED, f"a fused elementwise kernel reads 1 to {MAX_FUSED_INPUTS} tensors "
                                                 f"(one address generator each), here {len(inputs)} inputs and "
                                                 f"{len(masks)} padding masks")

    r = KernelBuilder("reader")
    first, end = _tile_range(r)
    ptr, page, scratch = r.reg("ptr"), r.reg("page"), r.reg("s")
    ht, wt = r.reg("Ht"), r.reg("Wt")
    r.emit(Op.CONSTANT, ht, 1)
    r.emit(Op.CONSTANT, wt, 2)
    _address_generators(r, [i.data_format for i in inputs] + [DataFormat.bfloat16] * len(masks))
    for slot, cb in enumerate(masks, len(inputs)):
        _read_tile(r, slot, cb, 0, ptr)
    row, column, batch = r.reg("row"), r.reg("column"), r.reg("batch")
    with r.loop_range(first, end, "t") as t:
        r.emit(Op.MOD, column, t, wt)
        r.emit(Op.DIV, batch, t, wt)
        r.emit(Op.MOD, row, batch, ht)
        r.emit(Op.DIV, batch, batch, ht)
        for slot, source in enumerate(inputs):
            # page = batch * (its Ht * Wt) + row * (its Wt) + column, each 0 when broadcast
            has_rows = source.broadcast in (Broadcast.NONE, Broadcast.COL)
            has_columns = source.broadcast in (Broadcast.NONE, Broadcast.ROW)
            r.emit(Op.LI, page, 0)
            if not source.batch_broadcast:
                r.emit(Op.MOV, page, batch)
                if has_rows:
                    r.emit(Op.MUL, page, page, ht)
                if has_columns:
                    r.emit(Op.MUL, page, page, wt)
            if has_rows:
                r.emit(Op.MOV, scratch, row)
                if has_columns:
                    r.emit(Op.MUL, scratch, scratch, wt)
                r.emit(Op.ADD, page, page, scratch)
            if has_columns:
                r.emit(Op.ADD, page, page, column)
            _read_tile(r, slot, slot, page, ptr)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder(name)
    capacity = KernelConfig(fp32_dest_acc_en=fp32_dest_acc_en).dst_capacity()
    first, end = _tile_range(c)
    broadcasts = any(i.broadcast is not Broadcast.NONE for i in inputs)
    if broadcasts:
        _stage(c, CB_ZERO, lambda: c.fill_tile(0, 0.0))
        c.cb_wait_front(CB_ZERO, 1)
    for cb in masks:
        c.cb_wait_front(cb, 1)
    if masks:
        ht, wt = c.reg("Ht"), c.reg("Wt")
        c.emit(Op.CONSTANT, ht, 1)
        c.emit(Op.CONSTANT, wt, 2)
        last_row, last_column = _last_index(c, ht), _last_index(c, wt)
        row, column = c.reg("row"), c.reg("column")
    with c.loop_range(first, end, "t") as t:
        for cb in range(len(inputs)):
            c.cb_wait_front(cb, 1)
        c.tile_regs_acquire()
        result = _allocate_fused(c, code, inputs, capacity)
        spare = 1 if result == 0 else 0
        for cb in masks:  # zero out's padding in its last tile column and row
            if cb == CB_FUSED_COLUMN_MASK:
                index, last = column, last_column
                c.emit(Op.MOD, index, t, wt)
            else:
                index, last = row, last_row
                c.emit(Op.DIV, index, t, wt)
                c.emit(Op.MOD, index, index, ht)
            skip = c.label("unmasked")
            c.emit(Op.BNE, index, last, skip)
            c.copy_tile(cb, 0, spare)
            c.sfpu_binary(SfpuOp.MASK, result, spare)
            c.place(skip)
        c.tile_regs_commit()
        c.cb_reserve_back(CB_OUT, 1)
        c.tile_regs_wait()
        c.pack_tile(result, CB_OUT, 0)
        c.tile_regs_release()
        c.cb_push_back(CB_OUT, 1)
        for cb in range(len(inputs)):
            c.cb_pop_front(cb, 1)
    compute = c.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en)
    writer, writer_args = _writer(out, len(inputs) + len(masks))
    extra = {cb: (DataFormat.bfloat16, 1) for cb in masks}
    if broadcasts:
        extra[CB_ZERO] = (_intermediate(fp32_dest_acc_en), 1)
    cbs = _circular_buffers([(cb, i.data_format) for cb, i in enumerate(inputs)], out, extra)
    program = Program(cbs, (reader, compute, writer), (_buffer_args(range(len(inputs) + len(masks))), (), writer_args))
    return Export(name, 3, len(inputs) + len(masks) + 1, (1, 1, 1), program)
