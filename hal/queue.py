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

import collections
import dataclasses
import itertools
import threading
from typing import Callable

from hal import profiling
from hal.log import get_logger
from hal.semaphore import HalSemaphore, Resolution
from hal.status import HalError, StatusCode
from hal.submission_graph import SubmissionNode, SubmissionState

log = get_logger(__name__)


@dataclasses.dataclass(eq=False)
class Submission:
    label: str
    cq: int
    waits: list  # [(HalSemaphore, value)]
    signals: list  # [(HalSemaphore, value)]
    commands: list  # hal.backend queue commands (WriteBuffer, LaunchProgram, ...), enqueued in order on `cq`
    resources: list  # objects kept alive until completion (buffers, command buffers)
    on_done: Callable[[HalError | None], None] | None = None
    allocations: frozenset = frozenset()  # hal.buffer.Allocations the commands use: alive when issued
    deallocates: object = None  # the Allocation a queue_dealloca frees when it completes
    in_use: list = dataclasses.field(default_factory=list)  # the allocations it holds while issued (begin_use)
    id: int = 0  # numbered by the device's scheduler from 1, in submission order
    issued_ns: int = 0
    command_count: int = dataclasses.field(init=False)  # kept when the commands are let go of

    def __post_init__(self):
        self.command_count = len(self.commands)

    def node(self, state: SubmissionState, error: HalError | None = None) -> SubmissionNode:
        """What the submission-graph dump shows of it (no references to its buffers)."""
        return SubmissionNode(*self.node_fields(state, error))

    def node_fields(self, state: SubmissionState, error: HalError | None = None) -> tuple:
        """node()'s fields, as a tuple: the history keeps these for every finished
        submission, and makes the (frozen, slower to make) nodes only for a dump."""
        return (self.id, self.label, self.cq, state, [(s.label, v, _reached(s, v)) for s, v in self.waits],
                [(s.label, v) for s, v in self.signals], self.command_count,
                None if error is None else f"{error.code.name}: {error.message}")


def _reached(semaphore: HalSemaphore, value: int) -> bool | None:
    """True/False: the wait is (not yet) satisfied; None: the semaphore failed."""
    return None if semaphore.failure is not None else semaphore._value >= value


# Finished submissions kept for the submission-graph dump.
HISTORY = 64


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
        self._issued: dict[int, Submission] = {}  # in flight: issued to the backend, not complete
        # Finished submissions as SubmissionNode fields (Submission.node_fields): dump nodes are
        # built only when asked for, not on every completion.
        self._history: collections.deque[tuple] = collections.deque(maxlen=HISTORY)
        self._ids = itertools.count(1)
        self.profiler: profiling.TraceRecorder | None = None  # set while the device profiles

    # Submitting.
    def submit(self, submission: Submission) -> None:
        """Issues now if the waits allow, else queues it; raises (and fails the signals)
        if a wait has already failed."""
        submission.id = submission.id or next(self._ids)  # run_inline's, when the backend queued it instead
        state, detail = self._resolve(submission.waits)
        if state is Resolution.FAILED:
            self._fail(submission, detail)
            raise detail.copy()
        if state is not Resolution.PENDING:
            if submission.commands or detail:
                self._issue(submission, detail)
            else:  # nothing to run or wait for (queue_alloca, dealloca, barrier): done now
                self._take(submission)
                if self.profiler is not None:
                    submission.issued_ns = self.profiler.now()
                self._complete(submission, None)
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

    def _resolve(self, waits) -> tuple[Resolution, object]:
        """For a submission's waits together: (FAILED, error), (PENDING, None), or
        (EVENT, [backend events]): issuable now, with a device-side wait on each event
        (an empty list when every wait is reached)."""
        events, pending = [], False
        for semaphore, value in waits:
            state, detail = semaphore.resolve(value, self)
            if state is Resolution.FAILED:
                return state, detail
            if state is Resolution.EVENT:
                events.append(detail)
            elif state is Resolution.PENDING:
                pending = True
        return (Resolution.PENDING, None) if pending else (Resolution.EVENT, events)

    def run_inline(self, submission: Submission) -> bool:
        """Runs a submission without waits on this thread when its queue is idle
        (BackendDevice.execute_inline) and returns True once it is done, raising its
        failure; False, with nothing run, when the backend queues it instead. IREE
        orders queue work by semaphores alone, so work that waits on none may run now."""
        submission.id = next(self._ids)
        self._take(submission)
        recorder = self.profiler
        if recorder is not None:
            submission.issued_ns = recorder.now()
        with self._cond:
            self._issued[submission.id] = submission
        try:
            event = self._backend.execute_inline(submission.cq, submission.commands)
        except HalError as error:  # refused when enqueued: nothing ran
            self._fail(submission, error)
            raise
        if event is None:
            with self._cond:
                self._issued.pop(submission.id, None)
            for allocation in submission.in_use:
                allocation.end_use()
            submission.in_use = []
            return False
        log.debug("ran #%d %s inline on CQ%d: %d commands", submission.id, submission.label, submission.cq,
                  submission.command_count)
        error = event.error
        if recorder is not None:
            self._trace_completion(recorder, submission, error)
        if error is None:
            for allocation in submission.in_use:
                allocation.pull_mappings()
        self._finish(submission, error)
        if error is not None:
            raise error.copy()
        return True

    def _take(self, submission: Submission) -> None:
        """Holds the submission's allocations for its run (begin_use) and pushes host
        writes through their live mappings; fails it (raising) if one was deallocated."""
        gone = next((a for a in submission.allocations if a.deallocating), None)
        for allocation in submission.allocations if gone is None else ():
            if not allocation.begin_use():  # released: the memory stays only for work issued before
                gone = allocation
                break
            submission.in_use.append(allocation)
        if gone is not None:  # freed, or a dealloca ordered before this work: it must not touch the memory
            error = HalError(StatusCode.FAILED_PRECONDITION, f"{submission.label}: buffer {gone.label} was deallocated "
                                                             f"before this work could run")
            self._fail(submission, error)
            raise error.copy()
        if submission.deallocates is not None:
            submission.deallocates.deallocating = True
        for allocation in submission.in_use:  # host writes through live mappings first
            allocation.push_mappings()

    def _issue(self, submission: Submission, events: list) -> None:
        backend, cq = self._backend, submission.cq
        self._take(submission)
        recorder = self.profiler
        if recorder is not None:
            submission.issued_ns = recorder.now()
            for semaphore, value in submission.waits:
                if semaphore.failure is None and semaphore._value < value:
                    recorder.instant(recorder.queue_track(cq), f"wait {semaphore.label}>={value}",
                                     {"semaphore": semaphore.label, "value": value, "submission": submission.id,
                                      "kind": "device-side (event wait)"}, "semaphore")
        with self._cond:
            self._issued[submission.id] = submission
        log.debug("issue #%d %s on CQ%d: %d commands", submission.id, submission.label, cq, submission.command_count)
        with self._issue_lock:
            try:
                event = backend.enqueue_submission(cq, {id(e): e for e in events}.values(), submission.commands,
                                                   lambda error: self._complete(submission, error))
            except HalError as error:  # refused when enqueued (e.g. UNIMPLEMENTED on this backend): it fails alone
                backend.enqueue_record_event(cq)  # ends any failure stretch its earlier commands began
                self._fail(submission, error)
                raise
        for semaphore, value in submission.signals:
            semaphore.add_device_timepoint(value, event, self)

    def _complete(self, submission: Submission, error: HalError | None) -> None:
        """Runs on a backend queue thread when the submission's event is done."""
        recorder = self.profiler
        if recorder is not None:
            self._trace_completion(recorder, submission, error)
        if error is not None:
            self._fail(submission, error)
            return
        for allocation in submission.in_use:  # live mappings show what the work changed
            allocation.pull_mappings()
        for semaphore, value in submission.signals:
            try:
                semaphore._signal(value)
            except HalError as signal_error:  # the host signalled past it: the timeline is broken
                semaphore.fail(signal_error)
        self._finish(submission, None)

    @staticmethod
    def _trace_completion(recorder, submission: Submission, error: HalError | None) -> None:
        now = recorder.now()
        node = submission.node(SubmissionState.FAILED if error else SubmissionState.DONE, error)
        track = recorder.track(profiling.SUBMISSIONS, f"CQ{submission.cq} submissions", sort_key=submission.cq)
        recorder.async_slice(track, f"#{submission.id} {submission.label}", submission.id,
                             submission.issued_ns or now, now, node.trace_args())
        queue = recorder.queue_track(submission.cq)
        for semaphore, value in submission.signals:
            recorder.instant(queue, f"{'fail' if error else 'signal'} {semaphore.label}={value}",
                             {"semaphore": semaphore.label, "value": value, "submission": submission.id},
                             "semaphore", ts_ns=now)

    def _fail(self, submission: Submission, error: HalError) -> None:
        log.debug("submission #%d %s failed: %s", submission.id, submission.label, error)
        for semaphore, _ in submission.signals:
            semaphore.fail(error)
        self._finish(submission, error)

    def _finish(self, submission: Submission, error: HalError | None) -> None:
        with self._cond:
            self._issued.pop(submission.id, None)
            # A snapshot, not the submission: its semaphores refer to their device, and
            # the device's finalizer holds this scheduler (a dropped device would never go).
            self._history.append(submission.node_fields(SubmissionState.FAILED if error else SubmissionState.DONE,
                                                        error))
        if submission.on_done is not None:
            try:
                submission.on_done(error)
            except Exception:
                log.exception("completion action of %s failed", submission.label)
        # In flight still for the caller's on_done: let go of its buffers and data now.
        submission.on_done = None
        submission.commands = []
        submission.resources.clear()
        submission.allocations = frozenset()
        for allocation in submission.in_use:  # after on_done: a dealloca's release waits for its users
            allocation.end_use()
        submission.in_use = []
        submission.deallocates = None

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
            if state is Resolution.PENDING:
                continue
            with self._cond:
                if submission not in self._pending:
                    continue  # close() cancelled it meanwhile
                self._pending.remove(submission)
            for semaphore, _ in submission.waits:
                self._unwatch(semaphore)
            try:
                if state is Resolution.FAILED:
                    self._fail(submission, detail)
                else:
                    self._issue(submission, detail)
            except HalError as error:  # e.g. the backend closed under it
                self._fail(submission, error)

    def pending_count(self) -> int:
        with self._cond:
            return len(self._pending)

    def nodes(self) -> list[SubmissionNode]:
        """Every submission the dump shows: the last HISTORY finished, those in flight, and
        those waiting, in submission order."""
        with self._cond:
            nodes = [SubmissionNode(*fields) for fields in self._history]
            nodes += [s.node(SubmissionState.ISSUED) for s in self._issued.values()]
            nodes += [s.node(SubmissionState.WAITING) for s in self._pending]
        return sorted(nodes, key=lambda n: n.id)

    def close(self) -> None:
        """Cancels submissions still waiting; their signal semaphores fail with CANCELLED."""
        with self._cond:
            self._closed = True
            pending, self._pending = self._pending, []
            self._cond.notify()
        for submission in pending:
            self._fail(submission, HalError(StatusCode.CANCELLED, f"device closed before {submission.label} could run"))
