"""Plain numpy "twins" of the simulator's tile and format kernels (tt_hal/target/tiles.py,
tt_hal/target/formats.py), written from tt-metal's algorithms (../shared/FACTS.md 'Tiles and
layouts', 'Data formats'; tilize_utils.cpp, blockfloat_common.cpp, bfloat16.cpp),
not from the numba code: whole-array reshapes and transposes instead of index
walks, so that a disagreement between the two points at a bug in one of them.

Conventions:
- A tensor of rank 0 or 1 is a single row (height 1). H and W are padded to
  multiples of 32 with `pad_value`, then the outer dimensions are folded into the
  height; tiles are row-major over that (outer * Hp, Wp) matrix.
- A tile is stored as 4 faces of 16x16, TL TR BL BR (TL BL TR BR with
  `transpose_of_faces`), each face row-major (column-major with
  `transpose_within_face`).
- float32 data is handled as its uint32 bit patterns throughout.
Also the integer SFPU ops (tt_hal.target.isa.SfpuOp), from their definitions, in int64.
"""

from __future__ import annotations

import math

import numpy as np

from tt_hal.target.isa import SfpuOp

TILE = 32
FACE = 16
ROUNDINGS = ("nearest_even", "nearest_away", "truncate")


# ----------------------------------------------------------------------------------------------
# Tilize / untilize
# ----------------------------------------------------------------------------------------------

def folded_shape(shape) -> tuple[int, int, int]:
    """(outer, H, W) of a tensor shape: rank 0/1 have height 1, rank 0 width 1."""
    shape = tuple(int(d) for d in shape)
    height = shape[-2] if len(shape) >= 2 else 1
    width = shape[-1] if shape else 1
    return math.prod(shape[:-2]), height, width


def _round_up(n: int) -> int:
    return -(-n // TILE) * TILE


def tile_count(shape) -> int:
    outer, height, width = folded_shape(shape)
    return outer * (_round_up(height) // TILE) * (_round_up(width) // TILE)


def _face_axes(transpose_within_face: bool, transpose_of_faces: bool) -> tuple[int, ...]:
    """Axis order taking (tile, face_row, face_col, i, j) to the stored order."""
    faces = (2, 1) if transpose_of_faces else (1, 2)
    inner = (4, 3) if transpose_within_face else (3, 4)
    return (0,) + faces + inner


def tilize(x, pad_value=0, transpose_within_face=False, transpose_of_faces=False) -> np.ndarray:
    """Tiles (n_tiles, 1024) of `x` in stored order, same dtype as `x`."""
    x = np.asarray(x)
    outer, height, width = folded_shape(x.shape)
    hp, wp = _round_up(height), _round_up(width)
    padded = np.full((outer, hp, wp), pad_value, dtype=x.dtype)
    padded[:, :height, :width] = x.reshape(outer, height, width)
    rows, cols = outer * hp // TILE, wp // TILE
    tiles = padded.reshape(rows, TILE, cols, TILE).transpose(0, 2, 1, 3).reshape(rows * cols, 2, FACE, 2, FACE)
    tiles = tiles.transpose(0, 1, 3, 2, 4)  # (tile, face_row, face_col, i, j)
    tiles = tiles.transpose(_face_axes(transpose_within_face, transpose_of_faces))
    return np.ascontiguousarray(tiles).reshape(rows * cols, TILE * TILE)


def untilize(tiles, shape, transpose_within_face=False, transpose_of_faces=False) -> np.ndarray:
    """The tensor of `shape` held by `tiles` (n_tiles * 1024 values, stored order); padding dropped."""
    shape = tuple(int(d) for d in shape)
    outer, height, width = folded_shape(shape)
    hp, wp = _round_up(height), _round_up(width)
    rows, cols = outer * hp // TILE, wp // TILE
    tiles = np.asarray(tiles).reshape(rows * cols, 2, 2, FACE, FACE)
    axes = _face_axes(transpose_within_face, transpose_of_faces)
    tiles = tiles.transpose(np.argsort(axes))  # back to (tile, face_row, face_col, i, j)
    matrix = tiles.transpose(0, 1, 3, 2, 4).reshape(rows, cols, TILE, TILE).transpose(0, 2, 1, 3)
    matrix = matrix.reshape(outer, hp, wp)[:, :height, :width]
    return np.ascontiguousarray(matrix).reshape(shape)


# ----------------------------------------------------------------------------------------------
# bfloat16
# ----------------------------------------------------------------------------------------------

def f32_bits(x) -> np.ndarray:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def bf16_bits(x, rounding="nearest_even") -> np.ndarray:
    """bf16 bit patterns (uint16) of float32 `x`.

    nearest_even: tt-metal's host conversion (NaN -> 0x7FC0, denormals rounded).
    nearest_away / truncate: the packer's modes; denormals and -0 become +0 first.
    """
    bits = f32_bits(x).astype(np.int64)
    high, low = bits >> 16, bits & 0xFFFF
    if rounding == "nearest_even":
        up = (low > 0x8000) | ((low == 0x8000) & ((high & 1) == 1))
    elif rounding == "nearest_away":
        up = low >= 0x8000  # magnitude rounds half up: away from zero for either sign
    elif rounding == "truncate":
        up = np.zeros_like(high, dtype=bool)
    else:
        raise ValueError(rounding)
    half = high + up  # a carry out of the mantissa moves the exponent (to Inf past the max)
    if rounding != "nearest_even":
        half = np.where((bits & 0x7F800000) == 0, 0, half)
    nan = np.isnan(np.ascontiguousarray(x, np.float32))
    half = np.where(nan, 0x7FC0, half)
    return half.astype(np.uint16)


def bf16_to_f32_bits(halves) -> np.ndarray:
    return np.asarray(halves, np.uint16).astype(np.uint32) << np.uint32(16)


# ----------------------------------------------------------------------------------------------
# Block floats (bfloat8_b: 7 magnitude bits, bfloat4_b: 3)
# ----------------------------------------------------------------------------------------------

def bfp_pack_rows(rows, magnitude_bits, rounding="nearest_even"):
    """(shared exponents (n,) uint8, codes (n, 16) uint8) of face rows `rows` (n, 16)
    float32, by tt-metal's host algorithm (blockfloat_common.cpp, newest version):
    shared exponent = max biased exponent; a zero/denormal value codes to 0; the
    24-bit significand is shifted right by (shared - own exponent), then rounded
    to `magnitude_bits` bits; a carry past the largest code saturates; a zero
    magnitude drops the sign."""
    bits = f32_bits(rows).reshape(-1, FACE).astype(np.int64)
    exponent = (bits >> 23) & 0xFF
    shared = exponent.max(axis=1, initial=0)
    difference = shared[:, None] - exponent
    significand = (bits & 0x7FFFFF) | (1 << 23)
    significand = np.where(difference >= 24, 0, significand >> np.minimum(difference, 24))
    drop = 24 - magnitude_bits
    magnitude, remainder = significand >> drop, significand & ((1 << drop) - 1)
    tie = 1 << (drop - 1)
    if rounding == "nearest_even":
        magnitude = magnitude + ((remainder > tie) | ((remainder == tie) & (magnitude % 2 == 1)))
    elif rounding == "nearest_away":
        magnitude = magnitude + (remainder >= tie)
    elif rounding != "truncate":
        raise ValueError(rounding)
    magnitude = np.minimum(magnitude, (1 << magnitude_bits) - 1)
    magnitude = np.where(exponent == 0, 0, magnitude)
    sign = np.where(magnitude == 0, 0, bits >> 31)
    codes = (sign << magnitude_bits) | magnitude
    return shared.astype(np.uint8), codes.astype(np.uint8)


def bfp_unpack_rows(exponents, codes, magnitude_bits) -> np.ndarray:
    """float32 bits (n, 16) uint32 of codes (n, 16) under shared exponents (n,), as
    tt-metal's convert_bfp_to_u32: normalise the magnitude until its top bit is
    set, counting shifts; exponent = shared - shifts; the top bit becomes the
    hidden 1. Magnitude 0 gives +-0 (the code's sign); an exponent below 0 (which
    tt-metal asserts against, and its SIMD unpacker flushes) gives +-0."""
    codes = np.asarray(codes, np.int64).reshape(-1, FACE)
    shared = np.asarray(exponents, np.int64).reshape(-1, 1)
    top = 1 << (magnitude_bits - 1)
    sign = (codes >> magnitude_bits) & 1
    magnitude = codes & ((1 << magnitude_bits) - 1)
    normalised = magnitude.copy()
    shifts = np.zeros_like(magnitude)
    for _ in range(magnitude_bits):
        move = (normalised != 0) & ((normalised & top) == 0)
        normalised = np.where(move, normalised << 1, normalised)
        shifts += move
    exponent = shared - shifts
    fraction = normalised & (top - 1)  # drop the (now hidden) top bit
    bits = (sign << 31) | (exponent << 23) | (fraction << (24 - magnitude_bits))
    bits = np.where((magnitude == 0) | (exponent < 0), sign << 31, bits)
    return bits.astype(np.uint32)


def bfp_tile_size(magnitude_bits) -> int:
    return 64 + TILE * TILE * (magnitude_bits + 1) // 8


def bfp_tiles(x, magnitude_bits, rounding="nearest_even", pad_value=0.0, transpose_within_face=False,
              transpose_of_faces=False) -> np.ndarray:
    """The device bytes (uint8) of float32 `x` as block-float tiles: per tile 64
    shared exponents (face 0 rows 0..15, then faces 1..3), then the codes face by
    face, row-major; bfp4 packs two codes a byte, element 0 in the low nibble."""
    x = np.asarray(x, np.float32)
    values = tilize(x, np.float32(pad_value), transpose_within_face, transpose_of_faces)
    n = values.shape[0]
    exponents, codes = bfp_pack_rows(values.reshape(n * 64, FACE), magnitude_bits, rounding)
    exponents = exponents.reshape(n, 64)
    codes = codes.reshape(n, TILE * TILE)
    if magnitude_bits == 3:
        codes = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return np.concatenate([exponents, codes], axis=1).reshape(-1).astype(np.uint8)


def bfp_untiles(data, shape, magnitude_bits, transpose_within_face=False, transpose_of_faces=False) -> np.ndarray:
    """float32 bits (uint32, `shape`) held by block-float tile bytes `data`."""
    n = tile_count(shape)
    data = np.asarray(data, np.uint8).reshape(n, bfp_tile_size(magnitude_bits))
    exponents, packed = data[:, :64], data[:, 64:]
    if magnitude_bits == 3:
        codes = np.empty((n, TILE * TILE), np.uint8)
        codes[:, 0::2] = packed & 0xF
        codes[:, 1::2] = packed >> 4
    else:
        codes = packed
    bits = bfp_unpack_rows(exponents.reshape(-1), codes.reshape(-1, FACE), magnitude_bits)
    return untilize(bits.reshape(n, TILE * TILE), shape, transpose_within_face, transpose_of_faces)


# ---- integer SFPU ops: int32 two's complement, computed in int64 ----

def wrap_int32(x) -> np.ndarray:
    """int64 values -> their int32 two's complement (wrapping)."""
    return (np.asarray(x, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _trunc_div(a, b):
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) == (b < 0), q, -q)


def integer_binary(op: SfpuOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int32 results of an integer binary op on int32 arrays, from its definition in
    tt_hal.target.isa (a division by zero: quotient -1, remainder a)."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    zero = b == 0
    shift = np.clip(b, 0, 31)
    in_range = (b >= 0) & (b < 32)
    quotient = _trunc_div(a, b)
    floor = np.where((quotient * b != a) & ((a < 0) != (b < 0)), quotient - 1, quotient)
    result = {
        SfpuOp.ADD_INT: a + b, SfpuOp.SUB_INT: a - b, SfpuOp.MUL_INT: a * b,
        SfpuOp.DIV_INT: np.where(zero, -1, quotient), SfpuOp.FLOORDIV_INT: np.where(zero, -1, floor),
        SfpuOp.REM_INT: np.where(zero, a, a - b * quotient), SfpuOp.REM_UINT: np.where(ub == 0, ua, ua % np.where(
            ub == 0, 1, ub)),
        SfpuOp.MAX_INT: np.maximum(a, b), SfpuOp.MIN_INT: np.minimum(a, b),
        SfpuOp.MAX_UINT: np.maximum(ua, ub), SfpuOp.MIN_UINT: np.minimum(ua, ub),
        SfpuOp.AND: a & b, SfpuOp.OR: a | b, SfpuOp.XOR: a ^ b,
        SfpuOp.SHL: np.where(in_range, ua << shift, 0), SfpuOp.SHR: np.where(in_range, a >> shift, a >> 31),
        SfpuOp.SHRU: np.where(in_range, ua >> shift, 0),
        SfpuOp.EQ_INT: a == b, SfpuOp.NE_INT: a != b, SfpuOp.LT_INT: a < b, SfpuOp.GT_INT: a > b,
        SfpuOp.LE_INT: a <= b, SfpuOp.GE_INT: a >= b, SfpuOp.LT_UINT: ua < ub, SfpuOp.GT_UINT: ua > ub,
        SfpuOp.LE_UINT: ua <= ub, SfpuOp.GE_UINT: ua >= ub,
    }[op]
    return wrap_int32(result)


def integer_unary(op: SfpuOp, bits: np.ndarray) -> np.ndarray:
    """The 32-bit results (uint32) of an integer or conversion unary op."""
    a = bits.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.ascontiguousarray(bits, np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        result = {
            SfpuOp.NEG_INT: lambda: wrap_int32(-a), SfpuOp.ABS_INT: lambda: wrap_int32(np.abs(a)),
            SfpuOp.NOT: lambda: wrap_int32(~a),
            SfpuOp.I32_TO_F32: lambda: a.astype(np.float32), SfpuOp.U32_TO_F32: lambda: bits.astype(np.float32),
            SfpuOp.F32_TO_I32: lambda: np.where(np.isnan(x), 0, np.clip(np.trunc(x.astype(np.float64)), -2.0 ** 31,
                                                                         2.0 ** 31 - 1)).astype(np.int32),
            SfpuOp.F32_TO_U32: lambda: np.where(np.isnan(x), 0, np.clip(np.trunc(x.astype(np.float64)), 0,
                                                                         2.0 ** 32 - 1)).astype(np.uint32),
        }[op]()
    return np.ascontiguousarray(result).view(np.uint32)
