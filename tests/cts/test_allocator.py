"""Allocator: compatibility, empty allocations, host import, statistics, exhaustion.

Modelled on IREE's cts/allocator_test.h and buffer/allocator_test.cc.
"""

import gc
import re

import numpy as np
import pytest

import hal

from .ctsutil import (
    BU,
    DEVICE_MAPPABLE,
    MT,
    SC,
    USAGE_MAPPABLE,
    det_bytes,
    has_bits,
    new_buffer,
    raises_status,
    read_bytes,
    wait_ok,
)


def _live(stats, kind):
    return stats[f"{kind}_bytes_allocated"] - stats[f"{kind}_bytes_freed"]


# -- compatibility ------------------------------------------------------------------

@pytest.mark.parametrize("memory_type", [MT.DEVICE_LOCAL, MT.HOST_LOCAL, DEVICE_MAPPABLE])
def test_query_compatibility_allocatable(allocator, memory_type):
    compat = allocator.query_buffer_compatibility(memory_type, BU.DEFAULT, BU.TRANSFER, 1024)
    assert has_bits(compat, hal.BufferCompatibility.ALLOCATABLE)
    assert has_bits(compat, hal.BufferCompatibility.QUEUE_TRANSFER)


def test_query_compatibility_dispatch(allocator):
    compat = allocator.query_buffer_compatibility(
        MT.DEVICE_LOCAL, BU.DEFAULT, BU.DISPATCH_STORAGE, 4096)
    assert has_bits(compat, hal.BufferCompatibility.ALLOCATABLE)
    assert has_bits(compat, hal.BufferCompatibility.QUEUE_DISPATCH)


def test_allocate_reports_requested_properties(allocator):
    buf = allocator.allocate_buffer(DEVICE_MAPPABLE, USAGE_MAPPABLE, 1000)
    assert buf.byte_length() == 1000
    assert has_bits(buf.memory_type(), MT.DEVICE_LOCAL)
    assert has_bits(buf.memory_type(), MT.HOST_VISIBLE)
    assert has_bits(buf.allowed_usage(), BU.TRANSFER)
    assert has_bits(buf.allowed_usage(), BU.DISPATCH_STORAGE)
    assert has_bits(buf.allowed_access, hal.MemoryAccess.READ | hal.MemoryAccess.WRITE)


# -- empty allocation ------------------------------------------------------------------

@pytest.mark.parametrize("memory_type", [DEVICE_MAPPABLE, MT.HOST_LOCAL])
def test_allocate_empty_buffer(allocator, memory_type):
    buf = allocator.allocate_buffer(memory_type, USAGE_MAPPABLE, 0)
    assert buf.byte_length() == 0
    assert buf.map_read() == b""


def test_empty_buffer_usable_in_queue_ops(device, allocator):
    empty = allocator.allocate_buffer(DEVICE_MAPPABLE, USAGE_MAPPABLE, 0)
    sem = device.create_semaphore(0)
    device.queue_fill(empty, b"\x01", [], [(sem, 1)])
    device.queue_copy(empty, empty, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)


# -- import ----------------------------------------------------------------------------

def test_import_host_allocation_zero_copy(allocator):
    arr = np.zeros(256, dtype=np.uint8)
    buf = allocator.import_host_allocation(arr, MT.HOST_LOCAL, USAGE_MAPPABLE)
    assert buf.byte_length() == 256
    # host writes to the array are seen through the buffer...
    arr[:] = det_bytes(256, seed=1)
    np.testing.assert_array_equal(read_bytes(buf), arr)
    # ...and buffer writes land in the array
    buf.map_write(16, b"\xAA" * 8)
    assert bytes(arr[16:24]) == b"\xAA" * 8
    assert arr[15] == det_bytes(256, seed=1)[15]


def test_import_host_allocation_typed_array(allocator):
    arr = np.arange(64, dtype=np.float32)
    buf = allocator.import_host_allocation(arr, MT.HOST_LOCAL, USAGE_MAPPABLE)
    assert buf.byte_length() == arr.nbytes
    arr *= 2
    got = np.frombuffer(buf.map_read(), dtype=np.float32)
    np.testing.assert_array_equal(got, np.arange(64, dtype=np.float32) * 2)


def test_import_keeps_source_alive(allocator):
    arr = np.full(128, 0x5C, dtype=np.uint8)
    buf = allocator.import_host_allocation(arr, MT.HOST_LOCAL, USAGE_MAPPABLE)
    del arr
    gc.collect()
    assert read_bytes(buf).tolist() == [0x5C] * 128


def test_imported_buffer_in_queue_ops(device, allocator):
    src = np.arange(256, dtype=np.uint8)
    dst = np.zeros(256, dtype=np.uint8)
    bsrc = allocator.import_host_allocation(src, MT.HOST_LOCAL, USAGE_MAPPABLE)
    bdst = allocator.import_host_allocation(dst, MT.HOST_LOCAL, USAGE_MAPPABLE)
    dev = new_buffer(allocator, 256)
    sem = device.create_semaphore(0)
    device.queue_copy(bsrc, dev, [], [(sem, 1)])
    device.queue_copy(dev, bdst, [(sem, 1)], [(sem, 2)], source_offset=0, target_offset=0)
    wait_ok(sem, 2)
    np.testing.assert_array_equal(dst, src)


# -- copies, views -----------------------------------------------------------------------

def test_allocate_buffer_copy_plain(device, allocator):
    data = det_bytes(300, seed=2)
    buf = allocator.allocate_buffer_copy(DEVICE_MAPPABLE, USAGE_MAPPABLE, device, data)
    assert isinstance(buf, hal.HalBuffer)
    assert buf.byte_length() == 300
    np.testing.assert_array_equal(read_bytes(buf), data)
    # the copy is not aliased with the source
    data[:] = 0
    assert read_bytes(buf).any()


def test_allocate_buffer_copy_with_element_type_gives_view(device, allocator):
    arr = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    view = allocator.allocate_buffer_copy(DEVICE_MAPPABLE, USAGE_MAPPABLE, device, arr,
                                          hal.HalElementType.FLOAT_32)
    assert isinstance(view, hal.HalBufferView)
    assert list(view.shape) == [3, 4]
    assert view.element_type == int(hal.HalElementType.FLOAT_32)
    assert view.byte_length == 48
    assert view.get_buffer().byte_length() == 48
    got = view.map().asarray((3, 4), np.float32)
    np.testing.assert_array_equal(got, arr)


def test_allocate_buffer_copy_noncontiguous(device, allocator):
    base = np.arange(64, dtype=np.int32).reshape(8, 8)
    arr = base[:, ::2]  # not C-contiguous
    view = allocator.allocate_buffer_copy(DEVICE_MAPPABLE, USAGE_MAPPABLE, device, arr,
                                          hal.HalElementType.SINT_32)
    assert list(view.shape) == [8, 4]
    np.testing.assert_array_equal(view.map().asarray((8, 4), np.int32), arr)


def test_allocate_host_staging_buffer_copy(device, allocator):
    data = det_bytes(100, seed=3)
    buf = allocator.allocate_host_staging_buffer_copy(device, data)
    assert buf.byte_length() == 100
    np.testing.assert_array_equal(read_bytes(buf), data)


def test_buffer_view_construction(allocator):
    buf = new_buffer(allocator, 64)
    view = hal.HalBufferView(buf, [4, 4], hal.HalElementType.UINT_32)
    assert list(view.shape) == [4, 4]
    assert view.element_type == int(hal.HalElementType.UINT_32)
    assert view.byte_length == 64


# -- statistics ---------------------------------------------------------------------------

def test_statistics_track_device_allocations(allocator):
    assert allocator.has_statistics
    before = dict(allocator.statistics)
    for key in ("host_bytes_peak", "host_bytes_allocated", "host_bytes_freed",
                "device_bytes_peak", "device_bytes_allocated", "device_bytes_freed"):
        assert key in before
    a = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 64 * 1024)
    b = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 32 * 1024)
    mid = dict(allocator.statistics)
    grown = mid["device_bytes_allocated"] - before["device_bytes_allocated"]
    assert grown >= 96 * 1024
    assert mid["device_bytes_peak"] >= _live(mid, "device") >= _live(before, "device") + 96 * 1024
    a.release()
    b.release()
    after = dict(allocator.statistics)
    assert after["device_bytes_freed"] - before["device_bytes_freed"] == grown
    assert _live(after, "device") == _live(before, "device")
    assert after["device_bytes_peak"] == mid["device_bytes_peak"]
    assert isinstance(allocator.formatted_statistics, str) and allocator.formatted_statistics


def test_statistics_freed_when_unreferenced(allocator):
    before = dict(allocator.statistics)
    buf = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 8192)
    assert _live(allocator.statistics, "device") > _live(before, "device")
    del buf
    gc.collect()
    assert _live(allocator.statistics, "device") == _live(before, "device")


def test_statistics_track_host_allocations(allocator):
    before = dict(allocator.statistics)
    buf = allocator.allocate_buffer(MT.HOST_LOCAL, USAGE_MAPPABLE, 4096)
    mid = dict(allocator.statistics)
    assert mid["host_bytes_allocated"] - before["host_bytes_allocated"] >= 4096
    assert mid["device_bytes_allocated"] == before["device_bytes_allocated"]
    buf.release()
    assert _live(allocator.statistics, "host") == _live(before, "host")


def test_release_twice_is_harmless(allocator):
    before = dict(allocator.statistics)
    buf = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 4096)
    buf.release()
    buf.release()
    after = dict(allocator.statistics)
    assert _live(after, "device") == _live(before, "device")


def test_trim_keeps_live_buffers(allocator):
    buf = new_buffer(allocator, 512, init=det_bytes(512, seed=4))
    allocator.trim()
    np.testing.assert_array_equal(read_bytes(buf), det_bytes(512, seed=4))


# -- exhaustion -----------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["huge", "dram_size_plus_one"])
def test_too_large_allocation_resource_exhausted(device, allocator, which):
    size = 1 << 50 if which == "huge" else device.query_i64("tt.device", "dram_size") + 1
    before = dict(allocator.statistics)
    with raises_status(SC.RESOURCE_EXHAUSTED) as info:
        allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, size)
    msg = info.value.message
    # the message gives sizes (the request, per bank or in total, and what is free)
    assert re.search(r"\d{4,}", msg), msg
    after = dict(allocator.statistics)
    assert _live(after, "device") == _live(before, "device")
    # nothing was lost: the allocator still works
    buf = new_buffer(allocator, 64, init=np.arange(64, dtype=np.uint8))
    np.testing.assert_array_equal(read_bytes(buf), np.arange(64, dtype=np.uint8))


def test_large_allocation_spanning_banks(device, allocator):
    """Larger than one DRAM bank; only the touched bytes need real memory."""
    size = device.query_i64("tt.device", "dram_bank_size") * 2 + 12345
    buf = allocator.allocate_buffer(DEVICE_MAPPABLE, USAGE_MAPPABLE, size)
    assert buf.byte_length() == size
    head, tail = det_bytes(100, seed=20), det_bytes(100, seed=21)
    buf.map_write(0, head)
    buf.map_write(size - 100, tail)
    np.testing.assert_array_equal(read_bytes(buf, 0, 100), head)
    np.testing.assert_array_equal(read_bytes(buf, size - 100, 100), tail)
    buf.release()


def test_allocations_do_not_alias(allocator):
    bufs = [new_buffer(allocator, 4096, init=np.full(4096, i, np.uint8)) for i in range(8)]
    for i, buf in enumerate(bufs):
        assert (read_bytes(buf) == i).all()


def test_a_host_buffer_beyond_the_machine_is_resource_exhausted(allocator):
    """Issue 21: a 1 TiB HOST_LOCAL allocation raised numpy's MemoryError."""
    with raises_status(SC.RESOURCE_EXHAUSTED):
        allocator.allocate_buffer(hal.MemoryType.HOST_LOCAL, hal.BufferUsage.DEFAULT, 1 << 50)
