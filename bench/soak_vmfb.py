"""Soak: many calls of compiled programs through iree.runtime's VM on the tenstorrent
device, watching what must not grow: the process's resident memory, the device's
live bytes (allocated - freed, the allocator's statistics) and the `hal` module's
live handles (objects the VM still references), each sampled after sweeping the
handles the VM dropped (the table also sweeps itself as it grows: between samples it
holds up to twice the live handles, or 256).

    python bench/soak_vmfb.py [--calls 10000] [--every 1000]

Programs: the PyTorch MLP export (examples/models/exports/torch_mlp.mlir: weights in
the module, coarse-fences entry point, one dispatch per layer) and a one-dispatch
elementwise add. Prints one row per `--every` calls; exits 1 if the device's live
bytes or the handles at the end exceed those after the first `--every` calls
(steady state reached), or resident memory grew by more than 10% after it.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tt_hal import compiler, runtime  # noqa: E402

ADD = """func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.add %a, %b : tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}"""


def resident_mib() -> float:
    """The process's peak resident set so far (Linux: KiB), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def live_device_bytes(module) -> int:
    stats = module.device.allocator.statistics
    return stats["device_bytes_allocated"] - stats["device_bytes_freed"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    programs = {
        "torch_mlp": (ROOT / "examples" / "models" / "exports" / "torch_mlp.mlir",
                      [rng.standard_normal((8, 64)).astype(np.float32)]),
        "add": (ADD, list(rng.standard_normal((2, 64, 64)).astype(np.float32))),
    }
    failed = False
    print("| program | calls | resident MiB (peak) | device live bytes | live handles |")
    print("|---|---:|---:|---:|---:|")
    for name, (source, inputs) in programs.items():
        module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(source), driver="tenstorrent")
        handles = module._context.config.hal_state.handles
        steady = None
        for call in range(1, args.calls + 1):
            module.main(*inputs)
            if call % args.every == 0:
                live_handles = handles.sweep()  # as after a sweep: the table also sweeps as it grows
                gc.collect()
                row = (resident_mib(), live_device_bytes(module), live_handles)
                print(f"| {name} | {call} | {row[0]:.0f} | {row[1]:,} | {row[2]} |", flush=True)
                steady = steady or row
        end = row
        if end[1] > steady[1] or end[2] > steady[2] or end[0] > 1.1 * steady[0]:
            print(f"{name}: grew from {steady} to {end} (resident MiB, device bytes, handles)")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
