"""Compute instructions on a Tensix core's Dst registers (numba), TT-Metal's
compute_kernel_api: copy_tile, add/sub/mul_tiles (with broadcast) and add/sub/mul_block,
matmul_tiles, matmul_block, reduce_tile, transpose_wh_tile, SFPU ops, fill, pack_tile and
pack_tiles (a loop of pack_tile<true>). Operands are unpacked
from circular buffers and results stored in Dst as sim/numerics.py states. Dst's
acquire and release (tile_regs_*) are the interpreter's.

tilize_block and untilize_block (`layout_block`) convert whole blocks between
row-major pages and tiles. They take Dst themselves, so a kernel calls them outside
tile_regs_acquire .. release, and the simulator moves their bytes as they are
(float32 included: on a card that takes unpack-to-Dst fp32 mode, docs/fidelity.md).
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import types

from tt_hal.sim import indirect
from tt_hal.sim.dataflow import cb_page_address
from tt_hal.sim.faults import Fault
from tt_hal.sim.memory import move_bytes
from tt_hal.sim.numerics import (
    accumulate_products,
    bits_to_f32,
    broadcast_run,
    dst_store,
    eltwise_tile_fast,
    f32_to_bits,
    fpu_eltwise,
    fpu_matmul_tile,
    fpu_reduce_tile,
    is_bits_binary,
    is_bits_unary,
    matmul_tile_fast,
    pack_tile,
    products_exact,
    reduce_tile_fast,
    sfpu_binary_bits,
    sfpu_binary_values,
    sfpu_ternary,
    sfpu_unary_bits,
    sfpu_unary_values,
    stage_src_a,
    stage_src_b,
    unpack_tile,
)
from tt_hal.target.isa import Broadcast, Op, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.sizes import FACE, TILE, TILE_ELEMENTS

# Bytes of a tile of each data format, by format code: what a tile op's CB page must hold.
TILE_BYTES = np.zeros(max(DataFormat) + 1, np.int64)
for _format in DataFormat:
    TILE_BYTES[_format] = _format.tile_size

# ReduceKind is (pool << 2) | dim; SUM is pool 0, so the SUM kinds are the dims.
DIM_BITS = 2
DIM_MASK = (1 << DIM_BITS) - 1
POOL_MAX = int(ReduceKind.MAX_ROW) >> DIM_BITS


# Helpers called with a literal argument are inlined ("always"), or pass it on as a
# plain value (`== True`): numba compiles a callee once more for each literal.

@numba.njit(cache=True, nogil=True, inline="always")
def _read_cb_tile(l1_row, cb_config, cb_popped, c, cb, index, out, to_dest=False, count=TILE_ELEMENTS):
    """Unpacks tile `index` past the read pointer of circular buffer `cb` (its first
    `count` values)."""
    at = cb_page_address(cb_config[cb, 3], cb_config[cb, 1], cb_config[cb, 2], cb_popped[c, cb], index)
    unpack_tile(l1_row, at, cb_config[cb, 0], out, to_dest == True, count)  # noqa: E712 (a bool, not a literal)


@numba.njit(cache=True, nogil=True, inline="always")
def _face_row_to_dest(bits, source, src, at, source_at, step, fp32_dest):
    """A face row of Dst (bits, elements at .. at + 15) from Src elements source_at +
    k * step (src; source its bits): the bits whole into a 32-bit Dst, else stored as
    Dst stores them. One loop per Dst mode, so that each vectorizes."""
    if fp32_dest:
        for k in range(FACE):
            bits[at + k] = source[source_at + k * step]
    else:
        for k in range(FACE):
            bits[at + k] = f32_to_bits(dst_store(src[source_at + k * step], fp32_dest))


@numba.njit(cache=True, nogil=True, inline="always")
def _bits_unary_tile(function, bits):
    """bits[k] = the bits op `function` of bits[k] for a tile."""
    for k in range(TILE_ELEMENTS):
        bits[k] = sfpu_unary_bits(function, np.int64(bits[k]))


@numba.njit(cache=True, nogil=True, inline="always")
def _bits_binary_tile(function, bits, other, words):
    """bits[k] = the bits op `function` of (bits[k], other[k]) for a tile, through working
    space `words`: in place, LLVM makes an op that keeps one operand (MASK's "keep or
    zero", MAX_INT) a masked store (vpmaskmovd), which AMD cores run at a fraction of a
    plain store's speed."""
    for k in range(TILE_ELEMENTS):
        words[k] = sfpu_binary_bits(function, np.int64(bits[k]), np.int64(other[k]))
    for k in range(TILE_ELEMENTS):
        bits[k] = words[k]


# The rows of the address table (kernel_addresses) compute and the interpreter take: the
# functions they call by address (sim/indirect.py), each compiled once on its own.
ADDRESS_ROWS = 4
COMPUTE_AT, SFPU_AT, UNARY_VALUES_AT, BINARY_VALUES_AT = range(ADDRESS_ROWS)


@numba.njit(cache=True, nogil=True, _nrt=False)
def sfpu(op, function, out, first, second, parameter, fp32_dest, results, addresses):
    """SFPU_UNARY, SFPU_BINARY or SFPU_TERNARY (op) `function` (an SfpuOp) on the Dst
    tile `out`, with Dst tiles first (binary, ternary) and second (ternary) and the
    unary ops' float parameter; returns a fault code. Integer ops work on the bits;
    results: a tile of float64 working space; addresses: kernel_addresses' table (the
    float ops' loops are units of their own, called by address: linked in here, numba
    would optimize their ~70 loops a second time on a cold start)."""
    bits = out.view(np.uint32)
    if op == Op.SFPU_UNARY:
        if is_bits_unary(function):
            if not fp32_dest:
                return Fault.INTEGER_NEEDS_32BIT_DST
            # As the binary ops below: the conversions and negation in loops of their own.
            if function == SfpuOp.NEG_INT:
                _bits_unary_tile(SfpuOp.NEG_INT, bits)
            elif function == SfpuOp.I32_TO_F32:
                _bits_unary_tile(SfpuOp.I32_TO_F32, bits)
            elif function == SfpuOp.F32_TO_I32:
                _bits_unary_tile(SfpuOp.F32_TO_I32, bits)
            else:
                _bits_unary_tile(function, bits)
            return Fault.OK
        indirect.call(sfpu_unary_values, addresses[UNARY_VALUES_AT], (function, out, parameter, results))
    elif op == Op.SFPU_BINARY:
        if is_bits_binary(function):
            if not fp32_dest and function != SfpuOp.MASK:
                return Fault.INTEGER_NEEDS_32BIT_DST
            other, words = first.view(np.uint32), results.view(np.uint32)
            # A loop with the op a constant vectorizes (~10x the loop that tests the op per
            # element) but costs compile time (~0.1 s each on a cold start): one for each
            # op the compiler's kernels use most (index arithmetic, masks, compares).
            if function == SfpuOp.MASK:
                _bits_binary_tile(SfpuOp.MASK, bits, other, words)
            elif function == SfpuOp.ADD_INT:
                _bits_binary_tile(SfpuOp.ADD_INT, bits, other, words)
            elif function == SfpuOp.SUB_INT:
                _bits_binary_tile(SfpuOp.SUB_INT, bits, other, words)
            elif function == SfpuOp.MUL_INT:
                _bits_binary_tile(SfpuOp.MUL_INT, bits, other, words)
            elif function == SfpuOp.AND:
                _bits_binary_tile(SfpuOp.AND, bits, other, words)
            elif function == SfpuOp.OR:
                _bits_binary_tile(SfpuOp.OR, bits, other, words)
            elif function == SfpuOp.XOR:
                _bits_binary_tile(SfpuOp.XOR, bits, other, words)
            elif function == SfpuOp.SHL:
                _bits_binary_tile(SfpuOp.SHL, bits, other, words)
            elif function == SfpuOp.SHR:
                _bits_binary_tile(SfpuOp.SHR, bits, other, words)
            elif function == SfpuOp.SHRU:
                _bits_binary_tile(SfpuOp.SHRU, bits, other, words)
            elif function == SfpuOp.EQ_INT:
                _bits_binary_tile(SfpuOp.EQ_INT, bits, other, words)
            elif function == SfpuOp.LT_INT:
                _bits_binary_tile(SfpuOp.LT_INT, bits, other, words)
            elif function == SfpuOp.GE_INT:
                _bits_binary_tile(SfpuOp.GE_INT, bits, other, words)
            elif function == SfpuOp.LT_UINT:  # int64 arithmetic's carries and borrows
                _bits_binary_tile(SfpuOp.LT_UINT, bits, other, words)
            else:
                _bits_binary_tile(function, bits, other, words)
            return Fault.OK
        indirect.call(sfpu_binary_values, addresses[BINARY_VALUES_AT], (function, out, first, results))
    else:  # Dst[c] = Dst[a] where Dst[c] != 0 else Dst[b], moved whole
        first_bits, second_bits = first.view(np.uint32), second.view(np.uint32)
        if function == SfpuOp.WHERE:  # as MASK above: the op a constant
            for k in range(TILE_ELEMENTS):
                bits[k] = sfpu_ternary(SfpuOp.WHERE, np.int64(bits[k]), np.int64(first_bits[k]),
                                       np.int64(second_bits[k]))
        else:
            for k in range(TILE_ELEMENTS):
                bits[k] = sfpu_ternary(function, np.int64(bits[k]), np.int64(first_bits[k]), np.int64(second_bits[k]))
        return Fault.OK
    for k in range(TILE_ELEMENTS):
        out[k] = dst_store(np.float32(results[k]), fp32_dest)
    return Fault.OK


# The argument types of the functions called by address: a tile of float32 (Dst's),
# float64 working space, an int64 vector (the address table, ...).
_TILE, _WORK, _VECTOR = (types.Array(t, 1, "C") for t in (types.float32, types.float64, types.int64))
SFPU_ARGUMENTS = (types.int64, types.int64, _TILE, _TILE, _TILE, types.float32, types.boolean, _WORK, _VECTOR)
indirect.declare(sfpu, SFPU_ARGUMENTS)
UNARY_VALUES_ARGUMENTS = (types.int64, _TILE, types.float32, _WORK)
indirect.declare(sfpu_unary_values, UNARY_VALUES_ARGUMENTS)
BINARY_VALUES_ARGUMENTS = (types.int64, _TILE, _TILE, _WORK)
indirect.declare(sfpu_binary_values, BINARY_VALUES_ARGUMENTS)


@numba.njit(cache=True, nogil=True)
def matmul_block(l1_row, cb_config, cb_popped, c, cb0, cb1, in0_at, in1_at, transpose, ct, rt, kt, dst, target,
                 fidelity, fp32_dest, fpu_model, src_a, src_b, operands):
    """matmul_block: Dst tile target + i * ct + j (of `dst`, the core's) += in0 tile
    in0_at + i * kt @ in1 tile in1_at + j for i < rt, j < ct, each product as matmul_tiles
    computes it. In the fast model each input tile is unpacked and its Src slices staged
    once (ct SrcA and rt SrcB tiles for ct * rt products), as the LLK unpacks each once
    and reuses it (llk_unpack_AB_matmul); if any product of the block is not exact
    (matmul_tile_exact), every product takes matmul_tiles' path, with the same result."""
    if fpu_model is None:
        largest, smallest = np.uint32(0), np.uint32(0xFFFFFFFF)
        for i in range(rt):
            _read_cb_tile(l1_row, cb_config, cb_popped, c, cb0, in0_at + i * kt, src_b)
            largest, smallest = stage_src_b(src_b, fidelity, operands, i, largest, smallest)
        for j in range(ct):
            _read_cb_tile(l1_row, cb_config, cb_popped, c, cb1, in1_at + j, src_a)
            largest, smallest = stage_src_a(src_a, transpose, fidelity, operands, j, largest, smallest)
        if products_exact(largest, smallest):
            for i in range(rt):
                for j in range(ct):
                    accumulate_products(operands, j, i, fidelity, dst[target + i * ct + j], fp32_dest)
            return
    for i in range(rt):
        for j in range(ct):
            _read_cb_tile(l1_row, cb_config, cb_popped, c, cb0, in0_at + i * kt, src_b)
            _read_cb_tile(l1_row, cb_config, cb_popped, c, cb1, in1_at + j, src_a)
            out = dst[target + i * ct + j]
            if fpu_model is None:
                matmul_tile_fast(src_b, src_a, transpose, out, fidelity, fp32_dest, operands)
            else:
                fpu_matmul_tile(src_b, src_a, transpose, out, fidelity, fp32_dest, fpu_model)


_BLOCK_TO_TILES = Op.ADD_BLOCK - Op.ADD_TILES  # ADD_BLOCK's add_tiles, and so on
assert Op.SUB_BLOCK - Op.SUB_TILES == Op.MUL_BLOCK - Op.MUL_TILES == _BLOCK_TO_TILES
_NO_BROADCAST = int(Broadcast.NONE)  # a block's: an int, as the broadcast operand of a tile op is


# Compiled without reference counts (of its ~15 array arguments, at every call: 6% of a
# matmul's time), so what it calls on the fast model's path allocates nothing.
@numba.njit(cache=True, nogil=True, _nrt=False)
def compute(op, a, b, cc, d, e, f, g, h, q, r, c, row, l1, cb_config, cb_pushed, cb_popped, dirty, dst, acquired,
            fidelity, fp32_dest, dst_capacity, fpu_model, addresses, src_a, src_b, scratch, results, operands, fault):
    """One compute instruction (operands a .. q) of core c (registers r, L1 row `row`) on its Dst;
    returns a fault code. acquired: the kernel holds Dst (tile_regs_acquire); dirty[c]:
    Dst tiles [0, dirty) were written since the last release. fpu_model
    (FpuModel.jit_argument): None for the FPU's ops in the fast model, else the chip
    whose datapath they follow bit for bit; addresses: kernel_addresses(fpu_model).
    src_a, src_b, scratch (float32), results (float64) and operands (matmul_tile_exact's):
    working space."""
    if not acquired:
        return Fault.DST_NOT_ACQUIRED
    # (Dst tile, circular buffers read or written; -1 for none)
    if op == Op.COPY_TILE or op == Op.TRANSPOSE_WH_TILE or op == Op.UNARY_BCAST:
        target, cb0, cb1 = r[cc], a, -1
    elif op == Op.ADD_TILES or op == Op.SUB_TILES or op == Op.MUL_TILES or op == Op.MATMUL_TILES or \
            op == Op.MATMUL_BLOCK or op == Op.ADD_BLOCK or op == Op.SUB_BLOCK or op == Op.MUL_BLOCK:
        target, cb0, cb1 = r[e], a, b
    elif op == Op.REDUCE_TILE:
        target, cb0, cb1 = r[f], b, cc
    elif op == Op.SFPU_UNARY or op == Op.SFPU_BINARY or op == Op.SFPU_TERNARY:
        target, cb0, cb1 = r[b], -1, -1
    elif op == Op.FILL_TILE or op == Op.FILL_TILE_BITS:
        target, cb0, cb1 = r[a], -1, -1
    elif op == Op.PACK_TILE or op == Op.PACK_TILES:
        target, cb0, cb1 = r[a], b, -1
    else:
        return Fault.UNKNOWN_OPCODE
    fault[4], fault[5], fault[6], fault[7] = target, 0, 0, 0
    if not 0 <= target < dst_capacity:
        fault[5] = dst_capacity
        return Fault.DST_INDEX
    tiles = 1  # Dst tiles written from `target` on
    if op == Op.MATMUL_BLOCK:
        if r[g] < 1 or r[h] < 1 or r[q] < 1:
            fault[4], fault[5], fault[6] = r[g], r[h], r[q]
            return Fault.BLOCK_SHAPE
        # each dimension bounded first, so that their product cannot wrap around int64
        tiles = r[g] * r[h] if r[g] <= dst_capacity and r[h] <= dst_capacity else dst_capacity + 1
        if target + tiles > dst_capacity:
            fault[4], fault[5] = target + tiles - 1, dst_capacity
            return Fault.DST_INDEX
    elif op == Op.ADD_BLOCK or op == Op.SUB_BLOCK or op == Op.MUL_BLOCK or op == Op.PACK_TILES:
        tiles = r[d] if op == Op.PACK_TILES else r[f]
        if tiles < 0:
            fault[4] = tiles
            return Fault.BLOCK_SHAPE
        if tiles > dst_capacity - target:  # not target + tiles: that could wrap around int64
            fault[4], fault[5] = target + min(tiles, dst_capacity + 1) - 1, dst_capacity
            return Fault.DST_INDEX
    for cb in (cb0, cb1):
        if cb >= 0 and cb_config[cb, 2] == 0:
            fault[4] = cb
            return Fault.CB_UNCONFIGURED
        if cb >= 0 and cb_config[cb, 1] < TILE_BYTES[cb_config[cb, 0]]:
            fault[4], fault[5] = cb, cb_config[cb, 1]
            return Fault.CB_PAGE_TOO_SMALL
    l1_row = l1[row]
    out = dst[c, target]
    if op != Op.PACK_TILE and op != Op.PACK_TILES:
        dirty[c] = max(dirty[c], target + tiles)
    if op == Op.COPY_TILE or op == Op.UNARY_BCAST:  # data copies unpack to a 32-bit Dst directly, bits whole
        if fp32_dest and (op == Op.COPY_TILE or d == Broadcast.NONE):  # straight into the Dst tile
            _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[b], out, True)
            return Fault.OK
        scalar = op == Op.UNARY_BCAST and d == Broadcast.SCALAR  # reads element (0, 0) only
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[b], src_a, fp32_dest, 1 if scalar else TILE_ELEMENTS)
        bits, source = out.view(np.uint32), src_a.view(np.uint32)
        if op == Op.COPY_TILE or d == Broadcast.NONE:  # element by element, in any order
            for k in range(TILE_ELEMENTS):
                bits[k] = source[k] if fp32_dest else f32_to_bits(dst_store(src_a[k], fp32_dest))
        elif d == Broadcast.SCALAR:  # element (0, 0) everywhere
            value = source[0] if fp32_dest else f32_to_bits(dst_store(src_a[0], fp32_dest))
            for k in range(TILE_ELEMENTS):
                bits[k] = value
        else:  # unary_bcast repeats B's first row or first column: a face row at a time
            for face in range(4):
                for row_in_face in range(FACE):
                    at = (face * FACE + row_in_face) * FACE
                    source_at, step = broadcast_run(d, face, row_in_face)
                    _face_row_to_dest(bits, source, src_a, at, source_at, step, fp32_dest)
    elif op == Op.ADD_TILES or op == Op.SUB_TILES or op == Op.MUL_TILES or op == Op.ADD_BLOCK or \
            op == Op.SUB_BLOCK or op == Op.MUL_BLOCK:  # a block: a loop of add_tiles (...), as TT-Metal's
        block = op >= Op.ADD_BLOCK
        binary, broadcast = (op - _BLOCK_TO_TILES, _NO_BROADCAST) if block else (op, f)
        for t in range(tiles):
            _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[cc] + t, src_a)
            _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d] + t, src_b)
            out = dst[c, target + t]
            if fpu_model is not None:
                bits, a_bits, b_bits = out.view(np.uint32), src_a.view(np.uint32), src_b.view(np.uint32)
                for face in range(4):
                    for row_in_face in range(FACE):
                        at = (face * FACE + row_in_face) * FACE
                        b_at, step = broadcast_run(broadcast, face, row_in_face)
                        for k in range(at, at + FACE):
                            bits[k] = fpu_eltwise(binary != Op.MUL_TILES, binary == Op.SUB_TILES, np.int64(a_bits[k]),
                                                  np.int64(b_bits[b_at + (k - at) * step]), np.int64(bits[k]),
                                                  fidelity, fp32_dest, fpu_model)
            else:
                eltwise_tile_fast(binary, broadcast, src_a, src_b, out, fidelity, fp32_dest)
    elif op == Op.MATMUL_TILES:
        # Dst += in0 @ in1 (in1 transposed when f); in0 feeds SrcB, in1 SrcA.
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[cc], src_b)
        _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d], src_a)
        if fpu_model is None:
            matmul_tile_fast(src_b, src_a, f != 0, out, fidelity, fp32_dest, operands)
        else:
            fpu_matmul_tile(src_b, src_a, f != 0, out, fidelity, fp32_dest, fpu_model)
    elif op == Op.MATMUL_BLOCK:
        matmul_block(l1_row, cb_config, cb_popped, c, a, b, r[cc], r[d], f != 0, r[g], r[h], r[q], dst[c], target,
                     fidelity, fp32_dest, fpu_model, src_a, src_b, operands)
    elif op == Op.REDUCE_TILE:
        # ROW: each row -> column 0; COL: each column -> row 0; SCALAR: all -> (0, 0).
        # MAX combines with Dst by max (fill Dst with -inf first), SUM accumulates into
        # it; the rest of the Dst tile becomes 0.
        _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d], src_a)
        _read_cb_tile(l1_row, cb_config, cb_popped, c, cc, r[e], src_b)
        is_max, dim = a >> DIM_BITS == POOL_MAX, a & DIM_MASK
        if fpu_model is None:
            reduce_tile_fast(src_a, src_b, out, scratch, is_max, dim, fidelity, fp32_dest)
        else:
            fpu_reduce_tile(src_a, src_b, out, is_max, dim, fidelity, fp32_dest, fpu_model)
    elif op == Op.TRANSPOSE_WH_TILE:
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[b], src_a, fp32_dest)
        # Face (i, j) of Dst is face (j, i) of the tile, transposed: a face row at a time.
        bits, source = out.view(np.uint32), src_a.view(np.uint32)
        for face in range(4):
            for row_in_face in range(FACE):
                at, source_at = (face * FACE + row_in_face) * FACE, ((face % 2) * 2 + face // 2) * FACE * FACE + \
                    row_in_face
                _face_row_to_dest(bits, source, src_a, at, source_at, FACE, fp32_dest)
    elif op == Op.SFPU_UNARY or op == Op.SFPU_BINARY or op == Op.SFPU_TERNARY:
        first = target if op == Op.SFPU_UNARY else r[cc]
        second = r[d] if op == Op.SFPU_TERNARY else first
        for other in (first, second):
            if not 0 <= other < dst_capacity:
                fault[4] = other
                return Fault.DST_INDEX
        return indirect.call(sfpu, addresses[SFPU_AT], (op, a, out, dst[c, first], dst[c, second], bits_to_f32(cc),
                                                        fp32_dest, results, addresses))
    elif op == Op.FILL_TILE or op == Op.FILL_TILE_BITS:  # the bits as they are (an integer's, in a 32-bit Dst)
        pattern = (b if op == Op.FILL_TILE else r[b]) & 0xFFFFFFFF
        value = dst_store(bits_to_f32(pattern), fp32_dest)
        bits = out.view(np.uint32)
        for k in range(TILE_ELEMENTS):
            bits[k] = pattern if fp32_dest else f32_to_bits(value)
    else:  # Op.PACK_TILE (PACK_TILES) into tile r[cc] (+ j) past the write pointer
        for j in range(tiles):
            at = cb_page_address(cb_config[b, 3], cb_config[b, 1], cb_config[b, 2], cb_pushed[c, b], r[cc] + j)
            pack_tile(dst[c, target + j], l1_row, at, cb_config[b, 0])
    return Fault.OK


@functools.cache
def compute_arguments(fpu_model: int | None) -> tuple:
    """compute's argument types (in its parameters' order) for an FpuModel.jit_argument."""
    integer, flag = types.int64, types.boolean
    table = types.Array(types.int64, 2, "C")
    return ((integer,) * 10 + (_VECTOR, integer, integer, types.Array(types.uint8, 2, "C"), table, table, table,
            _VECTOR, types.Array(types.float32, 3, "C"), flag, integer, flag, integer,
            types.none if fpu_model is None else integer, _VECTOR, _TILE, _TILE, _TILE, _WORK,
            types.Array(types.uint32, 2, "C"), _VECTOR))


# The interpreter calls compute through its address (sim/indirect.py), so that it compiles
# once: linked into run_round, it would be optimized and emitted twice (seconds of a cold
# start). Two specialisations: the fast model (None) and the exact ones (an int).
indirect.declare(compute, compute_arguments(None), compute_arguments(0))


@functools.cache
def kernel_addresses(fpu_model: int | None) -> np.ndarray:
    """The address table (the *_AT rows) for an FpuModel.jit_argument, each function
    compiled or loaded from numba's cache on first use: the SFPU ops first, as compute
    may be compiling in another process meanwhile (indirect.compile_elsewhere)."""
    sfpu_at = indirect.address(sfpu, SFPU_ARGUMENTS)
    unary_at = indirect.address(sfpu_unary_values, UNARY_VALUES_ARGUMENTS)
    binary_at = indirect.address(sfpu_binary_values, BINARY_VALUES_ARGUMENTS)
    return np.array([indirect.address(compute, compute_arguments(fpu_model)), sfpu_at, unary_at, binary_at], np.int64)


# ---- tilize_block / untilize_block ----

@numba.njit(cache=True, nogil=True)
def block_element_size(fmt):
    """Bytes per element of the formats whose blocks layout_block moves (0: none)."""
    if fmt == DataFormat.float32 or fmt == DataFormat.int32 or fmt == DataFormat.uint32:
        return 4
    if fmt == DataFormat.bfloat16 or fmt == DataFormat.uint16:
        return 2
    if fmt == DataFormat.uint8:
        return 1
    return 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def face_rows(rows, rows_at, tiles, tiles_at, block, size, to_tiles):
    """tilize_block's copy (to_tiles) or its inverse between 32 rows of block * 32
    elements of `size` bytes, row-major from byte rows_at of `rows`, and `block` tiles of
    four 16 x 16 faces (TL, TR, BL, BR), each row-major, from byte tiles_at of `tiles`:
    one memmove per face row (16 elements), row by row of the block."""
    chunk = FACE * size
    at = rows_at
    for row in range(TILE):
        first = tiles_at + ((row // FACE) * 2 * FACE + row % FACE) * chunk  # the row in tile 0's left face
        for t in range(block):
            for face in range(2):
                to = first + t * TILE_ELEMENTS * size + face * FACE * chunk
                if to_tiles:
                    move_bytes(tiles, to, rows, at, chunk)
                else:
                    move_bytes(rows, at, tiles, to, chunk)
                at += chunk


@numba.njit(cache=True, nogil=True, _nrt=False)
def layout_block(op, icb, ocb, block, c, row, l1, cb_config, cb_pushed, cb_popped, acquired, dst_capacity, fault):
    """TILIZE_BLOCK or UNTILIZE_BLOCK (op) of `block` pages of core c (L1 row `row`):
    from the read pointer of `icb` to the write pointer of `ocb`, as TT-Metal's
    tilize_block(icb, block, ocb) and pack_untilize_block<block>(icb, 1, ocb): the
    caller waits for and pops the input pages, reserves and pushes the output pages.
    A row-major block is 32 rows of block * 32 elements over `block` tile-sized pages,
    so the pages of a block must not wrap around the end of either buffer; untilize
    holds the block in Dst, so block is at most its capacity. Returns a fault code."""
    fault[4], fault[5], fault[6], fault[7] = icb, ocb, block, 0
    if acquired:
        return Fault.DST_HELD
    for cb in (icb, ocb):
        if cb_config[cb, 2] == 0:
            fault[4] = cb
            return Fault.CB_UNCONFIGURED
    if block < 0:
        return Fault.CB_NEGATIVE
    fmt = cb_config[icb, 0]
    size = block_element_size(fmt)
    tile_bytes = TILE_ELEMENTS * size
    if size == 0 or cb_config[ocb, 0] != fmt or cb_config[icb, 1] != tile_bytes or cb_config[ocb, 1] != tile_bytes:
        return Fault.BLOCK_FORMAT
    if op == Op.UNTILIZE_BLOCK and block > dst_capacity:
        fault[4], fault[5] = block, dst_capacity
        return Fault.DST_INDEX
    source = cb_popped[c, icb] % cb_config[icb, 2]  # first page of the block in each buffer
    target = cb_pushed[c, ocb] % cb_config[ocb, 2]
    if source + block > cb_config[icb, 2]:
        fault[7] = source
        return Fault.CB_BLOCK_WRAPS
    if target + block > cb_config[ocb, 2]:
        fault[4], fault[7] = ocb, target
        return Fault.CB_BLOCK_WRAPS
    at = cb_config[icb, 3] + source * tile_bytes
    to = cb_config[ocb, 3] + target * tile_bytes
    rows_at, tiles_at = (at, to) if op == Op.TILIZE_BLOCK else (to, at)
    flat = row * l1.shape[1]  # move_bytes takes offsets into the whole array
    face_rows(l1, flat + rows_at, l1, flat + tiles_at, block, size, op == Op.TILIZE_BLOCK)
    return Fault.OK
