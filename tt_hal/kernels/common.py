"""What the kernel families share: the workgroup's tile range and its strips, address
generators, the readers and writers of single tiles and of strips, Dst stages,
circular-buffer configs and the masking of padding."""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from tt_hal.target.isa import Op, Processor, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder, Reg
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, KernelConfig, RuntimeArg
from tt_hal.target.sizes import TILE

CB_IN0, CB_IN1, CB_OUT = 0, 1, 16
PAGES = 2  # double buffering
CB_SCALER, CB_MASK, CB_LAST = 3, 4, 24


MASK_FORMAT = DataFormat.bfloat16


def mask_values(valid: int, axis: int) -> np.ndarray:
    """The mask tile kernels mask padding with (in MASK_FORMAT, bound after their
    inputs): 1.0 in the first `valid` columns (axis -1) or rows (axis -2), 0.0 elsewhere."""
    mask = np.zeros((TILE, TILE), np.float32)
    if axis == -1:
        mask[:, :valid] = 1.0
    else:
        mask[:valid, :] = 1.0
    return mask


def workgroup_count(tiles: int, cores: int) -> tuple[int, int, int]:
    """The dispatch grid of a library program over `tiles` tiles: one workgroup per
    core, no more workgroups than tiles (and at least one)."""
    return max(1, min(tiles, cores)), 1, 1


def tile_range(k: KernelBuilder):
    """(first, end) tile of this workgroup: [w * T // n, (w + 1) * T // n) of the T
    tiles named by push constant 0 (the library's contract, tt_hal.kernels)."""
    total, first, end = k.reg("total"), k.reg("first"), k.reg("end")
    k.emit(Op.CONSTANT, total, 0)
    k.emit(Op.WORKGROUP_RANGE, first, end, total)
    k.release(total)
    return first, end


@dataclasses.dataclass(frozen=True)
class TilePages:
    """A binding of tile pages as a kernel addresses it: its address generator slot, a
    register holding its first page in the buffer (a binding may start at any page of
    it), which the kernel's page indices count from, and its page size in bytes."""

    slot: int
    first: Reg
    page_size: int


_BUFFER_ARGS = (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM, ArgKind.BINDING_PAGE_OFFSET)


def address_generators(k: KernelBuilder, formats) -> list[TilePages]:
    """Slot i: binding i's tiles, from runtime args 3i (address), 3i + 1 (is_dram) and
    3i + 2 (first page) as buffer_args orders them."""
    return [tile_page_generator(k, slot, len(_BUFFER_ARGS) * slot, fmt) for slot, fmt in enumerate(formats)]


def tile_page_generator(k: KernelBuilder, slot: int, arg: int, fmt) -> TilePages:
    """Generator slot `slot`: the tiles of the binding whose buffer_args start at runtime arg `arg`."""
    address, is_dram = k.arg(arg, f"in{slot}_addr"), k.arg(arg + 1, f"in{slot}_is_dram")
    page_size = k.const(fmt.tile_size, "page_size")
    k.addrgen(slot, address, page_size, is_dram)
    k.release(address, is_dram, page_size)
    return TilePages(slot, k.arg(arg + 2, f"in{slot}_first_page"), fmt.tile_size)


def buffer_args(bindings) -> tuple[RuntimeArg, ...]:
    """(address, is_dram, first page) runtime args of each binding, for address_generators."""
    return tuple(RuntimeArg(kind, b) for b in bindings for kind in _BUFFER_ARGS)


def noc_page(k: KernelBuilder, op: Op, pages: TilePages, page, ptr) -> None:
    """NOC_READ_PAGE or NOC_WRITE_PAGE (op) of page `page` (a register or an int) of a
    binding, counted from its first page, and the barrier after it."""
    at = k.reg("page_at")
    if isinstance(page, Reg):
        k.emit(Op.ADD, at, pages.first, page)
    else:
        k.emit(Op.ADDI, at, pages.first, page)
    k.emit(op, pages.slot, at, ptr)
    k.emit(Op.NOC_READ_BARRIER if op == Op.NOC_READ_PAGE else Op.NOC_WRITE_BARRIER)
    k.release(at)


def read_tile(k: KernelBuilder, pages: TilePages, cb: int, page, ptr) -> None:
    """Reads page `page` of a binding into the back of `cb`."""
    k.cb_reserve_back(cb, 1)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    noc_page(k, Op.NOC_READ_PAGE, pages, page, ptr)
    k.cb_push_back(cb, 1)


def transfer_pages(k: KernelBuilder, op: Op, pages: TilePages, page: Reg, count: Reg, ptr: Reg) -> None:
    """NOC_READ_SPAN or NOC_WRITE_SPAN (op) of `count` consecutive pages of a binding from
    page `page` (counted from its first page) to or from L1 at `ptr`, and the barrier
    after it: one instruction, a NoC transfer per page."""
    at, length = k.reg("at"), k.reg("length")
    k.emit(Op.ADD, at, pages.first, page)
    k.emit(Op.MULI, at, at, pages.page_size)
    k.emit(Op.MULI, length, count, pages.page_size)
    k.emit(op, pages.slot, at, ptr, length)
    k.emit(Op.NOC_READ_BARRIER if op == Op.NOC_READ_SPAN else Op.NOC_WRITE_BARRIER)
    k.release(at, length)


def strip_tiles(fp32_dest_acc_en: bool) -> int:
    """The most tiles of a strip: half of Dst (the packer drains the other half)."""
    return KernelConfig(fp32_dest_acc_en=fp32_dest_acc_en).dst_capacity()


@contextlib.contextmanager
def strips(k: KernelBuilder, first: Reg, end: Reg, block: Reg, row: Reg | None = None):
    """for each strip of the tiles [first, end): (t, ct), its first tile and its length:
    up to `block` consecutive tiles (TT-Metal's block of a kernel's loop, Dst's share),
    and, given `row` (tiles per row), never past the end of t's row."""
    t, ct, left = k.reg("t"), k.reg("ct"), k.reg("left")
    k.emit(Op.MOV, t, first)
    top, done = k.label("strip"), k.label("strips_done")
    k.place(top)
    k.emit(Op.BGE, t, end, done)
    k.emit(Op.SUB, ct, end, t)
    k.emit(Op.MIN, ct, ct, block)
    if row is not None:
        k.emit(Op.MOD, left, t, row)
        k.emit(Op.SUB, left, row, left)  # tiles left in t's row
        k.emit(Op.MIN, ct, ct, left)
    yield t, ct
    k.emit(Op.ADD, t, t, ct)
    k.emit(Op.JMP, top)
    k.place(done)
    k.release(t, ct, left)


def read_strip(k: KernelBuilder, pages: TilePages, cb: int, page: Reg, count: Reg, block: Reg, ptr: Reg) -> None:
    """Reads `count` consecutive pages of a binding from `page` into the back of `cb`, in
    one span. Its reservation and push are `block` pages, of which a shorter strip uses
    the first: whole blocks, so that no span wraps around the buffer's end."""
    k.cb_reserve_back(cb, block)
    k.emit(Op.GET_WRITE_PTR, ptr, cb)
    transfer_pages(k, Op.NOC_READ_SPAN, pages, page, count, ptr)
    k.cb_push_back(cb, block)


def writer_strips(output: DataFormat, binding: int, block: int, row_constant: int | None = None):
    """The writer kernel of a compute kernel that packs strips (`strips`: of up to
    `block` tiles, within rows of push constant `row_constant` tiles if given) into
    CB_OUT a block of pages at a time: each strip's tiles to their pages of `binding`,
    in one span."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    ptr, pages_of_block = k.reg("ptr"), k.const(block, "block")
    row = None
    if row_constant is not None:
        row = k.reg("row")
        k.emit(Op.CONSTANT, row, row_constant)
    [pages] = address_generators(k, [output])
    with strips(k, first, end, pages_of_block, row) as (t, ct):
        k.cb_wait_front(CB_OUT, pages_of_block)
        k.emit(Op.GET_READ_PTR, ptr, CB_OUT)
        transfer_pages(k, Op.NOC_WRITE_SPAN, pages, t, ct, ptr)
        k.cb_pop_front(CB_OUT, pages_of_block)
    return k.build(Processor.RISCV_0), buffer_args([binding])


def pack_strip(k: KernelBuilder, count: Reg, block: Reg) -> None:
    """Packs Dst tiles 0 .. count - 1 into CB_OUT's next `block` pages (writer_strips'),
    after the math: commit, reserve, wait, pack, release, push."""
    k.tile_regs_commit()
    k.cb_reserve_back(CB_OUT, block)
    k.tile_regs_wait()
    k.pack_tiles(0, CB_OUT, 0, count)
    k.tile_regs_release()
    k.cb_push_back(CB_OUT, block)


def tile_grid(k: KernelBuilder):
    """(Ht, Wt): registers holding push constants 1 and 2, the output's tile grid
    (per batch) in the programs that index tiles by row and column."""
    ht, wt = k.reg("Ht"), k.reg("Wt")
    k.emit(Op.CONSTANT, ht, 1)
    k.emit(Op.CONSTANT, wt, 2)
    return ht, wt


def writer_unary(output: DataFormat, binding: int):
    """The writer kernel: tile t of CB_OUT to page t of `binding`, for each tile of
    this workgroup."""
    k = KernelBuilder("writer")
    first, end = tile_range(k)
    one, ptr = k.const(1, "one"), k.reg("ptr")
    [pages] = address_generators(k, [output])
    with k.loop_range(first, end, "t") as tile:
        k.cb_wait_front(CB_OUT, one)
        k.emit(Op.GET_READ_PTR, ptr, CB_OUT)
        noc_page(k, Op.NOC_WRITE_PAGE, pages, tile, ptr)
        k.cb_pop_front(CB_OUT, one)
    return k.build(Processor.RISCV_0), buffer_args([binding])


def stage(k: KernelBuilder, out_cb: int, body) -> None:
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


def compute_each_tile(name: str, body, inputs: int, **config):
    """A compute kernel running `body(k, zero)` on each tile between waiting for its
    inputs and packing Dst tile 0 to the output CB."""
    k = KernelBuilder(name)
    first, end = tile_range(k)
    one, zero = k.const(1, "one"), k.const(0, "zero")
    with k.loop_range(first, end, "t"):
        for cb in (CB_IN0, CB_IN1)[:inputs]:
            k.cb_wait_front(cb, one)
        stage(k, CB_OUT, lambda: body(k, zero))
        for cb in (CB_IN0, CB_IN1)[:inputs]:
            k.cb_pop_front(cb, one)
    return k.build(Processor.COMPUTE, **config), ()


def circular_buffers(inputs, out: DataFormat, extra: dict, input_pages: int = PAGES):
    """CB configs: each input with `input_pages` pages (the mask: one), the output
    double-buffered, and `extra` {index: (format, pages)}."""
    cbs = [CircularBufferConfig.of_tiles(cb, fmt, 1 if cb == CB_MASK else input_pages) for cb, fmt in inputs]
    cbs.append(CircularBufferConfig.of_tiles(CB_OUT, out, PAGES))
    cbs += [CircularBufferConfig.of_tiles(cb, fmt, pages) for cb, (fmt, pages) in extra.items()]
    return tuple(cbs)


def intermediate_format(fp32_dest_acc_en: bool) -> DataFormat:
    """Format of the CBs between a kernel's own stages (tt-metal: Float16_b unless fp32
    accumulation is on)."""
    return DataFormat.float32 if fp32_dest_acc_en else DataFormat.bfloat16


def scaler_tile(k: KernelBuilder) -> None:
    """The 1.0 scaler tile reduce_tile multiplies by, packed into CB_SCALER once
    (tt-metal's reader generates it; here the compute kernel fills Dst)."""
    stage(k, CB_SCALER, lambda: k.fill_tile(0, 1.0))
    k.cb_wait_front(CB_SCALER, 1)


# ---- Masking the padding ----
#
# Tiles of a reduced dimension whose size is not a multiple of 32 carry padding the
# op must not see: the host binds a mask tile (1.0 where the data is, 0.0 in the
# padding; tt_hal.ops.mask_tile) and the kernel masks the last tile in Dst (SFPU MASK,
# or MASK_NEG_INF before a max) before it is reduced.

def last_index(k: KernelBuilder, count):
    """A register holding count - 1: the index of the last (padded) tile."""
    last = k.reg("last")
    k.emit(Op.ADDI, last, count, -1)
    return last


def masked_last(k: KernelBuilder, cb: int, index, kind: SfpuOp) -> None:
    """Tile `index` of `cb` with its padding masked (0 or -inf) -> one page of CB_LAST."""
    def body():
        k.copy_tile(cb, index, 0)
        k.copy_tile(CB_MASK, 0, 1)
        k.sfpu_binary(kind, 0, 1)
    stage(k, CB_LAST, body)
    k.cb_wait_front(CB_LAST, 1)


def mask_when(k: KernelBuilder, index, last, mask_cb: int = CB_MASK, tile: int = 0, spare: int = 1) -> None:
    """If index == last: Dst `tile` masked (0 where the mask tile is 0), the mask
    tile loaded into Dst `spare`."""
    skip = k.label("unmasked")
    k.emit(Op.BNE, index, last, skip)
    k.copy_tile(mask_cb, 0, spare)
    k.sfpu_binary(SfpuOp.MASK, tile, spare)
    k.place(skip)
