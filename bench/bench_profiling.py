"""What profiling costs: a compiled model's call with the device profiling (trace
recorder on: submissions, queue commands, per-core workgroups, semaphores, the peak
memory map) against the same call without, side by side on one device.

    python bench/bench_profiling.py [--quick] [--runs N]     (bench/run_all.py --only profiling)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row  # noqa: E402
from timing import measure  # noqa: E402

import hal  # noqa: E402
from tt_hal import compiler, runtime  # noqa: E402
from tt_hal.compiler.reference import random_inputs  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"
CASES = ("mlp", "attention")


def collect(runs: int, quick: bool = False) -> list[Row]:
    device = hal.create_device("tenstorrent")
    rows = []
    for name in CASES[:1] if quick else CASES:
        function = runtime.load_vm_flatbuffer(compiler.compile_vmfb(MODELS / f"{name}.mlir"), device=device).main
        inputs = random_inputs(function.inputs, seed=0)

        def profiled(function=function, inputs=inputs):
            device.begin_profiling()
            function(*inputs)
            device.end_profiling()

        profiled()  # warm-up: numba paths, and the trace's size
        events = sum(e["ph"] != "M" for e in device.profiling_trace()["traceEvents"])
        times = measure({"on": profiled, "off": lambda function=function, inputs=inputs: function(*inputs)}, runs)
        rows.append(Row(f"{name} call, profiling on", "", times["on"], "profiling off", times["off"],
                        note=f"{events} trace events per call"))
    device.close()
    return rows


if __name__ == "__main__":
    import run_all
    sys.exit(run_all.main(["--only", "profiling", *sys.argv[1:]], prog="python bench/bench_profiling.py"))
