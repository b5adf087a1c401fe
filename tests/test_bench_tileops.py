"""bench/bench_tileops.py: every tile-op loop runs on the simulated core (a fault would
raise in its warm-up) and is reported against copy_tile, timed in the same run."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # as `tt-hal bench` does

import bench_tileops  # noqa: E402


def test_every_case_runs_and_is_reported_against_copy_tile():
    rows = bench_tileops.collect(1, quick=True)
    assert [row.case for row in rows] == list(bench_tileops.CASES)
    for row in rows:
        assert row.time > 0 and row.baseline == "copy_tile" and row.baseline_time > 0, row
        assert row.per == bench_tileops.QUICK_ITERATIONS and row.unit == "iteration"
    [copy] = [row for row in rows if row.case == "copy_tile"]
    assert copy.ratio == 1.0  # the baseline is the copy_tile row's own time, not a second timing
    assert all(row.baseline_time == copy.time for row in rows)
