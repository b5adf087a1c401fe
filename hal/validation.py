"""Validation of HAL operations, apart from recording and execution as in IREE's
`command_buffer_validation.c`: one function per command, each raising HalError with
IREE's status code.

Every caller goes through them: the command buffer as it records (what it can know
then), `queue_execute` for every command once the binding table is known, the queue
operations (queue_fill, queue_update, queue_copy) and mapping. So every backend
fails the same way at the same call, never later on a queue thread.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from hal.buffer import BufferRange, HalBuffer, check_aligned, check_fill_pattern, to_bytes
from hal.executable import HalExecutable
from hal.status import HalError, StatusCode
from hal.types import BufferUsage, CommandBufferMode, CommandCategory, MemoryAccess

__all__ = ["check_aligned", "check_fill_pattern"]  # the buffer rules commands share with mapping

INDIRECT_COUNT_BYTES = 12  # three uint32 workgroup counts


# Command buffers.
def command_buffer_mode(mode: CommandBufferMode, binding_capacity: int) -> None:
    if binding_capacity < 0:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"binding capacity {binding_capacity} is negative")
    if CommandBufferMode.ALLOW_INLINE_EXECUTION in mode:
        if CommandBufferMode.ONE_SHOT not in mode:
            raise HalError(StatusCode.INVALID_ARGUMENT, "inline execution is only allowed for one-shot command buffers")
        if binding_capacity:
            raise HalError(StatusCode.INVALID_ARGUMENT, "inline execution is not allowed with binding tables")


def category(categories: CommandCategory, required: CommandCategory, what: str) -> None:
    if not int(categories) & int(required):
        raise HalError(StatusCode.FAILED_PRECONDITION,
                       f"{what}: command buffer categories {categories!s} do not include {required!s}")


def binding_slot(slot: int, capacity: int, what: str) -> None:
    """A recorded reference to binding-table slot `slot` of a command buffer with `capacity` slots."""
    if not 0 <= slot < capacity:
        raise HalError(StatusCode.OUT_OF_RANGE,
                       f"{what}: binding slot {slot} is outside the binding capacity {capacity}")


# Operands.
def buffer_range(buffer: HalBuffer, usage: BufferUsage, access: MemoryAccess, offset: int, length: int | None,
                 what: str) -> BufferRange:
    """A direct buffer operand: alive, allowed `usage` and `access`, the range inside it."""
    if not isinstance(buffer, HalBuffer):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: expected a HalBuffer, got {type(buffer).__name__}")
    buffer.check_use(int(usage), int(access), what)
    return BufferRange(buffer, *buffer.calculate_range(offset, length))


def binding_table(table) -> list[HalBuffer]:
    """The entries of a binding table as buffers: each a HalBuffer or a (buffer, offset,
    length) tuple naming a subspan of one."""
    entries = []
    for slot, entry in enumerate(table or ()):
        buffer = entry[0] if isinstance(entry, tuple) else entry
        if not isinstance(buffer, HalBuffer):
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"binding table slot {slot}: expected a HalBuffer or (buffer, offset, length), got "
                           f"{type(entry).__name__}")
        entries.append(buffer.subspan(*entry[1:]) if isinstance(entry, tuple) else buffer)
    return entries


def table_slot(slot: int, table: Sequence[HalBuffer], ref_offset: int, ref_length: int | None, offset: int,
               length: int | None, what: str) -> tuple[HalBuffer, int, int | None]:
    """A binding-table reference at execution: (buffer, offset, length) of the command's
    range [offset, offset + length) inside the reference's window of the slot's buffer,
    so alignment rules see the real offset."""
    if not 0 <= slot < len(table):
        raise HalError(StatusCode.OUT_OF_RANGE,
                       f"{what}: binding slot {slot} is outside the binding table of {len(table)} entries")
    buffer = table[slot]
    window_offset, window_length = buffer.calculate_range(ref_offset, ref_length)
    if length is None:
        length = window_length - offset
    if offset < 0 or offset + length > window_length:
        raise HalError(StatusCode.OUT_OF_RANGE, f"{what}: range [{offset}, {offset + length}) exceeds binding slot "
                                                f"{slot}'s {window_length} bytes")
    return buffer, window_offset + offset, length


# One function per command.
def fill(target: HalBuffer, offset: int, length: int | None, pattern, what: str = "fill") -> tuple[BufferRange, bytes]:
    """A fill of `target` with a 1, 2 or 4-byte pattern: (the range, the pattern's bytes)."""
    pattern = check_fill_pattern(pattern)
    range_ = buffer_range(target, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE, offset, length, what)
    check_aligned(range_.offset, range_.length, len(pattern), what)
    return range_, pattern


def update(target: HalBuffer, offset: int, data: np.ndarray, what: str = "update") -> BufferRange:
    """A write of host bytes `data` into `target` at `offset`."""
    return buffer_range(target, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE, offset, data.shape[0], what)


def update_source(source, length: int | None, what: str = "update") -> np.ndarray:
    """The host bytes of an update: the first `length` bytes of `source` (all when None)."""
    data = to_bytes(source)
    if length is not None:
        if not 0 <= length <= data.shape[0]:
            raise HalError(StatusCode.OUT_OF_RANGE, f"{what} length {length} exceeds the {data.shape[0]}-byte source")
        data = data[:length]
    return data


def queue_copy_lengths(source: HalBuffer, target: HalBuffer, length: int | None) -> None:
    """iree.runtime's own check of HalDevice.queue_copy (a ValueError, before the HAL
    sees the copy): a whole source must fit its target."""
    if length is None and source.byte_length() > target.byte_length():
        raise HalError(StatusCode.INVALID_ARGUMENT, f"Source and buffer length must be less than the target buffer "
                                                    f"length and it does not. Please check allocations (source "
                                                    f"{source.byte_length()} bytes, target {target.byte_length()})")


def copy(source: HalBuffer, source_offset: int, target: HalBuffer, target_offset: int, length: int | None,
         what: str = "copy") -> tuple[BufferRange, BufferRange]:
    """A copy between buffers: both ranges, which must not overlap in one allocation."""
    s = buffer_range(source, BufferUsage.TRANSFER_SOURCE, MemoryAccess.READ, source_offset, length, f"{what} source")
    t = buffer_range(target, BufferUsage.TRANSFER_TARGET, MemoryAccess.WRITE, target_offset, s.length,
                     f"{what} target")
    if source.same_allocation(target) and s.length:
        a = source.byte_offset + s.offset
        b = target.byte_offset + t.offset
        if a < b + s.length and b < a + s.length:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: source and target ranges overlap within the same "
                                                        f"buffer")
    return s, t


def constants(data) -> bytes:
    """Push constants: whole uint32 values."""
    data = to_bytes(data).tobytes() if data is not None else b""
    if len(data) % 4:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"constant data length {len(data)} is not a multiple of 4")
    return data


def workgroup_count(count) -> tuple[int, int, int]:
    counts = tuple(int(c) for c in count)
    if len(counts) != 3 or any(c < 0 for c in counts):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"workgroup count {count} must be three non-negative ints")
    return counts


def indirect_workgroup_count(buffer: HalBuffer, offset: int, what: str) -> BufferRange:
    """Three uint32 workgroup counts read from `buffer` when the dispatch runs."""
    return buffer_range(buffer, BufferUsage.DISPATCH_INDIRECT_PARAMETERS, MemoryAccess.READ, offset,
                        INDIRECT_COUNT_BYTES, what)


def dispatch_binding(buffer: HalBuffer, offset: int, length: int | None, page_aligned: bool,
                     what: str) -> BufferRange:
    """A dispatch binding: device memory with storage usage, and when the program's
    kernels address it by whole pages (`page_aligned`: Export.page_aligned_bindings),
    a start on a page boundary of the buffer."""
    range_ = buffer_range(buffer, BufferUsage.DISPATCH_STORAGE, MemoryAccess.NONE, offset, length, what)
    if not buffer.allocation.is_device:  # kernels would read and write L1 at its (meaningless) address
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what} is host memory ({buffer.allocation.label}); kernels "
                                                    f"address device memory: copy it into a DEVICE_LOCAL buffer")
    if page_aligned:
        page_size = buffer.allocation.backend_buffer.page_size
        start = buffer.byte_offset + range_.offset
        if start % page_size:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{what} starts at byte {start}, not at a page boundary of its buffer ({page_size}-byte "
                           f"pages); the program's kernels address it by whole pages")
    return range_


def dispatch(executable, export_ordinal: int, constant_bytes: bytes, binding_count: int, what: str = "dispatch"):
    """A dispatch of `executable`'s export: the export (a tt_hal.target.program.Export),
    given as many push constants as it takes and at least as many bindings."""
    if not isinstance(executable, HalExecutable):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what} needs a HalExecutable, got {type(executable).__name__}")
    export = executable.export(export_ordinal)
    if export.dynamic:
        raise HalError(StatusCode.UNIMPLEMENTED,
                       f"{what} of {export.name}: the export has dynamic shapes and no program yet; a .vmfb's hal "
                       f"module lowers it for each dispatch's push constants (tt_hal.compiler.specialize)")
    count = len(constant_bytes) // 4
    if count != export.constant_count:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"{what} of {export.name}: {count} push constants; the export takes {export.constant_count}")
    if binding_count < export.binding_count:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"{what} of {export.name}: {binding_count} bindings; the export takes {export.binding_count}")
    return export


@functools.cache
def _command_buffer_class() -> type:
    from hal.command_buffer import HalCommandBuffer  # which records through this module: imported when used
    return HalCommandBuffer


def submission(command_buffer, has_waits: bool, table_size: int) -> None:
    """A command buffer handed to queue_execute: ended, not a spent one-shot, inline ones
    without waits, and a binding table with a slot for each its commands may reference."""
    if not isinstance(command_buffer, _command_buffer_class()):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"expected a HalCommandBuffer, got {type(command_buffer).__name__}")
    if not command_buffer.is_executable:
        raise HalError(StatusCode.FAILED_PRECONDITION,
                       "command buffer is not ended; call end() (or pass end=True) before executing it")
    if command_buffer.submitted:
        raise HalError(StatusCode.FAILED_PRECONDITION,
                       "one-shot command buffer was already submitted; record a new one or use mode DEFAULT")
    if has_waits and CommandBufferMode.ALLOW_INLINE_EXECUTION in command_buffer.mode:
        raise HalError(StatusCode.INVALID_ARGUMENT, "inline execution command buffers cannot wait on semaphores")
    if table_size < command_buffer.binding_capacity and command_buffer.uses_binding_table:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"binding table has {table_size} entries; the command buffer "
                                                    f"needs {command_buffer.binding_capacity}")


def own_memory(device, allocations, what: str) -> None:
    """A dispatch's kernels address memory on the device that runs them: INVALID_ARGUMENT
    for a binding's allocation (or an executable, for its tensors) of another device,
    whose address means something else there. Transfers may cross devices: they move
    bytes by buffer."""
    for allocation in allocations:
        if allocation.backend is not device.backend and allocation.backend is not None:  # None: no tensors
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: its dispatches address {allocation.label} of "
                                                        f"another device than {device}; copy its contents over first")

