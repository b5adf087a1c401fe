"""The main job: every model in examples/models (StableHLO, linalg, JAX- and
PyTorch-made MLIR) compiled by IREE into a .vmfb for the tenstorrent device, run by
iree.runtime's VM on the simulated chip, and checked against IREE's own llvm-cpu
result on iree.runtime's local-task driver.

    python examples/run_models.py [models/*.mlir ...]

Prints one row per model (compile and run times, error, PCC) and exits 1 if any
model is beyond the tolerance of the format the device computes in
(tt_hal/compiler/tolerance.py).
"""

import argparse
import pathlib
import sys
import time

from tqdm import tqdm

from tt_hal import compiler, runtime
from tt_hal.compiler import reference, tolerance
from tt_hal.compiler.dispatch import FORMAT

MODELS = pathlib.Path(__file__).resolve().parent / "models"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=sorted(MODELS.glob("**/*.mlir")), type=pathlib.Path)
    args = parser.parse_args()
    limit = tolerance.TOLERANCE[FORMAT.name]
    print(f"device: tenstorrent (simulated unless a card is present); computing in {FORMAT.name}; tolerance "
          f"{limit:.4f} (max abs error / max |ref|)\n")
    print("| model | compile | run (2nd call) | llvm-cpu run | max error | PCC | |")
    print("|---|---|---|---|---|---|---|")
    failures = 0
    # The bar shows only on a terminal (disable=None), so logs and CI output stay plain.
    for path in tqdm(args.models, desc="models", unit="model", file=sys.stderr, disable=None, leave=False):
        text = path.read_text()
        start = time.perf_counter()
        module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(text), driver="tenstorrent")
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
        tqdm.write(f"| {path.relative_to(MODELS) if path.is_relative_to(MODELS) else path} | {compile_s * 1e3:.0f} ms "
                   f"| {run_s * 1e3:.1f} ms | {cpu_s * 1e3:.2f} ms | {error:.4f} | {correlation:.6f} | "
                   f"{'ok' if ok else 'BEYOND TOLERANCE'} |")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
