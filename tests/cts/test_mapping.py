"""Host mapping: map_zero/fill/read/write/copy with offsets and subspans, scoped
mappings with numpy views, write-back to the device, and mapping permissions.

Modelled on IREE's cts/buffer_mapping_test.h and buffer/mapping_test.cc.
"""

import gc

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
    pattern_bytes,
    raises_status,
    read_bytes,
    wait_ok,
)

SIZE = 128


@pytest.fixture(params=["device", "host"])
def memory_type(request):
    return DEVICE_MAPPABLE if request.param == "device" else MT.HOST_LOCAL


def _device_view(device, allocator, buf):
    """What the device holds: copy `buf` on the queue into a fresh buffer and read it."""
    out = new_buffer(allocator, buf.byte_length())
    sem = device.create_semaphore(0)
    device.queue_copy(buf, out, [], [(sem, 1)])
    wait_ok(sem, 1)
    return read_bytes(out)


# -- synchronous helpers ----------------------------------------------------------------

def test_map_zero_whole_and_range(allocator, memory_type):
    buf = new_buffer(allocator, SIZE, init=np.full(SIZE, 0xFF, np.uint8), memory_type=memory_type)
    buf.map_zero(4, 60)
    ref = np.full(SIZE, 0xFF, np.uint8)
    ref[4:64] = 0
    np.testing.assert_array_equal(read_bytes(buf), ref)
    buf.map_zero(0, SIZE)
    assert not read_bytes(buf).any()


@pytest.mark.parametrize("value,plen,offset,length", [
    (0x07, 1, 0, SIZE), (0x07, 1, 3, 17), (0xAB23, 2, 0, SIZE), (0xAB23, 2, 6, 40),
    (0xAB23CD45, 4, 0, SIZE), (0xAB23CD45, 4, 12, 100),
])
def test_map_fill(allocator, memory_type, value, plen, offset, length):
    base = det_bytes(SIZE, seed=5)
    buf = new_buffer(allocator, SIZE, init=base, memory_type=memory_type)
    pat = pattern_bytes(value, plen)
    buf.map_fill(offset, length, pat)
    ref = base.copy()
    ref[offset:offset + length] = np.frombuffer(pat * (length // plen), np.uint8)
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_map_fill_bad_pattern_length(allocator):
    buf = new_buffer(allocator, SIZE)
    with raises_status(SC.INVALID_ARGUMENT):
        buf.map_fill(0, 12, b"\x01\x02\x03")


def test_map_read_offsets(allocator, memory_type):
    data = det_bytes(SIZE, seed=6)
    buf = new_buffer(allocator, SIZE, init=data, memory_type=memory_type)
    assert buf.map_read() == data.tobytes()
    assert buf.map_read(0, 1) == data[:1].tobytes()
    assert buf.map_read(17, 33) == data[17:50].tobytes()
    assert buf.map_read(100) == data[100:].tobytes()
    assert buf.map_read(SIZE - 1, 1) == data[-1:].tobytes()


def test_map_write_offsets(allocator, memory_type):
    buf = new_buffer(allocator, SIZE, memory_type=memory_type)
    ref = np.zeros(SIZE, np.uint8)
    for offset, n, seed in [(0, 5, 1), (7, 13, 2), (64, 64, 3), (127, 1, 4)]:
        chunk = det_bytes(n, seed=seed)
        buf.map_write(offset, chunk.tobytes())
        ref[offset:offset + n] = chunk
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_map_write_accepts_buffer_protocol(allocator):
    buf = new_buffer(allocator, 16)
    buf.map_write(0, bytearray(b"\x01\x02\x03\x04"))
    buf.map_write(4, memoryview(b"\x05\x06"))
    buf.map_write(8, np.array([0x0A0B0C0D], dtype=np.uint32))
    assert buf.map_read(0, 12) == b"\x01\x02\x03\x04\x05\x06\x00\x00\x0D\x0C\x0B\x0A"


def test_map_copy(allocator, memory_type):
    src_data = det_bytes(SIZE, seed=7)
    src = new_buffer(allocator, SIZE, init=src_data, memory_type=memory_type)
    dst = new_buffer(allocator, SIZE, memory_type=memory_type)
    dst.map_copy(src, 5, 40, 33)
    ref = np.zeros(SIZE, np.uint8)
    ref[40:73] = src_data[5:38]
    np.testing.assert_array_equal(read_bytes(dst), ref)


def test_fill_zero(allocator):
    buf = new_buffer(allocator, SIZE, init=np.full(SIZE, 0x33, np.uint8))
    buf.fill_zero(32, 64)
    ref = np.full(SIZE, 0x33, np.uint8)
    ref[32:96] = 0
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_zero_length_ops_are_noops(allocator):
    data = det_bytes(SIZE, seed=8)
    buf = new_buffer(allocator, SIZE, init=data)
    buf.map_zero(10, 0)
    buf.map_fill(8, 0, b"\xFF\xFF\xFF\xFF")
    buf.map_write(20, b"")
    assert buf.map_read(30, 0) == b""
    np.testing.assert_array_equal(read_bytes(buf), data)


@pytest.mark.parametrize("call", [
    lambda b: b.map_read(SIZE - 4, 8),
    lambda b: b.map_read(SIZE + 1, 0),
    lambda b: b.map_write(SIZE - 2, b"\x00" * 4),
    lambda b: b.map_zero(SIZE - 8, 16),
    lambda b: b.map_fill(SIZE, 4, b"\x01"),
    lambda b: b.subspan(SIZE - 8, 16),
    lambda b: b.subspan(SIZE + 4, 0),
])
def test_out_of_range(allocator, call):
    buf = new_buffer(allocator, SIZE, init=det_bytes(SIZE, seed=9))
    with raises_status(SC.OUT_OF_RANGE):
        call(buf)
    # nothing was corrupted by the failed call
    np.testing.assert_array_equal(read_bytes(buf), det_bytes(SIZE, seed=9))


# -- subspans ---------------------------------------------------------------------------

def test_subspan_shares_storage(allocator, memory_type):
    base = det_bytes(SIZE, seed=10)
    buf = new_buffer(allocator, SIZE, init=base, memory_type=memory_type)
    sub = buf.subspan(16, 64)
    assert sub.byte_length() == 64
    np.testing.assert_array_equal(read_bytes(sub), base[16:80])
    sub.map_write(4, b"\xEE" * 8)
    sub.map_fill(32, 8, b"\x01\x02")
    sub.map_zero(60, 4)
    ref = base.copy()
    ref[20:28] = 0xEE
    ref[48:56] = [1, 2] * 4
    ref[76:80] = 0
    np.testing.assert_array_equal(read_bytes(buf), ref)
    np.testing.assert_array_equal(read_bytes(sub), ref[16:80])
    # a subspan cannot reach past its own end even though the parent continues
    with raises_status(SC.OUT_OF_RANGE):
        sub.map_read(60, 8)


def test_nested_subspan(allocator):
    base = det_bytes(SIZE, seed=11)
    buf = new_buffer(allocator, SIZE, init=base)
    inner = buf.subspan(8, 100).subspan(10, 20)
    assert inner.byte_length() == 20
    np.testing.assert_array_equal(read_bytes(inner), base[18:38])
    with raises_status(SC.OUT_OF_RANGE):
        buf.subspan(8, 100).subspan(90, 20)


def test_subspan_map_asarray(allocator):
    buf = new_buffer(allocator, SIZE)
    sub = buf.subspan(32, 16)
    with sub.map() as m:
        a = m.asarray((4,), np.uint32)
        a[:] = [1, 2, 3, 4]
    ref = np.zeros(SIZE, np.uint8)
    ref[32:48] = np.array([1, 2, 3, 4], np.uint32).view(np.uint8)
    np.testing.assert_array_equal(read_bytes(buf), ref)


# -- scoped mappings and write-back -------------------------------------------------------

def test_map_asarray_reads_contents(allocator, memory_type):
    data = np.arange(32, dtype=np.float32) * 0.5
    buf = new_buffer(allocator, 128, init=data.view(np.uint8), memory_type=memory_type)
    m = buf.map()
    np.testing.assert_array_equal(m.asarray((4, 8), np.float32), data.reshape(4, 8))
    m.unmap()


def test_with_block_writes_reach_device(device, allocator, memory_type):
    buf = new_buffer(allocator, SIZE, memory_type=memory_type)
    with buf.map() as m:
        a = m.asarray((SIZE,), np.uint8)
        a[:] = det_bytes(SIZE, seed=12)
    np.testing.assert_array_equal(_device_view(device, allocator, buf), det_bytes(SIZE, seed=12))
    np.testing.assert_array_equal(read_bytes(buf), det_bytes(SIZE, seed=12))


def test_flush_writes_reach_device(device, allocator):
    buf = new_buffer(allocator, SIZE)
    m = buf.map()
    a = m.asarray((SIZE // 4,), np.int32)
    a[:] = np.arange(SIZE // 4) - 7
    m.flush()
    got = _device_view(device, allocator, buf).view(np.int32)
    np.testing.assert_array_equal(got, np.arange(SIZE // 4) - 7)
    # a second round of writes on the same mapping is flushed too
    a[3] = 12345
    m.flush()
    assert _device_view(device, allocator, buf).view(np.int32)[3] == 12345
    m.unmap()


def test_unmap_writes_reach_device(device, allocator):
    buf = new_buffer(allocator, SIZE)
    m = buf.map()
    m.asarray((SIZE,), np.uint8)[10:20] = 0x44
    m.unmap()
    ref = np.zeros(SIZE, np.uint8)
    ref[10:20] = 0x44
    np.testing.assert_array_equal(_device_view(device, allocator, buf), ref)


def test_dropping_mapping_writes_back(device, allocator):
    buf = new_buffer(allocator, SIZE)
    m = buf.map()
    a = m.asarray((SIZE,), np.uint8)
    del m
    a[:8] = 0x99  # the array keeps the staging copy alive
    del a
    gc.collect()
    ref = np.zeros(SIZE, np.uint8)
    ref[:8] = 0x99
    np.testing.assert_array_equal(_device_view(device, allocator, buf), ref)


def test_flush_writes_back_only_changed_bytes(device, allocator):
    buf = new_buffer(allocator, 256)
    m = buf.map()
    a = m.asarray((256,), np.uint8)          # staged copy of all zeros
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x11", [], [(sem, 1)], target_offset=128, length=128)
    wait_ok(sem, 1)
    a[0:16] = 0xAA                           # host changes only the first 16 bytes
    m.flush()
    m.unmap()
    ref = np.zeros(256, np.uint8)
    ref[0:16] = 0xAA
    ref[128:] = 0x11                         # the device's writes survive the flush
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_flush_preserves_device_writes_between_host_changes(device, allocator):
    """Host changes at both ends of a mapping, the device writes the middle: the flush
    must write back the host's bytes only, not the whole span between them."""
    buf = new_buffer(allocator, 256)
    m = buf.map()
    a = m.asarray((256,), np.uint8)
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x11", [], [(sem, 1)], target_offset=64, length=128)
    wait_ok(sem, 1)
    a[0:4] = 0xAA
    a[252:256] = 0xBB
    m.flush()
    m.unmap()
    ref = np.zeros(256, np.uint8)
    ref[0:4] = 0xAA
    ref[64:192] = 0x11
    ref[252:256] = 0xBB
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_flush_interleaved_host_and_device_bytes(device, allocator):
    """Host changes every even byte, the device rewrote every byte meanwhile: only the
    even bytes may be written back."""
    buf = new_buffer(allocator, 64)
    m = buf.map()
    a = m.asarray((64,), np.uint8)
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x11", [], [(sem, 1)])
    wait_ok(sem, 1)
    a[::2] = 0xAA
    m.unmap()
    got = read_bytes(buf)
    assert (got[::2] == 0xAA).all() and (got[1::2] == 0x11).all()


def test_invalidate_drops_unflushed_host_changes(allocator):
    buf = new_buffer(allocator, 16)
    m = buf.map()
    m.asarray((16,), np.uint8)[:] = 9
    m.invalidate()
    assert not m.asarray((16,), np.uint8).any()
    m.unmap()
    assert not read_bytes(buf).any()


def test_host_local_mapping_is_coherent(device, allocator):
    buf = new_buffer(allocator, 16, memory_type=MT.HOST_LOCAL)
    m = buf.map()
    a = m.asarray((16,), np.uint8)
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x33", [], [(sem, 1)])
    wait_ok(sem, 1)
    assert (a == 0x33).all()       # no invalidate needed for HOST_COHERENT memory
    a[:4] = 1                      # and host writes are visible to the device at once
    out = _device_view(device, allocator, buf)
    assert out[:4].tolist() == [1] * 4 and (out[4:] == 0x33).all()
    m.unmap()


def test_map_range(allocator):
    buf = new_buffer(allocator, 32, init=np.arange(32, dtype=np.uint8))
    with buf.map(offset=4, length=8) as m:
        a = m.asarray((8,), np.uint8)
        assert a.tolist() == list(range(4, 12))
        a[:] = 0
    ref = np.arange(32, dtype=np.uint8)
    ref[4:12] = 0
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_asarray_larger_than_mapping(allocator):
    buf = new_buffer(allocator, 16)
    m = buf.map()
    with raises_status(SC.OUT_OF_RANGE):
        m.asarray((5,), np.float32)
    m.unmap()


def test_two_mappings_flush_independently(allocator):
    buf = new_buffer(allocator, 64)
    m1, m2 = buf.map(), buf.map()
    m1.asarray((64,), np.uint8)[0] = 1
    m2.asarray((64,), np.uint8)[63] = 2
    m1.flush()
    m2.flush()
    ref = np.zeros(64, np.uint8)
    ref[0], ref[63] = 1, 2
    np.testing.assert_array_equal(read_bytes(buf), ref)
    m1.unmap()
    m2.unmap()


def test_discard_write_mapping_writes_every_byte(allocator):
    """With DISCARD the previous contents are not read: every byte the host writes,
    even one that equals what the staging copy happened to hold, reaches the device."""
    buf = new_buffer(allocator, 64, init=np.full(64, 0xFF, np.uint8))
    with buf.map(access=hal.MemoryAccess.WRITE | hal.MemoryAccess.DISCARD) as m:
        m.asarray((64,), np.uint8)[:] = 0
    assert not read_bytes(buf).any()


def test_invalidate_rereads_device(device, allocator):
    buf = new_buffer(allocator, 64)
    m = buf.map()
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x22", [], [(sem, 1)])
    wait_ok(sem, 1)
    m.invalidate()
    assert (m.asarray((64,), np.uint8) == 0x22).all()
    m.unmap()


def test_buffer_view_map(device, allocator):
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    view = allocator.allocate_buffer_copy(DEVICE_MAPPABLE, USAGE_MAPPABLE, device, arr,
                                          hal.HalElementType.SINT_16)
    with view.map() as m:
        np.testing.assert_array_equal(m.asarray((2, 3), np.int16), arr)


# -- permissions ---------------------------------------------------------------------------

def _mappable(buf):
    mapping_bits = int(BU.MAPPING_SCOPED) | int(BU.MAPPING_PERSISTENT)
    return (has_bits(buf.memory_type(), MT.HOST_VISIBLE)
            and (int(buf.allowed_usage()) & mapping_bits) != 0)


@pytest.mark.parametrize("memory_type,usage", [
    (MT.DEVICE_LOCAL, USAGE_MAPPABLE),          # no HOST_VISIBLE
    (DEVICE_MAPPABLE, BU.DEFAULT),              # no MAPPING usage
    (MT.DEVICE_LOCAL, BU.DEFAULT),
])
def test_mapping_requires_host_visible_and_mapping_usage(allocator, memory_type, usage):
    buf = allocator.allocate_buffer(memory_type, usage, 64)
    calls = [lambda: buf.map(), lambda: buf.map_read(0, 4), lambda: buf.map_write(0, b"\x01"),
             lambda: buf.map_zero(0, 4)]
    if _mappable(buf):
        # the allocator granted the bits (as IREE allocators may); mapping must then work
        for call in calls:
            call()
        return
    for call in calls:
        with raises_status(SC.PERMISSION_DENIED):
            call()


def test_read_only_import_denies_writes(device, allocator):
    arr = np.arange(32, dtype=np.uint8)
    arr.flags.writeable = False
    buf = allocator.import_host_allocation(arr, MT.HOST_LOCAL, USAGE_MAPPABLE)
    assert not int(buf.allowed_access) & int(hal.MemoryAccess.WRITE)
    np.testing.assert_array_equal(read_bytes(buf), arr)
    for call in (lambda: buf.map_write(0, b"\x01"), lambda: buf.map_zero(0, 4),
                 lambda: buf.map_fill(0, 4, b"\x01"), lambda: buf.map(access=hal.MemoryAccess.WRITE)):
        with raises_status(SC.PERMISSION_DENIED):
            call()
    m = buf.map(access=hal.MemoryAccess.READ)
    np.testing.assert_array_equal(m.asarray((32,), np.uint8), arr)
    m.unmap()
    np.testing.assert_array_equal(arr, np.arange(32, dtype=np.uint8))


def test_map_with_access_bits(allocator):
    buf = new_buffer(allocator, 64, init=np.arange(64, dtype=np.uint8))
    m = buf.map(access=hal.MemoryAccess.READ)
    np.testing.assert_array_equal(m.asarray((64,), np.uint8), np.arange(64, dtype=np.uint8))
    m.unmap()
    with buf.map(access=hal.MemoryAccess.WRITE | hal.MemoryAccess.DISCARD) as m:
        m.asarray((64,), np.uint8)[:] = 0x77
    assert (read_bytes(buf) == 0x77).all()


def test_a_dropped_mapping_does_not_write_stale_bytes_over_device_work(device, allocator):
    """Issue 21: an array changed by the host, then overwritten by device work, then
    garbage-collected must not write its old bytes back (the mapping is coherent: the
    device's bytes came into it when the work completed)."""
    buf = new_buffer(allocator, 64)
    array = buf.map().asarray((64,), np.uint8)
    array[:] = 5
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x09", [], [(sem, 1)], target_offset=0, length=32)
    wait_ok(sem, 1)
    assert (array[:32] == 9).all() and (array[32:] == 5).all()
    del array
    gc.collect()
    got = read_bytes(buf)
    assert (got[:32] == 9).all() and (got[32:] == 5).all()
