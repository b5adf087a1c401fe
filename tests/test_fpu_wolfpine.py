"""The exact numerics against the chip's FPU: the simulator's bit-exact datapath
(sim/numerics.py fpu_*) against wolfpine's (whose FPU matches ttsim's, Tenstorrent's
reference model of the silicon), in the LLK's instruction order (tests/fpu_reference.py),
on every fidelity, both Dst modes and the data sets of fpu_reference.DATA_SETS. Every Dst
value and every packed bf16 value must be bit-identical.

`python bench/fpu_agreement.py` prints the same comparison as percentages, for the fast
numerics too."""

import numpy as np
import pytest

pytest.importorskip("framework.pe.tensix.backends.matrix", reason="wolfpine (the test extra) is not installed")

from tests import fpu_reference as ref  # noqa: E402
from tt_hal.sim.numerics import FpuModel  # noqa: E402
from tt_hal.target.isa import MathFidelity, ReduceKind  # noqa: E402

FIDELITIES = list(MathFidelity)
DST = {"fp32": True, "bf16": False}


def assert_bits_equal(got, want, what):
    differ = np.flatnonzero(np.asarray(got) != np.asarray(want))
    assert differ.size == 0, (f"{what}: {differ.size} of {np.size(want)} differ; first at {differ[0]}: "
                              f"{int(np.ravel(got)[differ[0]]):#010x} != {int(np.ravel(want)[differ[0]]):#010x}")


def operands(data_set, k, *key):
    rng = np.random.default_rng([*key, len(data_set)])
    make = ref.DATA_SETS[data_set]
    return make(rng, (k, 32, 32)), make(rng, (k, 32, 32))


@pytest.mark.parametrize("data_set", ref.DATA_SETS)
@pytest.mark.parametrize("dst", DST)
@pytest.mark.parametrize("fidelity", FIDELITIES, ids=lambda f: f.name)
def test_matmul_tiles_bit_exact(fidelity, dst, data_set):
    """matmul_tiles over K = 1, 2 and 5 tiles: Dst and the packed bf16 tile."""
    for k in ref.KS:
        a, b = operands(data_set, k, int(fidelity), DST[dst])
        want = ref.matmul_tiles(a.view(np.uint32), b.view(np.uint32), int(fidelity), DST[dst])
        got = ref.simulate_matmul(a, b, int(fidelity), DST[dst], FpuModel.WORMHOLE)
        assert_bits_equal(got, want, f"Dst, K={k}")
        assert_bits_equal(ref.simulate_pack_bf16(got), ref.pack_bf16(want, DST[dst]), f"packed, K={k}")


def test_wormhole_renormalises_minus_one_unit_27_binades_high():
    """A sum of exactly -1 unit (Dst -(1 + 2^-23) plus a product of 1.0): Wormhole's
    datapath counts the leading sign bits of -1 wrongly and lands 27 binades above
    -2^-23, Blackhole's does not; each model agrees with wolfpine's for its chip. (A bf16
    Dst adds on a grid of 2^13 units, so only fp32 Dst can meet it.)"""
    a, b = np.zeros((2, 1, 32, 32), np.float32)
    a[0, :, 0] = b[0, 0, :] = 1.0
    dst = np.full((32, 32), -(1 + 2.0 ** -23), np.float32).view(np.uint32)
    results = {}
    for blackhole, model in ((False, FpuModel.WORMHOLE), (True, FpuModel.BLACKHOLE)):
        want = ref.matmul_tiles(a.view(np.uint32), b.view(np.uint32), int(MathFidelity.LoFi), True, dst, blackhole)
        got = ref.simulate_matmul(a, b, int(MathFidelity.LoFi), True, model, dst)
        assert_bits_equal(got, want, model.name)
        results[model] = got.astype(np.uint32).view(np.float32)
    assert (results[FpuModel.BLACKHOLE] == -(2.0 ** -23)).all()
    assert (results[FpuModel.WORMHOLE] == -(2.0 ** 4)).all()


@pytest.mark.parametrize("data_set", ref.DATA_SETS)
@pytest.mark.parametrize("dst", DST)
@pytest.mark.parametrize("op, fidelity", [("add", MathFidelity.LoFi), ("sub", MathFidelity.LoFi),
                                          *[("mul", f) for f in FIDELITIES]], ids=lambda x: getattr(x, "name", x))
def test_eltwise_tiles_bit_exact(op, fidelity, dst, data_set):
    """add/sub/mul_tiles (the LLK runs phases for mul only): Dst and the packed bf16 tile.
    mul_tiles accumulates into the Dst it finds (ELWMUL always does), so it starts from
    random Dst values here."""
    a, b = operands(data_set, 2, int(fidelity), DST[dst], ["add", "sub", "mul"].index(op))
    start = ref.DATA_SETS[data_set](np.random.default_rng(9), (32, 32)).view(np.uint32).astype(np.int64)
    start &= 0xFFFFFFFF if DST[dst] else 0xFFFF0000
    want = ref.eltwise(op, a[0].view(np.uint32), b[0].view(np.uint32), int(fidelity), DST[dst], start)
    got = ref.simulate_eltwise(op, a[0], b[0], int(fidelity), DST[dst], FpuModel.WORMHOLE, start)
    assert_bits_equal(got, want, "Dst")
    assert_bits_equal(ref.simulate_pack_bf16(got), ref.pack_bf16(want, DST[dst]), "packed")


SCALERS = (1.0, 2.0 ** -5, 0.333984375, -3.0)  # bf16 values; a scaler tile holds one


@pytest.mark.parametrize("data_set", ref.DATA_SETS)
@pytest.mark.parametrize("dst", DST)
@pytest.mark.parametrize("kind", list(ReduceKind), ids=lambda k: k.name)
def test_reduce_tile_bit_exact(kind, dst, data_set):
    """reduce_tile over 3 tiles accumulating into one Dst tile, every fidelity (MAX has no
    phases) and a scaler per fidelity: the result row, column or element, bit for bit.
    Dst starts at 0 (SUM) or -inf (MAX: the kernel's fill_tile)."""
    results = ref.reduce_results(kind)
    for fidelity, scale in zip(FIDELITIES[:1] if kind >= ReduceKind.MAX_ROW else FIDELITIES, SCALERS):
        tiles = operands(data_set, 3, int(kind), int(fidelity), DST[dst])[0]
        scaler = np.full((32, 32), scale, np.float32).view(np.uint32)
        start = np.full((32, 32), -np.inf if kind >= ReduceKind.MAX_ROW else 0.0, np.float32).view(np.uint32)
        want = ref.reduce_tiles(kind, tiles.view(np.uint32), scaler, int(fidelity), DST[dst], start)
        got = ref.simulate_reduce(kind, tiles, scaler, int(fidelity), DST[dst], FpuModel.WORMHOLE, start)
        assert_bits_equal(got[results], want[results], f"{fidelity.name}, scaler {scale}")


@pytest.mark.parametrize("fidelity", [MathFidelity.LoFi, MathFidelity.HiFi4], ids=lambda f: f.name)
def test_device_with_exact_numerics_matches_wolfpine(fidelity):
    """The whole path on a device opened with numerics=exact: ops.matmul (K = 3 tiles,
    bf16 Dst) gives the chip's bits."""
    import hal
    from tt_hal import ops
    device = hal.create_device("tenstorrent://mock?numerics=exact&grid_x=2&grid_y=1")
    rng = np.random.default_rng(int(fidelity))
    a, b = rng.standard_normal((32, 96)).astype(np.float32), rng.standard_normal((96, 32)).astype(np.float32)
    va, vb = device.to_device(a, "bfloat16", "tile"), device.to_device(b, "bfloat16", "tile")
    got = ops.matmul(va, vb, math_fidelity=fidelity.name, dtype="float32").to_host()
    qa, qb = va.to_host(np.float32), vb.to_host(np.float32)
    want = ref.matmul_tiles(qa.reshape(32, 3, 32).transpose(1, 0, 2).view(np.uint32),
                            qb.reshape(3, 32, 32).view(np.uint32), int(fidelity), False)
    assert_bits_equal(got.view(np.uint32), want, "matmul")
    device.close()


@pytest.mark.parametrize("fp32_dest", [False, True], ids=["bf16", "fp32"])
def test_device_reductions_with_exact_numerics_match_wolfpine(fp32_dest):
    """The whole path on a device opened with numerics=exact: ops.sum over rows and
    ops.max over columns of 3 tiles (the kernels' HiFi4, scaler 1.0) give the chip's bits."""
    import hal
    from tt_hal import ops
    device = hal.create_device("tenstorrent://mock?numerics=exact&grid_x=2&grid_y=1")
    rng = np.random.default_rng(7 + fp32_dest)
    x = rng.standard_normal((32, 96)).astype(np.float32)
    one = np.ones((32, 32), np.float32).view(np.uint32)
    for op, dim, kind, start in ((ops.sum, -1, ReduceKind.SUM_ROW, 0.0), (ops.max, -2, ReduceKind.MAX_COL, -np.inf)):
        data = x if dim == -1 else x.T.copy()
        view = device.to_device(data, "bfloat16", "tile")
        got = op(view, dim, dtype="float32", fp32_dest_acc_en=fp32_dest).to_host().view(np.uint32).ravel()
        held = view.to_host(np.float32)
        tiles = held.reshape(32, 3, 32).transpose(1, 0, 2) if dim == -1 else held.reshape(3, 32, 32)
        dst = np.full((32, 32), start, np.float32).view(np.uint32)
        want = ref.reduce_tiles(kind, tiles.view(np.uint32), one, int(MathFidelity.HiFi4), fp32_dest, dst)
        assert_bits_equal(got, want[ref.reduce_results(kind)], kind.name)
    device.close()
