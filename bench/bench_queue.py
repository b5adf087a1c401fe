"""Queue and semaphore latency: iree.runtime local-task vs hal tenstorrent, side by side.

    python bench/bench_queue.py [--runs N] [--json out.json]

Both backends run the same functions, written against the iree.runtime HAL API:

- submit_wait: queue_execute of a one-command command buffer (a 4-byte-pattern fill
  of a 64-byte buffer) signalling a semaphore, then a host wait on it. The command
  buffer is recorded once and re-executed when the backend allows it; otherwise it is
  recorded per iteration (outside the timed region). The table says which.
- pingpong: thread A signals s1=v and waits s2=v; thread B waits s1=v and signals
  s2=v. One round trip per v.

Each run is timed as total / iterations; the table reports the median over runs.
Runs of the two backends alternate so that machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row  # noqa: E402  (bench/report.py)

WAIT_NS = 10 * 1_000_000_000  # a lost signal fails the run instead of hanging it
RUN_SECONDS = 0.25  # target wall time of one run; iterations are calibrated to it
TARGET_RATIO = 2.0


class Timeline:
    """A semaphore and the next value to signal on it."""

    def __init__(self, device):
        self.sem = device.create_semaphore(0)
        self.value = 0

    def next(self) -> int:
        self.value += 1
        return self.value


def _wait(sem, value: int) -> None:
    if not sem.wait(value, timeout=WAIT_NS):
        raise RuntimeError(f"semaphore did not reach {value} within {WAIT_NS} ns")


class SubmitWait:
    """One queue_execute + semaphore wait per iteration."""

    def __init__(self, rt, device):
        self.rt, self.device = rt, device
        self.buffer = device.allocator.allocate_buffer(
            rt.MemoryType.DEVICE_LOCAL, rt.BufferUsage.DEFAULT, 64
        )
        self.timeline = Timeline(device)
        self.command_buffer = self._record()
        self.reusable = self._try_reuse()
        self.mode = "reused" if self.reusable else "recorded per iteration"

    def _record(self):
        cb = self.rt.HalCommandBuffer(self.device)
        cb.fill(self.buffer, np.uint32(0xAB23CD45), 0, 64, end=True)
        return cb

    def _submit(self, cb) -> None:
        value = self.timeline.next()
        self.device.queue_execute(cb, [], [(self.timeline.sem, value)])
        _wait(self.timeline.sem, value)

    def _try_reuse(self) -> bool:
        self._submit(self.command_buffer)
        try:
            self._submit(self.command_buffer)
        except Exception:  # noqa: BLE001 - a one-shot refusal means "record each time"
            self.timeline = Timeline(self.device)
            return False
        return True

    def run(self, iterations: int) -> float:
        """Seconds per iteration: only queue_execute + wait are timed."""
        sem, device = self.timeline.sem, self.device
        total = 0.0
        for _ in range(iterations):
            cb = self.command_buffer if self.reusable else self._record()
            value = self.timeline.next()
            start = time.perf_counter()
            device.queue_execute(cb, [], [(sem, value)])
            reached = sem.wait(value, timeout=WAIT_NS)
            total += time.perf_counter() - start
            if not reached:
                raise RuntimeError(f"submission {value} did not complete")
        return total / iterations


class PingPong:
    """Round trips between two host threads through two semaphores."""

    mode = "2 threads"

    def __init__(self, rt, device):
        self.device = device

    def run(self, iterations: int) -> float:
        s1 = self.device.create_semaphore(0)
        s2 = self.device.create_semaphore(0)
        errors: list[BaseException] = []

        def thread_b():
            try:
                for v in range(1, iterations + 1):
                    _wait(s1, v)
                    s2.signal(v)
            except BaseException as e:  # noqa: BLE001 - re-raised on the main thread
                errors.append(e)

        b = threading.Thread(target=thread_b, daemon=True)
        b.start()
        start = time.perf_counter()
        for v in range(1, iterations + 1):
            s1.signal(v)
            _wait(s2, v)
        elapsed = time.perf_counter() - start
        b.join()
        if errors:
            raise errors[0]
        return elapsed / iterations


BENCHMARKS = {"submit_wait": SubmitWait, "pingpong": PingPong}


def calibrate(bench, minimum: int = 20, maximum: int = 20_000) -> int:
    """Warms up, then picks the iteration count that makes one run ~RUN_SECONDS."""
    bench.run(minimum)
    per_iteration = bench.run(minimum)
    return int(min(maximum, max(minimum, RUN_SECONDS / max(per_iteration, 1e-9))))


def load_backends() -> tuple[dict, str | None]:
    import iree.runtime as iree_rt

    backends = {"iree": (iree_rt, iree_rt.get_device("local-task"))}
    try:
        import hal

        backends["hal"] = (hal, hal.create_device("tenstorrent"))
    except Exception as e:  # noqa: BLE001 - the iree column is still worth printing
        return backends, f"hal not importable: {type(e).__name__}: {e}"
    return backends, None


def measure(runs: int) -> tuple[list[dict], str | None]:
    backends, hal_problem = load_backends()
    results = []
    for name, factory in BENCHMARKS.items():
        benches, iterations, samples = {}, {}, {}
        for backend, (rt, device) in backends.items():
            benches[backend] = factory(rt, device)
            iterations[backend] = calibrate(benches[backend])
            samples[backend] = []
        for _ in range(runs):  # alternate backends run by run
            for backend, bench in benches.items():
                samples[backend].append(bench.run(iterations[backend]))
        row = {"benchmark": name}
        for backend in backends:
            row[backend] = {
                "median_us": statistics.median(samples[backend]) * 1e6,
                "runs_us": [s * 1e6 for s in samples[backend]],
                "iterations_per_run": iterations[backend],
                "mode": benches[backend].mode,
            }
        if "hal" in row:
            row["ratio"] = row["hal"]["median_us"] / row["iree"]["median_us"]
        results.append(row)
    return results, hal_problem


def rows(results: list[dict]) -> list[Row]:
    """The results as common rows (bench/report.py): hal against iree.runtime local-task."""
    return [Row(row["benchmark"], time=row["hal"]["median_us"] * 1e-6, baseline="iree.runtime local-task",
                baseline_time=row["iree"]["median_us"] * 1e-6, target=("ratio", TARGET_RATIO),
                note=f"iree: {row['iree']['mode']}; hal: {row['hal']['mode']}") for row in results]


def collect(runs: int, quick: bool = False) -> list[Row]:
    """Rows for bench/run_all.py. Runs are calibrated to RUN_SECONDS, so `quick` changes
    nothing; a hal that does not import fails the suite rather than leaving a column empty."""
    results, hal_problem = measure(runs)
    if hal_problem:
        raise RuntimeError(hal_problem)
    return rows(results)


def table(results: list[dict]) -> str:
    lines = [
        f"| benchmark | iree us | hal us | ratio hal/iree | target (<= {TARGET_RATIO}x) |",
        "|---|---:|---:|---:|---|",
    ]
    for row in results:
        iree = row["iree"]
        hal = row.get("hal")
        name = f"{row['benchmark']} (iree: {iree['mode']}"
        name += f"; hal: {hal['mode']})" if hal else ")"
        if hal:
            ratio = row["ratio"]
            verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
            cells = f"{hal['median_us']:.1f} | {ratio:.2f}x | {verdict}"
        else:
            cells = "n/a | n/a | n/a"
        lines.append(f"| {name} | {iree['median_us']:.1f} | {cells} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per backend")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results, hal_problem = measure(max(1, args.runs))
    if hal_problem:
        print(hal_problem)
    print(table(results))
    print(f"\n{args.runs} runs per backend, median of per-run means; "
          f"total {time.perf_counter() - start:.1f} s")
    if args.json:
        payload = {"runs": args.runs, "hal_problem": hal_problem, "results": results}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
