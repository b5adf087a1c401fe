"""Buffers, buffer views and mappings (`iree/hal/buffer.h`, `buffer_view.h`).

A HalBuffer is a window (offset, length) onto an allocation; subspans share it.
Device-local allocations live in the chip's DRAM, so a mapping is a staged host
copy with non-coherent semantics: read from the device when mapped, written back
(only the bytes the host changed) on flush(), unmap(), leaving a `with` block, or
when the mapping and every array made from it are gone.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
import weakref
from typing import NamedTuple, Sequence

import numpy as np

from hal import profiling
from hal.status import HalError, StatusCode
from hal.types import BufferUsage, HalElementType, MemoryAccess, MemoryType, format_bits


def to_bytes(data) -> np.ndarray:
    """A flat uint8 view of any buffer-protocol object (numpy arrays, bytes, scalars)."""
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(memoryview(data).cast("B"), np.uint8)
    except TypeError:
        raise HalError(
            StatusCode.INVALID_ARGUMENT,
            f"expected a buffer-protocol object (bytes, numpy array), got {type(data).__name__}",
        ) from None


def check_fill_pattern(pattern) -> bytes:
    """A fill pattern's bytes: 1, 2 or 4 of them (iree_hal_buffer_map_fill's rule)."""
    data = to_bytes(pattern).tobytes()
    if len(data) not in (1, 2, 4):
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"fill value length is not one of the supported values (pattern_length={len(data)})")
    return data


def check_aligned(offset: int, length: int, alignment: int, what: str) -> None:
    if offset % alignment or length % alignment:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"{what}: offset and/or length do not match the required alignment "
                       f"(offset={offset}, length={length}, alignment={alignment})")


_SERIALS = itertools.count()


class Allocation:
    """Backend memory shared by a buffer and its subspans; freed once, explicitly or when
    nothing refers to it."""

    def __init__(self, backend, backend_buffer, size: int, statistics, is_device: bool, keep_alive=None):
        """`keep_alive` is an imported host object: its bytes are the caller's, so they are
        not counted in the statistics."""
        self.backend = backend
        self.backend_buffer = backend_buffer
        self.size = size
        self.is_device = is_device
        self.keep_alive = keep_alive  # an imported host object
        self.device = None  # the HalDevice, for device tensors
        self.serial = next(_SERIALS)  # allocation order, and its name in memory maps (label)
        self.deallocating = False  # a queue_dealloca of it was issued: later work must not use it
        # What owns it, in messages (an executable's tensor): freed with its owner, never
        # released nor mapped alone, so submissions need not hold it (the owner's holder does).
        self.owner: str | None = None
        self._lock = threading.Lock()
        # Live staged MappedMemory of it (coherence); made by the first mapping: most allocations
        # are never mapped, and every submission asks each of its allocations whether they are.
        self._mappings: weakref.WeakSet | None = None
        self._in_flight = 0  # issued submissions that use it, not completed yet
        self._release_pending = False  # released while in flight: freed when the last of them completes
        counted = 0 if keep_alive is not None else size
        statistics.record_alloc(counted, is_device)
        self._finalizer = weakref.finalize(self, _free, backend, backend_buffer, statistics, counted, is_device)

    @property
    def label(self) -> str:
        return f"buf{self.serial}"

    @property
    def released(self) -> bool:
        return self._release_pending or not self._finalizer.alive

    def release(self) -> None:
        """Released at once for the caller (new work refuses it); the memory goes when no
        issued work uses it any more, as IREE's submissions retain their buffers."""
        if self.owner is not None:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"{self.label} is {self.owner}: it is freed with its "
                                                           f"owner, not alone")
        with self._lock:
            self._release_pending = True
            if self._in_flight:
                return
        self._finalizer()

    def add_mapping(self, mapping: "MappedMemory") -> None:
        with self._lock:
            if self._mappings is None:
                self._mappings = weakref.WeakSet()
            self._mappings.add(mapping)

    def push_mappings(self) -> None:
        """Host writes through live mappings go to the device: before work that uses the
        memory is issued."""
        if not self._mappings:  # the common case, without the lock: on every buffer of every submission
            return
        with self._lock:
            mappings = list(self._mappings)
        for mapping in mappings:
            mapping.flush()

    def pull_mappings(self) -> None:
        """What the device changed shows in live mappings: when work that used the memory
        completes, before its semaphores are signalled."""
        if not self._mappings:
            return
        with self._lock:
            mappings = list(self._mappings)
        for mapping in mappings:
            mapping.refresh()

    def begin_use(self) -> bool:
        """An issued submission uses it until end_use; False if it is already released."""
        with self._lock:
            if self.released:
                return False
            self._in_flight += 1
            return True

    def end_use(self) -> None:
        with self._lock:
            self._in_flight -= 1
            free = self._in_flight == 0 and self._release_pending
        if free:
            self._finalizer()


def _free(backend, backend_buffer, statistics, size: int, is_device: bool) -> None:
    backend.free_buffer(backend_buffer)
    statistics.record_free(size, is_device)


class BufferRange(NamedTuple):  # a tuple: built for every operand of every command, cheaply
    """A validated command operand: `length` bytes of `buffer` from `offset` (in the buffer)."""

    buffer: "HalBuffer"
    offset: int
    length: int

    @property
    def allocation_offset(self) -> int:
        """Where the range starts in the buffer's allocation (its backend buffer)."""
        return self.buffer.byte_offset + self.offset


class HalBuffer:
    """A byte range of an allocation (iree_hal_buffer_t) with its memory type, allowed
    usage and access; subspans share the allocation. Its memory is freed by release(),
    or when no buffer refers to the allocation any more."""

    def __init__(
        self,
        allocation: Allocation,
        memory_type: MemoryType,
        allowed_usage: BufferUsage,
        allowed_access: MemoryAccess = MemoryAccess.ALL,
        byte_offset: int = 0,
        byte_length: int | None = None,
    ):
        self._allocation = allocation
        # The flags as given when they are flags already: a Flag(...) call costs a microsecond.
        self._memory_type = memory_type if type(memory_type) is MemoryType else MemoryType(memory_type)
        self._allowed_usage = allowed_usage if type(allowed_usage) is BufferUsage else BufferUsage(allowed_usage)
        self._allowed_access = allowed_access if type(allowed_access) is MemoryAccess else MemoryAccess(allowed_access)
        self._byte_offset = byte_offset
        self._byte_length = allocation.size - byte_offset if byte_length is None else byte_length
        self._usage_bits, self._access_bits = int(self._allowed_usage), int(self._allowed_access)  # fast checks

    def __repr__(self) -> str:
        return (
            f"<HalBuffer {self._byte_length} bytes (at offset {self._byte_offset} into {self._allocation.size}), "
            f"memory_type={format_bits(self._memory_type)}, allowed_access={format_bits(self._allowed_access)}, "
            f"allowed_usage={format_bits(self._allowed_usage)}>"
        )

    # Properties (iree.runtime names).
    def byte_length(self) -> int:
        return self._byte_length

    def memory_type(self) -> int:
        return self._memory_type

    def allowed_usage(self) -> int:
        return self._allowed_usage

    @property
    def allowed_access(self) -> MemoryAccess:
        return self._allowed_access

    @property
    def byte_offset(self) -> int:
        """Offset of this buffer inside its allocation."""
        return self._byte_offset

    @property
    def allocation(self) -> Allocation:
        return self._allocation

    def same_allocation(self, other: "HalBuffer") -> bool:
        return self._allocation is other._allocation

    # Validation (IREE's buffer.c rules).
    def check_use(self, usage: int, access: int, what: str) -> None:
        """Alive, allowed `usage` and `access` (ints of BufferUsage / MemoryAccess bits):
        one call per command operand."""
        if self._allocation.released:
            self.check_alive()
        if self._usage_bits & usage != usage:
            self.check_usage(usage, what)
        if self._access_bits & access != access:
            self.check_access(access, what)

    def check_alive(self) -> None:
        if self._allocation.released:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"{self!r} was deallocated; it cannot be used")

    def check_usage(self, required: BufferUsage, what: str) -> None:
        if (int(self._allowed_usage) & int(required)) != int(required):  # ints: IntFlag ops are slow
            raise HalError(
                StatusCode.PERMISSION_DENIED,
                f"{what}: buffer allowed usage {format_bits(self._allowed_usage)} "
                f"lacks {format_bits(BufferUsage(required))}",
            )

    def check_access(self, required: MemoryAccess, what: str) -> None:
        if (int(self._allowed_access) & int(required)) != int(required):
            raise HalError(
                StatusCode.PERMISSION_DENIED,
                f"{what}: buffer allowed access {format_bits(self._allowed_access)} "
                f"lacks {format_bits(MemoryAccess(required))}",
            )

    def check_memory_type(self, required: MemoryType, what: str) -> None:
        if (int(self._memory_type) & int(required)) != int(required):
            raise HalError(
                StatusCode.PERMISSION_DENIED,
                f"{what}: buffer memory type {format_bits(self._memory_type)} "
                f"lacks {format_bits(MemoryType(required))}",
            )

    def calculate_range(self, offset: int, length: int | None) -> tuple[int, int]:
        """(offset, length) inside this buffer; None or -1 length means 'to the end'."""
        offset = int(offset)
        if offset < 0 or offset > self._byte_length:
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"offset {offset} is outside the buffer of byte_length={self._byte_length}",
            )
        if length is None or length == -1:
            length = self._byte_length - offset
        length = int(length)
        if length < 0 or offset + length > self._byte_length:
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                "attempted to access an address outside of the valid buffer range "
                f"(offset={offset}, length={length}, end={offset + length - 1}, "
                f"buffer byte_length={self._byte_length})",
            )
        return offset, length

    # Subspans and views.
    def subspan(self, offset: int, length: int | None = None) -> "HalBuffer":
        offset, length = self.calculate_range(offset, length)
        return HalBuffer(
            self._allocation, self._memory_type, self._allowed_usage, self._allowed_access,
            self._byte_offset + offset, length,
        )

    def create_view(self, shape: Sequence[int], element_size_or_type: int) -> "HalBufferView":
        """iree.runtime's form passes an element size in bytes (an opaque type); a
        HalElementType value is also accepted."""
        element_type = int(element_size_or_type)
        if element_type in (1, 2, 4, 8):
            element_type = element_type * 8  # OPAQUE_8/16/32/64
        return HalBufferView(self, shape, element_type)

    def release(self) -> None:
        """Frees the device memory now, for this buffer and every subspan of it."""
        self._allocation.release()

    # Synchronous host access (iree_hal_buffer_map_read/write/fill/zero/copy).
    def _backend_range(self, offset: int, length: int | None, access: MemoryAccess, what: str):
        self.check_alive()
        self.check_memory_type(MemoryType.HOST_VISIBLE, what)
        self.check_access(access, what)
        offset, length = self.calculate_range(offset, length)
        return self._byte_offset + offset, length

    def map_read(self, offset: int = 0, length: int | None = None) -> bytes:
        return self.read_array(offset, length, "map_read").tobytes()

    def read_array(self, offset: int = 0, length: int | None = None, what: str = "read") -> np.ndarray:
        """The buffer's bytes [offset, offset + length) as a new uint8 array."""
        start, length = self._backend_range(offset, length, MemoryAccess.READ, what)
        a = self._allocation
        return a.backend.read_buffer(a.backend_buffer, start, length)

    def map_write(self, offset: int, data) -> None:
        data = to_bytes(data)
        start, length = self._backend_range(offset, data.shape[0], MemoryAccess.WRITE, "map_write")
        a = self._allocation
        a.backend.write_buffer(a.backend_buffer, start, data)

    def map_fill(self, offset: int, length: int | None, pattern) -> None:
        pattern = check_fill_pattern(pattern)
        start, length = self._backend_range(offset, length, MemoryAccess.WRITE, "map_fill")
        check_aligned(start - self._byte_offset, length, len(pattern), "map_fill")
        a = self._allocation
        a.backend.write_buffer(a.backend_buffer, start, np.frombuffer(pattern * (length // len(pattern)), np.uint8))

    def map_zero(self, offset: int = 0, length: int | None = None) -> None:
        self.map_fill(offset, length, b"\0")

    def fill_zero(self, byte_offset: int, byte_length: int) -> None:
        self.map_zero(byte_offset, byte_length)

    def map_copy(self, source_buffer: "HalBuffer", source_offset: int, target_offset: int, length: int) -> None:
        self.map_write(target_offset, np.frombuffer(source_buffer.map_read(source_offset, length), np.uint8))

    def map(self, access: MemoryAccess = MemoryAccess.ALL, offset: int = 0,
            length: int | None = None) -> "MappedMemory":
        """Maps a range for host access (the whole buffer by default)."""
        self.check_usage(BufferUsage.MAPPING_SCOPED, "map")
        required = MemoryAccess(access) & (MemoryAccess.READ | MemoryAccess.WRITE)
        start, length = self._backend_range(offset, length, required, "map")
        return MappedMemory(self, start, length, MemoryAccess(access))


class MappedMemory:
    """A host view of a buffer range. `asarray(shape, dtype)` gives numpy arrays over it.

    Coherent, as host-visible memory is in IREE: host memory is mapped as itself; device
    memory through a host copy that the queues keep in step: host writes through it go
    to the device before any work using the buffer is issued, and what device work
    changed shows in it when that work completes (before its semaphores signal). Bytes
    both changed are the device's. The last host writes also go back when the mapping
    is dropped."""

    def __init__(self, buffer: HalBuffer, start: int, length: int, access: MemoryAccess):
        allocation = buffer.allocation
        if allocation.owner is not None:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"{allocation.label} is {allocation.owner}: it cannot be "
                                                           f"mapped (map_read reads it)")
        self._buffer = buffer
        self._start = start
        self._lock = threading.Lock()
        view = allocation.backend.host_view(allocation.backend_buffer)
        writable = bool(access & MemoryAccess.WRITE)
        self._writable = writable
        if view is not None:  # host memory: a true view, nothing to stage
            self._staging = view[start:start + length]
            self._pristine = None
        elif access & MemoryAccess.DISCARD and not access & MemoryAccess.READ:
            # The old contents are discarded: nothing to read, and every byte is written back.
            self._staging = np.zeros(length, np.uint8)
            self._pristine = np.zeros(0, np.uint8)
        else:
            self._staging = allocation.backend.read_buffer(allocation.backend_buffer, start, length)
            self._pristine = self._staging.copy()  # the device's bytes as last seen
        self._host = self._staging
        if not writable:
            self._staging = self._staging.view()
            self._staging.flags.writeable = False
        self._flusher = weakref.finalize(
            self, _write_back, allocation, start, self._host, self._pristine
        ) if self._pristine is not None and writable else None
        if self._pristine is not None:
            allocation.add_mapping(self)

    @property
    def __array_interface__(self):
        # Arrays made from the mapping keep it alive, so it writes back only when all are gone.
        return self._staging.__array_interface__

    def asarray(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        shape = tuple(int(d) for d in (shape if isinstance(shape, (list, tuple)) else [shape]))
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * dtype.itemsize > self._staging.shape[0]:
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"array of shape {shape} and dtype {dtype} needs {count * dtype.itemsize} bytes; "
                f"the mapping has {self._staging.shape[0]}",
            )
        raw = np.asarray(self)[: count * dtype.itemsize]
        return raw.view(dtype).reshape(shape)

    def flush(self) -> None:
        """Writes the bytes the host changed back to the device (the queues do this before
        work using the buffer is issued)."""
        if self._pristine is not None and self._writable:
            with self._lock:
                _write_back(self._buffer.allocation, self._start, self._host, self._pristine)

    def refresh(self) -> None:
        """Takes in the bytes the device changed since last seen, keeping host changes to
        the others (the queues do this when work using the buffer completes)."""
        allocation = self._buffer.allocation
        if self._pristine is None or self._pristine.shape[0] != self._host.shape[0] or allocation.released:
            return
        with self._lock:
            fresh = allocation.backend.read_buffer(allocation.backend_buffer, self._start, self._host.shape[0])
            changed = fresh != self._pristine
            self._host[changed] = fresh[changed]
            self._pristine[:] = fresh

    def invalidate(self) -> None:
        """Re-reads the range from the device, dropping host changes not flushed."""
        if self._pristine is not None:
            allocation = self._buffer.allocation
            fresh = allocation.backend.read_buffer(allocation.backend_buffer, self._start, self._host.shape[0])
            with self._lock:
                self._host[:] = fresh
                self._pristine[:] = fresh

    def unmap(self) -> None:
        if self._flusher is not None:
            self._flusher()

    def __enter__(self) -> "MappedMemory":
        return self

    def __exit__(self, *exc) -> None:
        self.unmap()


def _write_back(allocation: Allocation, start: int, staging: np.ndarray, pristine: np.ndarray) -> None:
    """Writes the runs of bytes the host changed (all bytes for a discard mapping, whose
    `pristine` is empty), leaving the device's bytes in between alone."""
    if allocation.released:
        return
    if pristine.shape[0] != staging.shape[0]:
        allocation.backend.write_buffer(allocation.backend_buffer, start, staging.copy())
        return
    changed = np.flatnonzero(staging != pristine)
    if changed.size == 0:
        return
    breaks = np.flatnonzero(np.diff(changed) > 1)
    for first, last in zip(changed[np.r_[0, breaks + 1]], changed[np.r_[breaks, changed.size - 1]] + 1):
        allocation.backend.write_buffer(allocation.backend_buffer, start + int(first), staging[first:last].copy())
    pristine[:] = staging


def tensor_element_type(spec) -> HalElementType:
    """The IREE element type of a device tensor (tt_hal.target.layout.TensorSpec): that of
    the numpy dtype its data format decodes to."""
    return _format_element_type(spec.dtype)


@functools.cache  # a fact of each data format, asked twice for every device tensor made
def _format_element_type(data_format) -> HalElementType:
    return HalElementType.from_dtype(data_format.host_dtype)


class HalBufferView:
    """A buffer with a shape and an element type (IREE's int encoding). With a
    `spec` (tt_hal.target.layout.TensorSpec) the bytes are a device tensor encoding: tiles
    and/or a device data format, `spec.size` bytes; `to_host()` decodes them."""

    def __init__(self, buffer: HalBuffer, shape: Sequence[int], element_type: int, spec=None):
        self._buffer = buffer
        self._element_type = int(element_type)
        self._spec = spec
        if spec is not None:  # a spec's dimensions are ints >= 0
            expected = tensor_element_type(spec)
            if tuple(shape) != spec.shape or self._element_type != expected:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"view shape {list(shape)} / element type {self._element_type:#x} differ from its "
                               f"tensor spec's {list(spec.shape)} / {int(expected):#x}")
            self._shape = list(spec.shape)
            self._byte_length = spec.size
        else:
            self._shape = [int(d) for d in shape]
            if any(d < 0 for d in self._shape):
                raise HalError(StatusCode.INVALID_ARGUMENT, f"negative dimension in shape {self._shape}")
            bits = HalElementType.bit_count(self._element_type) * math.prod(self._shape)  # exact: never wraps
            self._byte_length = (bits + 7) // 8
        if self._byte_length > buffer.byte_length():
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"buffer view byte length {self._byte_length} exceeds backing buffer byte length "
                f"{buffer.byte_length()}",
            )

    def __repr__(self) -> str:
        if self._spec is not None:
            return f"<HalBufferView {self._spec.describe()}, {self._buffer!r}>"
        # As iree.runtime prints it: the element type's bytes in memory order, then the buffer's fields.
        element = int(self._element_type).to_bytes(4, "little").hex()
        buffer = repr(self._buffer)[len("<HalBuffer "):]
        return f"<HalBufferView {tuple(self._shape)}, element_type=0x{element}, {buffer}"

    @property
    def spec(self):
        """The device tensor encoding (tt_hal.target.layout.TensorSpec), or None for IREE's dense
        row-major bytes."""
        return self._spec

    def to_host(self, dtype=None) -> np.ndarray:
        """The tensor as a new numpy array: decoded from tiles and the device data format
        (bfloat16 as ml_dtypes.bfloat16, block floats as float32), or, for a dense view,
        its bytes in its element type; then cast to `dtype` if given. Reads the device
        synchronously: wait for the work that writes the buffer first, as for map()."""
        device = self._buffer.allocation.device  # set for device tensors, whose reads show in traces
        with profiling.host_slice(getattr(device, "profiler", None), "to_host", bytes=self._byte_length,
                                  shape=list(self._shape)):
            data = self._buffer.read_array(0, self._byte_length, "to_host")
            if self._spec is not None:
                backend = self._buffer.allocation.backend
                as_float32 = dtype is not None and np.dtype(dtype) == np.float32
                array = backend.decode_tensor(data, self._spec, as_float32=as_float32)
            else:
                try:
                    element_dtype = HalElementType.map_to_dtype(self._element_type)
                except ValueError as error:
                    raise HalError(StatusCode.UNIMPLEMENTED, f"to_host: {error}") from None
                array = data.view(element_dtype).reshape(self._shape)
        return array if dtype is None else array.astype(dtype, copy=False)

    @property
    def shape(self) -> list[int]:
        return list(self._shape)

    @property
    def element_type(self) -> int:
        return self._element_type

    @property
    def byte_length(self) -> int:
        return self._byte_length

    def get_buffer(self) -> HalBuffer:
        return self._buffer

    def map(self) -> MappedMemory:
        return self._buffer.map()
