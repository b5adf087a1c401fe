"""Host layout conversions vs a numpy copy of the same bytes, side by side.

    python bench/bench_layouts.py [--runs N] [--sizes 256,1024,4096] [--json out.json]

For each N x N float32 array, one run times, alternating so that machine noise hits
all alike:
- copy: `x.copy()`, a numpy copy of the same bytes into a new array, as every
  conversion below returns a new array (the bandwidth yardstick);
- copy into: numpy copy into a preallocated array (no page faults), for reference;
- tilize+bf16 / untilize: tt_hal.target.conversions to and from TILE bfloat16 (untilize back to float32);
- bfp8 pack / unpack: tt_hal.target.conversions to and from TILE bfloat8_b (back to float32);
- numpy tilize+bf16: the same result by numpy reshape/transpose + ml_dtypes, for scale;
- to_device / to_host: the whole HAL path (encode + write into DRAM pages, read + decode).
The table gives medians over runs and each one's share of the copy's bandwidth
(copy time / its time; targets at 4096 x 4096: >= 0.5 for tilize+bf16 and untilize,
>= 0.2 for bfp8 pack and unpack).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row  # noqa: E402  (bench/report.py)

import hal  # noqa: E402
from tt_hal.target import conversions as codec  # noqa: E402
from tt_hal.target.layout import DataFormat, Layout, TensorSpec  # noqa: E402
from tt_hal.target.placement import DRAM_MEMORY_CONFIG  # noqa: E402

TARGETS = {"tilize+bf16": 0.5, "untilize": 0.5, "bfp8 pack": 0.2, "bfp8 unpack": 0.2}
TARGET_SIZE = 4096
SIZES, QUICK_SIZES = "256,512,1024,2048,4096,8192", "256,1024"
REFERENCES = {"copy into", "numpy tilize+bf16"}  # numpy's own variants, timed for scale


def numpy_tilize_bf16(x: np.ndarray) -> np.ndarray:
    h, w = x.shape
    tiles = x.reshape(h // 32, 2, 16, w // 32, 2, 16).transpose(0, 3, 1, 4, 2, 5)
    return np.ascontiguousarray(tiles).astype(ml_dtypes.bfloat16)


def cases(n: int, device):
    x = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    copy_target = np.empty_like(x)
    bf16 = TensorSpec((n, n), DataFormat.bfloat16, Layout.TILE, DRAM_MEMORY_CONFIG)
    bfp8 = TensorSpec((n, n), DataFormat.bfloat8_b, Layout.TILE, DRAM_MEMORY_CONFIG)
    bf16_bytes = codec.encode_tensor(x, bf16)
    bfp8_bytes = codec.encode_tensor(x, bfp8)
    view = device.to_device(x, "bfloat16", "tile", hal.DRAM_MEMORY_CONFIG)
    return {
        "copy": lambda: x.copy(),
        "copy into": lambda: np.copyto(copy_target, x),
        "tilize+bf16": lambda: codec.encode_tensor(x, bf16),
        "untilize": lambda: codec.decode_tensor(bf16_bytes, bf16, as_float32=True),
        "bfp8 pack": lambda: codec.encode_tensor(x, bfp8),
        "bfp8 unpack": lambda: codec.decode_tensor(bfp8_bytes, bfp8),
        "numpy tilize+bf16": lambda: numpy_tilize_bf16(x),
        "to_device": lambda: device.to_device(x, "bfloat16", "tile", hal.DRAM_MEMORY_CONFIG),
        "to_host": lambda: view.to_host(np.float32),
    }


def measure(n: int, runs: int, device) -> dict[str, float]:
    work = cases(n, device)
    for function in work.values():  # compile and warm the caches
        function()
    repeat = max(1, int(2 ** 24 // (n * n)))  # ~16M elements per timing
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(runs):
        for name, function in work.items():
            start = time.perf_counter()
            for _ in range(repeat):
                function()
            times[name].append((time.perf_counter() - start) / repeat)
    return {name: statistics.median(values) for name, values in times.items()}


def measure_sizes(sizes: str, runs: int) -> dict[int, dict[str, float]]:
    """{N: {case: median seconds}} for each of the comma-separated sizes."""
    device = hal.create_device("tenstorrent")
    try:
        return {n: measure(n, runs, device) for n in map(int, sizes.split(","))}
    finally:
        device.close()


def target_size(results: dict) -> int:
    return TARGET_SIZE if TARGET_SIZE in results else max(results)


def rows(results: dict[int, dict[str, float]]) -> list[Row]:
    """The results as common rows (bench/report.py): each case against the numpy copy; a
    share-of-bandwidth target (copy / time >= t) is the ratio target time / copy <= 1 / t."""
    checked = target_size(results)
    return [Row(name, f"{n}^2", t, "numpy copy", medians["copy"], n * n, "elem",
                ("ratio", 1 / TARGETS[name]) if n == checked and name in TARGETS else None,
                "numpy" if name in REFERENCES else "tt-hal")
            for n, medians in results.items() for name, t in medians.items() if name != "copy"]


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py; `quick` measures two sizes."""
    return rows(measure_sizes(QUICK_SIZES if quick else SIZES, runs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = measure_sizes(args.sizes, args.runs)
    names = list(next(iter(results.values())))
    print(f"median of {args.runs} runs; ms per N x N float32 array (share of numpy copy bandwidth)\n")
    print("| N | " + " | ".join(names) + " |")
    print("|---:|" + "---:|" * len(names))
    for n, medians in results.items():
        copy = medians["copy"]
        cells = [f"{medians['copy'] * 1e3:.3f}"] + [
            f"{t * 1e3:.3f} ({copy / t:.2f})" for name, t in medians.items() if name != "copy"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    checked = target_size(results)
    print(f"\ntargets at N={checked}:")
    failed = False
    for name, target in TARGETS.items():
        share = results[checked]["copy"] / results[checked][name]
        ok = share >= target
        failed |= not ok
        print(f"  {name}: {share:.2f} of copy bandwidth (target >= {target}) {'ok' if ok else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps({str(n): m for n, m in results.items()}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
