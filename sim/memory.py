"""Simulated chip memory: lazily backed DRAM banks and per-core L1, bank allocators,
and page placement.

Every bank of a kind shares one address range (as in tt-metal's BankManager), so a
buffer has the same base address in every bank. Interleaved: page i lives in bank
i % N at `base + (i // N) * aligned_page_size`; L1 bank ids are spread over the
worker cores in tt-metal's shuffled order. Sharded: a page table, from
tt_hal.target.placement.ShardedPages, gives each page its core and its slot in the shard.
"""

from __future__ import annotations

import bisect
import dataclasses
import mmap
import threading
from typing import Callable

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from hal.status import HalError, StatusCode
from tt_hal.target.arch import ArchSpec
from tt_hal.target.placement import BufferType, ShardedPages
from tt_hal.target.sizes import ceil_div, round_up

_MAP_NORESERVE = 0x4000  # Linux; not exported by Python's mmap module


def lazy_zeros(rows: int, row_bytes: int) -> np.ndarray:
    """A zeroed uint8 array whose pages the OS backs only once they are written."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    try:
        region = mmap.mmap(-1, rows * row_bytes, flags=flags | _MAP_NORESERVE)
    except OSError:
        region = mmap.mmap(-1, rows * row_bytes, flags=flags)
    return np.frombuffer(region, np.uint8).reshape(rows, row_bytes)


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
        self._lock = threading.Lock()  # not reentrant: see free
        self._pending: list[int] = []  # freed addresses not merged into _free yet

    @property
    def allocated_bytes(self) -> int:
        with self._lock:
            self._merge_pending()
            return sum(self._allocated.values())

    @property
    def largest_free_block(self) -> int:
        with self._lock:
            self._merge_pending()
            return max((end - start for start, end in self._free), default=0)

    def lowest_allocated(self) -> int:
        """The lowest allocated address, or the end of the range when nothing is."""
        if not self._allocated:  # (a dict's size reads atomically) every dispatch asks: most place nothing in L1
            return self.base + self.size
        with self._lock:  # free blocks and allocations partition the range
            self._merge_pending()
            if self._free and self._free[0][0] == self.base:
                return self._free[0][1]
            return self.base

    def allocate(self, size: int) -> int:
        size = round_up(max(size, 1), self.alignment)
        with self._lock:
            self._merge_pending()
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
            in_use = sum(self._allocated.values())
            largest = max((end - start for start, end in self._free), default=0)
        raise HalError(
            StatusCode.RESOURCE_EXHAUSTED,
            f"{self.name}: cannot allocate {size} bytes per bank; {in_use} of {self.size} bytes per bank in use, "
            f"largest free block {largest} bytes",
        )

    def free(self, address: int) -> None:
        """Frees `address` now, or at the allocator's next call when its lock is held.
        A buffer's finalizer calls this from the garbage collector, which may run on a
        thread that is inside allocate: waiting for the lock would deadlock, and
        merging there would change the free list under allocate's feet."""
        self._pending.append(address)  # atomic
        if self._lock.acquire(blocking=False):
            try:
                self._merge_pending()
            finally:
                self._lock.release()

    def _merge_pending(self) -> None:
        """Returns the pending addresses to the free list (the lock held)."""
        while self._pending:
            address = self._pending.pop()
            size = self._allocated.pop(address)
            start, end = address, address + size
            i = bisect.bisect_left(self._free, (start, end))
            if i < len(self._free) and self._free[i][0] == end:  # merge with the next block
                end = self._free.pop(i)[1]
            if i > 0 and self._free[i - 1][1] == start:  # merge with the previous block
                start = self._free.pop(i - 1)[0]
                i -= 1
            self._free.insert(i, (start, end))


_NO_PAGE_TABLE = np.zeros(0, np.int64)
SHARD_CACHE_SIZE = 1024  # ChipMemory._shard_tables' entries


@dataclasses.dataclass(eq=False)
class SimBuffer:
    """A placed buffer: `size` bytes in pages of `page_size`. Interleaved, page i is in
    bank `banks[i % len(banks)]` (an L1 row, or a DRAM bank) at `address + (i // N) *
    aligned_page_size`; sharded, in bank `page_rows[i]` at `page_addresses[i]`. Where
    the host keeps a bank's byte in `storage`: host_offset."""

    buffer_type: BufferType
    address: int
    size: int
    page_size: int
    aligned_page_size: int
    storage: np.ndarray  # uint8 [rows, bytes per row]: ChipMemory's l1 or dram
    banks: np.ndarray  # int64 banks, in bank order
    page_rows: np.ndarray = dataclasses.field(default_factory=lambda: _NO_PAGE_TABLE)  # sharded: row of each page
    page_addresses: np.ndarray = dataclasses.field(default_factory=lambda: _NO_PAGE_TABLE)  # sharded: its address
    shard: ShardedPages | None = None
    freed: bool = False

    def __post_init__(self):
        self._flat = self.storage.reshape(-1)
        self.dram_banks = self.storage.shape[0] if self.buffer_type is BufferType.DRAM else 0  # host_offset's
        # What the cores' view of it is made of (dispatch.BindingTables' key): the placement;
        # a sharded one's page tables follow from it and its ShardedPages, by identity.
        self.placement = (self.buffer_type.value, self.address, self.size, self.page_size, self.aligned_page_size,
                          None if self.shard is None else id(self.shard))

    def check_range(self, offset: int, length: int) -> None:
        if self.freed:
            raise HalError(StatusCode.FAILED_PRECONDITION,
                           f"{self.buffer_type.value} buffer at {self.address:#x} was freed")
        if offset < 0 or length < 0 or offset + length > self.size:
            raise HalError(
                StatusCode.OUT_OF_RANGE,
                f"range [{offset}, {offset + length}) outside the {self.size}-byte {self.buffer_type.value} buffer",
            )

    def _single_page(self, offset: int, length: int) -> int | None:
        """The flat storage offset of the range when it lies in one page: plain slicing is
        then cheaper than a numba call."""
        page = offset // self.page_size
        within = offset - page * self.page_size
        if within + length > self.page_size:
            return None
        if self.shard is not None:
            row, at = int(self.page_rows[page]), int(self.page_addresses[page]) + within
        else:
            n = self.banks.shape[0]
            row, at = int(self.banks[page % n]), self.address + (page // n) * self.aligned_page_size + within
        return _host_offset(row, at, self.address, self.aligned_page_size, self.storage.shape[1], self.dram_banks)

    def bank_bytes(self, bank: int, address: int, length: int) -> np.ndarray:
        """A view of bytes [address, address + length) of `bank` (an L1 row, or a DRAM
        bank) of this buffer, where the host keeps them (host_offset): in DRAM, within one
        page slot of the buffer (its pages are stored page-major across the banks)."""
        offset = address - self.address
        if self.dram_banks and (offset < 0 or offset % self.aligned_page_size + length > self.aligned_page_size):
            raise ValueError(f"DRAM bytes [{address:#x}, {address + length:#x}) of bank {bank} are not within one "
                             f"{self.aligned_page_size}-byte page slot of the buffer at {self.address:#x}")
        at = _host_offset(bank, address, self.address, self.aligned_page_size, self.storage.shape[1], self.dram_banks)
        return self._flat[at:at + length]

    def read(self, offset: int, length: int, out: np.ndarray | None = None) -> np.ndarray:
        self.check_range(offset, length)
        if out is None:
            out = np.empty(length, np.uint8)
        if length == 0:  # also at offset == size, where no page exists
            return out
        place = self._single_page(offset, length)
        if place is not None:
            out[:] = self._flat[place:place + length]
        else:
            paged_read(self._flat, self.storage.shape[1], self.dram_banks, self.banks, self.page_rows,
                       self.page_addresses, self.address, self.page_size, self.aligned_page_size, offset, out)
        return out

    def write(self, offset: int, data: np.ndarray) -> None:
        length = data.shape[0]
        self.check_range(offset, length)
        if length == 0:
            return
        place = self._single_page(offset, length)
        if place is not None:
            self._flat[place:place + length] = data
        else:
            paged_write(self._flat, self.storage.shape[1], self.dram_banks, self.banks, self.page_rows,
                        self.page_addresses, self.address, self.page_size, self.aligned_page_size, offset, data)


@numba.njit(cache=True, nogil=True, inline="always")
def host_offset(bank, at, base, aligned_page_size, row_bytes, dram_banks):
    """Flat offset in its storage array of byte `at` of `bank`, in the buffer at `base`
    with pages of aligned_page_size. An L1 (dram_banks 0) is a row of row_bytes, as on
    the chip: kernels address it directly. DRAM (dram_banks: the chip's bank count) is
    only reached through a buffer, so the host keeps each allocation's bytes page-major
    across the banks, from base * dram_banks on: slot s of bank b at (s * dram_banks +
    b) * aligned_page_size, so an interleaved buffer's pages lie one after another in
    page order. The host's memory streams them then, where bank rows a GiB apart made
    each 2 KB page a cold start (bf16 tiles: half the copy speed)."""
    if dram_banks == 0:
        return bank * row_bytes + at
    offset = at - base
    slot = offset // aligned_page_size
    return base * dram_banks + (slot * dram_banks + bank) * aligned_page_size + offset - slot * aligned_page_size


_host_offset = host_offset.py_func  # SimBuffer's, in plain Python: a numba call costs more than the sum


@numba.njit(cache=True, nogil=True, inline="always")
def page_span(banks, first_bank, bank_count, page_rows, page_addresses, table, address, page_size, aligned_page_size,
              row_bytes, dram_banks, byte, remaining):
    """(flat storage offset (host_offset), bytes until the page ends or `remaining`) for
    buffer byte `byte`: pages interleaved over banks[first_bank:first_bank + bank_count],
    or with a page table (table >= 0) page i in bank page_rows[table + i] at
    page_addresses[table + i]. Indices, not slices: numba counts a slice's references
    atomically, which costs more than this function."""
    page = byte // page_size
    within = byte - page * page_size
    chunk = min(page_size - within, remaining)
    if table >= 0:
        bank, at = page_rows[table + page], page_addresses[table + page] + within
    else:
        bank, at = banks[first_bank + page % bank_count], address + (page // bank_count) * aligned_page_size + within
    return host_offset(bank, at, address, aligned_page_size, row_bytes, dram_banks), chunk


@intrinsic
def move_bytes(typingctx, target, target_at, source, source_at, length):
    """memmove of `length` bytes from flat offset `source_at` of C-contiguous uint8 array
    `source` to flat offset `target_at` of `target` (the caller checks the bounds). No
    slices: a slice is an array whose reference count numba updates atomically as it is
    made and dropped, and a byte loop over slices does not vectorize."""
    if not all(isinstance(t, types.Array) and t.dtype == types.uint8 and t.layout == "C" for t in (target, source)):
        return None

    def codegen(context, builder, signature, args):
        target_data, source_data = (context.make_array(t)(context, builder, v).data
                                    for t, v in ((signature.args[0], args[0]), (signature.args[2], args[2])))
        cgutils.raw_memmove(builder, builder.gep(target_data, [args[1]]), builder.gep(source_data, [args[3]]),
                            args[4], 1)
        return context.get_dummy_value()
    return types.void(target, types.int64, source, types.int64, types.int64), codegen


@intrinsic
def load_int32(typingctx, source, source_at):
    """The little-endian int32 at flat byte offset `source_at` of C-contiguous uint8 array
    `source` (the caller checks the bounds), sign-extended: one load, where four byte
    loads and shifts cost a gather's every table entry."""
    if not (isinstance(source, types.Array) and source.dtype == types.uint8 and source.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pointer = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(32).as_pointer())
        word = builder.load(pointer, align=1)  # hosts numba targets are little-endian, as the chip is
        return builder.sext(word, ir.IntType(64))
    return types.int64(source, types.int64), codegen


@intrinsic
def store_int32(typingctx, target, target_at, value):
    """Stores the low 32 bits of `value` little-endian at flat byte offset `target_at` of
    C-contiguous uint8 array `target` (the caller checks the bounds): load_int32's way back."""
    if not (isinstance(target, types.Array) and target.dtype == types.uint8 and target.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pointer = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(32).as_pointer())
        builder.store(builder.trunc(args[2], ir.IntType(32)), pointer, align=1)
        return context.get_dummy_value()
    return types.void(target, types.int64, types.int64), codegen


@intrinsic
def fill_bytes(typingctx, target, target_at, value, length):
    """memset of `length` bytes from flat offset `target_at` of C-contiguous uint8 array
    `target` to the low byte of `value` (the caller checks the bounds): a byte loop
    over an array runs at a fifth of memset's speed."""
    if not (isinstance(target, types.Array) and target.dtype == types.uint8 and target.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        cgutils.memset(builder, builder.gep(data, [args[1]]), args[3], builder.trunc(args[2], cgutils.int8_t))
        return context.get_dummy_value()
    return types.void(target, types.int64, types.int64, types.int64), codegen


@numba.njit(cache=True, nogil=True)
def copy_bytes(target, source):
    """target[:] = source[:] as a plain loop: numba's slice assignment checks for
    overlap and goes through a temporary, ten times slower for a tile-sized page."""
    for k in range(target.shape[0]):
        target[k] = source[k]


@numba.njit(cache=True, nogil=True)
def paged_read(flat, row_bytes, dram_banks, banks, page_rows, page_addresses, address, page_size, aligned_page_size,
               offset, out):
    """Copies out.shape[0] buffer bytes from `offset`, page by page, out of the banks
    (flat: the storage, flattened)."""
    pos = 0
    while pos < out.shape[0]:
        at, chunk = page_span(banks, 0, banks.shape[0], page_rows, page_addresses, 0 if page_rows.shape[0] else -1,
                              address, page_size, aligned_page_size, row_bytes, dram_banks, offset + pos,
                              out.shape[0] - pos)
        copy_bytes(out[pos:pos + chunk], flat[at:at + chunk])
        pos += chunk


@numba.njit(cache=True, nogil=True)
def paged_write(flat, row_bytes, dram_banks, banks, page_rows, page_addresses, address, page_size, aligned_page_size,
                offset, data):
    """Copies `data` into the buffer's bytes from `offset`, page by page, into the banks."""
    pos = 0
    while pos < data.shape[0]:
        at, chunk = page_span(banks, 0, banks.shape[0], page_rows, page_addresses, 0 if page_rows.shape[0] else -1,
                              address, page_size, aligned_page_size, row_bytes, dram_banks, offset + pos,
                              data.shape[0] - pos)
        copy_bytes(flat[at:at + chunk], data[pos:pos + chunk])
        pos += chunk


def l1_bank_cores(num_banks: int) -> np.ndarray:
    """Core index (row-major over the worker grid) of each L1 bank id. tt-metal's L1
    banking allocator gives the k-th worker core bank `shuffled[k]`, where `shuffled`
    is 0..N-1 shuffled by libstdc++'s std::shuffle with std::default_random_engine(0)
    (minstd_rand0); this replays that shuffle."""
    shuffled = list(range(num_banks))
    draw = _MinstdRand0()
    if num_banks > 1 and _MinstdRand0.RANGE // num_banks >= num_banks:
        # libstdc++ draws two swap positions from one number when the range allows.
        i = 1
        if num_banks % 2 == 0:
            j = draw.uniform(1)
            shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
            i += 1
        while i != num_banks:
            both = draw.uniform((i + 1) * (i + 2) - 1)
            for j in divmod(both, i + 2):
                shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
                i += 1
    else:
        for i in range(1, num_banks):
            j = draw.uniform(i)
            shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    cores = np.empty(num_banks, np.int64)
    cores[shuffled] = np.arange(num_banks)
    return cores


class _MinstdRand0:
    """std::minstd_rand0 seeded with 0 (which the engine turns into 1), drawing as
    libstdc++'s uniform_int_distribution does (rejection, then division)."""

    MODULUS = 2_147_483_647
    RANGE = MODULUS - 2  # max() - min()

    def __init__(self):
        self.state = 1

    def uniform(self, high: int) -> int:
        """A draw in [0, high]."""
        scaling = self.RANGE // (high + 1)
        past = (high + 1) * scaling
        while True:
            self.state = self.state * 16807 % self.MODULUS
            if self.state - 1 < past:
                return (self.state - 1) // scaling


class ChipMemory:
    """DRAM banks and worker L1s of one chip, with their allocators. Rows of `l1` are
    the worker cores, row-major over the grid (y * grid_x + x); `dram` holds the banks'
    bytes as host_offset places them (its rows are not banks)."""

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
        self._shard_cache: dict[tuple, tuple] = {}  # _shard_tables'
        self._l1_banks = l1_bank_cores(arch.worker_cores)

    def _kind(self, buffer_type: BufferType):
        if buffer_type is BufferType.DRAM:
            return self.dram_allocator, self.dram, self._dram_banks
        if buffer_type is BufferType.L1:
            return self.l1_allocator, self.l1, self._l1_banks
        raise HalError(StatusCode.INVALID_ARGUMENT, f"cannot place a device buffer in {buffer_type}")

    @staticmethod
    def _allocate(allocator: BankAllocator, bytes_per_bank: int, what: Callable[[], str]) -> int:
        """`what()` names the buffer when it does not fit (a function: the message is made
        only then, not on every allocation)."""
        try:
            return allocator.allocate(bytes_per_bank)
        except HalError as error:
            raise HalError(error.code, f"{what()} does not fit: {error.message}") from None

    def create_interleaved(self, size: int, page_size: int, buffer_type: BufferType) -> SimBuffer:
        if page_size <= 0 or size < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"buffer size {size} / page size {page_size} invalid")
        allocator, storage, banks = self._kind(buffer_type)
        aligned = round_up(page_size, allocator.alignment)
        pages = ceil_div(size, page_size)
        pages_per_bank = ceil_div(pages, len(banks))
        address = self._allocate(
            allocator, max(pages_per_bank, 1) * aligned,
            lambda: f"a {size}-byte buffer ({pages} pages of {page_size} B over {len(banks)} {allocator.name} banks)")
        return SimBuffer(buffer_type, address, size, page_size, aligned, storage, banks, _NO_PAGE_TABLE, _NO_PAGE_TABLE)

    def create_sharded(self, size: int, page_size: int, buffer_type: BufferType, shard: ShardedPages) -> SimBuffer:
        """Shard k of `shard` on core `shard.cores[k]` (a DRAM bank for DRAM), every
        core holding pages_per_shard aligned pages at one common address."""
        allocator, storage, _ = self._kind(buffer_type)
        pages = shard.page_grid[0] * shard.page_grid[1]
        if page_size <= 0 or size != pages * page_size:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"a sharded buffer of {pages} pages of {page_size} B must be {pages * page_size} bytes, "
                           f"not {size}")
        aligned = round_up(page_size, allocator.alignment)
        rows, page_rows, page_offsets = self._shard_tables(buffer_type, shard, aligned)
        address = self._allocate(
            allocator, max(shard.pages_per_shard, 1) * aligned,
            lambda: f"a sharded buffer ({shard.pages_per_shard} pages of {page_size} B per shard on {len(rows)} "
            f"{allocator.name} banks)")
        return SimBuffer(buffer_type, address, size, page_size, aligned, storage, rows,
                         page_rows=page_rows, page_addresses=address + page_offsets, shard=shard)

    def _shard_tables(self, buffer_type: BufferType, shard: ShardedPages, aligned: int) -> tuple[np.ndarray, ...]:
        """(row of each shard, row of each page, each page's offset from the buffer's
        address), made once per ShardedPages object (a tensor spec keeps one: the tensors
        of a spec, an eager op's outputs, share these arrays; nothing writes them, and
        they stay writeable, as numba compiles read-only arrays as another type)."""
        key = (id(shard), buffer_type, aligned)
        entry = self._shard_cache.get(key)
        if entry is not None and entry[0] is shard:
            return entry[1]
        for core in shard.grid_cores:  # every core the spec names must exist, holding a shard or not
            self._core_row(buffer_type, core)
        rows = np.array([self._core_row(buffer_type, core) for core in shard.cores], np.int64)
        shard_of_page, slot = shard.page_map()
        tables = rows, rows[shard_of_page], slot * aligned
        if len(self._shard_cache) >= SHARD_CACHE_SIZE:
            self._shard_cache.clear()
        self._shard_cache[key] = (shard, tables)  # the entry keeps `shard`, so its id is not reused
        return tables

    def _core_row(self, buffer_type: BufferType, core) -> int:
        if buffer_type is BufferType.DRAM:
            if core.y != 0 or not 0 <= core.x < self.arch.dram_bank_count:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"DRAM shards go to DRAM banks (x, 0) with x < {self.arch.dram_bank_count}, "
                               f"not {core!r}")
            return core.x
        if not (0 <= core.x < self.arch.grid_x and 0 <= core.y < self.arch.grid_y):
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"core {core!r} is outside the {self.arch.grid_x}x{self.arch.grid_y} worker grid of "
                           f"{self.arch.name}")
        return core.y * self.arch.grid_x + core.x

    def free(self, buffer: SimBuffer) -> None:
        if buffer.freed:
            return
        buffer.freed = True
        if buffer.buffer_type is not BufferType.SYSTEM_MEMORY:
            self._kind(buffer.buffer_type)[0].free(buffer.address)


def system_memory_buffer(array: np.ndarray) -> SimBuffer:
    """A buffer over host memory (tt-metal's SYSTEM_MEMORY): one bank, one page."""
    flat = array.reshape(1, -1)
    size = flat.shape[1]
    page = max(size, 1)
    return SimBuffer(BufferType.SYSTEM_MEMORY, 0, size, page, page, flat, np.zeros(1, np.int64))
