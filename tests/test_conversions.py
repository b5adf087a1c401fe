"""The C++ conversion kernels (tt_hal.target._conversions) against their numba twins
(tt_hal/target/tiles.py, tt_hal/target/formats.py): byte-identical output over hypothesis-generated
shapes, values and arguments; tt_hal.target.conversions end to end with implementation="native" vs
"numba"; the C++ argument checks (ValueError, nothing written); and how
tt_hal.target.conversions.kernel picks an implementation, with and without the extension.

The differential tests take the `conversions` fixture, which skips them (through
pytest.importorskip) where the extension is not built. The build itself is checked
by test_native_conversions_extension_is_built, which never skips: the CI machines
have a C++ compiler, so a missing extension there is a broken build, not a reason to
quietly skip every differential test.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hal.status import HalError, StatusCode
from tt_hal.target import conversions as codec
from tt_hal.target import extensions, formats, tiles
from tt_hal.target.layout import DataFormat, Layout, TensorSpec
from tt_hal.target.placement import DRAM_MEMORY_CONFIG

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NUMBA = {"tilize": tiles.tilize, "untilize": tiles.untilize, "tilize_block_float": tiles.tilize_block_float,
         "untilize_block_float": tiles.untilize_block_float, "bf16_encode": formats.bf16_encode,
         "bf16_decode": formats.bf16_decode}
ROUNDINGS = [formats.ROUND_NEAREST_EVEN, formats.ROUND_NEAREST_AWAY, formats.ROUND_TRUNCATE]
MAGNITUDE_BITS = [formats.BFP8_MAGNITUDE_BITS, formats.BFP4_MAGNITUDE_BITS]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}
SENTINEL = {1: 0xA5, 2: 0xA5A5, 4: 0xDEADBEEF}


@pytest.fixture(scope="module")
def conversions():
    """The C++ kernels; the differential tests skip where they are not built."""
    return pytest.importorskip("tt_hal.target._conversions", reason="tt_hal.target._conversions is not built")


# ==============================================================================================
# Values: float32 bit patterns with the cases that tell implementations apart
# ==============================================================================================

SPECIAL_BITS = [
    0x00000000, 0x80000000,  # +-0
    0x7F800000, 0xFF800000,  # +-Inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F808000, 0x7F807FFF,  # NaNs
    0x00000001, 0x807FFFFF, 0x00400000, 0x00008000, 0x00018000, 0x00007FFF, 0x807F8000,  # denormals
    0x00800000, 0x80800000, 0x00800001,  # smallest normals
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F7F8001,  # huge: FLT_MAX, bf16 overflow ties
    0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x3F80FFFF, 0xBF808000, 0xBF818000,  # bf16 ties, near-ties
    0x3F800000, 0x42C80000, 0x3FFFFFFF, 0x40000000, 0x3FC00000, 0x3FFF0000,  # 1, 100, ~2, 2, 1.5, 1.99...
    0x3F810000, 0x3F820000, 0x3F830000, 0x3F838000,  # bfp8 / bfp4 ties at the row's exponent
]


def _f32_bits(value: float) -> int:
    return int(np.array([value], np.float32).view(np.uint32)[0])


signs = st.integers(0, 1)
special_bits = st.sampled_from(SPECIAL_BITS)
nan_bits = st.builds(lambda sign, payload: sign << 31 | 0x7F800000 | payload, signs, st.integers(1, 0x7FFFFF))
bf16_tie_bits = st.builds(lambda high, low: high << 16 | low, st.integers(0, 0xFFFF),
                          st.sampled_from([0x8000, 0x7FFF, 0x8001, 0x0000, 0xFFFF]))
# A block-float tie: the mantissa bits below `cut` are exactly one half (bfp8 drops 17 bits, bfp4 21,
# plus whatever the alignment to the row's exponent shifts out).
bfp_tie_bits = st.builds(
    lambda sign, exponent, mantissa, cut: sign << 31 | exponent << 23 | ((mantissa >> cut << cut) | 1 << (cut - 1)),
    signs, st.integers(1, 254), st.integers(0, 0x7FFFFF), st.integers(1, 23))
denormal_bits = st.builds(lambda sign, mantissa: sign << 31 | mantissa, signs, st.integers(0, 0x7FFFFF))
float_bits = st.one_of(special_bits, nan_bits, bf16_tie_bits, bfp_tie_bits, denormal_bits,
                       st.integers(0, 2**32 - 1), st.floats(width=32).map(_f32_bits))

FILLS = ["raw", "normal", "ties", "zero_exponent", "inf_nan", "wide", "two_scales", "drawn"]


def fill_bits(kind: str, seed: int, drawn: list[int], n: int) -> np.ndarray:
    """n float32 bit patterns (uint32). raw: uniform; normal: exponents 2^+-12; ties:
    normals whose low bits sit at a bf16 or block-float rounding tie (or one off),
    exponents close enough that the ties survive the alignment to the row's largest;
    zero_exponent: +-0 and denormals only (face rows of shared exponent 0); inf_nan:
    normals with Inf and NaNs sprinkled in (rows of shared exponent 255); wide: any
    exponent (mixed magnitudes within a face row, most shifted out); two_scales: values
    2^1..2^30 below the row's largest (partly shifted out); drawn: the drawn values
    repeated. Except for `drawn`, the drawn values are then scattered over the array."""
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    mantissa = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    exponent = rng.integers(127 - 12, 127 + 13, n, dtype=np.uint32)
    if kind == "raw":
        bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    elif kind == "drawn":
        return np.resize(np.array(drawn, np.uint32), n)
    else:
        if kind == "ties":
            # Exponents within 2 of the row's largest, and a half at bit 17 + d (bfp8) or 21 + d (bfp4)
            # of a value d below the largest: exact block-float ties (or one off) after the alignment.
            exponent = np.uint32(120) - rng.integers(0, 3, n, dtype=np.uint32)
            cut = rng.choice(np.array([17, 18, 19, 21, 22, 23, 1, 8, 16], np.uint32), n)
            offset = rng.choice(np.array([0, 0, 0, 1, 0xFFFFFFFF], np.uint32), n)  # mostly exact ties
            mantissa = ((mantissa >> cut << cut) | (np.uint32(1) << (cut - np.uint32(1)))) + offset
            mantissa &= np.uint32(0x7FFFFF)
            bf16 = rng.random(n) < 0.4
            mantissa = np.where(bf16, (mantissa & np.uint32(0x7F0000)) | rng.choice(
                np.array([0x8000, 0x7FFF, 0x8001], np.uint32), n), mantissa)
        elif kind == "zero_exponent":
            exponent[:] = 0
            mantissa = np.where(rng.random(n) < 0.2, 0, mantissa).astype(np.uint32)
        elif kind == "inf_nan":
            top = rng.random(n) < 0.08
            exponent = np.where(top, 255, exponent).astype(np.uint32)
            mantissa = np.where(top & (rng.random(n) < 0.5), 0, mantissa).astype(np.uint32)
        elif kind == "wide":
            exponent = rng.integers(0, 256, n, dtype=np.uint32)
        elif kind == "two_scales":
            exponent = np.where(rng.random(n) < 0.3, 200, 200 - rng.integers(1, 31, n)).astype(np.uint32)
        bits = sign | (exponent << np.uint32(23)) | mantissa
    at = rng.integers(0, n, len(drawn))
    bits[at] = np.array(drawn, np.uint32)
    return bits.astype(np.uint32)


@st.composite
def float_arrays(draw, shape):
    """A uint32 array of float32 bit patterns of `shape` (see fill_bits)."""
    n = math.prod(shape)
    kind = draw(st.sampled_from(FILLS))
    drawn = draw(st.lists(float_bits, min_size=1, max_size=24))
    seed = draw(st.integers(0, 2**32 - 1))
    return fill_bits(kind, seed, drawn[:n] if n else [], n).reshape(shape) if n else np.zeros(shape, np.uint32)


@st.composite
def int_arrays(draw, shape, dtype):
    """Uniform unsigned integers of `dtype`, with hypothesis-drawn ones (incl. 0 and max) scattered in."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    top = np.iinfo(dtype).max
    drawn = draw(st.lists(st.one_of(st.sampled_from([0, top, top // 2, top // 2 + 1]), st.integers(0, int(top))),
                          min_size=1, max_size=16))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.integers(0, int(top), n, dtype=dtype, endpoint=True)
    if n:
        values[rng.integers(0, n, len(drawn))] = drawn
    return values.reshape(shape)


def bit_arrays(shape, dtype):
    return float_arrays(shape) if np.dtype(dtype).itemsize == 4 else int_arrays(shape, dtype)


# Tensor extents: anything in 1..100, with the tile and face boundaries often.
extents = st.one_of(st.integers(1, 100), st.sampled_from([1, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 100]))
tensor_shapes = st.tuples(st.integers(1, 3), extents, extents)
flags = st.booleans()
roundings = st.sampled_from(ROUNDINGS)
magnitude_bits = st.sampled_from(MAGNITUDE_BITS)


def tile_grid(shape) -> tuple[int, int]:
    """(tile rows, tile columns) of the folded matrix of a (B, H, W) tensor."""
    batch, height, width = shape
    return batch * -(-height // 32), -(-width // 32)


def bfp_tile_bytes(bits: int) -> int:
    return 64 + 1024 * (bits + 1) // 8


def row_args(data, rows: int) -> tuple:
    """The trailing (first_row, end_row) arguments: left out (the defaults), the whole
    tensor spelled (0, -1), or a sub-range [first, end) of the tile rows."""
    how = data.draw(st.sampled_from(["default", "all", "range"]), label="rows")
    if how == "default":
        return ()
    if how == "all":
        return (0, -1)
    first = data.draw(st.integers(0, rows), label="first_row")
    return first, data.draw(st.integers(first, rows), label="end_row")


def sentinel(size: int, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    return np.full(size, SENTINEL[dtype.itemsize], dtype)


def run_both(conversions, name: str, args: list, out_at: int):
    """Calls the numba and the C++ kernel `name` with `args`, each on its own copy of the
    output args[out_at] (prefilled by the caller); checks neither touched its inputs;
    returns (numba's output, native's output)."""
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    outputs = []
    for function in (NUMBA[name], getattr(conversions, name)):
        call = list(args)
        call[out_at] = args[out_at].copy()
        function(*call)
        outputs.append(call[out_at])
        for before, after in zip(inputs, call):
            if isinstance(before, np.ndarray) and after is not call[out_at]:
                np.testing.assert_array_equal(after, before)  # inputs are read only
    return outputs


def assert_same(numba_out: np.ndarray, native_out: np.ndarray) -> None:
    assert numba_out.dtype == native_out.dtype and numba_out.shape == native_out.shape
    differ = np.flatnonzero(numba_out.reshape(-1) != native_out.reshape(-1))
    if differ.size:
        i = int(differ[0])
        raise AssertionError(f"{differ.size} of {numba_out.size} elements differ; first at flat index {i}: "
                             f"numba {int(numba_out.reshape(-1)[i]):#x}, native {int(native_out.reshape(-1)[i]):#x}")


# ==============================================================================================
# The extension is built, and has the numba kernels' signatures
# ==============================================================================================

def test_native_conversions_extension_is_built():
    """Never skipped: where a C++17 compiler exists (CI), `pip install -e .` builds
    tt_hal.target._conversions and setup.py records it in tt_hal/target/_build_status.json.
    Asks for a module that loads, not just a 'built' record: an extension that was
    built but does not import would also skip every differential test below."""
    status = extensions.build_status("tt_hal.target").get("_conversions")
    module, reason = codec.native_conversions()
    assert module is not None, f"tt_hal.target._conversions is not available: {reason} (_build_status.json: {status!r})"
    assert status == "built"


def _native_parameters(function) -> list[tuple[str, str | None]]:
    """(name, default) of each parameter, from pybind11's signature line in __doc__."""
    line = function.__doc__.strip().splitlines()[0]
    inside = line[line.index("(") + 1: line.rindex(")")]
    result = []
    for part in re.split(r",\s*(?![^\[]*\])", inside):
        name, _, rest = part.partition(":")
        default = rest.split("=", 1)[1].strip() if "=" in rest else None
        result.append((name.strip(), default))
    return result


@pytest.mark.parametrize("name", list(NUMBA))
def test_native_signatures_match_numba(conversions, name):
    numba_parameters = [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
                        for p in inspect.signature(NUMBA[name].py_func).parameters.values()]
    assert _native_parameters(getattr(conversions, name)) == numba_parameters


# ==============================================================================================
# Each kernel, native == numba, byte for byte
# ==============================================================================================

@SETTINGS
@given(shape=tensor_shapes, dtype=st.sampled_from([np.uint8, np.uint16, np.uint32]), within=flags, of_faces=flags,
       pad=st.one_of(float_bits, st.integers(0, 255)), data=st.data())
def test_tilize_copy(conversions, shape, dtype, within, of_faces, pad, data):
    tensor = data.draw(bit_arrays(shape, dtype), label="tensor")
    rows, cols = tile_grid(shape)
    out = sentinel(rows * cols * 1024, dtype)
    args = [tensor, out, tiles.COPY, 0, pad, within, of_faces, *row_args(data, rows)]
    assert_same(*run_both(conversions, "tilize", args, 1))


@SETTINGS
@given(shape=tensor_shapes, rounding=roundings, within=flags, of_faces=flags, pad=float_bits, data=st.data())
def test_tilize_bf16(conversions, shape, rounding, within, of_faces, pad, data):
    tensor = data.draw(float_arrays(shape), label="tensor")
    rows, cols = tile_grid(shape)
    args = [tensor, sentinel(rows * cols * 1024, np.uint16), tiles.BF16, rounding, pad, within, of_faces,
            *row_args(data, rows)]
    assert_same(*run_both(conversions, "tilize", args, 1))


@SETTINGS
@given(shape=tensor_shapes, dtype=st.sampled_from([np.uint8, np.uint16, np.uint32]), within=flags, of_faces=flags,
       data=st.data())
def test_untilize_copy(conversions, shape, dtype, within, of_faces, data):
    rows, cols = tile_grid(shape)
    stored = data.draw(bit_arrays((rows * cols * 1024,), dtype), label="tiles")
    args = [stored, sentinel(math.prod(shape), dtype).reshape(shape), tiles.COPY, within, of_faces,
            *row_args(data, rows)]
    assert_same(*run_both(conversions, "untilize", args, 1))


@SETTINGS
@given(shape=tensor_shapes, within=flags, of_faces=flags, data=st.data())
def test_untilize_bf16(conversions, shape, within, of_faces, data):
    rows, cols = tile_grid(shape)
    stored = (data.draw(float_arrays((rows * cols * 1024,)), label="tiles") >> np.uint32(16)).astype(np.uint16)
    args = [stored, sentinel(math.prod(shape), np.uint32).reshape(shape), tiles.BF16, within, of_faces,
            *row_args(data, rows)]
    assert_same(*run_both(conversions, "untilize", args, 1))


@SETTINGS
@given(shape=tensor_shapes, bits=magnitude_bits, rounding=roundings, within=flags, of_faces=flags, pad=float_bits,
       data=st.data())
def test_tilize_block_float(conversions, shape, bits, rounding, within, of_faces, pad, data):
    tensor = data.draw(float_arrays(shape), label="tensor")
    rows, cols = tile_grid(shape)
    args = [tensor, sentinel(rows * cols * bfp_tile_bytes(bits), np.uint8), bits, rounding, pad, within, of_faces,
            *row_args(data, rows)]
    assert_same(*run_both(conversions, "tilize_block_float", args, 1))


@SETTINGS
@given(shape=tensor_shapes, bits=magnitude_bits, within=flags, of_faces=flags, source=st.sampled_from(["random",
       "encoded"]), rounding=roundings, seed=st.integers(0, 2**32 - 1), data=st.data())
def test_untilize_block_float(conversions, shape, bits, within, of_faces, source, rounding, seed, data):
    """Random bytes decode every shared exponent (0..6 flush, 255 keeps Inf/NaN) and
    every code (incl. -0); encoded bytes are what the HAL stores."""
    rows, cols = tile_grid(shape)
    size = rows * cols * bfp_tile_bytes(bits)
    if source == "random":
        stored = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    else:
        stored = np.zeros(size, np.uint8)
        tiles.tilize_block_float(data.draw(float_arrays(shape), label="tensor"), stored, bits, rounding, 0,
                                 within, of_faces)
    args = [stored, sentinel(math.prod(shape), np.uint32).reshape(shape), bits, within, of_faces,
            *row_args(data, rows)]
    assert_same(*run_both(conversions, "untilize_block_float", args, 1))


@SETTINGS
@given(length=st.integers(0, 3000), extra=st.sampled_from([0, 0, 1, 7]), rounding=roundings, data=st.data())
def test_bf16_encode(conversions, length, extra, rounding, data):
    """Row-major bf16; an `out` longer than `bits` keeps its tail."""
    bits = data.draw(float_arrays((length,)), label="bits")
    assert_same(*run_both(conversions, "bf16_encode", [bits, sentinel(length + extra, np.uint16), rounding], 1))


@SETTINGS
@given(length=st.integers(0, 3000), extra=st.sampled_from([0, 0, 1, 7]), data=st.data())
def test_bf16_decode(conversions, length, extra, data):
    halves = data.draw(int_arrays((length,), np.uint16), label="halves")
    assert_same(*run_both(conversions, "bf16_decode", [halves, sentinel(length + extra, np.uint32)], 1))


@pytest.mark.parametrize("rounding", ROUNDINGS + [3])
def test_bf16_encode_every_high_half_with_the_deciding_low_halves(conversions, rounding):
    """Every bf16 pattern with the low halves that decide rounding; mode 3 (none of
    the three) truncates in both."""
    bits = every_bf16_rounding_case()
    assert_same(*run_both(conversions, "bf16_encode", [bits, sentinel(bits.size, np.uint16), rounding], 1))


def test_bf16_decode_every_pattern(conversions):
    halves = np.arange(1 << 16, dtype=np.uint16)
    assert_same(*run_both(conversions, "bf16_decode", [halves, sentinel(halves.size, np.uint32)], 1))


def every_bf16_rounding_case() -> np.ndarray:
    """Every bf16 pattern (high half) with each low half that decides its rounding."""
    high = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    lows = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    return (high[:, None] | lows[None, :]).reshape(-1)


@pytest.mark.parametrize("within, of_faces", [(False, False), (True, True)])
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_tilize_bf16_every_high_half_with_the_deciding_low_halves(conversions, rounding, within, of_faces):
    tensor = every_bf16_rounding_case().reshape(3, 256, 512)
    rows, cols = tile_grid(tensor.shape)
    args = [tensor, sentinel(rows * cols * 1024, np.uint16), tiles.BF16, rounding, 0, within, of_faces]
    assert_same(*run_both(conversions, "tilize", args, 1))


def block_float_rounding_cases() -> np.ndarray:
    """Face rows (n, 16) of float32 bits: a leading 2^E (sign alternating) sets the
    row's shared exponent; the others, d = 0..9 below it, carry every top-7-bit
    mantissa with the bits that bfp8 (17 + d) and bfp4 (21 + d) drop set to exactly a
    half, one below or one above; then rows of shared exponent 0 (denormals, +-0),
    255 (Inf, NaNs whose payload is above, at and below the kept bits) and 254
    (saturating carries)."""
    values = []
    for d in range(10):
        for top in range(128):
            for cut in (17 + d, 21 + d):
                if cut > 23:
                    continue
                for offset in (0, -1, 1):
                    mantissa = (top << 16 >> cut << cut | 1 << (cut - 1)) + offset
                    for sign in (0, 1):
                        values.append(sign << 31 | (127 - d) << 23 | mantissa & 0x7FFFFF)
    values = np.array(values, np.uint32)
    values = np.resize(values, -(-values.size // 15) * 15).reshape(-1, 15)
    leading = np.where(np.arange(values.shape[0]) % 2 == 0, 0x3F800000, 0xBF800000).astype(np.uint32)
    rows = [np.concatenate([leading[:, None], values], axis=1)]
    rng = np.random.default_rng(0)
    rows.append(rng.integers(0, 1 << 23, (64, 16), dtype=np.uint32) | (rng.integers(0, 2, (64, 16), dtype=np.uint32)
                                                                    << np.uint32(31)))  # shared exponent 0
    nans = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F810000, 0x7F820000, 0x7F840000,
            0x7FA00000, 0x7FFFFFFF, 0xFF8FFFFF, 0x7F800100]
    for nan in nans:
        rows.append(np.array([[nan] + [0x3F800000 + 0x10000 * k for k in range(15)]], np.uint32))
        rows.append(np.array([[nan] * 16], np.uint32))
    rows.append((0x7F7F0000 + rng.integers(0, 1 << 16, (16, 16), dtype=np.uint32)).astype(np.uint32))  # carries
    rows = np.concatenate(rows).astype(np.uint32)
    return np.resize(rows, (-(-rows.shape[0] // 64) * 64, 16))


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("bits", MAGNITUDE_BITS)
def test_tilize_block_float_ties_and_special_rows(conversions, bits, rounding):
    """Face rows as block_float_rounding_cases builds them: a (1, rows/2, 32) tensor
    stores tensor row r as face rows 2r and 2r+1 (no transposes)."""
    tensor = block_float_rounding_cases().reshape(1, -1, 32)
    rows, cols = tile_grid(tensor.shape)
    args = [tensor, sentinel(rows * cols * bfp_tile_bytes(bits), np.uint8), bits, rounding, 0, False, False]
    assert_same(*run_both(conversions, "tilize_block_float", args, 1))


@pytest.mark.parametrize("bits", MAGNITUDE_BITS)
def test_untilize_block_float_every_exponent_with_every_code(conversions, bits):
    """Every (shared exponent, code) pair, -0 codes included: face row r has exponent
    r % 256 and the codes 16 * (r // 256) + 0..15."""
    codes_per_row = 1 << (bits + 1)
    face_rows = 256 * codes_per_row // 16
    row = np.arange(face_rows)
    codes = ((row // 256)[:, None] * 16 + np.arange(16)[None, :]).reshape(-1, 1024)
    if bits == formats.BFP4_MAGNITUDE_BITS:
        codes = codes[:, 0::2] | (codes[:, 1::2] << 4)
    stored = np.concatenate([(row % 256).reshape(-1, 64), codes], axis=1).astype(np.uint8)
    assert stored.shape[1] == bfp_tile_bytes(bits)
    tensor_shape = (1, stored.shape[0] * 32, 32)
    args = [stored.reshape(-1), sentinel(math.prod(tensor_shape), np.uint32).reshape(tensor_shape), bits, False,
            False]
    assert_same(*run_both(conversions, "untilize_block_float", args, 1))


@pytest.mark.parametrize("rounding", [3, 7, -1])
@pytest.mark.parametrize("kind", ["bf16", "bfp8", "bfp4"])
def test_unknown_rounding_modes_truncate_in_both(conversions, kind, rounding):
    tensor = fill_bits("ties", rounding % 97, SPECIAL_BITS, 2 * 40 * 70).reshape(2, 40, 70)
    rows, cols = tile_grid(tensor.shape)
    if kind == "bf16":
        args = [tensor, sentinel(rows * cols * 1024, np.uint16), tiles.BF16, rounding, 0, False, False]
        name = "tilize"
    else:
        bits = 7 if kind == "bfp8" else 3
        args = [tensor, sentinel(rows * cols * bfp_tile_bytes(bits), np.uint8), bits, rounding, 0, False, False]
        name = "tilize_block_float"
    assert_same(*run_both(conversions, name, args, 1))


def test_native_accepts_read_only_inputs(conversions):
    """Host data is often read only (np.frombuffer): the inputs need not be writable."""
    tensor = fill_bits("raw", 3, [0], 2 * 33 * 47).reshape(2, 33, 47)
    tensor.flags.writeable = False
    rows, cols = tile_grid(tensor.shape)
    stored = sentinel(rows * cols * 1024, np.uint16)
    numba_out, native_out = run_both(conversions, "tilize", [tensor, stored, tiles.BF16, 0, 0, True, True], 1)
    assert_same(numba_out, native_out)
    native_out.flags.writeable = False
    back = run_both(conversions, "untilize", [native_out, np.zeros(tensor.shape, np.uint32), tiles.BF16, True,
                                              True], 1)
    assert_same(*back)


# ==============================================================================================
# tt_hal.target.conversions end to end: implementation="native" vs "numba" over TensorSpecs
# ==============================================================================================

FORMAT_LAYOUTS = [(f, layout) for f in DataFormat for layout in Layout
                  if not (f.is_block_float and layout is Layout.ROW_MAJOR)]
HOST_DTYPE = {DataFormat.float32: np.float32, DataFormat.int32: np.int32, DataFormat.uint32: np.uint32,
              DataFormat.uint16: np.uint16, DataFormat.uint8: np.uint8, DataFormat.bfloat16: np.float32,
              DataFormat.bfloat8_b: np.float32, DataFormat.bfloat4_b: np.float32}


@st.composite
def spec_shapes(draw):
    """Ranks 0..4; the two inner extents 0..100 (a zero now and then), outer ones 1..3."""
    rank = draw(st.integers(0, 4))
    inner = draw(st.lists(st.one_of(extents, st.just(0)), min_size=min(rank, 2), max_size=min(rank, 2)))
    outer = draw(st.lists(st.integers(1, 3), min_size=max(rank - 2, 0), max_size=max(rank - 2, 0)))
    return tuple(outer) + tuple(inner)


def make_spec(shape, data_format, layout, within=False, of_faces=False) -> TensorSpec:
    return TensorSpec(shape, data_format, layout, DRAM_MEMORY_CONFIG, transpose_within_face=within,
                      transpose_of_faces=of_faces)


def unsigned_view(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(UNSIGNED[array.dtype.itemsize])


@SETTINGS
@given(shape=spec_shapes(), fmt_layout=st.sampled_from(FORMAT_LAYOUTS), within=flags, of_faces=flags,
       rounding=roundings, pad=float_bits, workers=st.sampled_from([0, 0, 2, 3]), seed=st.integers(0, 2**32 - 1),
       data=st.data())
def test_codec_native_matches_numba(conversions, shape, fmt_layout, within, of_faces, rounding, pad, workers, seed,
                                    data):
    """encode_tensor and decode_tensor (both widths) give the same bytes with either
    implementation; `workers` > 0 forces tt_hal.target.tiles.run_by_tile_rows to split even a
    small tensor across that many threads."""
    data_format, layout = fmt_layout
    if layout is Layout.ROW_MAJOR:
        within = of_faces = False
    spec = make_spec(shape, data_format, layout, within, of_faces)
    dtype = np.dtype(HOST_DTYPE[data_format])
    unsigned = UNSIGNED[dtype.itemsize]
    values = data.draw(bit_arrays(shape, unsigned), label="values").view(dtype)
    pad_value = np.array([pad], np.uint32).astype(unsigned).view(dtype)[0]
    garbage = np.random.default_rng(seed).integers(0, 256, spec.size, dtype=np.uint8)
    with pytest.MonkeyPatch.context() as patch:
        if workers:
            patch.setattr(tiles, "PARALLEL_ELEMENTS", 1)
            patch.setattr(tiles, "WORKERS", workers)
        encoded = {impl: codec.encode_tensor(values, spec, pad_value, rounding, implementation=impl)
                   for impl in (codec.NUMBA, codec.NATIVE)}
        assert encoded[codec.NATIVE].shape == (spec.size,)
        assert_same(encoded[codec.NUMBA], encoded[codec.NATIVE])
        for stored in (encoded[codec.NUMBA], garbage):
            for as_float32 in (False, True):
                decoded = [codec.decode_tensor(stored, spec, as_float32, implementation=impl)
                           for impl in (codec.NUMBA, codec.NATIVE)]
                assert decoded[0].dtype == decoded[1].dtype and decoded[1].shape == tuple(shape)
                assert_same(unsigned_view(decoded[0]), unsigned_view(decoded[1]))


@pytest.mark.parametrize("data_format", [DataFormat.bfloat16, DataFormat.bfloat8_b, DataFormat.bfloat4_b,
                                         DataFormat.float32, DataFormat.uint8])
def test_codec_large_tensor_on_threads_native_matches_numba(conversions, data_format):
    """Above tiles.PARALLEL_ELEMENTS the HAL splits the tile rows across threads (the
    C++ kernels release the GIL); edges and transposes included."""
    shape = (2, 700, 777)
    assert math.prod(shape) >= tiles.PARALLEL_ELEMENTS
    dtype = np.dtype(HOST_DTYPE[data_format])
    bits = fill_bits("wide", 5, SPECIAL_BITS, math.prod(shape)).reshape(shape)
    values = bits.astype(UNSIGNED[dtype.itemsize]).view(dtype)
    spec = make_spec(shape, data_format, Layout.TILE, True, False)
    encoded = [codec.encode_tensor(values, spec, implementation=impl) for impl in (codec.NUMBA, codec.NATIVE)]
    assert_same(*encoded)
    decoded = [codec.decode_tensor(encoded[0], spec, True, implementation=impl) for impl in (codec.NUMBA, codec.NATIVE)]
    assert_same(unsigned_view(decoded[0]), unsigned_view(decoded[1]))


# ==============================================================================================
# Bad arguments: ValueError, and nothing written
# ==============================================================================================

def _tensor(shape=(2, 40, 50), dtype=np.uint32):
    return np.arange(math.prod(shape), dtype=np.uint64).astype(dtype).reshape(shape)


TILES_8 = 8 * 1024  # (2, 40, 50): 4 tile rows of 2 tiles


def _bad_calls():
    """(id, kernel name, args, output arrays that must stay untouched)."""
    cases = []

    def case(case_id, name, args, *watched):
        cases.append(pytest.param(name, args, watched, id=case_id))

    def fresh(size, dtype):
        return sentinel(size, dtype)

    x = _tensor()
    x16 = _tensor(dtype=np.uint16)
    # tilize
    out = fresh(TILES_8, np.uint16)
    case("tilize-noncontiguous-tensor", "tilize", [_tensor((2, 40, 100))[:, :, ::2], out, 1, 0, 0, False, False],
         out)
    out = fresh(TILES_8, np.uint32)
    case("tilize-fortran-tensor", "tilize", [np.asfortranarray(x), out, 0, 0, 0, False, False], out)
    base = fresh(2 * TILES_8, np.uint16)
    case("tilize-noncontiguous-tiles", "tilize", [x, base[::2], 1, 0, 0, False, False], base)
    out = fresh(TILES_8, np.uint16)
    case("tilize-2d-tensor", "tilize", [x.reshape(80, 50), out, 1, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint32)
    case("tilize-signed-tensor", "tilize", [x.view(np.int32), out, 0, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint32)
    case("tilize-float-tensor", "tilize", [x.view(np.float32), out, 0, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint16)
    case("tilize-bf16-uint16-tensor", "tilize", [x16, out, 1, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint32)
    case("tilize-bf16-uint32-tiles", "tilize", [x, out, 1, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint8)
    case("tilize-bf16-uint8-tiles", "tilize", [x, out, 1, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint16)
    case("tilize-copy-width-mismatch", "tilize", [x, out, 0, 0, 0, False, False], out)
    out = fresh(TILES_8, np.uint32)
    case("tilize-unknown-conversion", "tilize", [x, out, 2, 0, 0, False, False], out)
    out = fresh(TILES_8 - 1, np.uint16)
    case("tilize-tiles-one-short", "tilize", [x, out, 1, 0, 0, False, False], out)
    out = fresh(TILES_8 // 2 + 7, np.uint8)
    case("tilize-copy-tiles-short", "tilize", [x.astype(np.uint8), out, 0, 0, 0, False, False], out)
    out = fresh(3 * 2 * 1024 - 1, np.uint16)
    case("tilize-tiles-short-for-end-row", "tilize", [x, out, 1, 0, 0, False, False, 1, 3], out)
    for first, end in [(-1, -1), (0, 5), (3, 2), (5, -1), (-1, 2), (4, 5)]:
        out = fresh(TILES_8, np.uint16)
        case(f"tilize-rows-{first}-{end}", "tilize", [x, out, 1, 0, 0, False, False, first, end], out)
    out = fresh(TILES_8, np.uint16)
    out.flags.writeable = False
    case("tilize-read-only-tiles", "tilize", [x, out, 1, 0, 0, False, False], out)
    # untilize
    stored = fresh(TILES_8, np.uint16)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-noncontiguous-tiles", "untilize", [fresh(2 * TILES_8, np.uint16)[::2], out, 1, False, False], out)
    base = np.full((2, 40, 100), 0xDEADBEEF, np.uint32)
    case("untilize-noncontiguous-tensor", "untilize", [stored, base[:, :, ::2], 1, False, False], base)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    out.flags.writeable = False
    case("untilize-read-only-tensor", "untilize", [stored, out, 1, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-tiles-one-short", "untilize", [fresh(TILES_8 - 1, np.uint16), out, 1, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-bf16-uint32-tiles", "untilize", [fresh(TILES_8, np.uint32), out, 1, False, False], out)
    out = np.full(x.shape, 0xA5A5, np.uint16)
    case("untilize-bf16-uint16-tensor", "untilize", [stored, out, 1, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-copy-width-mismatch", "untilize", [stored, out, 0, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-unknown-conversion", "untilize", [fresh(TILES_8, np.uint32), out, 5, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize-signed-tensor", "untilize", [fresh(TILES_8, np.uint32), out.view(np.int32), 0, False, False], out)
    for first, end in [(-1, -1), (0, 5), (3, 2), (5, -1)]:
        out = np.full(x.shape, 0xDEADBEEF, np.uint32)
        case(f"untilize-rows-{first}-{end}", "untilize", [stored, out, 1, False, False, first, end], out)
    # tilize_block_float
    for bits in (8, 4, 0, 1, 2, -1, 15):
        out = fresh(8 * bfp_tile_bytes(7), np.uint8)
        case(f"tilize_block_float-magnitude-{bits}", "tilize_block_float", [x, out, bits, 0, 0, False, False], out)
    out = fresh(8 * bfp_tile_bytes(7), np.uint8)
    case("tilize_block_float-uint16-tensor", "tilize_block_float", [x16, out, 7, 0, 0, False, False], out)
    out = fresh(8 * bfp_tile_bytes(7), np.uint16)
    case("tilize_block_float-uint16-tiles", "tilize_block_float", [x, out, 7, 0, 0, False, False], out)
    out = fresh(8 * bfp_tile_bytes(3), np.uint8)  # bfp4-sized tiles for bfp8
    case("tilize_block_float-tiles-short", "tilize_block_float", [x, out, 7, 0, 0, False, False], out)
    out = fresh(8 * bfp_tile_bytes(3) - 1, np.uint8)
    case("tilize_block_float-tiles-one-short", "tilize_block_float", [x, out, 3, 0, 0, False, False], out)
    out = fresh(8 * bfp_tile_bytes(7), np.uint8)
    case("tilize_block_float-noncontiguous-tensor", "tilize_block_float",
         [_tensor((2, 40, 100))[:, :, ::2], out, 7, 0, 0, False, False], out)
    base = fresh(16 * bfp_tile_bytes(7), np.uint8)
    case("tilize_block_float-noncontiguous-tiles", "tilize_block_float", [x, base[::2], 7, 0, 0, False, False], base)
    for first, end in [(-1, -1), (0, 5), (3, 2), (5, -1)]:
        out = fresh(8 * bfp_tile_bytes(7), np.uint8)
        case(f"tilize_block_float-rows-{first}-{end}", "tilize_block_float",
             [x, out, 7, 0, 0, False, False, first, end], out)
    out = fresh(8 * bfp_tile_bytes(7), np.uint8)
    out.flags.writeable = False
    case("tilize_block_float-read-only-tiles", "tilize_block_float", [x, out, 7, 0, 0, False, False], out)
    # untilize_block_float
    stored8 = fresh(8 * bfp_tile_bytes(7), np.uint8)
    for bits in (8, 2, 0):
        out = np.full(x.shape, 0xDEADBEEF, np.uint32)
        case(f"untilize_block_float-magnitude-{bits}", "untilize_block_float", [stored8, out, bits, False, False],
             out)
    out = np.full(x.shape, 0xA5A5, np.uint16)
    case("untilize_block_float-uint16-tensor", "untilize_block_float", [stored8, out, 7, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize_block_float-tiles-one-short", "untilize_block_float",
         [fresh(8 * bfp_tile_bytes(7) - 1, np.uint8), out, 7, False, False], out)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    case("untilize_block_float-uint16-tiles", "untilize_block_float",
         [fresh(8 * bfp_tile_bytes(7), np.uint16), out, 7, False, False], out)
    base = np.full((2, 40, 100), 0xDEADBEEF, np.uint32)
    case("untilize_block_float-noncontiguous-tensor", "untilize_block_float",
         [stored8, base[:, :, ::2], 7, False, False], base)
    out = np.full(x.shape, 0xDEADBEEF, np.uint32)
    out.flags.writeable = False
    case("untilize_block_float-read-only-tensor", "untilize_block_float", [stored8, out, 7, False, False], out)
    for first, end in [(-1, -1), (0, 5), (3, 2)]:
        out = np.full(x.shape, 0xDEADBEEF, np.uint32)
        case(f"untilize_block_float-rows-{first}-{end}", "untilize_block_float",
             [stored8, out, 7, False, False, first, end], out)
    # bf16_encode / bf16_decode
    flat = x.reshape(-1)
    out = fresh(flat.size - 1, np.uint16)
    case("bf16_encode-out-short", "bf16_encode", [flat, out, 0], out)
    out = fresh(flat.size, np.uint16)
    case("bf16_encode-uint16-bits", "bf16_encode", [flat.astype(np.uint16), out, 0], out)
    out = fresh(flat.size, np.uint32)
    case("bf16_encode-uint32-out", "bf16_encode", [flat, out, 0], out)
    out = fresh(flat.size, np.uint16)
    case("bf16_encode-float-bits", "bf16_encode", [flat.view(np.float32), out, 0], out)
    out = fresh(flat.size, np.uint16)
    case("bf16_encode-noncontiguous-bits", "bf16_encode", [np.repeat(flat, 2)[::2], out, 0], out)
    base = fresh(2 * flat.size, np.uint16)
    case("bf16_encode-noncontiguous-out", "bf16_encode", [flat, base[::2], 0], base)
    out = fresh(flat.size, np.uint16)
    out.flags.writeable = False
    case("bf16_encode-read-only-out", "bf16_encode", [flat, out, 0], out)
    halves = flat.astype(np.uint16)
    out = fresh(halves.size - 1, np.uint32)
    case("bf16_decode-out-short", "bf16_decode", [halves, out], out)
    out = fresh(halves.size, np.uint32)
    case("bf16_decode-uint32-halves", "bf16_decode", [flat, out], out)
    out = fresh(halves.size, np.uint16)
    case("bf16_decode-uint16-out", "bf16_decode", [halves, out], out)
    out = fresh(halves.size, np.uint32)
    case("bf16_decode-noncontiguous-halves", "bf16_decode", [np.repeat(halves, 2)[::2], out], out)
    base = fresh(2 * halves.size, np.uint32)
    case("bf16_decode-noncontiguous-out", "bf16_decode", [halves, base[::2]], base)
    out = fresh(halves.size, np.uint32)
    out.flags.writeable = False
    case("bf16_decode-read-only-out", "bf16_decode", [halves, out], out)
    return cases


@pytest.mark.parametrize("name, args, watched", _bad_calls())
def test_native_rejects_bad_arguments_and_writes_nothing(conversions, name, args, watched):
    before = [array.copy() for array in watched]
    with pytest.raises(ValueError):
        getattr(conversions, name)(*args)
    for array, original in zip(watched, before):
        np.testing.assert_array_equal(array, original)


# ==============================================================================================
# tt_hal.target.conversions.kernel: which implementation, with and without the extension
# ==============================================================================================

@pytest.fixture
def without_native(monkeypatch):
    """As if tt_hal.target._conversions had not been built."""
    monkeypatch.setattr(codec, "native_conversions",
                        lambda: (None, "tt_hal.target._conversions was not built: no C++ compiler (simulated)"))
    monkeypatch.delenv("TT_HAL_CONVERSIONS", raising=False)


@pytest.mark.parametrize("name", codec.KERNEL_NAMES)
def test_kernel_native_requested_but_missing_is_unavailable(without_native, monkeypatch, name):
    with pytest.raises(HalError) as error:
        codec.kernel(name, "native")
    assert error.value.code is StatusCode.UNAVAILABLE
    assert "no C++ compiler (simulated)" in str(error.value)
    monkeypatch.setenv("TT_HAL_CONVERSIONS", "native")
    with pytest.raises(HalError) as error:
        codec.kernel(name)
    assert error.value.code is StatusCode.UNAVAILABLE


@pytest.mark.parametrize("name", codec.KERNEL_NAMES)
def test_kernel_falls_back_to_numba_when_native_missing(without_native, name):
    assert codec.kernel(name) is NUMBA[name]
    assert codec.kernel(name, None) is NUMBA[name]
    assert codec.kernel(name, "numba") is NUMBA[name]


def test_codec_without_native_runs_on_numba_unless_native_is_asked_for(without_native):
    x = fill_bits("normal", 1, [0x7FC00000], 40 * 50).reshape(40, 50).view(np.float32)
    spec = make_spec(x.shape, DataFormat.bfloat16, Layout.TILE)
    data = codec.encode_tensor(x, spec)
    assert_same(data, codec.encode_tensor(x, spec, implementation="numba"))
    assert_same(unsigned_view(codec.decode_tensor(data, spec, True)),
                unsigned_view(codec.decode_tensor(data, spec, True, implementation="numba")))
    for call in (lambda: codec.encode_tensor(x, spec, implementation="native"),
                 lambda: codec.decode_tensor(data, spec, True, implementation="native")):
        with pytest.raises(HalError) as error:
            call()
        assert error.value.code is StatusCode.UNAVAILABLE


@pytest.mark.parametrize("name", codec.KERNEL_NAMES)
def test_kernel_picks_the_implementation_asked_for(conversions, monkeypatch, name):
    monkeypatch.delenv("TT_HAL_CONVERSIONS", raising=False)
    assert codec.kernel(name, "native") is getattr(conversions, name)
    assert codec.kernel(name, "numba") is NUMBA[name]
    fastest = codec.kernel(name)
    assert fastest is (getattr(conversions, name) if codec.FASTEST[name] == codec.NATIVE else NUMBA[name])
    monkeypatch.setenv("TT_HAL_CONVERSIONS", "NATIVE")
    assert codec.kernel(name) is getattr(conversions, name)
    assert codec.kernel(name, "numba") is NUMBA[name]  # the argument wins over the environment
    monkeypatch.setenv("TT_HAL_CONVERSIONS", "numba")
    assert codec.kernel(name) is NUMBA[name]
    assert codec.kernel(name, "native") is getattr(conversions, name)


def test_kernel_rejects_unknown_implementations(monkeypatch):
    monkeypatch.delenv("TT_HAL_CONVERSIONS", raising=False)
    with pytest.raises(HalError) as error:
        codec.kernel("tilize", "cuda")
    assert error.value.code is StatusCode.INVALID_ARGUMENT and isinstance(error.value, ValueError)
    monkeypatch.setenv("TT_HAL_CONVERSIONS", "fortran")
    with pytest.raises(ValueError):
        codec.kernel("bf16_encode")
