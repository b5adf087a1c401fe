"""Tilize and untilize (numba), fused with the data format conversion.

TILE layout (../shared/FACTS.md 'Tiles and layouts'): a tensor (..., H, W) pads H
and W to multiples of 32, folds the outer dimensions into the height, and is stored
as 32x32 tiles row-major over that (B*Hp, Wp) matrix. A tile is four 16x16 faces
(top-left, top-right, bottom-left, bottom-right), row-major inside a face. The
variants tt-metal's host tilizer offers: `transpose_within_face` stores each face
transposed, `transpose_of_faces` stores the faces in the order TL, BL, TR, BR.

The kernels walk the stored order (tile, face, row of 16, column) and map each
stored position to its source element with `source_position`; a position in the
padding reads the pad value on tilize and is dropped on untilize. The tensor side
is a (B, H, W) array of bit patterns (float32 as uint32), so one kernel serves
every element format, and float32 -> bf16 rounding happens on the way.
"""

from __future__ import annotations

import concurrent.futures
import os

import numba
import numpy as np

from tt_hal.target.formats import bf16_from_f32_bits, bfp_bits, bfp_decode_code, bfp_encode_row
from tt_hal.target.sizes import FACE, FACE_ELEMENTS, TILE, TILE_ELEMENTS, ceil_div, round_up

EXPONENT_BYTES = 64  # block-float tiles start with one shared exponent per face row

# Tensors of at least this many elements are converted by several host threads.
PARALLEL_ELEMENTS = 1 << 20
WORKERS = max(1, min(8, os.cpu_count() or 1))
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="tt-tiles")


# How an element is converted on the way (tensor side -> tile side, and back).
COPY = 0  # same bits
BF16 = 1  # tensor float32 bits <-> tile bf16


def tile_rows(tensor: np.ndarray) -> int:
    """Tile rows of the folded matrix of a (B, H, W) tensor."""
    return tensor.shape[0] * ceil_div(tensor.shape[1], TILE)


def run_by_tile_rows(kernel, tensor: np.ndarray, *args) -> None:
    """kernel(*args, first_row, end_row) over all tile rows of `tensor`, split across
    host threads for large tensors (the kernels release the GIL and write disjoint
    tile rows)."""
    rows = tile_rows(tensor)
    if tensor.size < PARALLEL_ELEMENTS or rows < 2:
        kernel(*args, 0, rows)
        return
    bounds = np.linspace(0, rows, WORKERS + 1).astype(int)
    futures = [_POOL.submit(kernel, *args, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    for future in futures:
        future.result()


@numba.njit(cache=True, nogil=True, inline="always")
def face_row_source(top, left, face, row, within_face, of_faces):
    """Where the 16 values stored in (face, row) of the tile whose top-left element
    is (top, left) come from: (h, w) of the first, and the step (dh, dw) to the next.
    A stored face row is a run of a tensor row (of a column, when transposed within
    the face)."""
    if of_faces and (face == 1 or face == 2):
        face = 3 - face
    h = top + (face >> 1) * FACE
    w = left + (face & 1) * FACE
    if within_face:
        return h, w + row, 1, 0
    return h + row, w, 0, 1


@numba.njit(cache=True, nogil=True)
def gather_edge(tensor, b, h, w, dh, dw, pad, run):
    """gather_run for a run that crosses the tensor's edge: `pad` where it does. Not
    inlined, so that the hot loop stays small enough to vectorize."""
    _, height, width = tensor.shape
    for col in range(FACE):
        run[col] = np.int64(tensor[b, h, w]) if h < height and w < width else pad
        h += dh
        w += dw


@numba.njit(cache=True, nogil=True, inline="always")
def gather_run(tensor, b, h, w, dh, dw, pad, run):
    """The 16 tensor values of one stored face row into `run` (int64)."""
    if dw == 1 and h < tensor.shape[1] and w + FACE <= tensor.shape[2]:
        for col in range(FACE):
            run[col] = tensor[b, h, w + col]
    else:
        gather_edge(tensor, b, h, w, dh, dw, pad, run)


@numba.njit(cache=True, nogil=True)
def scatter_edge(run, tensor, b, h, w, dh, dw):
    """scatter_run for a run that crosses the tensor's edge: the padding is dropped."""
    _, height, width = tensor.shape
    for col in range(FACE):
        if h < height and w < width:
            tensor[b, h, w] = run[col]
        h += dh
        w += dw


@numba.njit(cache=True, nogil=True, inline="always")
def scatter_run(run, tensor, b, h, w, dh, dw):
    """The 16 values of one stored face row from `run` back into the tensor."""
    if dw == 1 and h < tensor.shape[1] and w + FACE <= tensor.shape[2]:
        for col in range(FACE):
            tensor[b, h, w + col] = run[col]
    else:
        scatter_edge(run, tensor, b, h, w, dh, dw)


@numba.njit(cache=True, nogil=True, inline="always")
def convert(value, conversion, rounding):
    return bf16_from_f32_bits(value, rounding) if conversion == BF16 else value


@numba.njit(cache=True, nogil=True)
def tilize(tensor, tiles, conversion, rounding, pad, within_face, of_faces, first_row=0, end_row=-1):
    """tensor (B, H, W) -> tiles (n_tiles * 1024,) in stored order, for tile rows
    [first_row, end_row) of the folded matrix (all by default)."""
    batch, height, width = tensor.shape
    padded_height = round_up(height, TILE)
    end_row = batch * padded_height // TILE if end_row < 0 else end_row
    out = first_row * ceil_div(width, TILE) * TILE_ELEMENTS
    run = np.empty(FACE, np.int64)
    for tile_row in range(first_row, end_row):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(ceil_div(width, TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    if dw == 1 and h < height and w + FACE <= width:  # inside the tensor: the hot path
                        for col in range(FACE):
                            tiles[out + col] = convert(np.int64(tensor[b, h, w + col]), conversion, rounding)
                    else:
                        gather_edge(tensor, b, h, w, dh, dw, pad, run)
                        for col in range(FACE):
                            tiles[out + col] = convert(run[col], conversion, rounding)
                    out += FACE


@numba.njit(cache=True, nogil=True)
def untilize(tiles, tensor, conversion, within_face, of_faces, first_row=0, end_row=-1):
    """tiles (n_tiles * 1024,) in stored order -> tensor (B, H, W), padding dropped,
    for tile rows [first_row, end_row) (all by default)."""
    batch, height, width = tensor.shape
    padded_height = round_up(height, TILE)
    end_row = batch * padded_height // TILE if end_row < 0 else end_row
    at = first_row * ceil_div(width, TILE) * TILE_ELEMENTS
    run = np.empty(FACE, np.int64)
    for tile_row in range(first_row, end_row):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(ceil_div(width, TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    shift = 16 if conversion == BF16 else 0
                    if dw == 1 and h < height and w + FACE <= width:  # inside the tensor: the hot path
                        for col in range(FACE):
                            tensor[b, h, w + col] = np.int64(tiles[at + col]) << shift
                    else:
                        for col in range(FACE):
                            run[col] = np.int64(tiles[at + col]) << shift
                        scatter_edge(run, tensor, b, h, w, dh, dw)
                    at += FACE


@numba.njit(cache=True, nogil=True)
def tilize_block_float(tensor, tiles, magnitude_bits, rounding, pad, within_face, of_faces, first_row=0, end_row=-1):
    """float32 bits (B, H, W) -> block-float tiles (uint8): 64 shared exponents (face
    by face, row by row), then the codes face by face, row-major; tile rows
    [first_row, end_row) (all by default)."""
    batch, height, width = tensor.shape
    padded_height = round_up(height, TILE)
    end_row = batch * padded_height // TILE if end_row < 0 else end_row
    per_byte = 8 // (magnitude_bits + 1)
    tile_bytes = EXPONENT_BYTES + TILE_ELEMENTS // per_byte
    base = first_row * ceil_div(width, TILE) * tile_bytes
    run = np.empty(FACE, np.int64)
    for tile_row in range(first_row, end_row):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(ceil_div(width, TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    gather_run(tensor, b, h, w, dh, dw, pad, run)
                    codes_at = base + EXPONENT_BYTES + (face * FACE_ELEMENTS + row * FACE) // per_byte
                    bfp_encode_row(run, tiles, base + face * FACE + row, codes_at, magnitude_bits, rounding)
            base += tile_bytes


@numba.njit(cache=True, nogil=True)
def untilize_block_float(tiles, tensor, magnitude_bits, within_face, of_faces, first_row=0, end_row=-1):
    """Block-float tiles (uint8) -> float32 bits (B, H, W), padding dropped, for tile
    rows [first_row, end_row) (all by default)."""
    batch, height, width = tensor.shape
    padded_height = round_up(height, TILE)
    end_row = batch * padded_height // TILE if end_row < 0 else end_row
    per_byte = 8 // (magnitude_bits + 1)
    tile_bytes = EXPONENT_BYTES + TILE_ELEMENTS // per_byte
    base = first_row * ceil_div(width, TILE) * tile_bytes
    run = np.empty(FACE, np.int64)
    for tile_row in range(first_row, end_row):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(ceil_div(width, TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    shared = np.int64(tiles[base + face * FACE + row])
                    codes_at = base + EXPONENT_BYTES + (face * FACE_ELEMENTS + row * FACE) // per_byte
                    for col in range(FACE):
                        run[col] = bfp_bits(bfp_decode_code(tiles, codes_at, col, magnitude_bits), shared,
                                            magnitude_bits)
                    scatter_run(run, tensor, b, h, w, dh, dw)
            base += tile_bytes
