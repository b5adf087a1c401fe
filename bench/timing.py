"""Timing shared by the benchmarks: medians of interleaved runs, and readable units."""

from __future__ import annotations

import statistics
import time

TIMING_SECONDS = 0.1  # a timing repeats a fast case until it takes about this long


def measure(work: dict, runs: int) -> dict[str, float]:
    """Median seconds per call of each case of `work` ({name: function}). Each case was
    called once already (warm-up and check); runs alternate over all cases so that
    machine noise hits all alike."""
    repeats = {}
    for name, function in work.items():
        start = time.perf_counter()
        function()
        repeats[name] = max(1, min(1000, round(TIMING_SECONDS / (time.perf_counter() - start))))
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(runs):
        for name, function in work.items():
            start = time.perf_counter()
            for _ in range(repeats[name]):
                function()
            times[name].append((time.perf_counter() - start) / repeats[name])
    return {name: statistics.median(values) for name, values in times.items()}


def fmt(seconds: float) -> str:
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"
