"""The main job: every model in examples/models (MLIR from StableHLO, linalg, JAX)
compiled by the IREE bridge, run on the simulated Tenstorrent device, and checked
against IREE's own llvm-cpu result on iree.runtime's local-task driver.

    python examples/run_models.py [--data-format float32] [models/*.mlir ...]

Prints one row per model (compile and run times, error, PCC) and exits 1 if any
model is beyond its data format's tolerance (tt_hal/compiler/tolerance.py).
"""

import argparse
import pathlib
import sys
import time

from tqdm import tqdm

import hal
from tt_hal import compiler, runtime
from tt_hal.compiler import reference, tolerance

MODELS = pathlib.Path(__file__).resolve().parent / "models"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=sorted(MODELS.glob("*.mlir")), type=pathlib.Path)
    parser.add_argument("--data-format", default="bfloat16", choices=compiler.DATA_FORMATS)
    args = parser.parse_args()
    device = hal.create_device("tenstorrent")
    limit = tolerance.TOLERANCE[args.data_format]
    print(f"device: {device}; data format {args.data_format}; tolerance {limit:.4f} (max abs error / max |ref|)\n")
    print("| model | compile | run (2nd call) | llvm-cpu run | max error | PCC | |")
    print("|---|---|---|---|---|---|---|")
    failures = 0
    # The bar shows only on a terminal (disable=None), so logs and CI output stay plain.
    for path in tqdm(args.models, desc="models", unit="model", file=sys.stderr, disable=None, leave=False):
        text = path.read_text()
        start = time.perf_counter()
        module = runtime.load_module(compiler.compile_module(text, data_format=args.data_format), device)
        compile_s = time.perf_counter() - start
        function = module["main"]
        inputs = reference.random_inputs(function.inputs, seed=0)
        function(*inputs)  # the first call compiles the kernels' numba paths
        start = time.perf_counter()
        outputs = function(*inputs)
        run_s = time.perf_counter() - start
        cpu = reference.load(text, "main")
        cpu(*inputs)
        start = time.perf_counter()
        references = cpu(*inputs)
        references = [r.to_host() for r in (references if isinstance(references, tuple) else (references,))]
        cpu_s = time.perf_counter() - start
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        error = max(tolerance.max_error(o, r) for o, r in zip(outputs, references))
        correlation = min(tolerance.pcc(o, r) for o, r in zip(outputs, references))
        ok = error <= limit
        failures += not ok
        tqdm.write(f"| {path.stem} | {compile_s * 1e3:.0f} ms | {run_s * 1e3:.1f} ms | {cpu_s * 1e3:.2f} ms | "
              f"{error:.4f} | {correlation:.6f} | {'ok' if ok else 'BEYOND TOLERANCE'} |")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
