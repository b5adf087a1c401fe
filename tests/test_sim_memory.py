"""Simulated chip memory: interleaved placement against a numpy reference, bank
allocator properties, lazily backed banks."""

import resource
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hal.status import HalError, StatusCode
from tt_hal.sim.memory import BankAllocator, BufferType, ChipMemory, round_up, system_memory_buffer
from tt_hal.target.arch import ARCHS, get_arch


def reference_page_location(page: int, banks: int, address: int, aligned_page: int) -> tuple[int, int]:
    """tt-metal's interleaved rule: page i -> bank i % N at base + (i // N) * aligned page."""
    return page % banks, address + (page // banks) * aligned_page


def reference_write(storage, banks, address, page_size, aligned_page, offset, data):
    """numpy twin of tt_hal.sim.memory.paged_write: byte by byte."""
    for i, value in enumerate(data):
        byte = offset + i
        bank, at = reference_page_location(byte // page_size, len(banks), address, aligned_page)
        storage[banks[bank], at + byte % page_size] = value


@pytest.fixture(scope="module")
def memory():
    return ChipMemory(ARCHS["wormhole_b0"])


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(1, 20000),
    page_size=st.sampled_from([32, 100, 1024, 2048, 4096]),
    data=st.data(),
)
def test_interleaved_write_matches_numpy_reference(memory, size, page_size, data):
    buffer = memory.create_interleaved(size, page_size, BufferType.DRAM)
    try:
        offset = data.draw(st.integers(0, size - 1))
        length = data.draw(st.integers(0, size - offset))
        payload = np.random.default_rng(size).integers(0, 256, length, dtype=np.uint8)
        payload.flags.writeable = False  # host data is often read-only (bytes, frombuffer)
        buffer.write(offset, payload)
        # Compare bank bytes against the reference placement, written into a copy of the buffer's page slots.
        slots, aligned = round_up(-(-size // page_size), 12) // 12, buffer.aligned_page_size
        region = np.stack([np.concatenate([buffer.bank_bytes(bank, buffer.address + slot * aligned, aligned)
                                           for slot in range(slots)]) for bank in range(12)])
        reference = region.copy()
        reference_write(reference, buffer.banks, 0, page_size, buffer.aligned_page_size, offset, payload)
        np.testing.assert_array_equal(region, reference)
        np.testing.assert_array_equal(buffer.read(offset, length), payload)
    finally:
        buffer.write(0, np.zeros(size, np.uint8))
        memory.free(buffer)


def test_page_to_bank_map_wormhole(memory):
    """Page i of a 2048-byte-page DRAM buffer sits in bank i % 12 at base + (i // 12) * 2048."""
    buffer = memory.create_interleaved(30 * 2048, 2048, BufferType.DRAM)
    pages = np.repeat(np.arange(30, dtype=np.uint8), 2048)
    buffer.write(0, pages)
    for page in (0, 1, 11, 12, 13, 29):
        bank, at = reference_page_location(page, 12, buffer.address, 2048)
        assert (buffer.bank_bytes(bank, at, 2048) == page).all(), page
    memory.free(buffer)


def test_interleaved_dram_pages_lie_in_page_order_in_host_memory(memory):
    """host_offset stores a DRAM allocation page-major across the banks: an interleaved
    buffer's pages follow one another in host memory (so the host streams them), each
    still at tt-metal's bank and address."""
    buffer = memory.create_interleaved(30 * 2048, 2048, BufferType.DRAM)
    first = buffer.bank_bytes(0, buffer.address, 2048).ctypes.data
    for page in range(30):
        bank, at = reference_page_location(page, 12, buffer.address, 2048)
        assert buffer.bank_bytes(bank, at, 2048).ctypes.data == first + page * 2048, page
    with pytest.raises(ValueError, match="one 2048-byte page slot"):  # two slots of a bank are not adjacent
        buffer.bank_bytes(0, buffer.address + 1024, 2048)
    memory.free(buffer)


def test_aligned_page_size_pads_pages_to_dram_alignment():
    memory = ChipMemory(ARCHS["blackhole_p150"])  # DRAM alignment 64
    buffer = memory.create_interleaved(9 * 100, 100, BufferType.DRAM)
    assert buffer.aligned_page_size == 128
    values = (np.arange(900) % 251).astype(np.uint8)
    buffer.write(0, values)
    np.testing.assert_array_equal(buffer.bank_bytes(0, buffer.address, 100), values[:100])
    # Page 8 wraps to bank 0's second slot, one *aligned* page (128 B) above the base.
    np.testing.assert_array_equal(buffer.bank_bytes(0, buffer.address + 128, 100), values[800:900])
    memory.free(buffer)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 5000), min_size=1, max_size=30),
    top_down=st.booleans(),
    free_order=st.randoms(),
)
def test_bank_allocator_never_overlaps_and_frees_back(sizes, top_down, free_order):
    allocator = BankAllocator("test", 1024, 64 * 1024, 32, top_down)
    live = {}
    for size in sizes:
        try:
            address = allocator.allocate(size)
        except HalError as error:
            assert error.code == StatusCode.RESOURCE_EXHAUSTED
            assert "largest free block" in error.message
            continue
        assert address % 32 == 0
        assert 1024 <= address and address + size <= 1024 + 64 * 1024
        for other, other_size in live.items():
            assert address + size <= other or other + other_size <= address
        live[address] = round_up(size, 32)
    addresses = list(live)
    free_order.shuffle(addresses)
    for address in addresses:
        allocator.free(address)
    assert allocator.allocated_bytes == 0
    assert allocator.largest_free_block == 64 * 1024


def test_dram_allocates_bottom_up_and_l1_top_down():
    memory = ChipMemory(ARCHS["wormhole_b0"])
    first = memory.create_interleaved(4096, 4096, BufferType.DRAM)
    second = memory.create_interleaved(4096, 4096, BufferType.DRAM)
    assert first.address == 0 and second.address > first.address
    l1_first = memory.create_interleaved(1024, 1024, BufferType.L1)
    l1_second = memory.create_interleaved(1024, 1024, BufferType.L1)
    assert l1_first.address + 1024 == ARCHS["wormhole_b0"].l1_size
    assert l1_second.address < l1_first.address


def test_exhaustion_reports_sizes():
    memory = ChipMemory(ARCHS["wormhole_b0"])
    with pytest.raises(HalError) as info:
        memory.create_interleaved(13 * (1 << 30), 4096, BufferType.DRAM)
    assert info.value.code == StatusCode.RESOURCE_EXHAUSTED
    message = info.value.message
    assert str(13 * (1 << 30)) in message and "12 DRAM banks" in message and str(1 << 30) in message


def test_banks_are_lazily_backed():
    """32 GiB of Blackhole DRAM costs only what is written."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    memory = ChipMemory(ARCHS["blackhole_p150"])
    buffer = memory.create_interleaved(1 << 20, 4096, BufferType.DRAM)
    buffer.write(0, np.ones(1 << 20, np.uint8))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    assert memory.dram.nbytes == 8 * 4_278_190_080
    assert after - before < 200 * 1024  # far below the 32 GiB mapped


def test_system_memory_buffer_is_a_view():
    host = np.zeros(16, np.uint8)
    buffer = system_memory_buffer(host)
    buffer.write(4, np.full(4, 9, np.uint8))
    assert host[4:8].tolist() == [9, 9, 9, 9]


def test_freed_buffer_and_out_of_range_accesses_fail(memory):
    buffer = memory.create_interleaved(100, 100, BufferType.DRAM)
    with pytest.raises(HalError) as info:
        buffer.read(90, 20)
    assert info.value.code == StatusCode.OUT_OF_RANGE
    memory.free(buffer)
    with pytest.raises(HalError) as info:
        buffer.read(0, 10)
    assert info.value.code == StatusCode.FAILED_PRECONDITION


def test_unknown_arch_is_invalid_argument():
    with pytest.raises(HalError) as info:
        get_arch("grayskull_e999")
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "wormhole_b0" in info.value.message


def returns_at_once(call) -> bool:
    """Whether `call` returns within a few seconds while this thread holds a lock it
    might wait for: run on another thread, so a wait fails the test instead of hanging it."""
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=5)
    return not worker.is_alive()


def test_a_free_from_the_garbage_collector_inside_the_allocator_neither_waits_nor_corrupts():
    """A buffer's finalizer frees from the garbage collector, which may run while this
    thread is inside the allocator (its lock held): the free is merged at the next call."""
    allocator = BankAllocator("test", 0, 4096, 32, top_down=False)
    first, second = allocator.allocate(1024), allocator.allocate(1024)
    with allocator._lock:  # as if the collector ran inside allocate
        assert returns_at_once(lambda: allocator.free(first))
    assert allocator.allocated_bytes == 1024
    allocator.free(second)
    assert allocator.allocated_bytes == 0 and allocator.largest_free_block == 4096


def test_a_dead_programs_callback_inside_get_does_not_wait():
    from tt_hal.kernels import eltwise
    from tt_hal.sim.dispatch import PreparedPrograms
    from tt_hal.target.layout import DataFormat

    programs = PreparedPrograms(get_arch("wormhole_b0"))
    program = eltwise.eltwise_binary("add", DataFormat.bfloat16, DataFormat.bfloat16, DataFormat.bfloat16).program
    prepared = programs.get(program)
    with programs._lock:  # as if the collector ran inside get
        assert returns_at_once(lambda: programs._forget(id(program), None))
    assert programs.get(program) is prepared  # the entry of a live program stays
