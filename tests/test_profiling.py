"""Device profiling writes a Chrome/Perfetto trace: one track per hardware queue,
one slice per submission."""

import json

import numpy as np

import hal


def test_profiling_writes_a_chrome_trace(tmp_path):
    path = tmp_path / "trace.json"
    device = hal.create_device("tenstorrent")
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
    sem = device.create_semaphore(0)
    device.begin_profiling(file_path=str(path))
    device.queue_fill(buffer, np.uint32(5), [], [(sem, 1)])
    device.queue_copy(buffer, buffer, [(sem, 1)], [(sem, 2)], source_offset=0, target_offset=2048, length=2048)
    assert sem.wait(2, timeout=10**10)
    device.end_profiling()

    trace = json.loads(path.read_text())
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in slices] == ["queue_fill", "queue_copy"]
    assert all(e["tid"] == 1 and e["dur"] >= 0 and e["args"]["failed"] is False for e in slices)
    assert slices[1]["ts"] >= slices[0]["ts"]
    tracks = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert tracks == {0: "CQ0 compute", 1: "CQ1 transfer"}
    # After end_profiling nothing more is recorded.
    device.queue_barrier([(sem, 2)], [(sem, 3)])
    assert sem.wait(3, timeout=10**10)
    assert device.profiling_trace()["traceEvents"][2:] == []
