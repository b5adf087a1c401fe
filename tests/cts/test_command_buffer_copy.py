"""Command buffer copy_buffer: sizes 4..64K x offset pairs, 1 MiB, host<->device,
binding tables, and validation of command buffer state and copy arguments.

Modelled on IREE's command_buffer/copy_buffer_test.cc and command_buffer_test.h.
"""

import numpy as np
import pytest

import hal

from .ctsutil import (
    BU,
    DEVICE_MAPPABLE,
    MT,
    SC,
    det_bytes,
    new_buffer,
    raises_status,
    read_bytes,
    submit_and_wait,
    transfer_cb,
    wait_ok,
)

SIZES = [4, 8, 12, 16, 100, 256, 1024, 4096, 65536]
OFFSETS = [(0, 0), (8, 8), (4, 4), (1, 2)]


def run_copy(device, allocator, size, src_off, dst_off, indirect=False,
             src_type=DEVICE_MAPPABLE, dst_type=DEVICE_MAPPABLE):
    src_data = det_bytes(src_off + size + 8, seed=size + src_off)
    src = new_buffer(allocator, len(src_data), init=src_data, memory_type=src_type)
    dst_size = dst_off + size + 8
    dst = new_buffer(allocator, dst_size, memory_type=dst_type)
    cb = transfer_cb(device, binding_capacity=2 if indirect else 0)
    if indirect:
        cb.copy(hal.BindingRef(0), hal.BindingRef(1), src_off, dst_off, size)
    else:
        cb.copy(src, dst, src_off, dst_off, size)
    cb.end()
    submit_and_wait(device, cb, binding_table=[src, dst] if indirect else None)
    ref = np.zeros(dst_size, np.uint8)
    ref[dst_off:dst_off + size] = src_data[src_off:src_off + size]
    np.testing.assert_array_equal(read_bytes(dst), ref)
    np.testing.assert_array_equal(read_bytes(src), src_data)  # source untouched


@pytest.mark.parametrize("src_off,dst_off", OFFSETS)
@pytest.mark.parametrize("size", SIZES)
def test_copy_sizes_and_offsets(device, allocator, size, src_off, dst_off):
    run_copy(device, allocator, size, src_off, dst_off)


@pytest.mark.parametrize("src_off,dst_off", OFFSETS)
@pytest.mark.parametrize("size", [4, 100, 4096])
def test_copy_indirect(device, allocator, size, src_off, dst_off):
    run_copy(device, allocator, size, src_off, dst_off, indirect=True)


@pytest.mark.parametrize("src_type,dst_type", [
    (MT.HOST_LOCAL, DEVICE_MAPPABLE), (DEVICE_MAPPABLE, MT.HOST_LOCAL),
    (MT.HOST_LOCAL, MT.HOST_LOCAL),
], ids=["h2d", "d2h", "h2h"])
def test_copy_between_memory_types(device, allocator, src_type, dst_type):
    run_copy(device, allocator, 1000, 4, 12, src_type=src_type, dst_type=dst_type)


def test_copy_1mib(device, allocator):
    n = 1 << 20
    data = det_bytes(n, seed=77)
    src = new_buffer(allocator, n, init=data)
    dst = new_buffer(allocator, n)
    cb = transfer_cb(device)
    cb.copy(src, dst)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(read_bytes(dst), data)


def test_copy_whole_buffer_from_host(device, allocator):
    host = new_buffer(allocator, 1024, init=np.full(1024, 0x54, np.uint8),
                      memory_type=MT.HOST_LOCAL)
    dev = new_buffer(allocator, 1024)
    cb = transfer_cb(device)
    cb.copy(host, dev, end=True)
    submit_and_wait(device, cb)
    assert (read_bytes(dev) == 0x54).all()


def test_copy_sub_buffer(device, allocator):
    # zero-fill, copy a sub-region from a smaller host buffer, zero the remainder
    n = 1024
    dev = new_buffer(allocator, n, init=np.full(n, 0xCC, np.uint8))
    host = new_buffer(allocator, n // 2, init=np.full(n // 2, 0x88, np.uint8),
                      memory_type=MT.HOST_LOCAL)
    cb = transfer_cb(device)
    cb.fill(dev, b"\x00", 0, 8)
    cb.copy(host, dev, 4, 8, n // 2 - 4)
    cb.fill(dev, b"\x00", 8 + n // 2 - 4, n - (8 + n // 2 - 4))
    cb.end()
    submit_and_wait(device, cb)
    ref = np.zeros(n, np.uint8)
    ref[8:8 + n // 2 - 4] = 0x88
    np.testing.assert_array_equal(read_bytes(dev), ref)


def test_copy_within_one_buffer_disjoint(device, allocator):
    data = det_bytes(128, seed=5)
    buf = new_buffer(allocator, 128, init=data)
    cb = transfer_cb(device)
    cb.copy(buf, buf, 0, 64, 64)
    cb.end()
    submit_and_wait(device, cb)
    ref = data.copy()
    ref[64:] = data[:64]
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_copy_chain_in_order(device, allocator):
    a = new_buffer(allocator, 64, init=det_bytes(64, seed=1))
    b = new_buffer(allocator, 64)
    c = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.copy(a, b)
    cb.execution_barrier()
    cb.copy(b, c)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(read_bytes(c), det_bytes(64, seed=1))


def test_copy_zero_length_is_noop(device, allocator):
    a = new_buffer(allocator, 16, init=np.full(16, 1, np.uint8))
    b = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.copy(a, b, 0, 0, 0)
    cb.end()
    submit_and_wait(device, cb)
    assert not read_bytes(b).any()


# -- copy validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("src_off,dst_off,length", [(0, 0, 0), (4, 0, 8), (0, 8, 16)])
def test_copy_overlap_invalid(device, allocator, src_off, dst_off, length):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    if length == 0:
        # zero-length ranges never overlap
        cb.copy(buf, buf, src_off, dst_off, length)
        return
    with raises_status(SC.INVALID_ARGUMENT):
        cb.copy(buf, buf, src_off, dst_off, length)


def test_copy_overlap_through_subspans(device, allocator):
    buf = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.copy(buf.subspan(0, 32), buf.subspan(16, 32), 0, 0, 32)


@pytest.mark.parametrize("src_off,dst_off,length", [(60, 0, 8), (0, 60, 8), (0, 0, 65),
                                                    (70, 0, 1)])
def test_copy_out_of_range(device, allocator, src_off, dst_off, length):
    a = new_buffer(allocator, 64)
    b = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    with raises_status(SC.OUT_OF_RANGE):
        cb.copy(a, b, src_off, dst_off, length)


def test_copy_default_length_mismatch(device, allocator):
    a = new_buffer(allocator, 64)
    b = new_buffer(allocator, 32)
    cb = transfer_cb(device)
    with raises_status(SC.INVALID_ARGUMENT, SC.OUT_OF_RANGE):
        cb.copy(a, b)


def test_copy_without_transfer_usage(device, allocator):
    src = allocator.allocate_buffer(DEVICE_MAPPABLE, BU.TRANSFER_TARGET | BU.MAPPING, 16)
    dst = allocator.allocate_buffer(DEVICE_MAPPABLE, BU.TRANSFER_SOURCE | BU.MAPPING, 16)
    ok = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    if not int(src.allowed_usage()) & int(BU.TRANSFER_SOURCE):
        with raises_status(SC.PERMISSION_DENIED):
            cb.copy(src, ok)
    else:
        cb.copy(src, ok)
    if not int(dst.allowed_usage()) & int(BU.TRANSFER_TARGET):
        with raises_status(SC.PERMISSION_DENIED):
            cb.copy(ok, dst)
    else:
        cb.copy(ok, dst)


def test_fill_without_transfer_usage(device, allocator):
    buf = allocator.allocate_buffer(DEVICE_MAPPABLE, BU.DISPATCH_STORAGE | BU.MAPPING, 16)
    cb = transfer_cb(device)
    if int(buf.allowed_usage()) & int(BU.TRANSFER_TARGET):
        cb.fill(buf, b"\x01")
    else:
        with raises_status(SC.PERMISSION_DENIED):
            cb.fill(buf, b"\x01")


# -- command buffer state --------------------------------------------------------------------

def test_create_command_buffer_is_recording(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = device.create_command_buffer()
    cb.fill(buf, b"\x05")
    with raises_status(SC.FAILED_PRECONDITION):
        cb.begin()
    cb.end()
    submit_and_wait(device, cb)
    assert (read_bytes(buf) == 5).all()


def test_record_before_begin(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = hal.HalCommandBuffer(device, begin=False)
    with raises_status(SC.FAILED_PRECONDITION):
        cb.fill(buf, b"\x01")
    with raises_status(SC.FAILED_PRECONDITION):
        cb.end()
    cb.begin()
    cb.fill(buf, b"\x01")
    cb.end()
    submit_and_wait(device, cb)
    assert (read_bytes(buf) == 1).all()


def test_record_after_end(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.end()
    for call in (lambda: cb.fill(buf, b"\x01"), lambda: cb.update(b"\x01", buf),
                 lambda: cb.copy(buf, new_buffer(allocator, 16)),
                 lambda: cb.execution_barrier(), lambda: cb.end()):
        with raises_status(SC.FAILED_PRECONDITION):
            call()


def test_second_begin_failed_precondition(device):
    cb = transfer_cb(device)
    with raises_status(SC.FAILED_PRECONDITION):
        cb.begin()


def test_execute_not_ended_failed_precondition(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01")
    sem = device.create_semaphore(0)
    with raises_status(SC.FAILED_PRECONDITION):
        device.queue_execute(cb, [], [(sem, 1)])
    not_begun = hal.HalCommandBuffer(device, begin=False)
    with raises_status(SC.FAILED_PRECONDITION):
        device.queue_execute([not_begun], [], [(sem, 1)])
    assert not read_bytes(buf).any()


def test_one_shot_executed_twice_failed_precondition(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = device.create_command_buffer(mode=hal.CommandBufferMode.ONE_SHOT)
    cb.fill(buf, b"\x01")
    cb.end()
    submit_and_wait(device, cb)
    sem = device.create_semaphore(0)
    with raises_status(SC.FAILED_PRECONDITION):
        device.queue_execute(cb, [], [(sem, 1)])


def test_execute_after_buffer_released(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01")
    cb.end()
    buf.release()
    sem = device.create_semaphore(0)
    with raises_status(SC.FAILED_PRECONDITION):
        device.queue_execute(cb, [], [(sem, 1)])


def test_copy_from_read_only_import_allowed_into_it_denied(device, allocator):
    arr = np.arange(16, dtype=np.uint8)
    arr.flags.writeable = False
    ro = allocator.import_host_allocation(arr, MT.HOST_LOCAL, BU.DEFAULT)
    dst = new_buffer(allocator, 16)
    cb = transfer_cb(device)
    cb.copy(ro, dst)
    with raises_status(SC.PERMISSION_DENIED):
        cb.copy(dst, ro)
    cb.end()
    submit_and_wait(device, cb)
    np.testing.assert_array_equal(read_bytes(dst), arr)


def test_inline_execution_mode_rules(device, allocator):
    M = hal.CommandBufferMode
    with raises_status(SC.INVALID_ARGUMENT):
        device.create_command_buffer(mode=M.ALLOW_INLINE_EXECUTION)  # needs ONE_SHOT
    with raises_status(SC.INVALID_ARGUMENT):
        device.create_command_buffer(mode=M.ONE_SHOT | M.ALLOW_INLINE_EXECUTION,
                                     binding_capacity=1)
    buf = new_buffer(allocator, 16)
    gate = device.create_semaphore(0)
    cb = device.create_command_buffer(mode=M.ONE_SHOT | M.ALLOW_INLINE_EXECUTION)
    cb.fill(buf, b"\x08")
    cb.end()
    sem = device.create_semaphore(0)
    with raises_status(SC.INVALID_ARGUMENT):
        device.queue_execute(cb, [(gate, 1)], [(sem, 1)])
    device.queue_execute(cb, [], [(sem, 1)])
    wait_ok(sem, 1)
    assert (read_bytes(buf) == 8).all()


def test_category_mismatch(device, allocator):
    buf = new_buffer(allocator, 16)
    cb = device.create_command_buffer(categories=hal.CommandCategory.DISPATCH)
    with raises_status(SC.FAILED_PRECONDITION):
        cb.fill(buf, b"\x01")


def test_empty_command_buffer_executes(device):
    cb = transfer_cb(device)
    cb.end()
    submit_and_wait(device, cb)


def test_several_command_buffers_in_one_submission_run_in_order(device, allocator):
    a = new_buffer(allocator, 64, init=det_bytes(64, seed=3))
    b = new_buffer(allocator, 64)
    cbs = []
    for step in range(3):
        cb = transfer_cb(device)
        if step == 0:
            cb.copy(a, b)
        elif step == 1:
            cb.fill(b, b"\x00", 0, 32)
        else:
            cb.copy(b, a)
        cb.end()
        cbs.append(cb)
    submit_and_wait(device, cbs)
    ref = det_bytes(64, seed=3)
    ref[:32] = 0
    np.testing.assert_array_equal(read_bytes(a), ref)


def test_reusable_command_buffer_executed_three_times(device, allocator):
    counter_src = new_buffer(allocator, 4, init=np.frombuffer(np.uint32(1).tobytes(), np.uint8))
    acc = new_buffer(allocator, 12)
    cb = device.create_command_buffer(mode=hal.CommandBufferMode.DEFAULT,
                                      categories=hal.CommandCategory.TRANSFER)
    # shift the accumulator right by 4 bytes, then write the source into slot 0
    cb.copy(acc, acc, 4, 8, 4)
    cb.execution_barrier()
    cb.copy(acc, acc, 0, 4, 4)
    cb.execution_barrier()
    cb.copy(counter_src, acc, 0, 0, 4)
    cb.end()
    sem = device.create_semaphore(0)
    for i in range(1, 4):
        counter_src.map_write(0, np.uint32(i * 10).tobytes())
        device.queue_execute(cb, [(sem, i - 1)] if i > 1 else [], [(sem, i)])
        wait_ok(sem, i)
    np.testing.assert_array_equal(np.frombuffer(acc.map_read(), np.uint32), [30, 20, 10])


def test_reusable_command_buffer_queued_back_to_back(device, allocator):
    buf = new_buffer(allocator, 4)
    one = new_buffer(allocator, 4, init=np.frombuffer(np.uint32(7).tobytes(), np.uint8))
    cb = device.create_command_buffer(mode=hal.CommandBufferMode.DEFAULT)
    cb.copy(one, buf)
    cb.end()
    sem = device.create_semaphore(0)
    for i in range(1, 4):
        device.queue_execute(cb, [(sem, i - 1)], [(sem, i)])
    wait_ok(sem, 3)
    assert np.frombuffer(buf.map_read(), np.uint32)[0] == 7


# -- binding tables -------------------------------------------------------------------------

def test_binding_table_resolved_at_execute(device, allocator):
    cb = device.create_command_buffer(mode=hal.CommandBufferMode.DEFAULT, binding_capacity=2)
    cb.fill(hal.BindingRef(0, 4, 8), b"\x3C")
    cb.copy(hal.BindingRef(0), hal.BindingRef(1, 16, 32), 0, 0, 32)
    cb.end()
    pairs = [(new_buffer(allocator, 32), new_buffer(allocator, 64)) for _ in range(2)]
    for a, b in pairs:
        submit_and_wait(device, cb, binding_table=[a, b])
    ref_a = np.zeros(32, np.uint8)
    ref_a[4:12] = 0x3C
    ref_b = np.zeros(64, np.uint8)
    ref_b[16:48] = ref_a
    for a, b in pairs:
        np.testing.assert_array_equal(read_bytes(a), ref_a)
        np.testing.assert_array_equal(read_bytes(b), ref_b)


def test_binding_ref_offset_bounds_length(device, allocator):
    cb = transfer_cb(device, binding_capacity=1)
    cb.fill(hal.BindingRef(0, 8, 16), b"\x01\x02\x03\x04")
    cb.end()
    buf = new_buffer(allocator, 32)
    submit_and_wait(device, cb, binding_table=[buf])
    ref = np.zeros(32, np.uint8)
    ref[8:24] = [1, 2, 3, 4] * 4
    np.testing.assert_array_equal(read_bytes(buf), ref)


def test_binding_slot_past_capacity_out_of_range(device, allocator):
    cb = transfer_cb(device, binding_capacity=2)
    with raises_status(SC.OUT_OF_RANGE):
        cb.fill(hal.BindingRef(2), b"\x01")
    cb0 = transfer_cb(device)
    with raises_status(SC.OUT_OF_RANGE):
        cb0.fill(hal.BindingRef(0), b"\x01")


def test_binding_table_too_small_at_execute(device, allocator):
    cb = transfer_cb(device, binding_capacity=2)
    cb.copy(hal.BindingRef(0), hal.BindingRef(1), 0, 0, 16)
    cb.end()
    sem = device.create_semaphore(0)
    with raises_status(SC.OUT_OF_RANGE, SC.INVALID_ARGUMENT):
        device.queue_execute(cb, [], [(sem, 1)], binding_table=[new_buffer(allocator, 16)])
