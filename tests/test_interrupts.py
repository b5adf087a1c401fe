"""Ctrl-C amid HAL calls (issue 21, finding 4): a KeyboardInterrupt landing inside a
HAL call used to leave a queue's busy flag set or the scheduler half-changed, and the
device never ran another command (the process could not even exit). HAL calls now
hold SIGINT until their critical sections end (hal.backend.interrupts_deferred)."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import hal
from hal.backend import interrupts_deferred

TIMEOUT_NS = 60 * 10**9


def test_an_interrupt_inside_the_block_arrives_at_its_end():
    reached_end = False
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a handler would have run by now
            reached_end = True
    assert reached_end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_nested_blocks_deliver_once_at_the_outer_end():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                steps.append("inner")
            steps.append("outer")
    assert steps == ["inner", "outer"]


def test_a_custom_handler_gets_the_signal():
    calls = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    try:
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert calls == []
        assert calls == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_it_does_nothing():
    errors = []

    def run():
        try:
            with interrupts_deferred():
                pass
        except Exception as error:  # noqa: BLE001 - recorded for the assertion
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert errors == []


def test_the_device_keeps_working_under_a_storm_of_interrupts():
    """SIGINT every ~0.2 ms while the main thread submits small transfers (run inline on
    the caller's thread) and waits: whatever the interrupts cut short, the device then
    runs a submission to completion and closes."""
    device = hal.create_device("tenstorrent")
    try:
        buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
        main, deadline = threading.main_thread().ident, time.monotonic() + 3

        go = threading.Event()

        def storm():
            go.wait()
            while time.monotonic() < deadline:
                signal.pthread_kill(main, signal.SIGINT)
                time.sleep(0.0002)

        interrupted, value = 0, 0
        sender = threading.Thread(target=storm, daemon=True)
        semaphore = device.create_semaphore(0)
        sender.start()
        calm = 0  # rounds since the storm ended: any signal still pending lands in the first
        while calm < 3:
            try:
                go.set()  # the storm starts once this loop catches what it throws
                calm = calm + 1 if not sender.is_alive() else 0
                value += 1
                device.queue_fill(buffer, np.uint32(value), [], [(semaphore, value)])
                semaphore.wait(value, timeout=TIMEOUT_NS)
            except KeyboardInterrupt:
                interrupted += 1
        assert interrupted > 0  # the storm did land
        done = device.create_semaphore(0)
        device.queue_fill(buffer, np.uint32(7), [], [(done, 1)])
        assert done.wait(1, timeout=TIMEOUT_NS), "the device no longer runs commands"
        assert np.frombuffer(buffer.map_read(0, 8), np.uint32).tolist() == [7, 7]
    finally:
        device.close()
