"""Shared helpers for the conformance tests: buffers, reads, status checks, submits."""

import contextlib
import threading

import numpy as np
import pytest

import hal

MT = hal.MemoryType
BU = hal.BufferUsage
SC = hal.StatusCode

# Generous completion timeout (ns): a correct device is far faster; a broken one
# fails the test instead of hanging it.
TIMEOUT_NS = 10_000_000_000

# Device memory the host can map (staged), usable for transfers, dispatch and mapping.
DEVICE_MAPPABLE = MT.DEVICE_LOCAL | MT.HOST_VISIBLE
USAGE_MAPPABLE = BU.DEFAULT | BU.MAPPING


def new_buffer(allocator, size, init=None, memory_type=DEVICE_MAPPABLE, usage=USAGE_MAPPABLE):
    """Allocates a buffer and initialises it (zeros unless `init` is given) via mapping."""
    buf = allocator.allocate_buffer(memory_type, usage, size)
    if size:
        data = bytes(size) if init is None else bytes(np.asarray(init, dtype=np.uint8))
        assert len(data) == size
        buf.map_write(0, data)
    return buf


def read_bytes(buf, offset=0, length=None):
    """The buffer's bytes as a uint8 numpy array (synchronous map_read)."""
    return np.frombuffer(buf.map_read(offset, length), dtype=np.uint8).copy()


def det_bytes(n, seed=0):
    """Deterministic pseudo-random bytes."""
    return np.random.default_rng(seed).integers(0, 256, size=n, dtype=np.uint8)


def pattern_bytes(value, length):
    return int(value).to_bytes(length, "little")


def filled_reference(size, offset, length, pattern, base=None):
    """numpy reference for a fill of `pattern` (bytes) over [offset, offset+length)."""
    ref = np.zeros(size, np.uint8) if base is None else np.array(base, dtype=np.uint8)
    reps = length // len(pattern)
    ref[offset:offset + length] = np.frombuffer(pattern * reps, dtype=np.uint8)
    return ref


@contextlib.contextmanager
def raises_status(*codes):
    """Expects a hal.HalError whose code is one of `codes`."""
    with pytest.raises(hal.HalError) as info:
        yield info
    err = info.value
    assert err.code in codes, f"expected {[c.name for c in codes]}, got {err.code!r}: {err}"
    if err.code == SC.INVALID_ARGUMENT:
        assert isinstance(err, ValueError)
    if err.code == SC.OUT_OF_RANGE:
        assert isinstance(err, IndexError)


def wait_ok(sem, value, timeout=TIMEOUT_NS):
    assert sem.wait(value, timeout=timeout), f"semaphore did not reach {value} in time"


def submit_and_wait(device, command_buffers, binding_table=None):
    sem = device.create_semaphore(0)
    if binding_table is None:
        device.queue_execute(command_buffers, [], [(sem, 1)])
    else:
        device.queue_execute(command_buffers, [], [(sem, 1)], binding_table=binding_table)
    wait_ok(sem, 1)


def transfer_cb(device, binding_capacity=0):
    """A begun command buffer in the iree.runtime constructor form (reusable)."""
    return hal.HalCommandBuffer(device, binding_capacity=binding_capacity, begin=True)


def has_bits(value, bits):
    return (int(value) & int(bits)) == int(bits)


def run_threads(target, count: int, timeout_s: float = 30) -> None:
    """Runs target(k) for k in range(count) on threads; fails if one hangs, re-raises
    the first error a thread hit."""
    errors = []

    def guarded(k):
        try:
            target(k)
        except BaseException as e:  # noqa: BLE001 - re-raised below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s)
    assert not any(t.is_alive() for t in threads), "a submitting thread hung"
    if errors:
        raise errors[0]
