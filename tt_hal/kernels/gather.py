"""Gather: a tile tensor whose every element is read from a row-major tensor at the
place an index table says.

One program serves every data movement a dispatch's maps and ops ask for that the
tile kernels cannot do in place: permutations of any dims, reshapes that move
elements between tiles, slices, pads, concatenations, reversals, convolution and
pooling windows, linalg.pack and unpack, and gathers whose indices are computed on
the chip (`tensor.extract` in a body). The compiler states what moves where as an
index table: for each element of the output (its device shape's row-major order),
the index of the source element it takes (in the source's row-major order), or -1
for the fill value. A static table is an export tensor written when the executable
is prepared; a table of indices known only at run time is computed by compute
kernels and untilized into a row-major scratch tensor first.

Bindings: 0 the source (row-major, 4-byte elements), 1 the table (row-major int32),
2 the output (tile pages). Push constants as tt_hal.kernels.rowmajor's programs take
them, for the output's batch of (rows, columns) matrices, whose rows and matrices
the table holds one after another; then the byte offsets of the source and of the
table in their bindings.

Reader (RISCV_1), per block of the output (rowmajor's blocks): the block's table rows
into a scratch circular buffer it reserves for good and never pushes (a data
movement kernel's own L1); then one NOC_GATHER of the block's rows: each row's
elements in runs of consecutive source indices, one NoC read per run (per source
page it touches), the fill value where an index is -1. Compute tilizes the block; the writer writes its
tiles. On a card each element is a NoC transfer of 4 bytes at any 4-byte offset,
which TT-Metal's NoC does not allow from DRAM (32-byte alignment): a hardware reader
would read aligned spans into scratch L1 first (docs/fidelity.md).
"""

from __future__ import annotations

from hal.status import HalError, StatusCode
from tt_hal.kernels.common import CB_IN0, CB_IN1, CB_OUT, tile_range
from tt_hal.kernels.rowmajor import (
    BLOCK_CONFIG,
    BLOCK_TILES,
    block_cbs,
    block_compute,
    block_window,
    convert_block,
    library_export,
    matrix,
    tensor_args,
    tensor_generators,
    tile_pages,
    transfer_rows,
    zero_padding,
)
from tt_hal.target.isa import Op, Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import CircularBufferConfig, Export
from tt_hal.target.sizes import TILE

ELEMENT_SIZE = 4  # the gathered formats' (float32, int32): an index entry's size too
TABLE_FORMAT = DataFormat.int32


def gather(fmt: DataFormat, fill_bits: int = 0) -> Export:
    """Source binding 0 (row-major `fmt`) gathered through table binding 1 into the
    tile pages of binding 2; an index of -1 takes the 32-bit pattern `fill_bits`."""
    if fmt.is_block_float or fmt.element_size != ELEMENT_SIZE:
        raise HalError(StatusCode.UNIMPLEMENTED, f"a gather of {fmt.name}: the gather moves 4-byte elements")
    compute = block_compute("gather", lambda k, w: convert_block(k, Op.TILIZE_BLOCK, CB_IN0, CB_OUT, w),
                            **BLOCK_CONFIG)
    kernels = (_reader(fmt, fill_bits), compute, tile_pages("writer", Processor.RISCV_0, fmt, 2))
    cbs = [*block_cbs([(CB_IN0, fmt), (CB_OUT, fmt)]),
           CircularBufferConfig.of_tiles(CB_IN1, TABLE_FORMAT, BLOCK_TILES)]
    return library_export("gather", kernels, cbs, 2, 3, offsets=True)


def _reader(fmt: DataFormat, fill_bits: int):
    k = KernelBuilder("gather_reader")
    first, end = tile_range(k)
    m = matrix(k)
    source, table = tensor_generators(k, [fmt, TABLE_FORMAT], offsets=True)
    k.cb_reserve_back(CB_IN1, BLOCK_TILES)  # the table rows' scratch, for the kernel's life
    indices = k.reg("indices")
    with k.loop_range(first, end, "block") as block:
        window = block_window(k, m, block)
        k.emit(Op.GET_WRITE_PTR, indices, CB_IN1)
        transfer_rows(k, Op.NOC_READ_ROWS, table, m, window, indices)
        k.noc_read_barrier()
        k.release(window.first, window.run)
        k.cb_reserve_back(CB_IN0, BLOCK_TILES)
        delta = k.reg("delta")
        k.emit(Op.GET_WRITE_PTR, delta, CB_IN0)
        zero_padding(k, window, delta, ELEMENT_SIZE)  # every element inside is read or filled below
        k.emit(Op.SUB, delta, delta, indices)  # from an entry of the table rows to its element's place
        _gather_rows(k, source, window, indices, delta, fill_bits)
        k.release(delta, window.tiles, window.height, window.width)
        k.noc_read_barrier()
        k.cb_push_back(CB_IN0, BLOCK_TILES)
    return k.build(Processor.RISCV_1), tensor_args((0, 1))


def _gather_rows(k: KernelBuilder, source, window, indices, delta, fill_bits: int) -> None:
    """The rows of the block: their elements gathered from the source by one NOC_GATHER
    (a row's entries a row of the table rows at `indices`, `delta` bytes before the row
    of the block it fills)."""
    to, stride = k.reg("to"), k.reg("stride")
    k.emit(Op.MULI, stride, window.tiles, TILE * ELEMENT_SIZE)  # bytes from one row of the block to the next
    k.emit(Op.ADD, to, indices, delta)
    k.emit(Op.NOC_GATHER, source.slot, indices, to, window.width, source.base, fill_bits, window.height, stride)
    k.release(to, stride)
