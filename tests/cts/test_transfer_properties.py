"""Property tests: random sequences of fill / update / copy, recorded in command buffers
or issued as chained queue operations, must match a numpy model byte for byte."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .ctsutil import DEVICE_MAPPABLE, MT, new_buffer, read_bytes, wait_ok

SIZES = (96, 160)  # two buffers: device memory and host memory
TYPES = (DEVICE_MAPPABLE, MT.HOST_LOCAL)


@st.composite
def fill_op(draw):
    buf = draw(st.integers(0, 1))
    plen = draw(st.sampled_from([1, 2, 4]))
    size = SIZES[buf]
    offset = draw(st.integers(0, size // plen)) * plen
    length = draw(st.integers(0, (size - offset) // plen)) * plen
    pattern = draw(st.binary(min_size=plen, max_size=plen))
    return ("fill", buf, offset, length, pattern)


@st.composite
def update_op(draw):
    buf = draw(st.integers(0, 1))
    size = SIZES[buf]
    offset = draw(st.integers(0, size))
    data = draw(st.binary(min_size=0, max_size=size - offset))
    return ("update", buf, offset, data)


@st.composite
def copy_op(draw):
    src = draw(st.integers(0, 1))
    dst = draw(st.integers(0, 1))
    length = draw(st.integers(0, min(SIZES[src], SIZES[dst])))
    so = draw(st.integers(0, SIZES[src] - length))
    do = draw(st.integers(0, SIZES[dst] - length))
    if src == dst and length and so < do + length and do < so + length:
        do = so + length if so + 2 * length <= SIZES[dst] else None
        if do is None:
            return ("copy", src, dst, 0, 0, 0)
    return ("copy", src, dst, so, do, length)


ops_strategy = st.lists(st.one_of(fill_op(), update_op(), copy_op()), min_size=1, max_size=12)


def model(ops, init):
    bufs = [b.copy() for b in init]
    for op in ops:
        if op[0] == "fill":
            _, b, off, n, pat = op
            bufs[b][off:off + n] = np.frombuffer(pat * (n // len(pat)), np.uint8)
        elif op[0] == "update":
            _, b, off, data = op
            bufs[b][off:off + len(data)] = np.frombuffer(data, np.uint8)
        else:
            _, s, d, so, do, n = op
            bufs[d][do:do + n] = bufs[s][so:so + n].copy()
    return bufs


def _initial(allocator, seed):
    rng = np.random.default_rng(seed)
    init = [rng.integers(0, 256, n, dtype=np.uint8) for n in SIZES]
    bufs = [new_buffer(allocator, n, init=i, memory_type=t) for n, i, t in zip(SIZES, init, TYPES)]
    return init, bufs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy, seed=st.integers(0, 2**16))
def test_random_command_buffer_matches_model(device, allocator, ops, seed):
    from .ctsutil import submit_and_wait, transfer_cb
    init, bufs = _initial(allocator, seed)
    cb = transfer_cb(device)
    for op in ops:
        if op[0] == "fill":
            _, b, off, n, pat = op
            cb.fill(bufs[b], pat, off, n)
        elif op[0] == "update":
            _, b, off, data = op
            cb.update(data, bufs[b], off, len(data))
        else:
            _, s, d, so, do, n = op
            cb.copy(bufs[s], bufs[d], so, do, n)
        cb.execution_barrier()
    cb.end()
    submit_and_wait(device, cb)
    for got, want in zip(bufs, model(ops, init)):
        np.testing.assert_array_equal(read_bytes(got), want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy, seed=st.integers(0, 2**16))
def test_random_chained_queue_ops_match_model(device, allocator, ops, seed):
    init, bufs = _initial(allocator, seed)
    sem = device.create_semaphore(0)
    gate = device.create_semaphore(0)
    for i, op in enumerate(ops):
        wait = [(gate, 1)] if i == 0 else [(sem, i)]
        signal = [(sem, i + 1)]
        if op[0] == "fill":
            _, b, off, n, pat = op
            device.queue_fill(bufs[b], pat, wait, signal, target_offset=off, length=n)
        elif op[0] == "update":
            _, b, off, data = op
            device.queue_update(data, bufs[b], wait, signal, target_offset=off, length=len(data))
        else:
            _, s, d, so, do, n = op
            device.queue_copy(bufs[s], bufs[d], wait, signal, source_offset=so, target_offset=do,
                              length=n)
    gate.signal(1)  # everything was submitted before anything could run
    wait_ok(sem, len(ops))
    for got, want in zip(bufs, model(ops, init)):
        np.testing.assert_array_equal(read_bytes(got), want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host_writes=st.lists(st.tuples(st.integers(0, 95), st.binary(min_size=1, max_size=16)),
                            max_size=6),
       device_fills=st.lists(st.tuples(st.integers(0, 95), st.integers(0, 40), st.binary(min_size=1, max_size=1)),
                             max_size=4),
       seed=st.integers(0, 2**16))
def test_mapping_write_back_matches_model(device, allocator, host_writes, device_fills, seed):
    """Coherent mapping: device writes made after map() show in the mapped array once
    they complete; host writes after them land on top and reach the device."""
    n = SIZES[0]
    init = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    buf = new_buffer(allocator, n, init=init)
    m = buf.map()
    staged = m.asarray((n,), np.uint8)
    device_view = init.copy()
    sem = device.create_semaphore(0)
    for i, (off, length, pat) in enumerate(device_fills):
        length = min(length, n - off)
        device.queue_fill(buf, pat, [(sem, i)], [(sem, i + 1)], target_offset=off, length=length)
        device_view[off:off + length] = pat[0]
    wait_ok(sem, len(device_fills))
    np.testing.assert_array_equal(staged, device_view)  # the fills show in the mapped array
    expect = device_view.copy()
    for off, data in host_writes:
        data = np.frombuffer(data[: n - off], np.uint8)
        staged[off:off + len(data)] = data
        expect[off:off + len(data)] = data
    m.flush()
    np.testing.assert_array_equal(read_bytes(buf), expect)
    m.unmap()
