"""Fused elementwise: straight-line SFPU code over broadcast inputs.

What a compiler makes of a linalg.generic body: each output tile is computed in Dst
from the input tiles by a short program of SFPU ops. An input is a full tensor of
the output's shape, or a row (1, W), a column (H, 1) or a scalar repeated in the
tile (unpacked whole into Dst with unary_bcast: the FPU's add_tiles_bcast against a
zero tile would round a float32 operand to its Src format, so that a value broadcast
in one kernel and read whole in another would differ), and its outer (batch)
dimensions are the output's or all 1. Values are float32, or int32 (integer_values), which need a 32-bit Dst.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hal.status import HalError, StatusCode
from tt_hal.kernels.common import (
    CB_OUT,
    PAGES,
    buffer_args,
    circular_buffers,
    last_index,
    mask_when,
    tile_grid,
    tile_page_generator,
    tile_range,
    writer_unary,
)
from tt_hal.kernels.rowmajor import (
    BLOCK_TILES,
    CB_TILES_OUT,
    OFFSET_CONSTANTS,
    ROW_TILE_CONSTANTS,
    block_cbs,
    block_compute,
    block_tiles,
    block_window,
    convert_block,
    library_export,
    matrix,
    read_rows,
    read_tiles,
    row_major_tensor,
    row_tile_source,
    row_tile_writer,
    row_writer,
    tensor_args,
    tile_sources,
)
from tt_hal.target.isa import (
    ADDRGEN_SLOTS,
    INTEGER_RESULTS,
    NUM_CIRCULAR_BUFFERS,
    Bits,
    Broadcast,
    Op,
    Processor,
    SfpuOp,
)
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import CircularBufferConfig, Export, KernelConfig, Program, Stage

MAX_FUSED_INPUTS = ADDRGEN_SLOTS  # inputs and mask tiles, one address generator each
# The inputs of the kernels a compiler cuts fused code into (fits), as many as their readers
# have the registers to read as row tiles (tests check both), so that none needs a tilize
# launch before it for want of a register: all of eltwise_fused's with both masks; and of
# a kernel that may read a loaded binding so, all of eltwise_fused_untilized's (which a
# dispatch's last kernel may become).
FUSED_INPUTS = 10
FUSED_ROW_TILE_INPUTS = 6
# A fused kernel's circular buffers: input i's tiles (a row-major input's blocks of rows)
# in CB i, as its address generator; CB_OUT; and in the CBs above CB_OUT the padding
# masks, or a row-major input's tiles (eltwise_fused_untilized, which also uses CB_TILES_OUT).
_ABOVE_OUT = tuple(cb for cb in range(CB_OUT + 1, NUM_CIRCULAR_BUFFERS) if cb != CB_TILES_OUT)
CB_FUSED_COLUMN_MASK, CB_FUSED_ROW_MASK = _ABOVE_OUT[:2]
# eltwise_fused_untilized's row-major inputs, each two blocks of rows and a block of tiles
# in L1 (96 KiB of float32): at most as many as when a fused kernel read 8 inputs.
MAX_ROW_INPUTS = 8


@dataclasses.dataclass(frozen=True)
class FusedInput:
    """An input tensor of eltwise_fused: its format and how it repeats over the output."""
    data_format: DataFormat
    broadcast: Broadcast = Broadcast.NONE  # within the tile grid: ROW = a (1, W) row, COL = an (H, 1) column
    batch_broadcast: bool = False  # one batch serves every batch of the output


# ---- Fused code ----
#
# A tuple of instructions, each defining the next value (value i is instruction i)
# from the values it reads (`operands`); the last value is the result. The compiler's
# lowering builds it from a linalg.generic body; emit_code emits it into Dst.

@dataclasses.dataclass(frozen=True)
class Input:
    """Input `index`'s tile: copy_tile, or unary_bcast if it is broadcast."""
    index: int
    operands = ()


@dataclasses.dataclass(frozen=True)
class Constant:
    """A tile of `value` (fill_tile): a float32, or an int32 if `integer`."""
    value: float | int
    integer: bool = False
    operands = ()


@dataclasses.dataclass(frozen=True)
class Scalar:
    """A tile of the kernel's scalar `index`: push constant FUSED_CONSTANTS + index of the
    program (a value known when the dispatch runs), its 32 bits an int32 if `integer`,
    else a float32's."""
    index: int
    integer: bool = True
    operands = ()


@dataclasses.dataclass(frozen=True)
class Unary:
    """SfpuOp `op` (< SfpuOp.ADD) of value `operand`, with its `parameter`."""
    op: SfpuOp
    operand: int
    parameter: float = 0.0

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.operand,)


@dataclasses.dataclass(frozen=True)
class Binary:
    """SfpuOp `op` (>= SfpuOp.ADD) of values `a` and `b`."""
    op: SfpuOp
    a: int
    b: int

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.a, self.b)


@dataclasses.dataclass(frozen=True)
class Ternary:
    """SfpuOp `op` (WHERE) of values `c`, `a` and `b`: a where c != 0, else b."""
    op: SfpuOp
    c: int
    a: int
    b: int

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.c, self.a, self.b)


Instruction = Input | Constant | Scalar | Unary | Binary | Ternary
FUSED_CONSTANTS = 3  # push constants T, Ht, Wt come first


def is_integer(instruction: Instruction, integer: Sequence[bool], inputs: Sequence[FusedInput]) -> bool:
    """Is `instruction`'s value an int32 in Dst (else a float32), given which values before
    it are (`integer`)? Inputs of integer formats, integer constants and the results of
    integer ops are; a WHERE or MASK moves values of its operand's kind."""
    if isinstance(instruction, Input):
        return inputs[instruction.index].data_format.is_integer
    if isinstance(instruction, (Constant, Scalar)):
        return instruction.integer
    if isinstance(instruction, Ternary) or (isinstance(instruction, Binary) and instruction.op == SfpuOp.MASK):
        return integer[instruction.a]
    return instruction.op in INTEGER_RESULTS


def integer_values(code: Sequence[Instruction], inputs: Sequence[FusedInput]) -> list[bool]:
    """Which values of `code` are int32 in Dst (is_integer of each)."""
    integer: list[bool] = []
    for instruction in code:
        integer.append(is_integer(instruction, integer, inputs))
    return integer


# Operand order may be swapped (to work in place on the dying operand) only where that
# is exact bit for bit: not for max/min, which keep the first operand on ties (+0 vs -0).
_COMMUTATIVE = {SfpuOp.ADD, SfpuOp.MUL}


def renumbered(instruction: Instruction, number: dict[int, int]) -> Instruction:
    """`instruction` reading value number[v] where it read v."""
    if isinstance(instruction, Unary):
        return dataclasses.replace(instruction, operand=number[instruction.operand])
    if isinstance(instruction, Binary):
        return dataclasses.replace(instruction, a=number[instruction.a], b=number[instruction.b])
    if isinstance(instruction, Ternary):
        return dataclasses.replace(instruction, c=number[instruction.c], a=number[instruction.a],
                                   b=number[instruction.b])
    return instruction


def scheduled(code: Sequence[Instruction]) -> tuple[Instruction, ...]:
    """`code` reordered to need fewer Dst tiles at once: each value computed when first
    needed, from the result down, the operand that needs more tiles (its Sethi-Ullman
    number, counted as if no value were shared) first, so that fewer values wait in Dst
    meanwhile. The same ops on the same values (each is a pure function of its
    operands), bit for bit; values the result does not need are left out."""
    need: list[int] = []
    for instruction in code:
        needs = sorted((need[u] for u in dict.fromkeys(instruction.operands)), reverse=True)
        need.append(max([n + i for i, n in enumerate(needs)] + [1]))
    order, seen, stack = [], set(), [(len(code) - 1, False)]
    while stack:  # depth-first, operands before the value (iterative: chains run hundreds deep)
        v, ready = stack.pop()
        if ready:
            order.append(v)
        elif v not in seen:
            seen.add(v)
            stack.append((v, True))
            operands = sorted(dict.fromkeys(code[v].operands), key=lambda u: need[u], reverse=True)
            stack.extend((u, False) for u in reversed(operands) if u not in seen)
    number = {v: i for i, v in enumerate(order)}
    return tuple(renumbered(code[v], number) for v in order)


def emit_code(k: KernelBuilder, code: tuple[Instruction, ...], inputs, capacity: int, sources=None,
              scalars: int = FUSED_CONSTANTS) -> int:
    """Emits `code` into Dst tiles; returns the tile holding the result. Input i is tile
    sources[i][1] (an index or a register) of CB sources[i][0] (default: the front
    tile of CB i); Scalar j is push constant `scalars` + j. Code whose values do not fit
    in `capacity` tiles in the order it is written is emitted `scheduled`."""
    return _emit_code(k, _in_dst_order(code, inputs, capacity, sources, scalars), inputs, capacity, sources,
                      scalars)


def _in_dst_order(code: Sequence[Instruction], inputs, capacity: int, sources=None,
                  scalars: int = FUSED_CONSTANTS) -> Sequence[Instruction]:
    """`code` itself if it fits in `capacity` Dst tiles as written (a dry run), else
    `scheduled(code)` (which may not fit either)."""
    if len(code) > 1:
        try:
            _emit_code(KernelBuilder("fits"), code, inputs, capacity, sources, scalars)
        except HalError as error:
            if error.code != StatusCode.UNIMPLEMENTED:
                raise
            return scheduled(code)
    return code


def _emit_code(k: KernelBuilder, code: Sequence[Instruction], inputs, capacity: int, sources, scalars: int) -> int:
    last_use = {}
    for i, ins in enumerate(code):
        for v in ins.operands:
            last_use[v] = i
    last_use[len(code) - 1] = len(code)
    free = list(range(capacity))
    where = {}
    integer = integer_values(code, inputs)

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
        # Dst has no move: -0 + v is v exactly, -0 included; 0 + v for an integer
        k.fill_tile(tile, Bits(0) if integer[v] else -0.0)
        k.sfpu_binary(SfpuOp.ADD_INT if integer[v] else SfpuOp.ADD, tile, where[v])
        return tile

    for i, ins in enumerate(code):
        if isinstance(ins, Input):
            tile, source = take(ins), inputs[ins.index]
            cb, index = (ins.index, 0) if sources is None else sources[ins.index]
            if source.broadcast is Broadcast.NONE:
                k.copy_tile(cb, index, tile)
            else:  # unpacked to Dst whole: the FPU would round it
                k.unary_bcast(cb, index, tile, int(source.broadcast))
        elif isinstance(ins, Constant):
            tile = take(ins)
            k.fill_tile(tile, Bits(ins.value) if ins.integer else ins.value)
        elif isinstance(ins, Scalar):
            tile, value = take(ins), k.reg("scalar")
            k.emit(Op.CONSTANT, value, scalars + ins.index)
            k.fill_tile_bits(tile, value)
            k.release(value)
        elif isinstance(ins, Unary):
            tile = writable(ins.operand, i)
            k.sfpu_unary(ins.op, tile, ins.parameter)
        elif isinstance(ins, Ternary):  # in place on the condition, which it reads element by element first
            tile = writable(ins.c, i)
            k.sfpu_ternary(ins.op, tile, where[ins.a], where[ins.b])
        else:
            op, a, b = ins.op, ins.a, ins.b
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


def dst_capacity(fp32_dest_acc_en: bool) -> int:
    """Dst tiles a fused kernel's body may use. Full sync: one tile is computed and packed
    per acquire, so nothing overlaps that half of Dst would buy, and the whole of Dst holds
    the body's values (fewer splits of a long body into kernels, each a launch and a round
    trip of its values through L1)."""
    return KernelConfig(fp32_dest_acc_en=fp32_dest_acc_en, dst_full_sync_en=True).dst_capacity()


def fits(code: tuple[Instruction, ...], inputs: tuple[FusedInput, ...], fp32_dest_acc_en: bool) -> bool:
    """Does `code` fit in Dst (eltwise_fused would build it), its inputs in FUSED_INPUTS?"""
    if len(inputs) > FUSED_INPUTS:
        return False
    capacity = dst_capacity(fp32_dest_acc_en)
    try:
        ordered = _in_dst_order(code, inputs, capacity)  # code itself: emitted once, in that dry run
        if ordered is not code:
            _emit_code(KernelBuilder("fits"), ordered, inputs, capacity, None, FUSED_CONSTANTS)
    except HalError as error:
        if error.code != StatusCode.UNIMPLEMENTED:
            raise
        return False
    return True


def scalar_count(code: Sequence[Instruction]) -> int:
    """The push constants the code's Scalar instructions read."""
    return max((ins.index + 1 for ins in code if isinstance(ins, Scalar)), default=0)


def read_input_tiles(r: KernelBuilder, inputs: Sequence[FusedInput], bindings, t, ht, wt) -> None:
    """Reads each input's tile for output tile `t` (a register) of an output of Ht x Wt
    tiles per batch into the CB numbered as its generator slot (bindings: sources of
    rowmajor.tile_sources): tile (batch, row, column) of the output reads page
    batch * (its Ht * Wt) + row * (its Wt) + column of an input, each term 0 where the
    input is broadcast."""
    page, scratch, ptr = r.reg("page"), r.reg("s"), r.reg("ptr")
    row, column, batch = r.reg("row"), r.reg("column"), r.reg("batch")
    r.emit(Op.MOD, column, t, wt)
    r.emit(Op.DIV, batch, t, wt)
    r.emit(Op.MOD, row, batch, ht)
    r.emit(Op.DIV, batch, batch, ht)
    for source, pages in zip(inputs, bindings):
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
        read_tiles(r, pages, page, 1, pages.slot, 1, ptr)
    r.release(page, scratch, ptr, row, column, batch)


def eltwise_fused(name: str, inputs: tuple[FusedInput, ...], code: tuple[Instruction, ...], out: DataFormat,
                  mask_columns: bool = False, mask_rows: bool = False, fp32_dest_acc_en: bool = False,
                  rows: tuple[bool, ...] = (), row_output: bool = False) -> Export:
    """out = code(inputs) tile by tile. Bindings (inputs..., [column mask], [row mask],
    out); push constants: T tiles of out, Ht and Wt of out's tile grid per batch, then
    the values of the code's Scalar instructions, then ROW_TILE_CONSTANTS for each input
    that `rows` marks: a row-major binding the reader reads as tiles (rowmajor.read_row_tiles),
    and with `row_output` ROW_TILE_CONSTANTS for out, written row-major (rowmajor.write_row_tiles).
    `mask_columns` / `mask_rows` zero the padding of out's last tile column / row
    (mask tiles as in `reduce`), so that padding stays zero for a later matmul."""
    masks = [cb for cb, wanted in ((CB_FUSED_COLUMN_MASK, mask_columns), (CB_FUSED_ROW_MASK, mask_rows)) if wanted]
    if not fp32_dest_acc_en and any(integer_values(code, inputs)):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{name}: integer values (int32 in Dst) need a 32-bit Dst: "
                                                    f"build it with fp32_dest_acc_en")
    if len(inputs) + len(masks) > MAX_FUSED_INPUTS:
        raise HalError(StatusCode.UNIMPLEMENTED, f"a fused elementwise kernel reads at most {MAX_FUSED_INPUTS} "
                                                 f"tensors (one address generator each), here {len(inputs)} inputs "
                                                 f"and {len(masks)} padding masks")

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    ht, wt = tile_grid(r)
    rows = rows or (False,) * len(inputs)
    sources, reader_args = tile_sources(r, [i.data_format for i in inputs] + [DataFormat.bfloat16] * len(masks),
                                        rows, FUSED_CONSTANTS + scalar_count(code))
    ptr = r.reg("ptr")
    for pages, cb in zip(sources[len(inputs):], masks):
        read_tiles(r, pages, 0, 1, cb, 1, ptr)
    r.release(ptr)
    with r.loop_range(first, end, "t") as t:
        read_input_tiles(r, inputs, sources[:len(inputs)], t, ht, wt)
    reader = r.build(Processor.RISCV_1)

    c = KernelBuilder(name)
    capacity = dst_capacity(fp32_dest_acc_en)
    first, end = tile_range(c)
    for cb in masks:
        c.cb_wait_front(cb, 1)
    if masks:
        ht, wt = tile_grid(c)
        last_row, last_column = last_index(c, ht), last_index(c, wt)
        row, column = c.reg("row"), c.reg("column")
    with c.loop_range(first, end, "t") as t:
        for cb in range(len(inputs)):
            c.cb_wait_front(cb, 1)
        c.tile_regs_acquire()
        result = emit_code(c, code, inputs, capacity)
        spare = 1 if result == 0 else 0
        for cb in masks:  # zero out's padding in its last tile column and row
            if cb == CB_FUSED_COLUMN_MASK:
                index, last = column, last_column
                c.emit(Op.MOD, index, t, wt)
            else:
                index, last = row, last_row
                c.emit(Op.DIV, index, t, wt)
                c.emit(Op.MOD, index, index, ht)
            mask_when(c, index, last, cb, result, spare)
        c.tile_regs_commit()
        c.cb_reserve_back(CB_OUT, 1)
        c.tile_regs_wait()
        c.pack_tile(result, CB_OUT, 0)
        c.tile_regs_release()
        c.cb_push_back(CB_OUT, 1)
        for cb in range(len(inputs)):
            c.cb_pop_front(cb, 1)
    compute = c.build(Processor.COMPUTE, fp32_dest_acc_en=fp32_dest_acc_en, dst_full_sync_en=True)
    row_constants = FUSED_CONSTANTS + scalar_count(code) + ROW_TILE_CONSTANTS * sum(rows)
    writer, writer_args = (row_tile_writer(out, len(inputs) + len(masks), row_constants) if row_output
                           else writer_unary(out, len(inputs) + len(masks)))
    extra = {cb: (DataFormat.bfloat16, 1) for cb in masks}
    cbs = circular_buffers([(cb, i.data_format) for cb, i in enumerate(inputs)], out, extra)
    program = Program(cbs, (reader, compute, writer), (reader_args, (), writer_args))
    constants = row_constants + ROW_TILE_CONSTANTS * row_output
    return Export(name, constants, len(inputs) + len(masks) + 1, (1, 1, 1), (Stage(program),))


def eltwise_fused_untilized(inputs: tuple[FusedInput, ...], rows: tuple[bool, ...],
                            code: tuple[Instruction, ...], out: DataFormat, fp32_dest_acc_en: bool,
                            row_tiles: tuple[bool, ...] = ()) -> Export:
    """out = code(inputs) (tt_hal.kernels.fused's code) written row-major: per block of the
    output, its tiles computed and untilized in compute, its rows written; the last
    kernel of a dispatch, without the untilize launch after it nor the round trip of its
    result through scratch tiles. Input i is tile pages, broadcast as in fused's kernel,
    or where rows[i] a row-major tensor of the output's shape (unbroadcast), its block
    read as rows and tilized in compute: without a tilize launch before it either; or
    where row_tiles[i] a row-major tensor whose tiles the reader reads as tile pages
    (rowmajor.read_row_tiles; broadcast as tile pages are). Bindings (inputs..., out);
    push constants as untilize's, with the byte offsets of the row-major inputs and then
    the output's; then the code's scalars; then ROW_TILE_CONSTANTS per row_tiles input."""
    row_inputs = [i for i, is_rows in enumerate(rows) if is_rows]
    if len(inputs) > MAX_FUSED_INPUTS or len(row_inputs) > MAX_ROW_INPUTS:
        raise HalError(StatusCode.UNIMPLEMENTED, f"a fused elementwise kernel reads at most {MAX_FUSED_INPUTS} "
                                                 f"tensors, {MAX_ROW_INPUTS} of them row-major; here "
                                                 f"{len(inputs)}, {len(row_inputs)} row-major")
    tile_inputs = [i for i, is_rows in enumerate(rows) if not is_rows]
    rows_cb, tiles_cb = {i: i for i in row_inputs}, {i: _ABOVE_OUT[k] for k, i in enumerate(row_inputs)}

    r = KernelBuilder("reader")
    first, end = tile_range(r)
    m = matrix(r)
    if not row_inputs:  # tiles alone: block_tiles and read_input_tiles need only the tile grid
        r.release(m.rows, m.columns, m.row_stride, m.batch_stride)
    row_tiles = row_tiles or (False,) * len(inputs)
    arg, tensors, pages, reader_args = 0, {}, {}, ()
    scalars = OFFSET_CONSTANTS + len(row_inputs) + 1
    constant = scalars + scalar_count(code)  # the first row_tiles input's
    for i, (source, is_rows, is_row_tiles) in enumerate(zip(inputs, rows, row_tiles)):  # slot i, CB i for tiles
        if is_row_tiles:
            pages[i], constant = row_tile_source(r, i, arg, source.data_format, constant), constant + ROW_TILE_CONSTANTS
            slot_args = tensor_args([i])
        elif is_rows:
            tensors[i] = row_major_tensor(r, i, arg, source.data_format, OFFSET_CONSTANTS + len(tensors))
            slot_args = tensor_args([i])
        else:
            pages[i] = tile_page_generator(r, i, arg, source.data_format)
            slot_args = buffer_args([i])
        arg, reader_args = arg + len(slot_args), reader_args + slot_args
    t, ptr = r.reg("t"), r.reg("ptr")
    with r.loop_range(first, end, "block") as block:
        if row_inputs:
            window = block_window(r, m, block)
            for i in row_inputs:
                read_rows(r, tensors[i], m, window, rows_cb[i], ptr)
            window.release(r)
        if tile_inputs:
            tiles, first_tile = block_tiles(r, m, block)
            with r.loop(tiles, "tile") as j:
                r.emit(Op.ADD, t, first_tile, j)
                read_input_tiles(r, [inputs[i] for i in tile_inputs], [pages[i] for i in tile_inputs], t,
                                       m.tile_rows, m.tiles_per_row)
            r.release(tiles, first_tile)
    reader = r.build(Processor.RISCV_1), reader_args

    capacity = dst_capacity(fp32_dest_acc_en)

    def body(k, w):
        for i in row_inputs:
            convert_block(k, Op.TILIZE_BLOCK, rows_cb[i], tiles_cb[i], w)
            k.cb_wait_front(tiles_cb[i], BLOCK_TILES)
        k.cb_reserve_back(CB_TILES_OUT, BLOCK_TILES)
        with k.loop(w, "tile") as j:
            for i in tile_inputs:
                k.cb_wait_front(i, 1)
            k.tile_regs_acquire()
            sources = [(tiles_cb[i], j) if is_rows else (i, 0) for i, is_rows in enumerate(rows)]
            result = emit_code(k, code, inputs, capacity, sources, scalars)
            k.tile_regs_commit()
            k.tile_regs_wait()
            k.pack_tile(result, CB_TILES_OUT, j)
            k.tile_regs_release()
            for i in tile_inputs:
                k.cb_pop_front(i, 1)
        k.cb_push_back(CB_TILES_OUT, BLOCK_TILES)
        for i in row_inputs:
            k.cb_pop_front(tiles_cb[i], BLOCK_TILES)
        convert_block(k, Op.UNTILIZE_BLOCK, CB_TILES_OUT, CB_OUT, w)

    compute = block_compute("eltwise_fused_untilized", body, dst_full_sync_en=True, fp32_dest_acc_en=fp32_dest_acc_en)
    kernels = (reader, compute, row_writer(out, len(inputs), True, len(row_inputs)))
    cbs = [CircularBufferConfig.of_tiles(i, inputs[i].data_format, PAGES) for i in tile_inputs]
    cbs += block_cbs([(rows_cb[i], inputs[i].data_format) for i in row_inputs] + [(CB_OUT, out)],
                     [(tiles_cb[i], inputs[i].data_format) for i in row_inputs] + [(CB_TILES_OUT, out)])
    export = library_export("eltwise_fused_untilized", kernels, cbs, len(row_inputs) + 1, len(inputs) + 1, True)
    return dataclasses.replace(export, constant_count=constant)
