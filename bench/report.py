"""Benchmark results as data: one Row per measurement, shared by the bench scripts and
bench/run_all.py, so that ratios and target verdicts are computed in one place."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

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


def suite_main(doc: str, collect: Callable[[int, bool], list[Row]], header: list[str],
               cells: Callable[[Row], list[str]], argv=None) -> int:
    """A suite's own command (`--runs N`, `--quick`, `--json out.json`): collect(runs, quick)'s
    rows as a markdown table of `header` and each row's `cells`, and as JSON."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = collect(2 if args.quick else args.runs, args.quick)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(cells(row)) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps([row.to_json() for row in rows], indent=1))
    return 0
