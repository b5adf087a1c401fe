"""Compute instructions (sim/compute.py) against the enums of their operands
(tt_hal.target.isa): the decoding covers every member."""

from __future__ import annotations

from tt_hal.sim import compute
from tt_hal.target.isa import Broadcast, ReduceKind


def test_reduce_kinds_decode_to_their_pool_and_dimension():
    for kind in ReduceKind:
        pool, dim = kind.name.split("_")
        assert (kind >> compute.DIM_BITS == compute.POOL_MAX) == (pool == "MAX")
        decoded = {compute.REDUCE_ROW: "ROW", compute.REDUCE_COL: "COL"}.get(kind & compute.DIM_MASK, "SCALAR")
        assert decoded == dim, kind


def test_broadcasts_are_those_compute_implements():
    """compute handles NONE, ROW and COL by name and SCALAR as the remaining case."""
    assert {b.name for b in Broadcast} == {"NONE", "ROW", "COL", "SCALAR"}
