"""Every benchmark suite in one run, side by side: one markdown table and one JSON file.

    python bench/run_all.py [--quick] [--runs N] [--only queue,dispatch,...] [--markdown out.md] [--json out.json]
        [--ttlang-site DIR]

Each suite is a bench/bench_<name>.py script whose collect(runs, quick) returns common rows
(bench/report.py): a tt-hal time, its baseline timed in the same run (numpy, iree.runtime
local-task, or numba for the native conversions) and their ratio. Suites run in turn in this
process. One that raises is reported as failed with its reason and makes the exit code 1, but
the others still run; a missing optional peer (tt-lang-sim) is a row saying so, not a failure.
--quick uses each suite's smoke-test sizes and 2 runs.

`tt-hal bench` calls main(argv, prog) after putting this directory on sys.path.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import blas  # noqa: F401  (bench/blas.py: before any suite imports numpy)
from report import Row
from timing import fmt
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
RUNS, QUICK_RUNS = 5, 2
PACKAGES = ("numpy", "numba", "ml_dtypes", "iree-base-runtime", "iree-base-compiler", "tt-lang-sim")


def _lazy(module: str) -> Callable[[int, bool], list[Row]]:
    """The suite's collect(), imported when it runs: a suite that cannot import fails alone."""
    return lambda runs, quick: importlib.import_module(module).collect(runs, quick)


# Fast suites first, so that a slow one failing late still leaves most of the table.
SUITES: dict[str, Callable[[int, bool], list[Row]]] = {
    name: _lazy(f"bench_{name}") for name in ("queue", "dispatch", "models", "profiling", "layouts", "conversions",
                                                 "numerics", "tileops", "cold_start", "exports")}


@dataclass
class Suite:
    name: str
    seconds: float
    rows: list[Row] = field(default_factory=list)
    error: str | None = None  # why it failed; None if it ran


def run(names: list[str], runs: int, quick: bool) -> list[Suite]:
    """Runs the named suites in turn; a failure is recorded (traceback on stderr) and the next one runs."""
    suites = []
    with tqdm(names, desc="bench", unit="suite", file=sys.stderr) as progress:
        for name in progress:
            progress.set_postfix_str(name)
            start = time.perf_counter()
            try:
                rows, error = SUITES[name](runs, quick), None
            except (Exception, SystemExit) as e:  # noqa: BLE001 - SystemExit: a bench check that failed
                rows, error = [], f"{type(e).__name__}: {e}"
                progress.write(f"suite {name} failed:\n{traceback.format_exc()}", file=sys.stderr)
            suites.append(Suite(name, time.perf_counter() - start, rows, error))
    return suites


def machine() -> dict:
    """Facts that the times depend on."""
    model = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    facts = {"date": datetime.now().astimezone().isoformat(timespec="seconds"), "commit": commit(),
             "cpus": os.cpu_count(), "cpu": model or platform.machine(), "python": platform.python_version()}
    for package in PACKAGES:
        try:
            facts[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            facts[package] = "not installed"
    return facts


def commit() -> str:
    """The checkout's commit, and whether the tree had local changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD")
        return head + (" + local changes" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_row(suite: str, row: Row) -> str:
    if row.time is None:
        cells = [suite, row.case, row.size, "", "", "", "", "", row.note]
    else:
        case = row.case if row.timed == "tt-hal" else f"{row.case} ({row.timed})"
        baseline = f"{fmt(row.baseline_time)} ({row.baseline})" if row.baseline_time else ""
        ratio = f"{row.ratio:.3g}x" if row.ratio else ""
        per_unit = f"{fmt(row.per_unit)}/{row.unit}" if row.unit else ""
        cells = [suite, case, row.size, fmt(row.time), baseline, ratio, per_unit, row.verdict(), row.note]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def markdown(suites: list[Suite], facts: dict, runs: int, command: str) -> str:
    """The generated document: how it was made, then one table of every suite's rows."""
    versions = ", ".join(f"{package} {facts[package]}" for package in PACKAGES)
    lines = [
        "# Performance",
        "",
        f"Generated by `{command}` on {facts['date']} (commit {facts['commit']}); do not edit, regenerate. "
        f"Machine: {facts['cpus']} CPUs ({facts['cpu']}), Python {facts['python']}, {versions}.",
        "",
        f"Times are per call, each the median of {runs} runs; within a suite, runs alternate over its cases so "
        "that machine noise hits all alike. The tt-hal column times tt-hal, or what the case names in parentheses "
        "(numpy reference variants; the native C++ conversions, against numba). ratio = time / baseline time "
        "(below 1: faster than the baseline); per unit divides a call's time by the elements, MACs or dispatches "
        "it covers; a target is met when the ratio (or per-unit time) is at most its limit.",
        "",
        "| suite | case | size | tt-hal | baseline | ratio | per unit | target | note |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for suite in suites:
        if suite.error is not None:
            lines.append("| " + " | ".join([suite.name, "FAILED", "", "", "", "", "", "", cell(suite.error)]) + " |")
        lines += [table_row(suite.name, row) for row in suite.rows]
    lines += ["", "Wall time: " + ", ".join(f"{suite.name} {suite.seconds:.1f} s" for suite in suites)
              + f"; total {sum(suite.seconds for suite in suites):.1f} s."]
    failed = [suite.name for suite in suites if suite.error is not None]
    if failed:
        lines.append(f"Failed suites: {', '.join(failed)}.")
    return "\n".join(lines) + "\n"


def payload(suites: list[Suite], facts: dict, runs: int, quick: bool, command: str) -> dict:
    return {"command": command, "machine": facts, "runs": runs, "quick": quick,
            "failed": [suite.name for suite in suites if suite.error is not None],
            "suites": [{"name": suite.name, "status": "failed" if suite.error is not None else "ok",
                        "error": suite.error, "seconds": suite.seconds,
                        "rows": [row.to_json() for row in suite.rows]} for suite in suites]}


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Runs the suites and writes the results; 0 if every suite ran, 1 if any failed (argparse
    exits with 2 on bad usage). Output paths are relative to the working directory; nothing
    else depends on it."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"smoke-test sizes and {QUICK_RUNS} runs")
    parser.add_argument("--runs", type=positive, help=f"timed runs per case (default {RUNS}; {QUICK_RUNS} if --quick)")
    parser.add_argument("--only", help=f"comma-separated suites, of: {', '.join(SUITES)}")
    parser.add_argument("--markdown", type=Path, help="also write the markdown document here")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--ttlang-site", help="site-packages of a venv of this Python with tt-lang-sim installed "
                                              "(it pulls torch), for the dispatch suite's side-by-side rows")
    args = parser.parse_args(argv)
    if args.ttlang_site:
        os.environ[importlib.import_module("bench_dispatch").TTLANG_SITE_ENVIRONMENT] = args.ttlang_site
    names = [name.strip() for name in args.only.split(",")] if args.only else list(SUITES)
    unknown = [name for name in names if name not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
    runs = args.runs or (QUICK_RUNS if args.quick else RUNS)
    command = f"{prog or 'python bench/run_all.py'} {shlex.join(argv)}".strip()
    suites = run(names, runs, args.quick)
    facts = machine()
    text = markdown(suites, facts, runs, command)
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(payload(suites, facts, runs, args.quick, command), indent=2) + "\n")
    return 1 if any(suite.error is not None for suite in suites) else 0


if __name__ == "__main__":
    sys.exit(main())
