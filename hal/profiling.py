"""Device profiling as a Chrome / Perfetto trace (the JSON trace-event format).

A `TraceRecorder` collects events from every layer while a device profiles
(`HalDevice.begin_profiling`): the HAL's queue scheduler (submissions as async
slices, semaphore signals and device-side waits), host threads (semaphore waits
and signals), and the backend's command queues and cores (transfers, dispatches,
the workgroups each core ran, with instruction counts). Tracks are
(group, name) pairs; each group becomes a trace process and each name a thread, so
Perfetto shows one track per hardware queue and one per core.

Times are host nanoseconds (`time.monotonic_ns`): in mock mode they measure the
simulator, not the chip (docs/fidelity.md).
"""

from __future__ import annotations

import contextlib
import threading
import time

from hal.backend import COMPUTE_QUEUE

QUEUES, CORES, HOST, SUBMISSIONS = "queues", "cores", "host", "submissions"
_GROUP_ORDER = (SUBMISSIONS, QUEUES, CORES, HOST)


class TraceRecorder:
    """Thread-safe collector of trace events for one device."""

    def __init__(self, device_name: str):
        self.device_name = device_name
        self.start_ns = time.monotonic_ns()
        self._lock = threading.Lock()
        self._events: list[dict] = []
        self._tracks: dict[tuple[str, str], tuple[int, int]] = {}  # (group, name) -> (pid, tid)
        self._sort_keys: dict[tuple[str, str], object] = {}

    now = staticmethod(time.monotonic_ns)

    def _us(self, ns: int) -> float:
        return (ns - self.start_ns) / 1e3

    def track(self, group: str, name: str, sort_key=None) -> tuple[str, str]:
        """Names a track; `sort_key` orders tracks within their group (default: first use)."""
        key = (group, name)
        with self._lock:
            self._track_ids(key)
            if sort_key is not None:
                self._sort_keys[key] = sort_key
        return key

    def _track_ids(self, key: tuple[str, str]) -> tuple[int, int]:
        ids = self._tracks.get(key)
        if ids is None:
            tid = sum(1 for k in self._tracks if k[0] == key[0]) + 1
            ids = self._tracks[key] = (_GROUP_ORDER.index(key[0]) + 1, tid)
        return ids

    def complete(self, track: tuple[str, str], name: str, start_ns: int, end_ns: int, args: dict | None = None,
                 category: str = "") -> None:
        """A slice that began at `start_ns` and ended at `end_ns` on `track`."""
        with self._lock:
            pid, tid = self._track_ids(track)
            self._events.append({"name": name, "cat": category, "ph": "X", "pid": pid, "tid": tid,
                                 "ts": self._us(start_ns), "dur": max(end_ns - start_ns, 0) / 1e3,
                                 "args": args or {}})

    def instant(self, track: tuple[str, str], name: str, args: dict | None = None, category: str = "",
                ts_ns: int | None = None) -> None:
        with self._lock:
            pid, tid = self._track_ids(track)
            self._events.append({"name": name, "cat": category, "ph": "i", "s": "t", "pid": pid, "tid": tid,
                                 "ts": self._us(self.now() if ts_ns is None else ts_ns), "args": args or {}})

    def async_slice(self, track: tuple[str, str], name: str, slice_id: int, start_ns: int, end_ns: int,
                    args: dict | None = None, category: str = "submission") -> None:
        """A slice that may overlap others on its track (submissions in flight at once)."""
        with self._lock:
            pid, tid = self._track_ids(track)
            common = {"name": name, "cat": category, "pid": pid, "tid": tid, "id": slice_id}
            self._events.append({**common, "ph": "b", "ts": self._us(start_ns), "args": args or {}})
            self._events.append({**common, "ph": "e", "ts": self._us(max(end_ns, start_ns)), "args": {}})

    def host_track(self) -> tuple[str, str]:
        thread = threading.current_thread()
        return self.track(HOST, f"{thread.name} ({thread.ident})")

    def queue_track(self, cq: int) -> tuple[str, str]:
        """Hardware queue `cq`'s track (backends record their commands on it)."""
        return self.track(QUEUES, f"CQ{cq} {'compute' if cq == COMPUTE_QUEUE else 'transfer'}", sort_key=cq)

    def core_track(self, x: int, y: int) -> tuple[str, str]:
        """Worker core (x, y)'s track (the simulator records each workgroup it ran)."""
        return self.track(CORES, f"core ({x},{y})", sort_key=(y, x))

    def to_chrome(self) -> dict:
        """{"traceEvents": [...], ...} with process and thread names and sort order."""
        with self._lock:
            events = list(self._events)
            tracks = dict(self._tracks)
            sort_keys = dict(self._sort_keys)
        metadata = []
        for pid, group in enumerate(_GROUP_ORDER, 1):
            members = [k for k in tracks if k[0] == group]
            if not members:
                continue
            metadata.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                             "args": {"name": f"{self.device_name} {group}"}})
            metadata.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                             "args": {"sort_index": pid}})
            ordered = sorted(members, key=lambda k: (sort_keys.get(k, tracks[k][1]), tracks[k][1]))
            for index, key in enumerate(ordered):
                pid, tid = tracks[key]
                metadata.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": key[1]}})
                metadata.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                                 "args": {"sort_index": index}})
        return {"traceEvents": metadata + events, "displayTimeUnit": "ns",
                "otherData": {"device": self.device_name, "clock": "host monotonic (simulator time in mock mode)"}}


def host_slice(recorder: TraceRecorder | None, name: str, **args):
    """A context timing host work (e.g. a synchronous tensor upload) on the calling
    thread's track; nothing when `recorder` is None."""
    if recorder is None:
        return contextlib.nullcontext()
    return _host_slice(recorder, name, args)


@contextlib.contextmanager
def _host_slice(recorder: TraceRecorder, name: str, args: dict):
    start = recorder.now()
    try:
        yield
    finally:
        recorder.complete(recorder.host_track(), name, start, recorder.now(), args, "transfer")
