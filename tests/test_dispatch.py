"""sim/dispatch.py: running a LaunchProgram on the simulated cores."""

from __future__ import annotations

import numpy as np
import pytest

from hal.backend import Binding, LaunchProgram
from tt_hal.kernels import eltwise
from tt_hal.sim import device as sim_device
from tt_hal.sim import dispatch
from tt_hal.sim.device import SimDevice
from tt_hal.target.layout import DataFormat
from tt_hal.target.placement import BufferType, CoreCoord, ShardedPages

BF16 = DataFormat.bfloat16


def _on_core(x: int) -> ShardedPages:
    """One page sharded on worker core (x, 0)."""
    core = CoreCoord(x, 0)
    return ShardedPages((1, 1), (1, 1), (core,), (core,))


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.int32])
def test_push_constants_of_any_integer_type_give_the_same_result(dtype):
    """LaunchProgram's push constants are int64 (the HAL's), which run_programs passes to
    run_round's compiled entry point directly; constants of another type go through
    numba's dispatcher, which compiles for them: both add two tiles alike."""
    device = SimDevice()
    try:
        export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
        a, b, out = (device.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(3))
        values = (0x3F80 + np.arange(1024, dtype=np.uint16)).reshape(32, 32)  # bf16 bits of 1.0 .. 255.0
        device.write_buffer(a, 0, values.view(np.uint8).ravel())
        device.write_buffer(b, 0, values.view(np.uint8).ravel())
        launch = LaunchProgram(export.program, export.name, (1, 1, 1), np.array([1, 1], dtype),
                               tuple(Binding(buffer, 0, 2048) for buffer in (a, b, out)))
        device.enqueue_program(0, launch)
        device.finish(0)
        result = device.read_buffer(out, 0, 2048).view(np.uint16)
        np.testing.assert_array_equal(result.reshape(32, 32), values + 0x80)  # x + x: the exponent one higher
        assert dispatch._RUN_ROUND[None] is not dispatch.interpreter.run_round
    finally:
        device.close()


def test_a_sharded_output_at_a_reused_address_gets_its_own_page_tables():
    """Dispatch bindings' tables are kept by placement (BindingTables): sharded buffers
    by their ShardedPages' identity too. An output sharded on core (1, 0), freed, and
    another at the same L1 address sharded on core (2, 0): the second dispatch writes
    its own core, not the first's; a third output of the second's ShardedPages object
    (as an eager op's outputs share their spec's) finds its tables and is right too."""
    device = SimDevice()
    try:
        export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
        a, b = (device.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(2))
        values = (0x3F80 + np.arange(1024, dtype=np.uint16)).reshape(32, 32)
        for buffer in (a, b):
            device.write_buffer(buffer, 0, values.view(np.uint8).ravel())

        def add_into(out):
            launch = LaunchProgram(export.program, export.name, (1, 1, 1), np.array([1, 1], np.int64),
                                   tuple(Binding(buffer, 0, 2048) for buffer in (a, b, out)))
            device.enqueue_program(0, launch)
            device.finish(0)
            return device.read_buffer(out, 0, 2048).view(np.uint16).reshape(32, 32)

        first = device.create_buffer(2048, 2048, BufferType.L1, _on_core(1))
        np.testing.assert_array_equal(add_into(first), values + 0x80)
        address = first.address
        device.free_buffer(first)
        device.memory.l1[1, address:address + 2048] = 0  # what the second dispatch must leave alone
        shard = _on_core(2)
        second = device.create_buffer(2048, 2048, BufferType.L1, shard)
        assert second.address == address
        np.testing.assert_array_equal(add_into(second), values + 0x80)
        assert not device.memory.l1[1, address:address + 2048].any()
        device.free_buffer(second)
        third = device.create_buffer(2048, 2048, BufferType.L1, shard)
        device.memory.l1[2, address:address + 2048] = 0
        np.testing.assert_array_equal(add_into(third), values + 0x80)
    finally:
        device.close()


def test_host_threads_go_by_the_workgroups_of_the_run_not_the_size_of_the_last(monkeypatch):
    """A program's runs are timed by workgroup count and push constants
    (PreparedProgram.predicted_seconds): one program serves tensors of every size (an
    eager op's, whose constants carry the size). After a one-tile run, a run of 64
    workgroups is predicted at 64 times its time and goes to the host threads when that
    passes PARALLEL_SECONDS, with the same result; once it has been timed, neither a
    one-tile run nor a run of 64 workgroups over fewer tiles changes its prediction."""
    device = SimDevice()
    try:
        export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
        tiles = 64
        a, b, out = (device.create_buffer(2048 * tiles, 2048, BufferType.DRAM) for _ in range(3))
        values = (0x3F80 + np.arange(1024 * tiles, dtype=np.uint16) % 1024)  # bf16 bits of 1.0 .. 255.0
        for buffer in (a, b):
            device.write_buffer(buffer, 0, values.view(np.uint8))
        bindings = tuple(Binding(buffer, 0, 2048 * tiles) for buffer in (a, b, out))

        arrays = {}

        def constants(count):  # one array per count, as a recorded command keeps its launches'
            return arrays.setdefault(count, np.array([count, count], np.int64))

        def add(workgroups, count):  # the first `count` tiles
            device.write_buffer(out, 0, np.zeros(2048 * tiles, np.uint8))
            device.enqueue_program(0, LaunchProgram(export.program, export.name, (workgroups, 1, 1),
                                                    constants(count), bindings))
            device.finish(0)
            got = device.read_buffer(out, 0, 2048 * count).view(np.uint16)
            np.testing.assert_array_equal(got, values[:1024 * count] + 0x80)

        prepared = device._programs.get(export.program)
        assert prepared.predicted_seconds(1, constants(1)) is None  # before the first run: no prediction
        add(1, 1)
        one = prepared.predicted_seconds(1, constants(1))
        assert one > 0 and prepared.predicted_seconds(None, constants(1)) == one
        assert prepared.predicted_seconds(64, constants(tiles)) == pytest.approx(64 * one)
        monkeypatch.setattr(dispatch, "THREADS", 2)
        monkeypatch.setattr(dispatch, "INLINE_SECONDS", 0.0)  # every run counts as long: keyed by its constants
        monkeypatch.setattr(dispatch, "PARALLEL_SECONDS", 2 * one)  # more than one workgroup's time, less than 64
        pooled = []
        pool_map = dispatch._POOL.map
        monkeypatch.setattr(dispatch._POOL, "map", lambda run, groups: pooled.append(1) or pool_map(run, groups))
        add(64, tiles)
        assert pooled, "a run predicted past PARALLEL_SECONDS ran on one thread"
        sixty_four = prepared.predicted_seconds(64, constants(tiles))
        add(1, 1)
        add(64, 2)  # as many workgroups, two tiles
        assert prepared.predicted_seconds(64, constants(tiles)) == sixty_four
        monkeypatch.setattr(dispatch, "PARALLEL_SECONDS", sixty_four / 2)
        pooled.clear()
        add(64, tiles)
        assert pooled, "a one-tile run talked the next run of 64 workgroups out of the host threads"
    finally:
        device.close()


def test_bindings_of_memory_at_one_place_and_range_are_one_object():
    """SimDevice.binding gives one Binding per placement and byte range, so that a .vmfb's
    calls over transient buffers placed where the last call's were launch the same
    LaunchPrograms (hal's DispatchCommand.lower): a buffer at a freed one's place gets
    the freed one's Binding. Another range, size or sharding is another Binding, and
    host memory (no placement of its own) gets a new one each time."""
    device = SimDevice()
    try:
        first = device.create_buffer(4096, 2048, BufferType.DRAM)
        binding = device.binding(first, 0, 4096)
        assert device.binding(first, 0, 4096) is binding
        assert device.binding(first, 2048, 2048) is not binding
        address = first.address
        device.free_buffer(first)
        again = device.create_buffer(4096, 2048, BufferType.DRAM)
        assert again.address == address and device.binding(again, 0, 4096) is binding
        device.free_buffer(again)
        smaller = device.create_buffer(2048, 2048, BufferType.DRAM)
        assert smaller.address == address and device.binding(smaller, 0, 2048) is not binding

        one = device.create_buffer(2048, 2048, BufferType.L1, _on_core(1))
        sharded = device.binding(one, 0, 2048)
        device.free_buffer(one)
        two = device.create_buffer(2048, 2048, BufferType.L1, _on_core(2))
        assert two.address == one.address and device.binding(two, 0, 2048) is not sharded
        host = device.import_host_buffer(np.zeros(64, np.uint8))
        assert device.binding(host, 0, 64) is not device.binding(host, 0, 64)
    finally:
        device.close()


def test_a_launch_run_again_takes_its_new_indirect_workgroup_count():
    """run_programs keeps each launch's run_round arguments (PreparedProgram.launch_arguments),
    its workgroup count among them; an indirect launch run again (a recorded command
    buffer's) reads its count anew and runs with it: two workgroups of one tile each,
    then one workgroup of both tiles."""
    device = SimDevice()
    try:
        export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
        a, b, out = (device.create_buffer(4096, 2048, BufferType.DRAM) for _ in range(3))
        counts = device.create_buffer(12, 12, BufferType.DRAM)
        values = 0x3F80 + np.arange(2048, dtype=np.uint16) % 1024  # bf16 bits of 1.0 .. 255.0
        for buffer in (a, b):
            device.write_buffer(buffer, 0, values.view(np.uint8))
        launch = LaunchProgram(export.program, export.name, None, np.array([2, 2], np.int64),
                               tuple(Binding(buffer, 0, 4096) for buffer in (a, b, out)), (counts, 0))
        for workgroups in (2, 1):
            device.write_buffer(counts, 0, np.array([workgroups, 1, 1], np.uint32).view(np.uint8))
            device.write_buffer(out, 0, np.zeros(4096, np.uint8))
            device.enqueue_program(0, launch)
            device.finish(0)
            np.testing.assert_array_equal(device.read_buffer(out, 0, 4096).view(np.uint16), values + 0x80)
    finally:
        device.close()


def test_programs_share_core_state_and_compute_as_in_fresh_state(monkeypatch):
    """Core state is shared by every program (PreparedProgram.take_state): a run takes
    the arrays the last run of as many cores left, by whichever program, warm in the
    host's caches; run_round resets what it reads, so each program computes as it
    would in fresh arrays. add, sub, add over the same tiles: each right, in one state."""
    device = SimDevice()
    try:
        taken = []
        take_state = dispatch.PreparedProgram.take_state
        monkeypatch.setattr(dispatch.PreparedProgram, "take_state",
                            lambda self, cores: taken.append(take_state(self, cores)) or taken[-1])
        a, b, out = (device.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(3))
        values = (0x3F80 + np.arange(1024, dtype=np.uint16)).reshape(32, 32)  # bf16 bits of 1.0 .. 255.0
        for buffer in (a, b):
            device.write_buffer(buffer, 0, values.view(np.uint8).ravel())
        expected = {"add": values + 0x80, "sub": np.zeros_like(values)}  # x + x: the exponent one higher
        for op in ("add", "sub", "add"):
            export = eltwise.eltwise_binary(op, BF16, BF16, BF16)
            device.enqueue_program(0, LaunchProgram(export.program, export.name, (1, 1, 1), np.array([1, 1]),
                                                    tuple(Binding(buffer, 0, 2048) for buffer in (a, b, out))))
            device.finish(0)
            got = device.read_buffer(out, 0, 2048).view(np.uint16).reshape(32, 32)
            np.testing.assert_array_equal(got, expected[op], err_msg=op)
        assert len(taken) == 3 and all(state is taken[0] for state in taken), "each program took its own state"
    finally:
        device.close()


@pytest.mark.parametrize("elsewhere", ["1", "0"])
def test_a_device_starts_compiling_the_tile_ops_elsewhere_when_it_is_made(monkeypatch, elsewhere):
    """On a cold start (run_round not compiled in this process) a device, when made, asks
    for compute of its FPU model to compile in another process, before its first
    dispatch; not with TT_HAL_COMPILE_ELSEWHERE=0, on one host core, or once run_round is
    compiled here (what it asks is indirect.compile_elsewhere's to decide: not if cached)."""
    started = []
    monkeypatch.setattr(dispatch, "_RUN_ROUND", {})
    monkeypatch.setattr(dispatch, "THREADS", 2)
    monkeypatch.setattr(dispatch.indirect, "compile_elsewhere", lambda *call: started.append(call))
    monkeypatch.setenv(dispatch.COMPILE_ELSEWHERE_ENVIRONMENT, elsewhere)
    device = SimDevice(numerics="fast")
    expected = [(dispatch.compute, dispatch.compute_arguments(device.fpu_model.jit_argument()))]
    assert started == (expected if elsewhere == "1" else [])
    monkeypatch.setattr(dispatch, "THREADS", 1)
    SimDevice(numerics="fast")
    monkeypatch.setattr(dispatch, "THREADS", 2)
    monkeypatch.setattr(dispatch, "_RUN_ROUND", {None: object()})
    SimDevice(numerics="fast")
    assert started == (expected if elsewhere == "1" else [])


def test_a_submissions_launches_run_as_one_command_and_stop_at_the_first_fault(monkeypatch):
    """A submission's consecutive launches are one queue command (run_programs): the
    three below run in order in one call; the second faults (its second workgroup reads
    a tile past its 2048-byte bindings), so its report is the submission's error, the
    first's result stands and the third never runs. The device runs work afterwards."""
    device = SimDevice()
    try:
        commands, run_programs = [], dispatch.run_programs
        monkeypatch.setattr(sim_device, "run_programs",
                            lambda runs, *args: commands.append(len(runs)) or run_programs(runs, *args))
        export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
        a, b, first, second, third = (device.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(5))
        values = (0x3F80 + np.arange(1024, dtype=np.uint16)).reshape(32, 32)  # bf16 bits of 1.0 .. 255.0
        for buffer in (a, b, third):
            device.write_buffer(buffer, 0, values.view(np.uint8).ravel())

        def launch(out, workgroups):
            return LaunchProgram(export.program, export.name, (workgroups, 1, 1), np.array([workgroups, workgroups]),
                                 tuple(Binding(buffer, 0, 2048) for buffer in (a, b, out)))

        def result(buffer):
            return device.read_buffer(buffer, 0, 2048).view(np.uint16).reshape(32, 32)

        event = device.enqueue_submission(0, (), [launch(first, 1), launch(second, 2), launch(third, 1)], None)
        assert event.synchronize(60) and commands == [3]
        assert event.error is not None and event.error.message.startswith(export.name), event.error
        np.testing.assert_array_equal(result(first), values + 0x80)  # x + x: the exponent one higher
        np.testing.assert_array_equal(result(third), values)
        event = device.enqueue_submission(0, (), [launch(third, 1)], None)
        assert event.synchronize(60) and event.error is None
        np.testing.assert_array_equal(result(third), values + 0x80)
    finally:
        device.close()
