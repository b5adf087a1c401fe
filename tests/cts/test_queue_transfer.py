"""Queue-ordered transfers without command buffers: queue_fill / queue_update / queue_copy.

Modelled on IREE's queue/queue_transfer_test.cc.
"""

import numpy as np
import pytest

from .ctsutil import MT, SC, det_bytes, filled_reference, new_buffer, pattern_bytes, raises_status, read_bytes, wait_ok


def _done(device):
    return device.create_semaphore(0)


def queue_fill_and_wait(device, buf, pattern, offset=0, length=None):
    sem = _done(device)
    if length is None:
        device.queue_fill(buf, pattern, [], [(sem, 1)], target_offset=offset)
    else:
        device.queue_fill(buf, pattern, [], [(sem, 1)], target_offset=offset, length=length)
    wait_ok(sem, 1)


# -- fill ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value,plen,size", [(0xAB, 1, 1024), (0xBEEF, 2, 1024),
                                             (0xDEADCAFE, 4, 4096)])
def test_fill_entire_buffer(device, allocator, value, plen, size):
    buf = new_buffer(allocator, size)
    pat = pattern_bytes(value, plen)
    queue_fill_and_wait(device, buf, pat)
    np.testing.assert_array_equal(read_bytes(buf), filled_reference(size, 0, size, pat))


def test_fill_subrange(device, allocator):
    buf = new_buffer(allocator, 256)
    queue_fill_and_wait(device, buf, pattern_bytes(0xCAFEF00D, 4), 64, 128)
    np.testing.assert_array_equal(
        read_bytes(buf), filled_reference(256, 64, 128, pattern_bytes(0xCAFEF00D, 4)))


def test_fill_large_buffer(device, allocator):
    size = 256 * 1024
    buf = new_buffer(allocator, size)
    queue_fill_and_wait(device, buf, pattern_bytes(0x12345678, 4))
    assert (np.frombuffer(buf.map_read(), np.uint32) == 0x12345678).all()


@pytest.mark.parametrize("plen,offset,length,value", [
    (1, 0, 8, 0x5B), (1, 3, 31, 0x5A), (1, 17, 32, 0xC3), (1, 31, 65536, 0xE1),
    (2, 2, 30, 0xCAFE), (2, 18, 34, 0xA1B2), (2, 14, 65536, 0x55AA),
    (4, 4, 28, 0xCAFEF00D), (4, 20, 36, 0xA5A55A5A), (4, 12, 65536, 0x55AA33CC),
])
def test_fill_alignment_classes(device, allocator, plen, offset, length, value):
    size = offset + length + 16
    buf = new_buffer(allocator, size)
    pat = pattern_bytes(value, plen)
    queue_fill_and_wait(device, buf, pat, offset, length)
    np.testing.assert_array_equal(read_bytes(buf), filled_reference(size, offset, length, pat))


def test_fill_validation(device, allocator):
    buf = new_buffer(allocator, 32)
    sem = _done(device)
    with raises_status(SC.INVALID_ARGUMENT):
        device.queue_fill(buf, b"\x01\x02\x03", [], [(sem, 1)])
    with raises_status(SC.INVALID_ARGUMENT):
        device.queue_fill(buf, b"\x01\x02\x03\x04", [], [(sem, 1)], target_offset=2, length=8)
    with raises_status(SC.OUT_OF_RANGE):
        device.queue_fill(buf, b"\x01", [], [(sem, 1)], target_offset=16, length=32)
    assert sem.query() == 0 and not read_bytes(buf).any()


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole_p150"])
def test_transfers_on_each_arch(arch):
    """Interleaving differs per arch (bank count, alignment): odd sizes and offsets."""
    import hal
    dev = hal.create_device(f"tenstorrent://mock?arch={arch}")
    alloc = dev.allocator
    n = 3 * 4096 + 77
    data = det_bytes(n, seed=13)
    src = new_buffer(alloc, n, init=data)
    dst = new_buffer(alloc, n + 11)
    sem = _done(dev)
    dev.queue_copy(src, dst, [], [(sem, 1)], source_offset=5, target_offset=9, length=n - 5)
    dev.queue_fill(dst, b"\x7E\x7F", [(sem, 1)], [(sem, 2)], target_offset=4096, length=64)
    wait_ok(sem, 2)
    ref = np.zeros(n + 11, np.uint8)
    ref[9:9 + n - 5] = data[5:]
    ref[4096:4160] = [0x7E, 0x7F] * 32
    np.testing.assert_array_equal(read_bytes(dst), ref)


# -- update -------------------------------------------------------------------------------

def test_update_entire_buffer(device, allocator):
    data = np.arange(100, 164, dtype=np.uint32)
    buf = new_buffer(allocator, data.nbytes)
    sem = _done(device)
    device.queue_update(data, buf, [], [(sem, 1)])
    wait_ok(sem, 1)
    np.testing.assert_array_equal(np.frombuffer(buf.map_read(), np.uint32), data)


def test_update_subrange(device, allocator):
    source = np.arange(1, 65, dtype=np.uint8)
    buf = new_buffer(allocator, 256)
    sem = _done(device)
    device.queue_update(source, buf, [], [(sem, 1)], target_offset=32, length=64)
    wait_ok(sem, 1)
    ref = np.zeros(256, np.uint8)
    ref[32:96] = source
    np.testing.assert_array_equal(read_bytes(buf), ref)


@pytest.mark.parametrize("source_offset,target_offset,length", [
    (0, 0, 4), (3, 0, 8), (5, 4, 8), (1, 1, 4), (0, 0, 16), (64, 0, 64),
])
def test_update_size_and_alignment_classes(device, allocator, source_offset, target_offset,
                                           length):
    source = det_bytes(source_offset + length + 8, seed=source_offset * 7 + length)
    size = target_offset + length + 8
    buf = new_buffer(allocator, size)
    sem = _done(device)
    device.queue_update(memoryview(source)[source_offset:], buf, [], [(sem, 1)],
                        target_offset=target_offset, length=length)
    wait_ok(sem, 1)
    ref = np.zeros(size, np.uint8)
    ref[target_offset:target_offset + length] = source[source_offset:source_offset + length]
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_update_captures_host_data_at_call_time(device, allocator):
    buf = new_buffer(allocator, 64)
    gate, done = _done(device), _done(device)
    src = bytearray(b"\x11" * 64)
    arr = np.full(16, 0x22, np.uint8)
    device.queue_update(src, buf, [(gate, 1)], [(done, 1)], length=48)
    device.queue_update(arr, buf, [(done, 1)], [(done, 2)], target_offset=48)
    src[:] = b"\xEE" * 64   # mutate after the call, before the queue runs
    arr[:] = 0xEE
    del arr
    gate.signal(1)
    wait_ok(done, 2)
    assert read_bytes(buf).tolist() == [0x11] * 48 + [0x22] * 16


def test_update_validation(device, allocator):
    buf = new_buffer(allocator, 16)
    sem = _done(device)
    with raises_status(SC.OUT_OF_RANGE):
        device.queue_update(bytes(8), buf, [], [(sem, 1)], target_offset=12)
    # asking for more bytes than the source holds is an error (as for cb.update), not a
    # silently shorter write
    with raises_status(SC.OUT_OF_RANGE, SC.INVALID_ARGUMENT):
        device.queue_update(b"\x01\x02\x03\x04", buf, [], [(sem, 1)], length=16)
    assert sem.query() == 0 and not read_bytes(buf).any()


# -- copy ----------------------------------------------------------------------------------

def test_copy_entire_buffer(device, allocator):
    src = new_buffer(allocator, 512, init=np.full(512, 0xAA, np.uint8))
    dst = new_buffer(allocator, 512)
    sem = _done(device)
    device.queue_copy(src, dst, [], [(sem, 1)])
    wait_ok(sem, 1)
    assert (read_bytes(dst) == 0xAA).all()


@pytest.mark.parametrize("src_off,dst_off,length", [(0, 0, 4), (8, 8, 100), (4, 4, 4096),
                                                    (1, 2, 1000), (17, 3, 65536)])
def test_copy_with_offsets(device, allocator, src_off, dst_off, length):
    data = det_bytes(src_off + length + 8, seed=length)
    src = new_buffer(allocator, len(data), init=data)
    size = dst_off + length + 8
    dst = new_buffer(allocator, size)
    sem = _done(device)
    device.queue_copy(src, dst, [], [(sem, 1)], source_offset=src_off, target_offset=dst_off,
                      length=length)
    wait_ok(sem, 1)
    ref = np.zeros(size, np.uint8)
    ref[dst_off:dst_off + length] = data[src_off:src_off + length]
    np.testing.assert_array_equal(read_bytes(dst), ref)


def test_copy_host_device_round_trip(device, allocator):
    data = det_bytes(4096, seed=31)
    host_in = new_buffer(allocator, 4096, init=data, memory_type=MT.HOST_LOCAL)
    host_out = new_buffer(allocator, 4096, memory_type=MT.HOST_LOCAL)
    dev = allocator.allocate_buffer(MT.DEVICE_LOCAL, host_in.allowed_usage(), 4096)
    sem = _done(device)
    device.queue_copy(host_in, dev, [], [(sem, 1)])
    device.queue_copy(dev, host_out, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    np.testing.assert_array_equal(read_bytes(host_out), data)


def test_copy_validation(device, allocator):
    a = new_buffer(allocator, 64)
    b = new_buffer(allocator, 32)
    sem = _done(device)
    with raises_status(SC.OUT_OF_RANGE):
        device.queue_copy(a, b, [], [(sem, 1)], length=64)
    with raises_status(SC.INVALID_ARGUMENT):
        device.queue_copy(a, a, [], [(sem, 1)], source_offset=0, target_offset=8, length=16)
    assert sem.query() == 0


def test_burst_of_chained_copies(device, allocator):
    """64 queue_copy ops of 64 bytes, each waiting on the previous one."""
    n, chunk = 64, 64
    data = det_bytes(n * chunk, seed=64)
    src = new_buffer(allocator, n * chunk, init=data)
    dst = new_buffer(allocator, n * chunk)
    sem = _done(device)
    for i in range(n):
        # reverse the chunk order so misplaced copies are caught
        device.queue_copy(src, dst, [(sem, i)], [(sem, i + 1)], source_offset=i * chunk,
                          target_offset=(n - 1 - i) * chunk, length=chunk)
    wait_ok(sem, n)
    expect = data.reshape(n, chunk)[::-1].reshape(-1)
    np.testing.assert_array_equal(read_bytes(dst), expect)


def test_relay_of_copies_and_fills(device, allocator):
    """Copy a<->b 64 times, zeroing the source after each copy: only a strict order
    ends with the data back in `a` and `b` all zeros."""
    bufs = [new_buffer(allocator, 64, init=det_bytes(64, seed=2)), new_buffer(allocator, 64)]
    sem = _done(device)
    for i in range(64):
        src, dst = bufs[i % 2], bufs[(i + 1) % 2]
        device.queue_copy(src, dst, [(sem, 2 * i)], [(sem, 2 * i + 1)])
        device.queue_fill(src, b"\x00", [(sem, 2 * i + 1)], [(sem, 2 * i + 2)])
    wait_ok(sem, 128)
    np.testing.assert_array_equal(read_bytes(bufs[0]), det_bytes(64, seed=2))
    assert not read_bytes(bufs[1]).any()
