"""Host tensors <-> device bytes for a tt_hal.target.layout.TensorSpec: the simulator's
`encode_tensor` / `decode_tensor` (tilize or not, then the format conversion).

Device bytes are the tensor's pages in page order. TILE: tiles row-major over
the folded matrix. ROW_MAJOR: rows in order (a row split into shard-wide pages
keeps its order), converted element by element.

The conversion kernels have two byte-identical implementations: numba (tiles.py,
formats.py) and C++ (the extension tt_hal.target._conversions, src/conversions.cpp,
when built). Each conversion uses the faster one (FASTEST);
TT_HAL_CONVERSIONS=numba|native forces one for all.
"""

from __future__ import annotations

import os

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target import extensions, formats, tiles
from tt_hal.target.layout import DataFormat, Layout, TensorSpec

NUMBA, NATIVE = "numba", "native"
KERNEL_NAMES = ("tilize", "untilize", "tilize_block_float", "untilize_block_float", "bf16_encode", "bf16_decode")
# The faster implementation of each kernel, as `python bench/bench_conversions.py`
# measured it on the project's 2-core x86-64 machines (AVX2): C++ wins tilize/untilize
# with bf16 or copy 1.2-2x; numba wins the block floats 1.3-1.5x and the row-major
# bf16 encode 1.5x (its loop vectorizes better than GCC's).
FASTEST = {"tilize": NATIVE, "untilize": NATIVE, "tilize_block_float": NUMBA, "untilize_block_float": NUMBA,
           "bf16_encode": NUMBA, "bf16_decode": NATIVE}


def _numba_kernel(name: str):
    return getattr(formats if name.startswith("bf16") else tiles, name)


def kernel(name: str, implementation: str | None = None):
    """The conversion kernel `name` from `implementation` ('numba', 'native'), or
    from TT_HAL_CONVERSIONS, or the faster one that is available."""
    choice = (implementation or os.environ.get("TT_HAL_CONVERSIONS") or "fastest").lower()
    if choice not in (NUMBA, NATIVE, "fastest"):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"TT_HAL_CONVERSIONS={choice!r}; expected numba, native or fastest")
    if choice == "fastest":
        choice = FASTEST[name]
    if choice == NUMBA:
        return _numba_kernel(name)
    module, reason = native_conversions()
    if module is not None:
        return getattr(module, name)
    if implementation or os.environ.get("TT_HAL_CONVERSIONS"):  # asked for by name: say it is missing
        raise HalError(StatusCode.UNAVAILABLE, f"native conversions requested: {reason}")
    return _numba_kernel(name)


NATIVE_MODULE = "tt_hal.target._conversions"


def native_conversions():
    """(the C++ conversion kernels, None), or (None, why they are missing: said once)."""
    return extensions.load(NATIVE_MODULE, "the numba conversions")

_MAGNITUDE_BITS = {DataFormat.bfloat8_b: formats.BFP8_MAGNITUDE_BITS,
                   DataFormat.bfloat4_b: formats.BFP4_MAGNITUDE_BITS}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _bits(values: np.ndarray) -> np.ndarray:
    """The same bytes as unsigned integers of the same width (float32 -> uint32)."""
    values = np.ascontiguousarray(values)
    return values.view(_UNSIGNED[values.dtype.itemsize])


def _tile_dtype(spec: TensorSpec):
    return np.uint16 if spec.dtype is DataFormat.bfloat16 else _UNSIGNED[spec.dtype.element_size]


def encode_tensor(values: np.ndarray, spec: TensorSpec, pad_value=0,
                  rounding: int = formats.ROUND_NEAREST_EVEN, implementation: str | None = None) -> np.ndarray:
    """Device bytes (uint8, spec.size) of `values`: float32 for float formats, the
    format's own integer dtype otherwise, shaped like spec.shape."""
    bits = _bits(values)
    if spec.layout is Layout.ROW_MAJOR:
        if spec.dtype is DataFormat.bfloat16:
            out = np.empty(bits.size, np.uint16)
            kernel("bf16_encode", implementation)(bits.reshape(-1), out, rounding)
            return out.view(np.uint8)
        return bits.reshape(-1).view(np.uint8)
    tensor = bits.reshape(spec.batch, spec.height, spec.width)
    pad = int(_bits(np.asarray(pad_value, values.dtype).reshape(1))[0])
    out = np.empty(spec.size, np.uint8)
    variants = spec.transpose_within_face, spec.transpose_of_faces
    if spec.dtype.is_block_float:
        tiles.run_by_tile_rows(kernel("tilize_block_float", implementation), tensor, tensor, out,
                               _MAGNITUDE_BITS[spec.dtype], rounding, pad, *variants)
    else:
        conversion = tiles.BF16 if spec.dtype is DataFormat.bfloat16 else tiles.COPY
        tiles.run_by_tile_rows(kernel("tilize", implementation), tensor, tensor, out.view(_tile_dtype(spec)),
                               conversion, rounding, pad, *variants)
    return out


def decode_tensor(data: np.ndarray, spec: TensorSpec, as_float32: bool = False,
                  implementation: str | None = None) -> np.ndarray:
    """The tensor held by device bytes `data` (uint8, spec.size), in the format's host
    dtype (bfloat16 stays bfloat16 unless `as_float32`)."""
    data = np.ascontiguousarray(data)
    host_dtype = np.dtype(np.float32) if as_float32 and not spec.dtype.is_integer else spec.dtype.host_dtype
    widen = spec.dtype is DataFormat.bfloat16 and host_dtype == np.float32
    if spec.layout is Layout.ROW_MAJOR:
        if widen:
            out = np.empty(spec.shape, np.uint32)
            kernel("bf16_decode", implementation)(data.view(np.uint16), out.reshape(-1))
            return out.view(np.float32)
        return data.view(host_dtype).reshape(spec.shape).copy()
    out = np.empty((spec.batch, spec.height, spec.width), _UNSIGNED[host_dtype.itemsize])
    variants = spec.transpose_within_face, spec.transpose_of_faces
    if spec.dtype.is_block_float:
        tiles.run_by_tile_rows(kernel("untilize_block_float", implementation), out, data, out,
                               _MAGNITUDE_BITS[spec.dtype], *variants)
    else:
        conversion = tiles.BF16 if widen else tiles.COPY
        tiles.run_by_tile_rows(kernel("untilize", implementation), out, data.view(_tile_dtype(spec)), out,
                               conversion, *variants)
    return out.view(host_dtype).reshape(spec.shape)
