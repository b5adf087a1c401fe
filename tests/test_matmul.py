"""ops.matmul (the library's multi-core tiled matmul) in both numerics: within bounds
derived from the exact datapath of numpy twins of the multiplier's fidelity phases
(sim/numerics.py fidelity_product, docs/tensix.md), and in the exact numerics bit for bit
against the datapath's twin (tests/fpu_twin.py, docs/fidelity.md#fpu-numerics)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hal
from hal.status import StatusCode
from tests import reference as ref
from tests.fpu_twin import is_exact, twin_matmul_tiles
from tests.test_rowmajor import (
    BITS,
    host_bytes,
    placed,
    raw_buffer,
    run_export,
    tile_buffer,
    tilize_twin,
    untilize_twin,
)
from tt_hal import ops
from tt_hal.kernels import matmul as matmul_kernel
from tt_hal.kernels import rowmajor
from tt_hal.sim.numerics import FpuModel
from tt_hal.target.formats import BFP8_MAGNITUDE_BITS
from tt_hal.target.isa import MathFidelity
from tt_hal.target.layout import DataFormat

FIDELITY_PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


def bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def split(x, high_bits):
    """(high, low) of bf16 values: the mantissa cut after `high_bits` explicit bits."""
    bits = bf16(x).view(np.uint32)
    high = (bits & np.uint32((0xFFFFFFFF << (23 - high_bits)) & 0xFFFFFFFF)).view(np.float32)
    return high.astype(np.float64), bf16(x).astype(np.float64) - high


def fidelity_matmul(a, b, phases):
    """a @ b with a feeding SrcB (hidden + 6 MSBs | 1 LSB) and b feeding SrcA
    (hidden + 4 MSBs | 3 LSBs), summing the products of the first `phases` phases."""
    a_high, a_low = split(a, 6)
    b_high, b_low = split(b, 4)
    terms = [(a_high, b_high), (a_high, b_low), (a_low, b_high), (a_low, b_low)][:phases]
    return sum(x @ y for x, y in terms)


def twin_matmul(a, b, fidelity: str, fp32_dest: bool) -> np.ndarray:
    """Dst values of ops.matmul of host values a (M, K) @ b (K, N), as the device holds
    them, in the exact numerics: each output tile takes matmul_tiles over the K tiles in
    order (in0 = a's tile, SrcB), from a zero Dst; the padding is zero."""
    tiles = [-(-n // 32) for n in (a.shape[0], a.shape[1], b.shape[1])]
    pa, pb = np.zeros((32 * tiles[0], 32 * tiles[1]), np.float32), np.zeros((32 * tiles[1], 32 * tiles[2]), np.float32)
    pa[:a.shape[0], :a.shape[1]], pb[:b.shape[0], :b.shape[1]] = a, b
    in0 = pa.view(np.uint32).reshape(tiles[0], 32, tiles[1], 32).transpose(0, 2, 1, 3)
    in1 = pb.view(np.uint32).reshape(tiles[1], 32, tiles[2], 32).transpose(0, 2, 1, 3)
    out = np.zeros((32 * tiles[0], 32 * tiles[2]), np.int64)
    for i in range(tiles[0]):
        for j in range(tiles[2]):
            out[32 * i:32 * i + 32, 32 * j:32 * j + 32] = twin_matmul_tiles(
                in0[i], in1[:, j], int(MathFidelity[fidelity]), fp32_dest, FpuModel.WORMHOLE)
    return out.astype(np.uint32).view(np.float32)[:a.shape[0], :b.shape[1]]


@pytest.fixture(scope="module")
def operands():
    rng = np.random.default_rng(7)
    return rng.uniform(0.5, 2.0, (64, 160)).astype(np.float32), rng.uniform(0.5, 2.0, (160, 96)).astype(np.float32)


# How far a device's matmul (fp32 Dst) may be from the exact sum of the fidelity phases'
# products, per output, in units of sum_k |a_k b_k| (docs/fidelity.md#fpu-numerics): the
# exact numerics align each MVMUL's products on a 12-bit grid (half a unit: 2^-11 of the
# largest) and round into Dst on every MVMUL; the fast numerics only sum in float32.
FP32_DST_BOUND = 2.0 ** -11


@pytest.mark.parametrize("fidelity", FIDELITY_PHASES)
def test_matmul_follows_the_fidelity_phases(numerics_device, operands, fidelity):
    """float32 output and Dst: within FP32_DST_BOUND of the phase model, in either
    numerics (and in the exact one the datapath's bits); the exact bf16 product is
    further away the fewer phases run, by the amount the dropped phases carry."""
    a, b = operands
    va, vb = numerics_device.to_device(a, "bfloat16", "tile"), numerics_device.to_device(b, "bfloat16", "tile")
    got = ops.matmul(va, vb, math_fidelity=fidelity, fp32_dest_acc_en=True, dtype="float32").to_host()
    if is_exact(numerics_device):
        np.testing.assert_array_equal(got.view(np.uint32), twin_matmul(bf16(a), bf16(b), fidelity, True).view(
            np.uint32))
    model = fidelity_matmul(a, b, FIDELITY_PHASES[fidelity])
    scale = np.abs(bf16(a)).astype(np.float64) @ np.abs(bf16(b)).astype(np.float64)
    assert (np.abs(got - model) <= FP32_DST_BOUND * scale).all()
    exact = bf16(a).astype(np.float64) @ bf16(b).astype(np.float64)
    dropped = exact - model
    if fidelity == "HiFi4":
        assert np.abs(dropped).max() == 0
    else:  # positive inputs: dropped phases only ever lower the product (HiFi3's by under the bound)
        assert (dropped > 0).all()
        assert fidelity == "HiFi3" or np.abs(got - exact).max() > 2 * FP32_DST_BOUND * scale.max()


def test_lofi_error_exceeds_hifi2_exceeds_hifi4(numerics_device, operands):
    a, b = operands
    va, vb = numerics_device.to_device(a, "bfloat16", "tile"), numerics_device.to_device(b, "bfloat16", "tile")
    exact = bf16(a).astype(np.float64) @ bf16(b).astype(np.float64)
    errors = [np.abs(ops.matmul(va, vb, math_fidelity=f, fp32_dest_acc_en=True, dtype="float32").to_host()
                     - exact).max() for f in ("LoFi", "HiFi2", "HiFi3", "HiFi4")]
    # HiFi3 drops only a 2^-12 phase, below the exact datapath's rounding: HiFi3 and HiFi4
    # are both within the bound there, in either order
    assert errors[0] > errors[1] > max(errors[2:])
    assert max(errors[2:]) <= FP32_DST_BOUND * np.abs(exact).max()


@pytest.mark.parametrize("in_format, tolerance", [("bfloat16", 2.0 ** -7), ("bfloat8_b", 2.0 ** -5)])
@pytest.mark.parametrize("grid", [1, 5, 64])
def test_matmul_bf16_output_against_numpy(numerics_device, in_format, tolerance, grid):
    """bf16 output with bf16 Dst (rounded after each K tile; exact numerics: on every
    MVMUL, bit for bit the datapath's): within a few bf16 ulps of the float64 product of
    the quantised inputs; shapes not multiples of 32, several grids."""
    rng = np.random.default_rng(grid)
    a = rng.standard_normal((70, 100)).astype(np.float32)
    b = rng.standard_normal((100, 45)).astype(np.float32)
    va, vb = numerics_device.to_device(a, in_format, "tile"), numerics_device.to_device(b, in_format, "tile")
    got = ops.matmul(va, vb, grid=grid).to_host(np.float32)
    if is_exact(numerics_device):  # a bf16 Dst value packs to bf16 unchanged; to Bfp8_b with ties away
        want = twin_matmul(va.to_host(np.float32), vb.to_host(np.float32), "HiFi4", False)
        if in_format == "bfloat8_b":  # (the output takes the input's format)
            want = ref.bfp_untiles(ref.bfp_tiles(want, BFP8_MAGNITUDE_BITS, "nearest_away"), want.shape,
                                   BFP8_MAGNITUDE_BITS).view(np.float32)
        np.testing.assert_array_equal(got, want)
    qa = va.to_host(np.float32).astype(np.float64)
    qb = vb.to_host(np.float32).astype(np.float64)
    reference = qa @ qb
    scale = np.abs(qa) @ np.abs(qb)  # error scale of a sum of products
    assert got.shape == (70, 45)
    assert np.all(np.abs(got - reference) <= tolerance * 4 * scale + 1e-30)


def test_matmul_shape_mismatch(device):
    a = device.to_device(np.ones((32, 64), np.float32), "bfloat16", "tile")
    with pytest.raises(hal.HalError) as info:
        ops.matmul(a, a)
    assert info.value.code == StatusCode.INVALID_ARGUMENT


# ---- Row-major operands (IREE's bindings) read as tiles by the reader ----

ROW_MAJOR_CASES = dict(
    batches=st.sampled_from([1, 1, 2, 3]),
    m=st.one_of(st.integers(1, 70), st.sampled_from([1, 16, 32, 33])),
    k=st.one_of(st.integers(1, 90), st.sampled_from([16, 32, 64])),
    n=st.one_of(st.integers(1, 300), st.sampled_from([1, 32, 40, 257])),  # strips of 8 tiles or fewer
    fmt=st.sampled_from([DataFormat.float32, DataFormat.bfloat16]),
    rows=st.sampled_from([(True, False), (False, True), (True, True)]),
    b_batched=st.booleans(),
    offset=st.integers(0, 300).map(lambda n: 16 * n),  # IREE's bindings: 16-byte aligned, past a 4096-byte page
    tail=st.integers(0, 3000),
    from_constant=st.booleans(),
    window=st.sampled_from([(0, 0)] * 3 + [(0, 5), (3, 0), (2, 40)]),  # a's a window of a larger tensor
    workgroups=st.integers(1, 5),
    row_output=st.booleans(),  # out written row-major too (rowmajor.write_row_tiles)
    transpose_b=st.booleans(),  # b held as (N, K), its tiles transposed as they unpack
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**ROW_MAJOR_CASES)
def test_row_major_operands_give_the_tiles_product(device, batches, m, k, n, fmt, rows, b_batched, offset, tail,
                                                   from_constant, window, workgroups, row_output, transpose_b):
    """A matmul reading a (and/or b) from a row-major binding computes what it computes
    on the tilized operands, bit for bit: the reader's face reads (rowmajor.read_row_tiles)
    are the tilize (padding zero); shapes not multiples of 32, batches, b shared or
    batched, offsets (some from a push constant), windows of larger tensors; b held
    transposed (transpose_b: (N, K), read down its tile columns, each tile transposed as
    matmul_tiles unpacks it) or not. Written row-major (row_output), the product is those
    tiles untilized, and nothing around them."""
    size, b_batches = fmt.element_size, batches if b_batched else 1
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    dtype = np.float32 if fmt is DataFormat.float32 else ml_dtypes.bfloat16
    values = [rng.standard_normal(shape).astype(dtype) for shape in ((batches, m, k), (b_batches, k, n))]
    held = [values[0], np.ascontiguousarray(values[1].transpose(0, 2, 1)) if transpose_b else values[1]]
    full_a = (batches, m + window[0], k + window[1])  # a is a window of this tensor
    tensors, row_constants, bindings = [], [], []
    for i, (value, full) in enumerate(zip(held, (full_a, held[1].shape))):
        if rows[i]:
            nbytes = int(np.prod(full)) * size
            data, binding_offset, constant = placed(nbytes, offset, tail, from_constant, i)
            data[offset:offset + nbytes].view(value.dtype).reshape(full)[:, :value.shape[1], :value.shape[2]] = value
            bindings.append((raw_buffer(device, data), binding_offset, constant + nbytes))
            row_stride = full[2]
            row_constants += rowmajor.row_tile_constants(rowmajor.push_constants(
                value.shape[1], value.shape[2], [constant], value.shape[0], row_stride, full[1] * row_stride))
        else:
            bindings.append(tile_buffer(device, fmt, value.shape[1], value.shape[2],
                                        tilize_twin(value.view(BITS[size])), value.shape[0]))
        plain = values[i]  # the reference run's operand, b not transposed
        tensors.append(tile_buffer(device, fmt, plain.shape[1], plain.shape[2], tilize_twin(plain.view(BITS[size])),
                                   plain.shape[0]))
    mt, kt, nt = (-(-x // 32) for x in (m, k, n))
    constants = [batches * mt * nt, kt, nt, mt, kt * nt if b_batched else 0]
    outputs = []
    for operands, extra, flags, transposed in ((tensors, [], (False, False), False),
                                               (bindings, row_constants, rows, transpose_b)):
        out = tile_buffer(device, DataFormat.float32, m, n, np.full(batches * mt * nt * 4096, 0xA5, np.uint8),
                          batches)
        run_export(device, matmul_kernel.matmul(fmt, fmt, DataFormat.float32, transpose_b=transposed, rows=flags),
                   workgroups, constants + extra, [*operands, out])
        outputs.append(host_bytes(out))
    assert np.array_equal(outputs[0], outputs[1])
    assert outputs[0].view(np.uint32).any()  # the product of random operands is not all zero
    if row_output:  # at byte 32 of a buffer of other bytes
        out_bytes = batches * m * n * 4
        around = np.random.default_rng(n).integers(0, 256, 32 + out_bytes + tail, np.uint8)
        target = raw_buffer(device, around)
        out_constants = rowmajor.row_tile_constants(rowmajor.push_constants(m, n, [0], batches))
        run_export(device, matmul_kernel.matmul(fmt, fmt, DataFormat.float32, transpose_b=transpose_b, rows=rows,
                                                row_output=True),
                   workgroups, constants + row_constants + out_constants, [*bindings, (target, 32, out_bytes)])
        expected = around.copy()
        expected[32:32 + out_bytes] = untilize_twin(outputs[0], m, n, 4, batches).view(np.uint8).reshape(-1)
        assert np.array_equal(host_bytes(target), expected)

