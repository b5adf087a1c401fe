"""Running a program on the simulated cores (EnqueueProgram): circular buffers laid
out in L1, runtime args from the dispatch, workgroups dealt to cores in rounds, and
faults turned into readable reports.

A fault fails the dispatch with a HalError whose message says what a person
debugging the kernel needs: which core, which kernel, which instruction, and for a
deadlock what every blocked kernel waits for.
"""

from __future__ import annotations

import builtins
import concurrent.futures
import functools
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable

import numpy as np

from hal.backend import Binding, LaunchProgram
from hal.log import get_logger
from hal.status import HalError, StatusCode
from tt_hal.sim import indirect, interpreter
from tt_hal.sim.compute import ADDRESS_ROWS, compute, compute_arguments, kernel_addresses
from tt_hal.sim.faults import FAULTS, Fault
from tt_hal.sim.interpreter import PROCESSORS
from tt_hal.sim.memory import ChipMemory, SimBuffer
from tt_hal.sim.numerics import DST_TILES, FpuModel
from tt_hal.target.isa import ADDRGEN_SLOTS, NUM_CIRCULAR_BUFFERS, NUM_REGISTERS, WIDTH, Op, Processor, disassemble
from tt_hal.target.placement import BufferType
from tt_hal.target.program import KernelConfig, Program
from tt_hal.target.sizes import TILE_ELEMENTS, ceil_div, round_up
from tt_hal.target.workgroups import arg_template, binding_table, core_coord

log = get_logger(__name__)

# What one dispatch may execute before it counts as a runaway kernel (SimDevice.instruction_budget):
# instructions, a tile op counting as interpreter.TILE_OP_COST of them.
DEFAULT_INSTRUCTION_BUDGET = 200_000_000
# What one dispatch may take in wall-clock seconds (SimDevice.dispatch_timeout): the budget bounds
# instructions, whose cost varies a thousandfold (a tile op, an SFPU loop, a load from other work).
DEFAULT_DISPATCH_TIMEOUT = 60.0
_PROCESSOR_ORDER = tuple(Processor)  # interpreter state row p runs Processor(p)


class PreparedProgram:
    """What the interpreter needs of a program, built once per program: code of the
    three processors, compile-time args, runtime-arg templates, the circular-buffer
    table and the compute configuration."""

    def __init__(self, program: Program, arch):
        self.kernels = [program.kernel(p) for p in _PROCESSOR_ORDER]
        present = [k for k in self.kernels if k is not None]
        length = max(k.code.shape[0] for k in present) if present else 1
        self.codes = np.zeros((PROCESSORS, length, WIDTH), np.int64)
        self.codes[:, :, 0] = int(Op.HALT)
        ct_width = max([len(k.compile_args) for k in present] + [1])
        self.ct_args = np.zeros((PROCESSORS, ct_width), np.int64)
        self.templates = [()] * PROCESSORS
        for p, kernel in enumerate(self.kernels):
            if kernel is not None:
                self.codes[p, :kernel.code.shape[0]] = kernel.code
                self.ct_args[p, :len(kernel.compile_args)] = kernel.compile_args
                self.templates[p] = program.runtime_args[program.kernels.index(kernel)]
        self.rt_counts = np.array([len(t) for t in self.templates], np.int64)
        self.arg_table = np.zeros((PROCESSORS, max(int(self.rt_counts.max()), 1), 2), np.int64)
        for p, template in enumerate(self.templates):
            self.arg_table[p, :len(template)] = arg_template(template)
        # Core states have room for a power of two of runtime args, so that most programs share them.
        self.arg_room = 1 << (self.arg_table.shape[1] - 1).bit_length()
        compute = self.kernels[Processor.COMPUTE]
        config = compute.config if compute is not None else KernelConfig()
        self.fidelity = int(config.math_fidelity)
        self.fp32_dest = bool(config.fp32_dest_acc_en)
        self.dst_capacity = config.dst_capacity()
        # Circular buffers from the bottom of the unreserved L1 upwards.
        self.cb_config = np.zeros((NUM_CIRCULAR_BUFFERS, 4), np.int64)
        address = arch.l1_unreserved_base
        for cb in sorted(program.circular_buffers, key=lambda cb: cb.index):
            self.cb_config[cb.index] = (int(cb.data_format), cb.page_size, cb.num_pages, address)
            address = round_up(address + cb.total_size, arch.l1_alignment)
        self.cb_end = address
        self.program_arrays = (self.codes, self.ct_args, self.arg_table, self.rt_counts)  # run_round's arguments
        self.config = (self.cb_config, self.fidelity, self.fp32_dest, self.dst_capacity)
        self._arguments: dict[int, tuple] = {}  # id(launch) -> (launch, counts, fpu, arguments): launch_arguments
        # What the next run will take (predicted_seconds) decides threads and inline runs:
        # one host thread's seconds per workgroup in the last run of over INLINE_SECONDS
        # with each push-constant array (by identity: a recorded command's launches keep
        # theirs, and their bytes would cost a microsecond a launch; runs of dispatches
        # that small keep nothing here, so that their bookkeeping costs next to nothing),
        # and in the last run (of _last_workgroups workgroups).
        self._workgroup_seconds: dict[int, float] = {}
        self._last_workgroup_seconds: float | None = None
        self._last_workgroups = 0

    def predicted_seconds(self, workgroups: int | None, constants: np.ndarray) -> float | None:
        """One host thread's time for a run of `workgroups` workgroups (None: as many as
        the last run's) with push constants `constants`, per workgroup as the last run
        with these constants took, else as the last run took; None before the first
        run. Not simply the last run's time: one program serves tensors of every size
        (an eager op's, whose constants carry the size), and a run of one tile must not
        make the next run of a thousand skip the threads. A reused id of a dead
        constants array costs one misprediction at most."""
        keyed = self._workgroup_seconds
        seconds = keyed.get(id(constants), self._last_workgroup_seconds) if keyed else self._last_workgroup_seconds
        if seconds is None:
            return None
        return seconds * (self._last_workgroups if workgroups is None else workgroups)

    def record_run(self, workgroups: int, constants: np.ndarray, seconds: float) -> None:
        """A run of `workgroups` workgroups with push constants `constants` took one
        host thread `seconds`."""
        per_workgroup, keyed = seconds / workgroups, self._workgroup_seconds
        if seconds > INLINE_SECONDS:
            if len(keyed) >= 64:  # bounded: constants come and go
                keyed.clear()
            keyed[id(constants)] = per_workgroup
        elif keyed:
            keyed.pop(id(constants), None)  # short now: what the fallback predicts
        self._last_workgroup_seconds, self._last_workgroups = per_workgroup, workgroups

    def launch_arguments(self, launch: LaunchProgram, counts: tuple, memory: ChipMemory,
                         binding_tables: BindingTables, fpu: int | None) -> tuple[tuple, tuple, Callable]:
        """run_round's arguments for `launch` with workgroup count `counts` in FPU model
        `fpu` (FpuModel.jit_argument): those before (first, lo, hi, rows), those between
        rows and (budget, stop), and run_round's entry point for them. Kept per launch:
        a recorded command buffer's launches, and a .vmfb's whose bindings stay where
        they were (hal's DispatchCommand.lower), run again and again, and making 40
        arguments cost microseconds of each."""
        entry = self._arguments.get(id(launch))  # dict reads and writes are atomic: queues may share a program
        if entry is not None and entry[0] is launch and entry[1] == counts and entry[2] == fpu:
            return entry[3]
        tables = binding_tables.get(launch.bindings)
        program = (*self.program_arrays, launch.constants, tables[4], np.array(counts, np.int64))
        chip = (memory.l1, memory.dram, memory.arch.l1_unreserved_base, *tables[:4], *self.config, fpu)
        run_round = _RUN_ROUND.get(fpu) if launch.constants.dtype is _INT64 else interpreter.run_round
        if run_round is None:  # the first run of this FPU model with int64 constants
            _compile_interpreter(self, program, chip)
            run_round = _RUN_ROUND[fpu]
        arguments = (program, (*chip, kernel_addresses(fpu)), run_round)
        if len(self._arguments) >= BindingTables.SIZE:  # bounded: eager ops' launches come and go
            self._arguments.clear()
        self._arguments[id(launch)] = (launch, counts, fpu, arguments)  # holding it: its id stays its own
        return arguments

    def take_state(self, cores: int) -> CoreState:
        """Core state for a round of `cores`, from the idle states every program shares
        (_IDLE_STATES): a model's launches run one after another in the same arrays, warm
        in the host's caches, not each in its program's own (Dst alone is 64 KB a core).
        Each run takes its own (queues may run at once; dict.setdefault and list.pop are
        atomic); run_round resets what it reads."""
        idle = _IDLE_STATES.setdefault((cores, self.arg_room), [])
        try:
            return idle.pop()
        except IndexError:
            return CoreState(cores, self.arg_room)

    @staticmethod
    def return_state(state: CoreState) -> None:
        _IDLE_STATES[state.pcs.shape[0], state.rt_args.shape[2]].append(state)


# (cores, runtime-arg room) -> idle core states, shared by every program (PreparedProgram.take_state).
_IDLE_STATES: dict[tuple[int, int], list] = {}


class PreparedPrograms:
    """One device's prepared programs (they depend on its arch: L1 layout), each kept
    while its program lives. Safe across the device's queue threads."""

    def __init__(self, arch):
        self._arch = arch
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[weakref.ref, PreparedProgram]] = {}
        # Keys of dead programs, dropped at the next get. The weakref callback only appends:
        # the garbage collector may run it on a thread that holds the lock, inside get.
        self._dead: list[tuple[int, weakref.ref]] = []

    def get(self, program: Program) -> PreparedProgram:
        entry = self._entries.get(id(program))  # a dict read is atomic: the lock guards changes
        if entry is not None and entry[0]() is program:
            return entry[1]
        with self._lock:
            while self._dead:
                key, reference = self._dead.pop()
                if key in self._entries and self._entries[key][0] is reference:
                    del self._entries[key]
            entry = self._entries.get(id(program))
            if entry is None or entry[0]() is not program:
                entry = (weakref.ref(program, functools.partial(self._forget, id(program))),
                         PreparedProgram(program, self._arch))
                self._entries[id(program)] = entry
            return entry[1]

    def _forget(self, key: int, reference) -> None:
        self._dead.append((key, reference))


def _l1_overflow(prepared: PreparedProgram, memory: ChipMemory, name: str, lowest_buffer: int) -> HalError:
    """RESOURCE_EXHAUSTED: the program's circular buffers reach the L1 buffers (the lowest
    at `lowest_buffer`)."""
    base = memory.arch.l1_unreserved_base
    return HalError(
        StatusCode.RESOURCE_EXHAUSTED,
        f"{name}: L1 overflow: the program's circular buffers need L1 [{base:#x}, {prepared.cb_end:#x}) "
        f"({prepared.cb_end - base} B) but L1 buffers start at {lowest_buffer:#x}; shrink the "
        f"circular buffers or move tensors to DRAM")


def buffer_tables(buffers) -> tuple[np.ndarray, ...]:
    """Buffers as the NoC finds them (dataflow.noc_instruction): one row each of
    (is_dram, address, size, page size, aligned page size, first bank, banks, first
    page-table entry or -1), their banks joined, and the joined page tables of the
    sharded ones."""
    rows = np.zeros((len(buffers), 8), np.int64)
    banks, page_rows, page_addresses = [], [], []
    bank_count = table_count = 0
    for k, buffer in enumerate(buffers):
        table = -1
        if buffer.shard is not None:
            table = table_count
            table_count += len(buffer.page_rows)
            page_rows.append(buffer.page_rows)
            page_addresses.append(buffer.page_addresses)
        rows[k] = (buffer.buffer_type is BufferType.DRAM, buffer.address, buffer.size, buffer.page_size,
                   buffer.aligned_page_size, bank_count, len(buffer.banks), table)
        bank_count += len(buffer.banks)
        banks.append(buffer.banks)

    def joined(parts):
        return np.concatenate(parts).astype(np.int64, copy=False) if parts else _EMPTY

    return rows, joined(banks), joined(page_rows), joined(page_addresses)


_EMPTY = np.zeros(0, np.int64)


class BindingTables:
    """One device's recent dispatch bindings as the cores see them: buffer_tables of
    the bound buffers and each binding's BINDING_* args. Programs bind the same memory
    again and again: a command buffer its buffers, a module's calls their transient
    buffers, which the allocator places at the same addresses each call. So entries are
    kept by what the tables are made of (a buffer's placement; a sharded one's also by
    the identity of its ShardedPages), and a recorded launch executed again finds its
    tables by the identity of its bindings first (a buffer keeps its placement while it
    lives). Safe across threads."""

    SIZE = 1024

    def __init__(self):
        self._lock = threading.Lock()
        # ((placement, offset, length) per binding) -> (buffers, tables, whether a buffer is sharded)
        self._entries: dict[tuple, tuple] = {}
        self._recent: dict[int, tuple] = {}  # id(bindings) -> (bindings, tables)
        self._bindings: dict[tuple, Binding] = {}  # (placement, offset, length) -> its Binding (binding())

    def binding(self, buffer: SimBuffer, offset: int, length: int) -> Binding:
        """The Binding of `length` bytes of `buffer` from `offset`: one object per
        placement and range (SimDevice.binding), though an earlier one's buffer may have
        been freed since: the cores see the placement only, and a .vmfb's calls bind
        transient buffers that the allocator places where the last call's were, so they
        launch the same LaunchPrograms (hal's DispatchCommand.lower) and find their tables
        and arguments by identity. A sharded buffer's placement names its ShardedPages by
        id, which the kept Binding holds: no other can take that id meanwhile. Host
        memory has no placement of its own: a new Binding each time."""
        if buffer.buffer_type is BufferType.SYSTEM_MEMORY:
            return Binding(buffer, offset, length)
        key = (buffer.placement, offset, length)
        binding = self._bindings.get(key)  # dict reads and writes are atomic; two threads may make one each
        if binding is None:
            if len(self._bindings) >= 4 * self.SIZE:  # bounded: a cleared entry costs a re-lowering
                self._bindings.clear()
            binding = self._bindings[key] = Binding(buffer, offset, length)
        return binding

    def get(self, bindings: tuple[Binding, ...]) -> tuple[np.ndarray, ...]:
        """The tables of `bindings`, made once per key (one dispatch asks this per launch)."""
        recent = self._recent.get(id(bindings))  # dict reads are atomic: the lock guards changes
        if recent is not None and recent[0] is bindings:
            return recent[1]
        tables = self._by_placement(bindings)
        with self._lock:
            if len(self._recent) >= self.SIZE:  # cleared, not one evicted: the .vmfb path's fresh bindings
                self._recent.clear()  # churn through it, and a dict's oldest key is slow to find after many pops
            self._recent[id(bindings)] = (bindings, tables)
        return tables

    def _by_placement(self, bindings: tuple[Binding, ...]) -> tuple[np.ndarray, ...]:
        key = tuple([(b.buffer.placement, b.offset, b.length) for b in bindings])
        entry = self._entries.get(key)  # a dict read is atomic: the lock guards insertion and eviction
        if entry is not None and (not entry[2] or all(a.shard is b.buffer.shard for a, b in zip(entry[0], bindings)
                                                      if a.shard is not None)):
            return entry[1]
        buffers = tuple(b.buffer for b in bindings)
        args = binding_table([(b.buffer.address, b.buffer.buffer_type is BufferType.DRAM, b.buffer.page_size, b.offset,
                               b.length) for b in bindings])
        tables = (*buffer_tables(buffers), args)
        with self._lock:
            if len(self._entries) >= self.SIZE:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (buffers, tables, any(b.shard is not None for b in buffers))
        return tables


# A run predicted (PreparedProgram.predicted_seconds) to take one host thread longer than
# this runs its cores on host threads; one under INLINE_SECONDS runs on the enqueuing
# thread when its queue is idle: a hand-over to the queue's thread and back costs more
# than a few hundred microseconds of the caller's (0.5 ms -> 2 ms took 4-6% off
# torch_mlp's and jax_mixer's calls), and a .vmfb's submission runs on that thread whole
# if one launch may not.
PARALLEL_SECONDS = 0.002
INLINE_SECONDS = PARALLEL_SECONDS
THREADS = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8))
_POOL = concurrent.futures.ThreadPoolExecutor(THREADS, "tt-hal-cores")
# FpuModel.jit_argument -> run_round's compiled entry point for run_programs' argument
# types: called directly, it skips numba's typing of its 40 arguments at every call
# (0.65 us of a 10 us one-tile dispatch). Every argument but the push constants is made
# here with its types fixed; the constants are LaunchProgram's int64, checked per call
# (other types go through the dispatcher). Set by _compile_interpreter.
_RUN_ROUND: dict[int | None, Callable] = {}
_INT64 = np.dtype(np.int64)


class _Slot:
    """A dispatching thread's slot in its device's Watchdog: its stop flag (interpreter's
    `stop`, one array for all its dispatches) and (time.monotonic deadline, number) of
    the dispatch it runs, or None. `current` is replaced whole, so the watchdog thread
    reads a deadline and its dispatch's number together."""

    __slots__ = ("stop", "dispatches", "current", "__weakref__")

    def __init__(self):
        self.stop = np.array([0, -1], np.int64)
        self.dispatches = 0
        self.current: tuple[float, int] | None = None


NEVER_STOP = np.array([-1, 0], np.int64)  # the stop flag of an unwatched dispatch: never set
_NO_ADDRESSES = np.zeros(ADDRESS_ROWS, np.int64)  # run_round's address table when it runs no cores
COMPILE_ELSEWHERE_ENVIRONMENT = "TT_HAL_COMPILE_ELSEWHERE"  # "0": a cold start compiles in this process only


class Watchdog:
    """One device's dispatch deadlines. The numba interpreter cannot be interrupted, so a
    dispatch gets a `stop` flag (which the cores poll, interpreter.STOP_POLL) from this
    one thread, which sets it when the deadline passes: to the dispatch's number, so a
    thread's flag, made once (a new array a dispatch cost microseconds of a model's
    launch), stops only the dispatch that was late. The thread starts on first use,
    sleeps until the earliest deadline and holds no reference to the device.

    Each dispatching thread has a slot, registered once; a dispatch then only writes its
    deadline there, without a lock, and wakes the thread only when it is earlier than
    the time the thread sleeps until (a slot whose deadline moved later is looked at
    when the thread wakes for the earlier one). The thread publishes that time before
    it reads the slots a last time, so a deadline written meanwhile is never missed."""

    def __init__(self, name: str):
        self._name = name
        self._changed = threading.Condition(threading.Lock())
        self._slots: weakref.WeakSet[_Slot] = weakref.WeakSet()  # a thread's goes with it (threading.local)
        self._local = threading.local()  # .slot: this thread's _Slot
        self._wake_at = math.inf  # when the thread looks next
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, seconds: float) -> np.ndarray:
        """Starts the calling thread's dispatch with a deadline `seconds` from now; returns
        its stop flag. unwatch() ends it."""
        slot = getattr(self._local, "slot", None)
        if slot is None:
            slot = self._local.slot = _Slot()
            with self._changed:
                self._slots.add(slot)
                if self._thread is None and not self._closed:
                    self._thread = threading.Thread(target=self._run, name=f"{self._name}-watchdog", daemon=True)
                    self._thread.start()
        deadline = time.monotonic() + seconds
        slot.dispatches += 1
        slot.stop[1] = slot.dispatches
        slot.current = (deadline, slot.dispatches)
        if deadline < self._wake_at:  # the thread would sleep past it
            with self._changed:
                self._changed.notify()
        return slot.stop

    def unwatch(self) -> None:
        self._local.slot.current = None

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def _next(self, now: float) -> float:
        """Sets the stop flag of every dispatch past its deadline; the earliest other deadline."""
        earliest = math.inf
        for slot in self._slots:
            current = slot.current
            if current is not None:
                if current[0] <= now:
                    slot.stop[0] = current[1]
                else:
                    earliest = min(earliest, current[0])
        return earliest

    def _run(self) -> None:
        with self._changed:
            while not self._closed:
                now = time.monotonic()
                self._wake_at = self._next(now)
                if self._next(now) < self._wake_at:  # a watch() wrote its slot before it could see _wake_at
                    continue
                self._changed.wait(None if self._wake_at == math.inf else self._wake_at - now)


def compile_ahead(fpu: int | None) -> None:
    """Starts compiling compute for FPU model `fpu` (FpuModel.jit_argument) in a process
    of its own when numba's cache lacks it and the host has a second core, unless
    TT_HAL_COMPILE_ELSEWHERE=0 (indirect.compile_elsewhere; kernel_addresses then loads
    it): a device asks when it is made, about a second before a cold start's first
    dispatch (imports, tensors written), the helper's own start-up; the first dispatch
    compiles run_round meanwhile (_compile_interpreter)."""
    if THREADS > 1 and fpu not in _RUN_ROUND and os.environ.get(COMPILE_ELSEWHERE_ENVIRONMENT, "1") != "0":
        indirect.compile_elsewhere(compute, compute_arguments(fpu))


def _compile_interpreter(prepared: PreparedProgram, program: tuple, chip: tuple) -> None:
    """Compiles run_round for run_programs' arguments (`chip` ending in the fpu model;
    int64 push constants), or loads it from numba's cache, by running it on no cores:
    before a dispatch's deadline clock starts, as it takes seconds on a fresh install;
    then keeps its entry point (_RUN_ROUND). compute compiles meanwhile in a process
    of its own where compile_ahead starts one (and has not yet)."""
    fpu = chip[-1]
    compile_ahead(fpu)
    state = prepared.take_state(1)
    arguments = (*program, 0, 0, 0, state.rows, *chip, _NO_ADDRESSES, 0, NEVER_STOP, *state.thread_arrays[0])
    interpreter.run_round(*arguments)
    prepared.return_state(state)
    signature = tuple(interpreter.run_round.typeof_pyval(argument) for argument in arguments)
    _RUN_ROUND[fpu] = interpreter.run_round.overloads[signature].entry_point


def run_programs(runs: list[tuple], memory: ChipMemory, binding_tables: BindingTables, budget: int,
                 fpu_model: FpuModel = FpuModel.FAST, recorder=None, watchdog: Watchdog | None = None,
                 timeout: float = math.inf) -> None:
    """Runs the launches of `runs`, each (launch, prepared, predicted), in order, and
    stops at the first that faults with its HalError: every workgroup of a launch within
    `budget` instructions and, watched by `watchdog`, `timeout` seconds; its FPU ops in
    `fpu_model`. `recorder` (a hal.profiling.TraceRecorder) gets a slice per core and
    round. `predicted`: prepared.predicted_seconds of the launch's run when its caller
    has it (None: asked here; an indirect count's is asked here, once read), which
    decides whether its cores run on host threads. A submission's consecutive launches
    are one queue command (SimDevice.enqueue_programs): what they share (the lowest L1
    buffer, the watchdog's slot, core states) is looked up once, not at every launch."""
    arch = memory.arch
    cores = arch.worker_cores
    fpu = fpu_model.jit_argument()
    lowest_buffer = memory.l1_allocator.lowest_allocated()  # the queue's launches run one at a time
    watched = watchdog is not None and timeout < math.inf
    stop = NEVER_STOP
    states: dict[tuple[int, int], CoreState] = {}  # (cores, args) -> the state rounds of that many take
    debug = log.isEnabledFor(logging.DEBUG)
    try:
        for launch, prepared, predicted in runs:
            counts = launch.workgroup_count
            if launch.indirect is not None:
                buffer, offset = launch.indirect
                counts = tuple(int(v) for v in buffer.read(offset, 3 * 4).view(np.uint32))
                predicted = None
            total = counts[0] * counts[1] * counts[2]
            if total == 0:
                continue
            if prepared.cb_end > lowest_buffer:
                raise _l1_overflow(prepared, memory, launch.name, lowest_buffer)
            start = time.perf_counter()
            program, chip, run_round = prepared.launch_arguments(launch, counts, memory, binding_tables, fpu)
            if predicted is None:
                predicted = prepared.predicted_seconds(total, launch.constants)
            threads = THREADS if (predicted or 0.0) > PARALLEL_SECONDS else 1
            if watched:
                stop = watchdog.watch(timeout)  # set by the watchdog at this launch's deadline
            left = budget  # the launch's, spent over its rounds
            for first in range(0, total, cores):
                active = min(cores, total - first)
                state = states.get((active, prepared.arg_room))
                if state is None:
                    state = states[active, prepared.arg_room] = prepared.take_state(active)
                round_start = recorder.now() if recorder is not None else 0
                groups = min(threads, active)
                faults = state.faults
                if groups == 1:
                    left -= run_round(*program, first, 0, active, state.rows, *chip, left, stop,
                                      *state.thread_arrays[0])
                else:
                    bounds = [active * g // groups for g in range(groups + 1)]

                    def run(g, first=first, active=active, left=left, state=state, bounds=bounds, stop=stop,
                            run_round=run_round, program=program, chip=chip):  # this launch's, as map runs it now
                        lo, hi = bounds[g], bounds[g + 1]
                        return run_round(*program, first, lo, hi, state.rows, *chip, left * (hi - lo) // active, stop,
                                         *state.thread_arrays[g])

                    left -= builtins.sum(_POOL.map(run, range(groups)))
                error = None
                if faults[0, 0] if groups == 1 else faults[:groups, 0].any():
                    g = int(np.flatnonzero(faults[:groups, 0])[0])
                    error = _fault_error(prepared, launch.name, state, faults[g], arch, timeout)
                if recorder is not None:  # the faulting round too
                    _trace_round(recorder, prepared, launch.name, counts, state, active, first // cores, round_start,
                                 arch)
                if error is not None:
                    raise error
            seconds = time.perf_counter() - start
            prepared.record_run(total, launch.constants, seconds * min(threads, total))
            if debug:
                log.debug("%s: %d workgroups on %d cores in %d rounds, %.3f ms", launch.name, total,
                          min(total, cores), ceil_div(total, cores), seconds * 1e3)
    finally:
        if stop is not NEVER_STOP:  # a deadline was armed (a launch may fault before its own is)
            watchdog.unwatch()
        for state in states.values():
            PreparedProgram.return_state(state)


def _trace_round(recorder, prepared: PreparedProgram, name: str, counts, state, active: int, round_index: int,
                 start_ns: int, arch) -> None:
    """One slice per core of the round: a round's cores run in one numba call, so each
    spans the whole round; its args say what the core's kernels executed."""
    end = recorder.now()
    cb_bytes = prepared.cb_end - arch.l1_unreserved_base  # the L1 each core's circular buffers took
    for c in range(active):
        kernels = {
            _PROCESSOR_NAMES[p]: {"kernel": kernel.name, "instructions": int(state.instructions[c, p])}
            for p, kernel in enumerate(prepared.kernels) if kernel is not None
        }
        x, y = core_coord(c, arch.grid_x)
        recorder.complete(recorder.core_track(x, y), name, start_ns, end,
                          {"core": [x, y], "workgroup": [int(v) for v in state.workgroup_ids[c]],
                           "round": round_index, "kernels": kernels, "circular_buffer_bytes": cb_bytes}, "kernel")


_PROCESSOR_NAMES = ("writer (RISCV_0)", "reader (RISCV_1)", "compute")  # _PROCESSOR_ORDER's


class CoreState:
    """Every core's kernel state (interpreter.run_round resets it); core c uses L1 row
    rows[c]."""

    def __init__(self, cores: int, args: int):
        self.workgroup_ids = np.zeros((cores, 3), np.int64)
        self.rt_args = np.zeros((cores, PROCESSORS, args), np.int64)
        self.pcs = np.zeros((cores, PROCESSORS), np.int64)
        self.regs = np.zeros((cores, PROCESSORS, NUM_REGISTERS), np.int64)
        self.done = np.zeros((cores, PROCESSORS), np.bool_)
        self.waiting = np.full((cores, PROCESSORS, 2), interpreter.NO_WAIT, np.int64)
        self.cb_pushed = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.cb_popped = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.cb_reserved = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.addrgens = np.zeros((cores, PROCESSORS, ADDRGEN_SLOTS, 3), np.int64)
        self.dst = np.zeros((cores, DST_TILES, TILE_ELEMENTS), np.float32)
        self.dirty = np.zeros(cores, np.int64)
        self.rows = np.arange(cores, dtype=np.int64)
        self.instructions = np.zeros((cores, PROCESSORS), np.int64)
        self.acquired = np.zeros(cores, np.bool_)
        # a row per host thread running a part of the round: its fault, compute's working space
        self.faults = np.zeros((THREADS, 8), np.int64)
        self.work = np.zeros((THREADS, interpreter.WORK_BYTES), np.uint8)
        # in run_round's order: the state, then per host thread g its fault and working space
        self.arrays = (self.workgroup_ids, self.rt_args, self.pcs, self.regs, self.done, self.waiting, self.cb_pushed,
                       self.cb_popped, self.cb_reserved, self.addrgens, self.dst, self.dirty,
                       self.instructions, self.acquired)
        self.thread_arrays = [(*self.arrays, self.faults[g], self.work[g]) for g in range(THREADS)]  # views made once


def _core_name(index: int, arch) -> str:
    x, y = core_coord(index, arch.grid_x)
    return f"core ({x},{y})"


def _shown(lines: list[str]) -> str:
    """The first 12 lines of a report."""
    return "\n".join(lines[:12] + ([f"  ... and {len(lines) - 12} more"] if len(lines) > 12 else []))


def _fault_error(prepared: PreparedProgram, name: str, state, fault, arch, timeout: float) -> HalError:
    """The fault's report; `timeout` the dispatch's deadline in seconds."""
    kernels, cb_config = prepared.kernels, prepared.cb_config
    code = Fault(int(fault[0]))
    status, what = FAULTS[code]
    if code == Fault.DEADLINE:  # every core was running: where each kernel was
        lines = [f"  {_core_name(c, arch)} {kernel.name} ({kernel.processor.name}) at pc {state.pcs[c, p]}: "
                 f"`{_instruction(kernel, int(state.pcs[c, p]))}`, {state.instructions[c, p]} instructions executed"
                 for c in range(state.pcs.shape[0]) for p, kernel in enumerate(kernels)
                 if kernel is not None and not state.done[c, p]]
        return HalError(status, f"{name}: {what}; stopped at {timeout:g} s\n{_shown(lines)}")
    if code == Fault.DEADLOCK:
        lines = []
        for c in range(state.pcs.shape[0]):
            for p, kernel in enumerate(kernels):
                if kernel is None or state.done[c, p]:
                    continue
                cb, wanted = (int(v) for v in state.waiting[c, p])
                if cb == interpreter.NO_WAIT:  # stopped by another core group's fault, not blocked
                    continue
                held = int(state.cb_pushed[c, cb] - state.cb_popped[c, cb])
                op = Op(int(kernel.code[state.pcs[c, p], 0])).name.lower()
                lines.append(f"  {_core_name(c, arch)} {kernel.name} ({kernel.processor.name}) at pc "
                             f"{state.pcs[c, p]}: {op}(c_{cb}, {wanted}) but c_{cb} holds {held} of "
                             f"{cb_config[cb, 2]} pages")
        return HalError(status, f"{name}: {what}\n{_shown(lines)}")
    c, p, pc = int(fault[1]), int(fault[2]), int(fault[3])
    kernel = kernels[p]
    details = ", ".join(f"{v}" for v in fault[4:8])
    return HalError(status, f"{name}: {what}, on {_core_name(c, arch)} in {kernel.name} "
                            f"({kernel.processor.name}) at pc {pc}: `{_instruction(kernel, pc)}` (details {details})")


def _instruction(kernel, pc: int) -> str:
    """The instruction at `pc`, disassembled."""
    return disassemble(kernel.code[pc:pc + 1], kernel.register_names, first_pc=pc).split(None, 1)[-1].strip()
