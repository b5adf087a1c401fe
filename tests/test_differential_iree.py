"""Differential tests: `hal` (device "tenstorrent") against `iree.runtime` (local-task).

Each scenario is one function written purely against the iree.runtime HAL API; it
takes a module `rt` and a device and returns what it observes (bytes as numpy arrays,
plus shapes, counts, wait results and the kind of error raised). Every test runs on
both backends; each run is checked against a numpy expectation, and the `hal` run is
also checked byte for byte against the same scenario run on iree.runtime, so a test
cannot pass because both backends agree on a wrong answer.

Most scenarios write through a one-statement `buf.map().asarray(...)[...] = x`;
`test_mapping_is_coherent` keeps arrays of live mappings across device work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from types import ModuleType

import iree.runtime as iree_rt
import numpy as np
import pytest

WAIT_NS = 10 * 1_000_000_000  # completion waits fail a test rather than hang it
U8 = np.dtype(np.uint8)


@dataclass(frozen=True)
class Backend:
    name: str
    rt: ModuleType
    device: object


@cache
def _iree_device():
    return iree_rt.get_device("local-task")


@pytest.fixture(scope="module", params=["iree", "hal"])
def backend(request) -> Backend:
    if request.param == "iree":
        return Backend("iree", iree_rt, _iree_device())
    import hal

    return Backend("hal", hal, hal.create_device("tenstorrent"))


def check(backend: Backend, scenario, expected: dict, *args) -> None:
    """Runs `scenario` on `backend`; compares with numpy, and with iree.runtime."""
    observed = scenario(backend.rt, backend.device, *args)
    _assert_same(observed, expected, f"{backend.name} vs numpy")
    if backend.name != "iree":
        reference = scenario(iree_rt, _iree_device(), *args)
        _assert_same(observed, reference, f"{backend.name} vs iree.runtime")


def _assert_same(observed: dict, expected: dict, what: str) -> None:
    assert observed.keys() == expected.keys(), what
    for key, want in expected.items():
        got = observed[key]
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray), f"{what}: {key} is {type(got)}"
            assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{what}: {key}"
            if got.tobytes() != want.tobytes():
                diff = np.flatnonzero(got.view(U8).ravel() != want.view(U8).ravel())
                pytest.fail(
                    f"{what}: {key} differs at byte offsets {diff[:16].tolist()}"
                    f"\n got {got!r}\nwant {want!r}"
                )
        else:
            assert type(got) is type(want) and got == want, (
                f"{what}: {key} = {got!r}, want {want!r}"
            )


# -- helpers written against the iree.runtime API --------------------------------


def mappable(rt):
    return (
        rt.MemoryType.DEVICE_LOCAL | rt.MemoryType.HOST_VISIBLE,
        rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
    )


def alloc(rt, device, contents: np.ndarray):
    """A host-visible device buffer holding `contents` (written through a mapping)."""
    memory_type, usage = mappable(rt)
    buf = device.allocator.allocate_buffer(memory_type, usage, contents.nbytes)
    buf.map().asarray(contents.shape, contents.dtype)[...] = contents
    return buf


def read(buf, count: int, dtype=U8) -> np.ndarray:
    mapping = buf.map()
    out = mapping.asarray((count,), np.dtype(dtype)).copy()
    del mapping
    return out


def sync_args(rt, sync: str, wait_sem, wait_value, signal_sem, signal_value):
    """The same (wait, signal) timepoints as `[(sem, value)]` lists or as HalFences."""
    if sync == "list":
        waits = [] if wait_sem is None else [(wait_sem, wait_value)]
        return waits, [(signal_sem, signal_value)]
    waits = rt.HalFence(1)
    if wait_sem is not None:
        waits.insert(wait_sem, wait_value)
    return waits, rt.HalFence.create_at(signal_sem, signal_value)


def error_kind(fn) -> str:
    """The iree.runtime exception family `fn` raises (a `hal` error may be several)."""
    try:
        fn()
    except IndexError:
        return "IndexError"
    except ValueError:
        return "ValueError"
    except NotImplementedError:  # a RuntimeError too: asked first
        return "NotImplementedError"
    except RuntimeError:
        return "RuntimeError"
    except Exception as e:  # noqa: BLE001 - reported, then fails the comparison
        return f"unexpected {type(e).__name__}: {e}"
    return "no error"


def seeded(n: int, salt: int = 0) -> np.ndarray:
    return ((np.arange(n) * 7 + salt) % 251).astype(np.uint8)


# -- mapping -----------------------------------------------------------------------


def scenario_map_write_read(rt, device):
    memory_type, usage = mappable(rt)
    buf = device.allocator.allocate_buffer(memory_type, usage, 256)
    buf.map().asarray((256,), U8)[...] = np.arange(256, dtype=np.uint8)
    first = read(buf, 256)
    buf.map().asarray((16,), np.dtype(np.float32))[4:8] = [1.5, -2.0, 3.25, 1e30]
    buf.map().asarray((16, 16), U8)[15, 8:] = 0xEE
    mapping = buf.map()
    as_u32 = mapping.asarray((64,), np.dtype(np.uint32)).copy()
    as_2d = mapping.asarray((4, 64), U8).copy()
    del mapping
    return {
        "byte_length": buf.byte_length(),
        "first": first,
        "as_u32": as_u32,
        "as_2d": as_2d,
    }


def test_map_write_read(backend):
    data = np.arange(256, dtype=np.uint8)
    first = data.copy()
    data[16:32] = np.array([1.5, -2.0, 3.25, 1e30], np.float32).view(np.uint8)
    data[15 * 16 + 8 :] = 0xEE
    expected = {
        "byte_length": 256,
        "first": first,
        "as_u32": data.view(np.uint32),
        "as_2d": data.reshape(4, 64),
    }
    check(backend, scenario_map_write_read, expected)


# -- allocate_buffer_copy ----------------------------------------------------------

COPY_SOURCES = {
    "f32_3x5": lambda: np.arange(15, dtype=np.float32).reshape(3, 5) / 3,
    "i16_7": lambda: np.arange(-3, 4, dtype=np.int16) * 1000,
    "bytes_5": lambda: b"hello",
    "u8_multi_page": lambda: seeded(3 * 4096 + 12, salt=3),
}


def scenario_allocate_buffer_copy(rt, device, source):
    memory_type, usage = mappable(rt)
    buf = device.allocator.allocate_buffer_copy(memory_type, usage, device, source)
    n = buf.byte_length()
    return {"byte_length": n, "bytes": read(buf, n)}


@pytest.mark.parametrize("name", COPY_SOURCES)
def test_allocate_buffer_copy(backend, name):
    source = COPY_SOURCES[name]()
    raw = np.frombuffer(bytes(memoryview(source)), U8)
    expected = {"byte_length": raw.size, "bytes": raw}
    check(backend, scenario_allocate_buffer_copy, expected, source)


VIEW_SOURCES = {
    "FLOAT_32": lambda: np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
    "SINT_16": lambda: np.array([-32768, -1, 0, 32767], np.int16),
    "UINT_8": lambda: seeded(30).reshape(2, 3, 5),
    "FLOAT_16": lambda: np.linspace(-4, 4, 9, dtype=np.float16),
    "FLOAT_64": lambda: np.array([[np.pi], [-np.e]], np.float64),
    "INT_32": lambda: np.array(-7, np.int32),  # 0-d: shape []
    "UINT_32": lambda: np.zeros((2, 0, 3), np.uint32),  # empty allocation
}


def scenario_buffer_view(rt, device, source, element_type_name):
    memory_type, usage = mappable(rt)
    element_type = getattr(rt.HalElementType, element_type_name)
    view = device.allocator.allocate_buffer_copy(
        memory_type, usage, device, source, element_type
    )
    observed = {
        "shape": view.shape,
        "element_type": int(view.element_type),
        "byte_length": view.byte_length,
        "buffer_byte_length": view.get_buffer().byte_length(),
    }
    if view.byte_length:
        mapping = view.map()
        observed["array"] = mapping.asarray(view.shape, source.dtype).copy()
        del mapping
        rewrapped = rt.HalBufferView(view.get_buffer(), [view.byte_length], rt.HalElementType.UINT_8)
        observed["rewrapped_shape"] = rewrapped.shape
        observed["rewrapped_bytes"] = read(rewrapped.get_buffer(), rewrapped.byte_length)
    return observed


@pytest.mark.parametrize("element_type_name", VIEW_SOURCES)
def test_allocate_buffer_copy_view(backend, element_type_name):
    source = VIEW_SOURCES[element_type_name]()
    element_type = int(getattr(iree_rt.HalElementType, element_type_name))
    expected = {
        "shape": list(source.shape),
        "element_type": element_type,
        "byte_length": source.nbytes,
        "buffer_byte_length": source.nbytes,
    }
    if source.nbytes:
        expected["array"] = source
        expected["rewrapped_shape"] = [source.nbytes]
        expected["rewrapped_bytes"] = source.reshape(-1).view(U8)
    check(backend, scenario_buffer_view, expected, source, element_type_name)


# -- command buffer fill / copy -----------------------------------------------------

FILL_PATTERNS = {
    "np_u8": np.uint8(0x07),
    "np_u16": np.uint16(0xAB23),
    "np_u32": np.uint32(0xAB23CD45),
    "np_f32": np.float32(-1.5),
    "bytes1": b"\x07",
    "bytes2": b"\x23\xab",
    "bytes4": b"\x45\xcd\x23\xab",
}
FILL_SIZE = 1088
FILL_RANGES = [(0, None), (4, 8), (8, 24), (16, 0), (12, 1000), (FILL_SIZE - 4, 4)]


def scenario_fill(rt, device, pattern, offset, length, sync):
    buf = alloc(rt, device, seeded(FILL_SIZE))
    sem = device.create_semaphore(0)
    cb = rt.HalCommandBuffer(device)
    cb.fill(buf, pattern, offset, length, end=True)
    waits, signals = sync_args(rt, sync, None, 0, sem, 1)
    device.queue_execute(cb, waits, signals)
    done = sem.wait(1, timeout=WAIT_NS)
    return {"done": done, "bytes": read(buf, FILL_SIZE)}


@pytest.mark.parametrize("sync", ["list", "fence"])
@pytest.mark.parametrize("offset,length", FILL_RANGES)
@pytest.mark.parametrize("pattern_name", FILL_PATTERNS)
def test_fill(backend, pattern_name, offset, length, sync):
    pattern = FILL_PATTERNS[pattern_name]
    raw = np.frombuffer(bytes(memoryview(pattern)), U8)
    want = seeded(FILL_SIZE)
    n = FILL_SIZE - offset if length is None else length
    want[offset : offset + n] = np.resize(raw, n)
    check(backend, scenario_fill, {"done": True, "bytes": want}, pattern, offset, length, sync)


COPY_SIZE = 1024
COPY_RANGES = [(0, 0, None), (8, 8, 16), (4, 4, 32), (1, 2, 5), (0, 100, 900), (1000, 3, 24)]


def scenario_copy(rt, device, source_offset, target_offset, length, sync):
    src = alloc(rt, device, seeded(COPY_SIZE, salt=1))
    dst = alloc(rt, device, seeded(COPY_SIZE, salt=2))
    sem = device.create_semaphore(0)
    cb = rt.HalCommandBuffer(device)
    cb.copy(src, dst, source_offset, target_offset, length, end=True)
    waits, signals = sync_args(rt, sync, None, 0, sem, 1)
    device.queue_execute(cb, waits, signals)
    done = sem.wait(1, timeout=WAIT_NS)
    return {"done": done, "src": read(src, COPY_SIZE), "dst": read(dst, COPY_SIZE)}


@pytest.mark.parametrize("sync", ["list", "fence"])
@pytest.mark.parametrize("source_offset,target_offset,length", COPY_RANGES)
def test_copy(backend, source_offset, target_offset, length, sync):
    src, dst = seeded(COPY_SIZE, salt=1), seeded(COPY_SIZE, salt=2)
    n = COPY_SIZE if length is None else length
    dst[target_offset : target_offset + n] = src[source_offset : source_offset + n]
    expected = {"done": True, "src": src, "dst": dst}
    check(backend, scenario_copy, expected, source_offset, target_offset, length, sync)


def scenario_multi_command(rt, device):
    """Independent commands in one command buffer: disjoint ranges, one buffer reused."""
    a = alloc(rt, device, seeded(512, salt=5))
    b = alloc(rt, device, np.zeros(512, np.uint8))
    sem = device.create_semaphore(0)
    cb = rt.HalCommandBuffer(device)
    cb.fill(b, np.uint32(0x01020304), 0, 64)
    cb.copy(a, b, 0, 64, 128)
    cb.copy(a, a, 0, 256, 64)  # same buffer, disjoint ranges
    cb.fill(b, np.uint16(0xBEEF), 448, 64, end=True)
    device.queue_execute(cb, [], [(sem, 1)])
    done = sem.wait(1, timeout=WAIT_NS)
    return {"done": done, "a": read(a, 512), "b": read(b, 512)}


def test_multi_command(backend):
    a, b = seeded(512, salt=5), np.zeros(512, np.uint8)
    b[0:64] = np.resize(np.frombuffer(np.uint32(0x01020304).tobytes(), U8), 64)
    b[64:192] = a[0:128]
    a[256:320] = a[0:64]
    b[448:512] = np.resize(np.frombuffer(np.uint16(0xBEEF).tobytes(), U8), 64)
    check(backend, scenario_multi_command, {"done": True, "a": a, "b": b})


def scenario_reexecute(rt, device):
    """A command buffer from the iree.runtime constructor executed three times: each run
    copies the accumulated bytes one step further."""
    buf = alloc(rt, device, np.zeros(64, np.uint8))
    sem = device.create_semaphore(0)
    cb = rt.HalCommandBuffer(device)
    cb.copy(buf, buf, 0, 16, 16)
    cb.fill(buf, np.uint8(7), 0, 16, end=True)
    for value in (1, 2, 3):
        device.queue_execute(cb, [], [(sem, value)])
        if not sem.wait(value, timeout=WAIT_NS):
            return {"done": False}
    return {"done": True, "buf": read(buf, 64)}


def test_reexecute_command_buffer(backend):
    expected = np.zeros(64, np.uint8)
    expected[0:32] = 7  # run 1 fills [0,16); run 2 copies it to [16,32); run 3 repeats both
    check(backend, scenario_reexecute, {"done": True, "buf": expected})


# -- queue operations ----------------------------------------------------------------


def scenario_queue_copy(rt, device, sync):
    """Two chained queue copies, both submitted before the host waits."""
    src = alloc(rt, device, seeded(4096, salt=9))
    mid = alloc(rt, device, np.zeros(4096, np.uint8))
    dst = alloc(rt, device, np.full(4096, 0x5A, np.uint8))
    sem = device.create_semaphore(0)
    device.queue_copy(src, mid, *sync_args(rt, sync, None, 0, sem, 1))
    device.queue_copy(mid, dst, *sync_args(rt, sync, sem, 1, sem, 2))
    done = sem.wait(2, timeout=WAIT_NS)
    return {"done": done, "value": sem.query(), "mid": read(mid, 4096), "dst": read(dst, 4096)}


@pytest.mark.parametrize("sync", ["list", "fence"])
def test_queue_copy(backend, sync):
    src = seeded(4096, salt=9)
    expected = {"done": True, "value": 2, "mid": src, "dst": src}
    check(backend, scenario_queue_copy, expected, sync)


def scenario_queue_alloca(rt, device, sync):
    """alloca -> fill + copy out -> dealloca, all queued before the host waits."""
    out = alloc(rt, device, np.zeros(256, np.uint8))
    sem = device.create_semaphore(0)
    transient = device.queue_alloca(256, *sync_args(rt, sync, None, 0, sem, 1))
    cb = rt.HalCommandBuffer(device)
    cb.fill(transient, np.uint32(0xDEADBEEF), 0, 256)
    cb.end()
    device.queue_execute(cb, *sync_args(rt, sync, sem, 1, sem, 2))
    device.queue_copy(transient, out, *sync_args(rt, sync, sem, 2, sem, 3))
    device.queue_dealloca(transient, *sync_args(rt, sync, sem, 3, sem, 4))
    done = sem.wait(4, timeout=WAIT_NS)
    return {"done": done, "byte_length": transient.byte_length(), "out": read(out, 256)}


@pytest.mark.parametrize("sync", ["list", "fence"])
def test_queue_alloca_dealloca(backend, sync):
    want = np.frombuffer(np.full(64, 0xDEADBEEF, np.uint32).tobytes(), U8)
    check(backend, scenario_queue_alloca, {"done": True, "byte_length": 256, "out": want}, sync)


def scenario_wait_before_signal(rt, device):
    """Consumer submitted first, producer second, the host signals last."""
    buf = alloc(rt, device, seeded(128))
    out = alloc(rt, device, np.zeros(128, np.uint8))
    host = device.create_semaphore(0)
    produced = device.create_semaphore(0)
    consumed = device.create_semaphore(0)
    consumer = rt.HalCommandBuffer(device)
    consumer.copy(buf, out, 0, 0, 128, end=True)
    device.queue_execute(consumer, [(produced, 1)], [(consumed, 1)])
    producer = rt.HalCommandBuffer(device)
    producer.fill(buf, np.uint16(0x1234), 32, 64, end=True)
    device.queue_execute(producer, [(host, 1)], [(produced, 1)])
    time.sleep(0.01)
    pending = {
        "produced_early": produced.wait(1, timeout=0),
        "consumed_early": consumed.wait(1, timeout=0),
        "query_early": consumed.query(),
        "out_early": read(out, 128),
    }
    host.signal(1)
    done = consumed.wait(1, timeout=WAIT_NS)
    return {**pending, "done": done, "produced": produced.query(), "out": read(out, 128)}


def test_wait_before_signal(backend):
    want = seeded(128)
    want[32:96] = np.resize(np.frombuffer(np.uint16(0x1234).tobytes(), U8), 64)
    expected = {
        "produced_early": False,
        "consumed_early": False,
        "query_early": 0,
        "out_early": np.zeros(128, np.uint8),
        "done": True,
        "produced": 1,
        "out": want,
    }
    check(backend, scenario_wait_before_signal, expected)


def scenario_fence_wait_before_signal(rt, device):
    """A submission waiting on a joined fence runs only once every timepoint is reached."""
    out = alloc(rt, device, np.zeros(64, np.uint8))
    s1 = device.create_semaphore(0)
    s2 = device.create_semaphore(10)
    done_sem = device.create_semaphore(0)
    waits = rt.HalFence.join([rt.HalFence.create_at(s1, 2), rt.HalFence.create_at(s2, 11)])
    cb = rt.HalCommandBuffer(device)
    cb.fill(out, np.uint8(0x3C), 0, 64, end=True)
    device.queue_execute(cb, waits, rt.HalFence.create_at(done_sem, 5))
    s1.signal(2)
    time.sleep(0.01)
    early = done_sem.wait(5, timeout=0)
    s2.signal(11)
    done = done_sem.wait(5, timeout=WAIT_NS)
    return {"early": early, "done": done, "value": done_sem.query(), "out": read(out, 64)}


def test_fence_wait_before_signal(backend):
    expected = {"early": False, "done": True, "value": 5, "out": np.full(64, 0x3C, np.uint8)}
    check(backend, scenario_fence_wait_before_signal, expected)


# -- semaphores and fences -----------------------------------------------------------


def scenario_semaphore(rt, device):
    sem = device.create_semaphore(5)
    observed = {
        "initial": sem.query(),
        "wait_reached": sem.wait(5, timeout=0),
        "wait_below": sem.wait(3, timeout=0),
        "wait_timeout_0": sem.wait(6, timeout=0),
        "wait_deadline_0": sem.wait(6, deadline=0),
        "wait_timeout_1ms": sem.wait(6, timeout=1_000_000),
        "wait_deadline_past": sem.wait(6, deadline=time.monotonic_ns() - 1),
    }
    sem.signal(7)
    observed.update(
        after=sem.query(),
        wait_after=sem.wait(6, timeout=0),
        wait_no_timeout=sem.wait(7),
        wait_beyond=sem.wait(8, timeout=0),
    )
    return observed


def test_semaphore_query_signal_wait(backend):
    expected = {
        "initial": 5,
        "wait_reached": True,
        "wait_below": True,
        "wait_timeout_0": False,
        "wait_deadline_0": False,
        "wait_timeout_1ms": False,
        "wait_deadline_past": False,
        "after": 7,
        "wait_after": True,
        "wait_no_timeout": True,
        "wait_beyond": False,
    }
    check(backend, scenario_semaphore, expected)


def scenario_fence(rt, device):
    s1 = device.create_semaphore(0)
    s2 = device.create_semaphore(0)
    at = rt.HalFence.create_at(s1, 1)
    inserted = rt.HalFence(2)
    inserted.insert(s1, 3)
    inserted.insert(s1, 1)  # keeps the max, 3
    inserted.insert(s2, 2)
    joined = rt.HalFence.join([at, rt.HalFence.create_at(s2, 5), rt.HalFence.create_at(s1, 2)])
    empty = rt.HalFence(1)
    full = rt.HalFence.create_at(s1, 1)
    capacity = error_kind(lambda: full.insert(s2, 1))  # RESOURCE_EXHAUSTED
    observed = {
        "at_count": at.timepoint_count,
        "inserted_count": inserted.timepoint_count,
        "joined_count": joined.timepoint_count,
        "empty_count": empty.timepoint_count,
        "empty_wait": empty.wait(timeout=0),
        "at_early": at.wait(timeout=0),
        "over_capacity": capacity,
        "full_count": full.timepoint_count,
    }
    s1.signal(2)
    observed.update(
        at_after_s1=at.wait(timeout=0),
        inserted_after_s1=inserted.wait(timeout=0),  # needs s1 >= 3
        joined_after_s1=joined.wait(timeout=0, deadline=None),
    )
    inserted.signal()
    observed.update(
        s1_after_signal=s1.query(),
        s2_after_signal=s2.query(),
        inserted_done=inserted.wait(timeout=WAIT_NS),
        joined_still=joined.wait(deadline=0),
    )
    extended = rt.HalFence(2)
    extended.extend(at)
    extended.extend(rt.HalFence.create_at(s2, 5))
    observed["extended_count"] = extended.timepoint_count
    observed["extended_early"] = extended.wait(timeout=0)
    s2.signal(5)
    observed.update(joined_done=joined.wait(), extended_done=extended.wait(timeout=0))
    return observed


def test_fence_create_at_join_insert_wait(backend):
    expected = {
        "at_count": 1,
        "inserted_count": 2,
        "joined_count": 2,
        "empty_count": 0,
        "empty_wait": True,
        "at_early": False,
        "over_capacity": "RuntimeError",
        "full_count": 1,
        "at_after_s1": True,
        "inserted_after_s1": False,
        "joined_after_s1": False,
        "s1_after_signal": 3,
        "s2_after_signal": 2,
        "inserted_done": True,
        "joined_still": False,
        "extended_count": 2,
        "extended_early": False,
        "joined_done": True,
        "extended_done": True,
    }
    check(backend, scenario_fence, expected)


# -- error classes -------------------------------------------------------------------


def scenario_signal_not_increasing(rt, device):
    sem = device.create_semaphore(3)
    return {
        "equal": error_kind(lambda: sem.signal(3)),
        "lower": error_kind(lambda: sem.signal(2)),
        "value": sem.query(),
        "higher": error_kind(lambda: sem.signal(4)),
        "value_after": sem.query(),
    }


def test_signal_not_increasing(backend):
    expected = {
        "equal": "ValueError",
        "lower": "ValueError",
        "value": 3,
        "higher": "no error",
        "value_after": 4,
    }
    check(backend, scenario_signal_not_increasing, expected)


def scenario_bad_record(rt, device, record):
    """A rejected command is not recorded; the buffer ends up untouched."""
    buf = alloc(rt, device, seeded(64))
    other = alloc(rt, device, seeded(64, salt=4))
    cb = rt.HalCommandBuffer(device)
    kind = error_kind(lambda: record(cb, buf, other))
    cb.end()
    sem = device.create_semaphore(0)
    device.queue_execute(cb, [], [(sem, 1)])
    done = sem.wait(1, timeout=WAIT_NS)
    return {"error": kind, "done": done, "buf": read(buf, 64), "other": read(other, 64)}


BAD_RECORDS = {
    "fill_3_byte_pattern": ("ValueError", lambda cb, b, o: cb.fill(b, b"abc", 0, 3)),
    "fill_3_byte_pattern_np": ("ValueError", lambda cb, b, o: cb.fill(b, np.zeros(3, np.uint8), 0, 6)),
    "fill_misaligned_offset": ("ValueError", lambda cb, b, o: cb.fill(b, np.uint32(1), 2, 4)),
    "fill_misaligned_length": ("ValueError", lambda cb, b, o: cb.fill(b, np.uint16(1), 0, 3)),
    "fill_past_end": ("IndexError", lambda cb, b, o: cb.fill(b, np.uint32(1), 60, 8)),
    "fill_offset_past_end": ("IndexError", lambda cb, b, o: cb.fill(b, np.uint32(1), 68, 4)),
    "copy_overlap": ("ValueError", lambda cb, b, o: cb.copy(b, b, 0, 8, 16)),
    "copy_overlap_same_range": ("ValueError", lambda cb, b, o: cb.copy(b, b, 4, 4, 4)),
    "copy_source_past_end": ("IndexError", lambda cb, b, o: cb.copy(b, o, 60, 0, 8)),
    "copy_target_past_end": ("IndexError", lambda cb, b, o: cb.copy(b, o, 0, 60, 8)),
}


@pytest.mark.parametrize("case", BAD_RECORDS)
def test_bad_record_raises(backend, case):
    kind, record = BAD_RECORDS[case]
    expected = {"error": kind, "done": True, "buf": seeded(64), "other": seeded(64, salt=4)}
    check(backend, scenario_bad_record, expected, record)


DRIVER_OF = {"iree": "local-task", "hal": "tenstorrent"}


def scenario_missing_device(rt, device, driver):
    """A device id the driver does not have: NOT_FOUND, a ValueError in iree.runtime."""
    return {"create_device": error_kind(lambda: rt.get_driver(driver).create_device(5555))}


def test_missing_device_is_a_value_error(backend):
    observed = scenario_missing_device(backend.rt, backend.device, DRIVER_OF[backend.name])
    assert observed == {"create_device": "ValueError"}
    assert scenario_missing_device(iree_rt, _iree_device(), "local-task") == observed


def test_status_codes_raise_iree_runtime_exception_classes():
    """As iree.runtime's ApiStatusToPyExcClass: INVALID_ARGUMENT and NOT_FOUND ValueError,
    OUT_OF_RANGE IndexError, UNIMPLEMENTED NotImplementedError, the rest RuntimeError."""
    import hal

    expected = {hal.StatusCode.INVALID_ARGUMENT: ValueError, hal.StatusCode.NOT_FOUND: ValueError,
                hal.StatusCode.OUT_OF_RANGE: IndexError, hal.StatusCode.UNIMPLEMENTED: NotImplementedError}
    for code in hal.StatusCode:
        if code == hal.StatusCode.OK:
            continue
        error = hal.HalError(code, "x")
        assert isinstance(error, expected.get(code, RuntimeError)), code
        others = {ValueError, IndexError, NotImplementedError} - {expected.get(code)}
        assert not any(isinstance(error, other) for other in others), code


def scenario_recording_state(rt, device):
    buf = alloc(rt, device, seeded(16))
    not_begun = rt.HalCommandBuffer(device, begin=False)
    ended = rt.HalCommandBuffer(device)
    ended.end()
    sem = device.create_semaphore(0)
    return {
        "record_before_begin": error_kind(lambda: not_begun.fill(buf, np.uint8(1), 0, 4)),
        "record_after_end": error_kind(lambda: ended.fill(buf, np.uint8(1), 0, 4)),
        "second_begin": error_kind(ended.begin),
        "execute_not_ended": error_kind(
            lambda: device.queue_execute(rt.HalCommandBuffer(device), [], [(sem, 1)])
        ),
        "buf": read(buf, 16),
    }


def test_recording_state_errors(backend):
    expected = {
        "record_before_begin": "RuntimeError",
        "record_after_end": "RuntimeError",
        "second_begin": "RuntimeError",
        "execute_not_ended": "RuntimeError",
        "buf": seeded(16),
    }
    check(backend, scenario_recording_state, expected)


def scenario_failed_semaphore(rt, device):
    failed = device.create_semaphore(0)
    failed.fail("producer failed")
    return {
        "wait": error_kind(lambda: failed.wait(1, timeout=0)),
        "wait_reached_value": error_kind(lambda: failed.wait(0, timeout=0)),
        "wait_blocking": error_kind(lambda: failed.wait(1, timeout=WAIT_NS)),
        "query": error_kind(failed.query),
        "fence_wait": error_kind(lambda: rt.HalFence.create_at(failed, 1).wait(timeout=0)),
        "signal_after_failure": error_kind(lambda: failed.signal(5)),
        "fail_again": error_kind(lambda: failed.fail("second failure")),
        "query_still_failed": error_kind(failed.query),
    }


def test_wait_on_failed_semaphore(backend):
    kinds = ["wait", "wait_reached_value", "wait_blocking", "query", "fence_wait"]
    expected = dict.fromkeys(kinds, "RuntimeError")
    expected.update(
        signal_after_failure="no error", fail_again="no error", query_still_failed="RuntimeError"
    )
    check(backend, scenario_failed_semaphore, expected)


def scenario_failure_propagates(rt, device):
    """A submission waiting on a semaphore that fails fails its signal semaphore."""
    buf = alloc(rt, device, seeded(64))
    upstream = device.create_semaphore(0)
    downstream = device.create_semaphore(0)
    cb = rt.HalCommandBuffer(device)
    cb.fill(buf, np.uint8(0xFF), 0, 64, end=True)
    device.queue_execute(cb, [(upstream, 1)], [(downstream, 1)])
    upstream.fail("upstream failed")
    waited = error_kind(lambda: downstream.wait(1, timeout=WAIT_NS))
    cb2 = rt.HalCommandBuffer(device)
    cb2.fill(buf, np.uint8(0xEE), 0, 64, end=True)
    later = device.create_semaphore(0)
    submit_after = error_kind(lambda: device.queue_execute(cb2, [(upstream, 1)], [(later, 1)]))
    return {
        "downstream_wait": waited,
        "downstream_query": error_kind(downstream.query),
        "submit_after_failure": submit_after,
        "buf": read(buf, 64),
    }


def test_failure_propagates(backend):
    expected = {
        "downstream_wait": "RuntimeError",
        "downstream_query": "RuntimeError",
        "submit_after_failure": "RuntimeError",
        "buf": seeded(64),
    }
    check(backend, scenario_failure_propagates, expected)


def scenario_failure_messages_and_names(rt, device):
    """What a person reads: the context a failed wait prints first, the reprs of buffers
    and buffer views, enum names, the payload keyword, queue_copy's own length check."""
    failed = device.create_semaphore(0)
    failed.fail("boom")
    messages = {}
    for name, wait in (("semaphore", lambda: failed.wait(payload=1, timeout=0)),
                       ("fence", lambda: rt.HalFence.create_at(failed, 1).wait(timeout=0))):
        try:
            wait()
        except RuntimeError as error:
            messages[name] = str(error).split(":")[0]
    big = alloc(rt, device, seeded(64))
    small = alloc(rt, device, seeded(32))
    view = rt.HalBufferView(big, [4, 4], rt.HalElementType.FLOAT_32)
    reached = device.create_semaphore(0)
    reached.signal(3)
    return {
        **{f"{name}_failure": text for name, text in messages.items()},
        "payload_keyword": reached.wait(payload=2, timeout=0),
        "buffer_repr": repr(big),
        "view_repr": repr(view),
        "enum_str": [str(rt.BufferUsage.DEFAULT), repr(rt.MemoryType.DEVICE_LOCAL), str(rt.MemoryAccess.ALL),
                     str(rt.HalElementType.FLOAT_32)],
        "queue_copy_too_long": error_kind(lambda: device.queue_copy(big, small, rt.HalFence(2),
                                                                    rt.HalFence.create_at(reached, 4))),
    }


def test_failure_messages_and_names(backend):
    flags = "memory_type=DEVICE_LOCAL|HOST_VISIBLE, allowed_access=ALL, allowed_usage=TRANSFER|DISPATCH_STORAGE|MAPPING"
    expected = {
        "semaphore_failure": "synchronous semaphore failure",
        "fence_failure": "synchronous fence failure",
        "payload_keyword": True,
        "buffer_repr": f"<HalBuffer 64 bytes (at offset 0 into 64), {flags}|MAPPING_PERSISTENT>",
        "view_repr": f"<HalBufferView (4, 4), element_type=0x20000021, 64 bytes (at offset 0 into 64), "
                     f"{flags}|MAPPING_PERSISTENT>",
        "enum_str": ["BufferUsage.DEFAULT", "MemoryType.DEVICE_LOCAL", "MemoryAccess.ALL", "HalElementType.FLOAT_32"],
        "queue_copy_too_long": "ValueError",
    }
    check(backend, scenario_failure_messages_and_names, expected)


@pytest.mark.parametrize("module", ["iree.runtime", "hal"])
def test_import_names_the_ml_dtypes_and_get_first_device_skips_unknown_drivers(module):
    """As `import iree.runtime` does, `import hal` lets numpy name bfloat16 and the float8
    types; get_first_device skips drivers it does not know and raises a ValueError when
    it knows none (a fresh interpreter per module: the import is what is checked)."""
    import subprocess
    import sys

    device = "local-task" if module == "iree.runtime" else "tenstorrent"
    script = (f"import {module} as rt, numpy as np\n"
              "print(np.dtype('bfloat16'), np.dtype('float8_e4m3fn'))\n"
              f"print(rt.get_first_device(['no-such-driver', '{device}']) is rt.get_device('{device}'))\n"
              "try:\n    rt.get_first_device(['no-such-driver'])\nexcept ValueError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split("\n")[:3] == ["bfloat16 float8_e4m3fn", "True",
                                             "No device found from list ['no-such-driver']"]


def scenario_coherent_mapping(rt, device):
    """Arrays of live mappings, kept across device work: host writes are seen by a
    later copy; a later fill and the copy's target show in the arrays after the waits."""
    memory_type, usage = mappable(rt)
    a = device.allocator.allocate_buffer(memory_type, usage, 64)
    b = device.allocator.allocate_buffer(memory_type, usage, 64)
    array_a = a.map().asarray([64], U8)
    array_b = b.map().asarray([64], U8)
    array_a[:] = seeded(64)
    done = device.create_semaphore(0)
    copy = rt.HalCommandBuffer(device)
    copy.copy(a, b, 0, 0, 64, end=True)
    device.queue_execute(copy, [], [(done, 1)])
    assert done.wait(1, timeout=WAIT_NS)
    copied = array_b.copy()
    fill = rt.HalCommandBuffer(device)
    fill.fill(a, np.uint8(7), 16, 32, end=True)
    device.queue_execute(fill, [(done, 1)], [(done, 2)])
    assert done.wait(2, timeout=WAIT_NS)
    return {"copied": copied, "after_fill": array_a.copy()}


def test_mapping_is_coherent(backend):
    after_fill = seeded(64)
    after_fill[16:48] = 7
    check(backend, scenario_coherent_mapping, {"copied": seeded(64), "after_fill": after_fill})


# -- drivers, device creation, asyncio bridge --------------------------------------


def driver_name(rt) -> str:
    return "local-task" if rt is iree_rt else "tenstorrent"


def error_name(call) -> str:
    """The builtin exception class `call()` raises, as a script catching it would see it."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        kinds = (ValueError, IndexError, NotImplementedError)
        return next((kind.__name__ for kind in kinds if isinstance(error, kind)), type(error).__name__)
    return "no error"


def scenario_driver_cache_and_allocator_wrappers(rt, device):
    """get_driver caches, create_hal_driver does not, clear_hal_driver_cache forgets;
    allocators=["debug"] scribbles 0xCD into new buffers, "caching" is accepted, an
    unknown wrapper and a device path that does not exist are ValueErrors."""
    binding = getattr(rt, "_binding", rt)  # iree.runtime keeps the uncached driver calls in _binding
    name = driver_name(rt)
    first, again, fresh = rt.get_driver(name), rt.get_driver(name), binding.create_hal_driver(name)
    binding.clear_hal_driver_cache()
    after_clear = rt.get_driver(name)
    info = first.query_available_devices()[0]
    debug_device = first.create_device(info, allocators=["caching", "debug"])
    memory_type, usage = mappable(rt)
    scribbled = debug_device.allocator.allocate_buffer(memory_type, usage, 32).map().asarray([32], U8).copy()
    return {
        "cached": again is first, "create_hal_driver_is_new": fresh is not first, "cleared": after_clear is not first,
        "debug_fill": scribbled,
        "unknown_wrapper": error_name(lambda: first.create_device(info, allocators=["nope"])),
        "missing_path": error_name(lambda: rt.get_device(f"{name}://3")),
    }


def test_driver_cache_and_allocator_wrappers(backend):
    expected = {"cached": True, "create_hal_driver_is_new": True, "cleared": True,
                "debug_fill": np.full(32, 0xCD, U8), "unknown_wrapper": "ValueError", "missing_path": "ValueError"}
    check(backend, scenario_driver_cache_and_allocator_wrappers, expected)


def scenario_loop_bridge(rt, device):
    """HalDeviceLoopBridge: futures get their values once their timepoints are reached
    (already-reached ones too, out-of-order ones in their own time); stop() cancels the rest."""
    import asyncio

    loop = asyncio.new_event_loop()
    bridge = rt.HalDeviceLoopBridge(device, loop)
    try:
        early = device.create_semaphore(5)
        reached = loop.run_until_complete(asyncio.wait_for(bridge.on_semaphore(early, 3, "early"), 10))
        sem = device.create_semaphore(0)
        futures = [bridge.on_semaphore(sem, value, value * 10) for value in (3, 1, 2)]
        sem.signal(2)
        values = [loop.run_until_complete(asyncio.wait_for(futures[i], 10)) for i in (1, 2)]
        third_done = futures[0].done()
        orphan = bridge.on_semaphore(device.create_semaphore(0), 1, "never")
    finally:
        bridge.stop()
    loop.run_until_complete(asyncio.sleep(0.05))
    loop.close()
    return {"reached": reached, "values": values, "third_done_early": third_done,
            "cancelled": [futures[0].cancelled(), orphan.cancelled()]}


def test_loop_bridge(backend):
    expected = {"reached": "early", "values": [10, 20], "third_done_early": False, "cancelled": [True, True]}
    check(backend, scenario_loop_bridge, expected)


def test_loop_bridge_failed_semaphore_is_a_runtime_error():
    """A failed semaphore fails its futures with RuntimeError, as IREE's bridge intends
    (iree.runtime 3.13's own bridge raises TypeError in the loop there and then hangs,
    so this is not compared with it)."""
    import asyncio

    import hal

    device = hal.get_device("tenstorrent")
    loop = asyncio.new_event_loop()
    bridge = hal.HalDeviceLoopBridge(device, loop)
    sem = device.create_semaphore(0)
    future = bridge.on_semaphore(sem, 1, "x")
    sem.fail("boom")
    with pytest.raises(RuntimeError, match="boom"):
        loop.run_until_complete(asyncio.wait_for(future, 10))
    bridge.stop()
    with pytest.raises(hal.HalError, match="stopped"):
        bridge.on_semaphore(sem, 1, "x")
    loop.close()


def scenario_external_timepoint(rt, device):
    """A timepoint exported as an ASYNC_PRIMITIVE and imported into another semaphore
    signals it once the first reaches the value; CUDA events are NotImplementedError."""
    source, target = device.create_semaphore(0), device.create_semaphore(0)
    timepoint = rt.HalExternalTimepoint()
    source.export_timepoint(2, rt.ExternalTimepointType.ASYNC_PRIMITIVE, rt.ExternalTimepointFlags.NONE, timepoint)
    target.import_timepoint(7, timepoint)
    source.signal(1)
    before = target.query()
    source.signal(2)
    reached = target.wait(7, timeout=WAIT_NS)
    return {"type": int(timepoint.type), "compatibility": int(timepoint.compatibility), "before": before,
            "reached": reached, "after": target.query(),
            "cuda": error_name(lambda: source.export_timepoint(3, rt.ExternalTimepointType.CUDA_EVENT, 0,
                                                                rt.HalExternalTimepoint()))}


def test_external_timepoint(backend):
    expected = {"type": 1, "compatibility": 5, "before": 0, "reached": True, "after": 7, "cuda": "NotImplementedError"}
    check(backend, scenario_external_timepoint, expected)


def test_imported_timepoint_fails_with_its_source():
    """Where IREE's local-task leaves the importing semaphore waiting forever, a failure
    of the exporting semaphore fails it here (docs/hal-api.md)."""
    import hal

    device = hal.get_device("tenstorrent")
    source, target = device.create_semaphore(0), device.create_semaphore(0)
    timepoint = hal.HalExternalTimepoint()
    source.export_timepoint(1, hal.ExternalTimepointType.ASYNC_PRIMITIVE, 0, timepoint)
    target.import_timepoint(1, timepoint)
    source.fail("boom")
    with pytest.raises(hal.HalError, match="boom"):
        target.wait(1, timeout=WAIT_NS)
    with pytest.raises(ValueError, match="not exported"):
        target.import_timepoint(2, hal.HalExternalTimepoint())


def test_shape_holds_dimensions():
    import hal

    iree_rt.Shape([2, 3])  # constructs there too; iree.runtime's has no accessors to compare
    assert hal.Shape([2, 3]) == (2, 3) and hal.Shape(()) == ()
    with pytest.raises(ValueError):
        hal.Shape(["x"])
