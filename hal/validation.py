"""Command validation, kept apart from recording and execution as in IREE's
`command_buffer_validation.c`. Each check raises HalError with IREE's status code."""

from __future__ import annotations

from hal.buffer import HalBuffer, to_bytes
from hal.status import HalError, StatusCode
from hal.types import BufferUsage, CommandBufferMode, CommandCategory, MemoryAccess


def check_mode(mode: CommandBufferMode, binding_capacity: int) -> None:
    if binding_capacity < 0:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"binding capacity {binding_capacity} is negative")
    if mode & CommandBufferMode.ALLOW_INLINE_EXECUTION:
        if not mode & CommandBufferMode.ONE_SHOT:
            raise HalError(StatusCode.INVALID_ARGUMENT, "inline execution is only allowed for one-shot command buffers")
        if binding_capacity:
            raise HalError(StatusCode.INVALID_ARGUMENT, "inline execution is not allowed with binding tables")


def check_category(categories: CommandCategory, required: CommandCategory, what: str) -> None:
    if not categories & required:
        raise HalError(
            StatusCode.FAILED_PRECONDITION,
            f"{what}: command buffer categories {categories!s} do not include {required!s}",
        )


def check_pattern(pattern) -> bytes:
    data = to_bytes(pattern).tobytes()
    if len(data) not in (1, 2, 4):
        raise HalError(
            StatusCode.INVALID_ARGUMENT,
            f"fill value length is not one of the supported values (pattern_length={len(data)})",
        )
    return data


def check_aligned(offset: int, length: int, alignment: int, what: str) -> None:
    if offset % alignment or length % alignment:
        raise HalError(
            StatusCode.INVALID_ARGUMENT,
            f"{what}: offset and/or length do not match the required alignment "
            f"(offset={offset}, length={length}, alignment={alignment})",
        )


def check_buffer(buffer: HalBuffer, usage: BufferUsage, access: MemoryAccess, offset: int, length, what: str):
    """Validates a direct buffer reference; returns the (offset, length) range it names."""
    if not isinstance(buffer, HalBuffer):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: expected a HalBuffer, got {type(buffer).__name__}")
    buffer.check_alive()
    buffer.check_usage(usage, what)
    buffer.check_access(access, what)
    return buffer.calculate_range(offset, length)


def check_no_overlap(source: HalBuffer, source_offset: int, target: HalBuffer, target_offset: int, length: int):
    if not source.same_allocation(target) or length == 0:
        return
    s = source.byte_offset + source_offset
    t = target.byte_offset + target_offset
    if s < t + length and t < s + length:
        raise HalError(StatusCode.INVALID_ARGUMENT, "source and target ranges overlap within the same buffer")


def check_constants(constants) -> bytes:
    data = to_bytes(constants).tobytes() if constants is not None else b""
    if len(data) % 4:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"constant data length {len(data)} is not a multiple of 4")
    return data


def check_workgroup_count(workgroup_count) -> tuple[int, int, int]:
    counts = tuple(int(c) for c in workgroup_count)
    if len(counts) != 3 or any(c < 0 for c in counts):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"workgroup count {workgroup_count} must be three non-negative ints")
    return counts
