"""Row-major tensors in IREE's buffers, tilized and untilized on the chip.

IREE binds byte ranges of row-major tensors at any (typically 16- or 64-byte aligned)
byte offset of its buffers, and packs other tensors right next to them. Compute needs
tiles, so these programs convert in compute, as TT-Metal's tilize and untilize ops do:

- A tensor of 1-, 2- or 4-byte elements (uint8, bfloat16, float32, int32, ...) is a batch of
  (rows, columns) matrices and starts at byte `base` of its binding's buffer: the
  binding's byte offset (BINDING_BYTE_OFFSET) plus, optionally, a push constant, as
  IREE passes some binding offsets. Its rows are `row stride` elements apart and its
  matrices `batch stride`: one after another for a whole tensor, further apart for a
  window of a larger one (a slice IREE loads, or the part of an output a dispatch
  stores, as in a concatenation).
- Tile t is the 32 x 32 block at row 32 (r // Wt), column 32 (r % Wt) of matrix
  t // (Ht Wt), r = t % (Ht Wt), Ht = ceil(rows / 32), Wt = ceil(columns / 32): the
  TILE layout of the batch (docs/layouts.md), each matrix padded on its own.
  Elementwise programs fold the outer dimensions into the rows instead (one matrix):
  then a tile can span two of them, which is right for them and pads less.
- The work unit is a block: up to BLOCK_TILES tiles side by side in one tile row of
  one matrix (a tile row of Wt tiles is ceil(Wt / BLOCK_TILES) blocks, the last one
  narrower). Block b is tile row b // nb, tiles from column (b % nb) BLOCK_TILES,
  nb = ceil(Wt / BLOCK_TILES).
- Row side (`read_rows`, `write_rows`, as TT-Metal's stick readers and writers): a
  block of w tiles is 32 rows of w * 32 elements, row after row over w tile-sized
  pages of a circular buffer. The reader zeroes the pages of a block that sticks out
  of its matrix (L1_FILL), then reads each row's elements inside the matrix
  (NOC_READ_ROWS: the block's rows in one instruction, one NoC read per page of the
  buffer a row touches; a transfer stays within a page: BINDING_PAGE_SIZE; IREE's raw
  buffers have 4096-byte pages, or one page when smaller). The writer writes those
  bytes back and nothing else: no byte outside the window's rows x columns elements.
- Compute: TILIZE_BLOCK (tilize_block) turns the block's pages into w tiles,
  UNTILIZE_BLOCK (pack_untilize_block) the other way; tile pages go to and come from
  their binding through the library's page readers and writers. fused.eltwise_fused_untilized
  puts a fused elementwise body between the two: a dispatch's last kernel writing rows.
- Every circular buffer moves whole blocks: each reservation, push, wait and pop is
  BLOCK_TILES pages, of which a narrower block uses the first w, so that no block
  wraps around the end of a buffer (buffers of two blocks, or one between compute's
  own stages).

The programs take push constants: the number of blocks (which workgroups split as
every library program splits its tiles), rows and columns, the row and batch strides,
the segment and its stride, and with `offsets` one more byte offset per row-major
binding, in binding order. A segment is a run of a row's columns contiguous in the
binding: a row of a window can be several runs `segment stride` elements apart (a
(C, H*W) tile matrix stored into a padded (C, H + 2, W + 2) window: each of its rows is H
runs of W); a whole row is one run when the segment is the row's columns. Their circular buffers have
the tensor's data format (float32 tiles meet the unpacker's tf32 numerics in compute;
tilize and untilize move every bit).

Not yet for a card: TT-Metal's NoC wants DRAM and L1 addresses congruent modulo the
DRAM alignment (32 bytes on Wormhole, 64 on Blackhole), which rows at arbitrary
element offsets are not; the simulator does not check NoC alignment
(docs/fidelity.md). A hardware reader would read aligned spans into scratch L1 and
copy from there.
"""

from __future__ import annotations

import dataclasses

from hal.status import HalError, StatusCode
from tt_hal.kernels.common import (
    CB_IN0,
    CB_IN1,
    CB_OUT,
    address_generators,
    buffer_args,
    noc_page,
    read_strip,
    read_tile,
    strips,
    tile_page_generator,
    tile_range,
    transfer_pages,
)
from tt_hal.target.isa import MathFidelity, Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder, Reg
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, Export, Program, RuntimeArg, Stage
from tt_hal.target.sizes import TILE, ceil_div

BLOCK_TILES = 8  # tiles per block: what pack_untilize_block holds in a full-sync float32 Dst
# Push constants before the optional byte offsets: blocks, rows, columns, the elements
# from one row to the next and from one matrix to the next in the binding, the columns of
# a segment (a run contiguous in the binding) and the elements from one to the next.
# The rows of a matrix come in groups of ROW_GROUP, ROW_GROUP_STRIDE elements apart (a
# (H*W, C) matrix of a padded (H + 2, W + 2, C) tensor: groups of W rows, (W + 2) C apart).
ROWS, COLUMNS, ROW_STRIDE, BATCH_STRIDE, SEGMENT, SEGMENT_STRIDE, ROW_GROUP, ROW_GROUP_STRIDE = range(1, 9)
OFFSET_CONSTANTS = 9
BLOCK_CONFIG = dict(fp32_dest_acc_en=True, dst_full_sync_en=True)  # Dst of 8 float32 tiles: every bit of a block
CB_TILES_A, CB_TILES_B, CB_TILES_OUT = 24, 25, 26  # tiles between tilize and untilize in compute
_ARGS = (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM, ArgKind.BINDING_PAGE_SIZE, ArgKind.BINDING_BYTE_OFFSET)


def push_constants(rows: int, columns: int, offsets=(), batches: int = 1, row_stride: int | None = None,
                   batch_stride: int | None = None, segment: int | None = None,
                   segment_stride: int | None = None, row_group: int | None = None,
                   row_group_stride: int | None = None) -> list[int]:
    """The push constants of this module's programs for `batches` (rows, columns)
    matrices, with the extra byte offsets of the row-major bindings when the program
    takes them. The first, the blocks, is what workgroups split. A window of a larger
    row-major tensor has its rows `row_stride` elements apart (default: `columns`) and
    its matrices `batch_stride` (default: rows * row_stride); each row is runs of
    `segment` columns (default: all of them) `segment_stride` elements apart; its rows
    come in groups of `row_group` (default: all of them) `row_group_stride` elements
    apart."""
    blocks = batches * ceil_div(rows, TILE) * ceil_div(ceil_div(columns, TILE), BLOCK_TILES)
    row_stride = columns if row_stride is None else row_stride
    batch_stride = rows * row_stride if batch_stride is None else batch_stride
    segment = columns if segment is None else segment
    segment_stride = segment if segment_stride is None else segment_stride
    row_group = rows if row_group is None else row_group
    row_group_stride = row_group * row_stride if row_group_stride is None else row_group_stride
    return [blocks, rows, columns, row_stride, batch_stride, segment, segment_stride, row_group, row_group_stride,
            *offsets]


@dataclasses.dataclass(frozen=True)
class RowMajorTensor:
    """A row-major binding as a kernel addresses it: its address generator slot (which
    knows the buffer's pages), a register holding its first byte in the buffer, and the
    size of an element."""

    slot: int
    base: Reg
    element_size: int


@dataclasses.dataclass(frozen=True)
class Matrix:
    """Registers holding a matrix's rows and columns, its tile rows (Ht), tiles per row
    (Wt) and blocks per tile row (nb), and the elements from one row and one matrix to
    the next in the row-major binding."""

    rows: Reg
    columns: Reg
    tile_rows: Reg
    tiles_per_row: Reg
    blocks_per_row: Reg
    row_stride: Reg
    batch_stride: Reg


@dataclasses.dataclass(frozen=True)
class BlockWindow:
    """Registers of one block: its tiles (w), and its part inside the matrix: the
    index of its first element in the row-major binding, how many of its 32 rows and
    w * 32 columns hold data, the columns of its first run (the rest of the
    segment its first column is in) and, in a window of row groups, the rows of its
    first group (the rest of the group its first row is in; None: the rows are evenly
    spaced)."""

    tiles: Reg
    first: Reg
    height: Reg
    width: Reg
    run: Reg
    group: Reg | None = None

    def release(self, k: KernelBuilder) -> None:
        k.release(self.tiles, self.first, self.height, self.width, self.run,
                  *([self.group] if self.group is not None else []))


def tensor_args(bindings) -> tuple[RuntimeArg, ...]:
    """(address, is_dram, page size, byte offset) runtime args of each binding, for
    tensor_generators."""
    return tuple(RuntimeArg(kind, b) for b in bindings for kind in _ARGS)


def tensor_generators(k: KernelBuilder, formats, offsets: bool, first_offset: int = 0) -> list[RowMajorTensor]:
    """Slot i: row-major binding i from runtime args 4i..4i + 3 (tensor_args); with
    `offsets`, its base moves on by push constant OFFSET_CONSTANTS + first_offset + i."""
    return [row_major_tensor(k, slot, len(_ARGS) * slot, fmt,
                             OFFSET_CONSTANTS + first_offset + slot if offsets else None)
            for slot, fmt in enumerate(formats)]


def row_major_tensor(k: KernelBuilder, slot: int, arg: int, fmt: DataFormat, offset: int | None) -> RowMajorTensor:
    """Generator slot `slot`: the row-major binding whose tensor_args start at runtime arg
    `arg`, its base moved on by push constant `offset` (None: not)."""
    address, is_dram = k.arg(arg, f"in{slot}_addr"), k.arg(arg + 1, f"in{slot}_is_dram")
    page_size, base = k.arg(arg + 2, f"in{slot}_page_size"), k.arg(arg + 3, f"in{slot}_base")
    k.addrgen(slot, address, page_size, is_dram)
    k.release(address, is_dram, page_size)
    if offset is not None:
        extra = k.reg("offset")
        k.emit(Op.CONSTANT, extra, offset)
        k.emit(Op.ADD, base, base, extra)
        k.release(extra)
    return RowMajorTensor(slot, base, element_size(fmt))


def element_size(fmt: DataFormat) -> int:
    """Bytes per element of a format these kernels move: 1, 2 or 4."""
    if fmt.is_block_float or fmt.element_size not in (1, 2, 4):
        raise HalError(StatusCode.UNIMPLEMENTED, f"row-major tiles of {fmt.name}: the kernels move elements of "
                                                 f"1, 2 or 4 bytes")
    return fmt.element_size


def matrix(k: KernelBuilder) -> Matrix:
    """The matrix of push constants ROWS, COLUMNS, ROW_STRIDE and BATCH_STRIDE (its
    segments are read where they are used: block_window, transfer_rows)."""
    rows, columns, ht, wt, nb = k.reg("rows"), k.reg("columns"), k.reg("Ht"), k.reg("Wt"), k.reg("nb")
    row_stride, batch_stride = k.reg("row_stride"), k.reg("batch_stride")
    k.emit(Op.CONSTANT, rows, ROWS)
    k.emit(Op.CONSTANT, columns, COLUMNS)
    k.emit(Op.CONSTANT, row_stride, ROW_STRIDE)
    k.emit(Op.CONSTANT, batch_stride, BATCH_STRIDE)
    tile, block = k.const(TILE), k.const(BLOCK_TILES)
    k.emit(Op.ADDI, ht, rows, TILE - 1)
    k.emit(Op.DIV, ht, ht, tile)
    k.emit(Op.ADDI, wt, columns, TILE - 1)
    k.emit(Op.DIV, wt, wt, tile)
    k.emit(Op.ADDI, nb, wt, BLOCK_TILES - 1)
    k.emit(Op.DIV, nb, nb, block)
    k.release(tile, block)
    return Matrix(rows, columns, ht, wt, nb, row_stride, batch_stride)


def block_tiles(k: KernelBuilder, m: Matrix, block: Reg, first_tile: bool = True):
    """(w, first tile) of block `block`: its tiles, and the index of its first tile in
    the TILE layout of the batch; w alone without `first_tile`."""
    tiles, column, limit = k.reg("w"), k.reg("tile_column"), k.const(BLOCK_TILES)
    k.emit(Op.MOD, column, block, m.blocks_per_row)
    k.emit(Op.MULI, column, column, BLOCK_TILES)  # its first tile column
    k.emit(Op.SUB, tiles, m.tiles_per_row, column)
    k.emit(Op.MIN, tiles, tiles, limit)
    k.release(limit)
    if not first_tile:
        k.release(column)
        return tiles
    first = k.reg("first_tile")
    k.emit(Op.DIV, first, block, m.blocks_per_row)  # the block's tile row in the batch
    k.emit(Op.MUL, first, first, m.tiles_per_row)
    k.emit(Op.ADD, first, first, column)
    k.release(column)
    return tiles, first


def block_window(k: KernelBuilder, m: Matrix, block: Reg, row_groups: bool = False) -> BlockWindow:
    """Block `block`'s tiles and its part inside its matrix; with `row_groups`, in a
    window whose rows come in groups (ROW_GROUP; the kernels of one row-major tensor:
    the group loop's registers would leave a reader of several too few)."""
    tiles, first_tile = block_tiles(k, m, block)
    first, height, width, limit = k.reg("first_element"), k.reg("height"), k.reg("width"), k.const(TILE)
    k.emit(Op.DIV, height, first_tile, m.tiles_per_row)  # tile row in the batch
    k.emit(Op.MOD, width, first_tile, m.tiles_per_row)
    k.emit(Op.MULI, width, width, TILE)  # first column
    k.emit(Op.DIV, first, height, m.tile_rows)  # the block's matrix
    k.emit(Op.MUL, first, first, m.batch_stride)
    k.emit(Op.MOD, height, height, m.tile_rows)
    k.emit(Op.MULI, height, height, TILE)  # first row in the matrix
    group = None
    if row_groups:  # the first row's place: (its group) * group stride + (its place in it) * row stride
        group = k.reg("group")
        k.emit(Op.CONSTANT, limit, ROW_GROUP)  # (limit: a scratch here)
        k.emit(Op.DIV, group, height, limit)
        k.emit(Op.CONSTANT, first_tile, ROW_GROUP_STRIDE)  # (first_tile: a scratch from here)
        k.emit(Op.MUL, group, group, first_tile)
        k.emit(Op.ADD, first, first, group)
        k.emit(Op.MOD, group, height, limit)
        k.emit(Op.MUL, first_tile, group, m.row_stride)
        k.emit(Op.SUB, group, limit, group)
    else:
        k.emit(Op.MUL, first_tile, height, m.row_stride)  # (first_tile: a scratch from here)
    k.emit(Op.ADD, first, first, first_tile)
    run = k.reg("run")  # the first column's place: (its segment) * segment stride + (its place in it)
    k.emit(Op.CONSTANT, limit, SEGMENT)
    k.emit(Op.MOD, run, width, limit)
    k.emit(Op.ADD, first, first, run)
    k.emit(Op.DIV, run, width, limit)
    k.emit(Op.CONSTANT, first_tile, SEGMENT_STRIDE)
    k.emit(Op.MUL, run, run, first_tile)
    k.emit(Op.ADD, first, first, run)
    k.emit(Op.MOD, run, width, limit)
    k.emit(Op.SUB, run, limit, run)
    k.emit(Op.LI, limit, TILE)
    k.emit(Op.SUB, height, m.rows, height)
    k.emit(Op.MIN, height, height, limit)
    k.emit(Op.SUB, width, m.columns, width)
    k.emit(Op.MULI, limit, tiles, TILE)
    k.emit(Op.MIN, width, width, limit)
    k.release(first_tile, limit)
    return BlockWindow(tiles, first, height, width, run, group)


# ---- Rows: the data movement of row-major blocks ----

def read_rows(k: KernelBuilder, tensor: RowMajorTensor, m: Matrix, window: BlockWindow, cb: int, ptr: Reg) -> None:
    """A block of a row-major tensor into the back of `cb`: 32 rows of w * 32 elements,
    BLOCK_TILES pages pushed; the padding of a block that sticks out of the matrix is
    zero."""
    k.cb_reserve_back(cb, BLOCK_TILES)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    zero_padding(k, window, ptr, tensor.element_size)
    transfer_rows(k, Op.NOC_READ_ROWS, tensor, m, window, ptr)
    k.noc_read_barrier()
    k.cb_push_back(cb, BLOCK_TILES)


def zero_padding(k: KernelBuilder, window: BlockWindow, ptr: Reg, element_size: int) -> None:
    """Zeroes the block of pages at `ptr` if the block sticks out of its matrix (its
    padding must be zero; the elements inside are written after)."""
    fill, full, scratch = k.label("fill"), k.label("full"), k.reg("s")
    k.emit(Op.LI, scratch, TILE)
    k.emit(Op.BLT, window.height, scratch, fill)
    k.emit(Op.MULI, scratch, window.tiles, TILE)
    k.emit(Op.BGE, window.width, scratch, full)
    k.place(fill)
    k.emit(Op.MULI, scratch, window.tiles, TILE * TILE * element_size)
    k.emit(Op.L1_FILL, ptr, scratch, 0)
    k.place(full)
    k.release(scratch)


def write_rows(k: KernelBuilder, tensor: RowMajorTensor, m: Matrix, window: BlockWindow, cb: int, ptr: Reg) -> None:
    """The front block of `cb` (32 rows of w * 32 elements) to its window of a
    row-major tensor: only the elements inside the matrix; BLOCK_TILES pages popped."""
    k.cb_wait_front(cb, BLOCK_TILES)
    k.emit(Op.GET_READ_PTR, ptr, cb)
    transfer_rows(k, Op.NOC_WRITE_ROWS, tensor, m, window, ptr)
    k.noc_write_barrier()
    k.cb_pop_front(cb, BLOCK_TILES)


def transfer_rows(k: KernelBuilder, op: Op, tensor: RowMajorTensor, m: Matrix, window: BlockWindow, ptr: Reg) -> None:
    """NOC_READ_ROWS or NOC_WRITE_ROWS (op) of the rows of a block window between the
    tensor and the pages at `ptr`, where its rows are w * 32 elements apart: the rows of
    each row group the block meets (all of them in a window without groups) in one
    instruction per run of columns (one for a window whose rows are contiguous; a run
    from each segment else), one transfer per buffer page a row of a run touches."""
    size = tensor.element_size
    source, to, row_bytes, pitch = (k.reg(name) for name in ("src", "to", "row_bytes", "pitch"))
    k.emit(Op.MULI, row_bytes, m.row_stride, size)  # bytes from one row to the next in the tensor
    k.emit(Op.MULI, pitch, window.tiles, TILE * size)  # and in the block
    k.emit(Op.MULI, source, window.first, size)
    k.emit(Op.ADD, source, source, tensor.base)
    k.emit(Op.MOV, to, ptr)
    if window.group is None:
        _transfer_runs(k, op, tensor, window, source, to, window.height, row_bytes, pitch)
        k.release(source, to, row_bytes, pitch)
        return
    group_source, rows_left, rows, gap, scratch = (
        k.reg(name) for name in ("group_src", "rows_left", "rows", "gap", "s"))
    k.emit(Op.CONSTANT, gap, ROW_GROUP_STRIDE)  # bytes from the end of a group to the next group's first row
    k.emit(Op.MULI, gap, gap, size)
    k.emit(Op.CONSTANT, scratch, ROW_GROUP)
    k.emit(Op.MUL, scratch, scratch, row_bytes)
    k.emit(Op.SUB, gap, gap, scratch)
    k.emit(Op.MOV, group_source, source)  # the first row of the group's rows in the block
    k.emit(Op.MOV, rows_left, window.height)
    k.emit(Op.MIN, rows, window.group, rows_left)
    top, done = k.label("group"), k.label("groups_done")
    k.place(top)
    k.emit(Op.MOV, source, group_source)
    _transfer_runs(k, op, tensor, window, source, to, rows, row_bytes, pitch)  # (moves `to` on by a row's bytes)
    k.emit(Op.SUB, rows_left, rows_left, rows)
    k.emit(Op.LI, scratch, 0)
    k.emit(Op.BGE, scratch, rows_left, done)
    # the next group's rows: in the block, past these; in the tensor, past the gap after
    # them (these rows end where their group does)
    k.emit(Op.MULI, scratch, window.width, size)
    k.emit(Op.SUB, to, to, scratch)
    k.emit(Op.MUL, scratch, rows, pitch)
    k.emit(Op.ADD, to, to, scratch)
    k.emit(Op.MUL, scratch, rows, row_bytes)
    k.emit(Op.ADD, group_source, group_source, scratch)
    k.emit(Op.ADD, group_source, group_source, gap)
    k.emit(Op.CONSTANT, rows, ROW_GROUP)
    k.emit(Op.MIN, rows, rows, rows_left)
    k.emit(Op.JMP, top)
    k.place(done)
    k.release(source, to, row_bytes, pitch, group_source, rows_left, rows, gap, scratch)


def _transfer_runs(k: KernelBuilder, op: Op, tensor: RowMajorTensor, window: BlockWindow, source: Reg, to: Reg,
                   rows: Reg, row_bytes: Reg, pitch: Reg) -> None:
    """`op` of `rows` rows from `source` to `to` (both moved on by the row's bytes moved),
    one instruction per run of columns."""
    size = tensor.element_size
    length, left, run = k.reg("length"), k.reg("left"), k.reg("run_bytes")
    k.emit(Op.MULI, left, window.width, size)  # bytes of each row not yet moved
    k.emit(Op.MULI, run, window.run, size)
    top, done = k.label("run"), k.label("runs_done")
    k.place(top)
    k.emit(Op.LI, length, 0)
    k.emit(Op.BGE, length, left, done)
    k.emit(Op.MIN, length, run, left)
    k.emit(op, tensor.slot, source, to, length, rows, row_bytes, pitch)
    k.emit(Op.ADD, source, source, length)
    k.emit(Op.ADD, to, to, length)
    k.emit(Op.SUB, left, left, length)
    k.emit(Op.CONSTANT, length, SEGMENT_STRIDE)  # the next run: a whole segment, past the gap before it
    k.emit(Op.CONSTANT, run, SEGMENT)
    k.emit(Op.SUB, length, length, run)
    k.emit(Op.MULI, length, length, size)
    k.emit(Op.ADD, source, source, length)
    k.emit(Op.MULI, run, run, size)
    k.emit(Op.JMP, top)
    k.place(done)
    k.release(length, left, run)


# ---- Tiles of rows: a row-major binding read as tile pages by the reader itself ----

ROW_TILE_CONSTANTS = 5  # push constants of a row-major operand: rows, columns, row and batch stride, byte offset


@dataclasses.dataclass(frozen=True)
class RowTiles:
    """A row-major binding that a reader reads as tile pages (read_row_tiles): its
    tensor, and the first of its ROW_TILE_CONSTANTS push constants (row_tile_constants)."""

    tensor: RowMajorTensor
    constant: int

    @property
    def slot(self) -> int:
        return self.tensor.slot


def row_tile_constants(constants: list) -> list:
    """A row-major operand's push constants, from a row-major program's (push_constants:
    blocks, rows, columns, row stride, batch stride, segment, its stride, byte offset).
    Its rows must be whole segments, evenly spaced: the tile reads and writes move a
    face row at once, and find a row from the first."""
    if constants[SEGMENT] != constants[COLUMNS]:
        raise HalError(StatusCode.UNIMPLEMENTED, f"tiles of a row-major window whose rows are runs of "
                                                 f"{constants[SEGMENT]} of {constants[COLUMNS]} columns")
    if constants[ROW_GROUP] < constants[ROWS]:
        raise HalError(StatusCode.UNIMPLEMENTED, f"tiles of a row-major window whose rows come in groups of "
                                                 f"{constants[ROW_GROUP]} of {constants[ROWS]} rows")
    return list(constants[ROWS:SEGMENT]) + [constants[OFFSET_CONSTANTS]]


def tile_sources(k: KernelBuilder, formats, rows, first_constant: int) -> tuple[list, tuple[RuntimeArg, ...]]:
    """Generator slot i: binding i's tile pages (TilePages), or where rows[i] its
    row-major tensor read as tiles (RowTiles, its push constants from `first_constant`
    on, ROW_TILE_CONSTANTS per row-major binding); and their runtime args. `rows` may
    be shorter than `formats`: the bindings past it are tile pages."""
    sources, arg, args, constant = [], 0, (), first_constant
    rows = tuple(rows) + (False,) * (len(formats) - len(rows))
    for slot, (fmt, is_rows) in enumerate(zip(formats, rows)):
        if is_rows:
            sources.append(row_tile_source(k, slot, arg, fmt, constant))
            constant += ROW_TILE_CONSTANTS
            slot_args = tensor_args([slot])
        else:
            sources.append(tile_page_generator(k, slot, arg, fmt))
            slot_args = buffer_args([slot])
        arg, args = arg + len(slot_args), args + slot_args
    return sources, args


def row_tile_source(k: KernelBuilder, slot: int, arg: int, fmt: DataFormat, constant: int) -> RowTiles:
    """Generator slot `slot`: the row-major binding whose tensor_args start at runtime arg
    `arg`, read as tiles, its push constants from `constant` on."""
    return RowTiles(row_major_tensor(k, slot, arg, fmt, constant + ROW_TILE_CONSTANTS - 1), constant)


def row_tile_writer(output: DataFormat, binding: int, constant: int, block: int | None = None,
                    row_constant: int | None = None):
    """The writer kernel of a program whose output `binding` is row-major (its
    ROW_TILE_CONSTANTS push constants from `constant` on): each tile this workgroup's
    compute packs into CB_OUT written as untilize would (write_row_tiles); a page at a
    time, or with `block` a strip at a time as writer_strips takes them (`strips` of up
    to `block` tiles, within rows of push constant `row_constant` tiles if given)."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    ptr = k.reg("ptr")
    target = row_tile_source(k, 0, 0, output, constant)
    if block is None:
        with k.loop_range(first, end, "t") as t:
            write_row_tiles(k, target, t, 1, CB_OUT, 1, ptr)
    else:
        pages, row = k.const(block, "block"), None
        if row_constant is not None:
            row = k.reg("row")
            k.emit(Op.CONSTANT, row, row_constant)
        with strips(k, first, end, pages, row) as (t, ct):
            write_row_tiles(k, target, t, ct, CB_OUT, pages, ptr)
    return k.build(Processor.RISCV_0), tensor_args([binding])


def read_tiles(k: KernelBuilder, source, page: Reg, count: Reg | int, cb: int, block: Reg | int, ptr: Reg) -> None:
    """`count` consecutive tile pages (of one tile row) from `page` of a tile_sources
    source into the back of `cb`, `block` pages reserved and pushed."""
    if isinstance(source, RowTiles):
        read_row_tiles(k, source, page, count, cb, block, ptr)
    elif count == 1 and block == 1:
        read_tile(k, source, cb, page, ptr)
    else:
        read_strip(k, source, cb, page, count, block, ptr)


def read_tile_column(k: KernelBuilder, source, page: Reg, count: Reg, stride: Reg, cb: int, block: Reg | int,
                     ptr: Reg) -> None:
    """`count` tile pages `stride` apart from `page` (down a column of the tile grid: a
    transposed matmul operand's strip) of a tile_sources source into the back of `cb`,
    `block` pages reserved and pushed."""
    k.cb_reserve_back(cb, block)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    at = k.reg("column_page")
    k.emit(Op.MOV, at, page)
    with k.loop(count, "j"):
        if isinstance(source, RowTiles):
            _tile_faces(k, Op.NOC_READ_ROWS, source, at, 1, ptr)  # (moves ptr past the tile)
        else:
            noc_page(k, Op.NOC_READ_PAGE, source, at, ptr)
            k.emit(Op.ADDI, ptr, ptr, source.page_size)
        k.emit(Op.ADD, at, at, stride)
    k.noc_read_barrier()
    k.cb_push_back(cb, block)
    k.release(at)


def read_row_tiles(k: KernelBuilder, source: RowTiles, page: Reg, count: Reg | int, cb: int, block: Reg | int,
                   ptr: Reg) -> None:
    """`count` consecutive tile pages from `page` (within one tile row) of the TILE layout
    of a row-major binding's batch of matrices (row_tile_source), into the back of `cb` as
    tilize writes them: each face's 16 rows in one NOC_READ_ROWS, the padding of tiles
    that stick out of the matrix zero. So a program reads IREE's row-major bindings
    without a tilize launch before it (the bytes are the same: a tilize moves every
    bit). Reservation and push are `block` pages; `ptr` is scratch."""
    k.cb_reserve_back(cb, block)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    _tile_faces(k, Op.NOC_READ_ROWS, source, page, count, ptr)
    k.noc_read_barrier()
    k.cb_push_back(cb, block)


def write_row_tiles(k: KernelBuilder, source: RowTiles, page: Reg, count: Reg | int, cb: int, block: Reg | int,
                    ptr: Reg) -> None:
    """The front `count` tile pages of `cb` to tiles `page`.. (within one tile row) of a
    row-major binding, as untilize writes them: each face's rows inside the matrix in one
    NOC_WRITE_ROWS, no byte outside it (padding, neighbours). So a program writes IREE's
    row-major bindings without an untilize launch after it. Wait and pop are `block`
    pages; `ptr` is scratch."""
    k.cb_wait_front(cb, block)
    k.emit(Op.GET_READ_PTR, ptr, cb)
    _tile_faces(k, Op.NOC_WRITE_ROWS, source, page, count, ptr)
    k.noc_write_barrier()
    k.cb_pop_front(cb, block)


def _tile_faces(k: KernelBuilder, op: Op, source: RowTiles, page: Reg, count: Reg | int, ptr: Reg) -> None:
    """NOC_READ_ROWS or NOC_WRITE_ROWS (op) of the faces of `count` tiles from `page` of
    a row-major binding, between it and the tile pages at `ptr` (moved on: scratch): the
    rows and columns of each face inside the matrix; a read zeroes the pages of tiles
    that stick out of it first."""
    tensor, constant = source.tensor, source.constant
    size, tile = tensor.element_size, k.const(TILE, "tile")
    face_rows, face_bytes = TILE // 2, TILE * TILE // 4 * tensor.element_size
    rows, columns, stride, scratch = k.reg("rows"), k.reg("columns"), k.reg("stride"), k.reg("s")
    first, height, width = k.reg("first_element"), k.reg("height"), k.reg("width")
    k.emit(Op.CONSTANT, rows, constant)
    k.emit(Op.CONSTANT, columns, constant + 1)
    k.emit(Op.ADDI, height, rows, TILE - 1)
    k.emit(Op.DIV, height, height, tile)  # Ht
    k.emit(Op.ADDI, width, columns, TILE - 1)
    k.emit(Op.DIV, width, width, tile)  # Wt
    k.emit(Op.MUL, scratch, height, width)  # tiles per matrix
    k.emit(Op.DIV, first, page, scratch)  # the matrix
    k.emit(Op.CONSTANT, stride, constant + 3)
    k.emit(Op.MUL, first, first, stride)
    k.emit(Op.MOD, height, page, scratch)
    k.emit(Op.MOD, scratch, height, width)
    k.emit(Op.DIV, height, height, width)
    k.emit(Op.MULI, height, height, TILE)  # first row in the matrix
    k.emit(Op.MULI, width, scratch, TILE)  # first column
    k.emit(Op.CONSTANT, stride, constant + 2)
    k.emit(Op.MUL, scratch, height, stride)
    k.emit(Op.ADD, first, first, scratch)
    k.emit(Op.ADD, first, first, width)
    k.emit(Op.SUB, height, rows, height)  # rows of the tiles inside the matrix
    k.emit(Op.MIN, height, height, tile)
    k.emit(Op.SUB, width, columns, width)  # and columns
    if isinstance(count, Reg):
        k.emit(Op.MULI, scratch, count, TILE)
    else:
        k.emit(Op.LI, scratch, count * TILE)
    k.emit(Op.MIN, width, width, scratch)
    if op == Op.NOC_READ_ROWS:
        fill, full = k.label("fill"), k.label("full")
        k.emit(Op.BLT, height, tile, fill)
        k.emit(Op.BGE, width, scratch, full)
        k.place(fill)
        if isinstance(count, Reg):
            k.emit(Op.MULI, scratch, count, 4 * face_bytes)
        else:
            k.emit(Op.LI, scratch, count * 4 * face_bytes)
        k.emit(Op.L1_FILL, ptr, scratch, 0)
        k.place(full)
    k.release(rows, columns)
    # Per tile: faces 0 and 1 hold rows 0-15 (columns 0-15, 16-31), faces 2 and 3 rows 16-31.
    half, zero, top, bottom = tile, k.const(0, "zero"), k.reg("top"), k.reg("bottom")
    k.emit(Op.LI, half, face_rows)
    k.emit(Op.MIN, top, height, half)
    k.emit(Op.ADDI, bottom, height, -face_rows)
    k.emit(Op.MAX, bottom, bottom, zero)
    k.release(height, half)
    k.emit(Op.MULI, stride, stride, size)  # bytes from one row to the next
    k.emit(Op.MULI, first, first, size)
    k.emit(Op.ADD, first, first, tensor.base)  # the tile's first byte in the buffer
    k.emit(Op.MULI, scratch, stride, face_rows)  # from the top faces to the bottom ones
    left, length, pitch = width, k.reg("length"), k.const(face_rows * size, "pitch")
    k.emit(Op.MULI, left, left, size)  # bytes of this tile's rows and the next tiles'

    def tile_faces():
        for column in (0, face_rows * size):  # the left faces, then the right ones: ptr moves through them
            k.emit(Op.ADDI, length, left, -column)
            k.emit(Op.MAX, length, length, zero)
            k.emit(Op.MIN, length, length, pitch)
            outside = k.label("outside")
            k.emit(Op.BGE, zero, length, outside)  # faces right of the matrix: their padding is zero already
            k.emit(op, tensor.slot, first, ptr, length, top, stride, pitch)
            k.emit(Op.ADD, first, first, scratch)
            k.emit(Op.ADDI, ptr, ptr, 2 * face_bytes)
            k.emit(op, tensor.slot, first, ptr, length, bottom, stride, pitch)
            k.emit(Op.SUB, first, first, scratch)
            k.emit(Op.ADDI, ptr, ptr, -2 * face_bytes)
            k.place(outside)
            k.emit(Op.ADDI, first, first, face_rows * size)  # the next face's first column
            k.emit(Op.ADDI, ptr, ptr, face_bytes)
        k.emit(Op.ADDI, ptr, ptr, 2 * face_bytes)  # past faces 2 and 3: the next tile
        k.emit(Op.ADDI, left, left, -TILE * size)

    if isinstance(count, Reg):
        with k.loop(count, "tile"):
            tile_faces()
    else:
        for _ in range(count):
            tile_faces()
    k.release(zero, top, bottom, stride, scratch, first, left, length, pitch)


# ---- Kernels ----

def row_reader(inputs: list[tuple[int, DataFormat]], offsets: bool):
    """The reader kernel: for each block of this workgroup, row-major binding i's block
    into CB inputs[i][0]."""
    k = KernelBuilder("reader")
    first, end = tile_range(k)
    m = matrix(k)
    tensors = tensor_generators(k, [fmt for _, fmt in inputs], offsets)
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "block") as block:
        window = block_window(k, m, block, row_groups=True)
        for tensor, (cb, _) in zip(tensors, inputs):
            read_rows(k, tensor, m, window, cb, ptr)
        window.release(k)
    return k.build(Processor.RISCV_1), tensor_args(range(len(inputs)))


def row_writer(out: DataFormat, binding: int, offsets: bool, offset_index: int):
    """The writer kernel: each block of this workgroup from CB_OUT to row-major
    `binding`, moved on by offset push constant `offset_index` with `offsets`."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    m = matrix(k)
    [tensor] = tensor_generators(k, [out], offsets, offset_index)
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "block") as block:
        window = block_window(k, m, block, row_groups=True)
        write_rows(k, tensor, m, window, CB_OUT, ptr)
        window.release(k)
    return k.build(Processor.RISCV_0), tensor_args([binding])


def tile_pages(name: str, processor: Processor, fmt: DataFormat, binding: int):
    """Tile pages of `binding`, each block's w tiles: the reader into CB_IN0, the
    writer from CB_OUT, BLOCK_TILES pages at a time."""
    reader = processor == Processor.RISCV_1
    cb = CB_IN0 if reader else CB_OUT
    k = KernelBuilder(name)
    first, end = tile_range(k)
    m = matrix(k)
    [pages] = address_generators(k, [fmt])
    ptr = k.reg("ptr")
    with k.loop_range(first, end, "block") as block:
        tiles, first_tile = block_tiles(k, m, block)
        if reader:
            k.cb_reserve_back(cb, BLOCK_TILES)
            k.emit(Op.GET_WRITE_PTR, ptr, cb)
        else:
            k.cb_wait_front(cb, BLOCK_TILES)
            k.emit(Op.GET_READ_PTR, ptr, cb)
        transfer_pages(k, Op.NOC_READ_SPAN if reader else Op.NOC_WRITE_SPAN, pages, first_tile, tiles, ptr)
        if reader:
            k.cb_push_back(cb, BLOCK_TILES)
        else:
            k.cb_pop_front(cb, BLOCK_TILES)
        k.release(tiles, first_tile)
    return k.build(processor), buffer_args([binding])


def block_compute(name: str, body, **config):
    """A compute kernel running `body(k, w)` for each block of this workgroup, w its
    tiles."""
    k = KernelBuilder(name)
    first, end = tile_range(k)
    m = matrix(k)
    with k.loop_range(first, end, "block") as block:
        tiles = block_tiles(k, m, block, first_tile=False)
        body(k, tiles)
        k.release(tiles)
    return k.build(Processor.COMPUTE, **config), ()


def convert_block(k: KernelBuilder, op: Op, icb: int, ocb: int, tiles: Reg) -> None:
    """TILIZE_BLOCK or UNTILIZE_BLOCK (op) of the front block of icb into the back of
    ocb, with TT-Metal's circular-buffer calls around it."""
    k.cb_wait_front(icb, BLOCK_TILES)
    k.cb_reserve_back(ocb, BLOCK_TILES)
    k.emit(op, icb, ocb, tiles)
    k.cb_push_back(ocb, BLOCK_TILES)
    k.cb_pop_front(icb, BLOCK_TILES)


def _each_tile(k: KernelBuilder, inputs, tiles: Reg, instruction) -> None:
    """For tile t < w of the front blocks of `inputs`: `instruction(t, zero)` leaves a
    result in Dst tile 0, packed into tile t of the back block of CB_TILES_OUT."""
    zero = k.const(0, "zero")
    for cb in inputs:
        k.cb_wait_front(cb, BLOCK_TILES)
    k.cb_reserve_back(CB_TILES_OUT, BLOCK_TILES)
    with k.loop(tiles, "tile") as t:
        k.tile_regs_acquire()
        instruction(t, zero)
        k.tile_regs_commit()
        k.tile_regs_wait()
        k.pack_tile(zero, CB_TILES_OUT, t)
        k.tile_regs_release()
    k.cb_push_back(CB_TILES_OUT, BLOCK_TILES)
    for cb in inputs:
        k.cb_pop_front(cb, BLOCK_TILES)
    k.release(zero)


# ---- Programs ----

def library_export(name: str, kernels, cbs, row_major_bindings: int, bindings: int, offsets: bool) -> Export:
    program = Program(tuple(cbs), tuple(kernel for kernel, _ in kernels), tuple(args for _, args in kernels))
    constants = OFFSET_CONSTANTS + (row_major_bindings if offsets else 0)
    return Export(name, constants, bindings, (1, 1, 1), (Stage(program),))


def block_cbs(double, single=()) -> list[CircularBufferConfig]:
    """Circular buffers (cb, format) of tile-sized pages: two blocks for those between a
    data movement kernel and compute, one between compute's own stages."""
    return [CircularBufferConfig.of_tiles(cb, fmt, pages * BLOCK_TILES)
            for cbs, pages in ((double, 2), (single, 1)) for cb, fmt in cbs]


def tilize(fmt: DataFormat, offsets: bool = False) -> Export:
    """Row-major binding 0 -> tile pages of binding 1 (TILE layout of the batch of
    matrices, padding zero): rows read, tilize_block, tiles written."""
    element_size(fmt)
    compute = block_compute("tilize", lambda k, w: convert_block(k, Op.TILIZE_BLOCK, CB_IN0, CB_OUT, w), **BLOCK_CONFIG)
    kernels = (row_reader([(CB_IN0, fmt)], offsets), compute, tile_pages("writer", Processor.RISCV_0, fmt, 1))
    return library_export("tilize", kernels, block_cbs([(CB_IN0, fmt), (CB_OUT, fmt)]), 1, 2, offsets)


def untilize(fmt: DataFormat, offsets: bool = False) -> Export:
    """Tile pages of binding 0 -> row-major binding 1: tiles read, pack_untilize_block,
    rows written."""
    element_size(fmt)
    compute = block_compute("untilize", lambda k, w: convert_block(k, Op.UNTILIZE_BLOCK, CB_IN0, CB_OUT, w),
                             **BLOCK_CONFIG)
    kernels = (tile_pages("reader", Processor.RISCV_1, fmt, 0), compute, row_writer(fmt, 1, offsets, 0))
    return library_export("untilize", kernels, block_cbs([(CB_IN0, fmt), (CB_OUT, fmt)]), 1, 2, offsets)


def _through_tiles(name: str, fmt: DataFormat, inputs: int, instruction, offsets: bool, **config) -> Export:
    """Row-major inputs (bindings 0..inputs - 1) -> row-major output (binding `inputs`)
    through tiles: each input's block tilized, `instruction(k, t, zero)` per tile into
    Dst tile 0, the results untilized."""
    rows_in, tiles_in = (CB_IN0, CB_IN1)[:inputs], (CB_TILES_A, CB_TILES_B)[:inputs]

    def body(k, w):
        for rows, tiles in zip(rows_in, tiles_in):
            convert_block(k, Op.TILIZE_BLOCK, rows, tiles, w)
        _each_tile(k, tiles_in, w, lambda t, zero: instruction(k, t, zero))
        convert_block(k, Op.UNTILIZE_BLOCK, CB_TILES_OUT, CB_OUT, w)

    compute = block_compute(name, body, dst_full_sync_en=True, **config)  # Dst holds the untilized block
    kernels = (row_reader([(cb, fmt) for cb in rows_in], offsets), compute,
               row_writer(fmt, inputs, offsets, inputs))
    cbs = block_cbs([(cb, fmt) for cb in (*rows_in, CB_OUT)], [(cb, fmt) for cb in (*tiles_in, CB_TILES_OUT)])
    return library_export(name, kernels, cbs, inputs + 1, inputs + 1, offsets)


def eltwise_binary(op: str, fmt: DataFormat, math_fidelity: MathFidelity = MathFidelity.HiFi4,
                   fp32_dest_acc_en: bool = False, offsets: bool = False) -> Export:
    """out = a <op> b (add, sub, mul) over row-major tensors of one shape; bindings
    (a, b, out), each row-major; add, sub or mul_tiles between tilize and untilize."""
    instruction = {"add": Op.ADD_TILES, "sub": Op.SUB_TILES, "mul": Op.MUL_TILES}[op]
    return _through_tiles(f"rowmajor_{op}", fmt, 2,
                          lambda k, t, zero: k.emit(instruction, CB_TILES_A, CB_TILES_B, t, t, zero, 0), offsets,
                          math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en)


def copy(fmt: DataFormat, offsets: bool = False) -> Export:
    """out = a through tiles: tilize, copy_tile, untilize; bindings (a, out), both
    row-major. copy_tile unpacks straight to a float32 Dst (fp32_dest_acc_en), so
    float32 keeps every bit, and bfloat16 every value but denormals and -0, which
    its packer flushes to +0."""
    return _through_tiles("rowmajor_copy", fmt, 1, lambda k, t, zero: k.copy_tile(CB_TILES_A, t, zero), offsets,
                          fp32_dest_acc_en=True)
