"""Sizes every layer computes the same way: a Tensix tile's geometry (32 x 32 values,
stored as four 16 x 16 faces; ../shared/FACTS.md 'Tiles and layouts'), rounding up and
the tiles of a tile tensor.

`ceil_div` and `round_up` are plain functions that numba code can call too
(register_jitable), so the arithmetic is written once for host and kernels."""

from __future__ import annotations

import math

from numba.extending import register_jitable

TILE = 32  # a tile's height and width
FACE = 16  # a face's height and width
TILE_ELEMENTS = TILE * TILE
FACE_ELEMENTS = FACE * FACE


@register_jitable(inline="always")  # a call costs more than its body in a NoC instruction
def ceil_div(value, divisor):
    """value / divisor rounded up, for non-negative value and positive divisor."""
    return -(-value // divisor)


@register_jitable
def round_up(value, multiple):
    """The smallest multiple of `multiple` at or above `value`."""
    return ceil_div(value, multiple) * multiple


def tile_count(shape) -> int:
    """The tiles of a tile tensor of `shape` (rank 2 or more): its (batch x padded rows,
    padded columns) matrix's."""
    return math.prod(shape[:-2]) * ceil_div(shape[-2], TILE) * ceil_div(shape[-1], TILE)
