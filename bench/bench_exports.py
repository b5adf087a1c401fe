"""The exported models (examples/models/exports: PyTorch through iree-turbine, JAX): a call
of each on the simulated tenstorrent device (tt_hal.compiler's .vmfb, iree.runtime's VM)
beside IREE's llvm-cpu build of it on local-task, and beside tt-hal's staged lowering of
the same model (every binding a dispatch loads tilized and every output untilized by a
stage of its own: the lowering without row tiles, tt_hal.compiler.dispatch's
_row_major_operands and _row_major_outputs off), all in one run.

    python bench/bench_exports.py [--runs N] [--models torch_bert,jax_gpt] [--json out.json]

bench/run_all.py runs it as the suite "exports" (every export; torch_bert and torch_mlp with --quick).

Each model's last checked call (examples/models/exports/calls.py) is timed, with host
numpy inputs and results in all three; tt-hal's result is checked against llvm-cpu's
first (tt_hal.compiler.tolerance). Runs alternate over all cases (bench/timing.py), so
noise hits all alike; the table gives medians and the ratios.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from unittest import mock

import blas  # noqa: F401  (bench/blas.py: before numpy)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from report import Row  # noqa: E402  (bench/report.py)
from timing import fmt, measure  # noqa: E402  (bench/timing.py)

from tt_hal import compiler, runtime  # noqa: E402
from tt_hal.compiler import dispatch, reference, tolerance  # noqa: E402

EXPORTS = ROOT / "examples" / "models" / "exports"


def calls() -> dict:
    spec = importlib.util.spec_from_file_location("calls", EXPORTS / "calls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CALLS


def cases(name: str, checked: list) -> dict:
    """{case: function} of one model: tt-hal, tt-hal staged, llvm-cpu, each a call of its
    last checked call; tt-hal's result checked against llvm-cpu's."""
    text = (EXPORTS / f"{name}.mlir").read_text()
    function, args = checked[-1]
    iree = reference.load_module(text)
    expected = reference.host_results(iree[function](*args))
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(text), driver="tenstorrent")
    tolerance.check(module[function](*args), expected, "float32")
    with mock.patch.object(dispatch, "_row_major_operands", lambda *arguments: {}), \
            mock.patch.object(dispatch, "_row_major_outputs", lambda *arguments: {}):
        staged = runtime.load_vm_flatbuffer(compiler.compile_vmfb(text), driver="tenstorrent")
    return {"tt-hal": lambda: module[function](*args), "staged": lambda: staged[function](*args),
            "llvm-cpu": lambda: reference.host_results(iree[function](*args))}


QUICK_MODELS = ("torch_bert", "torch_mlp")


def measure_all(runs: int, names) -> dict[str, dict[str, float]]:
    """{model: {case: median seconds}}, the cases of each model interleaved."""
    checked = calls()
    return {name: measure(cases(name, checked[name]), runs) for name in names}


def rows(results: dict) -> list[Row]:
    """Two rows a model: tt-hal against llvm-cpu, and against its own staged lowering."""
    out = []
    for name, medians in results.items():
        out.append(Row("call", name, medians["tt-hal"], "iree llvm-cpu local-task", medians["llvm-cpu"],
                       note="an exported model's checked call"))
        out.append(Row("call vs staged lowering", name, medians["tt-hal"], "tt-hal staged lowering", medians["staged"],
                       note="row tiles off: a tilize stage per loaded binding, an untilize stage per output"))
    return out


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py: every export, or with `quick` two of them."""
    return rows(measure_all(runs, QUICK_MODELS if quick else sorted(calls())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--models", help="comma-separated export names (default: every export)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    names = args.models.split(",") if args.models else sorted(calls())
    print("| model | tt-hal | staged lowering | llvm-cpu | tt-hal / llvm-cpu | tt-hal / staged |")
    print("|---|---:|---:|---:|---:|---:|")
    results = {}
    for name in names:
        results.update(measure_all(args.runs, [name]))
        tt, staged, iree = (results[name][case] for case in ("tt-hal", "staged", "llvm-cpu"))
        print(f"| {name} | {fmt(tt)} | {fmt(staged)} | {fmt(iree)} | {tt / iree:.1f}x | {tt / staged:.2f}x |",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
