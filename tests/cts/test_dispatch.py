"""Dispatch conformance, after IREE's CTS command_buffer dispatch tests (dispatch,
constants, constants with bindings, indirect parameters, multi-entrypoint,
multi-workgroup, pipeline, reuse, and queue dispatch), run on every backend.

The programs are the kernel library's over raw device buffers: a raw buffer's
4096-byte pages are float32 tiles, and the eltwise programs treat tile t of each
binding elementwise, so an elementwise result needs no tile layout. Values are small
integers and halves, exact through the unpacker's tf32 and every format here.
"""

import gc

import numpy as np
import pytest

import hal
from hal.backend import LaunchProgram
from hal.command_buffer import DispatchCommand
from tests.cts.ctsutil import BU, MT, SC, TIMEOUT_NS, raises_status, read_bytes, submit_and_wait, wait_ok
from tt_hal.kernels import eltwise, rowmajor
from tt_hal.kernels.common import workgroup_count
from tt_hal.target.isa import Broadcast, SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

F32 = DataFormat.float32
TILE = 1024  # float32 values per tile: one 4096-byte page of a raw buffer
SENTINEL = np.float32(-7.25)


@pytest.fixture(scope="module", autouse=True)
def compiled_simulator(device):
    """Runs one dispatch before the tests (and their watchdog): on a fresh install numba
    compiles the simulated cores first, which may take a minute."""
    source, target = device_buffer(device, values(1)), sentinel_buffer(device, 1)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32)), 0, (1, 1, 1), constants(1),
                [source, target])
    cb.end()
    done = device.create_semaphore(0)
    device.queue_execute(cb, [], [(done, 1)])
    assert done.wait(1, timeout=600 * 10**9), "the first dispatch did not finish in 10 minutes"


def prepare(device, *exports):
    return device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable(list(exports)))


def values(tiles: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).integers(-64, 64, tiles * TILE) / 2).astype(np.float32)


def device_buffer(device, array: np.ndarray):
    return device.allocator.allocate_buffer_copy(MT.DEVICE_LOCAL, BU.DEFAULT | BU.MAPPING, device, array)


def sentinel_buffer(device, tiles: int):
    return device_buffer(device, np.full(tiles * TILE, SENTINEL, np.float32))


def floats(buffer) -> np.ndarray:
    return read_bytes(buffer).view(np.float32)


def constants(*words) -> bytes:
    return np.array(words, np.uint32).tobytes()


def test_dispatch(device):
    """One dispatch of an elementwise program (IREE: command_buffer_dispatch_test, abs)."""
    tiles = 3
    x = values(tiles)
    source, target = device_buffer(device, x), sentinel_buffer(device, tiles)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32)), 0,
                workgroup_count(tiles, device.arch.worker_cores), constants(tiles), [source, target])
    cb.end()
    submit_and_wait(device, cb)
    assert np.array_equal(floats(target), np.abs(x))


def test_dispatch_constants(device):
    """Push constants reach the kernels: push constant 0 is the tile count, so a
    dispatch told 1 of 2 tiles leaves the second untouched."""
    x = values(2, seed=1)
    source, target = device_buffer(device, x), sentinel_buffer(device, 2)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.NEG, F32, F32)), 0, (1, 1, 1), constants(1),
                [source, target])
    cb.end()
    submit_and_wait(device, cb)
    got = floats(target)
    assert np.array_equal(got[:TILE], -x[:TILE]) and (got[TILE:] == SENTINEL).all()


def test_dispatch_constants_and_bindings(device):
    """Constants and three bindings together: a + b with b's row broadcast, Wt from
    push constant 1 (IREE: command_buffer_dispatch_constants_bindings_test)."""
    rows, columns = 2, 3  # tiles of a and out; b is one row of tiles
    a, b = values(rows * columns, seed=2), values(columns, seed=3)
    buffers = [device_buffer(device, a), device_buffer(device, b), sentinel_buffer(device, rows * columns)]
    export = eltwise.eltwise_binary("add", F32, F32, F32, broadcast=Broadcast.ROW)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, export), 0, (4, 1, 1), constants(rows * columns, columns), buffers)
    cb.end()
    submit_and_wait(device, cb)
    # Out tile t (column t % columns) adds row 0 of b's tile in its column to every row.
    broadcast_rows = np.tile(_tile_rows(b)[:, :1, :], (rows, 1, 1))
    assert np.array_equal(_tile_rows(floats(buffers[2])), _tile_rows(a) + broadcast_rows)


def test_dispatch_bindings_at_page_offsets(device):
    """Bindings that start at a page boundary past the start of their buffers: the
    kernels count pages from each binding's first page (BINDING_PAGE_OFFSET), for
    inputs and the output alike, and write nothing outside the output binding."""
    a, b = values(4, seed=14), values(4, seed=15)
    buffers = [device_buffer(device, a), device_buffer(device, b), sentinel_buffer(device, 4)]
    page = TILE * 4
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_binary("add", F32, F32, F32)), 0, (2, 1, 1), constants(2, 2),
                [(buffers[0], 2 * page, 2 * page), (buffers[1], page, 2 * page), (buffers[2], page, 2 * page)])
    cb.end()
    submit_and_wait(device, cb)
    got = floats(buffers[2])
    assert np.array_equal(got[TILE:3 * TILE], a[2 * TILE:] + b[TILE:3 * TILE])
    assert (got[:TILE] == SENTINEL).all() and (got[3 * TILE:] == SENTINEL).all()


def test_byte_addressed_bindings_start_anywhere(device):
    """IREE binds row-major tensors at any byte of a buffer: a program that addresses
    its bindings by bytes (tt_hal.kernels.rowmajor) takes bindings off page
    boundaries, directly and through a binding table, and writes only its output."""
    rows, columns = 5, 40
    x = values(1, seed=16)[:rows * columns]
    source = device_buffer(device, np.concatenate([np.zeros(4, np.float32), x]))
    executable = prepare(device, rowmajor.copy(F32))
    pushed = constants(*rowmajor.push_constants(rows, columns))
    nbytes = x.nbytes
    cb = hal.HalCommandBuffer(device)
    target = sentinel_buffer(device, 1)
    cb.dispatch(executable, 0, (1, 1, 1), pushed, [(source, 16, nbytes), (target, 48, nbytes)])
    cb.end()
    submit_and_wait(device, cb)
    reusable = hal.HalCommandBuffer(device, binding_capacity=2)
    reusable.dispatch(executable, 0, (2, 1, 1), pushed, [hal.BindingRef(0), hal.BindingRef(1)])
    reusable.end()
    table_target = sentinel_buffer(device, 1)
    submit_and_wait(device, reusable, binding_table=[(source, 16, nbytes), (table_target, 48, nbytes)])
    for got in (floats(target), floats(table_target)):
        assert np.array_equal(got[12:12 + x.size], x)
        assert (got[:12] == SENTINEL).all() and (got[12 + x.size:] == SENTINEL).all()


def _tile_rows(flat: np.ndarray) -> np.ndarray:
    """(tiles, 32, 32) row-major tiles from the face order of stored tiles."""
    faces = flat.reshape(-1, 2, 2, 16, 16)  # tile, face row, face column, row, column
    return faces.transpose(0, 1, 3, 2, 4).reshape(-1, 32, 32)


def test_dispatch_indirect_parameters(device):
    """The workgroup count read from a buffer when the dispatch runs (IREE:
    command_buffer_dispatch_indirect_parameters_test). The hardware backend's
    generated kernels do not support it yet: UNIMPLEMENTED, not a wrong result."""
    tiles = 4
    x = values(tiles, seed=4)
    source, target = device_buffer(device, x), sentinel_buffer(device, tiles)
    counts = device.allocator.allocate_buffer_copy(
        MT.DEVICE_LOCAL, BU.DEFAULT | BU.DISPATCH_INDIRECT_PARAMETERS | BU.MAPPING, device,
        np.array([2, 1, 1], np.uint32))
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32)), 0, counts, constants(tiles),
                [source, target])
    cb.end()
    if device.backend.mode == "hardware":
        with raises_status(SC.UNIMPLEMENTED):
            submit_and_wait(device, cb)
        assert (floats(target) == SENTINEL).all()
        return
    submit_and_wait(device, cb)
    assert np.array_equal(floats(target), np.abs(x))


def test_dispatch_multi_entrypoint(device):
    """An executable with two exports, found by ordinal and by name."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32),
                         eltwise.eltwise_unary(SfpuOp.NEG, F32, F32))
    assert executable.export_count == 2
    x = values(1, seed=5)
    source, absolute, negated = device_buffer(device, x), sentinel_buffer(device, 1), sentinel_buffer(device, 1)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, 0, (1, 1, 1), constants(1), [source, absolute])
    cb.dispatch(executable, executable.lookup_export_by_name(executable.export_info(1).name), (1, 1, 1),
                constants(1), [source, negated])
    cb.end()
    submit_and_wait(device, cb)
    assert np.array_equal(floats(absolute), np.abs(x)) and np.array_equal(floats(negated), -x)


def test_dispatch_multi_workgroup(device):
    """More workgroups than worker cores: the dispatch runs in rounds (waves), and a
    3-D workgroup grid covers every tile once."""
    tiles = 2 * device.arch.worker_cores + 5
    x = values(tiles, seed=6)
    source, target = device_buffer(device, x), sentinel_buffer(device, tiles)
    grid = (tiles // 3, 1, 3) if tiles % 3 == 0 else (tiles, 1, 1)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.NEG, F32, F32)), 0, grid, constants(tiles),
                [source, target])
    cb.end()
    submit_and_wait(device, cb)
    assert np.array_equal(floats(target), -x)


def test_dispatch_pipeline(device):
    """Dispatches in one command buffer run in order: the second reads what the
    first wrote (IREE: command_buffer_dispatch_pipeline_test)."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32),
                         eltwise.eltwise_unary(SfpuOp.NEG, F32, F32))
    tiles = 2
    x = values(tiles, seed=7)
    source, middle, target = device_buffer(device, x), sentinel_buffer(device, tiles), sentinel_buffer(device, tiles)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, 0, (2, 1, 1), constants(tiles), [source, middle])
    cb.execution_barrier()
    cb.dispatch(executable, 1, (2, 1, 1), constants(tiles), [middle, target])
    cb.end()
    submit_and_wait(device, cb)
    assert np.array_equal(floats(target), -np.abs(x))


def test_dispatch_reuse(device):
    """One reusable recording over binding-table slots, executed twice with different
    buffers (IREE: command_buffer_dispatch_reuse_test)."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32))
    cb = hal.HalCommandBuffer(device, binding_capacity=2)
    cb.dispatch(executable, 0, (1, 1, 1), constants(1), [hal.BindingRef(0), hal.BindingRef(1)])
    cb.end()
    for seed in (8, 9):
        x = values(1, seed=seed)
        source, target = device_buffer(device, x), sentinel_buffer(device, 1)
        submit_and_wait(device, cb, binding_table=[source, target])
        assert np.array_equal(floats(target), np.abs(x))


def test_recordings_of_a_dispatch_share_its_launch_parts(device):
    """Command buffers recording a dispatch of one export with the same push constants
    and binding count (a .vmfb records its dispatches again on every call) lower it from
    the parts the first one made (HalExecutable.launch_parts); other push constants make
    their own, and each recording runs with its own."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.NEG, F32, F32))
    x = values(2, seed=14)
    source = device_buffer(device, x)
    for tiles in (1, 1, 2):
        target = sentinel_buffer(device, 2)
        cb = hal.HalCommandBuffer(device)
        cb.dispatch(executable, 0, (1, 1, 1), constants(tiles), [source, target])
        cb.end()
        submit_and_wait(device, cb)
        got = floats(target)
        assert np.array_equal(got[:tiles * TILE], -x[:tiles * TILE]) and (got[tiles * TILE:] == SENTINEL).all()
    assert len(executable.launch_parts) == 2


def test_recordings_over_the_same_buffers_launch_the_same_programs(device):
    """Recordings of a dispatch over the same buffers with the same workgroup count (a
    .vmfb's loops and dynamic shapes record theirs again on every call) lower it to the
    same LaunchPrograms, whose prepared arguments a backend keeps per launch; another
    workgroup count or another buffer gets launches of its own, and each runs with its own."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.NEG, F32, F32))
    x = values(2, seed=15)
    source, first, second = device_buffer(device, x), sentinel_buffer(device, 2), sentinel_buffer(device, 2)

    def launches(target, grid) -> list:
        cb = hal.HalCommandBuffer(device)
        cb.fill(target, SENTINEL.tobytes())
        cb.execution_barrier()
        cb.dispatch(executable, 0, grid, constants(2), [source, target])
        cb.end()
        submit_and_wait(device, cb)
        assert np.array_equal(floats(target), -x)
        return [c for c in cb.prepare([])[0] if isinstance(c, LaunchProgram)]

    once = launches(first, (1, 1, 1))
    assert len(once) == 1 and launches(first, (1, 1, 1))[0] is once[0]
    other_count, other_buffer = launches(first, (2, 1, 1))[0], launches(second, (1, 1, 1))[0]
    assert other_count.workgroup_count == (2, 1, 1) and other_count is not once[0]
    assert other_buffer is not once[0] and other_buffer.bindings != once[0].bindings


def test_a_reused_recording_checks_each_execution_s_buffers(device):
    """A recording executed again over the buffers it had last time lowers their
    bindings once, but checks them every time: a buffer released since is
    FAILED_PRECONDITION, another buffer in the slot is bound instead, and the recording
    does not keep its last buffers alive (their memory goes when the caller drops them)."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32))
    cb = hal.HalCommandBuffer(device, binding_capacity=2)
    cb.dispatch(executable, 0, (1, 1, 1), constants(1), [hal.BindingRef(0), hal.BindingRef(1)])
    cb.end()
    x, y = values(1, seed=12), values(1, seed=13)
    source, target = device_buffer(device, x), sentinel_buffer(device, 1)
    for _ in range(2):
        submit_and_wait(device, cb, binding_table=[source, target])
        assert np.array_equal(floats(target), np.abs(x))
    source.release()
    with raises_status(SC.FAILED_PRECONDITION) as info:
        submit_and_wait(device, cb, binding_table=[source, target])
    assert "was deallocated; it cannot be used" in info.value.message  # refused at the call, by the binding's check
    other = device_buffer(device, y)
    submit_and_wait(device, cb, binding_table=[other, target])
    assert np.array_equal(floats(target), np.abs(y))
    statistics = device.allocator.statistics
    live = statistics["device_bytes_allocated"] - statistics["device_bytes_freed"]
    del other
    gc.collect()
    statistics = device.allocator.statistics
    assert statistics["device_bytes_allocated"] - statistics["device_bytes_freed"] == live - 4 * TILE


def test_a_recording_over_buffers_placed_as_before_launches_what_it_lowered_then(device, monkeypatch):
    """A reusable recording executed over binding tables whose buffers lie where an
    earlier execution's did (a .vmfb's calls: each call's transient buffers, placed as
    an earlier call's) launches the queue commands lowered then, where the backend gives
    one Binding per place (the simulator's; not the hardware backend's), without
    lowering its dispatches again (kept where they reference the slots many times: here
    three dispatches, each lowered once per lowering); a table of other buffers is
    lowered anew. Every execution computes over its own buffers."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32))
    cb = hal.HalCommandBuffer(device, binding_capacity=2)
    for _ in range(3):
        cb.dispatch(executable, 0, (1, 1, 1), constants(1), [hal.BindingRef(0), hal.BindingRef(1)])
    cb.end()
    lowered, lower = [], DispatchCommand.lower
    monkeypatch.setattr(DispatchCommand, "lower", lambda self, *args: lowered.append(self) or lower(self, *args))
    places = []
    for seed in range(20, 26):
        x = values(1, seed=seed)
        source, target = device_buffer(device, x), sentinel_buffer(device, 1)
        places.append(tuple(b.allocation.backend_buffer.address for b in (source, target)))
        submit_and_wait(device, cb, binding_table=[source, target])
        assert np.array_equal(floats(target), np.abs(x))
        del source, target
        gc.collect()  # their memory freed: the next ones are placed there
    assert len(set(places)) < len(places), f"no placement came twice: {places}"
    assert len(lowered) == 3 * (len(set(places)) if device.backend.mode == "mock" else len(places))
    x = values(2, seed=26)
    source, target = device_buffer(device, x), sentinel_buffer(device, 2)  # two tiles: other buffers
    before = len(lowered)
    submit_and_wait(device, cb, binding_table=[source, target])
    assert len(lowered) == before + 3
    assert np.array_equal(floats(target)[:TILE], np.abs(x[:TILE])) and (floats(target)[TILE:] == SENTINEL).all()


def test_a_buffer_bound_directly_is_checked_alive_when_the_recording_first_runs(device):
    """A buffer a dispatch binds directly is validated when recorded, and that range is
    used when the recording first runs (not validated again), but a buffer released in
    between is still FAILED_PRECONDITION there, the recording's other buffers untouched."""
    x = values(1, seed=14)
    source, target = device_buffer(device, x), sentinel_buffer(device, 1)
    before = floats(target)
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32)), 0, (1, 1, 1), constants(1),
                [source, target])
    cb.end()
    source.release()
    with raises_status(SC.FAILED_PRECONDITION) as info:
        submit_and_wait(device, cb)
    assert "was deallocated; it cannot be used" in info.value.message
    assert np.array_equal(floats(target), before)


def test_queue_dispatch_after_transfer_and_before_copy(device):
    """A dispatch on the compute queue between a queue_update and a queue_copy on the
    transfer queue, ordered only by semaphores (IREE: queue_dispatch_test)."""
    x = values(1, seed=10)
    source, target, copied = sentinel_buffer(device, 1), sentinel_buffer(device, 1), sentinel_buffer(device, 1)
    updated, dispatched, done = (device.create_semaphore(0) for _ in range(3))
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(prepare(device, eltwise.eltwise_unary(SfpuOp.NEG, F32, F32)), 0, (1, 1, 1), constants(1),
                [source, target])
    cb.end()
    gate = device.create_semaphore(0)
    device.queue_copy(target, copied, [(dispatched, 1)], [(done, 1)])  # submitted first, waits for the dispatch
    device.queue_execute(cb, [(updated, 1)], [(dispatched, 1)])
    device.queue_update(x, source, [(gate, 1)], [(updated, 1)])
    gate.signal(1)
    wait_ok(done, 1)
    assert np.array_equal(floats(copied), -x)


def test_binding_offset_off_a_page_boundary_is_invalid_at_the_call(device):
    """The library's tile programs address whole pages of a binding: a binding that
    starts inside a page is INVALID_ARGUMENT at dispatch() for a direct buffer, and at
    queue_execute for a binding-table slot, on every backend, before anything runs."""
    executable = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32))
    source, target = device_buffer(device, values(2, seed=11)), sentinel_buffer(device, 2)
    cb = hal.HalCommandBuffer(device)
    with raises_status(SC.INVALID_ARGUMENT) as info:
        cb.dispatch(executable, 0, (1, 1, 1), constants(1), [(source, 16, 4096), target])
    assert "binding 0 starts at byte 16, not at a page boundary" in info.value.message
    cb.dispatch(executable, 0, (1, 1, 1), constants(1), [(source, 4096, 4096), target])  # a page boundary: fine
    reusable = hal.HalCommandBuffer(device, binding_capacity=2)
    reusable.dispatch(executable, 0, (1, 1, 1), constants(1), [hal.BindingRef(0), hal.BindingRef(1)])
    reusable.end()
    done = device.create_semaphore(0)
    with raises_status(SC.INVALID_ARGUMENT) as info:
        device.queue_execute(reusable, [], [(done, 1)], binding_table=[(source, 16, 4096), target])
    assert "binding 0 starts at byte 16, not at a page boundary" in info.value.message
    assert done.query() == 0 and not done.wait(1, timeout=TIMEOUT_NS // 10_000)  # nothing was submitted
    assert (floats(target) == SENTINEL).all()


def test_one_execution_checks_every_use_of_a_shared_slot(device):
    """A .vmfb's dispatches bind the same binding-table slot again and again, and an
    execution validates each distinct use once: a use that passed does not let another
    pass, whether it is the same slot addressed by pages rather than by bytes, or
    another range of it. Nothing runs when one fails."""
    source, target = device_buffer(device, values(1, seed=17)), sentinel_buffer(device, 1)
    by_bytes = prepare(device, rowmajor.copy(F32)), constants(*rowmajor.push_constants(2, 32))
    by_pages = prepare(device, eltwise.eltwise_unary(SfpuOp.ABS, F32, F32)), constants(1)

    def execute(first, second, second_binding, window):
        cb = hal.HalCommandBuffer(device, binding_capacity=2)
        cb.dispatch(first[0], 0, (1, 1, 1), first[1], [hal.BindingRef(0), hal.BindingRef(1)])
        cb.dispatch(second[0], 0, (1, 1, 1), second[1], [second_binding, hal.BindingRef(1)])
        cb.end()
        device.queue_execute(cb, [], [(device.create_semaphore(0), 1)], binding_table=[window, target])

    execute(by_bytes, by_bytes, hal.BindingRef(0), (source, 16, 4096 - 16))  # fine: both address bytes
    with raises_status(SC.INVALID_ARGUMENT) as info:
        execute(by_bytes, by_pages, hal.BindingRef(0), (source, 16, 4096 - 16))
    assert "dispatch of eltwise_abs binding 0 starts at byte 16, not at a page boundary" in info.value.message
    with raises_status(SC.OUT_OF_RANGE) as info:
        execute(by_pages, by_pages, (hal.BindingRef(0), 4096, 4096), (source, 0, 4096))
    assert "range [4096, 8192) exceeds binding slot 0's 4096 bytes" in info.value.message
