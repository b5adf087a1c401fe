"""Command buffer fill_buffer: patterns of 1/2/4 bytes over size/offset/alignment
classes (direct buffers and binding-table slots), checked byte-exact against numpy;
plus fill validation.

Modelled on IREE's command_buffer/fill_buffer_test.cc.
"""

import numpy as np
import pytest

import hal

from .ctsutil import (
    BU,
    MT,
    SC,
    filled_reference,
    new_buffer,
    pattern_bytes,
    raises_status,
    read_bytes,
    submit_and_wait,
    transfer_cb,
)

# (buffer_size, target_offset, length, pattern value, pattern length)
BASIC_CASES = [
    (1, 0, 1, 0x07, 1),
    (5, 0, 5, 0x07, 1),
    (16, 0, 1, 0x07, 1),
    (16, 0, 3, 0x07, 1),
    (16, 0, 8, 0x07, 1),
    (16, 2, 8, 0x07, 1),
    (2, 0, 2, 0xAB23, 2),
    (16, 0, 8, 0xAB23, 2),
    (16, 0, 10, 0xAB23, 2),
    (16, 2, 8, 0xAB23, 2),
    (4, 0, 4, 0xAB23CD45, 4),
    (20, 16, 4, 0xAB23CD45, 4),
    (16, 0, 8, 0xAB23CD45, 4),
    (16, 8, 8, 0xAB23CD45, 4),
]

# (pattern length, target offset, length, pattern): 19 size/alignment classes
ALIGNMENT_CLASSES = [
    (1, 0, 4, 0xA5), (1, 3, 31, 0x5A), (1, 17, 32, 0xC3), (1, 1, 33, 0x3C),
    (1, 16, 64, 0xD7), (1, 7, 1024, 0x19), (1, 31, 64 * 1024, 0xE1),
    (2, 0, 4, 0xBEEF), (2, 2, 30, 0xCAFE), (2, 6, 32, 0x1234), (2, 18, 34, 0xA1B2),
    (2, 4, 1024, 0x0F0E), (2, 14, 64 * 1024, 0x55AA),
    (4, 0, 4, 0xDEADCAFE), (4, 4, 28, 0xCAFEF00D), (4, 8, 32, 0x12345678),
    (4, 20, 36, 0xA5A55A5A), (4, 4, 1024, 0x0F1E2D3C), (4, 12, 64 * 1024, 0x55AA33CC),
]


def run_fill(device, allocator, size, offset, length, pattern, indirect):
    buf = new_buffer(allocator, size)
    cb = transfer_cb(device, binding_capacity=1 if indirect else 0)
    target = hal.BindingRef(0, offset, length) if indirect else buf
    if indirect:
        cb.fill(target, pattern)
    else:
        cb.fill(target, pattern, target_offset=offset, length=length)
    cb.end()
    submit_and_wait(device, cb, binding_table=[buf] if indirect else None)
    return read_bytes(buf)


@pytest.mark.parametrize("indirect", [False, True], ids=["direct", "indirect"])
@pytest.mark.parametrize("size,offset,length,value,plen", BASIC_CASES)
def test_fill_basic(device, allocator, size, offset, length, value, plen, indirect):
    pat = pattern_bytes(value, plen)
    got = run_fill(device, allocator, size, offset, length, pat, indirect)
    np.testing.assert_array_equal(got, filled_reference(size, offset, length, pat))


@pytest.mark.parametrize("indirect", [False, True], ids=["direct", "indirect"])
@pytest.mark.parametrize("plen,offset,length,value", ALIGNMENT_CLASSES)
def test_fill_alignment_classes(device, allocator, plen, offset, length, value, indirect):
    size = offset + length + 16
    pat = pattern_bytes(value, plen)
    got = run_fill(device, allocator, size, offset, length, pat, indirect)
    np.testing.assert_array_equal(got, filled_reference(size, offset, length, pat))


def test_fill_explicit_byte_values_little_endian(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.fill(buf, pattern_bytes(0xAB23CD45, 4), target_offset=8, length=8, end=True)
    submit_and_wait(device, cb)
    assert read_bytes(buf).tolist() == [0] * 8 + [0x45, 0xCD, 0x23, 0xAB] * 2


@pytest.mark.parametrize("pattern", [
    np.array([0xAB23], dtype=np.uint16),
    np.uint16(0xAB23),
    bytearray(b"\x23\xAB"),
], ids=["ndarray", "np-scalar", "bytearray"])
def test_fill_pattern_buffer_protocol_objects(device, allocator, pattern):
    buf = new_buffer(allocator, 12)
    cb = transfer_cb(device)
    cb.fill(buf, pattern, 2, 8)
    cb.end()
    submit_and_wait(device, cb)
    assert read_bytes(buf).tolist() == [0, 0] + [0x23, 0xAB] * 4 + [0, 0]


def test_fill_whole_buffer_default_length(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x5A\x5B\x5C\x5D")
    cb.end()
    submit_and_wait(device, cb)
    assert read_bytes(buf).tolist() == [0x5A, 0x5B, 0x5C, 0x5D] * 16


def test_fill_default_length_runs_to_end(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01", target_offset=40)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(read_bytes(buf), filled_reference(64, 40, 24, b"\x01"))


def test_fill_zero_length_is_noop(device, allocator):
    buf = new_buffer(allocator, 32)
    cb = transfer_cb(device)
    cb.fill(buf, b"\xFF\xFF\xFF\xFF", target_offset=8, length=0)
    cb.end()
    submit_and_wait(device, cb)
    assert not read_bytes(buf).any()


def test_fill_subspan_target(device, allocator):
    buf = new_buffer(allocator, 64)
    sub = buf.subspan(16, 32)
    cb = transfer_cb(device)
    cb.fill(sub, b"\x0F\xF0", target_offset=4, length=8)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(read_bytes(buf), filled_reference(64, 20, 8, b"\x0F\xF0"))


def test_fill_device_only_memory(device, allocator):
    dev_only = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 256)
    host = new_buffer(allocator, 256, memory_type=MT.HOST_LOCAL)
    cb = transfer_cb(device)
    cb.fill(dev_only, b"\x00")
    cb.fill(dev_only, b"\x11\x22\x33\x44", target_offset=64, length=128)
    cb.execution_barrier()
    cb.copy(dev_only, host)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(
        read_bytes(host), filled_reference(256, 64, 128, b"\x11\x22\x33\x44"))


def test_fills_in_one_command_buffer_run_in_order(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01")
    cb.fill(buf, b"\x02\x02", target_offset=8, length=32)
    cb.fill(buf, b"\x03\x03\x03\x03", target_offset=16, length=8)
    cb.end()
    submit_and_wait(device, cb)
    ref = np.full(64, 1, np.uint8)
    ref[8:40] = 2
    ref[16:24] = 3
    np.testing.assert_array_equal(read_bytes(buf), ref)


# -- validation -------------------------------------------------------------------------

def test_fill_pattern_not_buffer_protocol(device, allocator):
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.fill(new_buffer(allocator, 16), 7)


@pytest.mark.parametrize("pattern", [b"", b"\x01\x02\x03", b"\x01" * 8])
def test_fill_bad_pattern_length(device, allocator, pattern):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.fill(buf, pattern, 0, 16)


@pytest.mark.parametrize("pattern,offset,length", [
    (b"\x01\x02", 1, 4),
    (b"\x01\x02", 0, 3),
    (b"\x01\x02\x03\x04", 2, 8),
    (b"\x01\x02\x03\x04", 0, 6),
])
def test_fill_misaligned(device, allocator, pattern, offset, length):
    buf = new_buffer(allocator, 32)
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.fill(buf, pattern, offset, length)


@pytest.mark.parametrize("ref_offset,ref_length", [(2, 8), (0, 6), (4, 2)])
def test_fill_misaligned_binding_ref(device, allocator, ref_offset, ref_length):
    """The alignment rule holds for a binding-table reference's own offset/length too:
    refused when recorded or when executed, and nothing is written."""
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device, binding_capacity=1)
    try:
        cb.fill(hal.BindingRef(0, ref_offset, ref_length), b"\x01\x02\x03\x04")
    except hal.HalError as e:
        assert e.code == SC.INVALID_ARGUMENT, e
        return
    cb.end()
    sem = device.create_semaphore(0)
    with raises_status(SC.INVALID_ARGUMENT):
        device.queue_execute(cb, [], [(sem, 1)], binding_table=[buf])
    assert not read_bytes(buf).any()


def test_fill_into_read_only_import_denied(device, allocator):
    arr = np.zeros(16, np.uint8)
    arr.flags.writeable = False
    buf = allocator.import_host_allocation(arr, MT.HOST_LOCAL, BU.DEFAULT)
    cb = transfer_cb(device)
    with raises_status(SC.PERMISSION_DENIED):
        cb.fill(buf, b"\x01")
    sem = device.create_semaphore(0)
    with raises_status(SC.PERMISSION_DENIED):
        device.queue_fill(buf, b"\x01", [], [(sem, 1)])
    assert not arr.any()


@pytest.mark.parametrize("offset,length", [(28, 8), (36, 4), (0, 36)])
def test_fill_out_of_range(device, allocator, offset, length):
    buf = new_buffer(allocator, 32)
    cb = transfer_cb(device)
    with raises_status(SC.OUT_OF_RANGE):
        cb.fill(buf, b"\x01\x02\x03\x04", offset, length)


def test_failed_record_leaves_command_buffer_usable(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.fill(buf, b"\x01\x02\x03", 0, 12)
    cb.fill(buf, b"\x09")
    cb.end()
    submit_and_wait(device, cb)
    assert (read_bytes(buf) == 9).all()
