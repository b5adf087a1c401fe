"""The cost of the exact FPU numerics: the same ops on two simulated devices, one with
numerics=exact (the chip's datapath bit for bit), one with numerics=fast (the default),
side by side (medians of interleaved runs, bench/timing.py).

    python bench/bench_numerics.py [--runs N] [--quick] [--json out.json]

Cases: ops.matmul of N x N bf16 tensors (bf16 Dst; LoFi and HiFi4: HiFi4 runs 4 MVMULs
where LoFi runs 1), ops.mul / ops.add and ops.sum (rows, HiFi4) / ops.max (columns) of
N x N bf16 tensors, on one core so that the time is the FPU's and not the host threads'.
--quick: N = 128 and 2 runs; else N = 256.
Agreement with the chip (not time) is bench/fpu_agreement.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row, suite_main  # noqa: E402  (bench/report.py)
from timing import fmt, measure  # noqa: E402  (bench/timing.py)

import hal  # noqa: E402
from tt_hal import ops  # noqa: E402

MODES = ("fast", "exact")


def cases(devices: dict, n: int) -> dict[str, dict]:
    """{case: {mode: function}}."""
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    views = {m: (d.to_device(a, "bfloat16", "tile"), d.to_device(b, "bfloat16", "tile")) for m, d in devices.items()}
    work = {}
    for fidelity in ("LoFi", "HiFi4"):
        work[f"matmul {fidelity}"] = {m: (lambda va=va, vb=vb, f=fidelity: ops.matmul(va, vb, math_fidelity=f,
                                                                                     grid=1).to_host())
                                      for m, (va, vb) in views.items()}
    work["mul HiFi4"] = {m: (lambda va=va, vb=vb: ops.mul(va, vb, grid=1).to_host()) for m, (va, vb) in views.items()}
    work["add"] = {m: (lambda va=va, vb=vb: ops.add(va, vb, grid=1).to_host()) for m, (va, vb) in views.items()}
    work["sum rows"] = {m: (lambda va=va: ops.sum(va, -1, grid=1).to_host()) for m, (va, _) in views.items()}
    work["max columns"] = {m: (lambda va=va: ops.max(va, -2, grid=1).to_host()) for m, (va, _) in views.items()}
    return work


def collect(runs: int, quick: bool) -> list[Row]:
    n = 128 if quick else 256
    devices = {m: hal.create_device(f"tenstorrent://mock?numerics={m}") for m in MODES}
    rows = []
    for case, by_mode in cases(devices, n).items():
        for function in by_mode.values():
            function()  # warm-up: numba compiles
        times = measure({m: by_mode[m] for m in MODES}, runs)
        rows.append(Row(case=f"{case} exact numerics", size=f"{n}x{n}", time=times["exact"],
                        baseline="fast numerics", baseline_time=times["fast"], note="one core"))
    for device in devices.values():
        device.close()
    return rows


def main(argv=None) -> int:
    return suite_main(__doc__, collect, ["case", "size", "exact", "fast", "exact / fast"],
                      lambda row: [row.case, row.size, fmt(row.time), fmt(row.baseline_time), f"{row.ratio:.1f}x"],
                      argv)


if __name__ == "__main__":
    raise SystemExit(main())
