"""Simulated chip memory: lazily backed DRAM banks and per-core L1, bank allocators,
and interleaved page placement.

Every bank of a kind shares one address range (as in tt-metal's BankManager): an
interleaved buffer has the same base address in every bank, page i lives in bank
i % N at `base + (i // N) * aligned_page_size`.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import mmap
import threading

import numba
import numpy as np

from hal.status import HalError, StatusCode
from sim.arch import ArchSpec

_MAP_NORESERVE = 0x4000  # Linux; not exported by Python's mmap module


def lazy_zeros(rows: int, row_bytes: int) -> np.ndarray:
    """A zeroed uint8 array whose pages the OS backs only once they are written."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    try:
        region = mmap.mmap(-1, rows * row_bytes, flags=flags | _MAP_NORESERVE)
    except OSError:
        region = mmap.mmap(-1, rows * row_bytes, flags=flags)
    return np.frombuffer(region, np.uint8).reshape(rows, row_bytes)


def round_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


class BankAllocator:
    """First-fit allocator over one address range shared by all banks of a kind.

    DRAM allocates bottom-up and L1 top-down, as tt-metal does.
    """

    def __init__(self, name: str, base: int, size: int, alignment: int, top_down: bool):
        self.name = name
        self.base = base
        self.size = size
        self.alignment = alignment
        self.top_down = top_down
        self._free = [(base, base + size)]  # sorted, disjoint [start, end)
        self._allocated: dict[int, int] = {}
        self._lock = threading.Lock()

    @property
    def allocated_bytes(self) -> int:
        return sum(self._allocated.values())

    @property
    def largest_free_block(self) -> int:
        return max((end - start for start, end in self._free), default=0)

    def allocate(self, size: int) -> int:
        size = round_up(max(size, 1), self.alignment)
        with self._lock:
            candidates = reversed(range(len(self._free))) if self.top_down else range(len(self._free))
            for i in candidates:
                start, end = self._free[i]
                if self.top_down:
                    address = (end - size) // self.alignment * self.alignment
                    if address < start:
                        continue
                else:
                    address = round_up(start, self.alignment)
                    if address + size > end:
                        continue
                del self._free[i]
                for piece in ((start, address), (address + size, end)):
                    if piece[1] > piece[0]:
                        bisect.insort(self._free, piece)
                self._allocated[address] = size
                return address
            raise HalError(
                StatusCode.RESOURCE_EXHAUSTED,
                f"{self.name}: cannot allocate {size} bytes per bank; {self.allocated_bytes} of "
                f"{self.size} bytes per bank in use, largest free block {self.largest_free_block} bytes",
            )

    def free(self, address: int) -> None:
        with self._lock:
            size = self._allocated.pop(address)
            start, end = address, address + size
            i = bisect.bisect_left(self._free, (start, end))
            if i < len(self._free) and self._free[i][0] == end:  # merge with the next block
                end = self._free.pop(i)[1]
            if i > 0 and self._free[i - 1][1] == start:  # merge with the previous block
                start = self._free.pop(i - 1)[0]
                i -= 1
            self._free.insert(i, (start, end))


class BufferType(enum.Enum):
    """tt-metal's BufferType: where a buffer's pages live."""

    DRAM = "dram"
    L1 = "l1"
    SYSTEM_MEMORY = "system_memory"


@dataclasses.dataclass(eq=False)
class SimBuffer:
    """A placed buffer: `size` bytes in pages of `page_size`, page i in bank
    `banks[i % len(banks)]` (a row of `storage`) at `address + (i // N) * aligned_page_size`."""

    buffer_type: BufferType
    address: int
    size: int
    page_size: int
    aligned_page_size: int
    storage: np.ndarray  # uint8 [rows, bytes per row]
    banks: np.ndarray  # int64 rows of `storage`, in bank order
    freed: bool = False

    def check_range(self, offset: int, length: int) -> None:
        if self.freed:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"{self.buffer_type.value} buffer at {self.address:#x} was freed")
        if offset < 0 or length < 0 or offset + length > self.size:
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"range [{offset}, {offset + length}) outside the {self.size}-byte {self.buffer_type.value} buffer",
            )

    def _single_page(self, offset: int, length: int) -> tuple[int, int] | None:
        """(bank row, address) when the range lies in one page: plain slicing is then
        cheaper than a numba call."""
        page = offset // self.page_size
        within = offset - page * self.page_size
        if within + length > self.page_size:
            return None
        n = self.banks.shape[0]
        return int(self.banks[page % n]), self.address + (page // n) * self.aligned_page_size + within

    def read(self, offset: int, length: int, out: np.ndarray | None = None) -> np.ndarray:
        self.check_range(offset, length)
        if out is None:
            out = np.empty(length, np.uint8)
        place = self._single_page(offset, length)
        if place is not None:
            out[:] = self.storage[place[0], place[1]:place[1] + length]
        else:
            interleaved_read(self.storage, self.banks, self.address, self.page_size, self.aligned_page_size,
                             offset, out)
        return out

    def write(self, offset: int, data: np.ndarray) -> None:
        length = data.shape[0]
        self.check_range(offset, length)
        place = self._single_page(offset, length)
        if place is not None:
            self.storage[place[0], place[1]:place[1] + length] = data
        else:
            interleaved_write(self.storage, self.banks, self.address, self.page_size, self.aligned_page_size,
                              offset, data)


@numba.njit(cache=True, nogil=True, inline="always")
def _page_span(banks, address, page_size, aligned_page_size, byte, remaining):
    """(bank row, bank address, bytes until the page ends or `remaining`) for buffer byte `byte`."""
    n = banks.shape[0]
    page = byte // page_size
    within = byte - page * page_size
    chunk = min(page_size - within, remaining)
    return banks[page % n], address + (page // n) * aligned_page_size + within, chunk


@numba.njit(cache=True, nogil=True)
def interleaved_read(storage, banks, address, page_size, aligned_page_size, offset, out):
    """Copies out.shape[0] buffer bytes from `offset`, page by page, out of the banks."""
    pos = 0
    while pos < out.shape[0]:
        row, at, chunk = _page_span(banks, address, page_size, aligned_page_size, offset + pos, out.shape[0] - pos)
        out[pos:pos + chunk] = storage[row, at:at + chunk]
        pos += chunk


@numba.njit(cache=True, nogil=True)
def interleaved_write(storage, banks, address, page_size, aligned_page_size, offset, data):
    """Copies `data` into the buffer's bytes from `offset`, page by page, into the banks."""
    pos = 0
    while pos < data.shape[0]:
        row, at, chunk = _page_span(banks, address, page_size, aligned_page_size, offset + pos, data.shape[0] - pos)
        storage[row, at:at + chunk] = data[pos:pos + chunk]
        pos += chunk


class ChipMemory:
    """DRAM banks and worker L1s of one chip, with their allocators."""

    def __init__(self, arch: ArchSpec):
        self.arch = arch
        self.dram = lazy_zeros(arch.dram_bank_count, arch.dram_bank_size)
        self.l1 = lazy_zeros(arch.worker_cores, arch.l1_size)
        self.dram_allocator = BankAllocator(
            "DRAM", 0, arch.dram_bank_size, arch.dram_alignment, top_down=False
        )
        self.l1_allocator = BankAllocator(
            "L1", arch.l1_unreserved_base, arch.l1_bank_size, arch.l1_alignment, top_down=True
        )
        self._dram_banks = np.arange(arch.dram_bank_count, dtype=np.int64)
        self._l1_banks = np.arange(arch.worker_cores, dtype=np.int64)

    def create_interleaved(self, size: int, page_size: int, buffer_type: BufferType) -> SimBuffer:
        if page_size <= 0 or size < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"buffer size {size} / page size {page_size} invalid")
        if buffer_type is BufferType.DRAM:
            allocator, storage, banks = self.dram_allocator, self.dram, self._dram_banks
        elif buffer_type is BufferType.L1:
            allocator, storage, banks = self.l1_allocator, self.l1, self._l1_banks
        else:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"cannot place an interleaved buffer in {buffer_type}")
        aligned = round_up(page_size, allocator.alignment)
        pages = -(-size // page_size)
        pages_per_bank = -(-pages // len(banks))
        try:
            address = allocator.allocate(max(pages_per_bank, 1) * aligned)
        except HalError as error:
            raise HalError(
                error.code,
                f"a {size}-byte buffer ({pages} pages of {page_size} B over {len(banks)} {allocator.name} banks) "
                f"does not fit: {error.message}",
            ) from None
        return SimBuffer(buffer_type, address, size, page_size, aligned, storage, banks)

    def free(self, buffer: SimBuffer) -> None:
        if buffer.freed:
            return
        buffer.freed = True
        if buffer.buffer_type is BufferType.DRAM:
            self.dram_allocator.free(buffer.address)
        elif buffer.buffer_type is BufferType.L1:
            self.l1_allocator.free(buffer.address)


def system_memory_buffer(array: np.ndarray) -> SimBuffer:
    """A buffer over host memory (tt-metal's SYSTEM_MEMORY): one bank, one page."""
    flat = array.reshape(1, -1)
    size = flat.shape[1]
    page = max(size, 1)
    return SimBuffer(BufferType.SYSTEM_MEMORY, 0, size, page, page, flat, np.zeros(1, np.int64))
