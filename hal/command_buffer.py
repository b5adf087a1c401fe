"""Command buffers (`iree/hal/command_buffer.h`): recorded transfer and dispatch
commands, executed in order on a queue by `HalDevice.queue_execute`.

A buffer argument is a HalBuffer or a `BindingRef` to a slot of the binding table
passed at execution, so one recording can run over different buffers.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Sequence

from hal import validation
from hal.buffer import HalBuffer, to_bytes
from hal.status import HalError, StatusCode
from hal.types import BufferUsage, CommandBufferMode, CommandCategory, MemoryAccess


@dataclasses.dataclass(frozen=True)
class BindingRef:
    """Slot `slot` of the binding table, at `offset` for `length` bytes (None: to the end)."""

    slot: int
    offset: int = 0
    length: int | None = None


@dataclasses.dataclass
class BufferRange:
    """A resolved command operand: an allocation range."""

    buffer: HalBuffer
    offset: int  # inside `buffer`
    length: int


class HalEvent:
    """A device event for split barriers inside command buffers. Queues here run
    commands strictly in order, so signal/wait are recorded and validated only."""

    def __init__(self, device):
        self.device = device


@dataclasses.dataclass
class FillCommand:
    target: HalBuffer | BindingRef
    offset: int
    length: int | None
    pattern: bytes


@dataclasses.dataclass
class UpdateCommand:
    data: bytes
    target: HalBuffer | BindingRef
    offset: int


@dataclasses.dataclass
class CopyCommand:
    source: HalBuffer | BindingRef
    source_offset: int
    target: HalBuffer | BindingRef
    target_offset: int
    length: int | None


@dataclasses.dataclass
class DispatchCommand:
    executable: object
    export_ordinal: int
    workgroup_count: tuple[int, int, int] | HalBuffer | BindingRef
    constants: bytes
    bindings: tuple


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
        validation.check_mode(mode, binding_capacity)
        self.device = device
        self.mode = mode
        self.categories = CommandCategory(categories)
        self.binding_capacity = int(binding_capacity)
        self.commands: list = []
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
        return any(isinstance(c, DispatchCommand) for c in self.commands)

    def begin(self) -> None:
        if self._state is not _State.INITIAL:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"command buffer is {self._state.value}; begin() is allowed once")
        self._state = _State.RECORDING

    def end(self) -> None:
        self._check_recording("end")
        self._state = _State.EXECUTABLE

    def _check_recording(self, what: str) -> None:
        if self._state is not _State.RECORDING:
            raise HalError(
                StatusCode.FAILED_PRECONDITION,
                f"{what}: command buffer is not in a recording state; all recording must happen between a begin/end pair",
            )

    def _validated(self) -> bool:
        return not self.mode & CommandBufferMode.UNVALIDATED

    def _check_operand(self, ref, usage, access, offset, length, what):
        if isinstance(ref, BindingRef):
            if not 0 <= ref.slot < self.binding_capacity:
                raise HalError(
                    StatusCode.OUT_OF_RANGE,
                    f"{what}: binding slot {ref.slot} is outside the binding capacity {self.binding_capacity}",
                )
            return offset, length
        return validation.check_buffer(ref, usage, access, offset, length, what)

    def _record(self, command, end: bool) -> None:
        self.commands.append(command)
        if end:
            self.end()

    # Transfer commands.
    def fill(self, target_buffer, pattern, target_offset: int = 0, length: int | None = None, end: bool = False) -> None:
        self._check_recording("fill")
        pattern = validation.check_pattern(pattern)
        if self._validated():
            validation.check_category(self.categories, CommandCategory.TRANSFER, "fill")
            offset, length_ = self._check_operand(
                target_buffer, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE, target_offset, length, "fill")
            if isinstance(target_buffer, BindingRef):
                offset += target_buffer.offset
                length_ = length if length is not None else target_buffer.length
            validation.check_aligned(offset, length_ or 0, len(pattern), "fill")
        self._record(FillCommand(target_buffer, int(target_offset), length, pattern), end)

    def update(self, source, target_buffer, target_offset: int = 0, length: int | None = None, end: bool = False) -> None:
        """Copies host bytes into the buffer; the bytes are captured now."""
        self._check_recording("update")
        data = to_bytes(source)
        if length is not None:
            if not 0 <= length <= data.shape[0]:
                raise HalError(StatusCode.OUT_OF_RANGE, f"update length {length} exceeds the {data.shape[0]}-byte source")
            data = data[:length]
        if self._validated():
            validation.check_category(self.categories, CommandCategory.TRANSFER, "update")
            self._check_operand(target_buffer, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE,
                                target_offset, data.shape[0], "update")
        self._record(UpdateCommand(data.tobytes(), target_buffer, int(target_offset)), end)

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
        if self._validated():
            validation.check_category(self.categories, CommandCategory.TRANSFER, "copy")
            s_off, s_len = self._check_operand(source_buffer, BufferUsage.TRANSFER_SOURCE, MemoryAccess.READ,
                                               source_offset, length, "copy source")
            t_off, t_len = self._check_operand(target_buffer, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE,
                                               target_offset, s_len if length is None else length, "copy target")
            if isinstance(source_buffer, HalBuffer) and isinstance(target_buffer, HalBuffer):
                validation.check_no_overlap(source_buffer, s_off, target_buffer, t_off, t_len)
        self._record(CopyCommand(source_buffer, int(source_offset), target_buffer, int(target_offset), length), end)

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
        constants = validation.check_constants(constants)
        if isinstance(workgroup_count, (HalBuffer, BindingRef)):
            if self._validated():
                offset, length = self._check_operand(
                    workgroup_count, BufferUsage.DISPATCH_INDIRECT_PARAMETERS, MemoryAccess.READ, 0, None,
                    "dispatch workgroup count")
                if isinstance(workgroup_count, HalBuffer) and length < 12:
                    raise HalError(StatusCode.OUT_OF_RANGE,
                                   f"indirect workgroup count buffer has {length} bytes; needs 12")
        else:
            workgroup_count = validation.check_workgroup_count(workgroup_count)
        if self._validated():
            validation.check_category(self.categories, CommandCategory.DISPATCH, "dispatch")
            for i, binding in enumerate(bindings):
                ref = binding[0] if isinstance(binding, tuple) else binding
                self._check_operand(ref, BufferUsage.DISPATCH_STORAGE, MemoryAccess.NONE, 0, None, f"dispatch binding {i}")
        self.commands.append(DispatchCommand(executable, int(export_ordinal), workgroup_count, constants, tuple(bindings)))


def resolve_operand(ref, binding_table: Sequence, offset: int, length: int | None, usage, access, what) -> BufferRange:
    """A command operand at execution: a direct buffer, or a binding-table slot. A slot's
    range is the reference's offset plus the command's, inside the bound buffer, so
    alignment rules see the real offset."""
    if isinstance(ref, BindingRef):
        if not 0 <= ref.slot < len(binding_table):
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"{what}: binding slot {ref.slot} is outside the binding table of {len(binding_table)} entries",
            )
        entry = binding_table[ref.slot]
        buffer = entry[0].subspan(*entry[1:]) if isinstance(entry, tuple) else entry
        ref_offset, ref_length = buffer.calculate_range(ref.offset, ref.length)
        if length is None:
            length = ref_length - offset
        if offset + length > ref_length:
            raise HalError(StatusCode.OUT_OF_RANGE,
                           f"{what}: range [{offset}, {offset + length}) exceeds binding slot {ref.slot}'s "
                           f"{ref_length} bytes")
        offset += ref_offset
    else:
        buffer = ref
    offset, length = validation.check_buffer(buffer, usage, access, offset, length, what)
    return BufferRange(buffer, offset, length)
