"""HalEvent split barriers recorded in command buffers (IREE's cts/event_test.h).
Recording must be validated and execution must keep command order."""

import numpy as np

import hal

from .ctsutil import SC, new_buffer, raises_status, read_bytes, submit_and_wait, transfer_cb


def test_create_event(device):
    assert isinstance(device.create_event(), hal.HalEvent)


def test_signal_wait_reset_keep_order(device, allocator):
    buf = new_buffer(allocator, 16)
    event = device.create_event()
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01")
    cb.signal_event(event)
    cb.wait_events([event])
    cb.fill(buf, b"\x02", 0, 8)
    cb.reset_event(event)
    cb.end()
    submit_and_wait(device, cb)
    assert read_bytes(buf).tolist() == [2] * 8 + [1] * 8


def test_event_commands_outside_recording(device):
    event = device.create_event()
    cb = hal.HalCommandBuffer(device, begin=False)
    for call in (lambda: cb.signal_event(event), lambda: cb.reset_event(event),
                 lambda: cb.wait_events([event])):
        with raises_status(SC.FAILED_PRECONDITION):
            call()


def test_event_argument_type_checked(device):
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.signal_event(object())
    with raises_status(SC.INVALID_ARGUMENT):
        cb.wait_events([device.create_event(), "not an event"])


def test_wait_on_event_never_signalled_does_not_hang(device, allocator):
    buf = new_buffer(allocator, 4)
    cb = transfer_cb(device)
    cb.wait_events([device.create_event()])
    cb.update(np.uint32(0xC0FFEE).tobytes(), buf)
    cb.end()
    submit_and_wait(device, cb)
    assert np.frombuffer(buf.map_read(), np.uint32)[0] == 0xC0FFEE
