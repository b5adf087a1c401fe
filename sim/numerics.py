"""Numerics of the Tensix compute engine (numba), stated in docs/tensix.md:
- unpack: tiles go to the Src registers as bf16 / tf32: float32 tiles lose their
  13 low mantissa bits, bf16 and block-float tiles are exact;
- math, in the fast numerics (FpuModel.FAST, the default): the FPU multiplies in the
  math fidelity's phases (operand A split as hidden+4 MSBs | 3 LSBs, operand B as
  hidden+6 MSBs | 1 LSB of the bf16 mantissa), adds in float32, and Dst stores float32
  (fp32_dest_acc_en) or rounds to bf16 (nearest even); in the exact numerics
  (numerics=exact) the fpu_* functions compute the chip's datapath bit for bit
  (docs/fidelity.md#fpu-numerics);
- SFPU: float32 on the Dst tile, then stored like any Dst result; the integer ops
  work on int32 bit patterns in a 32-bit Dst;
- pack: Dst to the circular buffer's format with the packer's rounding, ties away
  from zero for bf16 and Bfp8_b (which goes through bf16 first); Bfp4_b truncates
  the Bfp8_b code; integer formats take the low bits of Dst's 32.

A tile's values are 1024 float32 in stored (face) order; FACE_INDEX maps (row,
column) to that order.
"""

from __future__ import annotations

import enum
import math

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from tt_hal.target.formats import (
    BFP4_MAGNITUDE_BITS,
    BFP8_MAGNITUDE_BITS,
    ROUND_NEAREST_AWAY,
    ROUND_NEAREST_EVEN,
    bf16_from_f32_bits,
    bfp_bits,
    bfp_code,
    bfp_decode_code,
    bfp_encode_row,
    bfp_shared_exponent,
)
from tt_hal.target.isa import Broadcast, MathFidelity, Op, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import KernelConfig
from tt_hal.target.sizes import FACE, TILE, TILE_ELEMENTS
from tt_hal.target.tiles import EXPONENT_BYTES


def _face_order() -> np.ndarray:
    """(row, column) -> index in a tile's stored (face) order."""
    index = np.empty((TILE, TILE), np.int64)
    for i in range(TILE):
        for j in range(TILE):
            index[i, j] = ((i // FACE) * 2 + j // FACE) * FACE * FACE + (i % FACE) * FACE + j % FACE
    return index


FACE_INDEX = _face_order()


# ---- Bit casts ----

@intrinsic
def bits_to_f32(typingctx, bits):
    """float32 with the low 32 bits of an integer as its bit pattern (a bitcast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def f32_to_bits(typingctx, value):
    """The bit pattern of a float32, as a non-negative int64 (a bitcast)."""
    def codegen(context, builder, signature, args):
        single = builder.fptrunc(args[0], ir.FloatType()) if isinstance(signature.args[0], types.Float) and \
            signature.args[0].bitwidth == 64 else args[0]
        return builder.zext(builder.bitcast(single, ir.IntType(32)), ir.IntType(64))
    return types.int64(value), codegen


# ---- Tile data: circular-buffer bytes <-> float32 values in face order ----

@numba.njit(cache=True, nogil=True)
def unpack_tile(row, at, fmt, out, to_dest=False, count=TILE_ELEMENTS):
    """Tile bytes at row[at:] in format `fmt` -> 1024 values (face order) as the unpacker
    hands them to the Src registers: float32 (-> tf32) and integers as float32 values. Or
    `to_dest`, straight to a 32-bit Dst (tt-metal's UnpackToDestFp32): float32 kept whole
    and integers as int32 bit patterns (unsigned formats zero-extended). Only the first
    `count` values when fewer are read (a scalar broadcast reads one)."""
    bits = out.view(np.uint32)
    if fmt == DataFormat.float32 or fmt == DataFormat.int32 or fmt == DataFormat.uint32:
        words = row[at:at + 4 * TILE_ELEMENTS].view(np.uint32)
        if fmt == DataFormat.float32:
            mask = 0xFFFFFFFF if to_dest else 0xFFFFE000
            for k in range(count):
                bits[k] = words[k] & mask
        elif to_dest:
            for k in range(count):  # a loop, not slice assignment: that one compiles a shape check's message
                bits[k] = words[k]
        else:
            for k in range(count):
                out[k] = np.float32(np.int32(words[k])) if fmt == DataFormat.int32 else np.float32(words[k])
    elif fmt == DataFormat.bfloat16:
        halves = row[at:at + 2 * TILE_ELEMENTS].view(np.uint16)
        for k in range(count):
            bits[k] = np.uint32(halves[k]) << 16
    elif fmt == DataFormat.uint16 or fmt == DataFormat.uint8:
        size = 2 if fmt == DataFormat.uint16 else 1
        for k in range(count):
            value = np.int64(row[at + size * k])
            if size == 2:
                value |= np.int64(row[at + 2 * k + 1]) << 8
            if to_dest:
                bits[k] = value
            else:
                out[k] = np.float32(value)
    else:
        magnitude_bits = BFP8_MAGNITUDE_BITS if fmt == DataFormat.bfloat8_b else BFP4_MAGNITUDE_BITS
        per_byte = 8 // (magnitude_bits + 1)
        for r in range(min(EXPONENT_BYTES, (count + FACE - 1) // FACE)):
            shared = np.int64(row[at + r])
            codes_at = at + EXPONENT_BYTES + r * FACE // per_byte
            for k in range(min(FACE, count - r * FACE)):
                bits[r * FACE + k] = bfp_bits(bfp_decode_code(row, codes_at, k, magnitude_bits), shared, magnitude_bits)


# pack_tile, fpu_matmul_tile and fpu_reduce_tile allocate working arrays, so they are
# compiled with reference counts (_nrt) whatever their caller is compiled with
# (sim/compute.compute is not: numba's callees inherit it).
@numba.njit(cache=True, nogil=True, _nrt=True)
def pack_tile(values, row, at, fmt):
    """1024 Dst values (face order) -> tile bytes in format `fmt` at row[at:], rounded as
    the packer does; integer formats take the low bits of Dst's 32 (the program casts
    floats to integers first: typecast_tile)."""
    if fmt == DataFormat.float32 or fmt == DataFormat.int32 or fmt == DataFormat.uint32:
        words, bits = row[at:at + 4 * TILE_ELEMENTS].view(np.uint32), values.view(np.uint32)
        for k in range(TILE_ELEMENTS):  # as in unpack_tile
            words[k] = bits[k]
    elif fmt == DataFormat.bfloat16:
        halves = row[at:at + 2 * TILE_ELEMENTS].view(np.uint16)
        bits = values.view(np.uint32)
        for k in range(TILE_ELEMENTS):
            halves[k] = bf16_from_f32_bits(np.int64(bits[k]), ROUND_NEAREST_AWAY)
    elif fmt == DataFormat.uint16:
        halves = row[at:at + 2 * TILE_ELEMENTS].view(np.uint16)
        bits = values.view(np.uint32)
        for k in range(TILE_ELEMENTS):
            halves[k] = bits[k] & 0xFFFF
    elif fmt == DataFormat.uint8:
        bits = values.view(np.uint32)
        for k in range(TILE_ELEMENTS):
            row[at + k] = bits[k] & 0xFF
    else:
        run = np.empty(FACE, np.int64)
        for r in range(EXPONENT_BYTES):
            for k in range(FACE):  # Bfp8_b goes through bf16 first
                run[k] = bf16_from_f32_bits(f32_to_bits(values[r * FACE + k]), ROUND_NEAREST_AWAY) << 16
            if fmt == DataFormat.bfloat8_b:
                bfp_encode_row(run, row, at + r, at + EXPONENT_BYTES + r * FACE, BFP8_MAGNITUDE_BITS,
                               ROUND_NEAREST_AWAY)
                continue
            shared = bfp_shared_exponent(run)  # Bfp4_b: the Bfp8_b code truncated to 3 magnitude bits
            row[at + r] = shared
            for k in range(FACE):
                code = bfp_code(run[k], shared, BFP8_MAGNITUDE_BITS, ROUND_NEAREST_AWAY)
                magnitude = (code & 0x7F) >> 4
                code4 = ((code >> 7) << 3) | magnitude if magnitude else 0
                slot = at + EXPONENT_BYTES + (r * FACE + k) // 2
                row[slot] = code4 if k % 2 == 0 else row[slot] | (code4 << 4)


# ---- Dst and the FPU's multiplier ----

@numba.njit(cache=True, nogil=True, inline="always")
def dst_store(value, fp32_dest):
    """A math result as Dst holds it: float32, or bf16 (nearest even)."""
    if fp32_dest:
        return value
    return bits_to_f32(bf16_from_f32_bits(f32_to_bits(value), ROUND_NEAREST_EVEN) << 16)


@numba.njit(cache=True, nogil=True, inline="always")
def _mantissa_split(value, high_bits):
    """(high, low): value's bf16 mantissa cut after `high_bits` explicit bits."""
    bits = f32_to_bits(value) & 0xFFFF0000  # Src precision for the multiplier: bf16
    high = bits & ~((1 << (23 - high_bits)) - 1) & 0xFFFFFFFF
    return bits_to_f32(high), bits_to_f32(bits) - bits_to_f32(high)


@numba.njit(cache=True, nogil=True, inline="always")
def _phases(a_high, a_low, b_high, b_low, fidelity):
    """The multiplier's phase sum: phase 0 is A's hidden bit + 4 MSBs times B's hidden
    bit + 6 MSBs; phase 1 adds A's 3 LSBs, phase 2 B's LSB, phase 3 both."""
    product = a_high * b_high
    if fidelity >= MathFidelity.HiFi2:
        product += a_low * b_high
    if fidelity >= MathFidelity.HiFi3:
        product += a_high * b_low
    if fidelity >= MathFidelity.HiFi4:
        product += a_low * b_low
    return product


@numba.njit(cache=True, nogil=True, inline="always")
def fidelity_product(src_a, src_b, fidelity):
    """src_a * src_b as the multiplier computes it in `fidelity` phases (MathFidelity:
    LoFi, HiFi2..4). Infinities, NaN and zeros follow IEEE (signed zero included).
    Selects, not early returns, so that loops over a tile vectorize."""
    a_high, a_low = _mantissa_split(src_a, 4)
    b_high, b_low = _mantissa_split(src_b, 6)
    phases = _phases(a_high, a_low, b_high, b_low, fidelity)
    special = not (math.isfinite(src_a) and math.isfinite(src_b)) or src_a == 0 or src_b == 0
    return np.float32(src_a) * np.float32(src_b) if special else phases


@numba.njit(cache=True, nogil=True, inline="always")
def _widen(bits, largest, smallest):
    """(largest, smallest) of the magnitudes seen, with float32 bits `bits` (uint32)
    seen too; a zero wraps to the top of `smallest`, so zeros are ignored there.
    Selects, not min and max calls, so that the loops calling it vectorize."""
    magnitude = bits & np.uint32(0x7FFFFFFF)
    below = np.uint32(magnitude - np.uint32(1))
    return (magnitude if magnitude > largest else largest), (below if below < smallest else smallest)


@numba.njit(cache=True, nogil=True, inline="always")
def products_exact(largest, smallest):
    """True if every value seen (_widen) is 0 or finite of magnitude in [2^-62, 2^62):
    then no product of two such values, nor any phase of it, overflows or is denormal."""
    return largest < np.uint32((127 + 62) << 23) and smallest >= np.uint32(((127 - 62) << 23) - 1)


# Masks of a bf16 operand's bits (float32 bit patterns) for the multiplier's high
# slices: SrcA's hidden bit + 4 MSBs, SrcB's hidden bit + 6 MSBs (SRC_BF16: all of it).
SRC_A_HIGH, SRC_B_HIGH = 0xFFF80000, 0xFFFE0000
LANES = 8  # float32 lanes of the host's vectors (AVX2; LLVM splits them where narrower)


def _face_row_at(builder, row, face_column):
    """Offset of (row, 16 * face_column) of a tile in face order: the first element of
    a 16-wide face row (IR; row and face_column are i64)."""
    i64 = ir.IntType(64)
    face = builder.add(builder.mul(builder.lshr(row, i64(4)), i64(2)), face_column)
    return builder.add(builder.mul(face, i64(FACE * FACE)), builder.mul(builder.and_(row, i64(FACE - 1)), i64(FACE)))


DST_TILES = KernelConfig(dst_full_sync_en=True).dst_capacity()  # Dst's size: the most any config uses
# Rows of the matmul operand array (float32 bits, face order), in groups of DST_TILES (a
# matmul_block's output tiles, so at most that many of either input): SrcA's slices
# [k, j] of each SrcA tile, SrcB's [i, k] of each SrcB tile, then one row of sums.
A1, A2, B1, B2, TOTAL = (group * DST_TILES for group in range(5))
OPERAND_ROWS = TOTAL + 1


@intrinsic
def tile_products(typingctx, operands, terms, a, b):
    """operands[TOTAL][i, j] = the sum over k = 0..31, in that order and starting from
    +0, in float32, of a1[k, j] * b1[i, k] (terms == 1) or of a1[k, j] * b1[i, k] +
    a2[k, j] * b2[i, k] (terms == 2), with a1 = operands[A1 + a], b1 = operands[B1 + b]
    and so on: float32 bit patterns of tiles in face order, in a C-contiguous uint32
    array (OPERAND_ROWS, 1024), one
    array and no row views (numba counts references to each view atomically). Each
    product (and two-product term) must be exact in float32 (the caller's operands
    are): the fused multiply-adds then round as a product and a sum would. Vectors of
    8 lanes over j, two rows i at a time, so that numba's missing alias facts cannot
    keep LLVM from vectorizing (it does not vectorize the plain loops)."""
    if not (isinstance(operands, types.Array) and operands.dtype == types.uint32 and operands.layout == "C"
            and isinstance(a, types.Integer) and isinstance(b, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        i64, f32 = ir.IntType(64), ir.FloatType()
        vector = ir.VectorType(f32, LANES)
        data = builder.bitcast(context.make_array(signature.args[0])(context, builder, args[0]).data, f32.as_pointer())
        a_tile, b_tile = (builder.sext(arg, i64) if arg.type.width < 64 else arg for arg in args[2:4])
        a1_at, a2_at, b1_at, b2_at, total_at = (
            builder.gep(data, [builder.mul(builder.add(i64(row), tile), i64(TILE_ELEMENTS))])
            for row, tile in ((A1, a_tile), (A2, a_tile), (B1, b_tile), (B2, b_tile), (TOTAL, i64(0))))
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vector, [vector] * 3),
                                             f"llvm.fma.v{LANES}f32")
        splat_mask = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)

        def vector_at(base, offset):
            return builder.bitcast(builder.gep(base, [offset]), vector.as_pointer())

        def splat(base, offset):
            one = builder.insert_element(ir.Constant(vector, ir.Undefined), builder.load(builder.gep(base, [offset])),
                                         ir.IntType(32)(0))
            return builder.shuffle_vector(one, ir.Constant(vector, ir.Undefined), splat_mask)

        # (i - 2p, vector v over j) accumulators; LLVM keeps them in registers
        sums = [[cgutils.alloca_once(builder, vector) for _ in range(TILE // LANES)] for _ in range(2)]
        vector_offsets = [(v * LANES // FACE) * FACE * FACE + v * LANES % FACE for v in range(TILE // LANES)]
        two_terms = builder.icmp_signed("==", args[1], ir.Constant(args[1].type, 2))
        with cgutils.for_range(builder, i64(TILE // 2)) as pair:
            rows = [builder.add(builder.mul(pair.index, i64(2)), i64(r)) for r in range(2)]
            for row_sums in sums:
                for at in row_sums:
                    builder.store(ir.Constant(vector, [0.0] * LANES), at)
            with cgutils.for_range(builder, i64(TILE)) as loop:
                k = loop.index
                a_row = _face_row_at(builder, k, i64(0))
                a_offsets = [builder.add(a_row, i64(offset)) for offset in vector_offsets]
                b_offsets = [builder.add(_face_row_at(builder, row, builder.lshr(k, i64(4))),
                                         builder.and_(k, i64(FACE - 1))) for row in rows]
                with builder.if_else(two_terms) as (hifi3, one_term):
                    with hifi3:
                        scales1 = [splat(b1_at, offset) for offset in b_offsets]
                        scales2 = [splat(b2_at, offset) for offset in b_offsets]
                        for v, offset in enumerate(a_offsets):
                            x1 = builder.load(vector_at(a1_at, offset), align=4)
                            x2 = builder.load(vector_at(a2_at, offset), align=4)
                            for r in range(2):
                                term = builder.call(fma, [scales1[r], x1, builder.fmul(scales2[r], x2)])
                                builder.store(builder.fadd(builder.load(sums[r][v]), term), sums[r][v])
                    with one_term:
                        scales1 = [splat(b1_at, offset) for offset in b_offsets]
                        for v, offset in enumerate(a_offsets):
                            x1 = builder.load(vector_at(a1_at, offset), align=4)
                            for r in range(2):
                                builder.store(builder.call(fma, [scales1[r], x1, builder.load(sums[r][v])]), sums[r][v])
            for r, row in enumerate(rows):
                row_at = _face_row_at(builder, row, i64(0))
                for v, offset in enumerate(vector_offsets):
                    builder.store(builder.load(sums[r][v]), vector_at(total_at, builder.add(row_at, i64(offset))),
                                  align=4)
        return context.get_dummy_value()
    return types.void(operands, terms, a, b), codegen


def _transposed_faces() -> np.ndarray:
    """Face-order index of element (j, i) at the face-order index of (i, j)."""
    index = np.empty(TILE_ELEMENTS, np.int64)
    index[FACE_INDEX] = FACE_INDEX.T
    return index


FACE_TRANSPOSE = _transposed_faces()


@numba.njit(cache=True, nogil=True, inline="always")
def stage_src_a(in1, transpose, fidelity, operands, tile, largest, smallest):
    """SrcA's slices of tile `in1` (transposed when `transpose`) for the multiplier at
    `fidelity` into operands[A1 + tile] (and A2 + tile at HiFi3: the high slice);
    returns the range seen (_widen) with in1's values added."""
    a_mask = SRC_A_HIGH if fidelity == MathFidelity.LoFi else SRC_BF16
    row = A1 + tile
    if transpose:
        for x in range(TILE_ELEMENTS):
            bits = np.uint32(f32_to_bits(in1[FACE_TRANSPOSE[x]]))
            operands[row, x] = bits & a_mask
            largest, smallest = _widen(bits, largest, smallest)
    else:
        for x in range(TILE_ELEMENTS):
            bits = np.uint32(f32_to_bits(in1[x]))
            operands[row, x] = bits & a_mask
            largest, smallest = _widen(bits, largest, smallest)
    if fidelity == MathFidelity.HiFi3:
        for x in range(TILE_ELEMENTS):
            operands[A2 + tile, x] = operands[row, x] & SRC_A_HIGH
    return largest, smallest


@numba.njit(cache=True, nogil=True, inline="always")
def stage_src_b(in0, fidelity, operands, tile, largest, smallest):
    """SrcB's slices of tile `in0` into operands[B1 + tile] (and B2 + tile at HiFi3: the
    low slice); returns the range seen with in0's values added."""
    b_mask = SRC_BF16 if fidelity == MathFidelity.HiFi4 else SRC_B_HIGH
    row = B1 + tile
    for x in range(TILE_ELEMENTS):
        bits = np.uint32(f32_to_bits(in0[x]))
        operands[row, x] = bits & b_mask
        largest, smallest = _widen(bits, largest, smallest)
    if fidelity == MathFidelity.HiFi3:
        for x in range(TILE_ELEMENTS):
            operands[B2 + tile, x] = f32_to_bits(bits_to_f32(f32_to_bits(in0[x]) & SRC_BF16)
                                                 - bits_to_f32(operands[row, x]))
    return largest, smallest


@numba.njit(cache=True, nogil=True, inline="always")
def accumulate_products(operands, a, b, fidelity, out, fp32_dest):
    """Dst tile `out` += staged SrcA tile a times staged SrcB tile b (tile_products), stored once."""
    tile_products(operands, 2 if fidelity == MathFidelity.HiFi3 else 1, a, b)
    for x in range(TILE_ELEMENTS):
        out[x] = dst_store(out[x] + bits_to_f32(operands[TOTAL, x]), fp32_dest)


@numba.njit(cache=True, nogil=True)
def matmul_tile_exact(in0, in1, transpose, out, fidelity, fp32_dest, operands):
    """Dst += in0 @ in1 if the tiles' products are exact (products_exact; else False,
    Dst untouched): the scalar path's float32 sums over k = 0..31, with each phase sum
    replaced by the single product it equals exactly there. The bf16 parts a = ah + al
    (SrcA: 4 + 3 mantissa bits) and b = bh + bl (SrcB: 6 + 1) have few enough bits that
    ah*bh + al*bh = a*bh, + ah*bl stays exact, and + al*bl = a*b: LoFi is ah*bh, HiFi2
    a*bh, HiFi3 a*bh + ah*bl, HiFi4 a*b, each operand a mask of its bits. A sum that
    starts at +0 cannot see the sign of a zero product. The loops that mask the
    operands also find their range. operands: (OPERAND_ROWS, 1024) uint32 of working
    space (the caller's, so that the tile path allocates nothing)."""
    largest, smallest = stage_src_a(in1, transpose, fidelity, operands, 0, np.uint32(0), np.uint32(0xFFFFFFFF))
    largest, smallest = stage_src_b(in0, fidelity, operands, 0, largest, smallest)
    if not products_exact(largest, smallest):
        return False
    accumulate_products(operands, 0, 0, fidelity, out, fp32_dest)
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def broadcast_run(broadcast, face, row):
    """(index, step) of B's elements for row `row` of face `face` of a tile (stored,
    face order: element k of the face row is B's index + k * step): its own, its first
    row's (Broadcast.ROW: row 0 of the face above in the first face row), first
    column's (COL: column 0 of the first face of this face row) or (0, 0) (SCALAR)."""
    if broadcast == Broadcast.ROW:
        return (face % 2) * FACE * FACE, 1
    if broadcast == Broadcast.COL:
        return ((face // 2) * 2 * FACE + row) * FACE, 0
    if broadcast == Broadcast.SCALAR:
        return 0, 0
    return (face * FACE + row) * FACE, 1


@numba.njit(cache=True, nogil=True, inline="always")
def _eltwise_run(op, src_a, src_b, out, at, count, b_at, b_step, fidelity, fp32_dest):
    """eltwise_tile_fast's elements at .. at + count - 1, B's at b_at + k * b_step."""
    if op == Op.ADD_TILES:
        for k in range(count):
            out[at + k] = dst_store(src_a[at + k] + src_b[b_at + k * b_step], fp32_dest)
    elif op == Op.SUB_TILES:
        for k in range(count):
            out[at + k] = dst_store(src_a[at + k] - src_b[b_at + k * b_step], fp32_dest)
    else:
        for k in range(count):
            out[at + k] = dst_store(fidelity_product(src_a[at + k], src_b[b_at + k * b_step], fidelity), fp32_dest)


@numba.njit(cache=True, nogil=True)
def eltwise_tile_fast(op, broadcast, src_a, src_b, out, fidelity, fp32_dest):
    """Dst = a + b, a - b or a * b element by element in the fast model, B's element
    the same one, its first row's (Broadcast.ROW), first column's (COL) or (0, 0)
    (SCALAR): float32 arithmetic on the Src values, the product in fidelity phases,
    stored once. Unbroadcast, the tile in one run (B's stride a constant 1: plain
    vector loads); else a face row (16 elements) at a time, with B's run for it (its
    row of the face or one value): loops that vectorize."""
    if broadcast == Broadcast.NONE:
        _eltwise_run(op, src_a, src_b, out, 0, TILE_ELEMENTS, 0, 1, fidelity, fp32_dest)
        return
    for face in range(4):
        for r in range(FACE):
            at = (face * FACE + r) * FACE
            b_at, b_step = broadcast_run(broadcast, face, r)
            _eltwise_run(op, src_a, src_b, out, at, FACE, b_at, b_step, fidelity, fp32_dest)


@numba.njit(cache=True, nogil=True)
def matmul_tile_fast(in0, in1, transpose, out, fidelity, fp32_dest, operands):
    """Dst += in0 @ in1 (in1 transposed when `transpose`) in the fast model: each
    element's 32 fidelity products summed in float32 over k = 0..31, added to Dst and
    stored once (dst_store). in0 feeds SrcB, in1 SrcA; operands: matmul_tile_exact's."""
    if matmul_tile_exact(in0, in1, transpose, out, fidelity, fp32_dest, operands):
        return
    for i in range(TILE):
        for j in range(TILE):
            total = np.float32(0.0)
            for k in range(TILE):
                a = in1[FACE_INDEX[j, k]] if transpose else in1[FACE_INDEX[k, j]]
                total += fidelity_product(a, in0[FACE_INDEX[i, k]], fidelity)
            at = FACE_INDEX[i, j]
            out[at] = dst_store(out[at] + total, fp32_dest)


@numba.njit(cache=True, nogil=True, inline="always")
def _fold(total, value, is_max):
    """A reduction's step: the max (Python's: the first unless the second is larger) or the sum."""
    return max(total, value) if is_max else total + value


FACE_ROW = 2 * FACE * FACE  # elements of a row of faces (faces 0, 1 or 2, 3 of a tile)


@numba.njit(cache=True, nogil=True, inline="always")
def _reduced_at(n, dim):
    """Where result n of a tile reduction goes in Dst (face order): row n of column 0
    (ROW), column n of row 0 (COL; SCALAR's one result is n = 0)."""
    if dim == ReduceKind.SUM_ROW:
        return (n // FACE) * FACE_ROW + (n % FACE) * FACE
    return (n // FACE) * FACE * FACE + n % FACE


@numba.njit(cache=True, nogil=True)
def reduce_tile_fast(src, scaler, out, scratch, is_max, dim, fidelity, fp32_dest):
    """reduce_tile of `src` into Dst tile `out` in the fast model (fpu_reduce_tile's
    arguments; `scratch` a tile of working space, and `src` is overwritten): every value
    times the scaler tile's first element in fidelity phases (MAX: whole, GMPOOL has no
    phases), summed in float32 or maxed in order (a row's columns left to right, a
    column's rows top to bottom, the whole tile row by row), then combined with Dst and
    stored once; the rest of the tile becomes 0. The products are one loop over the
    tile; rows (columns) accumulate side by side in src[:32], each in its order, a face
    row (column) of 16 at a time at positions computed from the face layout, not read
    from FACE_INDEX; Dst is zeroed in one loop and its 32 results written after."""
    phases = MathFidelity.HiFi4 if is_max else fidelity
    factor = scaler[0]
    for k in range(TILE_ELEMENTS):
        scratch[k] = fidelity_product(src[k], factor, phases)
    if dim == ReduceKind.SUM_ROW or dim == ReduceKind.SUM_COL:
        for n in range(TILE):
            src[n] = np.float32(-math.inf) if is_max else np.float32(0.0)
        for m in range(TILE):  # column m of every row (ROW), row m of every column (COL)
            if dim == ReduceKind.SUM_ROW:
                at, step, other = (m // FACE) * FACE * FACE + m % FACE, FACE, FACE_ROW
            else:
                at, step, other = (m // FACE) * FACE_ROW + (m % FACE) * FACE, 1, FACE * FACE
            for n in range(FACE):
                src[n] = _fold(src[n], scratch[at + n * step], is_max)
                src[FACE + n] = _fold(src[FACE + n], scratch[at + other + n * step], is_max)
    else:
        total = np.float32(-math.inf) if is_max else np.float32(0.0)
        for k in range(TILE):
            for j in range(TILE):
                total = _fold(total, scratch[FACE_INDEX[k, j]], is_max)
        src[0] = total
    results = 1 if dim == ReduceKind.SUM_SCALAR else TILE
    for n in range(results):  # combined with Dst, kept in src[TILE:] while Dst is zeroed
        src[TILE + n] = dst_store(_fold(out[_reduced_at(n, dim)], src[n], is_max), fp32_dest)
    for k in range(TILE_ELEMENTS):
        out[k] = 0.0
    for n in range(results):
        out[_reduced_at(n, dim)] = src[TILE + n]


# ---- The FPU datapath bit for bit (the `exact` numerics) ----
# Facts from tt-isa-documentation (MVMUL.md, ELWADD.md, ELWMUL.md: Src values are 19
# bits, the multipliers take 5 bits of SrcA and 7 of SrcB per fidelity phase, denormals
# flush to zero) and ttsim's datapath (src/tensix.cpp: mvmul, elwadd, elwmul and
# fpu_accum_normalize_encode), which Tenstorrent keeps bit-exact to silicon. Values are
# float32 bit patterns in int64; Src is read BF16-style (its low 16 bits dropped), as
# Wormhole's FPU reads a Float32 or Float16_b SrcA format. A term is (sign, exponent,
# mantissa): a mantissa of 2^23 at exponent E is 2^(E - 127).


class FpuModel(enum.IntEnum):
    """How a device computes FPU ops: `FAST` is float32 arithmetic on the fidelity
    phases' products (numerics=fast); the others the datapath bit for bit
    (numerics=exact), which differs between the chips in one renormalisation."""

    FAST = 0
    WORMHOLE = 1  # renormalises a result of exactly -1 unit 27 binades too high (ttsim)
    BLACKHOLE = 2

    def jit_argument(self) -> int | None:
        """The model as the interpreter takes it: FAST as None, which numba compiles as
        its own specialisation with the exact model's branches pruned, so that a run
        in the fast numerics never compiles the exact datapath (seconds of a cold start)."""
        return None if self is FpuModel.FAST else int(self)


SRC_BF16 = 0xFFFF0000


@numba.njit(cache=True, nogil=True, inline="always")
def fidelity_phases(fidelity):
    """Phases the LLK runs: LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4 (MathFidelity's values)."""
    return max(fidelity, 1)


@numba.njit(cache=True, nogil=True, inline="always")
def _exponent_adjust(phase):
    """The product exponent's rebias for the phase's mantissa slices: SrcA's low slice
    sits 5 bits, SrcB's 7 bits below the high one."""
    return -127 - (5 if phase & 1 else 0) - (7 if phase & 2 else 0)


@numba.njit(cache=True, nogil=True, inline="always")
def fpu_slice_a(bits, phase):
    """SrcA's 5 mantissa bits the multiplier takes in `phase`: hidden bit + 4 MSBs, or
    the next 5 (bf16's 3 LSBs, then zeros)."""
    man = ((bits >> 13) & 0x3FF) | 0x400
    return (man >> 1) & 31 if phase & 1 else man >> 6


@numba.njit(cache=True, nogil=True, inline="always")
def fpu_slice_b(bits, phase):
    """SrcB's 7 mantissa bits of `phase`: hidden bit + 6 MSBs, or the last 4 shifted up 3."""
    man = ((bits >> 13) & 0x3FF) | 0x400
    return (man & 15) << 3 if phase & 2 else man >> 4


@numba.njit(cache=True, nogil=True, inline="always")
def fpu_product(a, b, phase):
    """One multiplier lane: (sign, exponent, 12-bit mantissa) of a's and b's slices; an
    operand with a zero exponent (zero, denormal) makes no product: (0, 0, 0)."""
    if (a & 0x7F800000) == 0 or (b & 0x7F800000) == 0:
        return 0, 0, 0
    exponent = ((a >> 23) & 0xFF) + ((b >> 23) & 0xFF) + _exponent_adjust(phase)
    return ((a ^ b) >> 31) & 1, exponent, fpu_slice_a(a, phase) * fpu_slice_b(b, phase)


@numba.njit(cache=True, nogil=True)
def fpu_group_sum(signs, exponents, mantissas, first):
    """Lanes first..first+7 summed as the datapath does: each product aligned to the
    group's largest exponent on the 12-bit grid, rounding half up, then added as
    integers. Returns the group's term, its mantissa scaled to 2^23 = 1."""
    top = exponents[first]
    for k in range(first + 1, first + 8):
        top = max(top, exponents[k])
    if top <= 0:
        return 0, 0, 0
    total = 0
    for k in range(first, first + 8):
        shift = min(top - exponents[k], 30)
        man = ((mantissas[k] << 1) + (1 << shift)) >> (shift + 1)
        total += -man if signs[k] else man
    return (1 if total < 0 else 0), top, abs(total) << 13


@numba.njit(cache=True, nogil=True, inline="always")
def _align_term(sign, exponent, man, top, fp32_dest):
    """A term shifted to exponent `top`, rounding half up in its signed value; a 16-bit
    Dst then keeps 11 bits of it (the add happens at Dst's precision)."""
    if exponent < top:
        shift = top - exponent
        man = (man + (1 << (shift - 1)) - sign) >> shift if shift < 31 else 0
    if not fp32_dest:
        man = (man + (1 << 12) - sign) & ~0x1FFF
    return man


@numba.njit(cache=True, nogil=True, inline="always")
def _bit_length(x):
    """Bits of a non-negative integer below 2^53 (frexp is exact there)."""
    return math.frexp(float(x))[1]


@numba.njit(cache=True, nogil=True)
def fpu_accumulate(s0, e0, m0, s1, e1, m1, dst, fp32_dest, model):
    """Dst's new bits after adding two terms to Dst (`dst`, float32 bits; a bf16 Dst's
    value has its low 16 bits zero): the three aligned to the largest exponent, Dst's
    mantissa rounding half away, added, renormalised and rounded half away to Dst's
    precision. Underflow and cancellation give +0, overflow an infinity (saturation)."""
    sign = (dst >> 31) & 1
    dst_exponent = (dst >> 23) & 0xFF
    dst_man = (dst & 0x7FFFFF) | 0x800000 if dst_exponent else 0
    top = max(max(e0, e1), dst_exponent)
    if top <= 0:
        return 0
    m0 = _align_term(s0, e0, m0, top, fp32_dest)
    m1 = _align_term(s1, e1, m1, top, fp32_dest)
    if dst_exponent < top:
        shift = top - dst_exponent
        dst_man = (dst_man + (1 << (shift - 1))) >> shift if shift < 31 else 0
    if not fp32_dest:
        dst_man = (dst_man + (1 << 12)) & ~0x1FFF
    man = dst_man + (m0 if s0 == sign else -m0) + (m1 if s1 == sign else -m1)
    if man < 0:
        man, sign = -man, sign ^ 1
    if man == 0:
        return 0
    shift = 24 - _bit_length(man)  # left shift that puts the leading 1 at bit 23
    if model == FpuModel.WORMHOLE and sign and man == 1:
        shift -= 27  # Wormhole counts the leading sign bits of -1 wrongly (ttsim)
    top -= shift
    if not fp32_dest:
        shift -= 16
    man = (man + (1 << (-shift - 1))) >> -shift if shift < 0 else man << shift
    if not fp32_dest:
        man <<= 16
    if man & 0x1000000:
        top += 1
    if top <= 0:
        return 0
    if top >= 255:
        return (sign << 31) | (255 << 23)
    return (sign << 31) | (top << 23) | (man & 0x7FFFFF)


@numba.njit(cache=True, nogil=True)
def _lane_fields(bits, fields):
    """fields[:, x, k] of SrcB-style bits (x, k): live (exponent not 0), sign, exponent,
    SrcA's two mantissa slices and SrcB's two (phase bit clear, set), so that a tile's
    MVMULs need not cut each operand 32 times."""
    for x in range(TILE):
        for k in range(TILE):
            value = bits[x, k] & SRC_BF16
            fields[0, x, k] = 1 if value & 0x7F800000 else 0
            fields[1, x, k] = (value >> 31) & 1
            fields[2, x, k] = (value >> 23) & 0xFF
            fields[3, x, k], fields[4, x, k] = fpu_slice_a(value, 0), fpu_slice_a(value, 1)
            fields[5, x, k], fields[6, x, k] = fpu_slice_b(value, 0), fpu_slice_b(value, 2)


@numba.njit(cache=True, nogil=True, _nrt=True)
def fpu_matmul_tile(in0, in1, transpose, out, fidelity, fp32_dest, model):
    """Dst += in0 @ in1 (in1 transposed when `transpose`) as matmul_tiles's MVMULs
    compute it: for each fidelity phase, each Dst element takes the MVMUL of k = 0..15,
    then that of k = 16..31, each rounding into Dst (tt-llk's matmul MOP). in0 feeds
    SrcB, in1 SrcA. The lanes are fpu_product's, from fields cut once per tile."""
    a = np.empty((TILE, TILE), np.int64)  # [j, k]: SrcA's column j
    b = np.empty((TILE, TILE), np.int64)  # [i, k]: SrcB's row i
    for x in range(TILE):
        for k in range(TILE):
            a[x, k] = f32_to_bits(in1[FACE_INDEX[x, k]] if transpose else in1[FACE_INDEX[k, x]])
            b[x, k] = f32_to_bits(in0[FACE_INDEX[x, k]])
    fa = np.empty((7, TILE, TILE), np.int64)
    fb = np.empty((7, TILE, TILE), np.int64)
    _lane_fields(a, fa)
    _lane_fields(b, fb)
    bits = out.view(np.uint32)
    mask = 0xFFFFFFFF if fp32_dest else SRC_BF16
    signs = np.empty(16, np.int64)
    exponents = np.empty(16, np.int64)
    mantissas = np.empty(16, np.int64)
    for i in range(TILE):
        for j in range(TILE):
            at = FACE_INDEX[i, j]
            dst = np.int64(bits[at]) & mask
            for phase in range(fidelity_phases(fidelity)):
                adjust = _exponent_adjust(phase)
                slice_a, slice_b = 4 if phase & 1 else 3, 6 if phase & 2 else 5
                for half in range(2):
                    for lane in range(16):
                        k = 16 * half + lane
                        live = fa[0, j, k] & fb[0, i, k]
                        signs[lane] = (fa[1, j, k] ^ fb[1, i, k]) * live
                        exponents[lane] = (fa[2, j, k] + fb[2, i, k] + adjust) * live
                        mantissas[lane] = fa[slice_a, j, k] * fb[slice_b, i, k] * live
                    s0, e0, m0 = fpu_group_sum(signs, exponents, mantissas, 0)
                    s1, e1, m1 = fpu_group_sum(signs, exponents, mantissas, 8)
                    dst = fpu_accumulate(s0, e0, m0, s1, e1, m1, dst, fp32_dest, model)
            bits[at] = dst


@numba.njit(cache=True, nogil=True)
def fpu_add(a, b, fp32_dest, model):
    """ELWADD of SrcA value a and SrcB value b (bits; ELWSUB flips b's sign first) into
    a Dst that does not accumulate: the smaller operand's 11-bit mantissa aligned to the
    larger's exponent rounding half up (gone past 11 places), added as integers, then
    rounded into Dst as fpu_accumulate does."""
    a, b = a & SRC_BF16, b & SRC_BF16
    a = a if a & 0x7F800000 else 0  # zero and denormal operands are zero
    b = b if b & 0x7F800000 else 0
    if (a & 0x7FFFFFFF) < (b & 0x7FFFFFFF):
        a, b = b, a
    a_exponent, b_exponent = (a >> 23) & 0xFF, (b >> 23) & 0xFF
    a_man = ((a >> 13) & 0x3FF) | 0x400 if a else 0
    b_man = ((b >> 13) & 0x3FF) | 0x400 if b else 0
    if b_exponent < a_exponent:
        shift = a_exponent - b_exponent
        b_man = (b_man + (1 << (shift - 1))) >> shift if shift < 12 else 0
    sign = (a >> 31) & 1
    man = a_man + b_man if sign == (b >> 31) & 1 else a_man - b_man
    return fpu_accumulate(sign, a_exponent, man << 13, 0, 0, 0, 0, fp32_dest, model)


@numba.njit(cache=True, nogil=True)
def fpu_mul(a, b, dst, phase, fp32_dest, model):
    """ELWMUL of a and b (bits) in one fidelity phase, added to Dst (`dst`): ELWMUL
    always accumulates, so mul_tiles runs one per phase into the same Dst value."""
    sign, exponent, man = fpu_product(a & SRC_BF16, b & SRC_BF16, phase)
    if exponent <= 0:
        sign, exponent, man = 0, 0, 0
    return fpu_accumulate(sign, exponent, man << 13, 0, 0, 0, dst, fp32_dest, model)


@numba.njit(cache=True, nogil=True)
def fpu_eltwise(add, subtract, a, b, dst, fidelity, fp32_dest, model):
    """add/sub/mul_tiles' Dst bits for one element: one ELWADD or ELWSUB (LoFi only: the
    LLK runs no phases for them), or one ELWMUL per fidelity phase onto Dst's bits `dst`."""
    if add:
        return fpu_add(a, b ^ 0x80000000 if subtract else b, fp32_dest, model)
    dst &= 0xFFFFFFFF if fp32_dest else SRC_BF16
    for phase in range(fidelity_phases(fidelity)):
        dst = fpu_mul(a, b, dst, phase, fp32_dest, model)
    return dst


# reduce_tile as tt-llk's _llk_math_reduce_ issues it (Wormhole): per face, GAPOOL (one
# per fidelity phase) or GMPOOL, SrcA the face (transposed by the unpacker for ROW), SrcB
# the scaler tile's face, row 0 used. ROW then moves the Dst row through SrcB to
# transpose it (MOVD2B keeps bf16 of a 32-bit Dst) and writes it back with ELWADD.
# SCALAR pools the faces' columns into Dst row 4, moves that row through SrcB into
# SrcA's column 0 and pools it once more into element (0, 0).

POOL_CLEARED = 0xFFFFFFFF  # a ZEROACC'd Dst row as GMPOOL reads it: all ones, below -inf


@numba.njit(cache=True, nogil=True)
def fpu_gapool(a, b, dst, fidelity, fp32_dest, model):
    """One face's GAPOOLs into one Dst element (`dst`, bits), one per fidelity phase:
    Dst += the 16 lanes' SrcA a[k] times SrcB b[k] (bits), summed in two groups of 8
    as in MVMUL (GAPOOL is MVMUL's datapath with 4 Dst rows)."""
    signs = np.empty(16, np.int64)
    exponents = np.empty(16, np.int64)
    mantissas = np.empty(16, np.int64)
    dst &= 0xFFFFFFFF if fp32_dest else SRC_BF16
    for phase in range(fidelity_phases(fidelity)):
        for k in range(16):
            signs[k], exponents[k], mantissas[k] = fpu_product(a[k] & SRC_BF16, b[k] & SRC_BF16, phase)
        s0, e0, m0 = fpu_group_sum(signs, exponents, mantissas, 0)
        s1, e1, m1 = fpu_group_sum(signs, exponents, mantissas, 8)
        dst = fpu_accumulate(s0, e0, m0, s1, e1, m1, dst, fp32_dest, model)
    return dst


@numba.njit(cache=True, nogil=True, inline="always")
def _pool_order(sign, exponent, man):
    """GMPOOL's comparison: sign-magnitude on (9-bit exponent, 10-bit mantissa)."""
    magnitude = (exponent << 10) + man
    return -magnitude if sign else magnitude


@numba.njit(cache=True, nogil=True)
def fpu_gmpool(a, b, dst, fp32_dest):
    """One face's GMPOOL into one Dst element (bits): the largest of Dst and the 16 SrcA
    values a[k], each scaled by the power of two of SrcB b[k]'s exponent (a zero
    exponent makes the lane the smallest value). SrcA keeps 7 mantissa bits and its
    denormals are +0; Dst is read and written with 7 (bf16) or 10 (TF32) mantissa bits."""
    kept = 0x3FF if fp32_dest else 0x3F8
    sign, exponent, man = (dst >> 31) & 1, ((dst >> 23) & 0xFF) + 127, (dst >> 13) & kept
    best = _pool_order(sign, exponent, man)
    for k in range(16):
        a_exponent, b_exponent = (a[k] >> 23) & 0xFF, (b[k] >> 23) & 0xFF
        if b_exponent == 0:
            s, e, m = 1, 0x1FF, 0x3FF
        elif a_exponent == 0:
            s, e, m = 0, 0, 0
        else:
            s, e, m = (a[k] >> 31) & 1, a_exponent + b_exponent, (a[k] >> 13) & 0x3F8
        order = _pool_order(s, e, m)
        if order >= best:
            best, sign, exponent, man = order, s, e, m
    if exponent == 0:
        return 0
    return (sign << 31) | (((exponent - 127) & 0xFF) << 23) | ((man & kept) << 13)


@numba.njit(cache=True, nogil=True, inline="always")
def _pool(is_max, a, b, dst, fidelity, fp32_dest, model):
    return fpu_gmpool(a, b, dst, fp32_dest) if is_max else fpu_gapool(a, b, dst, fidelity, fp32_dest, model)


@numba.njit(cache=True, nogil=True, _nrt=True)
def fpu_reduce_tile(src, scaler, out, is_max, dim, fidelity, fp32_dest, model):
    """reduce_tile of `src` (face order, as unpacked) with the scaler tile `scaler` into
    Dst tile `out`; `dim` (a SUM ReduceKind): ROW each row into column 0, COL each
    column into row 0, SCALAR all into (0, 0); SUM accumulates, MAX takes the larger.
    The rest of the tile becomes 0 (on the chip: scratch and Dst's earlier values)."""
    bits, x, s = out.view(np.uint32), src.view(np.uint32), scaler.view(np.uint32)
    row, scalar = dim == ReduceKind.SUM_ROW, dim == ReduceKind.SUM_SCALAR
    a = np.empty(16, np.int64)
    b = np.empty(16, np.int64)
    result = np.empty(32, np.int64)  # ROW: column 0; COL: row 0; SCALAR: (0, 0)
    for k in range(32):
        result[k] = bits[FACE_INDEX[k, 0] if row else FACE_INDEX[0, k]]
    # SCALAR first pools the faces' columns into a scratch row (Dst row 4, cleared)
    pooled = np.full(16, POOL_CLEARED if is_max else 0, np.int64) if scalar else result
    for face in range(4):
        for k in range(16):
            b[k] = s[face * 256 + k]
        for line in range(16):  # ROW: the face's row `line` (SrcA transposed); else its column
            for k in range(16):
                a[k] = x[face * 256 + line * 16 + k] if row else x[face * 256 + k * 16 + line]
            at = line if scalar else (face // 2 if row else face % 2) * 16 + line
            pooled[at] = _pool(is_max, a, b, pooled[at], fidelity, fp32_dest, model)
    if row:  # MOVD2B (bf16 of a 32-bit Dst), TRNSPSRCB, ELWADD with a zeroed SrcA
        for k in range(32):
            result[k] = fpu_add(0, result[k], fp32_dest, model)
    if scalar:  # MOVD2B, TRNSPSRCB, MOVB2A: the scratch row becomes SrcA's column 0
        result[0] = _pool(is_max, pooled, b, result[0], fidelity, fp32_dest, model)  # (pools read Src's bf16)
    for k in range(TILE_ELEMENTS):
        bits[k] = 0
    for k in range(1 if scalar else 32):
        bits[FACE_INDEX[k, 0] if row else FACE_INDEX[0, k]] = result[k]


# ---- SFPU ----

@numba.njit(cache=True, nogil=True)
def _power(x, p):
    """x ** p with IEEE pow's special cases (a negative base to a non-integer power is NaN)."""
    if x < 0 and p != np.trunc(p):
        return math.nan
    if x == 0:
        return 0.0 if p > 0 else (1.0 if p == 0 else math.inf)
    return x ** p


@numba.njit(cache=True, nogil=True, error_model="numpy")
def sfpu_unary_values(op, values, parameter, out):
    """out[k] = the SFPU op on values[k] (Dst's float32) for every k, the arithmetic in
    float64 and a math function at its argument's precision (numba calls libm's float32
    variant for Dst's float32 value: docs/fidelity.md), stored as float32 afterwards: the
    host library's results, not the hardware's polynomial approximations. One loop per
    op: the op is chosen once per tile, and the simple ones vectorize."""
    n = out.shape[0]
    if op == SfpuOp.EXP:
        for k in range(n):
            x = values[k]
            out[k] = math.exp(x)
    elif op == SfpuOp.LOG:
        for k in range(n):
            x = values[k]
            out[k] = math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    elif op == SfpuOp.SQRT:
        for k in range(n):
            x = values[k]
            out[k] = math.sqrt(x) if x >= 0 else math.nan
    elif op == SfpuOp.RSQRT:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 / math.sqrt(x) if x >= 0 else math.nan  # +-0 -> +-inf (sqrt(-0) is -0)
    elif op == SfpuOp.RECIP:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 / x  # +-0 -> +-inf (error_model numpy: no exception)
    elif op == SfpuOp.RELU:
        for k in range(n):
            x = values[k]
            out[k] = max(x, 0.0)
    elif op == SfpuOp.GELU:
        for k in range(n):
            x = values[k]
            out[k] = 0.5 * x * math.erfc(-x / math.sqrt(2.0))  # erfc keeps the negative tail accurate
    elif op == SfpuOp.SIGMOID:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 / (1.0 + math.exp(-x))
    elif op == SfpuOp.TANH:
        for k in range(n):
            x = values[k]
            out[k] = math.tanh(x)
    elif op == SfpuOp.SILU:
        for k in range(n):
            x = values[k]
            out[k] = x / (1.0 + math.exp(-x))
    elif op == SfpuOp.NEG:
        for k in range(n):
            x = values[k]
            out[k] = -x
    elif op == SfpuOp.ABS:
        for k in range(n):
            x = values[k]
            out[k] = abs(x)
    elif op == SfpuOp.SQUARE:
        for k in range(n):
            x = values[k]
            out[k] = x * x
    elif op == SfpuOp.SIN:
        for k in range(n):
            x = values[k]
            out[k] = math.sin(x)
    elif op == SfpuOp.COS:
        for k in range(n):
            x = values[k]
            out[k] = math.cos(x)
    elif op == SfpuOp.ADD_SCALAR:
        for k in range(n):
            x = values[k]
            out[k] = x + parameter
    elif op == SfpuOp.MUL_SCALAR:
        for k in range(n):
            x = values[k]
            out[k] = x * parameter
    elif op == SfpuOp.POWER:
        for k in range(n):
            x = values[k]
            out[k] = _power(x, parameter)
    elif op == SfpuOp.LEAKY_RELU:
        for k in range(n):
            x = values[k]
            out[k] = x if x >= 0 else x * parameter
    elif op == SfpuOp.GTZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x > 0 else 0.0
    elif op == SfpuOp.GEZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x >= 0 else 0.0
    elif op == SfpuOp.LTZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x < 0 else 0.0
    elif op == SfpuOp.LEZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x <= 0 else 0.0
    elif op == SfpuOp.EQZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x == 0 else 0.0
    elif op == SfpuOp.NEZ:
        for k in range(n):
            x = values[k]
            out[k] = 1.0 if x != 0 else 0.0
    elif op == SfpuOp.FLOOR:
        for k in range(n):
            x = values[k]
            out[k] = np.floor(x)
    elif op == SfpuOp.CEIL:
        for k in range(n):
            x = values[k]
            out[k] = np.ceil(x)
    elif op == SfpuOp.TRUNC:
        for k in range(n):
            x = values[k]
            out[k] = np.trunc(x)
    elif op == SfpuOp.ROUND_EVEN:
        for k in range(n):
            x = values[k]
            out[k] = np.rint(x)
    elif op == SfpuOp.EXPM1:
        for k in range(n):
            x = values[k]
            out[k] = np.expm1(x)
    elif op == SfpuOp.LOG1P:
        for k in range(n):
            x = values[k]
            out[k] = np.log1p(x) if x >= -1 else math.nan
    elif op == SfpuOp.ERF:
        for k in range(n):
            x = values[k]
            out[k] = math.erf(x)
    elif op == SfpuOp.ERFC:
        for k in range(n):
            x = values[k]
            out[k] = math.erfc(x)
    elif op == SfpuOp.TAN:
        for k in range(n):
            x = values[k]
            out[k] = np.tan(x)
    elif op == SfpuOp.ATAN:
        for k in range(n):
            x = values[k]
            out[k] = np.arctan(x)
    elif op == SfpuOp.ASIN:
        for k in range(n):
            x = values[k]
            out[k] = np.arcsin(x) if -1 <= x <= 1 else math.nan
    elif op == SfpuOp.ACOS:
        for k in range(n):
            x = values[k]
            out[k] = np.arccos(x) if -1 <= x <= 1 else math.nan
    elif op == SfpuOp.SINH:
        for k in range(n):
            x = values[k]
            out[k] = np.sinh(x)
    elif op == SfpuOp.COSH:
        for k in range(n):
            x = values[k]
            out[k] = np.cosh(x)
    elif op == SfpuOp.ASINH:
        for k in range(n):
            x = values[k]
            out[k] = np.arcsinh(x)
    elif op == SfpuOp.ACOSH:
        for k in range(n):
            x = values[k]
            out[k] = np.arccosh(x) if x >= 1 else math.nan
    elif op == SfpuOp.ATANH:
        for k in range(n):
            x = values[k]
            out[k] = np.arctanh(x) if -1 < x < 1 else (math.copysign(math.inf, x) if abs(x) == 1 else math.nan)
    elif op == SfpuOp.EXP2:
        for k in range(n):
            x = values[k]
            out[k] = np.exp2(x)
    elif op == SfpuOp.SIGN:
        for k in range(n):
            x = values[k]
            out[k] = x if x == 0 or x != x else math.copysign(1.0, x)
    elif op == SfpuOp.CBRT:
        for k in range(n):
            x = values[k]
            out[k] = np.cbrt(x)
    else:  # an SfpuOp not implemented here (validated code never has one)
        out[:] = math.nan
    return 0  # (called by address: sim/indirect.py)


@numba.njit(cache=True, nogil=True)
def sfpu_unary(op, x, parameter):
    """One SFPU op on one float32 value (sfpu_unary_values of one element)."""
    values = np.full(1, x, np.float32)
    out = np.empty(1, np.float64)
    sfpu_unary_values(op, values, np.float32(parameter), out)
    return out[0]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def sfpu_binary_values(op, values, others, out):
    """out[k] = the SFPU op on (values[k], others[k]) (Dst's float32) for every k, as
    sfpu_unary_values computes (stored as float32 afterwards); one loop per op."""
    n = out.shape[0]
    if op == SfpuOp.ADD:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = a + b
    elif op == SfpuOp.SUB:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = a - b
    elif op == SfpuOp.MUL:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = a * b
    elif op == SfpuOp.DIV:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = a / b if b != 0 else (math.nan if a == 0 else math.copysign(math.inf, a) * math.copysign(1.0, b))
    elif op == SfpuOp.MAXIMUM:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = max(a, b)
    elif op == SfpuOp.MINIMUM:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = min(a, b)
    elif op == SfpuOp.MASK_NEG_INF:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = a if b != 0 else -math.inf
    elif op == SfpuOp.EQ:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a == b else 0.0
    elif op == SfpuOp.NE:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a != b else 0.0
    elif op == SfpuOp.LT:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a < b else 0.0
    elif op == SfpuOp.GT:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a > b else 0.0
    elif op == SfpuOp.LE:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a <= b else 0.0
    elif op == SfpuOp.GE:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = 1.0 if a >= b else 0.0
    elif op == SfpuOp.FMOD:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = np.fmod(a, b) if b != 0 and not math.isinf(a) else math.nan
    elif op == SfpuOp.ATAN2:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = math.atan2(a, b)
    elif op == SfpuOp.POW:
        for k in range(n):
            a, b = values[k], others[k]
            out[k] = _power(a, b)
    else:  # an SfpuOp not implemented here (validated code never has one)
        out[:] = math.nan
    return 0  # (called by address: sim/indirect.py)


@numba.njit(cache=True, nogil=True)
def sfpu_binary(op, a, b):
    """One SFPU op on two float32 values (sfpu_binary_values of one element)."""
    out = np.empty(1, np.float64)
    sfpu_binary_values(op, np.full(1, a, np.float32), np.full(1, b, np.float32), out)
    return out[0]


@numba.njit(cache=True, nogil=True)
def sfpu_ternary(op, c, a, b):
    """WHERE and WHERE_INT on Dst's bit patterns (as int64): a where c != 0 (c read as a
    float32, or an int32), else b; values are moved whole, never computed."""
    if op == SfpuOp.WHERE:
        return a if bits_to_f32(c) != 0 else b
    if op == SfpuOp.WHERE_INT:
        return a if c != 0 else b
    return -1  # an SfpuOp not implemented here (validated code never has one)


# ---- Integer ops: on Dst's 32-bit patterns (int64 in [0, 2^32)), int32 two's complement ----

WORD = 0xFFFFFFFF


@numba.njit(cache=True, nogil=True, inline="always")
def _signed(x):
    return x - (1 << 32) if x >= 1 << 31 else x


@numba.njit(cache=True, nogil=True)
def _to_integer(bits, low, high):
    """A float32 (as bits) toward zero, saturated to [low, high]; NaN gives 0."""
    x = bits_to_f32(bits)
    if x != x:
        return 0
    if x <= low:
        return low
    if x >= high:
        return high
    return np.int64(np.trunc(np.float64(x)))


@numba.njit(cache=True, nogil=True)
def is_bits_unary(op):
    """Does the unary SFPU op read or write integers (so works on the bits)?"""
    return SfpuOp.NEG_INT <= op <= SfpuOp.F32_TO_U32


@numba.njit(cache=True, nogil=True)
def is_bits_binary(op):
    """Does the binary SFPU op read integers (so works on the bits)? MASK is one: it
    moves a's value whole, whatever it holds."""
    return op == SfpuOp.MASK or SfpuOp.ADD_INT <= op <= SfpuOp.GE_UINT


# compute.sfpu calls the common bit ops in a tile loop per op, the op a constant there:
# LLVM inlines each call, folds the op's test away and vectorizes the loop (~10x a loop
# that tests the op per element). numba's own inlining of them into each loop would
# type and emit their every branch again: a minute to compile, against a second.
@numba.njit(cache=True, nogil=True)
def sfpu_unary_bits(op, x):
    """An integer or conversion SFPU op on x's 32 bits -> the result's 32 bits."""
    s = _signed(x)
    if op == SfpuOp.NEG_INT:
        return -s & WORD
    if op == SfpuOp.ABS_INT:
        return abs(s) & WORD
    if op == SfpuOp.NOT:
        return ~x & WORD
    if op == SfpuOp.I32_TO_F32:
        return f32_to_bits(np.float32(s))
    if op == SfpuOp.U32_TO_F32:
        return f32_to_bits(np.float32(x))
    if op == SfpuOp.F32_TO_I32:
        return _to_integer(x, -(1 << 31), (1 << 31) - 1) & WORD
    if op == SfpuOp.F32_TO_U32:
        return _to_integer(x, 0, WORD)
    return -1  # an SfpuOp not implemented here (validated code never has one)


@numba.njit(cache=True, nogil=True)
def _quotient(a, b):
    """a / b toward zero (b != 0), in int64 (so -2^31 / -1 does not overflow)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@numba.njit(cache=True, nogil=True)
def sfpu_binary_bits(op, x, y):
    """An integer binary SFPU op (or MASK) on the 32 bits of a and b -> the result's."""
    a, b = _signed(x), _signed(y)
    if op == SfpuOp.MASK:
        return x if bits_to_f32(y) != 0 else 0
    if op == SfpuOp.ADD_INT:
        return (x + y) & WORD
    if op == SfpuOp.SUB_INT:
        return (x - y) & WORD
    if op == SfpuOp.MUL_INT:
        return (a * b) & WORD
    if op == SfpuOp.DIV_INT or op == SfpuOp.FLOORDIV_INT:
        if b == 0:
            return WORD
        q = _quotient(a, b)
        if op == SfpuOp.FLOORDIV_INT and q * b != a and (a < 0) != (b < 0):
            q -= 1
        return q & WORD
    if op == SfpuOp.REM_INT:
        return x if b == 0 else (a - b * _quotient(a, b)) & WORD
    if op == SfpuOp.REM_UINT:
        return x if y == 0 else x % y
    if op == SfpuOp.MAX_INT:
        return x if a >= b else y
    if op == SfpuOp.MIN_INT:
        return x if a <= b else y
    if op == SfpuOp.MAX_UINT:
        return max(x, y)
    if op == SfpuOp.MIN_UINT:
        return min(x, y)
    if op == SfpuOp.AND:
        return x & y
    if op == SfpuOp.OR:
        return x | y
    if op == SfpuOp.XOR:
        return x ^ y
    if op == SfpuOp.SHL:
        return (x << b) & WORD if 0 <= b < 32 else 0
    if op == SfpuOp.SHR:
        return (a >> b) & WORD if 0 <= b < 32 else (WORD if a < 0 else 0)
    if op == SfpuOp.SHRU:
        return x >> b if 0 <= b < 32 else 0
    if op == SfpuOp.EQ_INT:
        return np.int64(x == y)
    if op == SfpuOp.NE_INT:
        return np.int64(x != y)
    if SfpuOp.LT_INT <= op <= SfpuOp.GE_UINT:  # LT, GT, LE, GE: signed, then unsigned
        p, q = (x, y) if op >= SfpuOp.LT_UINT else (a, b)
        relation = (op - SfpuOp.LT_INT) % 4
        return np.int64(p < q if relation == 0 else (p > q if relation == 1 else (p <= q if relation == 2 else p >= q)))
    return -1  # an SfpuOp not implemented here (validated code never has one)
