"""Models from MLIR: tt-hal (compiler.compile_module + hal.load_module on the simulated
chip) vs IREE's llvm-cpu build on iree.runtime local-task, side by side.

    python bench/bench_models.py [--runs N] [--batches 16,64,256] [--hidden 512] [--quick] [--json out.json]

The model is examples/models/mlp.mlir (two layers, relu(relu(x @ w1 + b1) @ w2 + b2), f32)
with its batch and hidden size substituted; batch 64, hidden 512 is the file itself.
- compile: compiler.compile_module(text) (.ttm, bfloat16) vs frontend.compile_vmfb(text);
  both from scratch each time.
- load: hal.load_module(ttm, device) vs a SystemContext + VmModule.copy_buffer of the vmfb.
- run: module.main(*inputs) vs the vmfb's function called with numpy arrays, including the
  result's transfer to host (.to_host()). Inputs are host numpy arrays in both.
The first run of each case is a warm-up, and tt-hal's result is checked against llvm-cpu's
with compiler.tolerance (bfloat16). Runs alternate over all cases so that machine noise hits
all alike; the table gives medians and the ratio tt-hal / llvm-cpu.
Until compiler.compile_module and hal.load_module exist, the tt-hal columns say why they
are missing and only the llvm-cpu half runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hal  # noqa: E402
import compiler  # noqa: E402
import compiler.tolerance  # noqa: E402
from compiler import frontend, reference  # noqa: E402

MLP = ROOT / "examples" / "models" / "mlp.mlir"
TIMING_SECONDS = 0.1  # a timing repeats a fast case until it takes about this long
DATA_FORMAT = "bfloat16"
PHASES = ("compile", "load", "run")


def mlp_text(batch: int, hidden: int) -> str:
    """mlp.mlir with x: batch x hidden, w: hidden x hidden, b: hidden."""
    sizes = {"64x512": f"{batch}x{hidden}", "512x512": f"{hidden}x{hidden}", "512": f"{hidden}"}
    return re.sub(r"tensor<([\dx]+?)xf32>", lambda m: f"tensor<{sizes[m.group(1)]}xf32>", MLP.read_text())


def mlp_inputs(batch: int, hidden: int) -> list[np.ndarray]:
    """Seeded and O(1) throughout, as in tests/test_models.py: x ~ N(0, 1), w ~ U(-1, 1) * sqrt(3 / fan_in)."""
    rng = np.random.default_rng(0)

    def weight():
        return rng.uniform(-1, 1, (hidden, hidden)) * np.sqrt(3 / hidden)

    arrays = [rng.standard_normal((batch, hidden)), weight(), rng.uniform(-1, 1, hidden),
              weight(), rng.uniform(-1, 1, hidden)]
    return [a.astype(np.float32) for a in arrays]


def iree_cases(text: str, inputs: list[np.ndarray]) -> dict:
    function = reference.load(text)  # compiles once (cached) for the load and run cases
    expected = reference.run_llvm_cpu(text, None, inputs)
    return {"compile": lambda: frontend.compile_vmfb(text),
            "load": lambda: reference.load(text),
            "run": lambda: function(*inputs).to_host()}, expected


def tt_hal_cases(text: str, inputs: list[np.ndarray], device, expected) -> tuple[dict, dict]:
    """tt-hal's {phase: case}, and {phase: why it is missing} for the phases whose API is
    missing or failing (a phase needs the ones before it)."""
    cases = {}
    try:
        ttm = compiler.compile_module(text)
        cases["compile"] = lambda: compiler.compile_module(text)
        module = hal.load_module(ttm, device)
        cases["load"] = lambda: hal.load_module(ttm, device)
        compiler.tolerance.check(module.main(*inputs), expected, DATA_FORMAT)
        cases["run"] = lambda: module.main(*inputs)
    except Exception as error:  # noqa: BLE001 - the skeleton reports any failure in the table
        why = f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}"[:120]
        missing = [phase for phase in PHASES if phase not in cases]
        return cases, {phase: why if phase == missing[0] else f"needs {missing[0]}" for phase in missing}
    return cases, {}


def measure(work: dict, runs: int) -> dict[str, float]:
    """Median seconds per call; each case was called once already (warm-up and check)."""
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


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", default="16,64,256")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--quick", action="store_true", help="batch 64 and 2 runs, for smoke tests")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.runs, args.batches = 2, "64"
    batches = [int(b) for b in args.batches.split(",")]
    started = time.perf_counter()
    device = hal.create_device("tenstorrent")
    work, rows, notes = {}, [], {}
    for batch in batches:
        text, inputs = mlp_text(batch, args.hidden), mlp_inputs(batch, args.hidden)
        iree, expected = iree_cases(text, inputs)
        tt, notes[batch] = tt_hal_cases(text, inputs, device, expected)
        for phase in PHASES:
            work[f"iree {phase} {batch}"] = iree[phase]
            if phase in tt:
                work[f"tt {phase} {batch}"] = tt[phase]
            rows.append((phase, batch))
    medians = measure(work, args.runs)
    device.close()

    facts = {"cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
             "device": f"{device.arch.name}, {device.arch.worker_cores} worker cores"}
    print(", ".join(f"{k}: {v}" for k, v in facts.items()))
    print(f"MLP relu(relu(x @ w1 + b1) @ w2 + b2), hidden {args.hidden}, f32 in and out "
          f"(tt-hal computes in {DATA_FORMAT}); median of {args.runs} runs; ratio = tt-hal / llvm-cpu\n")
    print("| phase | batch | tt-hal | IREE llvm-cpu local-task | ratio | note |")
    print("|---|---:|---:|---:|---:|---|")
    for phase, batch in rows:
        tt, iree = medians.get(f"tt {phase} {batch}"), medians[f"iree {phase} {batch}"]
        ratio = f"{tt / iree:.3g}x" if tt is not None else ""
        print(f"| {phase} | {batch} | {fmt(tt)} | {fmt(iree)} | {ratio} | {notes[batch].get(phase, '')} |")
    elapsed = time.perf_counter() - started
    print(f"\nwall time {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "runs": args.runs, "hidden": args.hidden,
                                         "medians": medians, "notes": notes, "wall_seconds": elapsed}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
