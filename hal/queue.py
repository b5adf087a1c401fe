"""The device's submission scheduler: IREE queue semantics on TT-Metal-shaped queues.

A submission (waits -> backend commands on one hardware queue -> signals) is issued
to the backend as soon as every wait is either reached on the host or promised by
an event already enqueued on this device; the latter becomes a device-side wait
(`enqueue_wait_for_event`), so a queue never waits in a host thread. Submissions
whose waits are not resolvable yet wait in `pending` and are issued by the
scheduler thread when a semaphore changes (wait-before-signal). Completion is
reported by the backend event's callback, which signals or fails the semaphores.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Callable

from hal.semaphore import HalSemaphore
from hal.status import HalError, StatusCode

log = logging.getLogger(__name__)


@dataclasses.dataclass(eq=False)
class Submission:
    label: str
    cq: int
    waits: list  # [(HalSemaphore, value)]
    signals: list  # [(HalSemaphore, value)]
    ops: list  # [(backend method name, args)] enqueued in order on `cq`
    resources: list  # objects kept alive until completion (buffers, command buffers)
    on_done: Callable[[HalError | None], None] | None = None
    issued_ns: int = 0


class QueueScheduler:
    def __init__(self, backend, name: str):
        self._backend = backend
        self._name = name
        self._cond = threading.Condition(threading.Lock())
        # A submission's waits, commands and event go onto its queue as one unit: a fault
        # fails the queue up to the next event, which must be that submission's own.
        self._issue_lock = threading.Lock()
        self._pending: list[Submission] = []
        self._watch_counts: dict[int, list] = {}  # id(semaphore) -> [semaphore, count]
        self._dirty = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.trace: list[dict] | None = None  # profiling records, when enabled

    # Submitting.
    def submit(self, submission: Submission) -> None:
        """Issues now if the waits allow, else queues it; raises (and fails the signals)
        if a wait has already failed."""
        state, detail = self._resolve(submission.waits)
        if state == "failed":
            self._fail(submission, detail)
            raise detail.copy()
        if state == "ready":
            self._issue(submission, detail)
            return
        for semaphore, _ in submission.waits:
            self._watch(semaphore)
        with self._cond:
            if self._closed:
                raise HalError(StatusCode.FAILED_PRECONDITION, "device is closed")
            self._pending.append(submission)
            self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"{self._name}-scheduler", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _resolve(self, waits) -> tuple[str, object]:
        """('ready', [events to wait on]) | ('pending', None) | ('failed', error)."""
        events, pending = [], False
        for semaphore, value in waits:
            state, detail = semaphore.resolve(value, self)
            if state == "failed":
                return "failed", detail
            if state == "event":
                events.append(detail)
            elif state == "pending":
                pending = True
        return ("pending", None) if pending else ("ready", events)

    def _issue(self, submission: Submission, events: list) -> None:
        backend, cq = self._backend, submission.cq
        if self.trace is not None:
            submission.issued_ns = time.monotonic_ns()
        with self._issue_lock:
            for event in {id(e): e for e in events}.values():
                backend.enqueue_wait_for_event(cq, event)
            for method, args in submission.ops:
                getattr(backend, method)(cq, *args)
            event = backend.enqueue_record_event(cq, lambda error: self._complete(submission, error))
        for semaphore, value in submission.signals:
            semaphore.add_device_timepoint(value, event, self)

    def _complete(self, submission: Submission, error: HalError | None) -> None:
        """Runs on a backend queue thread when the submission's event is done."""
        if self.trace is not None:
            now = time.monotonic_ns()
            self.trace.append({
                "name": submission.label, "cq": submission.cq, "start_ns": submission.issued_ns,
                "end_ns": now, "failed": error is not None,
            })
        if error is not None:
            self._fail(submission, error)
            return
        for semaphore, value in submission.signals:
            try:
                semaphore.signal(value)
            except HalError as signal_error:  # the host signalled past it: the timeline is broken
                semaphore.fail(signal_error)
        self._finish(submission, None)

    def _fail(self, submission: Submission, error: HalError) -> None:
        log.debug("submission %s failed: %s", submission.label, error)
        for semaphore, _ in submission.signals:
            semaphore.fail(error)
        self._finish(submission, error)

    @staticmethod
    def _finish(submission: Submission, error: HalError | None) -> None:
        if submission.on_done is not None:
            try:
                submission.on_done(error)
            except Exception:
                log.exception("completion action of %s failed", submission.label)
        submission.resources.clear()

    # Waiting submissions.
    def _wake(self) -> None:
        with self._cond:
            self._dirty = True
            self._cond.notify()

    def _watch(self, semaphore: HalSemaphore) -> None:
        with self._cond:
            entry = self._watch_counts.get(id(semaphore))
            if entry is None:
                self._watch_counts[id(semaphore)] = [semaphore, 1]
                semaphore.add_listener(self._wake)
            else:
                entry[1] += 1

    def _unwatch(self, semaphore: HalSemaphore) -> None:
        with self._cond:
            entry = self._watch_counts[id(semaphore)]
            entry[1] -= 1
            if entry[1] == 0:
                del self._watch_counts[id(semaphore)]
                semaphore.remove_listener(self._wake)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._dirty and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                self._dirty = False
            self._issue_ready()

    def _issue_ready(self) -> None:
        """Issues (or fails) every pending submission whose waits are now resolvable.
        A method of its own so no submission stays referenced while the thread sleeps."""
        with self._cond:
            pending = list(self._pending)
        for submission in pending:
            state, detail = self._resolve(submission.waits)
            if state == "pending":
                continue
            with self._cond:
                self._pending.remove(submission)
            for semaphore, _ in submission.waits:
                self._unwatch(semaphore)
            try:
                if state == "failed":
                    self._fail(submission, detail)
                else:
                    self._issue(submission, detail)
            except HalError as error:  # e.g. the backend closed under it
                self._fail(submission, error)

    def pending_count(self) -> int:
        with self._cond:
            return len(self._pending)

    def close(self) -> None:
        """Cancels submissions still waiting; their signal semaphores fail with CANCELLED."""
        with self._cond:
            self._closed = True
            pending, self._pending = self._pending, []
            self._cond.notify()
        for submission in pending:
            self._fail(submission, HalError(StatusCode.CANCELLED, f"device closed before {submission.label} could run"))
