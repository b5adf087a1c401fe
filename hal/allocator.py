"""The device allocator (`iree/hal/allocator.h`).

Device-local memory is the chip's DRAM (raw buffers interleaved over the banks) or,
for tensors, DRAM or L1 interleaved or sharded; host-local memory and imported host
allocations are host memory the device reaches over PCIe (tt-metal's
SYSTEM_MEMORY). All are host-visible (device memory through a staged mapping) and
usable for transfers, as on IREE's local-task device.

Tensor placement policy (`allocate_tensor`): an explicit memory config always
wins, and one that does not fit is RESOURCE_EXHAUSTED. Otherwise a tensor whose
usage includes DISPATCH_STORAGE and whose height shards fit in half of a core's
L1 bank goes to L1, HEIGHT_SHARDED over as few cores as give every core at most
ceil(page rows / cores) page rows, as long as all such L1 tensors together stay in
the top half of the bank: the bottom half is left to programs' circular buffers.
If L1 is too full at that moment, the tensor is not for dispatch, or the backend's
programs cannot address sharded bindings (Capability.SHARDED_BINDINGS: the hardware
backend's generated kernels address interleaved pages), it goes to DRAM INTERLEAVED.
"""

from __future__ import annotations

import functools
import threading
import weakref

import numpy as np

from hal.backend import Capability
from hal.buffer import Allocation, HalBuffer, HalBufferView, tensor_element_type, to_bytes
from hal.status import HalError, StatusCode
from hal.types import BufferCompatibility, BufferUsage, MemoryAccess, MemoryType
from tt_hal.target.layout import DataFormat, Layout, TensorSpec
from tt_hal.target.placement import (
    DRAM_MEMORY_CONFIG,
    BufferType,
    MemoryConfig,
    ShardOrientation,
    ShardSpec,
    TensorMemoryLayout,
    num_cores_to_core_range_set,
)
from tt_hal.target.sizes import ceil_div, round_up

# Usage every buffer gets: all memory can be transferred and mapped.
_IMPLIED_USAGE = int(BufferUsage.TRANSFER | BufferUsage.MAPPING | BufferUsage.MAPPING_PERSISTENT)
# Pages of raw (untiled) byte buffers: one fp32 tile, so DRAM traffic moves in tile-sized pages.
RAW_PAGE_SIZE = 4096
# Bits as ints and memory types made once: IntFlag operators construct a member each time,
# and allocation runs on every eager op.
_HOST_LOCAL_BIT = int(MemoryType.HOST_LOCAL & ~(MemoryType.HOST_VISIBLE | MemoryType.HOST_COHERENT))
_DEVICE_LOCAL_BIT = int(MemoryType.DEVICE_LOCAL & ~MemoryType.DEVICE_VISIBLE)
_HOST_MEMORY = MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE  # what host buffers are
_DEVICE_MEMORY = MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE  # what device buffers are
# A tensor placed in L1 by the policy may take at most this share of a core's L1 bank.
L1_SHARD_SHARE = 0.5
# What IREE's debug allocator scribbles into every new buffer (IREE_HAL_DEBUG_ALLOCATOR_FILL_PATTERN).
DEBUG_FILL_PATTERN = 0xCD
# Allocator wrappers `create_device(..., allocators=[...])` takes, as iree_hal_configure_allocator_from_spec:
# "debug" fills new buffers with DEBUG_FILL_PATTERN, to expose reads of memory nothing wrote; "caching"
# keeps freed blocks for reuse on a device where allocation is costly: the simulator's bank allocators
# cost nothing to ask, so here it is accepted and changes nothing (docs/hal-api.md).
ALLOCATOR_WRAPPERS = ("caching", "debug")


# AllocatorStatistics' counters of each kind: (allocated, freed, peak)
_HOST_KEYS = ("host_bytes_allocated", "host_bytes_freed", "host_bytes_peak")
_DEVICE_KEYS = ("device_bytes_allocated", "device_bytes_freed", "device_bytes_peak")

_SPEC_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=_SPEC_CACHE_SIZE)
def _cached_spec(*fields) -> TensorSpec:
    return TensorSpec(*fields)


def _tensor_spec(*fields) -> TensorSpec:
    """TensorSpec(*fields), made once per value: a frozen value that takes ~4 us to make
    and check, and every tensor allocation (an eager op's output) asks for one. Fields
    that do not hash (a shard shape given as a list) make a new one."""
    try:
        return _cached_spec(*fields)
    except TypeError:
        return TensorSpec(*fields)


class AllocatorStatistics:
    """Byte counters in IREE's `iree_hal_allocator_statistics_t` shape."""

    def __init__(self):
        self._lock = threading.Lock()  # not reentrant: see record_free
        self._counts = dict.fromkeys(
            ("host_bytes_peak", "host_bytes_allocated", "host_bytes_freed",
             "device_bytes_peak", "device_bytes_allocated", "device_bytes_freed"), 0)  # in IREE's order
        self._freed: list[tuple[int, bool]] = []  # frees not counted yet

    def record_alloc(self, size: int, is_device: bool) -> None:
        allocated, freed, peak = _DEVICE_KEYS if is_device else _HOST_KEYS
        with self._lock:
            self._count_freed()
            self._counts[allocated] += size
            self._counts[peak] = max(self._counts[peak], self._counts[allocated] - self._counts[freed])

    def record_free(self, size: int, is_device: bool) -> None:
        """Counts a free now, or at the next call when the lock is held: a buffer's
        finalizer calls this from the garbage collector, which may run inside
        record_alloc on this very thread."""
        self._freed.append((size, is_device))  # atomic
        if self._lock.acquire(blocking=False):
            try:
                self._count_freed()
            finally:
                self._lock.release()

    def _count_freed(self) -> None:
        while self._freed:
            size, is_device = self._freed.pop()
            self._counts[(_DEVICE_KEYS if is_device else _HOST_KEYS)[1]] += size

    def as_dict(self) -> dict:
        with self._lock:
            self._count_freed()
            return dict(self._counts)

    def live_bytes(self) -> int:
        c = self.as_dict()
        return (c["host_bytes_allocated"] - c["host_bytes_freed"]) + (
            c["device_bytes_allocated"] - c["device_bytes_freed"])


def _is_host_local(memory_type: int) -> bool:
    return bool(memory_type & _HOST_LOCAL_BIT) and not memory_type & _DEVICE_LOCAL_BIT


class HalAllocator:
    """The device's allocator (`device.allocator`): buffers in device DRAM or host
    memory, device tensors placed by the policy above, and IREE's byte statistics."""

    def __init__(self, device):
        self._device = device
        self._backend = device.backend
        self._statistics = AllocatorStatistics()
        self._live: weakref.WeakSet[Allocation] = weakref.WeakSet()  # device allocations, for memory_map()
        self._fill_pattern: int | None = None  # set by the "debug" wrapper
        self._l1_specs: dict[int, tuple] = {}  # id(spec) -> (spec, its L1 placement or None)

    def configure(self, specs) -> None:
        """Applies allocator wrapper specs ("name" or "name:config", see ALLOCATOR_WRAPPERS)
        in order, as IREE does when a device is created with `allocators=[...]`."""
        for spec in specs or ():
            name = str(spec).split(":", 1)[0]
            if name not in ALLOCATOR_WRAPPERS:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"unrecognized allocator {name!r}; known: {', '.join(ALLOCATOR_WRAPPERS)}")
            if name == "debug":
                self._fill_pattern = DEBUG_FILL_PATTERN

    def __repr__(self) -> str:
        return f"<HalAllocator of {self._device!r}>"

    # Placement.
    @staticmethod
    @functools.cache  # every allocation asks, with a few distinct requests
    def _resolve(memory_type: int, allowed_usage: int) -> tuple[MemoryType, BufferUsage, bool]:
        """(actual memory type, actual usage, is_device) for a request."""
        usage = BufferUsage(int(allowed_usage) | _IMPLIED_USAGE)
        if _is_host_local(int(memory_type)):
            return _HOST_MEMORY, usage, False
        return _DEVICE_MEMORY, usage, True

    def _allocate(self, memory_type: int, allowed_usage: int, allocation_size: int) -> HalBuffer:
        allocation_size = int(allocation_size)
        if allocation_size < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"allocation size {allocation_size} is negative")
        actual_type, usage, is_device = self._resolve(memory_type, allowed_usage)
        if is_device:
            page_size = min(RAW_PAGE_SIZE, max(allocation_size, 1))
            backend_buffer = self._backend.create_buffer(allocation_size, page_size, BufferType.DRAM)
        else:
            try:
                backend_buffer = self._backend.create_buffer(allocation_size, max(allocation_size, 1),
                                                             BufferType.SYSTEM_MEMORY)
            except (MemoryError, OverflowError, ValueError):  # the host cannot hold it (numpy's errors)
                raise HalError(StatusCode.RESOURCE_EXHAUSTED, f"a {allocation_size}-byte host buffer does not fit in "
                                                              f"this machine's memory") from None
        allocation = Allocation(self._backend, backend_buffer, allocation_size, self._statistics, is_device)
        if is_device:
            self._track(allocation)
        return self._scribbled(HalBuffer(allocation, actual_type, usage))

    def _scribbled(self, buffer: HalBuffer) -> HalBuffer:
        """`buffer`, filled with the debug wrapper's pattern when it is on."""
        if self._fill_pattern is not None and buffer.byte_length():
            buffer.map_write(0, np.full(buffer.byte_length(), self._fill_pattern, np.uint8))
        return buffer

    def _allocate_placed(self, spec: TensorSpec, allowed_usage: int) -> HalBuffer:
        config = spec.memory_config
        backend_buffer = self._backend.create_buffer(spec.size, spec.page_size, config.buffer_type,
                                                     spec.sharded_pages)
        actual_type, usage, _ = self._resolve(MemoryType.DEVICE_LOCAL, allowed_usage)
        allocation = Allocation(self._backend, backend_buffer, spec.size, self._statistics, True)
        allocation.device = self._device  # device tensors know their device, as ttnn tensors do (tt_hal.ops)
        self._track(allocation)
        return self._scribbled(HalBuffer(allocation, actual_type, usage))

    def _l1_height_sharded(self, spec: TensorSpec) -> TensorSpec | None:
        """The policy's L1 placement for `spec`, or None when its shards would not fit:
        decided once per spec (specs are made once per value, _tensor_spec), as making
        and checking the sharded spec costs more than an eager op's dispatch."""
        entry = self._l1_specs.get(id(spec))
        if entry is not None and entry[0] is spec:
            return entry[1]
        if len(self._l1_specs) >= _SPEC_CACHE_SIZE:
            self._l1_specs.clear()
        l1_spec = self._l1_policy(spec)
        self._l1_specs[id(spec)] = (spec, l1_spec)  # the entry keeps `spec`, so its id is not reused
        return l1_spec

    def _l1_policy(self, spec: TensorSpec) -> TensorSpec | None:
        arch = self._backend.arch
        rows, columns = spec.page_grid
        if rows == 0 or columns == 0:
            return None
        cores = min(rows, arch.worker_cores)
        shard_rows = ceil_div(rows, cores)
        aligned_page = round_up(spec.page_size, arch.l1_alignment)
        if shard_rows * columns * aligned_page > arch.l1_bank_size * L1_SHARD_SHARE:
            return None
        grid = num_cores_to_core_range_set(ceil_div(rows, shard_rows), arch.grid_x)
        shard = ShardSpec(grid, (shard_rows * spec.page_shape[0], spec.padded_width), ShardOrientation.ROW_MAJOR)
        return spec.with_memory_config(MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, shard))

    def allocate_tensor(self, shape, dtype, layout=Layout.ROW_MAJOR, memory_config: MemoryConfig | None = None, *,
                        usage: int = BufferUsage.DEFAULT, transpose_within_face: bool = False,
                        transpose_of_faces: bool = False) -> HalBufferView:
        """A device tensor: a buffer view carrying its TensorSpec (contents undefined: the
        simulator's memory is zero until first used, then holds what earlier owners left).
        Placement by the policy in this module's docstring."""
        spec = _tensor_spec(tuple(shape), DataFormat.parse(dtype), Layout.parse(layout),
                            memory_config or DRAM_MEMORY_CONFIG, transpose_within_face, transpose_of_faces)
        buffer = None
        if (memory_config is None and int(usage) & int(BufferUsage.DISPATCH_STORAGE)
                and Capability.SHARDED_BINDINGS in self._backend.capabilities):
            l1_spec = self._l1_height_sharded(spec)
            if l1_spec is not None:
                try:
                    buffer = self._allocate_placed(l1_spec, usage)
                except HalError as error:
                    if error.code != StatusCode.RESOURCE_EXHAUSTED:
                        raise
                arch = self._backend.arch
                if buffer is not None and (buffer.allocation.backend_buffer.address < arch.l1_unreserved_base
                                           + arch.l1_bank_size * (1 - L1_SHARD_SHARE)):
                    buffer.allocation.release()  # into the circular buffers' half: DRAM instead
                    buffer = None
                if buffer is not None:
                    spec = l1_spec
        if buffer is None:
            buffer = self._allocate_placed(spec, usage)
        return HalBufferView(buffer, spec.shape, tensor_element_type(spec), spec=spec)

    # iree.runtime API.
    def allocate_buffer(self, memory_type: int, allowed_usage: int, allocation_size: int) -> HalBuffer:
        """Allocates a buffer (contents undefined: zero until the memory is first used,
        then what earlier owners left)."""
        return self._allocate(memory_type, allowed_usage, allocation_size)

    def allocate_buffer_copy(self, memory_type: int, allowed_usage: int, device, buffer, element_type=None):
        """Allocates a buffer holding a copy of a buffer-protocol object; with `element_type`
        returns a HalBufferView shaped like it."""
        data = to_bytes(buffer)
        hal_buffer = self._allocate(memory_type, allowed_usage, data.shape[0])
        if data.shape[0]:
            hal_buffer.map_write(0, data)
        if element_type is None:
            return hal_buffer
        shape = np.shape(buffer) if not isinstance(buffer, (bytes, bytearray, memoryview)) else (data.shape[0],)
        return HalBufferView(hal_buffer, shape, int(element_type))

    def allocate_host_staging_buffer_copy(self, device, initial_contents) -> HalBuffer:
        """A buffer holding a copy, for transfers: host-visible device memory (mapped
        coherently), as iree.runtime's local devices give (DEVICE_LOCAL|HOST_VISIBLE)."""
        return self.allocate_buffer_copy(
            MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE, BufferUsage.TRANSFER | BufferUsage.MAPPING, device,
            initial_contents
        )

    def import_host_allocation(self, buffer, memory_type: int, allowed_usage: int) -> HalBuffer:
        """Wraps host memory without copying; `buffer` is kept alive by the HalBuffer."""
        array = np.asarray(buffer) if not isinstance(buffer, np.ndarray) else buffer
        if not array.flags.c_contiguous:
            raise HalError(StatusCode.INVALID_ARGUMENT, "import_host_allocation needs a C-contiguous buffer")
        flat = array.reshape(-1).view(np.uint8)
        access = MemoryAccess.ALL if flat.flags.writeable else MemoryAccess.READ
        backend_buffer = self._backend.import_host_buffer(flat)
        allocation = Allocation(self._backend, backend_buffer, flat.shape[0], self._statistics, False,
                                keep_alive=buffer)
        usage = BufferUsage(int(allowed_usage) | _IMPLIED_USAGE)
        actual = MemoryType(int(memory_type)) | MemoryType.HOST_VISIBLE | MemoryType.DEVICE_VISIBLE
        return HalBuffer(allocation, actual, usage, access)

    def query_buffer_compatibility(self, memory_type: int, allowed_usage: int, intended_usage: int,
                                   allocation_size: int) -> int:
        _, _, is_device = self._resolve(memory_type, allowed_usage)
        arch = self._backend.arch
        capacity = arch.dram_size if is_device else 1 << 46
        if int(allocation_size) > capacity:
            return BufferCompatibility.NONE
        compatibility = (BufferCompatibility.ALLOCATABLE | BufferCompatibility.IMPORTABLE
                         | BufferCompatibility.EXPORTABLE)
        if int(intended_usage) & BufferUsage.TRANSFER:
            compatibility |= BufferCompatibility.QUEUE_TRANSFER
        if is_device and int(intended_usage) & BufferUsage.DISPATCH_STORAGE:
            compatibility |= BufferCompatibility.QUEUE_DISPATCH
        return compatibility

    def _track(self, allocation: Allocation) -> None:
        self._live.add(allocation)
        if self._device.profiler is not None:
            self._device.note_memory_use()

    def live_allocations(self) -> list[Allocation]:
        """Device allocations not yet freed, oldest first (for memory maps)."""
        return sorted((a for a in list(self._live) if not a.released), key=lambda a: a.serial)

    @property
    def statistics(self) -> dict:
        return self._statistics.as_dict()

    @property
    def has_statistics(self) -> bool:
        return True

    @property
    def formatted_statistics(self) -> str:
        c = self.statistics
        lines = []
        for label, kind in (("  HOST_LOCAL", "host"), ("DEVICE_LOCAL", "device")):
            live = c[f"{kind}_bytes_allocated"] - c[f"{kind}_bytes_freed"]
            lines.append(
                f"{label}: {c[f'{kind}_bytes_peak']:>12}B peak / {c[f'{kind}_bytes_allocated']:>12}B allocated / "
                f"{c[f'{kind}_bytes_freed']:>12}B freed / {live:>12}B live\n"
            )
        return "".join(lines)

    def trim(self) -> None:
        """Releases cached memory. This allocator caches nothing: freed memory returns to
        the bank allocators at once."""
