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

import numba
import numpy as np

from sim.formats import ROW, bf16_from_f32_bits, bfp_bits, bfp_decode_code, bfp_encode_row

TILE = 32
FACE = 16
TILE_ELEMENTS = TILE * TILE
FACE_ELEMENTS = FACE * FACE
EXPONENT_BYTES = 64  # block-float tiles start with one shared exponent per face row

# How an element is converted on the way (tensor side -> tile side, and back).
COPY = 0  # same bits
BF16 = 1  # tensor float32 bits <-> tile bf16


def padded(extent: int) -> int:
    return -(-extent // TILE) * TILE


def tile_count(batch: int, height: int, width: int) -> int:
    return batch * (padded(height) // TILE) * (padded(width) // TILE)


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
def tilize(tensor, tiles, conversion, rounding, pad, within_face, of_faces):
    """tensor (B, H, W) -> tiles (n_tiles * 1024,) in stored order."""
    batch, height, width = tensor.shape
    padded_height = -(-height // TILE) * TILE
    out = 0
    for tile_row in range(batch * padded_height // TILE):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(-(-width // TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    if dw == 1 and h < height and w + FACE <= width:  # a whole run of a row: the fast path
                        line = tensor[b, h]
                        if conversion == BF16:
                            for col in range(FACE):
                                tiles[out + col] = bf16_from_f32_bits(np.int64(line[w + col]), rounding)
                        else:
                            for col in range(FACE):
                                tiles[out + col] = line[w + col]
                    else:
                        for col in range(FACE):
                            value = np.int64(tensor[b, h, w]) if h < height and w < width else pad
                            if conversion == BF16:
                                value = bf16_from_f32_bits(value, rounding)
                            tiles[out + col] = value
                            h += dh
                            w += dw
                    out += FACE


@numba.njit(cache=True, nogil=True)
def untilize(tiles, tensor, conversion, within_face, of_faces):
    """tiles (n_tiles * 1024,) in stored order -> tensor (B, H, W); padding dropped."""
    batch, height, width = tensor.shape
    padded_height = -(-height // TILE) * TILE
    at = 0
    for tile_row in range(batch * padded_height // TILE):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(-(-width // TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    if dw == 1 and h < height and w + FACE <= width:
                        line = tensor[b, h]
                        if conversion == BF16:
                            for col in range(FACE):
                                line[w + col] = np.int64(tiles[at + col]) << 16
                        else:
                            for col in range(FACE):
                                line[w + col] = tiles[at + col]
                    else:
                        for col in range(FACE):
                            if h < height and w < width:
                                value = np.int64(tiles[at + col])
                                tensor[b, h, w] = value << 16 if conversion == BF16 else value
                            h += dh
                            w += dw
                    at += FACE


@numba.njit(cache=True, nogil=True)
def tilize_block_float(tensor, tiles, magnitude_bits, rounding, pad, within_face, of_faces):
    """float32 bits (B, H, W) -> block-float tiles (uint8): 64 shared exponents (face
    by face, row by row), then the codes face by face, row-major."""
    batch, height, width = tensor.shape
    padded_height = -(-height // TILE) * TILE
    per_byte = 8 // (magnitude_bits + 1)
    row_bits = np.empty(ROW, np.int64)
    base = 0
    for tile_row in range(batch * padded_height // TILE):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(-(-width // TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    if dw == 1 and h < height and w + FACE <= width:
                        line = tensor[b, h]
                        for col in range(FACE):
                            row_bits[col] = line[w + col]
                    else:
                        for col in range(FACE):
                            row_bits[col] = np.int64(tensor[b, h, w]) if h < height and w < width else pad
                            h += dh
                            w += dw
                    codes_at = base + EXPONENT_BYTES + (face * FACE_ELEMENTS + row * FACE) // per_byte
                    bfp_encode_row(row_bits, tiles, base + face * FACE + row, codes_at, magnitude_bits, rounding)
            base += EXPONENT_BYTES + TILE_ELEMENTS // per_byte


@numba.njit(cache=True, nogil=True)
def untilize_block_float(tiles, tensor, magnitude_bits, within_face, of_faces):
    """Block-float tiles (uint8) -> float32 bits (B, H, W); padding dropped."""
    batch, height, width = tensor.shape
    padded_height = -(-height // TILE) * TILE
    per_byte = 8 // (magnitude_bits + 1)
    base = 0
    for tile_row in range(batch * padded_height // TILE):
        b, top = divmod(tile_row * TILE, padded_height)
        for tile_col in range(-(-width // TILE)):
            for face in range(4):
                for row in range(FACE):
                    h, w, dh, dw = face_row_source(top, tile_col * TILE, face, row, within_face, of_faces)
                    shared = np.int64(tiles[base + face * FACE + row])
                    codes_at = base + EXPONENT_BYTES + (face * FACE_ELEMENTS + row * FACE) // per_byte
                    if dw == 1 and h < height and w + FACE <= width:
                        line = tensor[b, h]
                        for col in range(FACE):
                            line[w + col] = bfp_bits(bfp_decode_code(tiles, codes_at, col, magnitude_bits), shared,
                                                     magnitude_bits)
                    else:
                        for col in range(FACE):
                            if h < height and w < width:
                                tensor[b, h, w] = bfp_bits(bfp_decode_code(tiles, codes_at, col, magnitude_bits), shared,
                                                           magnitude_bits)
                            h += dh
                            w += dw
            base += EXPONENT_BYTES + TILE_ELEMENTS // per_byte
