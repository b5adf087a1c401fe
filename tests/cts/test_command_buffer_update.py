"""Command buffer update_buffer: whole buffer, offsets, subspans, 256 B payloads,
capture at record time, validation.

Modelled on IREE's command_buffer/update_buffer_test.cc.
"""

import numpy as np
import pytest

import hal

from .ctsutil import BU, MT, SC, det_bytes, new_buffer, raises_status, read_bytes, submit_and_wait, transfer_cb

SOURCE = bytes([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8])


def run_update(device, buf, source, target_offset=0, length=None):
    cb = transfer_cb(device)
    if length is None:
        cb.update(source, buf, target_offset)
    else:
        cb.update(source, buf, target_offset, length)
    cb.end()
    submit_and_wait(device, cb)


def test_update_whole_buffer(device, allocator):
    buf = new_buffer(allocator, 16)
    run_update(device, buf, SOURCE)
    assert read_bytes(buf).tobytes() == SOURCE


def test_update_with_offsets(device, allocator):
    buf = new_buffer(allocator, 16)
    run_update(device, buf, memoryview(SOURCE)[4:], target_offset=4, length=8)
    assert read_bytes(buf).tobytes() == bytes(4) + SOURCE[4:12] + bytes(4)


def test_update_subspan(device, allocator):
    buf = new_buffer(allocator, 16)
    sub = buf.subspan(4, 8)
    run_update(device, sub, memoryview(SOURCE)[4:8], target_offset=4, length=4)
    assert read_bytes(buf).tobytes() == bytes(8) + SOURCE[4:8] + bytes(4)
    assert read_bytes(sub).tobytes() == bytes(4) + SOURCE[4:8]


@pytest.mark.parametrize("source_offset,target_offset,length", [
    (0, 0, 4), (3, 0, 8), (5, 4, 8), (1, 1, 4), (0, 0, 16), (0, 0, 256), (7, 33, 256),
    (0, 0, 65536),
])
def test_update_size_and_alignment_classes(device, allocator, source_offset, target_offset,
                                           length):
    source = det_bytes(source_offset + length + 8, seed=length + source_offset)
    size = target_offset + length + 8
    buf = new_buffer(allocator, size)
    run_update(device, buf, source[source_offset:source_offset + length], target_offset)
    ref = np.zeros(size, np.uint8)
    ref[target_offset:target_offset + length] = source[source_offset:source_offset + length]
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_update_length_takes_prefix_of_source(device, allocator):
    buf = new_buffer(allocator, 16)
    run_update(device, buf, SOURCE, target_offset=2, length=6)
    assert read_bytes(buf).tobytes() == bytes(2) + SOURCE[:6] + bytes(8)


def test_update_typed_numpy_source(device, allocator):
    vals = np.array([1.5, -2.25, 3.0, 1e30], dtype=np.float32)
    buf = new_buffer(allocator, 16)
    run_update(device, buf, vals)
    np.testing.assert_array_equal(np.frombuffer(buf.map_read(), np.float32), vals)


def test_update_captures_source_at_record_time(device, allocator):
    buf = new_buffer(allocator, 256)
    src = bytearray(det_bytes(256, seed=42).tobytes())
    arr = np.arange(64, dtype=np.uint32)
    cb = transfer_cb(device)
    cb.update(src, buf, 0, 128)
    cb.update(arr, buf, 128, 256 - 128)
    src[:] = bytes(256)      # mutate after recording
    arr[:] = 0
    cb.end()
    submit_and_wait(device, cb)
    got = read_bytes(buf)
    np.testing.assert_array_equal(got[:128], det_bytes(256, seed=42)[:128])
    np.testing.assert_array_equal(got[128:].view(np.uint32), np.arange(32, dtype=np.uint32))


def test_reusable_update_replays_captured_data(device, allocator):
    buf = new_buffer(allocator, 8)
    src = bytearray(b"ABCDEFGH")
    cb = device.create_command_buffer(mode=hal.CommandBufferMode.DEFAULT)
    cb.update(src, buf)
    cb.end()
    src[:] = b"zzzzzzzz"
    sem = device.create_semaphore(0)
    for i in range(1, 4):
        buf.map_write(0, bytes(8))
        device.queue_execute(cb, [], [(sem, i)])
        assert sem.wait(i, timeout=10_000_000_000)
        assert buf.map_read() == b"ABCDEFGH"


def test_updates_interleaved_with_fills_in_order(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.fill(buf, b"\xEE")
    cb.update(b"\x01\x02\x03\x04", buf, 10)
    cb.fill(buf, b"\x00", target_offset=12, length=1)
    cb.end()
    submit_and_wait(device, cb)
    ref = np.full(64, 0xEE, np.uint8)
    ref[10:14] = [1, 2, 0, 4]
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_update_zero_length_is_noop(device, allocator):
    buf = new_buffer(allocator, 16)
    run_update(device, buf, SOURCE, target_offset=4, length=0)
    assert not read_bytes(buf).any()


# -- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("target_offset,length", [(12, 8), (20, 4), (0, 17)])
def test_update_out_of_range(device, allocator, target_offset, length):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    with raises_status(SC.OUT_OF_RANGE):
        cb.update(bytes(32), buf, target_offset, length)


def test_update_length_longer_than_source(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    with raises_status(SC.OUT_OF_RANGE, SC.INVALID_ARGUMENT):
        cb.update(b"\x01\x02\x03\x04", buf, 0, 16)


def test_update_target_without_transfer_usage(device, allocator):
    buf = allocator.allocate_buffer(MT.DEVICE_LOCAL | MT.HOST_VISIBLE,
                                    BU.DISPATCH_STORAGE | BU.MAPPING, 16)
    cb = transfer_cb(device)
    if int(buf.allowed_usage()) & int(BU.TRANSFER_TARGET):
        cb.update(SOURCE, buf)           # allocator granted TRANSFER: update must work
        cb.end()
        submit_and_wait(device, cb)
        assert read_bytes(buf).tobytes() == SOURCE
    else:
        with raises_status(SC.PERMISSION_DENIED):
            cb.update(SOURCE, buf)
