"""Where one call of a compiled model goes, by phase: the host's Python around the device
work, the simulator's per-launch Python, and its jitted interpreter.

    python bench/call_breakdown.py [MODEL ...] [--calls 20] [--top 8]

MODEL is an export of examples/models/exports (default torch_mobilenetv2 torch_bert
jax_lstm). Each is compiled to a .vmfb and called (its last call of calls.py) a few
times to warm up, then --calls times with wrappers timing: every `hal.*` import the
VM calls (tt_hal.runtime.hal_module), every queue command of launches (`run_programs`:
a submission's consecutive launches are one), and inside it each jitted `run_round`
call (the interpreter). Printed per model, medians over the calls:
- call: the whole call, as the caller sees it;
- hal imports: the time in the VM's `hal.*` calls, the largest of them by name;
- run_programs: the launches (count), of which run_round and the Python around it;
- the rest: the VM itself, argument and result conversion (outside every import);
- around the launches: from the call's start to the first launch, between the commands
  of launches, and from the last launch to the call's return (host work the device waits for, or waits on).
With --timeline, the last call's `hal.*` imports and launches in order (consecutive
launches as one line), each with its start and length.
Most launches run on the device's queue thread while the caller waits in
`hal.fence.await`, so run_programs is inside that import's time, not beside it.
The wrappers cost about a microsecond each: the per-launch Python shown includes theirs.
A profile, not a timing: ratios against numpy and llvm-cpu are bench/run_all.py's.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "models" / "exports"))

from calls import CALLS  # noqa: E402

from tt_hal import compiler, runtime  # noqa: E402
from tt_hal.runtime import hal_module  # noqa: E402
from tt_hal.sim import device as sim_device  # noqa: E402
from tt_hal.sim import dispatch  # noqa: E402


class Timings:
    """Seconds and counts of the wrapped functions within one call (run_programs' counts
    its launches), and when each ran."""

    def __init__(self):
        self.seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.counts: collections.Counter[str] = collections.Counter()
        self.events: list[tuple[str, float, float, int]] = []  # (name, start, seconds, count), as they end

    def add(self, name: str, seconds: float, count: int = 1) -> None:
        self.seconds[name] += seconds
        self.counts[name] += count
        self.events.append((name, time.perf_counter() - seconds, seconds, count))

    def clear(self) -> None:
        self.seconds.clear()
        self.counts.clear()
        self.events.clear()


def instrument(timings: Timings) -> None:
    """Wraps the hal module's imports, run_programs and run_round's entry point."""
    module = hal_module.HalVmModule
    for name, method in list(vars(module).items()):
        if name.startswith("_") or not callable(method):
            continue

        def timed(self, *args, method=method, name=name):
            start = time.perf_counter()
            try:
                return method(self, *args)
            finally:
                timings.add("hal." + name, time.perf_counter() - start)

        setattr(module, name, timed)
    run_programs = dispatch.run_programs

    def timed_run_programs(runs, *args, **kwargs):
        start = time.perf_counter()
        try:
            return run_programs(runs, *args, **kwargs)
        finally:
            timings.add("run_programs", time.perf_counter() - start, len(runs))

    sim_device.run_programs = timed_run_programs  # as SimDevice.enqueue_program(s) finds it
    launch_arguments = dispatch.PreparedProgram.launch_arguments

    def timed_launch_arguments(self, *args, **kwargs):
        program, chip, run_round = launch_arguments(self, *args, **kwargs)

        def timed_run_round(*arguments):
            start = time.perf_counter()
            try:
                return run_round(*arguments)
            finally:
                timings.add("run_round", time.perf_counter() - start)

        return program, chip, timed_run_round

    dispatch.PreparedProgram.launch_arguments = timed_launch_arguments


def timeline(events: list[tuple[str, float, float]], start: float) -> list[str]:
    """One call's imports and launches in order, ms from the call's start; a run of
    consecutive commands of launches (inside an import or not) as one line."""
    lines, launches = [], []

    def flush():
        if launches:
            first, last = launches[0], launches[-1]
            busy = sum(seconds for _, seconds, _ in launches)
            lines.append(f"    {(first[0] - start) * 1e3:8.3f}  {sum(n for _, _, n in launches)} launches, "
                         f"{busy * 1e3:.3f} ms in run_programs over {(last[0] + last[1] - first[0]) * 1e3:.3f} ms")
            launches.clear()

    for name, begin, seconds, count in sorted(events, key=lambda event: event[1]):
        if name == "run_programs":
            launches.append((begin, seconds, count))
        elif name.startswith("hal."):
            flush()
            lines.append(f"    {(begin - start) * 1e3:8.3f}  {name} {seconds * 1e3:.3f} ms")
    flush()
    return lines


def breakdown(model: str, calls: int, top: int, timings: Timings, show_timeline: bool = False) -> None:
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(ROOT / "examples" / "models" / "exports"
                                                              / f"{model}.mlir"), driver="tenstorrent")
    function, args = CALLS[model][-1]
    for _ in range(3):
        module[function](*args)
    rows = collections.defaultdict(list)
    for _ in range(calls):
        timings.clear()
        start = time.perf_counter()
        module[function](*args)
        end = time.perf_counter()
        rows["call"].append(end - start)
        spans = sorted((begin, begin + seconds) for name, begin, seconds, _ in timings.events
                       if name == "run_programs")
        if spans:  # each command's (start, end)
            rows["before"].append(spans[0][0] - start)
            rows["between"].append(sum(b[0] - a[1] for a, b in zip(spans, spans[1:])))
            rows["after"].append(end - spans[-1][1])
        for name, seconds in timings.seconds.items():
            rows[name].append(seconds)
        rows["hal imports"].append(sum(s for n, s in timings.seconds.items() if n.startswith("hal.")))
        rows["run_programs Python"].append(timings.seconds["run_programs"] - timings.seconds["run_round"])
    counts = dict(timings.counts)  # the last call's

    def ms(name: str) -> str:
        return f"{statistics.median(rows[name]) * 1e3:7.2f} ms"

    launches = counts.get("run_programs", 0)
    print(f"{model}: call {ms('call')}")
    print(f"  hal imports         {ms('hal imports')} ({sum(c for n, c in counts.items() if n.startswith('hal.'))} "
          f"calls)")
    imports = sorted((n for n in rows if n.startswith("hal.")), key=lambda n: -statistics.median(rows[n]))
    for name in imports[:top]:
        print(f"    {name:32s}{ms(name)} x{counts[name]}")
    if launches:
        python = statistics.median(rows["run_programs Python"])
        commands = sum(1 for name, *_ in timings.events if name == "run_programs")
        print(f"  run_programs        {ms('run_programs')} ({launches} launches in {commands} queue commands)")
        print(f"    run_round         {ms('run_round')}")
        print(f"    Python around it  {python * 1e3:7.2f} ms ({python / launches * 1e6:.1f} us a launch)")
    outside = statistics.median(rows["call"]) - statistics.median(rows["hal imports"])
    print(f"  VM and conversions  {outside * 1e3:7.2f} ms (the call outside every hal import)")
    if launches:
        print(f"  around the launches {ms('before')} before the first, {ms('between').strip()} between, "
              f"{ms('after').strip()} after the last")
    if show_timeline:
        print("  the last call (ms from its start):")
        print("\n".join(timeline(timings.events, start)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=["torch_mobilenetv2", "torch_bert", "jax_lstm"])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--top", type=int, default=8, help="hal imports listed per model")
    parser.add_argument("--timeline", action="store_true", help="the last call's imports and launches in order")
    options = parser.parse_args()
    unknown = [m for m in options.models if m not in CALLS]
    if unknown:
        print(f"call_breakdown: unknown model {', '.join(unknown)}; models: {', '.join(CALLS)}", file=sys.stderr)
        return 2
    timings = Timings()
    instrument(timings)
    for model in options.models:
        breakdown(model, options.calls, options.top, timings, options.timeline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
