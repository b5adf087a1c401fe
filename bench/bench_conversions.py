"""Host conversions, C++ (tt_hal.target._conversions) vs numba (tt_hal/target/tiles.py,
tt_hal/target/formats.py), side by side.

    python bench/bench_conversions.py [--runs N] [--quick] [--sizes 256,1024,2048,4096] [--json out.json]

For each N x N float32 array (standard normal values) and each conversion:
- tilize+bf16, untilize bf16->f32, tilize+bfp8_b, untilize bfp8_b (-> float32),
  tilize+bfp4_b, bf16_encode row-major, float32 copy tilize;
- HAL path: tt_hal.target.conversions.encode_tensor / decode_tensor with implementation="numba" and
  "native", so the timing includes what the HAL does around the kernel (the output
  allocation, and tt_hal.target.tiles.run_by_tile_rows splitting tensors of at least
  tiles.PARALLEL_ELEMENTS elements across tiles.WORKERS threads);
- kernel only: the kernel itself on the whole tensor in one call, on one thread, into
  a preallocated output.
Each case's first call warms it up (numba compiles) and checks that both
implementations give the same bytes. Runs alternate over all cases of a size so
that machine noise hits all alike (bench/timing.py); the tables give medians.
MB/s counts the N x N float32 bytes (4 N^2) per second, for decodes too.
--quick: sizes 256,1024,2048 and 2 runs, for smoke tests; otherwise 4096 is added.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row  # noqa: E402  (bench/report.py)
from timing import fmt, measure  # noqa: E402  (bench/timing.py)

from tt_hal.target import conversions as codec  # noqa: E402
from tt_hal.target import tiles
from tt_hal.target.layout import DataFormat, Layout, TensorSpec  # noqa: E402
from tt_hal.target.placement import DRAM_MEMORY_CONFIG  # noqa: E402

IMPLEMENTATIONS = (codec.NUMBA, codec.NATIVE)
# case -> the codec kernel it runs (to compare with codec.FASTEST)
CASES = {"tilize+bf16": "tilize", "untilize bf16->f32": "untilize", "tilize+bfp8_b": "tilize_block_float",
         "untilize bfp8_b": "untilize_block_float", "tilize+bfp4_b": "tilize_block_float",
         "bf16_encode row-major": "bf16_encode", "float32 copy tilize": "tilize"}
MODES = ("hal", "kernel")
SIZES, QUICK_SIZES = "256,1024,2048,4096", "256,1024,2048"


def spec(n: int, data_format: DataFormat, layout: Layout = Layout.TILE) -> TensorSpec:
    return TensorSpec((n, n), data_format, layout, DRAM_MEMORY_CONFIG)


def cases(n: int) -> dict[str, dict]:
    """{case: {(implementation, "hal" | "kernel"): function returning its output}}."""
    x = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    bits = x.view(np.uint32)
    tensor = bits.reshape(1, n, n)
    specs = {"bf16": spec(n, DataFormat.bfloat16), "bfp8": spec(n, DataFormat.bfloat8_b),
             "bfp4": spec(n, DataFormat.bfloat4_b), "bf16 rm": spec(n, DataFormat.bfloat16, Layout.ROW_MAJOR),
             "f32": spec(n, DataFormat.float32)}
    bf16_bytes = codec.encode_tensor(x, specs["bf16"], implementation=codec.NUMBA)
    bfp8_bytes = codec.encode_tensor(x, specs["bfp8"], implementation=codec.NUMBA)
    out = {"u16 tiles": np.empty(specs["bf16"].size // 2, np.uint16), "u32 tensor": np.empty((1, n, n), np.uint32),
           "bfp8": np.empty(specs["bfp8"].size, np.uint8), "bfp4": np.empty(specs["bfp4"].size, np.uint8),
           "u16 flat": np.empty(n * n, np.uint16), "u32 tiles": np.empty(specs["f32"].size // 4, np.uint32)}
    work: dict[str, dict] = {name: {} for name in CASES}
    for impl in IMPLEMENTATIONS:
        def k(name, impl=impl):
            return codec.kernel(name, impl)

        work["tilize+bf16"][impl, "hal"] = lambda impl=impl: codec.encode_tensor(x, specs["bf16"], implementation=impl)
        work["untilize bf16->f32"][impl, "hal"] = lambda impl=impl: codec.decode_tensor(
            bf16_bytes, specs["bf16"], as_float32=True, implementation=impl)
        work["tilize+bfp8_b"][impl, "hal"] = lambda impl=impl: codec.encode_tensor(x, specs["bfp8"],
                                                                                    implementation=impl)
        work["untilize bfp8_b"][impl, "hal"] = lambda impl=impl: codec.decode_tensor(bfp8_bytes, specs["bfp8"],
                                                                                      implementation=impl)
        work["tilize+bfp4_b"][impl, "hal"] = lambda impl=impl: codec.encode_tensor(x, specs["bfp4"],
                                                                                    implementation=impl)
        work["bf16_encode row-major"][impl, "hal"] = lambda impl=impl: codec.encode_tensor(x, specs["bf16 rm"],
                                                                                            implementation=impl)
        work["float32 copy tilize"][impl, "hal"] = lambda impl=impl: codec.encode_tensor(x, specs["f32"],
                                                                                          implementation=impl)

        def kernel_case(name, output, *args):
            function = k(name)

            def run():
                function(*args)
                return output
            return run

        work["tilize+bf16"][impl, "kernel"] = kernel_case(
            "tilize", out["u16 tiles"], tensor, out["u16 tiles"], tiles.BF16, 0, 0, False, False, 0, -1)
        work["untilize bf16->f32"][impl, "kernel"] = kernel_case(
            "untilize", out["u32 tensor"], bf16_bytes.view(np.uint16), out["u32 tensor"], tiles.BF16, False, False,
            0, -1)
        work["tilize+bfp8_b"][impl, "kernel"] = kernel_case(
            "tilize_block_float", out["bfp8"], tensor, out["bfp8"], 7, 0, 0, False, False, 0, -1)
        work["untilize bfp8_b"][impl, "kernel"] = kernel_case(
            "untilize_block_float", out["u32 tensor"], bfp8_bytes, out["u32 tensor"], 7, False, False, 0, -1)
        work["tilize+bfp4_b"][impl, "kernel"] = kernel_case(
            "tilize_block_float", out["bfp4"], tensor, out["bfp4"], 3, 0, 0, False, False, 0, -1)
        work["bf16_encode row-major"][impl, "kernel"] = kernel_case(
            "bf16_encode", out["u16 flat"], bits.reshape(-1), out["u16 flat"], 0)
        work["float32 copy tilize"][impl, "kernel"] = kernel_case(
            "tilize", out["u32 tiles"], tensor, out["u32 tiles"], tiles.COPY, 0, 0, False, False, 0, -1)
    return work


def check(work: dict) -> None:
    """Warm every case up, and check numba and native give the same bytes."""
    for case, functions in work.items():
        for mode in ("hal", "kernel"):
            results = [np.ascontiguousarray(functions[impl, mode]()).view(np.uint8).copy() for impl in IMPLEMENTATIONS]
            if not np.array_equal(results[0], results[1]):
                raise SystemExit(f"{case} ({mode}): native and numba results differ")


def measure_size(n: int, runs: int, modes: tuple[str, ...] = MODES) -> dict[str, dict[str, float]]:
    """{case: {"impl|mode": median seconds}} of N x N, after the warm-up and check of every case."""
    work = cases(n)
    check(work)
    flat = {f"{case}|{impl}|{mode}": function for case, functions in work.items()
            for (impl, mode), function in functions.items() if mode in modes}
    medians = measure(flat, runs)
    return {case: {f"{impl}|{mode}": medians[f"{case}|{impl}|{mode}"] for (impl, mode) in functions if mode in modes}
            for case, functions in work.items()}


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py: the HAL path only (what a tt-hal user gets; the kernel-only
    times are this script's own detail), native against numba, over --quick's sizes when `quick`."""
    module, reason = codec.native_conversions()
    if module is None:
        raise RuntimeError(f"native conversions unavailable: {reason}")
    rows = []
    for n in map(int, (QUICK_SIZES if quick else SIZES).split(",")):
        times = measure_size(n, runs, ("hal",))
        rows += [Row(case, f"{n}^2", t["native|hal"], "numba", t["numba|hal"], n * n, "elem", timed="native")
                 for case, t in times.items()]
    return rows


def machine() -> dict:
    flags = ""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        pass
    return {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "avx2": " avx2" in flags,
            "workers": tiles.WORKERS, "parallel_elements": tiles.PARALLEL_ELEMENTS}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default=None, help="comma-separated N (default 256,1024,2048,4096)")
    parser.add_argument("--quick", action="store_true", help="sizes 256,1024,2048 and 2 runs, for smoke tests")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.runs = 2
    sizes = [int(s) for s in (args.sizes or (QUICK_SIZES if args.quick else SIZES)).split(",")]
    module, reason = codec.native_conversions()
    if module is None:
        print(f"native conversions unavailable: {reason}", file=sys.stderr)
        return 1

    results: dict[int, dict] = {}
    for n in sizes:
        results[n] = measure_size(n, args.runs)
        print(f"N={n} done", file=sys.stderr)

    facts = machine()
    print(f"native (C++) vs numba host conversions; median of {args.runs} runs; {facts['cpus']} CPUs "
          f"({facts['machine']}, AVX2 {'yes' if facts['avx2'] else 'no'}), numba {facts['numba']}, numpy "
          f"{facts['numpy']}. HAL = tt_hal.target.conversions.encode_tensor/decode_tensor (tensors of >= "
          f"{facts['parallel_elements']} elements split over {facts['workers']} threads); kernel = one call on the "
          f"whole tensor, one thread. MB/s = 4 N^2 float32 bytes per second; speedup = numba time / native time.\n")
    print("| conversion | N | HAL numba ms | MB/s | HAL native ms | MB/s | speedup | kernel numba ms | "
          "kernel native ms | speedup |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in CASES:
        for n in sizes:
            t = results[n][case]
            mbs = lambda seconds, n=n: 4 * n * n / seconds / 1e6  # noqa: E731
            print(f"| {case} | {n} | {t['numba|hal'] * 1e3:.3f} | {mbs(t['numba|hal']):.0f} | "
                  f"{t['native|hal'] * 1e3:.3f} | {mbs(t['native|hal']):.0f} | "
                  f"{t['numba|hal'] / t['native|hal']:.2f}x | {t['numba|kernel'] * 1e3:.3f} | "
                  f"{t['native|kernel'] * 1e3:.3f} | {t['numba|kernel'] / t['native|kernel']:.2f}x |")

    print("\nGrowth with size: HAL ns per element (constant = time linear in N^2)\n")
    print("| conversion | impl | " + " | ".join(f"N={n}" for n in sizes) + " | time x per 2x N |")
    print("|---|---|" + "---:|" * len(sizes) + "---:|")
    for case in CASES:
        for impl in IMPLEMENTATIONS:
            per = [results[n][case][f"{impl}|hal"] / (n * n) * 1e9 for n in sizes]
            growth = [results[b][case][f"{impl}|hal"] / results[a][case][f"{impl}|hal"]
                      for a, b in zip(sizes, sizes[1:]) if b == 2 * a]
            cells = " | ".join(f"{p:.2f}" for p in per)
            print(f"| {case} | {impl} | {cells} | {', '.join(f'{g:.1f}' for g in growth) or '-'} |")

    largest = max(sizes)
    print(f"\nFaster at N={largest} (HAL path) vs tt_hal.target.conversions.FASTEST:")
    for case, name in CASES.items():
        t = results[largest][case]
        faster = codec.NATIVE if t["native|hal"] < t["numba|hal"] else codec.NUMBA
        agree = "agrees" if faster == codec.FASTEST[name] else f"DISAGREES (FASTEST[{name!r}] = {codec.FASTEST[name]})"
        print(f"  {case}: {faster} ({fmt(min(t['native|hal'], t['numba|hal']))} vs "
              f"{fmt(max(t['native|hal'], t['numba|hal']))}); {agree}")
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "runs": args.runs,
                                         "medians": {str(n): r for n, r in results.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
