"""Host tensors <-> device bytes for a hal.layout.TensorSpec: the simulator's
`encode_tensor` / `decode_tensor` (tilize or not, then the format conversion).

Device bytes are the tensor's pages in page order. TILE: tiles row-major over
the folded matrix. ROW_MAJOR: rows in order (a row split into shard-wide pages
keeps its order), converted element by element.
"""

from __future__ import annotations

import numpy as np

from hal.layout import DataFormat, Layout, TensorSpec
from sim import formats, tiles

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
                  rounding: int = formats.ROUND_NEAREST_EVEN) -> np.ndarray:
    """Device bytes (uint8, spec.size) of `values`: float32 for float formats, the
    format's own integer dtype otherwise, shaped like spec.shape."""
    bits = _bits(values)
    if spec.layout is Layout.ROW_MAJOR:
        if spec.dtype is DataFormat.bfloat16:
            out = np.empty(bits.size, np.uint16)
            formats.bf16_encode(bits.reshape(-1), out, rounding)
            return out.view(np.uint8)
        return bits.reshape(-1).view(np.uint8)
    tensor = bits.reshape(spec.batch, spec.height, spec.width)
    pad = int(_bits(np.asarray(pad_value, values.dtype).reshape(1))[0])
    out = np.empty(spec.size, np.uint8)
    variants = spec.transpose_within_face, spec.transpose_of_faces
    if spec.dtype.is_block_float:
        tiles.run_by_tile_rows(tiles.tilize_block_float, tensor, tensor, out, _MAGNITUDE_BITS[spec.dtype], rounding, pad,
                               *variants)
    else:
        conversion = tiles.BF16 if spec.dtype is DataFormat.bfloat16 else tiles.COPY
        tiles.run_by_tile_rows(tiles.tilize, tensor, tensor, out.view(_tile_dtype(spec)), conversion, rounding, pad,
                               *variants)
    return out


def decode_tensor(data: np.ndarray, spec: TensorSpec, as_float32: bool = False) -> np.ndarray:
    """The tensor held by device bytes `data` (uint8, spec.size), in the format's host
    dtype (bfloat16 stays bfloat16 unless `as_float32`)."""
    host_dtype = np.dtype(np.float32) if as_float32 and not spec.dtype.is_integer else spec.dtype.host_dtype
    widen = spec.dtype is DataFormat.bfloat16 and host_dtype == np.float32
    if spec.layout is Layout.ROW_MAJOR:
        if widen:
            return formats.bfloat16_bits_to_float32(data.view(np.uint16)).reshape(spec.shape)
        return data.view(host_dtype).reshape(spec.shape).copy()
    out = np.empty((spec.batch, spec.height, spec.width), _UNSIGNED[host_dtype.itemsize])
    variants = spec.transpose_within_face, spec.transpose_of_faces
    if spec.dtype.is_block_float:
        tiles.run_by_tile_rows(tiles.untilize_block_float, out, data, out, _MAGNITUDE_BITS[spec.dtype], *variants)
    else:
        conversion = tiles.BF16 if widen else tiles.COPY
        tiles.run_by_tile_rows(tiles.untilize, out, data.view(_tile_dtype(spec)), out, conversion, *variants)
    return out.view(host_dtype).reshape(spec.shape)
