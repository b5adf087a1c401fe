"""ops reductions (sum, max), transpose, softmax, layernorm and rmsnorm, and the
SFPU masks (SfpuOp.MASK, MASK_NEG_INF) their kernels hide tile padding with.

Every op is checked two ways:
- against a numpy *twin* of the kernel (tt_hal/kernels/: reduce.py, transpose.py,
  normalization.py) chained through the device's numerics (the fast model,
  docs/tensix.md, sim/numerics.py; or the chip's datapath, tests/fpu_twin.py), compared
  bit for bit where the twin is exact (it is for sum, max, transpose, softmax,
  layernorm and rmsnorm in bf16 and fp32-Dst modes); the reductions run on a device of
  each numerics (numerics_device), the others on the default device;
- against a float64 numpy reference with a tolerance derived from the formats, so
  the twins are not vacuous and a change of numerics has a stated budget.

Format facts the tolerances use (bf16 has 8 significant bits, float32 24):
- U = 2^-8: one round-to-nearest to bf16 errs by at most half an ulp, i.e. 2^-8 of
  the value's power of two, whichever the tie rule (Dst's nearest-even or the
  packer's ties-away only differ on exact ties, whose error is half an ulp either
  way);
- T = 2^-7: a truncation to bf16 (the FPU multiplier's view of every operand of
  mul_tiles, reduce_tile's scaler product and matmul) errs by less than one ulp;
- unpacking float32 tiles keeps tf32 (13 low bits dropped); bf16 and block floats
  unpack exactly;
- without fp32_dest_acc_en every Dst result is rounded to bf16 (nearest even);
- SFPU ops run in float64/float32 and are then stored like any Dst result.
"""

from __future__ import annotations

import math
import os
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hal
from hal.status import HalError, StatusCode
from tests import reference as ref
from tests.fpu_twin import is_exact, twin_add, twin_mul, twin_reduce_lines
from tt_hal import ops
from tt_hal.sim import numerics
from tt_hal.sim.numerics import FpuModel
from tt_hal.target.isa import MathFidelity, SfpuOp

U = 2.0 ** -8  # bf16 round to nearest (see the module docstring)
T = 2.0 ** -7  # bf16 truncation
F = 2.0 ** -24  # float32 round to nearest
BF16, F32, BFP8 = "bfloat16", "float32", "bfloat8_b"
PAD_VALUES = [0.0, 1e30, -1e30, np.inf, -np.inf, np.nan]


# ================================================================================================
# Bit-level helpers
# ================================================================================================

def as_f32(bits) -> np.ndarray:
    return np.ascontiguousarray(bits, np.uint32).view(np.float32)


def bits_of(x) -> np.ndarray:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def trunc16(x) -> np.ndarray:
    """bf16 truncation: what the FPU multiplier sees of an operand."""
    return as_f32(bits_of(x) & np.uint32(0xFFFF0000))


def tf32(x) -> np.ndarray:
    """What the unpacker hands to Src of a float32 tile."""
    return as_f32(bits_of(x) & np.uint32(0xFFFFE000))


def rne16(x) -> np.ndarray:
    return as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(np.asarray(x, np.float32), "nearest_even")))


def dst(x, fp32_dest: bool) -> np.ndarray:
    """A result as Dst stores it."""
    x = np.asarray(x, np.float32)
    return x.copy() if fp32_dest else rne16(x)


def to_f32(x) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float64).astype(np.float32)


def pack(x, fmt: str) -> np.ndarray:
    """Dst values as to_host() returns them after the packer wrote `fmt` (bf16: ties away)."""
    if fmt == F32:
        return np.asarray(x, np.float32)
    assert fmt == BF16
    return as_f32(ref.bf16_to_f32_bits(ref.bf16_bits(np.asarray(x, np.float32), "nearest_away")))


def upload(device, x, fmt, **kwargs):
    """(view, the tensor's values as the device holds them, float32)."""
    view = device.to_device(np.asarray(x, np.float32), fmt, "tile", **kwargs)
    return view, view.to_host(np.float32)


def host(view) -> np.ndarray:
    return view.to_host(np.float32)


def raw(view) -> np.ndarray:
    return view.get_buffer().read_array(0, view.byte_length)


def seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def tiles_of(extent: int) -> int:
    return -(-extent // 32)


def assert_same(got, expected):
    """Equal values (NaN where NaN; the sign of zero ignored: the bf16 packer flushes -0)."""
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(expected, np.float32))


# ================================================================================================
# numpy twins of the library kernels
# ================================================================================================

def _padded(rows: np.ndarray, fill) -> np.ndarray:
    n = tiles_of(rows.shape[1])
    out = np.full((rows.shape[0], 32 * n), fill, np.float32)
    out[:, :rows.shape[1]] = rows
    return out


def _accumulate(seen: np.ndarray, order, fp32_dest: bool, kind: str) -> np.ndarray:
    """reduce_tile into one Dst column: for each tile in `order`, the row's partial over
    its 32 elements (float32, in column order, from 0; or a max) is combined with Dst
    in float32 and stored (bf16 nearest even without fp32_dest_acc_en)."""
    acc = np.zeros(seen.shape[0], np.float32) if kind == "sum" else np.full(seen.shape[0], -np.inf, np.float32)
    for t in order:
        block = seen[:, 32 * t:32 * t + 32]
        if kind == "sum":
            partial = np.zeros(seen.shape[0], np.float32)
            for j in range(32):
                partial = partial + block[:, j]
            acc = dst(acc + partial, fp32_dest)
        else:
            acc = dst(np.maximum(acc, block.max(axis=1)), fp32_dest)
    return acc


def _accumulate_exact(seen: np.ndarray, order, fp32_dest: bool, kind: str, row: bool) -> np.ndarray:
    """_accumulate in the exact numerics (numerics=exact): each reduce_tile as the chip's
    GAPOOL / GMPOOL sequence at the kernels' HiFi4, scaler 1.0 (tests/fpu_twin.py); Dst
    starts at 0 or -inf (fill_tile)."""
    bits = np.ascontiguousarray(seen, np.float32).view(np.uint32).astype(np.int64)
    start = np.float32(0.0 if kind == "sum" else -np.inf).view(np.uint32)
    acc = np.full(seen.shape[0], start, np.int64)
    for t in order:
        acc = twin_reduce_lines(kind == "max", row, bits[:, 32 * t:32 * t + 32], 0x3F800000, acc,
                                int(MathFidelity.HiFi4), fp32_dest, FpuModel.WORMHOLE)
    return as_f32(acc)


def multiplier_view(rows: np.ndarray, fmt: str, fp32_dest: bool) -> np.ndarray:
    """What reduce_tile's multiplier sees of each element of (rows, extent) host values:
    bf16 / bfp8 values as they are; float32 unpacked to tf32 and truncated to bf16,
    except the masked last tile of a ragged extent, which went through Dst (copy_tile:
    bf16 nearest even without fp32 Dst) and a CB of the intermediate format first."""
    if fmt != F32:
        return rows.astype(np.float32)
    seen = trunc16(tf32(rows)).copy()
    extent = rows.shape[1]
    if extent % 32 and not fp32_dest:
        last = slice(extent - extent % 32, extent)
        seen[:, last] = rne16(tf32(rows[:, last]))
    return seen


def twin_reduce(x: np.ndarray, dim: int, kind: str, fmt: str, fp32_dest: bool = False, exact: bool = False):
    """ops.sum / max of host values x (as the device holds them) over dim -1 or -2,
    as the reduce kernel computes it (in the `exact` numerics or the fast one): a
    ragged extent's masked LAST tile is reduced FIRST, then tiles 0..n-2; padding
    counts as 0 (sum) or -inf (max)."""
    shape = x.shape
    x = x.reshape(1, -1) if x.ndim == 1 else x
    moved = np.swapaxes(x, -1, -2) if dim == -2 else x
    lead, extent = moved.shape[:-1], moved.shape[-1]
    rows = multiplier_view(moved.reshape(-1, extent), fmt, fp32_dest)
    n = tiles_of(extent)
    order = [n - 1] + list(range(n - 1)) if extent % 32 else list(range(n))
    padded = _padded(rows, 0.0 if kind == "sum" else -np.inf)
    acc = _accumulate_exact(padded, order, fp32_dest, kind, dim == -1) if exact else \
        _accumulate(padded, order, fp32_dest, kind)
    out = acc.reshape(lead + (1,))
    out = np.swapaxes(out, -1, -2) if dim == -2 else out
    keep = list(shape)
    keep[dim] = 1
    return out.reshape(keep)


class FpuSteps:
    """The FPU steps of the library's row kernels in one numerics (fast: float32 on the
    Src values, stored in Dst; exact: the chip's datapath at the kernels' HiFi4,
    tests/fpu_twin.py). Operands are the values as Src holds them (bf16-truncated for
    the fast multiplier), numpy-broadcast; sub and add are SrcA a with SrcB b."""

    def __init__(self, fp32_dest: bool, exact: bool):
        self.fp32_dest, self.exact = fp32_dest, exact

    def reduce(self, seen, order, kind: str) -> np.ndarray:
        """A row reduction (reduce_tile ROW of each tile in `order`)."""
        if self.exact:
            return _accumulate_exact(seen, order, self.fp32_dest, kind, True)
        return _accumulate(seen, order, self.fp32_dest, kind)

    def add(self, a, b, subtract: bool = False) -> np.ndarray:
        if not self.exact:
            with np.errstate(invalid="ignore"):
                return dst(a - b if subtract else a + b, self.fp32_dest)
        a, b = np.broadcast_arrays(bits_of(a).astype(np.int64), bits_of(b).astype(np.int64))
        return as_f32(twin_add(a, b ^ (0x80000000 if subtract else 0), self.fp32_dest, FpuModel.WORMHOLE))

    def mul(self, a, b) -> np.ndarray:
        if not self.exact:
            return dst(a * b, self.fp32_dest)
        a, b = np.broadcast_arrays(bits_of(a).astype(np.int64), bits_of(b).astype(np.int64))
        return as_f32(twin_mul(a, b, np.zeros_like(a), int(MathFidelity.HiFi4), self.fp32_dest, FpuModel.WORMHOLE))


def twin_softmax(x: np.ndarray, fp32_dest: bool = False, exact: bool = False) -> np.ndarray:
    """Dst values of ops.softmax of host values x (bf16, or float32 with fp32 Dst), in
    the `exact` numerics or the fast one: m = row max (masked padding -inf); d = x - m
    (sub_tiles); e = exp(d) (SFPU, Dst); a CB holds e (float32 CBs unpack to tf32); s =
    sum of e (reduce, Dst accumulation tile by tile); r = 1/s (SFPU); y = e * r
    (mul_tiles; fast: operands truncated to bf16, exact product)."""
    fpu = FpuSteps(fp32_dest, exact)
    shape = x.shape
    rows = x.reshape(-1, shape[-1])
    n = tiles_of(shape[-1])
    xs = _padded(tf32(rows), -np.inf)
    m = fpu.reduce(trunc16(xs), range(n), "max")
    d = fpu.add(xs, m[:, None], subtract=True)
    e = dst(to_f32(np.exp(d.astype(np.float64))), fp32_dest)
    e = tf32(e)
    s = fpu.reduce(trunc16(e), range(n), "sum")
    r = dst(to_f32(1.0 / s.astype(np.float64)), fp32_dest)
    y = fpu.mul(trunc16(e), trunc16(tf32(r))[:, None])
    return y[:, :shape[-1]].reshape(shape)


def twin_norm(x: np.ndarray, eps: float, rms: bool, gamma=None, beta=None, fp32_dest: bool = False,
              exact: bool = False) -> np.ndarray:
    """Dst values of ops.layernorm / rmsnorm of host values x (gamma, beta: host
    values of rows of W), in the `exact` numerics or the fast one: mean = sum(x) *
    float32(1/W) (reduce, then SFPU MUL_SCALAR); c = x - mean (sub_tiles; the padding
    re-masked to 0); var = sum(c*c) * (1/W) + eps; inv = rsqrt(var) (SFPU); y = c * inv,
    then * gamma, then + beta (FPU)."""
    fpu = FpuSteps(fp32_dest, exact)
    shape = x.shape
    width = shape[-1]
    rows = tf32(x.reshape(-1, width))
    n = tiles_of(width)
    inverse_width = np.float64(np.float32(1.0 / width))
    xs = _padded(rows, 0.0)
    if rms:
        c = xs
    else:
        total = fpu.reduce(trunc16(xs), range(n), "sum")
        mean = tf32(dst(to_f32(total.astype(np.float64) * inverse_width), fp32_dest))
        c = tf32(fpu.add(xs, mean[:, None], subtract=True))
        c[:, width:] = 0.0
    squares = tf32(fpu.mul(trunc16(c), trunc16(c)))
    var = fpu.reduce(trunc16(squares), range(n), "sum")
    var = dst(to_f32(var.astype(np.float64) * inverse_width), fp32_dest)
    var = dst(var + np.float32(eps), fp32_dest)
    inv = tf32(dst(to_f32(1.0 / np.sqrt(var.astype(np.float64))), fp32_dest))  # rsqrt in float64
    y = fpu.mul(trunc16(c), trunc16(inv)[:, None])[:, :width]
    # A further step reads y back from a CB (float32 CBs unpack to tf32).
    if gamma is not None:
        y = fpu.mul(trunc16(y), trunc16(gamma.reshape(-1))[None, :])
    if beta is not None:
        y = fpu.add(tf32(y), tf32(beta.reshape(-1))[None, :])
    return y.reshape(shape)


# float64 references -----------------------------------------------------------------------------

def np_softmax(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_norm(x, eps, rms, gamma=None, beta=None):
    """(result, normalised core before gamma/beta, mean, sqrt(var + eps)) in float64."""
    x = np.asarray(x, np.float64)
    mean = np.zeros(x.shape[:-1] + (1,)) if rms else x.mean(axis=-1, keepdims=True)
    std = np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    core = (x - mean) / std
    out = core * (1.0 if gamma is None else np.asarray(gamma, np.float64).reshape(-1))
    out = out + (0.0 if beta is None else np.asarray(beta, np.float64).reshape(-1))
    return out, core, mean, std


# ================================================================================================
# Reductions
# ================================================================================================

REDUCE_SHAPES = [(32, 32), (64, 96), (40, 70), (2, 50, 33), (1, 5), (100, 1), (3, 64, 64), (70,)]


# The exact numerics' reduce (docs/fidelity.md#tolerances-of-the-tests-for-either-mode): per
# tile each line takes 2 faces x 2 GAPOOLs that change Dst (HiFi4's phases 2 and 3 multiply
# by the low slice of the 1.0 scaler, 0); each aligns its lanes on the 12-bit grid (8
# lanes, at most 2^-12 of the group's largest each) and, in a bf16 Dst, its two group sums
# to 11 bits (2 x 2^-11): together under POOL_ALIGN of sum|x|; then it rounds into Dst.
POOLS_PER_TILE = 4
POOL_ALIGN = 2.0 ** -8


def reduce_bound(n: int, dim: int, fp32_dest: bool, exact: bool) -> float:
    """|device sum - float64 sum of the values the multiplier sees| / their sum|v|, over n
    tiles. Fast: each tile's float32 partial (32 * F) added into Dst, rounded once (U, or F
    with fp32 Dst). Exact: POOLS_PER_TILE pools per tile, each POOL_ALIGN and a rounding
    into Dst; a row reduction's round trip through SrcB keeps bf16 of an fp32 Dst (< T)."""
    rounding = F if fp32_dest else U
    if not exact:
        return n * (32 * F + rounding)
    return n * (POOLS_PER_TILE * (POOL_ALIGN + rounding) + (T if fp32_dest and dim == -1 else 0.0))


def sum_bound(x64: np.ndarray, dim: int, fmt: str, exact: bool = False) -> np.ndarray:
    """|device sum - float64 sum| bound for bf16 Dst: reduce_bound, and float32 inputs are
    also truncated to bf16 (< T * |x|)."""
    n = tiles_of(x64.shape[dim])
    magnitude = np.abs(x64).sum(axis=dim, keepdims=True)
    return (reduce_bound(n, dim, False, exact) + (T if fmt == F32 else 0.0)) * magnitude + 1e-30


@pytest.mark.parametrize("fmt", [BF16, BFP8, F32])
@pytest.mark.parametrize("shape,dim", [(s, d) for s in REDUCE_SHAPES for d in (-1, -2) if len(s) >= -d],
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else f"dim{v}")
def test_sum_and_max_bit_exact(numerics_device, shape, fmt, dim):
    rng = np.random.default_rng(seed(shape, fmt, dim))
    exact_mode = is_exact(numerics_device)
    view, x = upload(numerics_device, rng.standard_normal(shape) * 4, fmt)
    out_fmt = F32 if fmt == F32 else BF16  # a bf16 Dst value packs exactly to bf16 or float32
    got_sum = host(ops.sum(view, dim, dtype=out_fmt))
    got_max = host(ops.max(view, dim, dtype=out_fmt))
    keep = list(shape)
    keep[dim] = 1
    assert got_sum.shape == got_max.shape == tuple(keep)
    assert_same(got_sum, pack(twin_reduce(x, dim, "sum", fmt, exact=exact_mode), out_fmt))
    assert_same(got_max, pack(twin_reduce(x, dim, "max", fmt, exact=exact_mode), out_fmt))
    # Independently of the twin: numpy in float64, within sum_bound; max is exact for
    # bf16-exact inputs (a max of bf16 values is one of them), and for float32 inputs
    # the bf16 truncation (or, in the masked last tile, nearest rounding) of the max.
    x64 = x.astype(np.float64)
    assert np.all(np.abs(got_sum - x64.sum(axis=dim, keepdims=True)) <= sum_bound(x64, dim, fmt, exact_mode))
    exact_max = x64.max(axis=dim, keepdims=True)
    if fmt == F32:
        assert np.all(np.abs(got_max - exact_max) <= T * np.abs(exact_max))
    else:
        assert_same(got_max, exact_max)


def test_sum_reduces_masked_last_tile_first(numerics_device):
    """The order is visible: width 33, tile 0 holds 1.0 and 2^-8 (partial 1 + 2^-8),
    the masked last tile 2^-8. Last tile first: Dst = 2^-8, then 2^-8 + 1 + 2^-8 =
    1.0078125 (a bf16). Natural order would give bf16(1 + 2^-8) = 1.0 (tie, even),
    then 1 + 2^-8 -> 1.0 again."""
    x = np.zeros((32, 33), np.float32)
    x[:, 0], x[:, 1], x[:, 32] = 1.0, 2.0 ** -8, 2.0 ** -8
    view, xs = upload(numerics_device, x, BF16)
    got = host(ops.sum(view))
    assert (got == 1.0078125).all()
    assert_same(got, twin_reduce(xs, -1, "sum", BF16, exact=is_exact(numerics_device)))
    # Same along dim -2 (height 33, masked last row tile first).
    got = host(ops.sum(numerics_device.to_device(x.T.copy(), BF16, "tile"), -2))
    assert (got == 1.0078125).all()


@pytest.mark.parametrize("fmt", [BF16, F32])
@pytest.mark.parametrize("shape,dim", [((64, 300), -1), ((300, 40), -2), ((2, 50, 33), -1)],
                         ids=["w300", "h300-dim-2", "batched"])
def test_sum_fp32_dest_acc(numerics_device, shape, dim, fmt):
    """fp32_dest_acc_en with a float32 output: in the fast numerics partials and Dst stay
    float32, so the sum is float32-accurate (reduce_bound) against the float64 sum of
    the values v the multiplier sees. For float32 inputs these are the inputs truncated
    to bf16 (the multiplier's operand precision), NOT the tf32 values Src holds: the
    error against the float64 sum of the inputs is up to T * sum|x|. In the exact
    numerics a row reduction passes Dst through SrcB after every tile, which keeps bf16:
    its results are bf16 values, no better than a bf16 Dst's."""
    rng = np.random.default_rng(7 + len(shape) + (fmt == F32))
    exact_mode = is_exact(numerics_device)
    view, x = upload(numerics_device, rng.uniform(-4, 4, shape), fmt)
    got = host(ops.sum(view, dim, dtype=F32, fp32_dest_acc_en=True))
    assert_same(got, twin_reduce(x, dim, "sum", fmt, fp32_dest=True, exact=exact_mode))
    n = tiles_of(shape[dim])
    bound = reduce_bound(n, dim, True, exact_mode)
    seen = trunc16(tf32(x)).astype(np.float64) if fmt == F32 else x.astype(np.float64)
    magnitude = np.abs(seen).sum(axis=dim, keepdims=True)
    assert np.all(np.abs(got - seen.sum(axis=dim, keepdims=True)) <= bound * magnitude)
    exact = x.astype(np.float64).sum(axis=dim, keepdims=True)
    error = np.abs(got - exact)
    bf16_dest = host(ops.sum(view, dim, dtype=F32))
    if exact_mode and dim == -1:
        assert not (bits_of(got) & 0xFFFF).any()
    elif fmt == BF16:  # much better than bf16 accumulation
        assert error.max() * 16 < np.abs(bf16_dest - exact).max()
    if fmt == F32:  # bounded by the truncation, and the truncation is visible
        assert np.all(error <= (T + bound) * np.abs(x.astype(np.float64)).sum(axis=dim, keepdims=True))
        assert np.any(error > 33 * n * F * magnitude)  # the tf32 bits below bf16 are lost


def test_max_fp32_dest_acc(numerics_device):
    rng = np.random.default_rng(8)
    view, x = upload(numerics_device, rng.standard_normal((40, 70)), F32)
    for dim in (-1, -2):
        got = host(ops.max(view, dim, dtype=F32, fp32_dest_acc_en=True))
        assert_same(got, twin_reduce(x, dim, "max", F32, fp32_dest=True, exact=is_exact(numerics_device)))
        assert_same(got, trunc16(x.max(axis=dim, keepdims=True)))  # all truncated alike with fp32 Dst


def test_max_row_in_padded_last_tile(numerics_device):
    """Each row's max sits in the ragged last tile (column 69 of 70), and all values are
    negative: the padding (0 here, larger than every value) must not win."""
    x = -np.abs(np.random.default_rng(9).standard_normal((40, 70))).astype(np.float32) - 1.0
    x[:, 69] = -0.5
    for pad in (0.0, 1e30, np.inf):
        view, xs = upload(numerics_device, x, BF16, pad_value=pad)
        assert_same(host(ops.max(view)), np.full((40, 1), -0.5))
        assert_same(host(ops.max(view, -2)), xs.max(axis=0, keepdims=True))


def test_sum_max_special_values(numerics_device):
    """inf and -inf in the data propagate like numpy's (inf - inf is NaN), in the fast
    numerics; the chip's datapath adds them as numbers with the largest exponent."""
    x = np.ones((32, 40), np.float32)
    x[0, 3], x[1, 35], x[2, 5], x[2, 36] = np.inf, -np.inf, np.inf, -np.inf
    view, xs = upload(numerics_device, x, BF16)
    got = host(ops.sum(view))
    if is_exact(numerics_device):  # the datapath has no NaN: inf is a large exponent, inf + -inf cancels
        assert_same(got, twin_reduce(xs, -1, "sum", BF16, exact=True))
        assert got[:2, 0].tolist() == [np.inf, -np.inf] and np.isfinite(got[2:]).all()
    else:
        with np.errstate(invalid="ignore"):
            assert_same(got, xs.sum(axis=1, keepdims=True))
    assert_same(host(ops.max(view)), xs.max(axis=1, keepdims=True))


# ---- Output formats, grids and placements ----

def test_reduce_output_formats(numerics_device):
    """float32 output of a bf16-Dst result is the same value; bfloat8_b output of a
    sum along dim -1 (column 0 of each face row valid, the rest 0) re-encodes each
    value with 7 significant bits: half a code step, 2^(e-7) <= 2^-7 relative."""
    rng = np.random.default_rng(10)
    view, _ = upload(numerics_device, rng.standard_normal((40, 70)), BF16)
    for dim in (-1, -2):
        bf16 = host(ops.sum(view, dim))
        assert_same(host(ops.sum(view, dim, dtype=F32)), bf16)
        assert_same(host(ops.max(view, dim, dtype=F32)), host(ops.max(view, dim)))
    bf16 = host(ops.sum(view, -1)).astype(np.float64)
    bfp8 = host(ops.sum(view, -1, dtype=BFP8))
    assert np.all(np.abs(bfp8 - bf16) <= T * np.abs(bf16))
    assert (bfp8 != bf16).any()  # the format reached the kernel


def test_max_dim_minus1_bfloat8_b_output(numerics_device):
    view, x = upload(numerics_device, np.random.default_rng(11).standard_normal((40, 70)), BF16)
    got = host(ops.max(view, -1, dtype=BFP8)).astype(np.float64)
    exact = x.max(axis=1, keepdims=True)
    # Re-encoded with 7 significant bits in a face row of no larger values: within 2^-7.
    assert np.all(np.abs(got - exact) <= T * np.abs(exact))


@pytest.mark.parametrize("op", ["sum", "max"])
def test_reduce_dim_minus2_bfloat8_b_output_pad_independent(numerics_device, op):
    x = np.random.default_rng(12).standard_normal((40, 70)).astype(np.float32)
    results = [host(getattr(ops, op)(numerics_device.to_device(x, BF16, "tile", pad_value=pad), -2, dtype=BFP8))
               for pad in PAD_VALUES]
    for result in results[1:]:
        assert_same(result, results[0])


@pytest.mark.parametrize("op", ["sum", "max", "softmax", "layernorm", "rmsnorm", "transpose"])
def test_grid_sizes_give_identical_bytes(device, op):
    """Workgroups split output tiles (reductions, transpose) or tile rows (row ops);
    the split must not change any byte. (3, 100, 130): 12 tile rows of 5 tiles."""
    view, _ = upload(device, np.random.default_rng(13).standard_normal((3, 100, 130)), BF16)
    run = getattr(ops, op)
    reference = raw(run(view))
    for grid in (1, 4, (2, 3), 64, None):
        np.testing.assert_array_equal(raw(run(view, grid=grid)), reference, err_msg=f"grid={grid}")


@pytest.mark.parametrize("op", ["sum", "max", "softmax", "layernorm", "rmsnorm", "transpose"])
def test_placements_give_identical_results(device, op):
    """Inputs and outputs in DRAM (interleaved), L1 (interleaved) or the allocator's
    default placement (L1 sharded here): the values do not depend on where tiles live."""
    x = np.random.default_rng(14).standard_normal((2, 50, 70)).astype(np.float32)
    run = getattr(ops, op)
    configs = [None, hal.DRAM_MEMORY_CONFIG, hal.L1_MEMORY_CONFIG]
    results = []
    for in_config in configs:
        view = device.to_device(x, BF16, "tile", in_config)
        for out_config in configs:
            out = run(view, memory_config=out_config)
            if out_config is not None:
                assert out.spec.memory_config.buffer_type == out_config.buffer_type
            results.append(host(out))
    for result in results[1:]:
        assert_same(result, results[0])


# ---- Padding independence ----

ROW_OPS = {
    "sum-1": lambda a: ops.sum(a, -1), "sum-2": lambda a: ops.sum(a, -2),
    "max-1": lambda a: ops.max(a, -1), "max-2": lambda a: ops.max(a, -2),
    "softmax": ops.softmax, "layernorm": ops.layernorm, "rmsnorm": ops.rmsnorm,
}


@pytest.mark.parametrize("fmt", [BF16, F32])
@pytest.mark.parametrize("shape", [(40, 70), (2, 50, 33), (5, 1)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", list(ROW_OPS))
def test_results_do_not_depend_on_pad_value(device, op, shape, fmt):
    """Padding is masked (MASK to 0 before sums, MASK_NEG_INF before maxima): any pad
    value, including +-inf and NaN, gives the same output (bf16 or float32)."""
    x = np.random.default_rng(15).standard_normal(shape).astype(np.float32)
    results = [host(ROW_OPS[op](device.to_device(x, fmt, "tile", pad_value=pad))) for pad in PAD_VALUES]
    assert np.isfinite(results[0]).all()
    for pad, result in zip(PAD_VALUES[1:], results[1:]):
        np.testing.assert_array_equal(result, results[0], err_msg=f"pad_value={pad}")


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_norm_gamma_beta_pad_independent(device, rms):
    """gamma's and beta's padding only reaches the output's padding columns (bf16 output)."""
    rng = np.random.default_rng(31)
    view, _ = upload(device, rng.standard_normal((40, 70)), BF16)
    gamma, beta = rng.uniform(0.5, 2, 70).astype(np.float32), rng.uniform(-1, 1, 70).astype(np.float32)
    run = ops.rmsnorm if rms else ops.layernorm
    results = [host(run(view, device.to_device(gamma, BF16, "tile", pad_value=pad),
                        device.to_device(beta, BF16, "tile", pad_value=pad))) for pad in PAD_VALUES]
    for pad, result in zip(PAD_VALUES[1:], results[1:]):
        np.testing.assert_array_equal(result, results[0], err_msg=f"pad_value={pad}")


@pytest.mark.parametrize("case", ["rmsnorm-x-pad", "layernorm-beta-pad", "layernorm-gamma-pad"])
def test_norm_bfloat8_b_output_pad_independent(device, case):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((40, 70)).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 2, 70).astype(np.float32), rng.uniform(-1, 1, 70).astype(np.float32)
    results = []
    for pad in PAD_VALUES:
        if case == "rmsnorm-x-pad":
            out = ops.rmsnorm(device.to_device(x, BF16, "tile", pad_value=pad), dtype=BFP8)
        else:
            view = device.to_device(x, BF16, "tile")
            row = device.to_device(gamma if "gamma" in case else beta, BF16, "tile", pad_value=pad)
            out = ops.layernorm(view, row if "gamma" in case else None, row if "beta" in case else None,
                                    dtype=BFP8)
        results.append(host(out))
    for result in results[1:]:
        assert_same(result, results[0])


# ================================================================================================
# Transpose
# ================================================================================================

TRANSPOSE_SHAPES = [(32, 32), (40, 70), (64, 96), (2, 3, 40, 70), (1, 5), (100, 1), (33, 200)]


@pytest.mark.parametrize("shape", TRANSPOSE_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_transpose_bf16_bit_exact(device, shape):
    view, x = upload(device, np.random.default_rng(17).standard_normal(shape), BF16)
    out = ops.transpose(view)
    expected = np.swapaxes(x, -1, -2)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(bits_of(host(out)), bits_of(expected))
    for dims in ((-1, -2), (len(shape) - 1, len(shape) - 2), (len(shape) - 2, -1)):
        np.testing.assert_array_equal(raw(ops.transpose(view, *dims)), raw(out))
    np.testing.assert_array_equal(raw(ops.transpose(out)), raw(view))  # an involution, padding included


def test_transpose_bf16_to_float32_output(device):
    view, x = upload(device, np.random.default_rng(18).standard_normal((40, 70)), BF16)
    np.testing.assert_array_equal(host(ops.transpose(view, dtype=F32)), x.T)


@pytest.mark.parametrize("shape", [(40, 70), (2, 3, 40, 70)], ids=lambda s: "x".join(map(str, s)))
def test_transpose_float32_bit_exact(device, shape):
    view, x = upload(device, np.random.default_rng(19).standard_normal(shape), F32)
    np.testing.assert_array_equal(bits_of(host(ops.transpose(view))), bits_of(np.swapaxes(x, -1, -2)))


def bfp8_reencoded(values: np.ndarray) -> np.ndarray:
    """Host values after packing `values` (bf16-exact) into Bfp8_b tiles the way the
    packer does (ties away; padding 0) and decoding them."""
    exponents, codes = ref.bfp_pack_rows(ref.tilize(values.astype(np.float32), np.float32(0)).reshape(-1, 16), 7,
                                         "nearest_away")
    return as_f32(ref.untilize(ref.bfp_unpack_rows(exponents, codes, 7).reshape(-1, 1024), values.shape))


@pytest.mark.parametrize("shape", [(40, 70), (2, 3, 40, 70), (100, 1), (64, 96)], ids=lambda s: "x".join(map(str, s)))
def test_transpose_bfloat8_b(device, shape):
    """Block-float exponents are shared per 16-element face row, so transposing
    re-encodes every value under its new row's exponent. Twin: the transposed values
    re-packed (exact). Tolerance: one code step of the new row's shared exponent e,
    2^(e - 6) (7 magnitude bits; the packer rounds, so half a step is reached)."""
    rng = np.random.default_rng(20)
    view, x = upload(device, rng.standard_normal(shape) * np.exp2(rng.integers(-3, 4, shape)), BFP8)
    got = host(ops.transpose(view))
    expected = np.swapaxes(x, -1, -2)
    np.testing.assert_array_equal(bits_of(got), bits_of(bfp8_reencoded(expected)))
    rows = ref.tilize(expected.astype(np.float32)).reshape(-1, 16)
    step = np.exp2(np.floor(np.log2(np.maximum(np.abs(rows).max(axis=1, keepdims=True), 2.0 ** -126))) - 6)
    error = np.abs(ref.tilize(got - expected).reshape(-1, 16))
    assert np.all(error <= step)
    if shape != (100, 1):
        assert (error > 0).any()  # re-encoding is visible


# ================================================================================================
# Softmax
# ================================================================================================

def softmax_bound(p, x64):
    """Relative error per element (bf16 Dst): d = x - max rounds (|dd| <= U|d|, so exp
    errs by expm1(U|d|)); exp, 1/s and e*r each round once (U); s sums e_j, whose own
    errors weigh in by p_j: U * (D + 1) with D = sum p_j |d_j|, plus one rounding per
    tile added into Dst (n * U). Total expm1(U|d|) + U (D + n + 4); a 10% margin for
    the products of these first-order terms."""
    n = tiles_of(x64.shape[-1])
    d = np.abs(x64 - x64.max(axis=-1, keepdims=True))
    weighted = (p * d).sum(axis=-1, keepdims=True)
    return 1.1 * (np.expm1(U * d) + U * (weighted + n + 4)), 1.1 * U * (2 * weighted + n + 4)


@pytest.mark.parametrize("width", [32, 33, 64, 70, 200])
def test_softmax_bf16(device, width):
    """Bit-exact against the twin; within softmax_bound of float64 softmax of the bf16
    inputs. Measured on N(0,1) rows (64 rows): max relative error 2.2-2.8e-2 (0.38-0.49
    of the bound), median 3.5-4e-3; rows sum to 1 within 8e-3 (<= 0.19 of the bound)."""
    rng = np.random.default_rng(21 + width)
    view, x = upload(device, rng.standard_normal((64, width)), BF16)
    got = host(ops.softmax(view))
    assert_same(got, pack(twin_softmax(x, exact=is_exact(device)), BF16))
    p = np_softmax(x)
    element, row = softmax_bound(p, x.astype(np.float64))
    relative = np.abs(got - p) / p
    assert np.all(relative <= element)
    assert np.median(relative) < 6e-3
    assert relative.max() < 4e-2
    assert np.all(np.abs(got.astype(np.float64).sum(axis=-1, keepdims=True) - 1) <= row)


@pytest.mark.parametrize("scale", [4, 50])
def test_softmax_large_magnitudes(device, scale):
    """x * 50 (|x - max| up to ~400): subtracting the row max keeps exp finite; tiny
    probabilities underflow to 0 (bf16 denormals flush in the packer). The relative
    error grows with |x - max| as softmax_bound says (measured: 0.70 of it at scale 4,
    max 7.5e-2; 0.85 at scale 50, max 0.3 where |x - max| ~ 85)."""
    rng = np.random.default_rng(22 + scale)
    view, x = upload(device, rng.standard_normal((2, 32, 70)) * scale, BF16)
    got = host(ops.softmax(view))
    assert np.isfinite(got).all()
    assert_same(got, pack(twin_softmax(x, exact=is_exact(device)), BF16))
    p = np_softmax(x)
    element, row = softmax_bound(p, x.astype(np.float64))
    # Within the bound where e stays a normal bf16 (the packer flushes denormals to 0:
    # p near 2^-126 may lose everything); far below, exactly 0.
    normal = p > 2.0 ** -124
    assert np.all(np.abs(got - p)[normal] <= (element * p)[normal])
    assert np.all(got[p < 2.0 ** -134] == 0)
    assert np.all(np.abs(got.astype(np.float64).sum(axis=-1, keepdims=True) - 1) <= row)


def test_softmax_max_in_padded_last_tile(device):
    """Every row's max is in the ragged last tile (column 69 of 70), the other values
    negative; the padding, whatever its value, is -inf before the max and exp."""
    rng = np.random.default_rng(23)
    x = -np.abs(rng.standard_normal((40, 70))).astype(np.float32) * 3
    x[:, 69] = 2.0
    x[:5, 64] = 2.0  # ties within the last tile
    results = []
    for pad in (0.0, 1e30, np.inf, np.nan):
        view, xs = upload(device, x, BF16, pad_value=pad)
        results.append(host(ops.softmax(view)))
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
    assert_same(results[0], pack(twin_softmax(xs, exact=is_exact(device)), BF16))
    p = np_softmax(xs)
    element, _ = softmax_bound(p, xs.astype(np.float64))
    assert np.all(np.abs(results[0] - p) <= element * p)


@pytest.mark.parametrize("width", [33, 200])
def test_softmax_fp32_dest_acc(device, width):
    """float32 in and out with fp32 Dst: bit-exact against the twin (Src tf32; reduce
    and mul_tiles operands truncated to bf16). The truncations (e and 1/s to bf16,
    each < T, both downwards) bound the error against float64 softmax of the tf32
    inputs by 2 T + (n + 4) * 2^-22; measured 1.1-1.2e-2 max (0.72-0.76 of it),
    3.3-3.8e-3 median: hardly better than bf16 Dst, the multiplier's bf16 operands
    dominate. In the exact numerics ELWSUB reads x as bf16 too, so x - max errs by up to
    (T + 2^-11) max|x| (its 11-bit alignment), e and the sum by expm1 of that, and the
    row sum keeps bf16 after every tile (reduce_bound)."""
    rng = np.random.default_rng(24 + width)
    view, x = upload(device, rng.standard_normal((64, width)) * 3, F32)
    got = host(ops.softmax(view, fp32_dest_acc_en=True))
    assert_same(got, twin_softmax(x, fp32_dest=True, exact=is_exact(device)))
    p = np_softmax(tf32(x))
    relative = 2 * T + (tiles_of(width) + 4) * 2.0 ** -22
    if is_exact(device):
        shift = (T + 2.0 ** -11) * np.abs(x.astype(np.float64)).max(axis=-1, keepdims=True)
        relative = 2 * T + 2 * np.expm1(shift) + reduce_bound(tiles_of(width), -1, True, True)
    assert np.all(np.abs(got - p) <= relative * p)
    # bf16 in/out, fp32 Dst (intermediate CBs in float32): the twin in fp32 mode, packed ties-away.
    view16, x16 = upload(device, x, BF16)
    assert_same(host(ops.softmax(view16, fp32_dest_acc_en=True)),
                pack(twin_softmax(x16, fp32_dest=True, exact=is_exact(device)), BF16))


def test_softmax_output_formats(device):
    view, _ = upload(device, np.random.default_rng(25).standard_normal((40, 70)), BF16)
    bf16 = host(ops.softmax(view)).astype(np.float64)
    assert_same(host(ops.softmax(view, dtype=F32)), bf16)  # bf16 Dst values, packed as float32
    # bfloat8_b: rows of 16 share an exponent, the code keeps 7 magnitude bits: error
    # <= half a step of the row's largest value's exponent (<= U * row max).
    bfp8 = host(ops.softmax(view, dtype=BFP8))
    rows = ref.tilize(bf16.astype(np.float32)).reshape(-1, 16)
    bound = U * np.exp2(np.floor(np.log2(np.abs(rows).max(axis=1, keepdims=True) + 1e-38)) + 1)
    assert np.all(np.abs(ref.tilize((bfp8 - bf16).astype(np.float32)).reshape(-1, 16)) <= bound)


# ================================================================================================
# layernorm / rmsnorm
# ================================================================================================

def norm_bound(x64, core, r, mean, std, gamma, rms):
    """Absolute error bound (bf16 Dst): the core c * inv carries x - mean (1 rounding),
    var = (sum of rounded squares, n tile roundings, * 1/W, + eps: n + 3 roundings,
    halved by the square root), rsqrt (1), the product (1) and gamma's product (1):
    (n/2 + 5.5) U relative; the mean errs by (n + 1) U mean|x| (n tile roundings of a
    sum bounded by sum|x|, one for * 1/W), which the output sees divided by the std;
    beta's addition rounds once more (U |r|). A 10% margin for second-order terms."""
    n = tiles_of(x64.shape[-1])
    g = 1.0 if gamma is None else np.abs(np.asarray(gamma, np.float64).reshape(-1))
    mean_term = 0.0 if rms else (n + 1) * np.abs(x64).mean(axis=-1, keepdims=True) / std
    return 1.1 * U * (((n / 2 + 5.5) * np.abs(core) + mean_term) * g + np.abs(r))


NORM_CASES = [  # (shape, eps, gamma?, beta?)
    ((40, 32), 1e-5, False, False), ((40, 48), 1e-5, True, True), ((2, 40, 96), 1e-5, True, False),
    ((2, 3, 20, 130), 1e-5, False, True), ((64, 130), 1.0, True, True), ((64, 48), 1e-2, False, False),
]


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
@pytest.mark.parametrize("shape,eps,with_gamma,with_beta", NORM_CASES,
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else None)
def test_norm_bf16(device, rms, shape, eps, with_gamma, with_beta):
    """Bit-exact against the twin; within norm_bound of float64. Measured: max abs
    error 1.4-8e-2 (N(0,1) rows; N(3,1) for the 3-d case), 0.23-0.79 of the bound,
    median 0.9-5e-3. (The bound is reached where beta's rounding dominates, |r|
    just above a power of two: up to 0.96 seen in exploratory runs.)"""
    rng = np.random.default_rng(seed(rms, shape, eps))
    loc = 3.0 if len(shape) == 3 else 0.0
    view, x = upload(device, rng.standard_normal(shape) + loc, BF16)
    width = shape[-1]
    gamma = beta = gamma_host = beta_host = None
    if with_gamma:
        gamma, gamma_host = upload(device, rng.uniform(-2, 2, width), BF16)
    if with_beta:
        beta, beta_host = upload(device, rng.uniform(-1, 1, (1, width)), BF16)  # (1, W) is accepted too
    run = ops.rmsnorm if rms else ops.layernorm
    got = host(run(view, gamma, beta, eps=eps))
    assert_same(got, twin_norm(x, eps, rms, gamma_host, beta_host, exact=is_exact(device)))
    r, core, mean, std = np_norm(x, eps, rms, gamma_host, beta_host)
    assert np.all(np.abs(got - r) <= norm_bound(x.astype(np.float64), core, r, mean, std, gamma_host, rms))


def test_norm_gamma_beta_shapes_and_defaults(device):
    """gamma (W,) and (1, W) give the same bytes; gamma = 1, beta = 0 tensors change
    nothing but the rounding-free products (x * 1 and x + 0 are exact)."""
    rng = np.random.default_rng(26)
    view, _ = upload(device, rng.standard_normal((40, 70)), BF16)
    gamma = rng.uniform(0.5, 2, 70).astype(np.float32)
    for run in (ops.layernorm, ops.rmsnorm):
        flat = raw(run(view, device.to_device(gamma, BF16, "tile")))
        row = raw(run(view, device.to_device(gamma[None], BF16, "tile")))
        np.testing.assert_array_equal(flat, row)
        ones, zeros = device.to_device(np.ones(70, np.float32), BF16, "tile"), device.to_device(
            np.zeros(70, np.float32), BF16, "tile")
        np.testing.assert_array_equal(raw(run(view, ones, zeros)), raw(run(view)))


def test_norm_eps_reaches_the_kernel(device):
    """A constant row has var 0: the output is 0 * rsqrt(eps) = 0 for layernorm; for
    rmsnorm x / sqrt(x^2 + eps) shows eps."""
    x = np.full((32, 64), 0.5, np.float32)
    view, _ = upload(device, x, BF16)
    assert (host(ops.layernorm(view, eps=1e-5)) == 0).all()
    for eps in (1e-5, 0.25, 4.0):
        got = host(ops.rmsnorm(view, eps=eps))
        expected = 0.5 / math.sqrt(0.25 + eps)
        assert np.all(np.abs(got - expected) <= 4 * U * expected), eps


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
@pytest.mark.parametrize("width", [48, 130])
def test_norm_fp32_dest_acc(device, rms, width):
    """float32 in/out, gamma and beta float32, fp32 Dst: bit-exact against the twin in
    fp32 mode. NOT much more accurate than bf16: every reduce_tile and mul_tiles
    operand is truncated to bf16 (c, inv, the squares, the mean's inputs), so the
    error against float64 is bounded by truncations: c and inv (< T each; inv's from
    the squares: c twice, the square once, halved: 1.5 T), gamma's product (T), and
    the mean of truncated inputs (< T mean|x|, seen divided by the std). Measured on
    N(3,1) rows: max abs error 4-8.4e-2 (0.5-0.57 of the bound), median 0.6-1e-2,
    WORSE than the same data through bf16 in/out with bf16 Dst (max 2.6-7e-2, median
    2.4-7.3e-3): truncation is biased, round-to-nearest is not. The exact numerics add
    the FPU's bf16 reading of x in x - mean and of y and beta in + beta (each T + 2^-11
    with the alignment), and row sums that keep bf16 after every tile (reduce_bound: the
    mean's, and half the squares' through the rsqrt)."""
    rng = np.random.default_rng(27 + width + rms)
    view, x = upload(device, rng.standard_normal((64, width)) + 3.0, F32)
    gamma, g = upload(device, rng.uniform(0.5, 2, width), F32)
    beta, b = upload(device, rng.uniform(-1, 1, width), F32)
    run = ops.rmsnorm if rms else ops.layernorm
    got = host(run(view, gamma, beta, fp32_dest_acc_en=True))
    assert_same(got, twin_norm(x, 1e-5, rms, g, b, fp32_dest=True, exact=is_exact(device)))
    r, core, mean, std = np_norm(tf32(x), 1e-5, rms, tf32(g), tf32(b))
    magnitude = np.abs(x.astype(np.float64))
    mean_term = 0.0 if rms else T * magnitude.mean(axis=-1, keepdims=True) / std
    bound = ((4.5 * T) * np.abs(core) + mean_term) * np.abs(g) + 2.0 ** -20 * (np.abs(r) + 1)
    if is_exact(device):
        summed = reduce_bound(tiles_of(width), -1, True, True)
        read = T + 2.0 ** -11  # a bf16 operand of ELWADD / ELWSUB, aligned on 11 bits
        centring = 0.0 if rms else (read * (magnitude + np.abs(mean)) + summed * magnitude.mean(axis=-1,
                                                                                             keepdims=True)) / std
        bound += (summed / 2 * np.abs(core) + centring) * np.abs(g) + read * (np.abs(r) + np.abs(b))
    assert np.all(np.abs(got - r) <= bound)


def test_layernorm_fp32_truncated_mean_limits_accuracy(device):
    """Rows with mean 5 and std 0.01, float32 with fp32 Dst: the mean is computed from
    inputs truncated to bf16 (|dmean| up to T * 5 = 0.04, i.e. 4 std), so the output
    is off by O(1). The twin reproduces it; documents the limitation."""
    rng = np.random.default_rng(28)
    view, x = upload(device, rng.standard_normal((32, 64)) * 0.01 + 5.0, F32)
    got = host(ops.layernorm(view, fp32_dest_acc_en=True))
    assert_same(got, twin_norm(x, 1e-5, False, fp32_dest=True, exact=is_exact(device)))
    assert np.abs(got - np_norm(tf32(x), 1e-5, False)[0]).max() > 0.5


# ================================================================================================
# Errors
# ================================================================================================

def expect_error(code: StatusCode, keyword: str, fn, *args, **kwargs):
    with pytest.raises(HalError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value
    assert keyword.lower() in info.value.message.lower(), info.value.message


def test_errors_layout_and_devices(device):
    x = np.random.default_rng(29).standard_normal((40, 70)).astype(np.float32)
    row_major = device.to_device(x, BF16, "row_major")
    for op in (ops.sum, ops.max, ops.transpose, ops.softmax, ops.layernorm, ops.rmsnorm):
        expect_error(StatusCode.INVALID_ARGUMENT, "TILE", op, row_major)
        expect_error(StatusCode.INVALID_ARGUMENT, "device tensors", op, x)
    view = device.to_device(x, BF16, "tile")
    expect_error(StatusCode.INVALID_ARGUMENT, "TILE", ops.layernorm, view,
                 device.to_device(x[0], BF16, "row_major"))
    other = hal.create_device("tenstorrent")
    try:
        foreign = other.to_device(x[0], BF16, "tile")
        expect_error(StatusCode.INVALID_ARGUMENT, "different devices", ops.layernorm, view, foreign)
        expect_error(StatusCode.INVALID_ARGUMENT, "different devices", ops.rmsnorm, view, None, foreign)
    finally:
        other.close()


def test_errors_dims(device):
    view = device.to_device(np.zeros((2, 40, 70), np.float32), BF16, "tile")
    flat = device.to_device(np.zeros(70, np.float32), BF16, "tile")
    for op in (ops.sum, ops.max):
        expect_error(StatusCode.UNIMPLEMENTED, "last two", op, view, 0)
        expect_error(StatusCode.UNIMPLEMENTED, "last two", op, view, -3)
        expect_error(StatusCode.INVALID_ARGUMENT, "out of range", op, view, 3)
        expect_error(StatusCode.INVALID_ARGUMENT, "out of range", op, view, -4)
        expect_error(StatusCode.INVALID_ARGUMENT, "out of range", op, flat, -2)
        assert tuple(op(view, 2).shape) == (2, 40, 1) and tuple(op(view, 1).shape) == (2, 1, 70)
        assert tuple(op(flat, 0).shape) == (1,)
    expect_error(StatusCode.INVALID_ARGUMENT, "empty", ops.sum,
                 device.to_device(np.zeros((4, 0), np.float32), BF16, "tile"))
    expect_error(StatusCode.UNIMPLEMENTED, "last dimension", ops.softmax, view, -2)
    expect_error(StatusCode.UNIMPLEMENTED, "last dimension", ops.softmax, view, 0)
    expect_error(StatusCode.INVALID_ARGUMENT, "out of range", ops.softmax, view, 3)
    expect_error(StatusCode.UNIMPLEMENTED, "last two", ops.transpose, view, 0, 1)
    expect_error(StatusCode.UNIMPLEMENTED, "last two", ops.transpose, view, 0, -1)
    expect_error(StatusCode.UNIMPLEMENTED, "swaps the last two", ops.transpose, view, -1, -1)
    expect_error(StatusCode.UNIMPLEMENTED, "swaps the last two", ops.transpose, flat)
    expect_error(StatusCode.INVALID_ARGUMENT, "out of range", ops.transpose, view, 3, -1)


def test_errors_gamma_beta_and_options(device):
    view = device.to_device(np.zeros((40, 70), np.float32), BF16, "tile")
    narrow = device.to_device(np.ones(69, np.float32), BF16, "tile")
    two_rows = device.to_device(np.ones((2, 70), np.float32), BF16, "tile")
    column = device.to_device(np.ones((70, 1), np.float32), BF16, "tile")
    for op in (ops.layernorm, ops.rmsnorm):
        for bad in (narrow, two_rows, column):
            expect_error(StatusCode.INVALID_ARGUMENT, "rows of 70", op, view, bad)
            expect_error(StatusCode.INVALID_ARGUMENT, "rows of 70", op, view, None, bad)
    for grid in (0, 65, (9, 8)):
        expect_error(StatusCode.INVALID_ARGUMENT, "cores", ops.sum, view, grid=grid)
    expect_error(StatusCode.INVALID_ARGUMENT, "data format", ops.softmax, view, dtype="float64")


def test_row_too_wide_for_l1(device):
    """softmax / layernorm keep a whole tile row in circular buffers: 1024 bf16 tiles
    (2 MiB per row CB) do not fit in L1 (1.5 MB): RESOURCE_EXHAUSTED naming L1, raised
    by the dispatch; the device keeps working. sum streams tiles and handles it."""
    rng = np.random.default_rng(30)
    view, x = upload(device, rng.standard_normal((32, 32 * 1024)), BF16, memory_config=hal.DRAM_MEMORY_CONFIG)
    for op in (ops.softmax, ops.layernorm, ops.rmsnorm):
        expect_error(StatusCode.RESOURCE_EXHAUSTED, "L1", op, view, memory_config=hal.DRAM_MEMORY_CONFIG)
    got = host(ops.sum(view, memory_config=hal.DRAM_MEMORY_CONFIG))
    assert_same(got, twin_reduce(x, -1, "sum", BF16, exact=is_exact(device)))
    small, xs = upload(device, rng.standard_normal((32, 64)), BF16)
    assert_same(host(ops.softmax(small)), pack(twin_softmax(xs, exact=is_exact(device)), BF16))


# ================================================================================================
# The SFPU masks
# ================================================================================================

MASK, MASK_NEG_INF = int(SfpuOp.MASK), int(SfpuOp.MASK_NEG_INF)


def test_sfpu_mask_opcodes():
    """The numbers are part of the .ttx format (version 3: binary SFPU ops from 64)."""
    assert (MASK, MASK_NEG_INF) == (70, 71)


def _mask(a: float, b: float) -> float:
    """MASK on Dst's bit patterns, as the simulator runs it (it moves a's bits whole)."""
    bits = numerics.sfpu_binary_bits(MASK, int(np.float32(a).view(np.uint32)), int(np.float32(b).view(np.uint32)))
    return float(np.uint32(bits).view(np.float32))


@pytest.mark.parametrize("a", [1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38])
def test_sfpu_masks(a):
    """MASK: a where b != 0 else 0; MASK_NEG_INF: a where b != 0 else -inf. b = -0.0 is
    == 0, so it masks; NaN != 0, so a NaN mask keeps a. Kept values pass unchanged
    (signed zero and NaN included)."""
    for b in (1.0, -1.0, 0.5, np.inf, np.nan, 1e-45):
        for got in (_mask(a, b), numerics.sfpu_binary(MASK_NEG_INF, a, b)):
            np.testing.assert_array_equal(np.float32(got), np.float32(a))
            assert math.copysign(1.0, got) == math.copysign(1.0, a) or math.isnan(a)
    for b in (0.0, -0.0):
        got = _mask(a, b)
        assert got == 0.0 and math.copysign(1.0, got) == 1.0  # +0, whatever a is
        assert numerics.sfpu_binary(MASK_NEG_INF, a, b) == -np.inf


# ================================================================================================
# Properties
# ================================================================================================

@st.composite
def reduction_case(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 3)) if i < rank - 2 else draw(st.integers(1, 70)) for i in range(rank))
    dim = draw(st.sampled_from([-1, -2] if rank >= 2 else [-1]))
    return shape, dim, draw(st.sampled_from(["sum", "max"])), draw(st.sampled_from([BF16, BFP8])), draw(
        st.sampled_from(PAD_VALUES)), draw(st.integers(0, 2 ** 32 - 1))


EXAMPLES = int(os.environ.get("OPS_LIBRARY_EXAMPLES", "25"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=reduction_case())
def test_reduction_property(numerics_device, case):
    """Random shapes, dims, pad values: the twin exactly; numpy within sum_bound (sum)
    or exactly (max of bf16/bfp8 values)."""
    shape, dim, op, fmt, pad, seed = case
    rng = np.random.default_rng(seed)
    view, x = upload(numerics_device, rng.standard_normal(shape) * 10, fmt, pad_value=pad if fmt == BF16 else 0.0)
    got = host(getattr(ops, op)(view, dim, dtype=BF16))
    assert_same(got, twin_reduce(x, dim, op, fmt, exact=is_exact(numerics_device)))
    x64 = x.astype(np.float64)
    if op == "max":
        assert_same(got, x64.max(axis=dim, keepdims=True))
    else:
        assert np.all(np.abs(got - x64.sum(axis=dim, keepdims=True)) <= sum_bound(x64, dim, fmt,
                                                                                is_exact(numerics_device)))


@st.composite
def row_case(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 2)) if i < rank - 2 else draw(st.integers(1, 100)) for i in range(rank))
    return shape, draw(st.sampled_from(["softmax", "layernorm", "rmsnorm"])), draw(st.sampled_from(PAD_VALUES)), \
        draw(st.booleans()), draw(st.integers(0, 2 ** 32 - 1))


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None)
@given(case=row_case())
def test_row_op_property(device, case):
    """Random shapes (widths 1..100), pad values, gamma/beta or not: softmax,
    layernorm and rmsnorm equal their twins bit for bit."""
    shape, op, pad, affine, seed_ = case
    rng = np.random.default_rng(seed_)
    view, x = upload(device, rng.standard_normal(shape) * 2, BF16, pad_value=pad)
    if op == "softmax":
        assert_same(host(ops.softmax(view)), pack(twin_softmax(x, exact=is_exact(device)), BF16))
        return
    gamma = beta = g = b = None
    if affine:
        gamma, g = upload(device, rng.uniform(-2, 2, shape[-1]), BF16, pad_value=pad)
        beta, b = upload(device, rng.uniform(-1, 1, shape[-1]), BF16, pad_value=pad)
    got = host(getattr(ops, op)(view, gamma, beta))
    assert_same(got, twin_norm(x, 1e-5, op == "rmsnorm", g, b, exact=is_exact(device)))
