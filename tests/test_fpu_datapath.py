"""The bit-exact FPU datapath's functions (sim/numerics.py fpu_*) against numpy twins,
on random operands with the edges mixed in (zeros, -0, denormals, the largest and
smallest exponents, ties of the alignments). Facts: tt-isa-documentation MVMUL.md /
ELWADD.md / ELWMUL.md and ttsim's datapath (docs/fidelity.md). The twins work on whole
arrays of float32 bit patterns (int64); tests/test_fpu_wolfpine.py checks the same
functions against the chip's model."""

import numba
import numpy as np
import pytest

from tests.fpu_twin import (
    twin_accumulate,
    twin_add,
    twin_group_sum,
    twin_matmul_tiles,
    twin_mul,
    twin_product,
    twin_reduce_tile,
)
from tt_hal.sim import numerics
from tt_hal.sim.numerics import FACE_INDEX, FpuModel
from tt_hal.target.isa import ReduceKind

MODELS = [FpuModel.WORMHOLE, FpuModel.BLACKHOLE]


def operand_bits(rng, shape) -> np.ndarray:
    """float32 bit patterns: random, with zeros, -0, denormals and extreme exponents."""
    bits = rng.integers(0, 1 << 32, shape, dtype=np.int64)
    edge = rng.random(shape)
    exponent = np.where(edge < 0.1, 0, np.where(edge < 0.15, 1, np.where(edge < 0.2, 254, (bits >> 23) & 0xFF)))
    bits = (bits & ~0x7F800000) | (exponent << 23)
    bits = np.where(rng.random(shape) < 0.05, bits & 0x80000000, bits)  # +-0
    near = rng.random(shape) < 0.5  # half of them at exponents near 127, where sums mix
    return np.where(near, (bits & ~0x7F800000) | (rng.integers(120, 135, shape) << 23), bits)


# ---- the checks ----

@numba.njit
def _products(a, b, phase):
    out = np.empty((3, a.shape[0]), np.int64)
    for i in range(a.shape[0]):
        out[0, i], out[1, i], out[2, i] = numerics.fpu_product(a[i], b[i], phase)
    return out


@pytest.mark.parametrize("phase", range(4))
def test_product_takes_the_phase_slices(phase):
    rng = np.random.default_rng(phase)
    a, b = operand_bits(rng, 20000), operand_bits(rng, 20000)
    got = _products(a & 0xFFFF0000, b & 0xFFFF0000, phase)
    np.testing.assert_array_equal(got, np.stack(twin_product(a, b, phase)))
    # the four phases' slices together are the whole bf16 mantissas
    whole = sum(twin_product(a, b, p)[2].astype(np.float64) * 2.0 ** (-5 * (p & 1) - 7 * (p >> 1 & 1))
                for p in range(4))
    live = ((a & 0x7F800000) != 0) & ((b & 0x7F800000) != 0)
    man = lambda x: ((x >> 16) & 0x7F) | 0x80  # noqa: E731
    np.testing.assert_array_equal(whole[live] * 2 ** 4, (man(a) * man(b))[live])


@numba.njit
def _group_sums(signs, exponents, mantissas):
    out = np.empty((3, signs.shape[0]), np.int64)
    for i in range(signs.shape[0]):
        out[0, i], out[1, i], out[2, i] = numerics.fpu_group_sum(signs[i], exponents[i], mantissas[i], 0)
    return out


@pytest.mark.parametrize("phase", range(4))
def test_group_sum_aligns_on_the_largest_exponent_rounding_half_up(phase):
    rng = np.random.default_rng(10 + phase)
    signs, exponents, mantissas = twin_product(operand_bits(rng, (20000, 8)), operand_bits(rng, (20000, 8)), phase)
    got = _group_sums(signs, exponents, mantissas)
    np.testing.assert_array_equal(got, np.stack(twin_group_sum(signs, exponents, mantissas)))
    # a tie of the alignment rounds up in magnitude: 3 units shifted by 1 -> 2, -3 -> -2
    lanes = np.zeros((2, 8), np.int64)
    exps = np.array([[10, 9, 0, 0, 0, 0, 0, 0]] * 2)
    mans = np.array([[0, 3, 0, 0, 0, 0, 0, 0]] * 2)
    lanes[1, 1] = 1
    assert _group_sums(lanes, exps, mans)[2].tolist() == [2 << 13, 2 << 13]


@numba.njit
def _accumulate(terms, dst, fp32_dest, model):
    out = np.empty(dst.shape[0], np.int64)
    for i in range(dst.shape[0]):
        out[i] = numerics.fpu_accumulate(terms[0, 0, i], terms[0, 1, i], terms[0, 2, i], terms[1, 0, i],
                                         terms[1, 1, i], terms[1, 2, i], dst[i], fp32_dest, model)
    return out


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
@pytest.mark.parametrize("fp32_dest", [True, False], ids=["fp32", "bf16"])
def test_accumulate_into_dst(fp32_dest, model):
    rng = np.random.default_rng(int(model) + 2 * fp32_dest)
    n = 20000
    groups = [twin_group_sum(*twin_product(operand_bits(rng, (n, 8)), operand_bits(rng, (n, 8)), p)) for p in (0, 3)]
    dst = operand_bits(rng, n) & (0xFFFFFFFF if fp32_dest else 0xFFFF0000)
    terms = np.array([np.stack(g) for g in groups])
    got = _accumulate(terms, dst, fp32_dest, int(model))
    np.testing.assert_array_equal(got, twin_accumulate(groups, dst, fp32_dest, model))
    if not fp32_dest:
        assert not (got & 0xFFFF).any()  # a bf16 Dst value


@numba.njit
def _adds(a, b, fp32_dest, model):
    out = np.empty(a.shape[0], np.int64)
    for i in range(a.shape[0]):
        out[i] = numerics.fpu_add(a[i], b[i], fp32_dest, model)
    return out


@pytest.mark.parametrize("fp32_dest", [True, False], ids=["fp32", "bf16"])
def test_add_aligns_the_smaller_operand(fp32_dest):
    rng = np.random.default_rng(30 + fp32_dest)
    a, b = operand_bits(rng, 20000), operand_bits(rng, 20000)
    got = _adds(a, b, fp32_dest, int(FpuModel.WORMHOLE))
    np.testing.assert_array_equal(got, twin_add(a, b, fp32_dest, FpuModel.WORMHOLE))
    # x + (-x) and -0 + -0 are +0; denormals are zero
    x = np.array([0x40490000, 0x80000000, 0x00400000], np.int64)
    assert _adds(x, x ^ np.array([0x80000000, 0, 0]), fp32_dest, 1).tolist() == [0, 0, 0]


@pytest.mark.parametrize("fidelity", [0, 2, 3, 4])
def test_mul_accumulates_one_product_per_phase(fidelity):
    rng = np.random.default_rng(40 + fidelity)
    a, b, dst = operand_bits(rng, 5000), operand_bits(rng, 5000), operand_bits(rng, 5000)
    got = np.array([numerics.fpu_eltwise(False, False, x, y, d, fidelity, True, 1) for x, y, d in zip(a, b, dst)])
    np.testing.assert_array_equal(got, twin_mul(a, b, dst, fidelity, True, FpuModel.WORMHOLE))


def faces(bits) -> np.ndarray:
    """A (32, 32) tile of bits as the simulator's float32 tile in face order."""
    out = np.empty(1024, np.uint32)
    out[FACE_INDEX.ravel()] = np.asarray(bits, np.uint32).ravel()
    return out.view(np.float32)


def tile_bits(values) -> np.ndarray:
    return values[FACE_INDEX].view(np.uint32).astype(np.int64)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
@pytest.mark.parametrize("fp32_dest", [True, False], ids=["fp32", "bf16"])
@pytest.mark.parametrize("fidelity", [0, 2, 3, 4])
def test_matmul_tile_matches_its_twin(fidelity, fp32_dest, model):
    """fpu_matmul_tile over 2 K tiles from a random Dst against twin_matmul_tiles."""
    rng = np.random.default_rng(50 + fidelity + 8 * fp32_dest)
    in0, in1 = operand_bits(rng, (2, 32, 32)), operand_bits(rng, (2, 32, 32))
    start = operand_bits(rng, (32, 32)) & (0xFFFFFFFF if fp32_dest else 0xFFFF0000)
    out = faces(start)
    for b, a in zip(in0, in1):
        numerics.fpu_matmul_tile(faces(b), faces(a), False, out, fidelity, fp32_dest, int(model))
    np.testing.assert_array_equal(tile_bits(out), twin_matmul_tiles(in0, in1, fidelity, fp32_dest, model, start))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
@pytest.mark.parametrize("fp32_dest", [True, False], ids=["fp32", "bf16"])
@pytest.mark.parametrize("kind", list(ReduceKind), ids=lambda k: k.name)
def test_reduce_tile_matches_its_twin(kind, fp32_dest, model):
    """fpu_reduce_tile on random tiles (edges mixed in), each fidelity, two tiles in a row
    into one Dst tile, against twin_reduce_tile."""
    rng = np.random.default_rng(60 + int(kind) + 8 * fp32_dest)
    for fidelity, scaler in zip([0, 2, 3, 4], [1.0, 2.0 ** -3, -0.333984375, 5.0]):
        scaler_bits = int(np.float32(scaler).view(np.uint32))
        dst = np.full((32, 32), -np.inf if kind >= ReduceKind.MAX_ROW else 0.0, np.float32).view(np.uint32)
        want, out = dst.astype(np.int64), faces(dst)
        for tile in operand_bits(rng, (2, 32, 32)):
            numerics.fpu_reduce_tile(faces(tile), np.full(1024, scaler, np.float32), out, kind >= ReduceKind.MAX_ROW,
                                     kind & 3, fidelity, fp32_dest, int(model))
            want = twin_reduce_tile(kind, tile, scaler_bits, want, fidelity, fp32_dest, model)
            np.testing.assert_array_equal(tile_bits(out), want)


def test_device_numerics_option(monkeypatch):
    """numerics= in the device URI (or TT_HAL_NUMERICS) picks the FPU model of a
    simulated chip; the exact datapath is the chip's own; a bad value is INVALID_ARGUMENT."""
    import hal
    from hal.status import HalError, StatusCode
    monkeypatch.delenv("TT_HAL_NUMERICS", raising=False)
    for uri, model in (("tenstorrent://mock", FpuModel.FAST), ("tenstorrent://mock?numerics=fast", FpuModel.FAST),
                       ("tenstorrent://mock?numerics=exact", FpuModel.WORMHOLE),
                       ("tenstorrent://mock?numerics=exact&arch=blackhole_p150", FpuModel.BLACKHOLE)):
        device = hal.create_device(uri)
        assert device.backend.fpu_model == model, uri
        device.close()
    monkeypatch.setenv("TT_HAL_NUMERICS", "exact")
    device = hal.create_device("tenstorrent://mock")
    assert device.backend.fpu_model == FpuModel.WORMHOLE and "numerics=exact" in device.uri
    device.close()
    with pytest.raises(HalError) as error:
        hal.create_device("tenstorrent://mock?numerics=bitexact")
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "numerics" in str(error.value)
