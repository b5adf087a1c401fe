"""Profiling, the submission graph and the chip picture: the Chrome/Perfetto trace
has the tracks and events a user looks for, with the right names, sizes and counts;
the graph dump links waits to their producers; the pictures are written."""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import hal
from hal.executable import EXECUTABLE_FORMAT
from tt_hal import ops
from tt_hal.target.isa import Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.program import ArgKind, Program, RuntimeArg, Stage
from tt_hal.target.ttx import Export, write_executable
from tt_hal.tools import pictures

TIMEOUT_NS = 60_000_000_000
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def counting_executable(device):
    """A writer kernel looping workgroup_id.x times: core k executes 5 + 4k instructions
    (ARG, LI, LI, k x (BGE, ADD, ADDI, JMP), BGE, HALT)."""
    k = KernelBuilder("count")
    n = k.arg(0, "n")
    acc = k.const(0, "acc")
    with k.loop(n) as i:
        k.add(acc, acc, i)
    program = Program((), (k.build(Processor.RISCV_0),), ((RuntimeArg(ArgKind.WORKGROUP_ID, 0),),))
    data = write_executable([Export("count", 0, 0, (1, 1, 1), (Stage(program),))])
    return device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, data)


def events(trace, ph=None, cat=None):
    return [e for e in trace["traceEvents"] if (ph is None or e["ph"] == ph) and (cat is None or e.get("cat") == cat)]


def track_names(trace) -> dict:
    """(pid, tid) -> "process / thread" names."""
    processes = {e["pid"]: e["args"]["name"] for e in events(trace, "M") if e["name"] == "process_name"}
    return {(e["pid"], e["tid"]): f"{processes[e['pid']]} / {e['args']['name']}"
            for e in events(trace, "M") if e["name"] == "thread_name"}


def on_track(trace, event) -> str:
    return track_names(trace)[(event["pid"], event["tid"])]


@pytest.fixture
def traced_run(tmp_path):
    """A fill on the transfer queue, then a 6-workgroup dispatch on the compute queue
    that waits for it on the device (a cross-queue event wait: the transfer queue is
    held until both are issued), then a host wait."""
    device = hal.create_device("tenstorrent")
    executable = counting_executable(device)
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 8192)
    sem = device.create_semaphore(0)
    path = tmp_path / "trace.json"
    device.begin_profiling(file_path=str(path))
    gate = threading.Event()
    device.backend.enqueue_host_function(1, gate.wait, 60)
    device.queue_fill(buffer, np.uint32(7), [], [(sem, 1)])
    cb = device.create_command_buffer()
    cb.dispatch(executable, 0, (6, 1, 1), b"", [])
    cb.end()
    device.queue_execute(cb, [(sem, 1)], [(sem, 2)])
    gate.set()
    assert sem.wait(2, timeout=TIMEOUT_NS)
    device.end_profiling()
    yield device, json.loads(path.read_text()), sem
    device.close()


def test_trace_has_one_track_per_queue_and_per_core(traced_run):
    device, trace, _ = traced_run
    names = set(track_names(trace).values())
    prefix = "tt0 wormhole_b0"
    assert {f"{prefix} queues / CQ0 compute", f"{prefix} queues / CQ1 transfer"} <= names
    assert {f"{prefix} cores / core ({x},0)" for x in range(6)} <= names
    assert f"{prefix} cores / core (6,0)" not in names  # six workgroups ran on six cores
    assert any(n.startswith(f"{prefix} host / MainThread") for n in names)
    assert trace["displayTimeUnit"] == "ns"


def test_trace_records_transfers_dispatches_and_kernels_per_core(traced_run):
    _, trace, _ = traced_run
    commands = events(trace, "X", "command")
    fill = next(e for e in commands if e["name"] == "fill_buffer")
    assert on_track(trace, fill).endswith("CQ1 transfer")
    assert fill["args"]["bytes"] == 8192 and fill["args"]["pattern"] == "07000000"
    dispatch = next(e for e in commands if e["name"] == "count")
    assert on_track(trace, dispatch).endswith("CQ0 compute")
    assert dispatch["args"]["workgroup_count"] == [6, 1, 1]
    # The compute queue waited on the device for the transfer queue's event.
    wait = next(e for e in commands if e["name"] == "wait_for_event")
    assert on_track(trace, wait).endswith("CQ0 compute") and wait["args"]["on"] == "CQ1"
    kernels = sorted(events(trace, "X", "kernel"), key=lambda e: e["args"]["workgroup"])
    assert [e["args"]["workgroup"] for e in kernels] == [[k, 0, 0] for k in range(6)]
    for k, event in enumerate(kernels):
        assert on_track(trace, event).endswith(f"core ({k},0)")
        assert event["name"] == "count"
        assert event["args"]["kernels"] == {"writer (RISCV_0)": {"kernel": "count", "instructions": 5 + 4 * k}}
        assert event["args"]["circular_buffer_bytes"] == 0  # the program has no circular buffers
        # Each core's slice lies within its dispatch's slice on the queue.
        assert dispatch["ts"] <= event["ts"] and event["ts"] + event["dur"] <= dispatch["ts"] + dispatch["dur"] + 1


def test_trace_records_submissions_and_semaphores(traced_run):
    _, trace, sem = traced_run
    begins = events(trace, "b", "submission")
    ends = events(trace, "e", "submission")
    assert sorted(e["name"] for e in begins) == ["#1 queue_fill", "#2 queue_execute"]
    assert sorted(e["id"] for e in begins) == sorted(e["id"] for e in ends)
    execute = next(e for e in begins if e["name"].endswith("queue_execute"))
    assert execute["args"]["waits"] == [f"{sem.label}>=1"] and execute["args"]["signals"] == [f"{sem.label}=2"]
    assert execute["args"]["state"] == "done"
    marks = {(e["name"], on_track(trace, e).rsplit(" / ", 1)[1]) for e in events(trace, "i", "semaphore")}
    assert (f"signal {sem.label}=1", "CQ1 transfer") in marks
    assert (f"signal {sem.label}=2", "CQ0 compute") in marks
    assert (f"wait {sem.label}>=1", "CQ0 compute") in marks  # device-side wait, at issue
    host_waits = [e for e in events(trace, "X", "semaphore") if e["name"] == f"wait {sem.label}>=2"]
    assert len(host_waits) == 1 and host_waits[0]["args"]["result"] == "reached"


def test_queue_tracks_hold_one_command_at_a_time(traced_run):
    """A hardware queue runs its commands in order: their slices never overlap."""
    _, trace, _ = traced_run
    by_track: dict = {}
    for e in events(trace, "X", "command"):
        by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_track.values():
        spans.sort()
        assert all(end <= next_start + 1e-3 for (_, end), (next_start, _) in zip(spans, spans[1:]))


def test_nothing_is_recorded_after_end_profiling(traced_run):
    device, trace, sem = traced_run
    before = device.profiling_trace()
    assert len(before["traceEvents"]) == len(trace["traceEvents"])
    device.queue_barrier([(sem, 2)], [(sem, 3)])
    sem.signal(4)
    assert sem.wait(4, timeout=TIMEOUT_NS)
    assert device.profiling_trace() == before


def test_a_failed_dispatch_is_marked_in_the_trace(tmp_path):
    device = hal.create_device("tenstorrent")
    k = KernelBuilder("divide")
    zero = k.const(0)
    k.div(zero, zero, zero)
    program = Program((), (k.build(Processor.RISCV_0),), ((),))
    executable = device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([Export("divide", 0, 0, (1, 1, 1), (Stage(program),))]))
    sem = device.create_semaphore(0)
    device.begin_profiling()
    cb = device.create_command_buffer()
    cb.dispatch(executable, 0, (1, 1, 1), b"", [])
    cb.end()
    device.queue_execute(cb, [], [(sem, 1)])
    with pytest.raises(hal.HalError, match="division by zero"):
        sem.wait(1, timeout=TIMEOUT_NS)
    device.end_profiling()
    trace = device.profiling_trace()
    dispatch = next(e for e in events(trace, "X", "command") if e["name"] == "divide")
    assert dispatch["args"]["error"].startswith("ABORTED")
    submission = events(trace, "b", "submission")[0]
    assert submission["args"]["state"] == "failed" and "division by zero" in submission["args"]["error"]
    assert any(e["name"] == f"fail {sem.label}=1" for e in events(trace, "i", "semaphore"))
    assert device.submission_graph().nodes[-1].state == "failed"
    device.close()


def test_profiling_trace_needs_a_session():
    device = hal.create_device("tenstorrent")
    with pytest.raises(hal.HalError) as error:
        device.profiling_trace()
    assert error.value.code == hal.StatusCode.FAILED_PRECONDITION
    device.close()


def test_tt_hal_trace_profiles_every_device_of_a_process(tmp_path):
    """TT_HAL_TRACE=path: no code changes; a second device writes path.1.json."""
    script = ("import numpy as np, hal\n"
              "from tt_hal import ops\n"
              "for _ in range(2):\n"
              "    d = hal.create_device('tenstorrent')\n"
              "    x = d.to_device(np.ones((32, 64), np.float32), dtype='bfloat16', layout='tile')\n"
              "    assert float(ops.add(x, x).to_host(np.float32)[0, 0]) == 2.0\n")
    path = tmp_path / "run.json"
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, timeout=300,
                   env={**os.environ, "TT_HAL_TRACE": str(path), "PYTHONPATH": REPO})
    for written in (path, tmp_path / "run.1.json"):
        trace = json.loads(written.read_text())
        assert [e["name"] for e in events(trace, "X", "command")] == ["eltwise_add"]
        assert len(events(trace, "X", "kernel")) == 2  # a 32x64 tensor: two tiles, two cores


def test_submission_graph_shows_waiting_issued_and_done(tmp_path):
    device = hal.create_device("tenstorrent")
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
    host, chain = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(buffer, np.uint32(1), [], [(chain, 1)])
    assert chain.wait(1, timeout=TIMEOUT_NS)
    device.queue_fill(buffer, np.uint32(2), [(host, 1)], [(chain, 2)])
    device.queue_copy(buffer, buffer, [(chain, 2)], [(chain, 3)], 0, 2048, 2048)
    graph = device.submission_graph()
    assert [(n.id, n.label, n.state) for n in graph.nodes] == [
        (1, "queue_fill", "done"), (2, "queue_fill", "waiting"), (3, "queue_copy", "waiting")]
    links = {(e.producer, e.consumer, e.semaphore, e.value, e.reached) for e in graph.edges}
    assert links == {(None, 2, host.label, 1, False), (2, 3, chain.label, 2, False)}
    text = graph.to_text()
    assert "3 submissions (1 done, 2 waiting)" in text
    assert f"waits: {host.label}>=1 not reached (from host or initial value)" in text
    assert f"waits: {chain.label}>=2 not reached (from #2)" in text
    dot = graph.to_dot()
    assert dot.startswith('digraph "tt0 submissions" {') and dot.rstrip().endswith("}")
    assert f's2 -> s3 [label="{chain.label}>=2", style=dashed];' in dot
    assert "subgraph cluster_legend" in dot and all(f'label="submission {state}"' in dot
                                                    for state in ("done", "failed", "issued", "waiting"))
    png = tmp_path / "graph.png"
    pictures.save_submission_graph_png(graph, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    host.signal(1)
    assert chain.wait(3, timeout=TIMEOUT_NS)
    assert [n.state for n in device.submission_graph().nodes] == ["done"] * 3
    assert f"{host.label}>=1 reached (from host or initial value)" in device.submission_graph().to_text()
    device.close()


def test_chip_picture_shows_l1_use_and_shards(tmp_path):
    device = hal.create_device("tenstorrent")
    arch = device.arch
    shard = hal.ShardSpec(hal.CoreRangeSet([hal.CoreRange((0, 0), (2, 1))]), (64, 64))
    config = hal.MemoryConfig("height_sharded", "l1", shard)
    sharded = device.to_device(np.ones((384, 64), np.float32), dtype="bfloat16", layout="tile", memory_config=config)
    dram = device.to_device(np.ones((32, 32 * 30), np.float32), dtype="float32", layout="tile",
                            memory_config=hal.DRAM_MEMORY_CONFIG)
    names = [b["name"] for b in device.memory_map()]
    path = tmp_path / "chip.png"
    usage = pictures.save_chip_png(device, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10000
    # Six shards of 2x2 bf16 tiles (2048 B each) on cores (0,0)..(2,1), row-major.
    shard_cores = [(x, y) for y in range(2) for x in range(3)]
    expected_l1 = [0] * arch.worker_cores
    for x, y in shard_cores:
        expected_l1[y * arch.grid_x + x] = 4 * 2048
    assert usage["l1"] == expected_l1
    assert usage["shards"] == {y * arch.grid_x + x: [f"{names[0]}[{k}]"] for k, (x, y) in enumerate(shard_cores)}
    # 30 float32 tiles over 12 DRAM banks: page i in bank i % 12.
    assert usage["dram"] == [4096 * len(range(b, 30, 12)) for b in range(arch.dram_bank_count)]
    assert usage["circular_buffers"] == [0] * arch.worker_cores  # no trace given
    # With a trace: an eltwise add of the 24 tiles uses 24 cores, each with the add program's
    # three bf16 CBs of two blocks of Dst's 8 tiles (c_0, c_1, c_16: 2 x 8 x 2048 B each).
    device.begin_profiling()
    total = ops.add(sharded, sharded)
    device.end_profiling()
    usage = pictures.chip_usage(device.peak_memory_map(), arch, device.profiling_trace())
    assert usage["circular_buffers"] == [3 * 2 * 8 * 2048] * 24 + [0] * (arch.worker_cores - 24)
    assert len(device.peak_memory_map()) == len(names) + 1  # the peak holds the sum as well
    pictures.save_chip_png(device, path, device.peak_memory_map(), "at peak", device.profiling_trace())
    del sharded, dram, total
    device.close()


# ---- what the pictures say (issue 20, finding 5) ----------------------------------------------

def _core_patch(figure, x, y):
    (patch,) = [p for p in figure.axes[0].patches if p.get_gid() == f"core {x},{y}"]
    return patch


def _luminance(colour) -> float:
    r, g, b = colour[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_chip_shade_is_the_share_of_l1_not_relative_to_the_busiest_core(tmp_path):
    """A core 3% full is light even when it is the fullest core (it was drawn darkest),
    a full one is dark, an empty one white; the title and the colour bar name the
    quantity: the share of the core's allocatable L1 in buffer pages."""
    device = hal.create_device("tenstorrent://mock?arch=wormhole_b0&grid_x=2&grid_y=2")
    arch = device.arch
    page = 2048
    pages = round(0.03 * arch.l1_bank_size / page)  # 3% of core (0,0)'s L1
    shard = hal.ShardSpec(hal.CoreRangeSet([hal.CoreRange((0, 0), (0, 0))]), (32 * pages, 32))
    small = device.to_device(np.ones((32 * pages, 32), np.float32), dtype="bfloat16", layout="tile",
                             memory_config=hal.MemoryConfig("height_sharded", "l1", shard))
    figure, usage = pictures.chip_figure(device)
    assert usage["l1"][0] == pages * page and usage["l1_share"][0] == pytest.approx(0.03, abs=0.002)
    assert _luminance(_core_patch(figure, 0, 0).get_facecolor()) > 0.85  # light: 3% full
    assert _core_patch(figure, 1, 0).get_facecolor() == pictures.EMPTY_CORE
    assert _luminance(pictures.l1_colour(arch.l1_bank_size, arch.l1_bank_size)) < 0.3  # full: dark
    assert _luminance(pictures.l1_colour(arch.l1_bank_size // 2, arch.l1_bank_size)) < \
        _luminance(pictures.l1_colour(pages * page, arch.l1_bank_size))  # darker = fuller, on one scale
    title = figure.axes[0].get_title()
    assert "darker = fuller" not in title and "share of the core's" in title and "allocatable L1" in title
    bar = [a for a in figure.axes if "% of the core's" in a.get_ylabel()]
    assert len(bar) == 1 and bar[0].get_ylim() == (0.0, 100.0)  # the colour bar: 0..100% of L1, absolute
    assert "(3%)" in " ".join(t.get_text() for t in figure.axes[0].texts)
    del small
    device.close()


def test_chip_picture_names_buffers_as_the_user_knows_them(tmp_path):
    """Shards are labelled with the names given (names=), else with the first dispatch
    binding of them in the trace (export:bN), else with the HAL id bufN, which the
    legend says is one."""
    device = hal.create_device("tenstorrent")
    x = device.to_device(np.ones((64, 64), np.float32), dtype="bfloat16", layout="tile")
    unnamed = device.to_device(np.ones((64, 64), np.float32), dtype="bfloat16", layout="tile")
    device.begin_profiling()
    y = ops.add(x, x)
    device.end_profiling()
    memory_map, trace = device.peak_memory_map(), device.profiling_trace()
    hal_ids = {b["name"] for b in memory_map}
    y_id, x_id = y.get_buffer().allocation.label, x.get_buffer().allocation.label
    names = pictures.buffer_names(memory_map, trace)
    assert names[x_id] == "eltwise_add:b0" and names[y_id] == "eltwise_add:b2"
    assert names[unnamed.get_buffer().allocation.label] == unnamed.get_buffer().allocation.label  # no name known
    named = pictures.buffer_names(memory_map, trace, names={"x": x, "sum": y})
    assert named[x_id] == "x" and named[y_id] == "sum"
    figure, usage = pictures.chip_figure(device, memory_map, "at peak", trace, names={"x": x, "sum": y})
    cells = " ".join(t.get_text() for t in figure.axes[0].texts)
    assert "x[0]" in cells and "sum[0]" in cells and not any(f"{i}[" in cells for i in hal_ids - {
        unnamed.get_buffer().allocation.label})
    (legend,) = [t for a in figure.axes for t in a.texts if t.get_gid() == "legend"]
    text = legend.get_text()
    assert f"x (HAL id {x_id})" in text and "bound as eltwise_add:b0, eltwise_add:b1" in text
    assert f"{unnamed.get_buffer().allocation.label} (HAL allocation id, no name known)" in text
    assert "export:bN (binding N of the first dispatch that used it)" in text
    pictures.save_chip_png(device, tmp_path / "chip.png", memory_map, "at peak", trace, names={"x": x})
    assert (tmp_path / "chip.png").read_bytes()[:4] == b"\x89PNG"
    del x, y, unnamed
    device.close()


def test_submission_graph_labels_sit_mid_edge_and_a_legend_explains_the_picture(tmp_path):
    device = hal.create_device("tenstorrent")
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
    host, chain = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(buffer, np.uint32(1), [(host, 1)], [(chain, 1)])
    device.queue_copy(buffer, buffer, [(chain, 1)], [(chain, 2)], 0, 2048, 2048)
    device.queue_copy(buffer, buffer, [(chain, 1), (host, 2)], [(chain, 3)], 0, 2048, 2048)
    graph = device.submission_graph()
    figure = pictures.submission_graph_figure(graph)
    axes = figure.axes[0]
    arrows = {a.get_gid(): a for a in axes.texts if str(a.get_gid()).startswith("edge ") and "label" not in a.get_gid()}
    labels = {t.get_gid(): t for t in axes.texts if str(t.get_gid()).startswith("edge label ")}
    assert len(arrows) == len(labels) == len(graph.edges) == 4
    for index, edge in enumerate(graph.edges):
        arrow, label = arrows[f"edge {index}"], labels[f"edge label {index}"]
        (hx, hy), (sx, sy) = arrow.xy, arrow.xyann  # arrowhead, tail
        lx, ly = label.get_position()
        assert label.get_text() == f"{edge.semaphore}>={edge.value}"
        assert (lx, ly) == pytest.approx(((hx + sx) / 2, (hy + sy) / 2))  # at the middle of its arrow
        assert ((lx - hx) ** 2 + (ly - hy) ** 2) ** 0.5 > 0.25  # well clear of the arrowhead
    legend = [g for g in figure.legends if g.get_gid() == "legend"]
    assert len(legend) == 1
    entries = [t.get_text() for t in legend[0].get_texts()]
    for state in ("done", "failed", "issued", "waiting"):
        assert f"submission {state}" in entries
    assert any(e.startswith("host:") for e in entries) and "wait not reached yet" in entries
    assert any(e.startswith("wait sem>=value, reached") for e in entries)
    assert any(e.startswith("wait failed") for e in entries)
    assert "box: #id queue operation" in legend[0].get_title().get_text()
    pictures.save_submission_graph_png(graph, tmp_path / "graph.png")
    assert (tmp_path / "graph.png").read_bytes()[:4] == b"\x89PNG"
    host.signal(2)
    assert chain.wait(3, timeout=TIMEOUT_NS)
    device.close()
