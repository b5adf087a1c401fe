"""A/B of two checkouts on exported models: call times in alternating processes, and
whether every output is the same, byte for byte.

    python bench/ab.py --base DIR [--rounds 3] [--calls 20] [--cpu N] [--outputs] MODEL ...

DIR is another checkout of this repository (e.g. `git worktree add /tmp/base main`).
Each round runs one process per side, the base first, then this checkout: each loads its
own side's code (hal, tt_hal and the simulator, `sim/` and `native/` mapped to
tt_hal.sim and tt_hal.native as the install maps them), compiles the models with it,
warms each up with its calls of examples/models/exports/calls.py and times --calls
calls of the last one (the median). Processes are pinned to one host CPU (--cpu, default
the last): the machines we share are noisy, two threads up to 2x between rounds, so
the figures of every round are printed and only a difference seen in each round is
one. With --outputs, each side's first round also keeps the outputs of all the calls
of calls.py, and they are compared byte for byte (a speed change must not change a
result). Exit status 1 when outputs differ, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = "examples/models/exports"
MAPPED = (("tt_hal.sim", "sim"), ("tt_hal.native", "native"))  # pyproject.toml's package-dir


def load_checkout(root: Path) -> None:
    """Imports hal and tt_hal from `root`, its sim/ and native/ as tt_hal.sim and
    tt_hal.native, before anything else imports them."""
    sys.path[:0] = [str(root), str(root / EXPORTS)]
    import tt_hal  # noqa: F401  (root's: sys.path first)
    for name, folder in MAPPED:
        spec = importlib.util.spec_from_file_location(name, root / folder / "__init__.py",
                                                      submodule_search_locations=[str(root / folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    import hal
    for module in (hal, tt_hal, sys.modules["tt_hal.sim"], sys.modules["tt_hal.native"]):
        if root.resolve() not in Path(module.__file__).resolve().parents:  # an install's finder came first
            raise SystemExit(f"ab: {module.__name__} loaded from {module.__file__}, not from {root}")


def child(root: Path, models: list[str], calls: int, outputs: str | None) -> None:
    """One side of a round: {model: median call seconds} as JSON on stdout; with
    `outputs`, every call's outputs saved there (npz)."""
    load_checkout(root)
    from calls import CALLS  # root's

    from tt_hal import compiler, runtime
    medians, kept = {}, {}
    for model in models:
        module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(root / EXPORTS / f"{model}.mlir"),
                                            driver="tenstorrent")
        for k, (function, arguments) in enumerate(CALLS[model]):
            results = module[function](*arguments)
            for j, value in enumerate(results if isinstance(results, (tuple, list)) else [results]):
                kept[f"{model}/{k}/{j}"] = np.asarray(value.to_host() if hasattr(value, "to_host") else value)
        function, arguments = CALLS[model][-1]
        seconds = []
        for _ in range(calls):
            start = time.perf_counter()
            module[function](*arguments)
            seconds.append(time.perf_counter() - start)
        medians[model] = statistics.median(seconds)
    if outputs:
        np.savez(outputs, **kept)
    print(json.dumps(medians))


def differing(base: str, this: str) -> tuple[int, list[str]]:
    """(the outputs compared, those of the two npz files that differ in name, dtype,
    shape or bytes), each array read once."""
    with np.load(base) as a, np.load(this) as b:
        arrays = [{name: file[name] for name in file.files} for file in (a, b)]
    names = sorted(set(arrays[0]) | set(arrays[1]))
    changed = [n for n in names if n not in arrays[0] or n not in arrays[1] or arrays[0][n].dtype != arrays[1][n].dtype
               or arrays[0][n].shape != arrays[1][n].shape or arrays[0][n].tobytes() != arrays[1][n].tobytes()]
    return len(names), changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--base", type=Path, required=True, help="the other checkout's root")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--cpu", type=int, default=None, help="the host CPU both sides run on (default: the last)")
    parser.add_argument("--outputs", action="store_true", help="compare every output of calls.py byte for byte")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child, options.models, options.calls, options.save)
        return 0
    base = options.base.resolve()
    if not (base / "sim" / "__init__.py").is_file() or not (base / EXPORTS).is_dir():
        print(f"ab: {base} is not a checkout of this repository (no sim/ or {EXPORTS}/)", file=sys.stderr)
        return 2
    missing = [m for m in options.models if not (ROOT / EXPORTS / f"{m}.mlir").is_file()]
    if missing:
        print(f"ab: unknown model {', '.join(missing)} (the .mlir files of {EXPORTS})", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    cpu = options.cpu if options.cpu is not None else (cpus[-1] if cpus else None)
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None and hasattr(os, "sched_setaffinity") else None
    sides = {"base": base, "this": ROOT}
    times: dict[str, dict[str, list[float]]] = {side: {m: [] for m in options.models} for side in sides}
    with tempfile.TemporaryDirectory() as folder:
        saved = {side: str(Path(folder) / f"{side}.npz") for side in sides}
        for round_ in range(options.rounds):
            for side, root in sides.items():
                command = [sys.executable, __file__, "--base", str(base), "--child", str(root), "--calls",
                           str(options.calls), *options.models]
                if options.outputs and round_ == 0:
                    command += ["--save", saved[side]]
                result = subprocess.run(command, capture_output=True, text=True, preexec_fn=pin,
                                        env={**os.environ, "TT_HAL_QUIET": "1"}, cwd=root)
                if result.returncode != 0:
                    print(f"ab: the {side} side ({root}) failed:\n{result.stderr[-3000:]}", file=sys.stderr)
                    return 1
                for model, seconds in json.loads(result.stdout.strip().splitlines()[-1]).items():
                    times[side][model].append(seconds)
        print(f"median call (ms) of {options.calls} calls, each round in its own processes, on host CPU {cpu}")
        print(f"{'model':24} {'base, per round':>28} {'this, per round':>28} {'this/base':>9}")
        for model in options.models:
            a, b = times["base"][model], times["this"][model]
            print(f"{model:24} {', '.join(f'{s * 1e3:.2f}' for s in a):>28} "
                  f"{', '.join(f'{s * 1e3:.2f}' for s in b):>28} {statistics.median(b) / statistics.median(a):>9.3f}")
        if options.outputs:
            count, changed = differing(saved["base"], saved["this"])
            print(f"outputs: {count} compared byte for byte, " +
                  (f"{len(changed)} differ: {', '.join(changed)}" if changed else "all identical"))
            return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
