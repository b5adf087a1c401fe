"""Semaphore timepoints as asyncio futures (iree.runtime's `HalDeviceLoopBridge`).

IREE's bridge polls the semaphores from a thread of its own; here each semaphore already
tells its listeners when it moves (HalSemaphore.when_reached), so the bridge needs no
thread: the listener hands the result to the loop with `call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import threading

from hal.semaphore import HalSemaphore
from hal.status import HalError, StatusCode


class HalDeviceLoopBridge:
    """Bridges semaphores of one device to futures of one asyncio loop."""

    def __init__(self, device, loop: asyncio.AbstractEventLoop):
        self.device = device
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: dict[asyncio.Future, tuple | None] = {}  # future -> (semaphore, listener) once registered
        self._stopped = False

    def __repr__(self) -> str:
        return f"<HalDeviceLoopBridge of {self.device!r}: {len(self._pending)} pending>"

    def on_semaphore(self, semaphore: HalSemaphore, payload: int, value) -> asyncio.Future:
        """A future of the loop that gets `value` once `semaphore` reaches `payload`, or a
        RuntimeError if the semaphore fails first; cancelled by stop()."""
        if semaphore.device is not None and semaphore.device is not self.device:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{semaphore!r} belongs to {semaphore.device!r}, not to this bridge's device")
        future = self._loop.create_future()

        def reached(failure: HalError | None) -> None:
            with self._lock:
                if future not in self._pending:
                    return  # cancelled by stop()
                del self._pending[future]
            error = None if failure is None else RuntimeError(str(failure))
            self._loop.call_soon_threadsafe(_settle, future, value, error)

        with self._lock:
            if self._stopped:
                raise HalError(StatusCode.FAILED_PRECONDITION, "the bridge was stopped; make a new one")
            self._pending[future] = None  # its listener comes next; it may act at once
        listener = semaphore.when_reached(int(payload), reached)
        with self._lock:
            if future in self._pending:
                self._pending[future] = (semaphore, listener)
        return future

    def stop(self) -> None:
        """Cancels the futures still pending; later on_semaphore calls fail. Idempotent."""
        with self._lock:
            self._stopped = True
            pending, self._pending = self._pending, {}
        for future, entry in pending.items():
            if entry is not None:
                semaphore, listener = entry
                semaphore.remove_listener(listener)
            if self._loop.is_closed():
                continue
            self._loop.call_soon_threadsafe(future.cancel)


def _settle(future: asyncio.Future, value, error: BaseException | None) -> None:
    """Runs on the loop: sets the future (to `error` if given) unless it was cancelled meanwhile."""
    if future.done():
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)
