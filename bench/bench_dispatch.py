"""Kernel dispatches on the simulated chip vs numpy (and tt-lang-sim), side by side.

    python bench/bench_dispatch.py [--runs N] [--quick] [--add-sizes 256,...] [--matmul-sizes 128,...]
        [--grids 1,4,16,64] [--dispatches 200] [--ttlang-site DIR] [--json out.json]

Tensors are bf16 TILE in DRAM interleaved (where the default policy puts large tensors;
for them the placement does not change the times), and one eager case also in the default
placement of a small tensor. Each case's first call warms it up and is checked against numpy.
- add: ops.add of N x N on the 8x8 grid vs numpy float32 `x + y` (the ratio) and
  `np.add(x, y, out=z)`; target at 2048 <= 2x. Growth over --add-sizes and --grids cores.
- matmul N^3, HiFi4 and LoFi vs `x @ y`; targets at 1024 <= 3x and <= 2x. LoFi keeps ~5
  mantissa bits per operand: its error (~2.5e-2 of the norm) is checked at 5e-2, HiFi4's at 2e-2.
- dispatch, targets 30 us for (a) and 10 us for (b): (a) ops.add of 32 x 32 end to end, in DRAM and
  where the allocator places it by default (L1 height-sharded); (b) one command
  buffer of D one-tile dispatches into separate outputs, executed and waited, / D (and recording it, / D).
- tt-lang-sim: the same add and matmul in TT-Lang, one-tile blocks on one node (its simulator
  computes bf16 in float32). It pulls torch: install it into a venv of this Python and pass
  that venv's site-packages as --ttlang-site.
Runs alternate over all cases so that machine noise hits all alike; the table gives medians.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import blas  # noqa: F401  (bench/blas.py: before numpy)
import ml_dtypes
import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row  # bench/report.py
from timing import fmt, measure  # bench/timing.py

import hal
from tt_hal import ops
from tt_hal.kernels import eltwise
from tt_hal.target.ttx import write_executable

DRAM = hal.DRAM_MEMORY_CONFIG
TARGET_ADD, TARGET_MATMUL = 2048, 1024
TARGETS = {"add": 2.0, "HiFi4": 3.0, "LoFi": 2.0, "eager op": 30e-6, "dispatch": 10e-6}  # issue 19
TOLERANCE = {"add": 1e-2, "HiFi4": 2e-2, "LoFi": 5e-2}
ADD_SIZES, MATMUL_SIZES, GRIDS, DISPATCHES = "256,512,1024,2048,4096", "128,256,512,1024", "1,4,16,64", 200
QUICK_ADD_SIZES, QUICK_MATMUL_SIZES, QUICK_DISPATCHES = "256,512", "128,256", 20


@dataclass
class Plan:
    """A row before timing: which cases of the work it reads (resolved by Plan.row)."""

    case: str
    size: str
    key: str | None = None  # the timed case; None for a row that only says why it is missing
    ref: str | None = None  # the numpy case it is compared with
    per: int = 1  # units of work in one call, for the per-unit column
    unit: str = ""
    target: tuple[str, float] | None = None  # ("ratio", max) or ("per", max seconds)
    note: str = ""
    timed: str = "tt-hal"

    def row(self, medians: dict[str, float]) -> Row:
        return Row(self.case, self.size, medians[self.key] if self.key else None, "numpy" if self.ref else "",
                   medians[self.ref] if self.ref else None, self.per, self.unit, self.target, self.timed, self.note)


def uniform(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, n), dtype=np.float32)  # positive: bf16 sums do not cancel


def check(name: str, got: np.ndarray, x: np.ndarray, y: np.ndarray, kind: str) -> None:
    if kind == "add":
        error = float(np.max(np.abs(got - (x + y)) / (x + y)))
    else:
        error = float(np.linalg.norm(got - x @ y) / np.linalg.norm(x @ y))
    if not error < TOLERANCE[kind]:
        raise SystemExit(f"{name}: result differs from numpy: error {error:.3g} >= {TOLERANCE[kind]}")


def hal_case(device, kind: str, n: int, grid=None, memory_config=DRAM):
    """ops.add (kind "add") or ops.matmul (kind: the fidelity) of N x N tensors, placed
    by `memory_config` (None: the allocator's default policy, L1 sharded when it fits)."""
    x, y = uniform(n, 1), uniform(n, 2)
    a, b = (device.to_device(v, "bfloat16", "tile", memory_config) for v in (x, y))
    if kind == "add":
        def run(): return ops.add(a, b, memory_config=memory_config, grid=grid)
    else:
        def run(): return ops.matmul(a, b, math_fidelity=kind, memory_config=DRAM)
    check(f"hal {kind} {n} (grid {grid})", run().to_host(np.float32), x, y, kind)
    return run


def dispatches(device, count: int):
    """(record, execute): one command buffer of `count` one-tile adds into separate outputs."""
    x, y = uniform(32, 5), uniform(32, 6)
    a, b = (device.to_device(v, "bfloat16", "tile", DRAM).get_buffer() for v in (x, y))
    outs = [device.allocator.allocate_tensor((32, 32), "bfloat16", "tile", DRAM) for _ in range(count)]
    bf16 = hal.DataFormat.bfloat16
    executable = device.create_executable_cache().prepare_executable(
        "tenstorrent-ttx-fb", write_executable([eltwise.eltwise_binary("add", bf16, bf16, bf16)]))
    constants = np.array([1, 1], np.uint32).tobytes()  # output tiles, tiles per row

    def record():
        command_buffer = hal.HalCommandBuffer(device)
        for out in outs:
            command_buffer.dispatch(executable, 0, (1, 1, 1), constants, [a, b, out.get_buffer()])
        command_buffer.end()
        return command_buffer

    recorded, semaphore, values = record(), device.create_semaphore(0), itertools.count(1)

    def execute():
        value = next(values)
        device.queue_execute(recorded, [], [(semaphore, value)])
        if not semaphore.wait(value, timeout=ops.HANG_TIMEOUT_NS):
            raise SystemExit(f"{count} dispatches did not finish within {ops.HANG_TIMEOUT_NS // 10**9} s")

    execute()
    for i, out in enumerate(outs):
        check(f"dispatch {i} of {count}", out.to_host(np.float32), x, y, "add")
    return record, execute


TTLANG_SITE_ENVIRONMENT = "TT_HAL_TTLANG_SITE"


def ttlang_cases(site: str | None, add_n: int, matmul_n: int):
    """tt-lang-sim's add and matmul as {name: function}, or the reason they are missing."""
    if site:
        sys.path.append(site)  # after this interpreter's own packages: its numpy stays in charge
    try:
        from ttl.sim.ttlang_sim import setup_simulator_imports
    except ImportError as error:
        return {}, (f"not importable here ({error}); `pip install tt-lang-sim` (1.1.6) works but pulls torch, "
                    "so install it into a venv and pass --ttlang-site")
    setup_simulator_imports()  # `ttl` and `ttnn` become the simulator's
    import torch
    import ttl
    import ttnn

    torch.set_num_threads(1)  # 32 x 32 tile ops: more threads only spin against numpy's and hal's

    def buffers(*tensors):
        return (ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=2) for t in tensors)

    @ttl.operation(grid=(1, 1))
    def add(a, b, y):  # the simulator's static checks want one `tx = ttl.copy(...)` per line
        tiles = [(r, c) for r in range(a.shape[0] // 32) for c in range(a.shape[1] // 32)]
        a_in, b_in, y_out = buffers(a, b, y)

        @ttl.datamovement()
        def read():
            for t in tiles:
                with a_in.reserve() as a_block, b_in.reserve() as b_block:
                    tx_a = ttl.copy(a[t], a_block)
                    tx_b = ttl.copy(b[t], b_block)
                    tx_a.wait()
                    tx_b.wait()

        @ttl.compute()
        def compute():
            for _ in tiles:
                with a_in.wait() as a_block, b_in.wait() as b_block, y_out.reserve() as y_block:
                    y_block.store(a_block + b_block)

        @ttl.datamovement()
        def write():
            for t in tiles:
                with y_out.wait() as y_block:
                    tx = ttl.copy(y_block, y[t])
                    tx.wait()

    @ttl.operation(grid=(1, 1))
    def matmul(a, b, y):
        tiles, k_tiles = [(m, n) for m in range(a.shape[0] // 32) for n in range(b.shape[1] // 32)], a.shape[1] // 32
        a_in, b_in, acc, y_out = buffers(a, b, y, y)

        @ttl.datamovement()
        def read():
            for m, n in tiles:
                for k in range(k_tiles):
                    with a_in.reserve() as a_block, b_in.reserve() as b_block:
                        tx_a = ttl.copy(a[m, k], a_block)
                        tx_b = ttl.copy(b[k, n], b_block)
                        tx_a.wait()
                        tx_b.wait()

        @ttl.compute()
        def compute():
            for _ in tiles:
                with acc.reserve() as block:
                    block.store(ttl.block.fill(0, shape=block.shape))
                for _ in range(k_tiles):
                    with a_in.wait() as a_block, b_in.wait() as b_block, acc.wait() as partial, acc.reserve() as block:
                        block.store(partial + a_block @ b_block)
                with acc.wait() as block, y_out.reserve() as y_block:
                    y_block.store(block)

        @ttl.datamovement()
        def write():
            for t in tiles:
                with y_out.wait() as y_block:
                    tx = ttl.copy(y_block, y[t])
                    tx.wait()

    def case(op, kind, n):
        x, y = uniform(n, 1), uniform(n, 2)
        a, b, out = (ttnn.from_torch(torch.from_numpy(v), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
                     for v in (x, y, np.zeros_like(x)))
        op(a, b, out)
        check(f"tt-lang-sim {kind} {n}", ttnn.to_torch(out).float().numpy(), x, y, kind)
        return lambda: op(a, b, out)

    return {"ttl add": case(add, "add", add_n), "ttl matmul": case(matmul, "HiFi4", matmul_n)}, ""


def measure_all(runs: int, add_sizes: str, matmul_sizes: str, grids: str, count: int,
                ttlang_site: str | None) -> tuple[list[Row], dict[str, float], dict]:
    """(rows, {case: median seconds}, machine facts) for the comma-separated sizes and grids."""
    add_sizes, matmul_sizes = ([int(s) for s in sizes.split(",")] for sizes in (add_sizes, matmul_sizes))
    add_n = TARGET_ADD if TARGET_ADD in add_sizes else max(add_sizes)
    matmul_n = TARGET_MATMUL if TARGET_MATMUL in matmul_sizes else max(matmul_sizes)
    device = hal.create_device("tenstorrent")
    try:
        work, plans = {}, []
        for n in add_sizes:
            x, y, z = uniform(n, 1), uniform(n, 2), np.empty((n, n), np.float32)
            work |= {f"add {n}": hal_case(device, "add", n), f"np add {n}": lambda x=x, y=y: x + y,
                     f"np add into {n}": lambda x=x, y=y, z=z: np.add(x, y, out=z)}
            plans += [Plan("add, 8x8 grid", f"{n}^2", f"add {n}", f"np add {n}", n * n, "elem",
                           ("ratio", TARGETS["add"]) if n == add_n else None),
                      Plan("numpy add into out", f"{n}^2", f"np add into {n}", f"np add {n}", n * n, "elem",
                           timed="numpy")]
        for cores in map(int, grids.split(",")):
            work[f"add {add_n} grid {cores}"] = hal_case(device, "add", add_n, cores)
            plans.append(Plan(f"add, grid={cores}", f"{add_n}^2", f"add {add_n} grid {cores}", f"np add {add_n}",
                              add_n * add_n, "elem"))
        for n in matmul_sizes:
            x, y = uniform(n, 1), uniform(n, 2)
            work[f"np matmul {n}"] = lambda x=x, y=y: x @ y
            for fidelity in ("HiFi4", "LoFi"):
                work[f"matmul {fidelity} {n}"] = hal_case(device, fidelity, n)
                plans.append(Plan(f"matmul {fidelity}", f"{n}^3", f"matmul {fidelity} {n}", f"np matmul {n}", n ** 3,
                                  "MAC", ("ratio", TARGETS[fidelity]) if n == matmul_n else None))
        small, per_op, per_dispatch = uniform(32, 1), ("per", TARGETS["eager op"]), ("per", TARGETS["dispatch"])
        work |= {"add 32": hal_case(device, "add", 32), "add 32 default": hal_case(device, "add", 32, None, None),
                 "np add 32": lambda: small + small}
        work["record"], work["execute"] = dispatches(device, count)
        plans += [Plan("dispatch (a): ops.add end to end", "32^2", "add 32", "np add 32", 1, "op", per_op),
                  Plan("dispatch (a): ops.add, default placement (L1 sharded)", "32^2", "add 32 default", "np add 32",
                       1, "op", per_op),
                  Plan(f"dispatch (b): {count} in one cb, execute+wait", "32^2", "execute", None, count, "dispatch",
                       per_dispatch),
                  Plan(f"dispatch (b): recording {count} dispatches", "32^2", "record", None, count, "dispatch"),
                  Plan("dispatch (c): iree.runtime local-task", "", note="skipped: its Python HalCommandBuffer has "
                       "no dispatch() (only fill and copy); bench_models.py times IREE's compiled calls instead")]
        ttl_work, reason = ttlang_cases(ttlang_site, add_n, matmul_n)
        work |= ttl_work
        if ttl_work:
            plans += [Plan("tt-lang-sim add, 1-tile blocks, 1 node", f"{add_n}^2", "ttl add", f"np add {add_n}",
                           add_n * add_n, "elem", timed="tt-lang-sim"),
                      Plan("tt-lang-sim matmul, 1-tile blocks, 1 node", f"{matmul_n}^3", "ttl matmul",
                           f"np matmul {matmul_n}", matmul_n ** 3, "MAC", timed="tt-lang-sim")]
        else:
            plans.append(Plan("tt-lang-sim", "", note=reason))
        medians = measure(work, runs)
    finally:
        device.close()
    facts = {"cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
             "numba": numba.__version__, "ml_dtypes": ml_dtypes.__version__,
             "tt-lang-sim": importlib.metadata.version("tt-lang-sim") if ttl_work else "not loaded",
             "device": f"{device.arch.name}, {device.arch.worker_cores} worker cores"}
    return [plan.row(medians) for plan in plans], medians, facts


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py: --quick's sizes when `quick`; tt-lang-sim from the
    site-packages in TTLANG_SITE_ENVIRONMENT (run_all's --ttlang-site), or when this
    interpreter imports it (else a row says why it is missing)."""
    site = os.environ.get(TTLANG_SITE_ENVIRONMENT)
    if quick:
        return measure_all(runs, QUICK_ADD_SIZES, QUICK_MATMUL_SIZES, GRIDS, QUICK_DISPATCHES, site)[0]
    return measure_all(runs, ADD_SIZES, MATMUL_SIZES, GRIDS, DISPATCHES, site)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--add-sizes", default=ADD_SIZES)
    parser.add_argument("--matmul-sizes", default=MATMUL_SIZES)
    parser.add_argument("--grids", default=GRIDS)
    parser.add_argument("--dispatches", type=int, default=DISPATCHES)
    parser.add_argument("--ttlang-site", help="site-packages of a venv (this Python) with tt-lang-sim installed")
    parser.add_argument("--quick", action="store_true", help="small sizes and 2 runs, for smoke tests")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.runs, args.add_sizes, args.matmul_sizes, args.dispatches = (2, QUICK_ADD_SIZES, QUICK_MATMUL_SIZES,
                                                                         QUICK_DISPATCHES)
    started = time.perf_counter()
    rows, medians, facts = measure_all(args.runs, args.add_sizes, args.matmul_sizes, args.grids, args.dispatches,
                                       args.ttlang_site)
    print(", ".join(f"{k}: {v}" for k, v in facts.items()))
    print(f"median of {args.runs} runs; ratio = time / numpy float32 time\n")
    print("| case | size | time | numpy | ratio | per unit | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for row in rows:
        if row.time is None:
            print(f"| {row.case} | | | | | | {row.note} |")
            continue
        ratio = row.ratio
        cells = [row.case, row.size, fmt(row.time), fmt(row.baseline_time) if row.baseline_time else "",
                 f"{ratio:.3g}x" if ratio else "", f"{fmt(row.per_unit)}/{row.unit}", row.verdict()]
        print("| " + " | ".join(cells) + " |")
    elapsed = time.perf_counter() - started
    print(f"\nwall time {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "runs": args.runs, "medians": medians,
                                         "wall_seconds": elapsed}, indent=2))
    return 1 if any(row.met() is False for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
