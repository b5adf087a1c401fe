"""Numerics of the simulated compute engine (sim/numerics.py).

Part 1 checks the numba helpers one by one against numpy twins written here from
the stated numerics (sim/numerics.py docstring, ../shared/FACTS.md 'Kernel API and
numerics', 'Data formats'), not from the numba code:
- fidelity_product: the bf16 mantissas split into SrcA = hidden + 4 MSBs | 3 LSBs and
  SrcB = hidden + 6 MSBs | 1 LSB; LoFi = phase 0, HiFi2 = phases 0-1, HiFi3 = 0-2,
  HiFi4 = 0-3 (computed here with integer mantissas, so exactly);
- unpack_tile: float32 -> tf32 (13 low bits dropped), bf16 / block floats exact;
- dst_store: bf16 round to nearest even, or float32 untouched;
- pack_tile: bf16 ties away from zero (denormals and -0 flush to +0), Bfp8_b through
  bf16 first then ties away, Bfp4_b the Bfp8_b code truncated, integer formats the
  low bits of Dst's 32 (int32 bit patterns, as typecast_tile leaves them);
- integer SFPU ops: int32 two's complement on those bit patterns (numpy int64 here).

Part 2 runs tt_hal.kernels.eltwise's kernels through real HAL dispatches (.ttx written
by tt_hal.target.ttx.write_executable, prepared by the executable cache, push constant 0 = tiles
of the output) and compares the output bytes with the numpy twins chained the way
the compute kernel chains them: host encoding -> unpack -> FPU/SFPU -> Dst -> pack.
Where the numerics are exact (add/sub/mul, scalar SFPU ops) the comparison is
bit-exact; transcendental SFPU ops are compared with a stated tolerance.
"""

from __future__ import annotations

import math
import zlib

import numba
import numpy as np
import pytest
import scipy.special

import hal
from tests import fpu_twin
from tests import reference as ref
from tt_hal.kernels import eltwise
from tt_hal.sim import numerics
from tt_hal.sim.numerics import FpuModel
from tt_hal.target.isa import Broadcast, MathFidelity, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.ttx import write_executable

F32, BF16, BFP8, BFP4 = DataFormat.float32, DataFormat.bfloat16, DataFormat.bfloat8_b, DataFormat.bfloat4_b
FIDELITIES = [MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4]
FIDELITY_PHASES = {0: 1, 2: 2, 3: 3, 4: 4}

# Stored (face-order) position p of a tile holds the row-major element ROW_MAJOR_AT[p].
ROW_MAJOR_AT = ref.tilize(np.arange(1024).reshape(32, 32))[0]
STORED_AT = np.argsort(ROW_MAJOR_AT)  # row-major index -> stored position


def seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def as_f32(bits) -> np.ndarray:
    return np.ascontiguousarray(bits, np.uint32).view(np.float32)


def bits_of(x) -> np.ndarray:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


# ================================================================================================
# numpy twins of the compute engine's stages
# ================================================================================================

def _bf16_significand(x):
    """(sign +-1.0, 8-bit significand incl. hidden bit, exponent of its LSB) of x's bf16
    truncation (Src precision for the multiplier). Finite values only."""
    bits = bits_of(x).astype(np.int64) & 0xFFFF0000
    sign = np.where(bits >> 31, -1.0, 1.0)
    exponent = (bits >> 23) & 0xFF
    fraction = (bits >> 16) & 0x7F
    significand = np.where(exponent > 0, fraction | 0x80, fraction)
    lsb_exponent = np.maximum(exponent, 1) - 127 - 7
    return sign, significand, lsb_exponent


def twin_fidelity_product(a, b, fidelity: int) -> np.ndarray:
    """The multiplier's result as the sum of the fidelity's phase products, computed
    exactly with integer significands (finite inputs)."""
    sa, ma, ea = _bf16_significand(a)
    sb, mb, eb = _bf16_significand(b)
    a_high, a_low = ma & ~0x7, ma & 0x7  # SrcA: hidden + 4 MSBs | 3 LSBs
    b_high, b_low = mb & ~0x1, mb & 0x1  # SrcB: hidden + 6 MSBs | 1 LSB
    phases = [a_high * b_high, a_low * b_high, a_high * b_low, a_low * b_low]
    total = sum(phases[:FIDELITY_PHASES[int(fidelity)]])
    return (sa * sb * np.ldexp(total.astype(np.float64), ea + eb)).astype(np.float32)


def twin_dst_store(values, fp32_dest: bool) -> np.ndarray:
    values = np.asarray(values, np.float32)
    if fp32_dest:
        return values.copy()
    return as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(values, "nearest_even")))


def twin_unpack(data: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """float32 (n, 1024) Src values of n tiles of bytes `data` in format `fmt`."""
    data = np.ascontiguousarray(data, np.uint8)
    n = data.shape[0] // fmt.tile_size
    if fmt is F32:
        return as_f32(data.view(np.uint32) & np.uint32(0xFFFFE000)).reshape(n, 1024)
    if fmt is BF16:
        return as_f32(ref.bf16_to_f32_bits(data.view(np.uint16))).reshape(n, 1024)
    if fmt in (DataFormat.int32, DataFormat.uint32, DataFormat.uint16, DataFormat.uint8):
        dtype = {DataFormat.int32: np.int32, DataFormat.uint32: np.uint32, DataFormat.uint16: np.uint16,
                 DataFormat.uint8: np.uint8}[fmt]
        return data.view(dtype).astype(np.float32).reshape(n, 1024)
    magnitude_bits = 7 if fmt is BFP8 else 3
    tiles = data.reshape(n, fmt.tile_size)
    exponents, packed = tiles[:, :64], tiles[:, 64:]
    if fmt is BFP4:
        codes = np.empty((n, 1024), np.uint8)
        codes[:, 0::2], codes[:, 1::2] = packed & 0xF, packed >> 4
    else:
        codes = packed
    bits = ref.bfp_unpack_rows(exponents.reshape(-1), codes.reshape(-1, 16), magnitude_bits)
    return as_f32(bits).reshape(n, 1024)


def twin_pack(values, fmt: DataFormat) -> np.ndarray:
    """Bytes of tiles (n, 1024) of float32 Dst values as the packer writes them."""
    values = np.asarray(values, np.float32).reshape(-1, 1024)
    n = values.shape[0]
    if fmt is F32:
        return values.copy().view(np.uint8).reshape(-1)
    if fmt is BF16:
        return ref.bf16_bits(values, "nearest_away").view(np.uint8).reshape(-1)
    if fmt.is_integer:  # the low bytes of each 32-bit pattern (little-endian)
        size = fmt.tile_size // 1024
        return bits_of(values).view(np.uint8).reshape(-1, 4)[:, :size].reshape(-1).copy()
    via_bf16 = as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(values, "nearest_away")))  # Bfp8_b goes through bf16
    exponents, codes = ref.bfp_pack_rows(via_bf16.reshape(-1, 16), 7, "nearest_away")
    exponents, codes = exponents.reshape(n, 64), codes.reshape(n, 1024)
    if fmt is BFP4:  # the Bfp8_b code truncated to 3 magnitude bits
        magnitude = (codes & 0x7F) >> 4
        codes4 = np.where(magnitude == 0, 0, ((codes >> 7) << 3) | magnitude).astype(np.uint8)
        codes = codes4[:, 0::2] | (codes4[:, 1::2] << 4)
    return np.concatenate([exponents, codes], axis=1).astype(np.uint8).reshape(-1)


def twin_host_encode(x, fmt: DataFormat) -> np.ndarray:
    """Device bytes of host tensor x in TILE layout (the host's round to nearest even)."""
    x = np.asarray(x, np.float32)
    if fmt.is_block_float:
        return ref.bfp_tiles(x, 7 if fmt is BFP8 else 3, "nearest_even")
    if fmt is BF16:
        return ref.tilize(ref.bf16_bits(x, "nearest_even")).view(np.uint8).reshape(-1)
    return ref.tilize(x).view(np.uint8).reshape(-1)


def decode(values_tiles, shape) -> np.ndarray:
    return ref.untilize(values_tiles, shape)


def broadcast_index(broadcast: Broadcast) -> np.ndarray:
    """For each stored position of the output tile, the stored position of B used."""
    i, j = ROW_MAJOR_AT // 32, ROW_MAJOR_AT % 32
    if broadcast == Broadcast.ROW:
        return STORED_AT[j]
    if broadcast == Broadcast.COL:
        return STORED_AT[i * 32]
    if broadcast == Broadcast.SCALAR:
        return np.zeros(1024, np.int64)
    return np.arange(1024)


# ================================================================================================
# Part 1: the numba helpers
# ================================================================================================

@numba.njit  # no cache: it would keep inlined sim code stale
def _fidelity_many(a, b, fidelity):
    out = np.empty(a.shape[0], np.float32)
    for i in range(a.shape[0]):
        out[i] = numerics.fidelity_product(a[i], b[i], fidelity)
    return out


@numba.njit  # no cache: it would keep inlined sim code stale
def _dst_store_many(values, fp32_dest):
    out = np.empty(values.shape[0], np.float32)
    for i in range(values.shape[0]):
        out[i] = numerics.dst_store(values[i], fp32_dest)
    return out


def random_bf16_values(rng, n, low=-30, high=30) -> np.ndarray:
    """float32 values with random signs, exponents in [low, high) and 23 random mantissa bits."""
    sign = rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)
    exponent = rng.integers(127 + low, 127 + high, n).astype(np.uint32) << np.uint32(23)
    mantissa = rng.integers(0, 1 << 23, n).astype(np.uint32)
    return as_f32(sign | exponent | mantissa)


@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
def test_fidelity_product_equals_sum_of_phase_products(fidelity):
    rng = np.random.default_rng(int(fidelity))
    a = random_bf16_values(rng, 20000)
    b = random_bf16_values(rng, 20000)
    a[:4] = [0.0, -0.0, 1.0, 1.0546875]  # 1.0546875: SrcA's 3 LSBs all set
    b[:4] = [3.5, 0.0, -1.0078125, 1.0078125]  # 1.0078125: SrcB's LSB set
    got = _fidelity_many(a, b, int(fidelity))
    expected = twin_fidelity_product(a, b, int(fidelity))
    # Bit-exact, except the sign of an exact zero (-0 * 0 sums to +0 past phase 0): + 0.0
    # turns -0 into +0 on both sides.
    np.testing.assert_array_equal(bits_of(got + np.float32(0)), bits_of(expected + np.float32(0)))
    # The operands reach the multiplier as bf16: the low 16 bits of a float32 play no part.
    truncated = _fidelity_many(as_f32(bits_of(a) & 0xFFFF0000), as_f32(bits_of(b) & 0xFFFF0000), int(fidelity))
    np.testing.assert_array_equal(bits_of(got), bits_of(truncated))


def test_hifi4_is_the_exact_product_of_bf16_truncated_operands():
    rng = np.random.default_rng(11)
    a = random_bf16_values(rng, 20000)
    b = random_bf16_values(rng, 20000)
    got = _fidelity_many(a, b, 4)
    exact = (as_f32(bits_of(a) & 0xFFFF0000).astype(np.float64)
             * as_f32(bits_of(b) & 0xFFFF0000).astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(bits_of(got), bits_of(exact))
    # ... which is not the float32 product of the untruncated operands.
    assert np.mean(got != a * b) > 0.9


def test_fidelity_error_bounds():
    """LoFi drops a_low*b + a_high*b_low: it truncates toward zero with relative error
    < 1 - (128/135)(128/129) (a = 1.0546875, b = 1.0078125 attain it); HiFi2 misses
    only a*b_low (< 1/129); HiFi3 only a_low*b_low (< 7/135 * 1/129)."""
    rng = np.random.default_rng(12)
    a = random_bf16_values(rng, 50000, -10, 10)
    b = random_bf16_values(rng, 50000, -10, 10)
    a[0], b[0] = 1.0546875, 1.0078125
    exact = _fidelity_many(a, b, 4).astype(np.float64)
    bounds = {0: 1 - (128 / 135) * (128 / 129), 2: 1 / 129, 3: (7 / 135) * (1 / 129)}
    for fidelity, bound in bounds.items():
        got = _fidelity_many(a, b, fidelity).astype(np.float64)
        relative = (exact - got) / exact  # >= 0: every phase left out has the product's sign
        assert relative.min() >= 0, fidelity
        assert relative.max() <= bound * (1 + 1e-6), (fidelity, relative.max(), bound)
        assert relative.max() >= 0.99 * bound, (fidelity, relative.max(), bound)  # the bound is attained
    lofi = _fidelity_many(a, b, 0).astype(np.float64)
    assert abs((exact[0] - lofi[0]) / exact[0] - bounds[0]) < 1e-9


@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
def test_fidelity_product_specials(fidelity):
    """IEEE specials: x * Inf = Inf for finite x != 0, NaN propagates, 0 * Inf = NaN.
    BUG (fidelity >= HiFi2): the split of Inf gives a_low = Inf - Inf = NaN, so the
    phase-1 term turns every Inf product into NaN."""
    a = np.array([np.inf, -np.inf, 2.0, 1.5, np.nan, 0.0, np.inf], np.float32)
    b = np.array([2.0, 3.0, np.inf, -np.inf, 1.0, np.inf, np.inf], np.float32)
    expected = np.array([np.inf, -np.inf, np.inf, -np.inf, np.nan, np.nan, np.inf], np.float32)
    got = _fidelity_many(a, b, int(fidelity))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
def test_fidelity_product_signed_zero(fidelity):
    """The exact product of a negative number and +0 is -0 (IEEE; visible in float32
    outputs). BUG (HiFi2+): when an operand's low part is zero the split gives
    low = x - x = +0, and -0 + (+0 * y) = +0, so e.g. (-1.5) * 0 and 0 * (-2) give +0."""
    a = np.array([-1.5, 0.0, -0.0, 1.5, -1.0546875], np.float32)
    b = np.array([0.0, -2.0, 3.0, -0.0, 0.0], np.float32)
    got = _fidelity_many(a, b, int(fidelity))
    np.testing.assert_array_equal(bits_of(got), bits_of(a * b))  # all -0


def test_dst_store_rounds_bf16_to_nearest_even():
    rng = np.random.default_rng(13)
    values = random_bf16_values(rng, 20000)
    ties = bits_of(values) & np.uint32(0xFFFF0000) | np.uint32(0x8000)  # exact bf16 ties, both parities
    specials = np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                         0x00000001, 0x00018000, 0x00008000, 0x80000000, 0x3F808000, 0x3F818000, 0x3F808001],
                        np.uint32)
    values = np.concatenate([values, as_f32(ties), as_f32(specials)])
    got = _dst_store_many(values, False)
    np.testing.assert_array_equal(bits_of(got), ref.bf16_to_f32_bits(ref.bf16_bits(values, "nearest_even")))
    # Spot checks of the rule itself: ties go to the even neighbour, denormals are kept.
    spot = _dst_store_many(as_f32(np.array([0x3F808000, 0x3F818000, 0x00018000, 0x7F7FFFFF], np.uint32)), False)
    assert list(bits_of(spot)) == [0x3F800000, 0x3F820000, 0x00020000, 0x7F800000]
    np.testing.assert_array_equal(bits_of(_dst_store_many(values, True)), bits_of(values))


def twin_matmul_tile(in0, in1, dst, fidelity: int, fp32_dest: bool, transpose: bool) -> np.ndarray:
    """Dst (32, 32) after matmul_tiles in the fast numerics: each element's 32 fidelity
    products summed in float32 over k = 0..31 from +0, added to Dst, stored once.
    in0 (i, k) feeds SrcB, in1 (k, j), or (j, k) when `transpose`, SrcA."""
    a = in1.T if transpose else in1
    products = twin_fidelity_product(a.T[None, :, :], in0[:, None, :], fidelity)  # [i, j, k]
    total = np.zeros((32, 32), np.float32)
    for k in range(32):
        total = total + products[:, :, k]  # float32, rounded at every step as the kernel adds
    return twin_dst_store(dst + total, fp32_dest)


def _faces(tile) -> np.ndarray:
    faces = np.empty(1024, np.float32)
    faces[numerics.FACE_INDEX.ravel()] = np.asarray(tile, np.float32).ravel()
    return faces


def _operands():
    """matmul_tile_exact's working space."""
    return np.empty((numerics.OPERAND_ROWS, 1024), np.uint32)


@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
@pytest.mark.parametrize("fp32_dest", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_matmul_tile_fast_bit_exact(fidelity, fp32_dest, transpose):
    """The vectorized tile matmul (exact products: tile_products) sums in the stated
    order: cancelling sums, signed zeros and Dst's rounding show any other order."""
    rng = np.random.default_rng(seed("matmul", fidelity, fp32_dest, transpose))
    for trial in range(6):
        in0 = random_bf16_values(rng, 1024, -8, 8).reshape(32, 32)
        in1 = random_bf16_values(rng, 1024, -8, 8).reshape(32, 32)
        in0[rng.random((32, 32)) < 0.1] = -0.0
        in1[:, 3] = 0.0
        dst = random_bf16_values(rng, 1024, -4, 4).reshape(32, 32)
        out = _faces(dst)
        numerics.matmul_tile_fast(_faces(in0), _faces(in1), transpose, out, int(fidelity), fp32_dest, _operands())
        expected = twin_matmul_tile(in0, in1, dst, int(fidelity), fp32_dest, transpose)
        np.testing.assert_array_equal(bits_of(out[numerics.FACE_INDEX]), bits_of(expected))
        if trial == 0:  # products are exact: the tiles take the vectorized path
            assert numerics.matmul_tile_exact(_faces(in0), _faces(in1), transpose, _faces(dst), int(fidelity),
                                              fp32_dest, _operands())


def twin_reduce_tile(tile, scaler: float, dst, is_max: bool, dim: int, fidelity: int, fp32_dest: bool) -> np.ndarray:
    """Dst (32, 32) after reduce_tile in the fast numerics: fidelity products with the
    scaler (MAX: whole), summed in float32 from +0 (or maxed from -inf) in order: a
    row's columns left to right (ROW), a column's rows top to bottom (COL), the tile row
    by row (SCALAR); combined with Dst and stored once at column 0, row 0 or (0, 0),
    the rest 0."""
    products = twin_fidelity_product(tile, np.float32(scaler), int(MathFidelity.HiFi4) if is_max else fidelity)
    lines = products if dim == ReduceKind.SUM_ROW else (products.T if dim == ReduceKind.SUM_COL
                                                        else products.reshape(1, -1))
    total = np.full(lines.shape[0], -np.inf if is_max else 0.0, np.float32)
    for k in range(lines.shape[1]):
        total = np.maximum(total, lines[:, k]) if is_max else total + lines[:, k]
    out = np.zeros((32, 32), np.float32)
    at = (slice(None), 0) if dim == ReduceKind.SUM_ROW else ((0, slice(None)) if dim == ReduceKind.SUM_COL else
                                                             (slice(0, 1), 0))
    out[at] = twin_dst_store(np.maximum(dst[at], total) if is_max else dst[at] + total, fp32_dest)
    return out


@pytest.mark.parametrize("kind", list(ReduceKind), ids=lambda k: k.name)
@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
@pytest.mark.parametrize("fp32_dest", [False, True])
def test_reduce_tile_fast_bit_exact(kind, fidelity, fp32_dest):
    """The tile reduction sums (maxes) in the stated order: values of mixed magnitudes,
    whose float32 sums round differently in any other order, and signed zeros."""
    rng = np.random.default_rng(seed("reduce", kind, fidelity, fp32_dest))
    is_max, dim = kind >= ReduceKind.MAX_ROW, int(kind) & 3
    for _ in range(4):
        tile = (random_bf16_values(rng, 1024, -8, 8) * np.float32(2.0) ** rng.integers(-12, 12, 1024)).reshape(32, 32)
        tile[rng.random((32, 32)) < 0.05] = -0.0
        scaler = np.float32(rng.choice([1.0, 0.5, 1.0 / 1024, 3.0]))
        dst = random_bf16_values(rng, 1024, -4, 4).reshape(32, 32)
        out = _faces(dst)
        numerics.reduce_tile_fast(_faces(tile), _faces(np.full((32, 32), scaler)), out, np.empty(1024, np.float32),
                                  is_max, dim, int(fidelity), fp32_dest)
        expected = twin_reduce_tile(tile, scaler, dst, is_max, dim, int(fidelity), fp32_dest)
        np.testing.assert_array_equal(bits_of(out[numerics.FACE_INDEX]), bits_of(expected))


@pytest.mark.parametrize("magnitude, exact", [(0.0, True), (2.0 ** -62, True), (2.0 ** 62, False),
                                              (2.0 ** -63, False), (np.inf, False), (np.nan, False),
                                              (1e-45, False), (-(2.0 ** 61), True)])
@pytest.mark.parametrize("operand", [0, 1])
def test_matmul_tile_exact_takes_only_exact_products(magnitude, exact, operand):
    """The vectorized path takes tiles of magnitudes in [2^-62, 2^62) (and zeros) only,
    and leaves Dst alone otherwise; the scalar path handles the rest, as the twin does."""
    tiles = [np.ones(1024, np.float32), np.ones(1024, np.float32)]
    tiles[operand][517] = magnitude
    out = np.full(1024, 3.0, np.float32)
    assert numerics.matmul_tile_exact(tiles[0], tiles[1], False, out, 4, True, _operands()) == exact
    assert (out != 3.0).any() == exact


def mixed_f32(rng, n) -> np.ndarray:
    """Finite normals within 2^+-12, a third at a bf16 tie, with specials sprinkled in."""
    values = bits_of(random_bf16_values(rng, n, -12, 12)).copy()
    ties = rng.random(n) < 0.3
    values[ties] = values[ties] & np.uint32(0xFFFF0000) | np.uint32(0x8000)
    specials = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000001, 0x807FFFFF,
                         0x00800000, 0x7F7FFFFF, 0x3FFFFFFF, 0x3FFF8000, 0xBFFF8000], np.uint32)
    pick = rng.random(n) < 0.05
    values[pick] = rng.choice(specials, int(pick.sum()))
    return as_f32(values)


def _pack(values, fmt: DataFormat) -> np.ndarray:
    row = np.full(64 + fmt.tile_size + 64, 0xA5, np.uint8)
    numerics.pack_tile(np.ascontiguousarray(values, np.float32), row, 64, int(fmt))
    assert (row[:64] == 0xA5).all() and (row[64 + fmt.tile_size:] == 0xA5).all()  # stays in its tile
    return row[64:64 + fmt.tile_size]


def _unpack(data, fmt: DataFormat) -> np.ndarray:
    row = np.concatenate([np.zeros(32, np.uint8), np.asarray(data, np.uint8), np.zeros(32, np.uint8)])
    out = np.full(1024, np.nan, np.float32)
    numerics.unpack_tile(row, 32, int(fmt), out)
    return out


@pytest.mark.parametrize("fmt", [F32, BF16, BFP8, BFP4], ids=lambda f: f.name)
def test_pack_tile_float_formats(fmt):
    rng = np.random.default_rng(20 + int(fmt))
    for _ in range(4):
        values = mixed_f32(rng, 1024)
        # Face rows with one dominant value, so block floats shift the others a lot.
        with np.errstate(invalid="ignore"):
            values[:64] = values[:64] * np.float32(2.0 ** -9)
        np.testing.assert_array_equal(_pack(values, fmt), twin_pack(values, fmt))


def test_pack_tile_rounding_facts():
    """Hand-computed cases: bf16 ties away from zero; denormals and -0 flush to +0;
    Bfp8_b rounds through bf16 (0x3F80FFFF -> bf16 0x3F81 -> tie -> away: code 0x41,
    where rounding the float32 once would give 0x40); Bfp4_b truncates the Bfp8_b code."""
    values = np.zeros(1024, np.float32)
    values[:6] = as_f32(np.array([0x3F808000, 0xBF808000, 0x3F818000, 0x00000001, 0x80000000, 0x3F80FFFF],
                                 np.uint32))
    bf16 = _pack(values, BF16).view(np.uint16)
    assert list(bf16[:6]) == [0x3F81, 0xBF81, 0x3F82, 0, 0, 0x3F81]
    row = np.zeros(1024, np.float32)
    row[0], row[1], row[2] = 1.0, as_f32(np.array([0x3F80FFFF], np.uint32))[0], -1.875
    bfp8 = _pack(row, BFP8)
    assert bfp8[0] == 127  # shared exponent of face 0 row 0
    assert list(bfp8[64:67]) == [0x40, 0x41, 0x80 | 0x78]
    bfp4 = _pack(row, BFP4)
    assert bfp4[0] == 127
    assert bfp4[64] == (0x4 | (0x4 << 4)) and bfp4[65] & 0xF == 0x8 | 0x7  # 0x41 -> 0x4, -0x78 -> sign|7


@pytest.mark.parametrize("fmt", [DataFormat.uint8, DataFormat.uint16, DataFormat.uint32, DataFormat.int32],
                         ids=lambda f: f.name)
def test_pack_tile_integer_formats(fmt):
    """Integer formats keep the low bits of Dst's 32-bit patterns, whatever they are."""
    rng = np.random.default_rng(30 + int(fmt))
    patterns = rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32)
    patterns[:4] = [0x7F800001, 0xFFFFFFFF, 0x80000000, 0x12345678]  # a signalling NaN's bits survive
    np.testing.assert_array_equal(_pack(as_f32(patterns), fmt), twin_pack(as_f32(patterns), fmt))
    size = fmt.tile_size // 1024
    assert int.from_bytes(bytes(_pack(as_f32(patterns), fmt)[3 * size:4 * size]), "little") == \
        0x12345678 & ((1 << 8 * size) - 1)


@pytest.mark.parametrize("fmt", [DataFormat.uint8, DataFormat.uint16, DataFormat.uint32, DataFormat.int32],
                         ids=lambda f: f.name)
def test_unpack_integer_formats_to_dest(fmt):
    """Unpacked to a 32-bit Dst, integers keep their bits (narrow ones zero-extended);
    to the Src registers they become float32 values."""
    rng = np.random.default_rng(35 + int(fmt))
    data = rng.integers(0, 256, fmt.tile_size).astype(np.uint8)
    row = np.concatenate([np.zeros(32, np.uint8), data, np.zeros(32, np.uint8)])
    out = np.full(1024, np.nan, np.float32)
    numerics.unpack_tile(row, 32, int(fmt), out, True)
    dtype = {DataFormat.int32: np.uint32, DataFormat.uint32: np.uint32, DataFormat.uint16: np.uint16,
             DataFormat.uint8: np.uint8}[fmt]
    np.testing.assert_array_equal(bits_of(out), data.view(dtype).astype(np.uint32))


@pytest.mark.parametrize("fmt", [F32, BF16, BFP8, BFP4, DataFormat.int32, DataFormat.uint32, DataFormat.uint16,
                                 DataFormat.uint8], ids=lambda f: f.name)
def test_unpack_tile(fmt):
    rng = np.random.default_rng(40 + int(fmt))
    for _ in range(3):
        data = rng.integers(0, 256, fmt.tile_size).astype(np.uint8)
        np.testing.assert_array_equal(bits_of(_unpack(data, fmt)), bits_of(twin_unpack(data, fmt)[0]))
    if fmt is F32:  # tf32: the 13 low mantissa bits go
        data = np.full(1024, 0x3FFFFFFF, np.uint32).view(np.uint8)
        assert (bits_of(_unpack(data, fmt)) == 0x3FFFE000).all()


@pytest.mark.parametrize("fmt", [F32, BF16, BFP8, BFP4, DataFormat.int32, DataFormat.uint32, DataFormat.uint16,
                                 DataFormat.uint8], ids=lambda f: f.name)
@pytest.mark.parametrize("to_dest", [False, True])
def test_unpack_tile_of_the_first_values(fmt, to_dest):
    """unpack_tile of `count` values writes the first `count` of the whole tile's values
    and nothing after them (a scalar broadcast reads one)."""
    data = np.random.default_rng(45 + int(fmt)).integers(0, 256, fmt.tile_size).astype(np.uint8)
    whole = np.empty(1024, np.float32)
    numerics.unpack_tile(data, 0, int(fmt), whole, to_dest)
    for count in (1, 15, 16, 17, 1023):
        part = np.full(1024, 7.0, np.float32)
        numerics.unpack_tile(data, 0, int(fmt), part, to_dest, count)
        np.testing.assert_array_equal(bits_of(part[:count]), bits_of(whole[:count]))
        assert (part[count:] == 7.0).all()


@pytest.mark.parametrize("fmt", [F32, BF16, BFP8, BFP4], ids=lambda f: f.name)
def test_pack_then_unpack(fmt):
    """Unpacking what the packer wrote gives the packer's rounding of the values."""
    rng = np.random.default_rng(50 + int(fmt))
    values = random_bf16_values(rng, 1024, -6, 6)
    got = _unpack(_pack(values, fmt), fmt)
    if fmt is F32:
        np.testing.assert_array_equal(bits_of(got), bits_of(values) & 0xFFFFE000)
    elif fmt is BF16:
        np.testing.assert_array_equal(bits_of(got), ref.bf16_to_f32_bits(ref.bf16_bits(values, "nearest_away")))
    else:
        np.testing.assert_array_equal(got, twin_unpack(twin_pack(values, fmt), fmt)[0])
        # Error bound relative to 2^(row's largest exponent): one Bfp8_b unit (bf16 rounding,
        # then half a unit, or a saturation); Bfp4_b's truncation adds up to one Bfp4_b unit.
        bound = 2.0 ** -6 if fmt is BFP8 else 2.0 ** -2 + 2.0 ** -6
        rounded = as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(values, "nearest_away")))  # may carry up
        largest = np.exp2(np.floor(np.log2(np.abs(rounded).reshape(64, 16).max(axis=1, keepdims=True))))
        error = np.abs(got - values).reshape(64, 16)
        assert (error <= bound * largest).all()
        assert (error > 0.25 * bound * largest).any()  # and it is not loose


def test_every_sfpu_op_of_the_target_is_implemented():
    """sfpu_unary / sfpu_binary return NaN, and the bit-pattern ops -1, for an op they do
    not implement; every op is defined at (0.5, 2.0) (and 1.0), acosh at 1.5, and the
    integer ones at (5, 3)."""
    for op in SfpuOp:
        if numerics.is_bits_unary(op):
            assert numerics.sfpu_unary_bits(op, 5) != -1, op.name
        elif numerics.is_bits_binary(op):
            assert numerics.sfpu_binary_bits(op, 5, 3) != -1, op.name
        elif op >= SfpuOp.WHERE:
            assert numerics.sfpu_ternary(op, 1, 5, 3) == 5, op.name
        else:
            x = 1.5 if op == SfpuOp.ACOSH else 0.5
            got = numerics.sfpu_unary(op, x, 2.0) if op < SfpuOp.ADD else numerics.sfpu_binary(op, x, 2.0)
            assert not math.isnan(got), op.name
    assert math.isnan(numerics.sfpu_unary(SfpuOp.ADD, 0.5, 2.0)) and math.isnan(numerics.sfpu_binary(0, 0.5, 2.0))
    assert numerics.sfpu_unary_bits(SfpuOp.EXP, 5) == -1 and numerics.sfpu_binary_bits(SfpuOp.ADD, 5, 3) == -1


# ---- integer ops, against the int64 twins in tests/reference.py ----

INTEGER_EDGES = np.array([0, 1, -1, 2, -2, 3, 31, 32, 33, -31, -32, 7, -7, 2 ** 31 - 1, -2 ** 31, 2 ** 30, 65535,
                          -65536, 255, 256], np.int64)


def _integer_operands(rng, n=4096):
    """int32 pairs: every pair of edge values, then random words and small values."""
    a, b = np.meshgrid(INTEGER_EDGES, INTEGER_EDGES)
    wide = rng.integers(-2 ** 31, 2 ** 31, (2, n))
    small = rng.integers(-40, 40, (2, n))
    return (np.concatenate([a.ravel(), wide[0], small[0]]).astype(np.int32),
            np.concatenate([b.ravel(), wide[1], small[1]]).astype(np.int32))


@pytest.mark.parametrize("op", [op for op in SfpuOp if SfpuOp.ADD_INT <= op <= SfpuOp.GE_UINT], ids=lambda o: o.name)
def test_integer_binary_ops(op):
    a, b = _integer_operands(np.random.default_rng(seed("int", int(op))))
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    got = np.array([numerics.sfpu_binary_bits(op, int(x), int(y)) for x, y in zip(ua, ub)], np.int64)
    np.testing.assert_array_equal(ref.wrap_int32(got), ref.integer_binary(op, a, b))


@pytest.mark.parametrize("op", [op for op in SfpuOp if SfpuOp.NEG_INT <= op <= SfpuOp.F32_TO_U32],
                         ids=lambda o: o.name)
def test_integer_unary_ops(op):
    rng = np.random.default_rng(seed("int", int(op)))
    words = np.concatenate([INTEGER_EDGES.astype(np.int32).view(np.uint32), rng.integers(0, 2 ** 32, 4096).astype(
        np.uint32)])
    if op in (SfpuOp.F32_TO_I32, SfpuOp.F32_TO_U32):  # float operands: edges, halves, NaN, infinities
        values = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 3e9, -3e9,
                           np.inf, -np.inf, np.nan, 1e-30], np.float32)
        words = np.concatenate([bits_of(values), bits_of(rng.normal(0, 1e6, 4096).astype(np.float32)), words])
    got = np.array([numerics.sfpu_unary_bits(op, int(w)) for w in words], np.int64).astype(np.uint32)
    np.testing.assert_array_equal(got, ref.integer_unary(op, words))


def test_where_moves_bits_whole():
    """WHERE and WHERE_INT move any 32-bit pattern (a signalling NaN's too); WHERE reads
    its condition as a float (-0 is false), WHERE_INT as an int32."""
    snan, minus_zero = 0x7F800001, 0x80000000
    assert numerics.sfpu_ternary(SfpuOp.WHERE, bits_of(np.float32(1.0)).item(), snan, 7) == snan
    assert numerics.sfpu_ternary(SfpuOp.WHERE, minus_zero, snan, 7) == 7
    assert numerics.sfpu_ternary(SfpuOp.WHERE_INT, minus_zero, snan, 7) == snan
    assert numerics.sfpu_ternary(SfpuOp.WHERE_INT, 0, snan, 7) == 7


# ================================================================================================
# Part 2: library kernels through HAL dispatches
# ================================================================================================

def prepare(device, export):
    return device.create_executable_cache().prepare_executable("tenstorrent-ttx-fb", write_executable([export]))


def dispatch(device, export, inputs, out_shape, out_fmt, workgroups=None):
    """Runs `export` over `inputs` (buffer views) into a new TILE tensor; returns
    (output view, output device bytes). Push constants: tiles of the output, then (for
    binary ops) tiles per row Wt."""
    executable = prepare(device, export)
    out = device.allocator.allocate_tensor(out_shape, out_fmt, "tile")
    tiles = out.spec.num_pages
    constants = [tiles, out.spec.page_grid[1]][:export.constant_count]
    command_buffer = hal.HalCommandBuffer(device)
    count = min(64, tiles) if workgroups is None else workgroups
    command_buffer.dispatch(executable, 0, (count, 1, 1), np.array(constants, np.uint32).tobytes(),
                            [view.get_buffer() for view in inputs] + [out.get_buffer()])
    command_buffer.end()
    semaphore = device.create_semaphore(0)
    device.queue_execute(command_buffer, [], [(semaphore, 1)])
    assert semaphore.wait(1, timeout=120 * 10 ** 9)
    return out, out.get_buffer().read_array(0, out.byte_length)


def upload(device, x, fmt):
    """A TILE tensor of x in `fmt`; checks the host encoding and returns (view, Src
    values (n, 1024) of its tiles as the unpacker sees them)."""
    view = device.to_device(np.asarray(x, np.float32), fmt, "tile")
    data = view.get_buffer().read_array(0, view.byte_length)
    expected = twin_host_encode(x, fmt)
    np.testing.assert_array_equal(data, expected)
    return view, twin_unpack(expected, fmt)


def view_tiles(view) -> np.ndarray:
    """A float32 TILE tensor's tiles (n, 1024), all 32 bits, as an fp32 Dst receives them."""
    return view.get_buffer().read_array(0, view.byte_length).view(np.float32).reshape(-1, 1024).astype(np.float64)


def bf16_grid(rng, shape, low=-3, high=3) -> np.ndarray:
    """bf16-exact float32 values: random sign, exponent in [low, high), 7 mantissa bits;
    about 3% exact zeros."""
    values = as_f32(bits_of(random_bf16_values(rng, math.prod(shape), low, high)) & 0xFFFF0000)
    values[rng.random(values.shape[0]) < 0.03] = 0.0
    return values.reshape(shape)


BINARY_FORMATS = [(BF16, BF16, BF16), (F32, F32, F32), (BFP8, BFP8, BFP8), (BF16, F32, BFP8), (BFP8, BF16, F32)]


def expected_binary(op, src_a, src_b, fidelity, fp32_dest, broadcast=Broadcast.NONE, tiles_per_row=1,
                    model=FpuModel.FAST):
    """Dst tiles (n, 1024) after add/sub/mul_tiles of Src tiles on a device whose FPU
    computes in `model` (device.backend.fpu_model). Broadcast: output tile t uses B's
    tile t % Wt (ROW), t // Wt (COL) or 0 (SCALAR), and within it row 0, column 0 or
    element (0, 0)."""
    if broadcast != Broadcast.NONE:
        t = np.arange(src_a.shape[0])
        which = {Broadcast.ROW: t % tiles_per_row, Broadcast.COL: t // tiles_per_row,
                 Broadcast.SCALAR: np.zeros_like(t)}[broadcast]
        src_b = src_b[which][:, broadcast_index(broadcast)]
    if model != FpuModel.FAST:  # the datapath bit for bit (tests/fpu_twin.py): ELWSUB flips b's sign
        a, b = (bits_of(src.astype(np.float32)).astype(np.int64) for src in (src_a, src_b))
        if op == "mul":  # onto the clean Dst that tile_regs_acquire gives
            bits = fpu_twin.twin_mul(a, b, np.zeros_like(a), fidelity, fp32_dest, int(model))
        else:
            bits = fpu_twin.twin_add(a, b ^ 0x80000000 if op == "sub" else b, fp32_dest, int(model))
        return as_f32(bits).astype(np.float64)
    if op == "add":
        value = src_a + src_b
    elif op == "sub":
        value = src_a - src_b
    else:
        value = twin_fidelity_product(src_a, src_b, fidelity)
    return twin_dst_store(value, fp32_dest)


def check_output(data, dst, out_fmt):
    """Output bytes against the packer twin applied to the Dst twin. A float32 output
    is compared with the sign of zero ignored (test_fidelity_product_signed_zero covers
    it); the other formats flush -0 anyway."""
    expected = twin_pack(dst, out_fmt)
    if out_fmt is F32:
        got_values, expected_values = data.view(np.float32) + np.float32(0), expected.view(np.float32) + np.float32(0)
        np.testing.assert_array_equal(bits_of(got_values), bits_of(expected_values))
    else:
        np.testing.assert_array_equal(data, expected)


def sanity_close(got, exact, out_fmt, fidelity=4):
    """The twin's answer is the op itself up to the stated precision (so the twin is not
    vacuous): per element for bf16/fp32 outputs."""
    if out_fmt in (BF16, F32):
        rtol = 2.0 ** -7 + (2.0 ** -4 if fidelity == 0 else 2.0 ** -7)
        assert np.allclose(got, exact, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("fp32_dest", [False, True], ids=["bf16dst", "fp32dst"])
@pytest.mark.parametrize("formats", BINARY_FORMATS, ids=lambda f: "-".join(x.name for x in f))
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_eltwise_binary_bit_exact(numerics_device, op, formats, fp32_dest):
    device = numerics_device
    a_fmt, b_fmt, out_fmt = formats
    rng = np.random.default_rng(seed(op, formats, fp32_dest))
    shape = (70, 100)  # 3 x 4 tiles, padded on both sides
    if F32 in (a_fmt, b_fmt):  # float32 data with bits below tf32 precision
        a = random_bf16_values(rng, 7000, -3, 3).reshape(shape)
        b = random_bf16_values(rng, 7000, -3, 3).reshape(shape)
    else:
        a, b = bf16_grid(rng, shape), bf16_grid(rng, shape)
    b[:5, :5] = -a[:5, :5]  # exact cancellations
    va, src_a = upload(device, a, a_fmt)
    vb, src_b = upload(device, b, b_fmt)
    export = eltwise.eltwise_binary(op, a_fmt, b_fmt, out_fmt, fp32_dest_acc_en=fp32_dest)
    out, data = dispatch(device, export, [va, vb], shape, out_fmt)
    model = device.backend.fpu_model
    dst = expected_binary(op, src_a, src_b, 4, fp32_dest, model=model)
    check_output(data, dst, out_fmt)
    if model != FpuModel.FAST:  # the exact datapath reads Src BF16-style: what it adds is truncated further
        src_a, src_b = (as_f32(bits_of(src.astype(np.float32)) & 0xFFFF0000) for src in (src_a, src_b))
    exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](
        decode(src_a, shape).astype(np.float64), decode(src_b, shape).astype(np.float64))
    sanity_close(out.to_host(np.float32), exact, out_fmt)
    if fp32_dest and formats == (F32, F32, F32) and op != "mul":
        # tf32 unpack is visible: the float32 sum of the untruncated inputs differs.
        assert np.mean(decode(dst, shape) != {"add": np.add, "sub": np.subtract}[op](a, b)) > 0.5
    if fp32_dest and out_fmt is BFP8:
        # Bfp8_b rounding through bf16 first differs from rounding the float32 once somewhere.
        exponents, codes = ref.bfp_pack_rows(dst.reshape(-1, 16), 7, "nearest_away")
        once = np.concatenate([exponents.reshape(-1, 64), codes.reshape(-1, 1024)], axis=1).reshape(-1)
        assert (once != data).any()


def test_add_ties_show_dst_and_packer_rounding(numerics_device):
    """a + b exactly halfway between two bf16 values: the fast model's bf16 Dst (nearest
    even) and the packer (ties away) round it differently, both directions visible; the
    exact datapath rounds a bf16 Dst half away from zero, as the packer does."""
    device = numerics_device
    a = np.full((32, 32), 1.0, np.float32)
    b = np.full((32, 32), 2.0 ** -8, np.float32)  # 1 + 2^-8: tie between 1.0 and 1.0078125
    b[1] = 3 * 2.0 ** -8  # 1 + 3*2^-8: tie between 1.0078125 and 1.015625 (even: 1.015625)
    va, _ = upload(device, a, BF16)
    vb, _ = upload(device, b, BF16)
    results = {}
    for fp32_dest in (False, True):
        out, _ = dispatch(device, eltwise.eltwise_binary("add", BF16, BF16, BF16, fp32_dest_acc_en=fp32_dest),
                          [va, vb], (32, 32), BF16)
        results[fp32_dest] = out.to_host(np.float32)
    below = 1.0 if device.backend.fpu_model == FpuModel.FAST else 1.0078125  # nearest even, or half away
    assert (results[False][0] == below).all() and (results[False][1] == 1.015625).all()  # rounded in Dst
    assert (results[True][0] == 1.0078125).all() and (results[True][1] == 1.015625).all()  # ties away in packer


@pytest.mark.parametrize("fp32_dest", [False, True], ids=["bf16dst", "fp32dst"])
@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
def test_eltwise_mul_fidelity(numerics_device, fidelity, fp32_dest):
    device, model = numerics_device, numerics_device.backend.fpu_model
    rng = np.random.default_rng(60 + int(fidelity) + 10 * fp32_dest)
    shape = (64, 96)
    a, b = bf16_grid(rng, shape, -8, 8), bf16_grid(rng, shape, -8, 8)
    va, src_a = upload(device, a, BF16)
    vb, src_b = upload(device, b, BF16)
    out_fmt = F32 if fp32_dest else BF16
    export = eltwise.eltwise_binary("mul", BF16, BF16, out_fmt, math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest)
    out, data = dispatch(device, export, [va, vb], shape, out_fmt, workgroups=5)
    dst = expected_binary("mul", src_a, src_b, int(fidelity), fp32_dest, model=model)
    check_output(data, dst, out_fmt)
    got = out.to_host(np.float32)
    sanity_close(got, a.astype(np.float64) * b, out_fmt, int(fidelity))
    # The fidelity reaches the kernel: it differs from HiFi4's answer. Except HiFi3 into a
    # bf16 Dst in the exact datapath: HiFi4's fourth phase adds SrcA's low 3 bits times
    # SrcB's low bit of bf16 operands, which that Dst rounds away.
    if fidelity != MathFidelity.HiFi4 and not (model != FpuModel.FAST and fidelity == MathFidelity.HiFi3
                                               and not fp32_dest):
        hifi4 = decode(expected_binary("mul", src_a, src_b, 4, fp32_dest, model=model), shape)
        assert np.mean(got != hifi4) > (0.3 if fp32_dest else 0.002)


BROADCAST_CASES = [  # (broadcast, shape of a, shape of b)
    (Broadcast.ROW, (70, 100), (1, 100)), (Broadcast.ROW, (2, 70, 100), (1, 100)), (Broadcast.ROW, (40, 20), (1, 20)),
    (Broadcast.COL, (70, 100), (70, 1)), (Broadcast.COL, (2, 70, 100), (2, 70, 1)), (Broadcast.COL, (20, 40), (20, 1)),
    (Broadcast.SCALAR, (70, 100), (1, 1)), (Broadcast.SCALAR, (2, 70, 100), (1, 1)),
]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("broadcast,a_shape,b_shape", BROADCAST_CASES,
                         ids=lambda v: getattr(v, "name", None) or "x".join(map(str, v)))
def test_eltwise_binary_broadcast(numerics_device, op, broadcast, a_shape, b_shape):
    """b is a (1, W) row, an (H, 1) column (outer dimensions folded into H) or a scalar:
    output tile t reads b's tile t % Wt (ROW), t // Wt (COL) or 0 (SCALAR) and repeats
    its row 0, column 0 or element (0, 0)."""
    device = numerics_device
    rng = np.random.default_rng(seed(op, broadcast, a_shape))
    a, b = bf16_grid(rng, a_shape), bf16_grid(rng, b_shape)
    va, src_a = upload(device, a, BF16)
    vb, src_b = upload(device, b, BF16)
    export = eltwise.eltwise_binary(op, BF16, BF16, BF16, broadcast=broadcast, math_fidelity=MathFidelity.HiFi3)
    out, data = dispatch(device, export, [va, vb], a_shape, BF16, workgroups=7)
    tiles_per_row = out.spec.page_grid[1]
    dst = expected_binary(op, src_a, src_b, 3, False, broadcast, tiles_per_row, device.backend.fpu_model)
    check_output(data, dst, BF16)
    # Independently of the tile twins: numpy's broadcasting in tensor coordinates.
    exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a.astype(np.float64), b.astype(np.float64))
    assert exact.shape == a.shape
    assert np.allclose(out.to_host(np.float32), exact, rtol=2.0 ** -7 + 2.0 ** -7, atol=1e-30)


@pytest.mark.parametrize("workgroups", [1, 7, 64, 100, 150])
def test_eltwise_grid_sizes(device, workgroups):
    """Workgroup w of n takes tiles [w*T//n, (w+1)*T//n): every tile is written exactly
    once whatever the grid, including more workgroups than cores (64) or than tiles."""
    rng = np.random.default_rng(workgroups)
    shape = (200, 300)  # 7 x 10 = 70 tiles
    a, b = bf16_grid(rng, shape), bf16_grid(rng, shape)
    va, src_a = upload(device, a, BF16)
    vb, src_b = upload(device, b, BF16)
    _, data = dispatch(device, eltwise.eltwise_binary("sub", BF16, BF16, BF16), [va, vb], shape, BF16, workgroups)
    np.testing.assert_array_equal(data, twin_pack(expected_binary("sub", src_a, src_b, 4, False,
                                                                  model=device.backend.fpu_model), BF16))


def test_eltwise_more_workgroups_than_tiles_and_cores(device):
    rng = np.random.default_rng(70)
    shape = (40, 50)  # 2 x 2 tiles
    a, b = bf16_grid(rng, shape), bf16_grid(rng, shape)
    va, src_a = upload(device, a, BF16)
    vb, src_b = upload(device, b, BF16)
    _, data = dispatch(device, eltwise.eltwise_binary("add", BF16, BF16, BF16), [va, vb], shape, BF16, 130)
    np.testing.assert_array_equal(data, twin_pack(expected_binary("add", src_a, src_b, 4, False,
                                                                  model=device.backend.fpu_model), BF16))


def test_eltwise_mul_infinity(device):
    """inf * 2 = inf through mul_tiles at the default HiFi4. BUG: NaN (see
    test_fidelity_product_specials)."""
    a = np.full((32, 32), np.inf, np.float32)
    a[1] = -np.inf
    b = np.full((32, 32), 2.0, np.float32)
    va, _ = upload(device, a, BF16)
    vb, _ = upload(device, b, BF16)
    out, _ = dispatch(device, eltwise.eltwise_binary("mul", BF16, BF16, BF16), [va, vb], (32, 32), BF16)
    np.testing.assert_array_equal(out.to_host(np.float32), a * b)


# ---- SFPU unary ops ----

def _gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


# op -> (numpy reference on float64, input range (low, high), parameter, exact in float32)
# "exact": the op is one float32 operation whose float32 result numpy reproduces bit for bit.
SFPU_CASES = {
    SfpuOp.EXP: (np.exp, (-20, 20), 0.0, False),
    SfpuOp.LOG: (np.log, (0.01, 1000), 0.0, False),
    SfpuOp.SQRT: (np.sqrt, (0, 1000), 0.0, False),
    SfpuOp.RSQRT: (lambda x: 1 / np.sqrt(x), (0.001, 1000), 0.0, False),
    SfpuOp.RECIP: (lambda x: 1 / x, (-100, 100), 0.0, False),
    SfpuOp.RELU: (lambda x: np.maximum(x, 0), (-10, 10), 0.0, True),
    SfpuOp.GELU: (_gelu, (-6, 6), 0.0, False),
    SfpuOp.SIGMOID: (lambda x: 1 / (1 + np.exp(-x)), (-30, 30), 0.0, False),
    SfpuOp.TANH: (np.tanh, (-10, 10), 0.0, False),
    SfpuOp.SILU: (lambda x: x / (1 + np.exp(-x)), (-30, 30), 0.0, False),
    SfpuOp.NEG: (np.negative, (-10, 10), 0.0, True),
    SfpuOp.ABS: (np.abs, (-10, 10), 0.0, True),
    SfpuOp.SQUARE: (np.square, (-100, 100), 0.0, True),
    SfpuOp.SIN: (np.sin, (-10, 10), 0.0, False),
    SfpuOp.COS: (np.cos, (-10, 10), 0.0, False),
    SfpuOp.ADD_SCALAR: (None, (-10, 10), 0.3, True),
    SfpuOp.MUL_SCALAR: (None, (-10, 10), -1.7, True),
    SfpuOp.POWER: (None, (0.01, 10), 2.5, False),
    SfpuOp.LEAKY_RELU: (None, (-10, 10), 0.01, True),
    SfpuOp.GTZ: (lambda x: (x > 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.GEZ: (lambda x: (x >= 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.LTZ: (lambda x: (x < 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.LEZ: (lambda x: (x <= 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.EQZ: (lambda x: (x == 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.NEZ: (lambda x: (x != 0).astype(np.float64), (-2, 2), 0.0, True),
    SfpuOp.FLOOR: (np.floor, (-10, 10), 0.0, True),
    SfpuOp.CEIL: (np.ceil, (-10, 10), 0.0, True),
    SfpuOp.TRUNC: (np.trunc, (-10, 10), 0.0, True),
    SfpuOp.ROUND_EVEN: (np.rint, (-10, 10), 0.0, True),
    SfpuOp.EXPM1: (np.expm1, (-5, 5), 0.0, False),
    SfpuOp.LOG1P: (np.log1p, (-0.9, 100), 0.0, False),
    SfpuOp.ERF: (scipy.special.erf, (-4, 4), 0.0, False),
    SfpuOp.ERFC: (scipy.special.erfc, (-4, 9), 0.0, False),
    SfpuOp.TAN: (np.tan, (-1.5, 1.5), 0.0, False),
    SfpuOp.ATAN: (np.arctan, (-10, 10), 0.0, False),
    SfpuOp.ASIN: (np.arcsin, (-1, 1), 0.0, False),
    SfpuOp.ACOS: (np.arccos, (-1, 1), 0.0, False),
    SfpuOp.SINH: (np.sinh, (-10, 10), 0.0, False),
    SfpuOp.COSH: (np.cosh, (-10, 10), 0.0, False),
    SfpuOp.ASINH: (np.arcsinh, (-100, 100), 0.0, False),
    SfpuOp.ACOSH: (np.arccosh, (1, 100), 0.0, False),
    SfpuOp.ATANH: (np.arctanh, (-0.99, 0.99), 0.0, False),
    SfpuOp.EXP2: (np.exp2, (-20, 20), 0.0, False),
    SfpuOp.SIGN: (lambda x: np.where(x == 0, x, np.sign(x)), (-2, 2), 0.0, True),  # -0 stays -0
    SfpuOp.CBRT: (np.cbrt, (-100, 100), 0.0, False),
}
# Edge inputs per op, with the IEEE/numpy answers (float64 references handle them).
SFPU_EDGES = {
    SfpuOp.EXP: [100.0, -100.0, 0.0], SfpuOp.LOG: [0.0, -1.0, 1.0], SfpuOp.SQRT: [-4.0, 0.0],
    SfpuOp.RSQRT: [0.0, -1.0], SfpuOp.RECIP: [0.0, -0.0, 1e-30], SfpuOp.SIGMOID: [-100.0, 100.0],
    SfpuOp.TANH: [100.0, -100.0], SfpuOp.SQUARE: [1e20, -1e20],
    **{op: [0.0, -0.0, math.nan, math.inf, -math.inf, 1e-30, -1e-30]
       for op in (SfpuOp.GTZ, SfpuOp.GEZ, SfpuOp.LTZ, SfpuOp.LEZ, SfpuOp.EQZ, SfpuOp.NEZ, SfpuOp.SIGN)},
    **{op: [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 7.0, math.inf, -math.inf]  # ties, integers, infinities
       for op in (SfpuOp.FLOOR, SfpuOp.CEIL, SfpuOp.TRUNC, SfpuOp.ROUND_EVEN)},
    SfpuOp.LOG1P: [-1.0, -2.0, 0.0], SfpuOp.ASIN: [1.5, -1.0], SfpuOp.ACOSH: [0.5, 1.0], SfpuOp.ATANH: [1.0, -1.0, 2.0],
    SfpuOp.SINH: [100.0], SfpuOp.EXP2: [200.0, -200.0],
}

# bf16 output: the result is float32(op(x)) rounded once more to bf16 (nearest even in
# Dst), so it is within half a bf16 ulp (2^-8 relative) of the exact value, plus
# float32 evaluation slack (2^-8 * 2^-10); results below the smallest normal flush to 0.
BF16_RTOL = 2.0 ** -8 * (1 + 2.0 ** -10)
F32_RTOL = 2.0 ** -20  # float32 output with fp32 Dst: a few float32 ulps
TINY = 2.0 ** -126


def _sfpu_reference(op, x64, parameter):
    numpy_op, _, _, _ = SFPU_CASES[op]
    p = np.float64(np.float32(parameter))
    if op == SfpuOp.ADD_SCALAR:
        return (x64.astype(np.float32) + np.float32(parameter)).astype(np.float64)
    if op == SfpuOp.MUL_SCALAR:
        return (x64.astype(np.float32) * np.float32(parameter)).astype(np.float64)
    if op == SfpuOp.LEAKY_RELU:
        return np.where(x64 >= 0, x64, (x64.astype(np.float32) * np.float32(parameter)).astype(np.float64))
    if op == SfpuOp.POWER:
        return np.power(x64, p)
    if op == SfpuOp.SQUARE:
        return (x64.astype(np.float32) * x64.astype(np.float32)).astype(np.float64)
    return numpy_op(x64)


def as_float32(values) -> np.ndarray:
    """float64 results as float32 holds them (overflow to inf), for comparisons."""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float32)


def _check_close(got, expected, rtol):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
    error = np.abs(got[finite] - expected[finite])
    limit = rtol * np.abs(expected[finite]) + TINY
    bad = np.flatnonzero(error > limit)
    assert bad.size == 0, f"{bad.size} values off, e.g. got {got[finite][bad[:5]]} expected {expected[finite][bad[:5]]}"


def _sfpu_inputs(op, rng, shape, fmt):
    _, (low, high), _, _ = SFPU_CASES[op]
    x = rng.uniform(low, high, math.prod(shape)).astype(np.float32)
    edges = SFPU_EDGES.get(op, [])
    x[:len(edges)] = edges
    if fmt is BF16:
        x = as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(x)))
    return x.reshape(shape)


@pytest.mark.parametrize("op", list(SFPU_CASES), ids=lambda op: op.name)
def test_eltwise_unary_bf16(device, op):
    rng = np.random.default_rng(100 + int(op))
    shape = (50, 70)  # 2 x 3 tiles
    x = _sfpu_inputs(op, rng, shape, BF16)
    _, _, parameter, exact_op = SFPU_CASES[op]
    vx, src = upload(device, x, BF16)
    _, data = dispatch(device, eltwise.eltwise_unary(op, BF16, BF16, parameter), [vx], shape, BF16, workgroups=4)
    dst_in = twin_dst_store(src, False)  # copy_tile
    with np.errstate(all="ignore"):
        value = _sfpu_reference(op, dst_in.astype(np.float64), parameter)
    if exact_op:
        np.testing.assert_array_equal(data, twin_pack(twin_dst_store(value.astype(np.float32), False), BF16))
    got = twin_unpack(data, BF16)
    # Output tolerance (stated above): half a bf16 ulp relative, 2^-126 absolute.
    _check_close(decode(got, shape), decode(as_float32(value), shape), BF16_RTOL)


@pytest.mark.parametrize("op", list(SFPU_CASES), ids=lambda op: op.name)
def test_eltwise_unary_float32(device, op):
    """float32 in and out with fp32 Dst: copy_tile unpacks the input straight to Dst
    (UnpackToDestFp32, all 32 bits), the op runs in float32, the result is packed
    unrounded."""
    rng = np.random.default_rng(200 + int(op))
    shape = (32, 40)
    x = _sfpu_inputs(op, rng, shape, F32)
    _, _, parameter, exact_op = SFPU_CASES[op]
    vx, _ = upload(device, x, F32)
    src = view_tiles(vx)
    _, data = dispatch(device, eltwise.eltwise_unary(op, F32, F32, parameter, fp32_dest_acc_en=True), [vx], shape,
                         F32)
    with np.errstate(all="ignore"):
        value = _sfpu_reference(op, src.astype(np.float64), parameter)
    if exact_op:
        np.testing.assert_array_equal(data, twin_pack(value.astype(np.float32), F32))
    got = decode(data.view(np.float32).reshape(-1, 1024), shape)
    _check_close(got, decode(as_float32(value), shape), F32_RTOL)
    # Without fp32 Dst the same input goes through Src as tf32 and Dst as bf16: the
    # result differs in most elements of a non-trivial op.
    if op in (SfpuOp.EXP, SfpuOp.SQUARE, SfpuOp.SIN):
        _, bf16_dst = dispatch(device, eltwise.eltwise_unary(op, F32, F32, parameter), [vx], shape, F32)
        assert np.mean(decode(bf16_dst.view(np.float32).reshape(-1, 1024), shape) != got) > 0.5


def test_eltwise_unary_bfp8_in_and_out(device):
    """Block floats in and out, fp32 Dst: the result goes through bf16 (ties away) and then
    Bfp8_b (ties away)."""
    rng = np.random.default_rng(300)
    shape = (64, 64)
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    vx, src = upload(device, x, BFP8)
    _, data = dispatch(device, eltwise.eltwise_unary(SfpuOp.MUL_SCALAR, BFP8, BFP8, 1.3, fp32_dest_acc_en=True),
                         [vx], shape, BFP8, workgroups=3)
    value = src * np.float32(1.3)
    np.testing.assert_array_equal(data, twin_pack(value, BFP8))


def test_power_integer_exponent_of_negative_base(device):
    """x ** 2.0 is defined for negative x (integer exponent)."""
    x = as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(np.linspace(-8, 8, 1024, dtype=np.float32)))).reshape(32, 32)
    vx, src = upload(device, x, BF16)
    _, data = dispatch(device, eltwise.eltwise_unary(SfpuOp.POWER, BF16, BF16, 2.0), [vx], (32, 32), BF16)
    np.testing.assert_array_equal(data, twin_pack(twin_dst_store(src * src, False), BF16))


def test_power_of_zero(device):
    """0 ** p = 0 for p > 0 and +inf for p < 0 (IEEE pow, numpy). BUG: sfpu_unary's
    POWER returns NaN for x == 0 with a non-integer exponent (the guard is x > 0)."""
    x = np.zeros((32, 32), np.float32)
    x[0, :4] = [0.25, 1.0, 4.0, 9.0]
    vx, _ = upload(device, x, BF16)
    for parameter, zero_result in ((0.5, 0.0), (-0.5, np.inf)):
        out, _ = dispatch(device, eltwise.eltwise_unary(SfpuOp.POWER, BF16, BF16, parameter), [vx], (32, 32), BF16)
        got = out.to_host(np.float32)
        assert np.allclose(got[0, :4], x[0, :4] ** parameter, rtol=2.0 ** -8)
        assert (got[1:] == zero_result).all(), f"0 ** {parameter}: got {np.unique(got[1:])}"
