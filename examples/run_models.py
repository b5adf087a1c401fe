"""The main job: every model in examples/models (hand-written StableHLO and linalg, and
models exported from PyTorch with iree-turbine and from JAX in examples/models/exports)
compiled by IREE into a .vmfb for the tenstorrent device, run by iree.runtime's VM on
the simulated chip, and checked against IREE's own llvm-cpu result on iree.runtime's
local-task driver, call by call.

    python examples/run_models.py [path/to/model.mlir ...]

Prints one row per model: compile time, the time of a call (after a first one),
llvm-cpu's time for it, the largest error over every output of every call and the
smallest PCC. A model whose dispatches use what the compiler does not lower yet is
listed with the reason (UNIMPLEMENTED; docs/compiler.md). Exits 1 if any model
computes beyond the tolerance of the format the device computes in
(tt_hal/compiler/tolerance.py) or fails otherwise.
"""

import argparse
import importlib.util
import pathlib
import sys
import time

from tqdm import tqdm

from hal import HalError, StatusCode
from tt_hal import compiler, runtime
from tt_hal.compiler import reference, tolerance
from tt_hal.compiler.dispatch import FORMAT

MODELS = pathlib.Path(__file__).resolve().parent / "models"
EXPORTS = MODELS / "exports"


def exported_calls() -> dict:
    spec = importlib.util.spec_from_file_location("calls", EXPORTS / "calls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CALLS


def calls_of(path: pathlib.Path, text: str, exported: dict) -> list:
    """[(function, inputs)]: an export's checked calls, else one call of main on random inputs."""
    if path.stem in exported and path.resolve().parent == EXPORTS:  # a relative path names it too
        return exported[path.stem]
    signature, _ = reference.function_signatures(text)["main"]
    return [("main", reference.random_inputs(signature, seed=0))]


def llvm_cpu(text: str, calls) -> tuple[list, float]:
    """The calls' results on local-task, in order, in one context (globals persist), and
    the time of the last call repeated."""
    module = reference.load_module(text)
    results = [reference.host_results(module[name](*args)) for name, args in calls]
    return results, timed(lambda: reference.host_results(module[calls[-1][0]](*calls[-1][1])))


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run_model(path: pathlib.Path, exported: dict) -> tuple[str, bool]:
    """(the table row, whether the model passed or was not lowered)."""
    text = path.read_text()
    calls = calls_of(path, text, exported)
    name = path.relative_to(MODELS) if path.is_relative_to(MODELS) else path
    start = time.perf_counter()
    try:
        vmfb = compiler.compile_vmfb(path)
    except HalError as error:
        if error.code != StatusCode.UNIMPLEMENTED:
            return f"| {name} | does not compile: {error.message.splitlines()[0]} | | | | | FAILED |", False
        return f"| {name} | not lowered yet: {error.message.splitlines()[0]} | | | | | not lowered |", True
    compile_s = time.perf_counter() - start
    references, cpu_s = llvm_cpu(text, calls)
    module = runtime.load_vm_flatbuffer(vmfb, driver="tenstorrent")
    outputs = [reference.host_results(module[function](*args)) for function, args in calls]
    last_function, last_args = calls[-1]
    run_s = timed(lambda: module[last_function](*last_args))  # numba has compiled the kernels by now
    pairs = [(o, r) for out, ref in zip(outputs, references) for o, r in zip(out, ref, strict=True)]
    error = max(tolerance.max_error(o, r) for o, r in pairs)
    correlation = min(tolerance.pcc(o, r) for o, r in pairs)
    ok = error <= tolerance.TOLERANCE[FORMAT.name]
    return (f"| {name} | {compile_s * 1e3:.0f} ms | {run_s * 1e3:.1f} ms | {cpu_s * 1e3:.2f} ms | {error:.4f} | "
            f"{correlation:.6f} | {'ok' if ok else 'BEYOND TOLERANCE'} |"), ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=pathlib.Path,
                        default=sorted(MODELS.glob("*.mlir")) + sorted(EXPORTS.glob("*.mlir")))
    args = parser.parse_args()
    exported = exported_calls()
    limit = tolerance.TOLERANCE[FORMAT.name]
    print(f"device: tenstorrent (simulated unless a card is present); computing in {FORMAT.name}; tolerance "
          f"{limit:.4f} (max abs error / max |ref|, every output of every call)\n")
    print("| model | compile | run (a later call) | llvm-cpu run | max error | PCC | |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    # The bar shows only on a terminal (disable=None), so logs and CI output stay plain.
    for path in tqdm(args.models, desc="models", unit="model", file=sys.stderr, disable=None, leave=False):
        row, ok = run_model(path, exported)
        tqdm.write(row)
        rows.append((row, ok))
    ran = sum(row.endswith("| ok |") for row, _ in rows)
    skipped = sum(row.endswith("| not lowered |") for row, _ in rows)
    print(f"\n{ran} of {len(rows)} models ran within the tolerance; {skipped} use what the compiler does not "
          f"lower yet (docs/compiler.md)")
    return 0 if all(ok for _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
