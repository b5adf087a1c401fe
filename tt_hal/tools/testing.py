"""Closeness checks of device results against numpy references, with tolerances
that follow the device data format (usable with or without pytest).

    from tt_hal.tools.testing import assert_device_close
    assert_device_close(view, reference)                     # tolerance from view's format
    assert_device_close(out, reference, "bfloat16", rtol=0.02)

An element passes when |actual - expected| <= atol + rtol * scale, where the scale
and the default rtol come from the format's rounding step, so that a tensor that
went through the device in that format once passes and a real error does not:
- float32, bfloat16: scale |expected|, rtol one unit in the last place (2^-23,
  2^-7): one rounding in any of the chip's modes (nearest or truncation);
- bfloat8_b, bfloat4_b: 16 values (a face row) share one exponent, so the step is
  relative to the largest of them: scale max |expected| of the element's block,
  rtol one step of the 7- or 3-bit magnitude (2^-6, 2^-2);
- integer formats: exact.
The default atol, float32's smallest normal, admits the packer's flush of denormals.
Results of arithmetic carry more error (accumulation, the FPU's bf16 operands, math
fidelity): pass rtol / atol, or `pcc=` as ttnn tests do.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from hal.buffer import HalBufferView
from tt_hal.target.layout import DataFormat
from tt_hal.target.sizes import TILE, ceil_div

WORST_TILES = 5  # tiles listed in a failure report
_EXAMPLES = 5  # NaN/inf mismatches listed


def default_tolerance(data_format) -> tuple[float, float]:
    """(rtol, atol) for a data format: see the module docstring for the scale rtol applies to."""
    data_format = DataFormat.parse(data_format)
    if data_format.is_integer:
        return 0.0, 0.0
    atol = float(np.finfo(np.float32).tiny)
    if data_format.is_block_float:
        from tt_hal.target.formats import BFP4_MAGNITUDE_BITS, BFP8_MAGNITUDE_BITS

        bits = BFP8_MAGNITUDE_BITS if data_format is DataFormat.bfloat8_b else BFP4_MAGNITUDE_BITS
        return 2.0 ** -(bits - 1), atol  # code m means m / 2^(bits-1) * 2^shared_exponent
    return float(2.0 ** -ml_dtypes.finfo(data_format.host_dtype).nmant), atol


def assert_device_close(actual, expected, data_format=None, *, rtol: float | None = None,
                        atol: float | None = None, pcc: float | None = None) -> None:
    """Raises AssertionError, with a report of where and how much they differ, unless
    `actual` (a numpy array or a hal.HalBufferView, read back with to_host) is within
    the tolerance of `expected` (a numpy reference of the same shape) everywhere, its
    NaNs and infinities are where the reference has them, and, if `pcc` is given, their
    Pearson correlation is at least `pcc`. With `pcc` and neither `rtol` nor `atol`,
    only the correlation (and where NaNs and infinities are) is checked, as ttnn's
    `assert_with_pcc` does; give `rtol`/`atol` too to check both.

    `data_format` (a hal.DataFormat or its name) picks the default tolerance; by
    default the view's format, or the format that holds actual's dtype."""
    __tracebackhide__ = True  # pytest: report the caller's line
    actual, data_format, block_axis = _read(actual, data_format)
    expected = np.asarray(expected)
    header = f"shape {actual.shape}, data format {data_format.name}; actual {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        raise AssertionError(f"shapes differ: actual {actual.shape} ({actual.dtype}), "
                             f"expected {expected.shape} ({expected.dtype})")
    out, ref = actual.astype(np.float64), expected.astype(np.float64)
    special = ~np.isfinite(out) | ~np.isfinite(ref)
    misplaced = special & ~((out == ref) | (np.isnan(out) & np.isnan(ref)))
    if misplaced.any():
        raise AssertionError(_special_report(out, ref, misplaced, header))
    pcc_only = pcc is not None and rtol is None and atol is None
    default_rtol, default_atol = default_tolerance(data_format)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    finite_ref = np.where(special, 0.0, ref)
    scale = np.abs(finite_ref) if block_axis is None else _block_max(np.abs(finite_ref), block_axis)
    error = np.abs(np.where(special, 0.0, out) - finite_ref)
    beyond = np.zeros(error.shape, bool) if pcc_only else error > atol + rtol * scale
    if beyond.any() or pcc is not None:
        from tt_hal.compiler import tolerance  # only now: it imports the IREE compiler

        correlation = tolerance.pcc(out, ref)
        if beyond.any() or (pcc is not None and correlation < pcc):
            criterion = f"PCC >= {pcc} only (no rtol/atol given)" if pcc_only else _criterion(block_axis, rtol, atol)
            raise AssertionError(_report(out, ref, error, beyond, header, criterion, rtol, atol, correlation, pcc,
                                         tolerance.max_error(out, ref)))


def _pcc_text(out, ref, correlation: float) -> str:
    """The correlation, or why there is none: it is undefined for a constant array."""
    if correlation != 1.0 and (np.ptp(out) == 0 or np.ptp(ref) == 0):
        return "undefined (an array is constant)"
    return f"{correlation:.8g}"


def _read(actual, data_format) -> tuple[np.ndarray, DataFormat, int | None]:
    """actual as a host array, its format, and the axis of its block-float blocks (None
    unless a block float: -1 in tiles, -2 when the faces are transposed)."""
    transposed = False
    if isinstance(actual, HalBufferView):
        spec = actual.spec
        transposed = spec is not None and spec.transpose_within_face
        if data_format is None and spec is not None:
            data_format = spec.dtype
        actual = actual.to_host()
    actual = np.asarray(actual)
    data_format = DataFormat.from_dtype(actual.dtype) if data_format is None else DataFormat.parse(data_format)
    block_axis = (-2 if transposed else -1) if data_format.is_block_float else None
    return actual, data_format, block_axis


def _block_max(magnitude: np.ndarray, axis: int) -> np.ndarray:
    """Each element's block maximum: blocks are 16 consecutive values along `axis` (a
    face row, or a face column when transposed), aligned as in the padded tile."""
    from tt_hal.target.formats import ROW

    matrix = np.moveaxis(np.atleast_2d(magnitude), axis, -1)
    length = matrix.shape[-1]
    padded = np.pad(matrix, [(0, 0)] * (matrix.ndim - 1) + [(0, -length % ROW)])
    blocks = padded.reshape(*padded.shape[:-1], -1, ROW).max(axis=-1)
    spread = np.repeat(blocks, ROW, axis=-1)[..., :length]
    return np.moveaxis(spread, -1, axis).reshape(magnitude.shape)


def _criterion(block_axis: int | None, rtol: float, atol: float) -> str:
    if rtol == atol == 0:
        return "exact"
    if block_axis is not None:
        return "|actual - expected| <= atol + rtol * max |expected| of its 16-value block"
    return "|actual - expected| <= atol + rtol * |expected|"


def _index(flat: int, shape) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def _special_report(out, ref, misplaced, header) -> str:
    where = np.flatnonzero(misplaced)
    lines = [f"NaN/inf mismatch in {where.size} of {out.size} elements ({header})"]
    lines += [f"  at {_index(i, out.shape)}: actual {out.flat[i]:.6g}, expected {ref.flat[i]:.6g}"
              for i in where[:_EXAMPLES]]
    return "\n".join(lines)


def _report(out, ref, error, beyond, header, criterion, rtol, atol, correlation, min_pcc, normalized) -> str:
    worst = int(np.argmax(error))
    reference_scale = float(np.abs(ref).max())
    required = "" if min_pcc is None else f" (required >= {min_pcc})"
    lines = [
        f"not close: {criterion}; rtol {rtol:.4g}, atol {atol:.4g}",
        f"  {header}",
        f"  max abs error {error.flat[worst]:.6g} at {_index(worst, out.shape)}: "
        f"actual {out.flat[worst]:.6g}, expected {ref.flat[worst]:.6g}",
        f"  normalized error {normalized:.4g} (max abs error / max |expected| {reference_scale:.4g}) "
        f"vs rtol {rtol:.4g}",
        f"  PCC {_pcc_text(out, ref, correlation)}{required}",
        f"  {int(beyond.sum())} of {out.size} elements ({beyond.mean():.2%}) beyond tolerance",
    ]
    return "\n".join(lines + _worst_tiles(error, beyond, out.shape))


def _worst_tiles(error, beyond, shape) -> list[str]:
    """The 32x32 tiles (of the last two dims) with the largest errors beyond tolerance
    (or the largest errors at all when only the PCC failed), worst first."""
    ranked = np.where(beyond, error, 0.0) if beyond.any() else error
    matrix = np.atleast_2d(ranked)
    *outer, height, width = matrix.shape
    rows, cols = ceil_div(height, TILE), ceil_div(width, TILE)

    def tiled(values):  # (..., H, W) -> (outer, tile rows, tile cols, elements of the tile)
        padded = np.pad(values.reshape(-1, height, width),
                        [(0, 0), (0, rows * TILE - height), (0, cols * TILE - width)])
        return padded.reshape(-1, rows, TILE, cols, TILE).transpose(0, 1, 3, 2, 4).reshape(
            -1, rows, cols, TILE * TILE)

    tiles, counts = tiled(matrix), tiled(np.atleast_2d(beyond)).sum(axis=-1)
    tile_max = tiles.max(axis=-1)
    order = np.argsort(-tile_max, axis=None, kind="stable")
    if beyond.any():
        order = order[counts.flat[order] > 0]
    lines = [f"  worst tiles (32x32 tiles of the last two dims as [..., tile row, tile column]; "
             f"{int((counts > 0).sum())} of {tile_max.size} tiles have errors beyond tolerance):"]
    for flat in order[:WORST_TILES]:
        batch, row, col = np.unravel_index(flat, tile_max.shape)
        within = int(tiles[batch, row, col].argmax())
        r, c = row * TILE + within // TILE, col * TILE + within % TILE
        element = (batch * height + r) * width + c  # flat index, the same in the original shape
        tile = [*(_index(batch, outer) if outer else []), int(row), int(col)]
        lines.append(f"    tile {tile}: max abs error {tile_max[batch, row, col]:.6g} "
                     f"at {_index(element, shape)}, {int(counts[batch, row, col])} beyond tolerance")
    return lines
