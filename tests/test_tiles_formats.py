"""Tiles and data formats: the simulator's numba kernels (tt_hal/target/tiles.py, tt_hal/target/formats.py,
tt_hal/target/conversions.py) against the numpy twins in tests/reference.py, round-trip properties,
and byte-exact facts from tt-metal (tilize_utils.cpp, blockfloat_common.cpp,
bfloat16.cpp and their tests; see ../shared/FACTS.md 'Tiles and layouts', 'Data
formats')."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hal.status import HalError
from tests import reference as ref
from tt_hal.target import conversions as codec
from tt_hal.target import formats, tiles
from tt_hal.target.layout import DataFormat, Layout, TensorSpec
from tt_hal.target.placement import DRAM_MEMORY_CONFIG

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MODES = formats.ROUNDING_MODES  # name -> sim constant
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}
COPY_DTYPES = [np.float32, np.int32, np.uint32, np.uint16, np.uint8]
FORMAT_DTYPE = {DataFormat.float32: np.float32, DataFormat.int32: np.int32, DataFormat.uint32: np.uint32,
                DataFormat.uint16: np.uint16, DataFormat.uint8: np.uint8, DataFormat.bfloat16: np.float32,
                DataFormat.bfloat8_b: np.float32, DataFormat.bfloat4_b: np.float32}
MAGNITUDE_BITS = {DataFormat.bfloat8_b: 7, DataFormat.bfloat4_b: 3}

# float32 bit patterns worth having in every batch of data.
SPECIAL_BITS = np.array([
    0x00000000, 0x80000000,  # +-0
    0x7F800000, 0xFF800000,  # +-Inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFBFFFFF,  # NaNs (quiet, negative, signalling, payloads)
    0x00000001, 0x807FFFFF, 0x00400000, 0x00008000, 0x00018000,  # denormals (incl. bf16 ties)
    0x00800000, 0x80800000, 0x00800001,  # smallest normals
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  # huge: FLT_MAX, bf16 overflow tie
    0x3F808000, 0x3F818000, 0x3F808001, 0x3F80FFFF, 0xBF808000,  # bf16 ties and near-ties
    0x3F800000, 0x42C80000, 0x3FFFFFFF, 0x40000000,  # 1.0, 100.0, 1.99999988, 2.0
], np.uint32)
VALUE_KINDS = ["bits", "scaled", "mixed", "ties", "tiny"]


def random_f32(seed: int, n: int, kind: str) -> np.ndarray:
    """n float32 values. bits: uniform bit patterns (NaN, Inf, denormals, huge and tiny);
    scaled: finite normals within 2^+-12 (block floats keep most bits); mixed: scaled
    with specials and wild values sprinkled in; ties: low mantissa bits at the bf16 /
    bfp8 / bfp4 rounding ties; tiny: denormals and the smallest normals."""
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    mantissa = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    if kind == "bits":
        bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    elif kind == "tiny":
        exponent = rng.integers(0, 3, n, dtype=np.uint32)
        bits = sign | (exponent << np.uint32(23)) | mantissa
    else:
        exponent = rng.integers(127 - 12, 127 + 12, n, dtype=np.uint32)
        if kind == "ties":
            cut = rng.choice(np.array([16, 17, 19, 20, 21, 22], np.uint32), n)
            mantissa = (mantissa >> cut << cut) | (np.uint32(1) << (cut - np.uint32(1)))
            mantissa &= np.uint32(0x7FFFFF)
        bits = sign | (exponent << np.uint32(23)) | mantissa
        if kind == "mixed":
            pick = rng.random(n)
            bits = np.where(pick < 0.08, rng.choice(SPECIAL_BITS, n), bits)
            bits = np.where(pick > 0.95, rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), bits)
    return bits.astype(np.uint32).view(np.float32)


def random_values(seed: int, shape, dtype, kind: str = "mixed") -> np.ndarray:
    n = math.prod(shape)
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return random_f32(seed, n, kind).reshape(shape)
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    values[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    return values.reshape(shape)


@st.composite
def shapes(draw, max_tiles: int = 48):
    """Ranks 0-4, dims 0-70; outer dims are bounded so the tensor has at most max_tiles tiles."""
    rank = draw(st.integers(0, 4))
    inner = draw(st.lists(st.integers(0, 70), min_size=min(rank, 2), max_size=min(rank, 2)))
    per_outer = max(1, ref.tile_count(tuple(inner)))
    outer = []
    for _ in range(rank - 2):
        budget = max_tiles // (per_outer * max(1, math.prod(outer)))
        outer.append(draw(st.integers(0, min(70, max(budget, 1)))))
    return tuple(outer) + tuple(inner)


flags = st.booleans()
roundings = st.sampled_from(ref.ROUNDINGS)
seeds = st.integers(0, 2**32 - 1)
value_kinds = st.sampled_from(VALUE_KINDS)
float_pads = st.one_of(st.sampled_from([0.0, -0.0, 1.0, float("nan"), float("inf"), -float("inf"), 1e-45, 3e38]),
                       st.floats(width=32))


def folded_bits(x: np.ndarray) -> np.ndarray:
    """x as (outer, H, W) unsigned bit patterns: what the tile kernels take."""
    x = np.ascontiguousarray(x)
    return x.view(UNSIGNED[x.dtype.itemsize]).reshape(ref.folded_shape(x.shape))


def bits_of(value, dtype) -> int:
    return int(np.asarray(value, dtype).reshape(1).view(UNSIGNED[np.dtype(dtype).itemsize])[0])


def spec(shape, data_format, layout=Layout.TILE, within=False, of_faces=False) -> TensorSpec:
    return TensorSpec(shape, data_format, layout, DRAM_MEMORY_CONFIG, transpose_within_face=within,
                      transpose_of_faces=of_faces)


def f32(bits) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


# ==============================================================================================
# The reference itself: tt-metal's index formula, written out element by element
# ==============================================================================================

@pytest.mark.parametrize("within", [False, True])
@pytest.mark.parametrize("of_faces", [False, True])
def test_reference_tilize_follows_the_tt_metal_index_formula(within, of_faces):
    """tilize_utils.cpp: out = tile*1024 + face_slot*256 + in_face, face_slot = fh*2+fw
    (fw*2+fh with transpose_of_faces), in_face = i*16+j (j*16+i within the face)."""
    x = np.arange(2 * 40 * 70, dtype=np.int32).reshape(2, 40, 70)
    stored = ref.tilize(x, -1, within, of_faces).reshape(-1)
    expected = np.full(2 * 2 * 3 * 1024, -1, np.int32)
    for b in range(2):
        for h in range(40):
            for w in range(70):
                row, col = b * 64 + h, w  # folded matrix (2 x 64 padded rows, 96 columns)
                tile = (row // 32) * 3 + col // 32
                fh, fw, i, j = (row % 32) // 16, (col % 32) // 16, row % 16, col % 16
                slot = fw * 2 + fh if of_faces else fh * 2 + fw
                in_face = j * 16 + i if within else i * 16 + j
                expected[tile * 1024 + slot * 256 + in_face] = x[b, h, w]
    np.testing.assert_array_equal(stored, expected)
    np.testing.assert_array_equal(ref.untilize(stored, x.shape, within, of_faces), x)


def test_reference_bf16_nearest_even_agrees_with_ml_dtypes():
    """An independent RNE oracle for the reference: ml_dtypes' float32 -> bfloat16 cast."""
    bits = np.concatenate([random_f32(1, 200_000, "bits").view(np.uint32), SPECIAL_BITS])
    x = bits.view(np.float32)
    finite_or_inf = ~np.isnan(x)
    ours = ref.bf16_bits(x, "nearest_even")
    with np.errstate(invalid="ignore"):
        theirs = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    np.testing.assert_array_equal(ours[finite_or_inf], theirs[finite_or_inf])
    assert (ours[~finite_or_inf] == 0x7FC0).all()


# ==============================================================================================
# Numba kernels == numpy reference, byte for byte
# ==============================================================================================

@FAST
@given(shape=shapes(), dtype=st.sampled_from(COPY_DTYPES), within=flags, of_faces=flags, seed=seeds,
       kind=value_kinds, pad_seed=seeds)
def test_tilize_copy_matches_reference(shape, dtype, within, of_faces, seed, kind, pad_seed):
    x = random_values(seed, shape, dtype, kind)
    pad = random_values(pad_seed, (1,), dtype, "mixed")[0]
    out = np.empty(ref.tile_count(shape) * 1024, UNSIGNED[np.dtype(dtype).itemsize])
    tiles.tilize(folded_bits(x), out, tiles.COPY, 0, bits_of(pad, dtype), within, of_faces)
    expected = ref.tilize(x, pad, within, of_faces)
    np.testing.assert_array_equal(out, expected.reshape(-1).view(out.dtype))


@FAST
@given(shape=shapes(), dtype=st.sampled_from(COPY_DTYPES), within=flags, of_faces=flags, seed=seeds)
def test_untilize_copy_matches_reference(shape, dtype, within, of_faces, seed):
    stored = random_values(seed, (ref.tile_count(shape) * 1024,), dtype, "bits")
    out = np.zeros(ref.folded_shape(shape), UNSIGNED[np.dtype(dtype).itemsize])
    tiles.untilize(stored.view(out.dtype), out, tiles.COPY, within, of_faces)
    expected = ref.untilize(stored, shape, within, of_faces)
    np.testing.assert_array_equal(out.view(dtype).reshape(shape), expected)


@FAST
@given(shape=shapes(), within=flags, of_faces=flags, rounding=roundings, seed=seeds, kind=value_kinds, pad=float_pads)
def test_tilize_bf16_matches_reference(shape, within, of_faces, rounding, seed, kind, pad):
    x = random_f32(seed, math.prod(shape), kind).reshape(shape)
    out = np.empty(ref.tile_count(shape) * 1024, np.uint16)
    tiles.tilize(folded_bits(x), out, tiles.BF16, MODES[rounding], bits_of(pad, np.float32), within, of_faces)
    expected = ref.bf16_bits(ref.tilize(x, np.float32(pad), within, of_faces), rounding)
    np.testing.assert_array_equal(out, expected.reshape(-1))


@FAST
@given(shape=shapes(), within=flags, of_faces=flags, seed=seeds)
def test_untilize_bf16_matches_reference(shape, within, of_faces, seed):
    stored = random_values(seed, (ref.tile_count(shape) * 1024,), np.uint16)
    out = np.zeros(ref.folded_shape(shape), np.uint32)
    tiles.untilize(stored, out, tiles.BF16, within, of_faces)
    expected = ref.bf16_to_f32_bits(ref.untilize(stored, shape, within, of_faces))
    np.testing.assert_array_equal(out.reshape(shape), expected)


@FAST
@given(shape=shapes(), bits=st.sampled_from([7, 3]), within=flags, of_faces=flags, rounding=roundings, seed=seeds,
       kind=value_kinds, pad=float_pads)
def test_tilize_block_float_matches_reference(shape, bits, within, of_faces, rounding, seed, kind, pad):
    x = random_f32(seed, math.prod(shape), kind).reshape(shape)
    out = np.empty(ref.tile_count(shape) * ref.bfp_tile_size(bits), np.uint8)
    tiles.tilize_block_float(folded_bits(x), out, bits, MODES[rounding], bits_of(pad, np.float32), within, of_faces)
    expected = ref.bfp_tiles(x, bits, rounding, pad, within, of_faces)
    np.testing.assert_array_equal(out, expected)


@FAST
@given(shape=shapes(), bits=st.sampled_from([7, 3]), within=flags, of_faces=flags, seed=seeds)
def test_untilize_block_float_matches_reference(shape, bits, within, of_faces, seed):
    """Arbitrary bytes, so every exponent (incl. 0..6, where the decoded exponent goes
    below 0 or to 0) and every code (incl. -0) is decoded."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, ref.tile_count(shape) * ref.bfp_tile_size(bits), dtype=np.uint8)
    out = np.zeros(ref.folded_shape(shape), np.uint32)
    tiles.untilize_block_float(data, out, bits, within, of_faces)
    np.testing.assert_array_equal(out.reshape(shape), ref.bfp_untiles(data, shape, bits, within, of_faces))


@pytest.mark.parametrize("rounding", ref.ROUNDINGS)
def test_float32_to_bfloat16_bits_matches_reference_on_every_high_half(rounding):
    """Every bf16 bit pattern (high half) with the low halves that decide rounding."""
    high = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    lows = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    bits = (high[:, None] | lows[None, :]).reshape(-1)
    x = bits.view(np.float32)
    np.testing.assert_array_equal(formats.float32_to_bfloat16_bits(x, MODES[rounding]), ref.bf16_bits(x, rounding))


@settings(max_examples=300, deadline=None)
@given(value=st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True), rounding=roundings)
def test_float32_to_bfloat16_bits_matches_reference_per_value(value, rounding):
    x = np.array([[value]], np.float32)
    got = formats.float32_to_bfloat16_bits(x, MODES[rounding])
    assert got.shape == (1, 1) and got.dtype == np.uint16
    assert int(got[0, 0]) == int(ref.bf16_bits(x, rounding)[0, 0])


def test_bfloat16_bits_to_float32_on_every_pattern():
    halves = np.arange(1 << 16, dtype=np.uint16).reshape(256, 256)
    got = formats.bfloat16_bits_to_float32(halves)
    assert got.shape == (256, 256) and got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), ref.bf16_to_f32_bits(halves))


def test_float32_to_bfloat16_bits_keeps_shape_of_scalars_and_empty():
    assert formats.float32_to_bfloat16_bits(np.float32(1.0)).shape == ()
    assert int(formats.float32_to_bfloat16_bits(np.float32(1.0))) == 0x3F80
    assert formats.float32_to_bfloat16_bits(np.zeros((0, 3), np.float32)).shape == (0, 3)


# ==============================================================================================
# codec.encode_tensor / decode_tensor with a TensorSpec: every format, both layouts
# ==============================================================================================

ALL_FORMATS = list(DataFormat)
FORMAT_LAYOUTS = [(f, layout) for f in ALL_FORMATS for layout in Layout
                  if not (f.is_block_float and layout is Layout.ROW_MAJOR)]


def reference_encode(x, s: TensorSpec, pad, rounding) -> np.ndarray:
    """Device bytes of x for spec s, from the reference."""
    if s.dtype.is_block_float:
        return ref.bfp_tiles(x, MAGNITUDE_BITS[s.dtype], rounding, pad, s.transpose_within_face,
                             s.transpose_of_faces)
    if s.layout is Layout.TILE:
        values = ref.tilize(x, np.asarray(pad, x.dtype), s.transpose_within_face, s.transpose_of_faces)
    else:
        values = x
    if s.dtype is DataFormat.bfloat16:
        values = ref.bf16_bits(values, rounding)
    return np.ascontiguousarray(values).reshape(-1).view(np.uint8)


@FAST
@given(shape=shapes(max_tiles=24), fmt_layout=st.sampled_from(FORMAT_LAYOUTS), within=flags, of_faces=flags,
       rounding=roundings, seed=seeds, kind=value_kinds, pad_seed=seeds)
def test_encode_tensor_matches_reference_and_spec_size(shape, fmt_layout, within, of_faces, rounding, seed, kind,
                                                       pad_seed):
    data_format, layout = fmt_layout
    if layout is Layout.ROW_MAJOR:
        within = of_faces = False
    s = spec(shape, data_format, layout, within, of_faces)
    dtype = FORMAT_DTYPE[data_format]
    x = random_values(seed, shape, dtype, kind)
    pad = random_values(pad_seed, (1,), dtype, "mixed")[0]
    data = codec.encode_tensor(x, s, pad, MODES[rounding])
    assert data.dtype == np.uint8 and data.shape == (s.size,)
    np.testing.assert_array_equal(data, reference_encode(x, s, pad, rounding))


@FAST
@given(shape=shapes(max_tiles=24), fmt_layout=st.sampled_from(FORMAT_LAYOUTS), within=flags, of_faces=flags,
       seed=seeds)
def test_decode_tensor_matches_reference(shape, fmt_layout, within, of_faces, seed):
    data_format, layout = fmt_layout
    if layout is Layout.ROW_MAJOR:
        within = of_faces = False
    s = spec(shape, data_format, layout, within, of_faces)
    data = np.random.default_rng(seed).integers(0, 256, s.size, dtype=np.uint8)
    decoded = codec.decode_tensor(data, s)
    assert decoded.shape == tuple(shape) and decoded.dtype == data_format.host_dtype
    if data_format.is_block_float:
        expected = ref.bfp_untiles(data, shape, MAGNITUDE_BITS[data_format], within, of_faces)
        np.testing.assert_array_equal(decoded.view(np.uint32), expected)
        return
    unsigned = UNSIGNED[data_format.element_size]
    stored = data.view(unsigned)
    expected = ref.untilize(stored, shape, within, of_faces) if layout is Layout.TILE else stored.reshape(shape)
    np.testing.assert_array_equal(decoded.view(unsigned), expected)
    if data_format is DataFormat.bfloat16:
        widened = codec.decode_tensor(data, s, as_float32=True)
        assert widened.dtype == np.float32
        np.testing.assert_array_equal(widened.view(np.uint32), ref.bf16_to_f32_bits(expected))


@pytest.mark.parametrize("data_format", ALL_FORMATS)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (32, 32), (33, 65), (2, 3, 33, 65), (0, 7), (3, 0), (0,),
                                   (4, 0, 32)])
def test_encoded_size_is_spec_size(data_format, shape):
    dtype = FORMAT_DTYPE[data_format]
    x = random_values(7, shape, dtype)
    for layout in Layout:
        if data_format.is_block_float and layout is Layout.ROW_MAJOR:
            continue
        s = spec(shape, data_format, layout)
        outer, height, width = ref.folded_shape(shape)
        if layout is Layout.TILE:
            expected = ref.tile_count(shape) * data_format.tile_size
        else:
            expected = outer * height * width * data_format.element_size
        assert s.size == expected
        data = codec.encode_tensor(x, s)
        assert data.shape == (expected,)
        assert codec.decode_tensor(data, s).shape == tuple(shape)


@pytest.mark.parametrize("data_format, layout", FORMAT_LAYOUTS)
def test_read_only_and_strided_inputs(data_format, layout):
    """Host data is often read-only (np.frombuffer, bytes) or a strided view: same bytes,
    and the decoded array is the caller's to write."""
    s = spec((3, 40, 50), data_format, layout)
    dtype = FORMAT_DTYPE[data_format]
    wide = random_values(5, (3, 40, 100), dtype, "scaled")
    strided = wide[:, :, ::2]
    expected = codec.encode_tensor(np.ascontiguousarray(strided), s)
    strided.flags.writeable = False
    data = codec.encode_tensor(strided, s)
    np.testing.assert_array_equal(data, expected)
    frozen = np.frombuffer(data.tobytes(), np.uint8)
    decoded = codec.decode_tensor(frozen, s)
    assert decoded.flags.writeable
    np.testing.assert_array_equal(decoded.view(UNSIGNED[decoded.itemsize]),
                                  codec.decode_tensor(data, s).view(UNSIGNED[decoded.itemsize]))


def test_block_floats_only_in_tile_layout():
    for data_format in (DataFormat.bfloat8_b, DataFormat.bfloat4_b):
        with pytest.raises(HalError):
            spec((32, 32), data_format, Layout.ROW_MAJOR)


def test_tile_sizes():
    assert {f: f.tile_size for f in DataFormat} == {
        DataFormat.float32: 4096, DataFormat.int32: 4096, DataFormat.uint32: 4096,
        DataFormat.bfloat16: 2048, DataFormat.uint16: 2048,
        DataFormat.bfloat8_b: 1088, DataFormat.bfloat4_b: 576, DataFormat.uint8: 1024}
    for f in DataFormat:
        assert codec.encode_tensor(np.zeros((32, 32), FORMAT_DTYPE[f]), spec((32, 32), f)).size == f.tile_size


# ==============================================================================================
# Round trips
# ==============================================================================================

@FAST
@given(shape=shapes(max_tiles=24), dtype=st.sampled_from(COPY_DTYPES), layout=st.sampled_from(list(Layout)),
       within=flags, of_faces=flags, seed=seeds, kind=value_kinds, pad_seed=seeds)
def test_round_trip_is_bit_exact_for_exact_formats(shape, dtype, layout, within, of_faces, seed, kind, pad_seed):
    if layout is Layout.ROW_MAJOR:
        within = of_faces = False
    s = spec(shape, DataFormat.from_dtype(dtype), layout, within, of_faces)
    x = random_values(seed, shape, dtype, kind)
    pad = random_values(pad_seed, (1,), dtype, "mixed")[0]
    back = codec.decode_tensor(codec.encode_tensor(x, s, pad), s)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back.view(UNSIGNED[back.itemsize]), x.view(UNSIGNED[x.itemsize]))


@FAST
@given(shape=shapes(max_tiles=24), layout=st.sampled_from(list(Layout)), within=flags, of_faces=flags, seed=seeds,
       rounding=roundings)
def test_bf16_round_trip_is_exact_for_bf16_values(shape, layout, within, of_faces, seed, rounding):
    if layout is Layout.ROW_MAJOR:
        within = of_faces = False
    s = spec(shape, DataFormat.bfloat16, layout, within, of_faces)
    halves = random_values(seed, shape, np.uint16)
    x = ref.bf16_to_f32_bits(halves).view(np.float32)
    data = codec.encode_tensor(x, s, 0.0, MODES[rounding])
    back = codec.decode_tensor(data, s, as_float32=True).view(np.uint32)
    nan = np.isnan(x)
    assert (back[nan] == 0x7FC00000).all()  # every NaN becomes the quiet NaN
    expected = x.view(np.uint32)
    if rounding != "nearest_even":  # the packer's modes flush denormals and -0 to +0
        expected = np.where((expected & 0x7F800000) == 0, 0, expected)
    np.testing.assert_array_equal(back[~nan], expected[~nan])
    narrow = codec.decode_tensor(data, s)
    assert narrow.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(narrow.view(np.uint16), ref.bf16_bits(x, rounding))


def face_rows(x, s: TensorSpec) -> np.ndarray:
    """(n, 16) face rows of x as stored for spec s (float32)."""
    return ref.tilize(x, np.float32(0), s.transpose_within_face, s.transpose_of_faces).reshape(-1, 16)


@FAST
@given(shape=shapes(max_tiles=24), data_format=st.sampled_from([DataFormat.bfloat8_b, DataFormat.bfloat4_b]),
       within=flags, of_faces=flags, seed=seeds, kind=st.sampled_from(["scaled", "ties", "bits", "tiny"]),
       rounding=roundings)
def test_block_float_round_trip_error_is_within_one_code_step(shape, data_format, within, of_faces, seed, kind,
                                                              rounding):
    """A normal |x| in a face row of shared exponent E decodes within one code step
    2^(E-127-(M-1)) (M = 7 or 3), saturated (code 2^M-1 after a carry) or not; with
    rounding to nearest and no saturation, within half a step plus the bits lost to
    the exponent alignment, 2^(E-150). Denormals
    decode to +0; the sign survives unless the value decodes to 0."""
    s = spec(shape, data_format, Layout.TILE, within, of_faces)
    x = random_f32(seed, math.prod(shape), kind).reshape(shape)
    x = np.where(np.isfinite(x), x, np.float32(0))  # Inf/NaN rows: see the tt-metal facts below
    data = codec.encode_tensor(x, s, 0.0, MODES[rounding])
    back = codec.decode_tensor(data, s)
    rows, decoded = face_rows(x, s), face_rows(back, s)
    shared = ((rows.view(np.uint32) >> 23) & 0xFF).max(axis=1, keepdims=True).astype(np.int64)
    np.testing.assert_array_equal(data.reshape(-1, ref.bfp_tile_size(MAGNITUDE_BITS[data_format]))[:, :64]
                                  .reshape(-1, 1), shared)  # the stored exponents are the row maxima
    m = MAGNITUDE_BITS[data_format]
    step = np.ldexp(1.0, shared - 127 - (m - 1))
    error = np.abs(rows.astype(np.float64) - decoded.astype(np.float64))
    normal = ((rows.view(np.uint32) >> 23) & 0xFF) != 0
    assert (error[normal] <= np.broadcast_to(step, error.shape)[normal]).all()
    saturated = np.abs(decoded.astype(np.float64)) == (2**m - 1) * step
    assert (error[normal & ~saturated] < np.broadcast_to(step, error.shape)[normal & ~saturated]).all()
    if rounding != "truncate":  # unsaturated: half a step plus the bits the alignment shifted out
        tight = np.broadcast_to(step / 2 + np.ldexp(1.0, shared - 150), error.shape)
        assert (error[normal & ~saturated] <= tight[normal & ~saturated]).all()
    assert (decoded.view(np.uint32)[~normal] == 0).all()
    nonzero = decoded != 0
    assert (np.signbit(decoded[nonzero]) == np.signbit(rows[nonzero])).all()
    assert (decoded.view(np.uint32)[~nonzero] == 0).all()  # a zero magnitude drops the sign: +0


@FAST
@given(shape=shapes(max_tiles=24), data_format=st.sampled_from([DataFormat.bfloat8_b, DataFormat.bfloat4_b]),
       within=flags, of_faces=flags, seed=seeds, kind=value_kinds)
def test_block_float_encode_is_idempotent_on_decoded_values(shape, data_format, within, of_faces, seed, kind):
    """Decoded values are exactly representable, and the largest of a row keeps the
    row's exponent, so encoding them again gives the same bytes."""
    s = spec(shape, data_format, Layout.TILE, within, of_faces)
    x = random_f32(seed, math.prod(shape), kind).reshape(shape)
    data = codec.encode_tensor(x, s)
    np.testing.assert_array_equal(codec.encode_tensor(codec.decode_tensor(data, s), s), data)


# ==============================================================================================
# Byte-exact facts from tt-metal
# ==============================================================================================

WORKED_ROW = np.array([1.0, 2.0, 3.0, 0.5, -1.0, 0.0, 0.1, 100.0, 1.5, -2.5, 0.75, 7.0, 8.0, -0.125, 0.3, 1e-3],
                      np.float32)


def one_row_tile(row, data_format, **kw):
    """A 32x32 tensor whose row 0, columns 0..15 (face 0, row 0) hold `row`; zeros elsewhere."""
    x = np.zeros((32, 32), np.float32)
    x[0, :16] = row
    s = spec((32, 32), data_format, **kw)
    return codec.encode_tensor(x, s), s


def test_worked_example_bfp8_b():
    data, s = one_row_tile(WORKED_ROW, DataFormat.bfloat8_b)
    assert data[0] == 0x85
    assert (data[1:64] == 0).all()  # all-zero rows have exponent 0
    assert data[64:80].tobytes() == bytes.fromhex("01 02 03 00 81 00 00 64 02 82 01 07 08 00 00 00")
    assert (data[80:] == 0).all()
    assert data[64:80].view("<u4").tolist() == [0x00030201, 0x64000081, 0x07018202, 0x00000008]
    decoded = codec.decode_tensor(data, s)
    np.testing.assert_array_equal(decoded[0, :16], [1, 2, 3, 0, -1, 0, 0, 100, 2, -2, 1, 7, 8, 0, 0, 0])
    assert not np.signbit(decoded[0, 13])  # -0.125 rounded to magnitude 0: sign dropped
    # The reference gives the same row.
    exponents, codes = ref.bfp_pack_rows(WORKED_ROW[None], 7)
    assert exponents[0] == 0x85 and codes[0].tobytes() == data[64:80].tobytes()


def test_worked_example_bfp4_b():
    data, s = one_row_tile(WORKED_ROW, DataFormat.bfloat4_b)
    assert data.size == 576 and data[0] == 0x85
    assert data[64:72].tobytes() == bytes.fromhex("00 00 00 60 00 00 00 00")
    assert data[64:72].view("<u4").tolist() == [0x60000000, 0x00000000]
    assert (data[72:] == 0).all()
    decoded = codec.decode_tensor(data, s)
    expected = np.zeros(16, np.float32)
    expected[7] = 96.0  # 6 * 2^(133-129)
    np.testing.assert_array_equal(decoded[0, :16], expected)
    assert not np.signbit(decoded[0, :16]).any()


def test_bfp4_element_zero_in_low_nibble():
    row = np.zeros(16, np.float32)
    row[0], row[1] = 1.0, 2.0  # shared exponent 128: 1.0 = 2/4 * 2, 2.0 = 4/4 * 2
    data, s = one_row_tile(row, DataFormat.bfloat4_b)
    assert data[0] == 128 and data[64] == 0x42


@pytest.mark.parametrize("value, code, decoded", [
    (64.75, 0x41, 65.0),  # round up
    (65.25, 0x41, 65.0),  # round down
    (64.5, 0x40, 64.0),  # tie, to even (down)
    (65.5, 0x42, 66.0),  # tie, to even (up)
    (1.99999988, 0x7F, 1.984375),  # carry past 0x7F saturates; the exponent never grows
])
@pytest.mark.parametrize("sign", [1, -1])
def test_tt_metal_bfp8_mantissa_rounding_cases(value, code, decoded, sign):
    """tt-metal test_blockfloat_common (ConvertU32ToBfpTests): a value alone in its row."""
    row = np.zeros(16, np.float32)
    row[3] = sign * value
    data, s = one_row_tile(row, DataFormat.bfloat8_b)
    assert data[0] == (f32_bits_of(row[3]) >> 23) & 0xFF
    assert data[64 + 3] == code | (0x80 if sign < 0 else 0)
    assert codec.decode_tensor(data, s)[0, 3] == np.float32(sign * decoded)


def f32_bits_of(value) -> int:
    return int(np.float32(value).view(np.uint32))


@pytest.mark.parametrize("data_format, inf_code, nan_code", [
    (DataFormat.bfloat8_b, 0x40, 0x60),
    (DataFormat.bfloat4_b, 0x4, 0x6),
])
def test_inf_and_nan_keep_exponent_255_and_round_trip(data_format, inf_code, nan_code):
    m = MAGNITUDE_BITS[data_format]
    row = np.zeros(16, np.float32)
    row[:4] = [np.inf, -np.inf, np.nan, 1.0]
    row[4] = f32(0xFFC00000)  # negative quiet NaN
    data, s = one_row_tile(row, data_format)
    assert data[0] == 0xFF
    expected_bits = ref.bfp_untiles(data, (32, 32), m)  # the reference decodes the same bytes
    if m == 7:
        stored = data[64:69].tolist()
    else:
        stored = [data[64] & 0xF, data[64] >> 4, data[65] & 0xF, data[65] >> 4, data[66] & 0xF]
    sign = 1 << m
    assert stored == [inf_code, sign | inf_code, nan_code, 0, sign | nan_code]  # 1.0 vanishes under 2^128
    back = codec.decode_tensor(data, s)
    assert back[0, 0] == np.inf and back[0, 1] == -np.inf
    assert back[0, 2:5].view(np.uint32).tolist() == [0x7FC00000, 0, 0xFFC00000]
    np.testing.assert_array_equal(back.view(np.uint32), expected_bits)


def test_bfp8_nan_payload_below_code_width_becomes_inf():
    """tt-metal's packer keeps the top 6 fraction bits: a NaN whose payload lies below
    them (0x7F800001) gets the Inf code 0x40 and decodes to Inf (faithful, documented here)."""
    row = np.zeros(16, np.float32)
    row[0] = f32(0x7F800001)
    data, s = one_row_tile(row, DataFormat.bfloat8_b)
    assert data[0] == 0xFF and data[64] == 0x40
    assert codec.decode_tensor(data, s)[0, 0] == np.inf


def test_bfp_denormals_flush_to_zero():
    row = np.zeros(16, np.float32)
    row[:3] = f32([0x00000001, 0x807FFFFF, 0x00400000])
    data, s = one_row_tile(row, DataFormat.bfloat8_b)
    assert data[0] == 0 and (data[64:80] == 0).all()


@pytest.mark.parametrize("bits, rounding, half", [
    (0x7FC00000, "nearest_even", 0x7FC0), (0xFFC00000, "nearest_even", 0x7FC0),
    (0x7F800001, "nearest_even", 0x7FC0), (0x7FFFFFFF, "nearest_even", 0x7FC0),
    (0x7F800001, "nearest_away", 0x7FC0), (0xFFFFFFFF, "truncate", 0x7FC0),
    (0x3F808000, "nearest_even", 0x3F80),  # tie, even stays
    (0x3F818000, "nearest_even", 0x3F82),  # tie, odd rounds up
    (0x3F808001, "nearest_even", 0x3F81),
    (0xBF818000, "nearest_even", 0xBF82),
    (0x3F808000, "nearest_away", 0x3F81), (0xBF808000, "nearest_away", 0xBF81),
    (0x3F80FFFF, "truncate", 0x3F80),
    (0x7F7FFFFF, "nearest_even", 0x7F80), (0xFF7FFFFF, "nearest_even", 0xFF80),  # overflow to Inf
    (0x7F7F8000, "nearest_even", 0x7F80), (0x7F7F7FFF, "nearest_even", 0x7F7F),
    (0x7F7FFFFF, "nearest_away", 0x7F80), (0x7F7FFFFF, "truncate", 0x7F7F),
    (0x7F800000, "nearest_even", 0x7F80), (0xFF800000, "truncate", 0xFF80),
    (0x00018000, "nearest_even", 0x0002), (0x00008000, "nearest_even", 0x0000),  # denormals round (host)
    (0x80000000, "nearest_even", 0x8000),
    (0x00018000, "nearest_away", 0x0000), (0x807FFFFF, "nearest_away", 0x0000),  # packer flushes
    (0x80000000, "nearest_away", 0x0000), (0x80000000, "truncate", 0x0000),  # -0 -> +0
    (0x00800000, "truncate", 0x0080),
])
def test_bf16_facts(bits, rounding, half):
    x = np.array([bits], np.uint32).view(np.float32)
    assert int(formats.float32_to_bfloat16_bits(x, MODES[rounding])[0]) == half
    assert int(ref.bf16_bits(x, rounding)[0]) == half
    # The tilizer converts the same way (value in row 0, column 0 of a tile).
    t = np.zeros((32, 32), np.float32)
    t[0, 0] = x[0]
    data = codec.encode_tensor(t, spec((32, 32), DataFormat.bfloat16), 0.0, MODES[rounding])
    assert int(data[:2].view("<u2")[0]) == half


def hand_offset(i, j, within=False, of_faces=False) -> int:
    fh, fw = i // 16, j // 16
    face = fw * 2 + fh if of_faces else fh * 2 + fw
    return face * 256 + ((j % 16) * 16 + i % 16 if within else (i % 16) * 16 + j % 16)


def test_hand_computed_bf16_tile():
    x = (np.arange(32)[:, None] * 32 + np.arange(32)[None, :]).astype(np.float32)  # x[i, j] = i*32 + j
    data = codec.encode_tensor(x, spec((32, 32), DataFormat.bfloat16))
    assert data.size == 2048

    def half(offset):  # little-endian
        return int(data[2 * offset]) | int(data[2 * offset + 1]) << 8

    assert half(0) == 0x0000  # (0,0) = 0
    assert half(18) == 0x4208  # (1,2) = 34 = 1.0625 * 2^5, face 0
    assert half(256) == 0x4180  # (0,16) = 16, face 1 (TR) starts at element 256
    assert half(512) == 0x4400  # (16,0) = 512, face 2 (BL)
    assert half(768 + 17) == 0x440C  # (17,17) = 561 = 1.000110001b * 2^9 rounds down to 0x440C, face 3 (BR)
    assert half(1023) == 0x4480  # (31,31) = 1023 rounds (nearest even) to 1024
    expected = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    for i in range(32):
        for j in range(32):
            assert half(hand_offset(i, j)) == expected[i, j]


@pytest.mark.parametrize("within, of_faces", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("data_format", [DataFormat.float32, DataFormat.uint16, DataFormat.int32])
def test_hand_computed_tile_offsets(data_format, within, of_faces):
    """Exact formats: element (i, j) = i*32+j lands at the hand-computed offset."""
    dtype = FORMAT_DTYPE[data_format]
    x = (np.arange(32)[:, None] * 32 + np.arange(32)[None, :]).astype(dtype)
    data = codec.encode_tensor(x, spec((32, 32), data_format, within=within, of_faces=of_faces))
    stored = data.view(np.dtype(dtype).newbyteorder("<"))
    for i in range(32):
        for j in range(32):
            assert stored[hand_offset(i, j, within, of_faces)] == i * 32 + j
    # Named spots: face order TL, BL, TR, BR with transpose_of_faces; (i, j) of a face at j*16+i within.
    if of_faces:
        assert stored[256] == 16 * 32 and stored[512] == 16
    else:
        assert stored[256] == 16 and stored[512] == 16 * 32
    assert stored[1] == (32 if within else 1)  # (1,0) or (0,1)
    assert stored[33] == (2 * 32 + 1 if not within else 1 * 32 + 2)  # element 33: (2,1), or (1,2) transposed


def test_second_tile_and_padding_of_a_multi_tile_tensor():
    """(2, 33, 40) uint16: each batch pads to 64x64, tiles row-major over the (128, 64) fold."""
    x = np.arange(2 * 33 * 40, dtype=np.uint16).reshape(2, 33, 40)
    s = spec(x.shape, DataFormat.uint16)
    stored = codec.encode_tensor(x, s, pad_value=np.uint16(0xBEEF)).view("<u2").reshape(-1, 1024)
    assert stored.shape == (8, 1024)
    assert stored[1, hand_offset(0, 0)] == x[0, 0, 32]  # tile (0, 1)
    assert stored[1, hand_offset(0, 8)] == 0xBEEF  # column 40: padding
    assert stored[2, hand_offset(0, 0)] == x[0, 32, 0]  # tile (1, 0): row 32 of batch 0
    assert stored[2, hand_offset(1, 0)] == 0xBEEF  # row 33: padding
    assert stored[4, hand_offset(0, 0)] == x[1, 0, 0]  # batch 1 starts on tile row 2
    assert (stored[3, hand_offset(1, 0):] == 0xBEEF).all()


# ==============================================================================================
# Tile-row ranges and the multi-threaded path (tt_hal.target.tiles.run_by_tile_rows)
# ==============================================================================================

KERNEL_KINDS = ["copy", "bf16", "bfp8", "bfp4"]


def tile_row_bounds(shape, data):
    outer, height, width = ref.folded_shape(shape)
    rows = outer * ref._round_up(height) // 32
    first = data.draw(st.integers(0, rows))
    return rows, first, data.draw(st.integers(first, rows))


@FAST
@given(shape=shapes(), kind=st.sampled_from(KERNEL_KINDS), within=flags, of_faces=flags, seed=seeds, data=st.data())
def test_tilize_kernels_write_only_the_requested_tile_rows(shape, kind, within, of_faces, seed, data):
    rows, first, end = tile_row_bounds(shape, data)
    x = random_f32(seed, math.prod(shape), "mixed").reshape(shape)
    if kind in ("bfp8", "bfp4"):
        m = 7 if kind == "bfp8" else 3
        expected = ref.bfp_tiles(x, m, "nearest_even", 0.0, within, of_faces)
        out = np.full(expected.size, 0xA5, np.uint8)
        tiles.tilize_block_float(folded_bits(x), out, m, 0, 0, within, of_faces, first, end)
    else:
        values = ref.tilize(x.view(np.uint32), 0, within, of_faces).reshape(-1)
        expected = ref.bf16_bits(values.view(np.float32)) if kind == "bf16" else values
        out = np.full(expected.size, {2: 0xA5A5, 4: 0xA5A5A5A5}[expected.itemsize], expected.dtype)
        tiles.tilize(folded_bits(x), out, tiles.BF16 if kind == "bf16" else tiles.COPY, 0, 0, within, of_faces,
                     first, end)
    per_row = expected.size // rows if rows else 0
    lo, hi = first * per_row, end * per_row
    np.testing.assert_array_equal(out[lo:hi], expected[lo:hi])
    sentinel = {1: 0xA5, 2: 0xA5A5, 4: 0xA5A5A5A5}[out.itemsize]
    assert (out[:lo] == sentinel).all() and (out[hi:] == sentinel).all()


@FAST
@given(shape=shapes(), kind=st.sampled_from(KERNEL_KINDS), within=flags, of_faces=flags, seed=seeds, data=st.data())
def test_untilize_kernels_write_only_the_requested_tile_rows(shape, kind, within, of_faces, seed, data):
    rows, first, end = tile_row_bounds(shape, data)
    outer, height, width = ref.folded_shape(shape)
    rng = np.random.default_rng(seed)
    out = np.full((outer, height, width), 0xDEADBEEF, np.uint32)
    if kind in ("bfp8", "bfp4"):
        m = 7 if kind == "bfp8" else 3
        stored = rng.integers(0, 256, ref.tile_count(shape) * ref.bfp_tile_size(m), dtype=np.uint8)
        tiles.untilize_block_float(stored, out, m, within, of_faces, first, end)
        expected = ref.bfp_untiles(stored, (outer, height, width), m, within, of_faces)
    elif kind == "bf16":
        stored = rng.integers(0, 1 << 16, ref.tile_count(shape) * 1024, dtype=np.uint16)
        tiles.untilize(stored, out, tiles.BF16, within, of_faces, first, end)
        expected = ref.bf16_to_f32_bits(ref.untilize(stored, (outer, height, width), within, of_faces))
    else:
        stored = rng.integers(0, 1 << 32, ref.tile_count(shape) * 1024, dtype=np.uint32)
        tiles.untilize(stored, out, tiles.COPY, within, of_faces, first, end)
        expected = ref.untilize(stored, (outer, height, width), within, of_faces)
    # Tile row r covers rows [32 * r, 32 * r + 32) of the folded (outer * Hp) matrix.
    folded_row = np.arange(outer)[:, None] * ref._round_up(height) + np.arange(height)[None, :]
    written = (folded_row >= 32 * first) & (folded_row < 32 * end)
    np.testing.assert_array_equal(out[written], expected[written])
    assert (out[~written] == 0xDEADBEEF).all()


@FAST
@given(shape=shapes(max_tiles=24), data_format=st.sampled_from(ALL_FORMATS), within=flags, of_faces=flags,
       seed=seeds, workers=st.integers(2, 5))
def test_threaded_conversion_matches_reference(monkeypatch_module, shape, data_format, within, of_faces, seed,
                                               workers):
    """The split across host threads (forced here for small tensors) gives the same bytes."""
    monkeypatch_module.setattr(tiles, "PARALLEL_ELEMENTS", 1)
    monkeypatch_module.setattr(tiles, "WORKERS", workers)
    s = spec(shape, data_format, Layout.TILE, within, of_faces)
    dtype = FORMAT_DTYPE[data_format]
    x = random_values(seed, shape, dtype, "mixed")
    data = codec.encode_tensor(x, s, np.zeros((), dtype)[()])
    np.testing.assert_array_equal(data, reference_encode(x, s, np.zeros((), dtype)[()], "nearest_even"))
    back = codec.decode_tensor(data, s, as_float32=True)
    if data_format.is_block_float:
        expected = ref.bfp_untiles(data, shape, MAGNITUDE_BITS[data_format], within, of_faces)
    elif data_format is DataFormat.bfloat16:
        expected = ref.bf16_to_f32_bits(ref.bf16_bits(x))
    else:
        expected = x.view(UNSIGNED[x.itemsize])
    np.testing.assert_array_equal(back.view(UNSIGNED[back.itemsize]), expected)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("data_format", [DataFormat.bfloat16, DataFormat.bfloat8_b, DataFormat.uint8])
def test_large_tensor_uses_threads_and_matches_reference(data_format):
    """Above tiles.PARALLEL_ELEMENTS the kernels run on several threads; edges included."""
    shape = (2, 700, 777)
    assert math.prod(shape) >= tiles.PARALLEL_ELEMENTS
    dtype = FORMAT_DTYPE[data_format]
    x = random_values(11, shape, dtype, "scaled")
    s = spec(shape, data_format, Layout.TILE, True, False)
    data = codec.encode_tensor(x, s)
    np.testing.assert_array_equal(data, reference_encode(x, s, np.zeros((), dtype)[()], "nearest_even"))
    back = codec.decode_tensor(data, s, as_float32=True)
    if data_format is DataFormat.bfloat8_b:
        expected = ref.bfp_untiles(data, shape, 7, True, False)
    elif data_format is DataFormat.bfloat16:
        expected = ref.bf16_to_f32_bits(ref.bf16_bits(x))
    else:
        expected = x
    np.testing.assert_array_equal(back.view(expected.dtype), expected)


def test_every_data_format_has_its_tt_metal_name_and_parses_from_it():
    """tt::DataFormat's names (circular buffers on hardware take them) name each format once."""
    names = [f.tt_metal_name for f in DataFormat]
    assert len(set(names)) == len(names) and DataFormat.bfloat8_b.tt_metal_name == "Bfp8_b"
    assert all(DataFormat.parse(f.tt_metal_name) is f and DataFormat.parse(f.name) is f for f in DataFormat)
