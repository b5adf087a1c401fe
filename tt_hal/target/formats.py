"""Data format conversions (numba), on float32 bit patterns held in int64.

Float16_b (bf16) is the top half of a float32. Block floats (Bfp8_b, Bfp4_b) share
one 8-bit exponent per 16 values (a face row), the largest biased float32 exponent
among them, and keep a sign and a 7-bit (Bfp8_b) or 3-bit (Bfp4_b) magnitude with
no implicit 1: code m means m/64 * 2^(E-127) (Bfp8_b) or m/4 * 2^(E-127) (Bfp4_b).
The algorithms are tt-metal's host packer (blockfloat_common.cpp, bfloat16.cpp);
see ../shared/FACTS.md 'Data formats' and docs/layouts.md.

Numerics, checked by tests/test_tiles_formats.py:
- bf16, NEAREST_EVEN (tt-metal's host conversion): float32 denormals round to bf16
  denormals; NaN becomes the quiet NaN 0x7FC0; overflow rounds to infinity.
- bf16, NEAREST_AWAY and TRUNCATE (the on-chip packer's modes): denormal inputs
  and -0 flush to +0 first; NaN becomes 0x7FC0.
- block float: each mantissa (hidden 1 included) is first shifted right by
  (shared - own exponent), dropping those bits, then rounded to the code width
  (NEAREST_EVEN on the host); a carry past the largest code saturates; a code of
  magnitude 0 drops the sign; denormal inputs are 0. Inf and NaN keep exponent 255
  and round-trip (Inf has magnitude 0x40 in Bfp8_b, quiet NaN 0x60; a NaN with
  payload only below the kept bits becomes Inf).
- block float decode builds the float32 bits as tt-metal does: the magnitude is
  normalised and its exponent is shared - shifts; one below 0 flushes to +-0.
"""

from __future__ import annotations

import numba
import numpy as np

ROUND_NEAREST_EVEN = 0
ROUND_NEAREST_AWAY = 1
ROUND_TRUNCATE = 2
ROUNDING_MODES = {"nearest_even": ROUND_NEAREST_EVEN, "nearest_away": ROUND_NEAREST_AWAY, "truncate": ROUND_TRUNCATE}

BF16_QUIET_NAN = 0x7FC0
BFP8_MAGNITUDE_BITS = 7
BFP4_MAGNITUDE_BITS = 3
ROW = 16  # values per shared exponent: one face row

_jit = numba.njit(cache=True, nogil=True, inline="always")


@_jit
def bf16_from_f32_bits(bits, rounding):
    """bf16 bits for float32 bits (int64 in [0, 2^32)). From their int32 (bits 0-31 the
    same, so bits 16-31 of each sum below are), which LLVM keeps 32 bits wide: a vector
    holds 8 values, not 4. With selects, not early returns, so that numba vectorizes
    the loops that call it."""
    x = np.int32(bits)
    if rounding == ROUND_NEAREST_EVEN:
        rounded = x + 0x7FFF + ((x >> 16) & 1)
    elif rounding == ROUND_NEAREST_AWAY:
        rounded = x + 0x8000  # sign-magnitude: half up in magnitude is away from zero
    else:
        rounded = x
    half = (rounded >> 16) & 0xFFFF
    if rounding != ROUND_NEAREST_EVEN and (x & 0x7F800000) == 0:
        half = 0  # the packer flushes denormals and -0 to +0
    return BF16_QUIET_NAN if (x & 0x7FFFFFFF) > 0x7F800000 else half


@_jit
def bfp_shared_exponent(row):
    """The largest biased exponent among a face row's float32 bits."""
    shared = 0
    for k in range(row.shape[0]):
        shared = max(shared, (row[k] >> 23) & 0xFF)
    return shared


@_jit
def bfp_code(bits, shared, magnitude_bits, rounding):
    """Sign-magnitude code of float32 `bits` in a face row of exponent `shared`.
    Selects instead of early returns, so that numba vectorizes a face row."""
    exponent = (bits >> 23) & 0xFF
    mantissa = ((bits & 0x7FFFFF) | 0x800000) >> min(shared - exponent, 31)
    shift = 24 - magnitude_bits
    kept = mantissa >> shift
    dropped = mantissa - (kept << shift)
    tie = 1 << (shift - 1)
    if rounding == ROUND_NEAREST_EVEN:
        kept += (dropped > tie) | ((dropped == tie) & (kept & 1 == 1))
    elif rounding == ROUND_NEAREST_AWAY:
        kept += dropped >= tie
    kept = min(kept, (1 << magnitude_bits) - 1)  # saturate: the shared exponent never grows
    code = ((bits >> 31) << magnitude_bits) | kept
    return 0 if kept == 0 or exponent == 0 else code


# Highest set bit of a magnitude (0..127), for normalising codes back to floats.
_HIGHEST_BIT = np.array([0] + [int(m).bit_length() - 1 for m in range(1, 128)], np.int64)


@_jit
def bfp_bits(code, shared, magnitude_bits):
    """float32 bits of a sign-magnitude code under exponent `shared`."""
    sign = ((code >> magnitude_bits) & 1) << 31
    magnitude = code & ((1 << magnitude_bits) - 1)
    shifts = magnitude_bits - 1 - _HIGHEST_BIT[magnitude]
    exponent = shared - shifts
    fraction = ((magnitude << (shifts + 1)) & ((1 << magnitude_bits) - 1)) << (23 - magnitude_bits)
    return sign if magnitude == 0 or exponent < 0 else sign | (exponent << 23) | fraction


@_jit
def bfp_encode_row(row, out, exponent_at, codes_at, magnitude_bits, rounding):
    """Encodes a face row (16 float32 bit patterns) into `out` (uint8): its shared
    exponent at `exponent_at`, codes from `codes_at`, one per byte (Bfp8_b) or two
    per byte, element 0 in the low nibble (Bfp4_b)."""
    shared = bfp_shared_exponent(row)
    out[exponent_at] = shared
    if magnitude_bits == BFP8_MAGNITUDE_BITS:
        for k in range(ROW):
            out[codes_at + k] = bfp_code(row[k], shared, magnitude_bits, rounding)
    else:
        for k in range(0, ROW, 2):
            low = bfp_code(row[k], shared, magnitude_bits, rounding)
            out[codes_at + k // 2] = low | (bfp_code(row[k + 1], shared, magnitude_bits, rounding) << 4)


@_jit
def bfp_decode_code(data, codes_at, k, magnitude_bits):
    """The k-th code of a face row stored from `codes_at`."""
    if magnitude_bits == BFP8_MAGNITUDE_BITS:
        return np.int64(data[codes_at + k])
    return (np.int64(data[codes_at + k // 2]) >> (4 * (k & 1))) & 0xF


@numba.njit(cache=True, nogil=True)
def bf16_encode(bits, out, rounding):
    """out[i] = bf16 of float32 bits[i]."""
    for i in range(bits.shape[0]):
        out[i] = bf16_from_f32_bits(np.int64(bits[i]), rounding)


@numba.njit(cache=True, nogil=True)
def bf16_decode(halves, out):
    """out[i] = float32 bits of bf16 halves[i]."""
    for i in range(halves.shape[0]):
        out[i] = np.uint32(halves[i]) << np.uint32(16)


def float32_to_bfloat16_bits(values: np.ndarray, rounding: int = ROUND_NEAREST_EVEN) -> np.ndarray:
    """bf16 bit patterns (uint16) of float32 values, any shape."""
    bits = np.ascontiguousarray(values, np.float32).reshape(-1).view(np.uint32)
    out = np.empty(bits.shape[0], np.uint16)
    bf16_encode(bits, out, rounding)
    return out.reshape(np.shape(values))


def bfloat16_bits_to_float32(halves: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(halves, np.uint16).reshape(-1)
    out = np.empty(flat.shape[0], np.uint32)
    bf16_decode(flat, out)
    return out.view(np.float32).reshape(np.shape(halves))
