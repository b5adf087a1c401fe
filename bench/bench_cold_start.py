"""The first run after an install: how long numba compiles the simulator's kernels.

    python bench/bench_cold_start.py [--runs N] [--main-job] [--json out.json]

Each run is a fresh Python process with an empty numba cache (NUMBA_CACHE_DIR in a new
temporary directory), as after `pip install`: it creates the device and runs a first
ops.add and ops.matmul (every kernel the fast numerics dispatch; the exact numerics
compile their own specialisation when first used). Reported, medians over the runs:
the wall time from the first import to the results (target <= 15 s: nearly all of it
is compiling), the seconds numba compiles in the process itself (its top-level compile
events) and the CPU seconds of the process and of the process that compiles the tile
ops meanwhile on a host with a second core (sim/indirect.compile_elsewhere). --main-job also times one cold
run of the README's main command (examples/run_models.py, every model; minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # run as a script: bench/ for report, timing
from report import Row  # noqa: E402  (bench/report.py)
from timing import fmt  # noqa: E402  (bench/timing.py)

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET_SECONDS = 15.0

# Runs in the child: numba's compile events (nested ones inside the top-level ones are
# not counted again), then the work, then one JSON line on stdout.
PROBE = """
import json, resource, sys, time, runpy
from numba.core import event

class Compiles(event.Listener):
    depth, seconds, functions = 0, 0.0, 0
    def on_start(self, ev):
        if self.depth == 0:
            self.started = time.perf_counter()
        self.depth += 1
        self.functions += 1
    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started

compiles = Compiles()
event.register("numba:compile", compiles)
start = time.perf_counter()
if sys.argv[1] == "main-job":
    sys.argv = sys.argv[2:]
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exit:
        if exit.code:
            raise
else:
    import numpy as np
    import hal
    from tt_hal import ops
    device = hal.create_device("tenstorrent")
    a = device.to_device(np.ones((64, 64), np.float32), "bfloat16", "tile")
    ops.add(a, a).to_host(np.float32)
    ops.matmul(a, a).to_host(np.float32)
usage = resource.getrusage(resource.RUSAGE_SELF)
helpers = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"compile_s": compiles.seconds, "functions": compiles.functions,
                  "cpu_s": usage.ru_utime + usage.ru_stime, "helper_cpu_s": helpers.ru_utime + helpers.ru_stime,
                  "wall_s": time.perf_counter() - start}))
"""


def cold_run(kind: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="tt-hal-cold-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "TT_HAL_QUIET": "1"}
        command = [sys.executable, "-c", PROBE, kind, str(ROOT / "examples" / "run_models.py")]
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"cold run ({kind}) failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py: the first dispatch, at most 3 cold runs (each ~25 s)."""
    measured = [cold_run("first-dispatch") for _ in range(min(runs, 3))]
    median = {key: statistics.median(run[key] for run in measured)
              for key in ("compile_s", "cpu_s", "helper_cpu_s", "wall_s")}
    return [Row("first ops.add + ops.matmul after an install (numba compiles)", time=median["wall_s"], per=1,
                unit="run", target=("per", TARGET_SECONDS),
                note=f"{len(measured)} fresh processes, empty numba cache: wall from import to results; "
                     f"{measured[0]['functions']} functions compiled in the process, {median['compile_s']:.1f} s; "
                     f"CPU {median['cpu_s']:.1f} s + {median['helper_cpu_s']:.1f} s in the compile helper")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--main-job", action="store_true")
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = collect(args.runs)
    if args.main_job:
        run = cold_run("main-job")
        rows.append(Row("numba compile, main job (examples/run_models.py)", time=run["compile_s"], per=1,
                        unit="run", target=("per", TARGET_SECONDS),
                        note=f"{run['functions']} functions compiled in the process; CPU {run['cpu_s']:.0f} s + "
                             f"{run['helper_cpu_s']:.0f} s in children, wall {run['wall_s']:.0f} s"))
    print(f"cpu_count: {os.cpu_count()}, python: {sys.version.split()[0]}\n")
    print("| case | time | target | note |\n|---|---:|---|---|")
    for row in rows:
        print(f"| {row.case} | {fmt(row.time)} | {row.verdict()} | {row.note} |")
    print(f"\nwall time {time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps([row.to_json() for row in rows], indent=2) + "\n")


if __name__ == "__main__":
    main()
