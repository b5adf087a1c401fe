"""Command buffers (`iree/hal/command_buffer.h`): recorded transfer and dispatch
commands, executed in order on a queue by `HalDevice.queue_execute`.

A buffer operand is a HalBuffer or a `BindingRef` to a slot of the binding table
passed at execution, so one recording can run over different buffers. Each recorded
command is validated (hal/validation.py) as far as it can be when recorded, and
again, whole, when `prepare` lowers it into backend queue commands at execution.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import weakref
from typing import Sequence

import numpy as np

from hal import validation
from hal.backend import CopyBuffer, FillBuffer, LaunchProgram, WriteBuffer
from hal.buffer import HalBuffer
from hal.executable import HalExecutable
from hal.status import HalError, StatusCode
from hal.types import CommandBufferMode, CommandCategory
from tt_hal.target.program import ArgKind, BindingSource, Export


@dataclasses.dataclass(frozen=True)
class BindingRef:
    """Slot `slot` of the binding table, at `offset` for `length` bytes (None: to the end)."""

    slot: int
    offset: int = 0
    length: int | None = None


Operand = HalBuffer | BindingRef

# Entries of an executable's launch_parts (distinct push constants of its dispatches):
# a bound on what dynamic-shape constants can make it hold.
LAUNCH_PARTS_CACHE_SIZE = 1024
# LaunchPrograms kept per export and push constants, by (bindings, workgroup count): the
# dispatches of recordings made again on every call (a .vmfb's loops, its dynamic shapes)
# launch the same ones, whose prepared arguments the backend keeps per launch.
SHARED_LAUNCHES = 16
# Lowerings a recording keeps per binding table placement (HalCommandBuffer._table_key): a
# .vmfb's calls alternate between two placements of their transient buffers.
TABLES_KEPT = 4


def _resolve(operand: Operand, table: Sequence[HalBuffer], offset: int, length: int | None, what: str):
    """(buffer, offset, length) of an operand at execution."""
    if isinstance(operand, BindingRef):
        return validation.table_slot(operand.slot, table, operand.offset, operand.length, offset, length, what)
    return operand, offset, length


class HalEvent:
    """A device event for split barriers inside command buffers. Queues here run
    commands strictly in order, so signal/wait are recorded and validated only."""

    def __init__(self, device):
        self.device = device


@dataclasses.dataclass(frozen=True)
class FillCommand:
    target: Operand
    offset: int
    length: int | None
    pattern: bytes
    what: str = "fill"

    @property
    def operands(self) -> tuple:
        return (self.target,)

    def check_recorded(self, capacity: int) -> None:
        if isinstance(self.target, BindingRef):
            validation.binding_slot(self.target.slot, capacity, self.what)
            length = self.length if self.length is not None else self.target.length
            validation.check_aligned(self.target.offset + self.offset, length or 0, len(self.pattern), self.what)
        else:
            validation.fill(self.target, self.offset, self.length, self.pattern, self.what)

    def lower(self, table: Sequence[HalBuffer]) -> list:
        target, pattern = validation.fill(*_resolve(self.target, table, self.offset, self.length, self.what),
                                          self.pattern, self.what)
        if not target.length:
            return []
        return [FillBuffer(target.buffer.allocation.backend_buffer, target.allocation_offset, target.length, pattern)]


@dataclasses.dataclass(frozen=True)
class UpdateCommand:
    data: np.ndarray  # uint8, captured when recorded
    target: Operand
    offset: int
    what: str = "update"

    @property
    def operands(self) -> tuple:
        return (self.target,)

    def check_recorded(self, capacity: int) -> None:
        if isinstance(self.target, BindingRef):
            validation.binding_slot(self.target.slot, capacity, self.what)
        else:
            validation.update(self.target, self.offset, self.data, self.what)

    def lower(self, table: Sequence[HalBuffer]) -> list:
        buffer, offset, _ = _resolve(self.target, table, self.offset, self.data.shape[0], self.what)
        target = validation.update(buffer, offset, self.data, self.what)
        if not target.length:
            return []
        return [WriteBuffer(target.buffer.allocation.backend_buffer, target.allocation_offset, self.data)]


@dataclasses.dataclass(frozen=True)
class CopyCommand:
    source: Operand
    source_offset: int
    target: Operand
    target_offset: int
    length: int | None
    what: str = "copy"

    @property
    def operands(self) -> tuple:
        return self.source, self.target

    def check_recorded(self, capacity: int) -> None:
        refs = [o for o in (self.source, self.target) if isinstance(o, BindingRef)]
        for ref in refs:
            validation.binding_slot(ref.slot, capacity, self.what)
        if not refs:
            validation.copy(self.source, self.source_offset, self.target, self.target_offset, self.length, self.what)

    def lower(self, table: Sequence[HalBuffer]) -> list:
        source = _resolve(self.source, table, self.source_offset, self.length, f"{self.what} source")
        target = _resolve(self.target, table, self.target_offset, self.length, f"{self.what} target")
        s, t = validation.copy(source[0], source[1], target[0], target[1], source[2], self.what)
        if not s.length:
            return []
        return [CopyBuffer(s.buffer.allocation.backend_buffer, s.allocation_offset,
                           t.buffer.allocation.backend_buffer, t.allocation_offset, s.length)]


@dataclasses.dataclass(frozen=True)
class DispatchCommand:
    executable: HalExecutable
    export_ordinal: int
    workgroup_count: tuple[int, int, int] | Operand  # an operand: three uint32 read when it runs
    constants: bytes
    bindings: tuple  # each (operand, offset, length); dispatch() takes an operand alone for (operand, 0, None)
    what: str = "dispatch"
    # Binding index -> the validated range of a buffer bound directly, when recorded: a
    # buffer's size, usage and placement never change, so lowering checks it alive only.
    recorded_ranges: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @property
    def operands(self) -> tuple:
        bindings = tuple(operand for operand, _, _ in self.bindings)
        return bindings if isinstance(self.workgroup_count, tuple) else (*bindings, self.workgroup_count)

    def check_recorded(self, capacity: int) -> None:
        export = validation.dispatch(self.executable, self.export_ordinal, self.constants, len(self.bindings),
                                     self.what)
        for k, (operand, offset, length) in enumerate(self.bindings):
            if isinstance(operand, BindingRef):
                validation.binding_slot(operand.slot, capacity, self.what)
            else:
                self.recorded_ranges[k] = validation.dispatch_binding(operand, offset, length,
                                                                      k in export.page_aligned_bindings,
                                                                      f"{self.what} binding {k}")
        if isinstance(self.workgroup_count, BindingRef):
            validation.binding_slot(self.workgroup_count.slot, capacity, self.what)
        elif not isinstance(self.workgroup_count, tuple):
            validation.indirect_workgroup_count(self.workgroup_count, 0, f"{self.what} workgroup count")

    @functools.cached_property
    def _fixed(self) -> tuple:
        """What every execution lowers the same way: _launch_parts', the LaunchPrograms
        of every dispatch of this export with these push constants (SHARED_LAUNCHES), then
        per binding the last buffer it resolved to and its Binding, and a list holding
        the last execution's (bindings, LaunchPrograms) or None."""
        key = (self.export_ordinal, self.constants, len(self.bindings), self.what)
        cache = self.executable.launch_parts
        parts = cache.get(key)
        if parts is None:
            parts = (*_launch_parts(self.executable, *key), {})
            if len(cache) >= LAUNCH_PARTS_CACHE_SIZE:
                cache.clear()
            cache[key] = parts
        return (*parts, [(_dead, None)] * len(self.bindings), [None])

    def lower(self, table: Sequence[HalBuffer], resolved: dict) -> list:
        """One LaunchProgram per stage of the export, in order (the compute queue runs
        each to completion before the next). A binding to the buffer it had last time
        (executions over the same tensors) is checked alive only: a buffer's size,
        usage and placement never change. `resolved` holds the table-slot bindings this
        execution's dispatches validated so far: a .vmfb's dispatches bind the same
        slots (its transient slab, whole) again and again. Where the backend gives the
        same Binding objects as last time (BackendDevice.binding: the simulator's, for
        memory at the same place), the last LaunchPrograms are launched again: a
        backend prepares a launch once."""
        export, what, binding_names, stages, tensors, shared, last, reused = self._fixed
        bindings, device_only = [], True
        for k, (operand, offset, length) in enumerate(self.bindings):
            is_ref = type(operand) is BindingRef
            source = table[operand.slot] if is_ref and operand.slot < len(table) else operand
            seen, binding = last[k]
            if seen() is source and not source.allocation.released:
                bindings.append(binding)
                device_only = device_only and source.allocation.is_device
                continue
            aligned = k in export.page_aligned_bindings
            key = (operand.slot, operand.offset, operand.length, offset, length, aligned) if is_ref else None
            binding = resolved.get(key)
            if binding is None:
                r = None if is_ref or source.allocation.released else self.recorded_ranges.get(k)
                if r is None:
                    where = binding_names[k]
                    r = validation.dispatch_binding(*_resolve(operand, table, offset, length, where), aligned, where)
                allocation = r.buffer.allocation
                binding = allocation.backend.binding(allocation.backend_buffer, r.allocation_offset, r.length)
                if key is not None:
                    resolved[key] = binding
            device_only = device_only and source.allocation.is_device
            last[k] = (weakref.ref(source), binding)  # weak: a recording must not keep its last tensors
            bindings.append(binding)
        workgroup_count, indirect = self.workgroup_count, None
        if not isinstance(workgroup_count, tuple):
            where = f"{what} workgroup count"
            buffer, offset, _ = _resolve(workgroup_count, table, 0, validation.INDIRECT_COUNT_BYTES, where)
            r = validation.indirect_workgroup_count(buffer, offset, where)
            workgroup_count, indirect = None, (r.buffer.allocation.backend_buffer, r.allocation_offset)
        bindings = tuple(bindings)
        previous = reused[0]
        if indirect is None and previous is not None and previous[0] == bindings:  # the same objects: == is fast
            return previous[1]
        # Shared only over device memory: an entry holds its backend buffers, and host memory's
        # hold their host arrays. By the buffers' ids (a backend's buffers need not be
        # hashable): an entry holds its bindings, so no other buffer takes their ids meanwhile.
        shared_key = (workgroup_count, *[(id(b.buffer), b.offset, b.length) for b in bindings]) \
            if indirect is None and device_only else None
        entry = shared.get(shared_key) if shared_key is not None else None
        launches = entry[1] if entry is not None else None
        if launches is None:
            sources = bindings + tensors  # what stages pick their bindings from (_stage's picks)
            launches = []
            for program, name, stage_count, constants, picks in stages:
                stage_bindings = bindings if picks is None else tuple(map(sources.__getitem__, picks))
                if stage_count is None:
                    launches.append(LaunchProgram(program, name, workgroup_count, constants, stage_bindings,
                                                  indirect))
                else:
                    launches.append(LaunchProgram(program, name, stage_count, constants, stage_bindings))
            if shared_key is not None:
                if len(shared) >= SHARED_LAUNCHES:  # bounded: cleared whole, as the caches of the backend
                    shared.clear()
                shared[shared_key] = (bindings, launches)
        if indirect is None:
            reused[0] = (bindings, launches)  # one assignment: executions on two threads may race here
        return launches


def _launch_parts(executable, ordinal: int, constants: bytes, binding_count: int, what: str) -> tuple:
    """(the export, the message prefix, each binding's name in messages, each stage's
    launch parts (_stage), the executable's tensors) of a dispatch."""
    export = validation.dispatch(executable, ordinal, constants, binding_count, what)
    what = f"{what} of {export.name}"
    values = np.frombuffer(constants, np.uint32).astype(np.int64)
    return (export, what, [f"{what} binding {k}" for k in range(binding_count)],
            [_stage(export, s, values, binding_count) for s in range(len(export.stages))],
            executable.tensor_bindings(ordinal))


def _dead() -> None:
    """A dead weak reference: what a binding resolved to before its first lowering."""


def _stage(export: Export, s: int, constants: np.ndarray, binding_count: int) -> tuple:
    """Stage `s` of a dispatch of `export` with push constants `constants` and
    `binding_count` bindings, as every execution launches it: (program, name, its own
    workgroup count or None, its push constants, its bindings or None) with its bindings
    as indices into the dispatch's bindings followed by the export's tensors. A stage
    takes the dispatch's workgroup count (an indirect one only then) and bindings where
    it has none of its own."""
    stage = export.stages[s]
    if stage.constants is not None:
        constants = np.array([c.value if c.kind is ArgKind.LITERAL else constants[c.value] for c in stage.constants],
                             np.int64)
    picks = None if stage.bindings is None else tuple(
        i if source is BindingSource.DISPATCH else binding_count + i for source, i in stage.bindings)
    return stage.program, export.stage_name(s), stage.workgroup_count, constants, picks


class _State(enum.Enum):
    INITIAL = "initial"
    RECORDING = "recording"
    EXECUTABLE = "executable"


class HalCommandBuffer:
    """Recorded transfer and dispatch commands (iree_hal_command_buffer_t), validated
    with IREE's rules as they are recorded; `device.queue_execute` runs them in order."""

    def __init__(
        self,
        device,
        binding_capacity: int = 0,
        begin: bool = True,
        mode: CommandBufferMode = CommandBufferMode.DEFAULT,
        categories: CommandCategory = CommandCategory.ANY,
    ):
        """The iree.runtime constructor form. Its command buffers are reusable (mode DEFAULT),
        since iree.runtime's local-task runs them again; pass mode=ONE_SHOT for IREE's
        submit-once contract, which is then enforced."""
        mode = CommandBufferMode(mode)
        validation.command_buffer_mode(mode, binding_capacity)
        self.device = device
        self.mode = mode
        self.categories = CommandCategory(categories)
        self.binding_capacity = int(binding_capacity)
        self.commands: list = []
        self._allocations: set = set()  # of the commands' direct buffers
        self._executables: set = set()  # the dispatches' executables, whose tensors their stages may bind
        self._dispatch_allocations: set = set()  # what kernels address: memory of the executing device only
        self._dispatch_slots: set[int] = set()
        self._slots: set[int] = set()  # binding-table slots the commands reference
        self._buffers: dict[int, HalBuffer] = {}  # the commands' direct buffers, by id
        # Without binding-table slots a recording lowers to the same queue commands every
        # time: (commands, allocations, dispatch allocations), kept from the first execution.
        self._lowered: tuple | None = None
        # _table_key -> (its Bindings, the queue commands) of the last executions over a binding table
        self._by_table: dict[tuple, tuple] = {}
        self._state = _State.INITIAL
        self.submitted = False  # a one-shot command buffer runs once
        if begin:
            self.begin()

    def __repr__(self) -> str:
        return f"<HalCommandBuffer {self._state.value}, {len(self.commands)} commands, mode={self.mode!s}>"

    @property
    def is_executable(self) -> bool:
        return self._state is _State.EXECUTABLE

    @property
    def has_dispatches(self) -> bool:
        return bool(self._executables)

    @property
    def uses_binding_table(self) -> bool:
        return bool(self._slots)

    def begin(self) -> None:
        if self._state is not _State.INITIAL:
            raise HalError(StatusCode.FAILED_PRECONDITION,
                           f"command buffer is {self._state.value}; begin() is allowed once")
        self._state = _State.RECORDING

    def end(self) -> None:
        self._check_recording("end")
        self._state = _State.EXECUTABLE

    def _check_recording(self, what: str) -> None:
        if self._state is not _State.RECORDING:
            raise HalError(
                StatusCode.FAILED_PRECONDITION,
                f"{what}: command buffer is not in a recording state; "
                "all recording must happen between a begin/end pair",
            )

    def _record(self, command, category: CommandCategory, end: bool = False) -> None:
        if not int(self.mode) & CommandBufferMode.UNVALIDATED.value:  # ints: IntFlag operators are slow
            validation.category(self.categories, category, command.what)
            command.check_recorded(self.binding_capacity)
        dispatch = isinstance(command, DispatchCommand)
        for operand in command.operands:
            if isinstance(operand, BindingRef):
                self._slots.add(operand.slot)
                if dispatch:
                    self._dispatch_slots.add(operand.slot)
            elif isinstance(operand, HalBuffer):
                self._allocations.add(operand.allocation)
                self._buffers[id(operand)] = operand
                if dispatch:
                    self._dispatch_allocations.add(operand.allocation)
        if dispatch:
            self._executables.add(command.executable)
        self.commands.append(command)
        if end:
            self.end()

    # Transfer commands.
    def fill(self, target_buffer, pattern, target_offset: int = 0, length: int | None = None,
             end: bool = False) -> None:
        self._check_recording("fill")
        command = FillCommand(target_buffer, int(target_offset), length, validation.check_fill_pattern(pattern))
        self._record(command, CommandCategory.TRANSFER, end)

    def update(self, source, target_buffer, target_offset: int = 0, length: int | None = None,
               end: bool = False) -> None:
        """Copies host bytes into the buffer; the bytes are captured now."""
        self._check_recording("update")
        data = validation.update_source(source, length).copy()
        self._record(UpdateCommand(data, target_buffer, int(target_offset)), CommandCategory.TRANSFER, end)

    def copy(self, source_buffer, target_buffer, source_offset: int = 0, target_offset: int = 0,
             length: int | None = None, end: bool = False) -> None:
        self._check_recording("copy")
        if length is None and isinstance(source_buffer, HalBuffer) and isinstance(target_buffer, HalBuffer):
            if source_buffer.byte_length() - source_offset != target_buffer.byte_length() - target_offset:
                raise HalError(
                    StatusCode.INVALID_ARGUMENT,
                    "If length is not provided, source and target buffer length must match and it does not. "
                    "Provide explicit length=",
                )
        command = CopyCommand(source_buffer, int(source_offset), target_buffer, int(target_offset), length)
        self._record(command, CommandCategory.TRANSFER, end)

    # Synchronisation commands: the queues run in order, so these only validate.
    def execution_barrier(self, source_stage_mask: int = 0, target_stage_mask: int = 0, flags: int = 0) -> None:
        self._check_recording("execution_barrier")

    def signal_event(self, event: HalEvent, source_stage_mask: int = 0) -> None:
        self._check_recording("signal_event")
        self._check_event(event)

    def reset_event(self, event: HalEvent, source_stage_mask: int = 0) -> None:
        self._check_recording("reset_event")
        self._check_event(event)

    def wait_events(self, events: Sequence[HalEvent], source_stage_mask: int = 0, target_stage_mask: int = 0) -> None:
        self._check_recording("wait_events")
        for event in events:
            self._check_event(event)

    def _check_event(self, event) -> None:
        if not isinstance(event, HalEvent):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"expected a HalEvent, got {type(event).__name__}")

    # Dispatch.
    def dispatch(self, executable, export_ordinal: int, workgroup_count, constants=b"", bindings=(),
                 flags: int = 0) -> None:
        """Records a dispatch of `executable`'s export over a workgroup grid. `workgroup_count`
        is (x, y, z) or a buffer (or BindingRef) holding three uint32 (indirect)."""
        self._check_recording("dispatch")
        if not isinstance(workgroup_count, (HalBuffer, BindingRef)):
            workgroup_count = validation.workgroup_count(workgroup_count)
        bindings = tuple((b + (0, None))[:3] if isinstance(b, tuple) else (b, 0, None) for b in bindings)
        command = DispatchCommand(executable, int(export_ordinal), workgroup_count, validation.constants(constants),
                                  bindings)
        self._record(command, CommandCategory.DISPATCH)

    def prepare(self, table: Sequence[HalBuffer]) -> tuple[list, set, set]:
        """(the backend queue commands of every recorded command, validated against the
        binding table (hal.validation.binding_table's buffers), the allocations they use,
        the allocations its dispatches' kernels address) for an execution, binding-table
        slots resolved. Kernels name memory by address on the device that runs them, so
        the latter must be that device's (transfers may cross devices). A recording
        without binding-table slots lowers the same way every time once it has ended, so
        that is done once; its buffers are checked alive each time."""
        if self._lowered is not None:
            for buffer in self._buffers.values():
                buffer.check_alive()
            return self._lowered
        key = self._table_key(table)
        entry = self._by_table.get(key[0]) if key is not None else None
        lowered = entry[1] if entry is not None else None
        if lowered is not None:
            for buffer in [*self._buffers.values(), *(table[slot] for slot in self._slots)]:
                buffer.check_alive()
        else:
            resolved: dict = {}  # DispatchCommand.lower's table-slot bindings of this execution
            lowered = [queue_command for command in self.commands for queue_command in
                       (command.lower(table, resolved) if type(command) is DispatchCommand else command.lower(table))]
            if key is not None:
                if len(self._by_table) >= TABLES_KEPT:  # bounded: cleared whole, as the backend's caches
                    self._by_table.clear()
                self._by_table[key[0]] = (key[1], lowered)  # holding the Bindings: their ids stay theirs
        used, dispatched = self._direct_allocations if self._state is _State.EXECUTABLE else self._direct()
        prepared = (lowered, used | {table[slot].allocation for slot in self._slots},
                    dispatched | {table[slot].allocation for slot in self._dispatch_slots})
        if self._state is _State.EXECUTABLE and not self._slots:
            self._lowered = prepared
        return prepared

    def _table_key(self, table: Sequence[HalBuffer]) -> tuple[tuple, list] | None:
        """What lowering an ended recording reads of `table`, where its dispatches (with
        their own workgroup counts) reference each slot many times (_keyed_slots) and
        every slot is device memory: per slot the buffer's usage, access and range and
        the backend's Binding of its whole allocation (BackendDevice.binding: the
        simulator's is one object per placement), by id (a backend's buffers need not be
        hashable); and those Bindings. Equal keys lower to the same queue commands, so
        those of the last executions (TABLES_KEPT) stand: a .vmfb's calls bind each call's
        transient buffers, placed where an earlier call's were (they differ by object
        only), and lowering its dispatches took ~5 us each. None: lowered each time."""
        slots = self._keyed_slots if self._slots and self._state is _State.EXECUTABLE else ()
        if not slots or slots[-1] >= len(table):
            return None
        key, bindings = [], []
        for slot in slots:
            buffer = table[slot]
            allocation = buffer.allocation
            if not allocation.is_device:
                return None
            bindings.append(allocation.backend.binding(allocation.backend_buffer, 0, allocation.size))
            key.append((buffer.allowed_usage(), buffer.allowed_access, buffer.byte_offset, buffer.byte_length(),
                        id(bindings[-1])))
        return tuple(key), bindings

    @functools.cached_property
    def _keyed_slots(self) -> tuple[int, ...]:
        """The slots of an ended recording in order, where its lowering is kept per table
        (_table_key): only dispatches with their own workgroup counts reference them
        (other commands' queue commands name the slots' buffers), over twice as many
        times as there are slots (a key costs about what lowering a binding does: an
        eager op's one dispatch lowers faster than its key is made). Else ()."""
        references = 0
        for command in self.commands:
            if type(command) is DispatchCommand:
                if not isinstance(command.workgroup_count, tuple):
                    return ()
                references += sum(type(operand) is BindingRef for operand, _, _ in command.bindings)
            elif any(isinstance(operand, BindingRef) for operand in command.operands):
                return ()
        return tuple(sorted(self._slots)) if references > 2 * len(self._slots) else ()

    def _direct(self) -> tuple[frozenset, frozenset]:
        """(the allocations the commands use, what their dispatches' kernels address:
        allocations and the executables, whose tensors they bind) without binding-table
        slots' buffers. An executable's tensors are its own (HalExecutable.backend): the
        submission holds the executable (this recording), not each of them."""
        return frozenset(self._allocations), frozenset(self._dispatch_allocations | self._executables)

    @functools.cached_property
    def _direct_allocations(self) -> tuple[frozenset, frozenset]:
        """_direct() of an ended recording: what it records no longer changes."""
        return self._direct()

