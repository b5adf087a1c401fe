"""Where a workload's time goes inside the simulator's jitted code: a `perf` profile by symbol.

    python bench/profile_jit.py {add,matmul,tilize,model} [--model NAME] [--size N] [--grid CORES] [--dram]
                                [--seconds 10] [--top 25]

perf cannot name numba's functions by itself (they live in JIT memory, and numba's
NUMBA_ENABLE_PROFILING gives perf no symbols here). This script compiles the simulator
in-process (a fresh NUMBA_CACHE_DIR: functions loaded from the cache have no LLVM module
to read names from), writes /tmp/perf-<pid>.map with the address of every function
linked into the interpreter's round and into the compute instructions it calls by
address (run_round, compute, noc_gather, the numerics kernels, NRT_incref/decref,
...), runs the workload in a loop under `perf record -p`, and prints `perf report
--sort symbol`. Needs Linux `perf` (apt install linux-perf); the
first run compiles for about half a minute. Workloads: `add` (ops.add of --size² bf16,
1024 by default, on --grid cores, one by default, 0 for every worker core; --dram puts
its output in DRAM, else ops' default placement), `matmul` (ops.matmul of --size³,
512 by default, HiFi4), `tilize` (the .vmfb path's MLP, whose weights are tilized every
call), `model` (an export of examples/models/exports, --model NAME). The add 2048² on
the grid that docs/tensix.md profiles: `add --size 2048 --grid 0 --dram`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def workload(kind: str, model: str, size: int | None = None, grid: int = 1, dram: bool = False):
    """A function running one call of the workload."""
    import numpy as np

    import hal
    from tt_hal import compiler, ops, runtime
    if kind in ("add", "matmul"):
        device = hal.create_device("tenstorrent")
        n = size or (1024 if kind == "add" else 512)
        x = device.to_device(np.random.default_rng(0).random((n, n), np.float32), "bfloat16", "tile")
        if kind == "add":
            memory_config = hal.DRAM_MEMORY_CONFIG if dram else None
            return lambda: ops.add(x, x, grid=grid or None, memory_config=memory_config)
        return lambda: ops.matmul(x, x)
    if kind == "tilize":
        sys.path.insert(0, str(ROOT / "bench"))
        import bench_models
        module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(bench_models.mlp_text(64, 512)),
                                            driver="tenstorrent")
        inputs = bench_models.mlp_inputs(64, 512)
        return lambda: module.main(*inputs)
    sys.path.insert(0, str(ROOT / "examples" / "models" / "exports"))
    from calls import CALLS
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(ROOT / "examples" / "models" / "exports"
                                                              / f"{model}.mlir"), driver="tenstorrent")
    function, args = CALLS[model][-1]
    return lambda: module[function](*args)


def write_perf_map() -> Path:
    """/tmp/perf-<pid>.map: each function of the compiled libraries of run_round and of
    the units it calls by address (compute, the SFPU's), sized up to the next."""
    from tt_hal.sim import indirect, interpreter
    addresses = {}
    units = [interpreter.run_round, *indirect.declared_functions()]
    overloads = [overload for unit in units for overload in unit.overloads.values()]
    for overload in overloads:
        library = overload.library
        for function in library._final_module.functions:  # numba keeps no public symbol table
            if not function.is_declaration:
                address = library.get_pointer_to_function(function.name)
                if address:
                    addresses[address] = function.name.split("B")[0] if function.name.startswith("_ZN") \
                        else function.name
    ordered = sorted(addresses.items())
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    with path.open("w") as out:
        for k, (address, name) in enumerate(ordered):
            size = min(ordered[k + 1][0] - address, 1 << 17) if k + 1 < len(ordered) else 1 << 17
            out.write(f"{address:x} {size:x} {name}\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=("add", "matmul", "tilize", "model"))
    parser.add_argument("--model", default="torch_resnet")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--size", type=int, help="N of the add's or matmul's tensors (default 1024, 512)")
    parser.add_argument("--grid", type=int, default=1, help="the add's cores (0: every worker core)")
    parser.add_argument("--dram", action="store_true", help="the add's output in DRAM")
    options = parser.parse_args()
    if "NUMBA_CACHE_DIR" not in os.environ:  # re-run with an empty cache: compiled here, so named
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="tt-hal-profile-")
        os.environ["TT_HAL_COMPILE_ELSEWHERE"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    sys.path.insert(0, str(ROOT))
    run = workload(options.workload, options.model, options.size, options.grid, options.dram)
    run()
    perf_map = write_perf_map()
    data = Path(tempfile.mkdtemp(prefix="tt-hal-perf-")) / "perf.data"
    recorder = subprocess.Popen(["perf", "record", "-F", "2000", "-p", str(os.getpid()), "-o", str(data)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # perf attaches
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < options.seconds:
        run()
        calls += 1
    recorder.send_signal(2)
    recorder.wait(timeout=60)
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "symbol"],
                            capture_output=True, text=True, check=True).stdout
    lines = [line for line in report.splitlines() if line.strip() and not line.startswith("#")]
    print(f"{options.workload}: {calls} calls in {options.seconds:.0f} s; {perf_map}")
    print("\n".join(lines[:options.top]))


if __name__ == "__main__":
    main()
