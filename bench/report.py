"""Benchmark results as data: one Row per measurement, shared by the bench scripts and
bench/run_all.py, so that ratios and target verdicts are computed in one place."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from timing import fmt


@dataclass
class Row:
    """One timed case next to its baseline, timed in the same run."""

    case: str
    size: str = ""
    time: float | None = None  # median seconds per call; None: a row that only says why it is missing
    baseline: str = ""  # what it is compared with: "numpy", "iree local-task", "numba", ...
    baseline_time: float | None = None
    per: int = 1  # units of work in one call, for the per-unit time
    unit: str = ""
    target: tuple[str, float] | None = None  # ("ratio", max) or ("per", max seconds per unit)
    timed: str = "tt-hal"  # whose time `time` is: reference rows time a numpy variant
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """time / baseline time: below 1, the timed case is the faster."""
        if self.time is None or not self.baseline_time:
            return None
        return self.time / self.baseline_time

    @property
    def per_unit(self) -> float | None:
        return None if self.time is None else self.time / self.per

    def met(self) -> bool | None:
        """Whether the target is met; None without a target or a time."""
        if self.target is None or self.time is None:
            return None
        kind, limit = self.target
        return (self.ratio if kind == "ratio" else self.per_unit) <= limit

    def verdict(self) -> str:
        met = self.met()
        if met is None:
            return ""
        kind, limit = self.target
        return f"{f'<= {limit:g}x' if kind == 'ratio' else f'< {fmt(limit)}'}: {'ok' if met else 'MISSED'}"

    def to_json(self) -> dict:
        return asdict(self) | {"ratio": self.ratio, "per_unit": self.per_unit, "verdict": self.verdict()}
