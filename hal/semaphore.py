"""Timeline semaphores and fences (`iree/hal/semaphore.h`, `fence.h`).

A semaphore is a monotonically increasing 64-bit value, or failed with a status
that then sticks. Queues attach *device timepoints* to it (value v is reached when
backend event E completes), so that a submission on another queue can wait on the
device for E instead of on the host.
"""

from __future__ import annotations

import enum
import itertools
import math
import numbers
import threading
import time
from typing import Callable, Iterable, Sequence

from hal.status import HalError, StatusCode, as_error
from hal.types import ExternalTimepointFlags, ExternalTimepointType, SemaphoreCompatibility, WaitMode


class Resolution(enum.Enum):
    """How a queue can wait for a timepoint (HalSemaphore.resolve)."""

    DONE = "done"  # reached
    FAILED = "failed"  # the semaphore failed
    EVENT = "event"  # promised by a backend event on the queue's device: a device-side wait
    PENDING = "pending"  # nobody has promised it yet


# Values at or above this mean "failed" in IREE's C API.
FAILURE_VALUE = (1 << 31) - 1
_LABELS = itertools.count()


def deadline_from(timeout: int | None, deadline: int | None) -> int | None:
    """Absolute `time.monotonic_ns()` deadline from a relative ns timeout or an absolute
    ns deadline; None waits forever."""
    if timeout is not None and deadline is not None:
        raise HalError(StatusCode.INVALID_ARGUMENT, "pass timeout or deadline, not both")
    for name, value in (("timeout", timeout), ("deadline", deadline)):
        if value is not None and type(value) is not int and (  # an int passes (asking numbers.Real costs more)
                isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{name} {value!r}: expected nanoseconds as an integer "
                                                        f"(None waits forever)")
    if timeout is not None:
        return time.monotonic_ns() + max(int(timeout), 0)
    return None if deadline is None else int(deadline)


def _seconds_left(deadline_ns: int | None) -> float | None:
    """Seconds to the deadline, at most what a lock's wait takes (threading.TIMEOUT_MAX, about
    292 years): a wait of a larger timeout wakes then and waits again, rather than raise."""
    if deadline_ns is None:
        return None
    return min(max(deadline_ns - time.monotonic_ns(), 0) / 1e9, threading.TIMEOUT_MAX)


class HalSemaphore:
    """A timeline semaphore (iree_hal_semaphore_t): a value that only increases, or a
    failure that sticks. Queue operations wait on and signal (semaphore, value) pairs."""

    def __init__(self, initial_value: int = 0, device=None):
        if not 0 <= int(initial_value) < FAILURE_VALUE:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"initial value {initial_value} out of range")
        self._value = int(initial_value)
        self._failure: HalError | None = None
        # Over an RLock, though nothing re-enters: a Condition probes a plain Lock for
        # RLock's methods, raising AttributeError thrice, which made this half of a
        # semaphore's cost (an eager op makes one per call).
        self._cond = threading.Condition(threading.RLock())
        self._listeners: list[Callable[[], None]] = []
        self._timepoints: list[tuple[int, object, object]] = []  # (value, event, owner queue)
        self.device = device
        self.label = f"sem{next(_LABELS)}"  # names it in traces and submission-graph dumps

    def __repr__(self) -> str:
        state = f"failed {self._failure.code.name}" if self._failure else f"value={self._value}"
        return f"<HalSemaphore {self.label} {state}>"

    # State.
    def query(self) -> int:
        with self._cond:
            if self._failure is not None:
                raise self._failure.copy()
            return self._value

    @property
    def failure(self) -> HalError | None:
        return self._failure

    def signal(self, value: int) -> None:
        """Advances the timeline to `value`, which must exceed the current value."""
        value = int(value)
        recorder = _recorder(self)
        if recorder is not None:
            recorder.instant(recorder.host_track(), f"signal {self.label}={value}", category="semaphore",
                             args={"semaphore": self.label, "value": value})
        self._signal(value)

    def _signal(self, value: int) -> None:
        """signal() without tracing: queues record their signals on their own track."""
        with self._cond:
            if self._failure is not None:
                return  # the failure sticks; a late signal does not clear it (as local-task)
            if value <= self._value:
                raise HalError(
                    StatusCode.INVALID_ARGUMENT,
                    f"semaphore already signaled past {self._value} (signal of {value} must increase it)",
                )
            if value >= FAILURE_VALUE:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"value {value} is reserved for failure")
            self._value = value
            self._timepoints = [t for t in self._timepoints if t[0] > value]
            self._cond.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def fail(self, failure: "str | HalError | StatusCode" = "semaphore failed") -> None:
        """Fails the timeline; waiters and dependent submissions see `failure`. The first
        failure sticks. A string fails with UNKNOWN, as iree.runtime does."""
        error = as_error(failure)
        with self._cond:
            if self._failure is not None:
                return
            self._failure = error
            self._timepoints.clear()
            self._cond.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def wait(self, payload: int, timeout: int | None = None, deadline: int | None = None) -> bool:
        """Waits for `payload` (ns `timeout` or absolute ns `deadline`; neither:
        forever). True when reached, False on timeout; raises the failure if the
        semaphore failed ("synchronous semaphore failure: ...", as iree.runtime)."""
        value = int(payload)
        end = deadline_from(timeout, deadline)
        recorder = _recorder(self)
        if recorder is None:
            return _synchronous(self._wait, "semaphore", value, end)
        start, result = recorder.now(), "failed"
        try:
            result = "reached" if _synchronous(self._wait, "semaphore", value, end) else "timed out"
            return result == "reached"
        finally:
            recorder.complete(recorder.host_track(), f"wait {self.label}>={value}", start, recorder.now(),
                              {"semaphore": self.label, "value": value, "result": result}, "semaphore")

    def _wait(self, value: int, end: int | None) -> bool:
        with self._cond:
            while True:
                if self._failure is not None:
                    raise self._failure.copy()
                if self._value >= value:
                    return True
                left = _seconds_left(end)
                if left == 0:
                    return False
                self._cond.wait(left)

    # External timepoints.
    def export_timepoint(self, value: int, requested_type: int, requested_flags: int,
                         out_external_timepoint: "HalExternalTimepoint") -> None:
        """Fills `out_external_timepoint` with "this semaphore reaches `value`", as an
        ASYNC_PRIMITIVE (host wait and signal), as IREE's local devices export; CUDA and
        HIP events are UNIMPLEMENTED (no such devices here)."""
        if ExternalTimepointType(int(requested_type)) != ExternalTimepointType.ASYNC_PRIMITIVE:
            raise HalError(StatusCode.UNIMPLEMENTED,
                           f"timepoint export as {ExternalTimepointType(int(requested_type)).name}: the tenstorrent "
                           f"driver exports ASYNC_PRIMITIVE timepoints only")
        out_external_timepoint._export(self, int(value), ExternalTimepointFlags(int(requested_flags)))

    def import_timepoint(self, value: int, timepoint: "HalExternalTimepoint") -> None:
        """Signals this semaphore to `value` once `timepoint` is reached; fails it if the
        timepoint's semaphore fails (IREE's local-task then never signals: a hang)."""
        source = timepoint.source
        if source is None:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{timepoint!r} was not exported by a semaphore of this driver; nothing to import")
        source_semaphore, source_value = source
        value = int(value)

        def reached(failure: HalError | None) -> None:
            if failure is not None:
                self.fail(failure.copy())
                return
            try:
                self._signal(value)
            except HalError as error:  # someone signaled it past `value` meanwhile: nothing left to do
                if error.code != StatusCode.INVALID_ARGUMENT:
                    raise

        source_semaphore.when_reached(source_value, reached)

    # For queues, multi-waits and bridges.
    def when_reached(self, value: int, callback: Callable[[HalError | None], None]) -> Callable[[], None]:
        """Calls `callback(None)` once the timeline reaches `value`, or `callback(failure)`
        if it fails first: at once if it has, else on the thread that moves it. Returns
        the listener, for remove_listener to cancel it."""
        once = threading.Lock()  # held for good by the first listener call that acts

        def listener() -> None:
            with self._cond:
                failure, reached = self._failure, self._value >= value
            if (failure is None and not reached) or not once.acquire(blocking=False):
                return
            self.remove_listener(listener)
            callback(failure)

        self.add_listener(listener)
        listener()
        return listener

    def add_listener(self, listener: Callable[[], None]) -> None:
        """`listener()` runs (without locks held) after every signal, failure or new timepoint."""
        with self._cond:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        with self._cond:
            try:
                self._listeners.remove(listener)
            except ValueError:
                pass

    def add_device_timepoint(self, value: int, event, owner) -> None:
        """Records that `value` is reached when backend `event` (on `owner`'s device) completes."""
        with self._cond:
            if self._failure is not None or value <= self._value or event.query():
                return
            self._timepoints.append((value, event, owner))
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def resolve(self, value: int, owner) -> tuple["Resolution", object]:
        """How a queue of `owner` can wait for `value`: (DONE, None), (FAILED, error),
        (EVENT, backend event) for a device-side wait, or (PENDING, None)."""
        with self._cond:
            if self._failure is not None:
                return Resolution.FAILED, self._failure
            if self._value >= value:
                return Resolution.DONE, None
            best = None
            for tp_value, event, tp_owner in self._timepoints:
                if tp_value >= value and tp_owner is owner and (best is None or tp_value < best[0]):
                    best = (tp_value, event)
            return (Resolution.EVENT, best[1]) if best else (Resolution.PENDING, None)


def _recorder(semaphore: HalSemaphore):
    """The trace recorder of the semaphore's device while it profiles, else None."""
    return getattr(semaphore.device, "profiler", None)


def wait_all_or_any(
    timepoints: Sequence[tuple[HalSemaphore, int]],
    mode: WaitMode,
    timeout: int | None = None,
    deadline: int | None = None,
) -> bool:
    """Waits until all (or any) of the timepoints are reached. A failed semaphore raises
    its failure (in ANY mode only if no other timepoint is reached)."""
    end = deadline_from(timeout, deadline)
    recorder = next((r for r in (_recorder(s) for s, _ in timepoints) if r is not None), None)
    if recorder is None:
        return _wait_all_or_any(timepoints, mode, end)
    start, result = recorder.now(), "failed"
    names = [f"{s.label}>={v}" for s, v in timepoints]
    try:
        result = "reached" if _wait_all_or_any(timepoints, mode, end) else "timed out"
        return result == "reached"
    finally:
        recorder.complete(recorder.host_track(), f"wait {mode.name.lower()} {', '.join(names)}", start,
                          recorder.now(), {"timepoints": names, "mode": mode.name, "result": result}, "semaphore")


def _wait_all_or_any(timepoints, mode: WaitMode, end: int | None) -> bool:
    if not timepoints or _reached(timepoints, mode):  # most waits (a .vmfb's fences of inline work) are
        return True  # reached already: no listener is set up for them
    wake = threading.Condition(threading.Lock())
    changed = [True]

    def listener() -> None:
        with wake:
            changed[0] = True
            wake.notify()

    semaphores = {id(s): s for s, _ in timepoints}.values()
    for s in semaphores:
        s.add_listener(listener)
    try:
        while True:
            with wake:
                changed[0] = False
            if _reached(timepoints, mode):
                return True
            with wake:
                if not changed[0]:
                    left = _seconds_left(end)
                    if left == 0:
                        return False
                    wake.wait(left)
    finally:
        for s in semaphores:
            s.remove_listener(listener)


def _reached(timepoints, mode: WaitMode) -> bool:
    """Whether all (or any) of the timepoints are reached now; raises a failed
    semaphore's failure (in ANY mode only if no timepoint is reached)."""
    reached, failures = 0, []
    for semaphore, value in timepoints:
        failure = semaphore.failure
        if failure is not None:
            failures.append(failure)
        elif semaphore._value >= value:
            reached += 1
    if mode == WaitMode.ANY and reached:
        return True
    if failures:
        raise failures[0].copy()
    return mode == WaitMode.ALL and reached == len(timepoints)


class HalExternalTimepoint:
    """A semaphore timepoint handed between semaphores (iree_hal_external_timepoint_t):
    filled by HalSemaphore.export_timepoint, consumed by import_timepoint."""

    def __init__(self):
        self.type = ExternalTimepointType.NONE
        self.flags = ExternalTimepointFlags.NONE
        self.compatibility = SemaphoreCompatibility.NONE
        self.cuda_event = 0  # the CUDA/HIP handles IREE's struct carries; never set here
        self.hip_event = 0
        self.source: tuple[HalSemaphore, int] | None = None

    def __repr__(self) -> str:
        where = f"{self.source[0].label}>={self.source[1]}" if self.source else "empty"
        return f"<HalExternalTimepoint {self.type.name} {where}>"

    def _export(self, semaphore: HalSemaphore, value: int, flags: ExternalTimepointFlags) -> None:
        self.type, self.flags = ExternalTimepointType.ASYNC_PRIMITIVE, flags
        self.compatibility = SemaphoreCompatibility.HOST_ONLY
        self.source = (semaphore, value)


class HalFence:
    """A set of (semaphore, value) timepoints, at most one per semaphore (the max)."""

    def __init__(self, capacity: int = 0):
        if capacity < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"fence capacity {capacity} is negative")
        self._capacity = int(capacity)
        self._timepoints: dict[int, list] = {}  # id(semaphore) -> [semaphore, value]

    @staticmethod
    def create_at(sem: HalSemaphore, value: int) -> "HalFence":
        fence = HalFence(1)
        fence.insert(sem, value)
        return fence

    @staticmethod
    def join(fences: Iterable["HalFence"]) -> "HalFence":
        fences = list(fences)
        joined = HalFence(sum(f.timepoint_count for f in fences))
        for fence in fences:
            joined.extend(fence)
        return joined

    def __repr__(self) -> str:
        return f"<HalFence {self.timepoints()}>"

    @property
    def timepoint_count(self) -> int:
        return len(self._timepoints)

    def timepoints(self) -> list[tuple[HalSemaphore, int]]:
        return [(s, v) for s, v in self._timepoints.values()]

    def insert(self, sem: HalSemaphore, value: int) -> None:
        """Adds a timepoint; a semaphore already in the fence keeps the larger value."""
        entry = self._timepoints.get(id(sem))
        if entry is not None:
            entry[1] = max(entry[1], int(value))
            return
        if len(self._timepoints) >= self._capacity:
            raise HalError(
                StatusCode.RESOURCE_EXHAUSTED,
                f"fence capacity {self._capacity} reached; create the fence with a larger capacity",
            )
        self._timepoints[id(sem)] = [sem, int(value)]

    def extend(self, from_fence: "HalFence") -> None:
        for sem, value in from_fence.timepoints():
            self.insert(sem, value)

    def signal(self) -> None:
        for sem, value in self.timepoints():
            sem.signal(value)

    def fail(self, message: "str | HalError | StatusCode" = "fence failed") -> None:
        for sem, _ in self.timepoints():
            sem.fail(message)

    def wait(self, timeout: int | None = None, deadline: int | None = None) -> bool:
        """Waits for every timepoint; a failure raises "synchronous fence failure: ..."."""
        return _synchronous(wait_all_or_any, "fence", self.timepoints(), WaitMode.ALL, timeout, deadline)


def _synchronous(wait, what: str, *args) -> bool:
    """`wait(*args)`, its failure raised as iree.runtime raises a failed synchronous wait:
    the same status, after "synchronous <what> failure: "."""
    try:
        return wait(*args)
    except HalError as failure:
        raise HalError(failure.code, failure.message, f"synchronous {what} failure") from None


def as_timepoints(semaphores) -> list[tuple[HalSemaphore, int]]:
    """Normalises a wait/signal argument: a HalFence, a list of (semaphore, value), or None."""
    if semaphores is None:
        return []
    if isinstance(semaphores, HalFence):
        return semaphores.timepoints()
    result = []
    for item in semaphores:
        try:
            sem, value = item
        except (TypeError, ValueError):
            raise HalError(
                StatusCode.INVALID_ARGUMENT, f"expected (HalSemaphore, value) pairs or a HalFence, got {item!r}"
            ) from None
        if not isinstance(sem, HalSemaphore):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"expected a HalSemaphore, got {type(sem).__name__}")
        result.append((sem, int(value)))
    return result
