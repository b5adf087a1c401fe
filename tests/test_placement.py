"""Tensor placement: page-to-bank maps (DRAM and L1 interleaved, tt-metal's shuffled
L1 bank order), shard-to-core maps (HEIGHT/WIDTH/BLOCK, ROW_MAJOR/COL_MAJOR, L1 and
DRAM, TILE and ROW_MAJOR pages), validation errors, the allocator's placement policy,
and to_device -> to_host round trips for every placement.

References: ../shared/FACTS.md 'Chips and memory'; tt-metal's legacy / ND page maps
(buffer.cpp, buffer_distribution_spec.cpp), page_config.cpp page shapes,
l1_banking_allocator.cpp's std::shuffle(default_random_engine(0)) bank order
(tables in tests/data/libstdcxx_l1_bank_shuffle.txt).

Expectations are written independently of the code under test: maps as literal
tables, bytes located with the formulas above in the simulator's banks (SimBuffer.bank_bytes).
"""

from __future__ import annotations

import contextlib
import os

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hal
from hal.buffer import tensor_element_type
from hal.status import HalError, StatusCode
from tt_hal import ops
from tt_hal.sim.memory import SimBuffer, l1_bank_cores
from tt_hal.target import conversions as codec
from tt_hal.target.layout import DataFormat, Layout, TensorSpec, host_values
from tt_hal.target.placement import (
    BufferType,
    CoreCoord,
    CoreRange,
    CoreRangeSet,
    MemoryConfig,
    ShardOrientation,
    ShardSpec,
    TensorMemoryLayout,
)

SC = StatusCode
BU = hal.BufferUsage
MT = hal.MemoryType
HS, WS, BS, IL = (TensorMemoryLayout.HEIGHT_SHARDED, TensorMemoryLayout.WIDTH_SHARDED,
                  TensorMemoryLayout.BLOCK_SHARDED, TensorMemoryLayout.INTERLEAVED)
RM, CM = ShardOrientation.ROW_MAJOR, ShardOrientation.COL_MAJOR
P = None  # a padding slot in the expected shard tables
TIMEOUT_NS = 10_000_000_000
DATA = os.path.join(os.path.dirname(__file__), "data", "libstdcxx_l1_bank_shuffle.txt")


# --------------------------------------------------------------------------- helpers

@contextlib.contextmanager
def raises_status(code, *keywords):
    """Expects a HalError with `code` whose message names every keyword (case-insensitive)."""
    with pytest.raises(HalError) as info:
        yield info
    error = info.value
    assert error.code == code, f"expected {code.name}, got {error.code!r}: {error}"
    for word in keywords:
        assert word.lower() in str(error).lower(), f"{word!r} not in error message {str(error)!r}"


def shuffle_tables() -> dict[int, list[int]]:
    """n -> shuffled[k] (the bank id of the k-th worker core), from the libstdc++ run."""
    tables = {}
    with open(DATA) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            n, values = line.split(":")
            tables[int(n)] = [int(v) for v in values.split(",")]
    return tables


def core_of_bank(n: int) -> list[int]:
    """Core index (row-major) holding each L1 bank id, from the libstdc++ table."""
    shuffled = shuffle_tables()[n]
    cores = [0] * n
    for k, bank in enumerate(shuffled):
        cores[bank] = k
    return cores


def sim_buffer(view) -> SimBuffer:
    backend = view.get_buffer().allocation.backend_buffer
    assert isinstance(backend, SimBuffer)
    return backend


def crs(x0, y0, x1, y1) -> CoreRangeSet:
    return CoreRangeSet(CoreRange(CoreCoord(x0, y0), CoreCoord(x1, y1)))


def sharded(layout, buffer_type, grid, shape, orientation=RM) -> MemoryConfig:
    return MemoryConfig(layout, buffer_type, ShardSpec(grid, shape, orientation))


def tspec(shape, dtype, layout, memory_config) -> TensorSpec:
    return TensorSpec(tuple(shape), DataFormat.parse(dtype), Layout.parse(layout), memory_config)


def shard_table(memory_config: MemoryConfig, spec: TensorSpec) -> dict[tuple[int, int], list]:
    """{(x, y): [page id or P per slot]} from the placement's page map."""
    pages = memory_config.sharded_pages(spec)
    shard, slot = pages.page_map()
    table: dict[tuple[int, int], list] = {}
    for page, (k, s) in enumerate(zip(shard.tolist(), slot.tolist())):
        core = pages.cores[k]
        row = table.setdefault((core.x, core.y), [P] * pages.pages_per_shard)
        assert row[s] is P, f"two pages in slot {s} of core {core}"
        row[s] = page
    return table


def page_id_tiles(page_rows: int, page_cols: int) -> np.ndarray:
    """A uint32 matrix whose every element is 1 + the id of the tile it lies in: a tile
    page's bytes are then that value 1024 times, whatever the order inside a tile."""
    r = np.arange(page_rows * 32)[:, None] // 32
    c = np.arange(page_cols * 32)[None, :] // 32
    return (1 + r * page_cols + c).astype(np.uint32)


def storage_row(arch, buffer_type: BufferType, core: tuple[int, int]) -> int:
    x, y = core
    return x if buffer_type is BufferType.DRAM else y * arch.grid_x + x


def check_tile_bytes_in_shards(device, view, expected: dict, padding_sentinel: bool = False):
    """Every page id of `expected` is found (as 1 + id, 1024 times) in its core's
    storage row at address + slot * aligned page; padding slots keep place_with_sentinel's 0xEE."""
    buf = sim_buffer(view)
    arch = device.arch
    btype = view.spec.memory_config.buffer_type
    align = arch.dram_alignment if btype is BufferType.DRAM else arch.l1_alignment
    aligned = -(-view.spec.page_size // align) * align
    assert buf.aligned_page_size == aligned
    for core, slots in expected.items():
        row = storage_row(arch, btype, core)
        for slot, page in enumerate(slots):
            at = buf.address + slot * aligned
            got = buf.bank_bytes(row, at, view.spec.page_size).view(np.uint32)
            if page is P:
                if padding_sentinel:
                    assert (buf.bank_bytes(row, at, view.spec.page_size) == 0xEE).all(), (core, slot)
                continue
            assert (got == page + 1).all(), f"core {core} slot {slot}: expected page {page}, got {np.unique(got)[:4]}"


def place_with_sentinel(device, array, dtype, layout, memory_config):
    """allocate_tensor, paint every slot of every grid core with 0xEE, then write the
    tensor: padding slots must keep the sentinel."""
    view = device.allocator.allocate_tensor(array.shape, dtype, layout, memory_config)
    buf = sim_buffer(view)
    arch = device.arch
    btype = memory_config.buffer_type
    aligned = buf.aligned_page_size
    for core in memory_config.shard_spec.grid.cores():
        row = storage_row(arch, btype, (core.x, core.y))
        for slot in range(memory_config.sharded_pages(view.spec).pages_per_shard):
            buf.bank_bytes(row, buf.address + slot * aligned, aligned)[:] = 0xEE
    data = device.backend.encode_tensor(host_values(array, view.spec.dtype), view.spec)
    view.get_buffer().map_write(0, data)
    return view


def wait(sem, value=1):
    assert sem.wait(value, timeout=TIMEOUT_NS), "semaphore did not reach its value in time"


@pytest.fixture(scope="module")
def blackhole():
    dev = hal.create_device("tenstorrent://mock?arch=blackhole_p150")
    yield dev
    dev.close()


# --------------------------------------------------------------------------- page -> bank maps

@pytest.mark.parametrize("n", sorted(shuffle_tables()))
def test_l1_bank_cores_match_libstdcxx_shuffle(n):
    """tt_hal.sim.memory.l1_bank_cores replays std::shuffle(default_random_engine(0)) exactly."""
    assert l1_bank_cores(n).tolist() == core_of_bank(n)


def test_wormhole_l1_bank_zero_is_core_1_4():
    cores = l1_bank_cores(64)
    assert cores[0] == 33 and (33 % 8, 33 // 8) == (1, 4)
    assert [(c % 8, c // 8) for c in cores[1:4]] == [(4, 4), (4, 1), (2, 2)]
    assert (cores[63] % 8, cores[63] // 8) == (1, 0)


@pytest.mark.parametrize("arch_fixture", ["device", "blackhole"])
def test_dram_interleaved_row_major_pages(request, arch_fixture):
    """Page i (one 28-byte row) lives in DRAM bank i % N at base + (i // N) * round_up(28, align)."""
    device = request.getfixturevalue(arch_fixture)
    arch = device.arch
    rows = 3 * arch.dram_bank_count + 5
    x = (np.arange(rows * 7, dtype=np.float32) + 0.5).reshape(rows, 7)
    view = device.to_device(x, "float32", "row_major", hal.DRAM_MEMORY_CONFIG)
    buf = sim_buffer(view)
    assert view.spec.page_size == 28
    aligned = -(-28 // arch.dram_alignment) * arch.dram_alignment
    assert buf.aligned_page_size == aligned == (32 if arch.name == "wormhole_b0" else 64)
    assert buf.banks.tolist() == list(range(arch.dram_bank_count))
    for i in range(rows):
        bank, at = i % arch.dram_bank_count, buf.address + (i // arch.dram_bank_count) * aligned
        assert buf.bank_bytes(bank, at, 28).tobytes() == x[i].tobytes(), i
    np.testing.assert_array_equal(view.to_host(), x)
    # Page-at-a-time access (the single-page path) uses the same locations.
    for i in (0, arch.dram_bank_count + 1, rows - 1):
        bank, at = i % arch.dram_bank_count, buf.address + (i // arch.dram_bank_count) * aligned
        row = np.full(28, i, np.uint8)
        view.get_buffer().map_write(i * 28, row)
        assert buf.bank_bytes(bank, at, 28).tobytes() == row.tobytes(), i
        assert view.get_buffer().map_read(i * 28 + 3, 20) == row[3:23].tobytes()


def test_dram_interleaved_tile_pages(device):
    """Tile page i in bank i % 12 at base + (i // 12) * 2048; 30 bf16 tiles wrap the banks twice."""
    x = page_id_tiles(5, 6).astype(np.float32)
    view = device.to_device(x, "float32", "tile", hal.DRAM_MEMORY_CONFIG)
    buf = sim_buffer(view)
    assert view.spec.page_size == 4096 and view.spec.num_pages == 30
    for i in range(30):
        at = buf.address + (i // 12) * 4096
        values = buf.bank_bytes(i % 12, at, 4096).view(np.float32)
        assert (values == i + 1).all(), i


@pytest.mark.parametrize("arch_fixture,n", [("device", 64), ("blackhole", 130)])
def test_l1_interleaved_uses_shuffled_bank_order(request, arch_fixture, n):
    """L1 interleaved page i is in L1 bank i % N, on the core the shuffle gives that
    bank, at base + (i // N) * aligned page; wormhole's bank 0 is core (1, 4)."""
    device = request.getfixturevalue(arch_fixture)
    arch = device.arch
    assert arch.worker_cores == n
    bank_core = core_of_bank(n)
    rows = n + 7  # wraps: pages n..n+6 sit one aligned page above the base in banks 0..6
    x = np.arange(rows * 5, dtype=np.int32).reshape(rows, 5) * 3 - 100  # 20-byte rows -> 32 aligned
    view = device.to_device(x, "int32", "row_major", hal.L1_MEMORY_CONFIG)
    assert view.spec.memory_config.buffer_type is BufferType.L1
    buf = sim_buffer(view)
    assert buf.aligned_page_size == 32
    assert buf.storage.shape[0] == arch.worker_cores
    assert buf.banks.tolist() == bank_core
    for i in range(rows):
        core = bank_core[i % n]
        at = buf.address + (i // n) * 32
        assert buf.bank_bytes(core, at, 20).tobytes() == x[i].tobytes(), i
        assert view.get_buffer().map_read(i * 20, 20) == x[i].tobytes(), i  # single-page read
    for i in (1, n + 2):  # single-page writes, one in the second slot of its bank
        row = np.full(20, 0xA0 + i % 16, np.uint8)
        view.get_buffer().map_write(i * 20, row)
        at = buf.address + (i // n) * 32
        assert buf.bank_bytes(bank_core[i % n], at, 20).tobytes() == row.tobytes(), i
        x[i] = row.view(np.int32)
    if n == 64:
        at = buf.address
        assert buf.bank_bytes(4 * 8 + 1, at, 20).tobytes() == x[0].tobytes()  # bank 0 on core (x=1, y=4)
        assert buf.bank_bytes(4 * 8 + 1, at + 32, 20).tobytes() == x[64].tobytes()
    np.testing.assert_array_equal(view.to_host(), x)


def test_l1_allocates_top_down_dram_bottom_up(device):
    arch = device.arch
    l1 = sim_buffer(device.to_device(np.zeros((4, 4), np.float32), "float32", "row_major", hal.L1_MEMORY_CONFIG))
    dram = sim_buffer(device.to_device(np.zeros((4, 4), np.float32), "float32", "row_major", hal.DRAM_MEMORY_CONFIG))
    assert l1.address >= arch.l1_unreserved_base
    assert l1.address + l1.aligned_page_size <= arch.l1_size - arch.l1_small_size
    assert l1.address > arch.l1_size // 2  # from the top
    assert dram.address < arch.dram_bank_size // 2  # from the bottom


# --------------------------------------------------------------------------- shard -> core maps

HEIGHT_5x2 = {(0, 0): [0, 1, 2, 3], (1, 0): [4, 5, 6, 7], (0, 1): [8, 9, P, P]}
BLOCK_3x5 = {(0, 0): [0, 1, 5, 6], (1, 0): [2, 3, 7, 8], (2, 0): [4, P, 9, P],
             (0, 1): [10, 11, P, P], (1, 1): [12, 13, P, P], (2, 1): [14, P, P, P]}

SHARD_CASES = {
    # name: (page grid, memory config, expected {core: slots})
    "height_5x2_rowmajor": ((5, 2), sharded(HS, "l1", crs(0, 0, 1, 1), (64, 64)), HEIGHT_5x2),
    "height_5x2_colmajor": ((5, 2), sharded(HS, "l1", crs(0, 0, 1, 1), (64, 64), CM),
                            {(0, 0): [0, 1, 2, 3], (0, 1): [4, 5, 6, 7], (1, 0): [8, 9, P, P]}),
    "height_two_ranges": ((5, 2), sharded(HS, "l1", CoreRangeSet([CoreRange((5, 6), (5, 6)),
                                                                   CoreRange((0, 0), (1, 0))]), (64, 64)),
                          {(5, 6): [0, 1, 2, 3], (0, 0): [4, 5, 6, 7], (1, 0): [8, 9, P, P]}),
    "block_3x5_rowmajor": ((3, 5), sharded(BS, "l1", crs(0, 0, 2, 1), (64, 64)), BLOCK_3x5),
    # ND / GRID_2D semantics: shard (i, j) on (x0 + j, y0 + i) even on a wider grid.
    "block_3x5_wide_grid": ((3, 5), sharded(BS, "l1", crs(0, 0, 3, 1), (64, 64)), BLOCK_3x5),
    "block_3x5_offset": ((3, 5), sharded(BS, "l1", crs(4, 5, 6, 6), (64, 64)),
                         {(x + 4, y + 5): v for (x, y), v in BLOCK_3x5.items()}),
    # COL_MAJOR: shard (i, j) on (x0 + i, y0 + j).
    "block_3x5_colmajor": ((3, 5), sharded(BS, "l1", crs(0, 0, 1, 2), (64, 64), CM),
                           {(0, 0): [0, 1, 5, 6], (0, 1): [2, 3, 7, 8], (0, 2): [4, P, 9, P],
                            (1, 0): [10, 11, P, P], (1, 1): [12, 13, P, P], (1, 2): [14, P, P, P]}),
    "width_2x5": ((2, 5), sharded(WS, "l1", crs(0, 0, 3, 0), (64, 64)),
                  {(0, 0): [0, 1, 5, 6], (1, 0): [2, 3, 7, 8], (2, 0): [4, P, 9, P]}),
    "width_2x5_colmajor": ((2, 5), sharded(WS, "l1", crs(2, 3, 3, 4), (64, 64), CM),
                           {(2, 3): [0, 1, 5, 6], (2, 4): [2, 3, 7, 8], (3, 3): [4, P, 9, P]}),
    "dram_height_5x2": ((5, 2), sharded(HS, "dram", crs(0, 0, 3, 0), (64, 64)),
                        {(0, 0): [0, 1, 2, 3], (1, 0): [4, 5, 6, 7], (2, 0): [8, 9, P, P]}),
    "dram_width_2x5": ((2, 5), sharded(WS, "dram", crs(9, 0, 11, 0), (64, 64)),
                       {(9, 0): [0, 1, 5, 6], (10, 0): [2, 3, 7, 8], (11, 0): [4, P, 9, P]}),
}


@pytest.mark.parametrize("case", sorted(SHARD_CASES))
def test_shard_page_map_and_bytes(device, case):
    (page_rows, page_cols), config, expected = SHARD_CASES[case]
    x = page_id_tiles(page_rows, page_cols)
    spec = tspec(x.shape, "uint32", "tile", config)
    assert spec.page_grid == (page_rows, page_cols)
    assert shard_table(config, spec) == expected
    view = place_with_sentinel(device, x, "uint32", "tile", config)
    assert view.spec.memory_config == config
    check_tile_bytes_in_shards(device, view, expected, padding_sentinel=True)
    np.testing.assert_array_equal(view.to_host(), x)


def test_shard_page_map_arrays(device):
    """page_map() gives (shard, slot) per page in page order."""
    config = SHARD_CASES["block_3x5_rowmajor"][1]
    spec = tspec((96, 160), "bfloat16", "tile", config)
    shard, slot = config.sharded_pages(spec).page_map()
    assert shard.tolist() == [0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5]
    assert slot.tolist() == [0, 1, 0, 1, 0, 2, 3, 2, 3, 2, 0, 1, 0, 1, 0]
    pages = config.sharded_pages(spec)
    assert pages.shard_grid == (2, 3) and pages.pages_per_shard == 4
    assert [(c.x, c.y) for c in pages.cores] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]


def test_sharded_buffer_size_per_core(device):
    """Each core holds pages_per_shard aligned pages: bfloat8_b tiles (1088 B) stay
    1088 apart in L1 (16-aligned) and round to 1088 in DRAM (32-aligned)."""
    x = np.ones((64, 64), np.float32)
    for btype, grid in (("l1", crs(0, 0, 1, 0)), ("dram", crs(0, 0, 1, 0))):
        view = device.to_device(x, "bfloat8_b", "tile", sharded(HS, btype, grid, (32, 64)))
        assert view.spec.page_size == 1088
        assert sim_buffer(view).aligned_page_size == 1088
        assert sim_buffer(view).page_addresses.tolist() == [sim_buffer(view).address + s * 1088 for s in (0, 1, 0, 1)]
    # bfloat16 4-byte rows in DRAM: aligned to 32 on wormhole.
    view = device.to_device(np.ones((6, 3), np.float32), "float32", "row_major",
                            sharded(HS, "dram", crs(0, 0, 2, 0), (2, 3)))
    assert view.spec.page_size == 12 and sim_buffer(view).aligned_page_size == 32


def test_row_major_pages_width_sharded(device):
    """WIDTH_SHARDED ROW_MAJOR: a page is one row of the shard width; element (r, c)
    sits on core c // sw (row-major grid) at slot r, byte (c % sw) * itemsize."""
    x = (np.arange(4 * 96, dtype=np.uint16) * 7).reshape(4, 96)
    config = sharded(WS, "l1", crs(0, 0, 2, 0), (4, 32))
    view = device.to_device(x, "uint16", "row_major", config)
    spec = view.spec
    assert spec.page_shape == (1, 32) and spec.page_size == 64 and spec.page_grid == (4, 3)
    assert shard_table(config, spec) == {(0, 0): [0, 3, 6, 9], (1, 0): [1, 4, 7, 10], (2, 0): [2, 5, 8, 11]}
    buf = sim_buffer(view)
    for r in range(4):
        for j in range(3):
            at = buf.address + r * 64
            assert buf.bank_bytes(j, at, 64).tobytes() == x[r, 32 * j:32 * (j + 1)].tobytes(), (r, j)
    np.testing.assert_array_equal(view.to_host(), x)


def test_row_major_pages_block_sharded_colmajor(device):
    """BLOCK_SHARDED ROW_MAJOR, COL_MAJOR: shard (i, j) of rows 4i.., columns 32j.. is
    on core (i, j); a page is one 32-wide row piece (128 B of float32)."""
    x = (np.arange(8 * 64, dtype=np.float32) - 100.25).reshape(8, 64)
    config = sharded(BS, "l1", crs(0, 0, 1, 1), (4, 32), CM)
    view = device.to_device(x, "float32", "row_major", config)
    assert view.spec.page_shape == (1, 32) and view.spec.page_size == 128
    buf = sim_buffer(view)
    for r in range(8):
        for j in range(2):
            core = (r // 4, j)  # (x0 + i, y0 + j)
            at = buf.address + (r % 4) * 128
            got = buf.bank_bytes(core[1] * 8 + core[0], at, 128)
            assert got.tobytes() == x[r, 32 * j:32 * (j + 1)].tobytes(), (r, j)
    np.testing.assert_array_equal(view.to_host(), x)


def test_row_major_pages_height_sharded_partial_last_shard(device):
    """HEIGHT_SHARDED ROW_MAJOR: a page is one full row (24 float32 = 96 B); 10 rows in
    shards of 4 rows: the third core holds rows 8, 9 and two padding slots."""
    x = (np.arange(10 * 24, dtype=np.float32) * 0.5).reshape(10, 24)
    config = sharded(HS, "l1", crs(3, 3, 5, 3), (4, 24))
    spec = tspec(x.shape, "float32", "row_major", config)
    assert spec.page_shape == (1, 24) and spec.page_size == 96
    assert shard_table(config, spec) == {(3, 3): [0, 1, 2, 3], (4, 3): [4, 5, 6, 7], (5, 3): [8, 9, P, P]}
    view = place_with_sentinel(device, x, "float32", "row_major", config)
    buf = sim_buffer(view)
    for r in range(10):
        row = 3 * 8 + 3 + r // 4
        at = buf.address + (r % 4) * 96
        assert buf.bank_bytes(row, at, 96).tobytes() == x[r].tobytes(), r
    for slot in (2, 3):
        at = buf.address + slot * 96
        assert (buf.bank_bytes(3 * 8 + 5, at, 96) == 0xEE).all()
    np.testing.assert_array_equal(view.to_host(), x)
    for r in (0, 5, 9):  # single-page partial reads and writes
        assert view.get_buffer().map_read(r * 96 + 8, 40) == x[r].tobytes()[8:48]
        view.get_buffer().map_write(r * 96 + 4, np.full(8, 0x5A, np.uint8))
        at = buf.address + (r % 4) * 96
        assert (buf.bank_bytes(3 * 8 + 3 + r // 4, at + 4, 8) == 0x5A).all()
        assert buf.bank_bytes(3 * 8 + 3 + r // 4, at, 4).tobytes() == x[r, :1].tobytes()


def test_row_major_interleaved_page_is_full_row(device):
    spec = tspec((3, 5, 7), "uint8", "row_major", hal.L1_MEMORY_CONFIG)
    assert spec.page_shape == (1, 7) and spec.page_size == 7 and spec.num_pages == 15


def test_dram_sharded_rows_blackhole(blackhole):
    """DRAM HEIGHT_SHARDED on blackhole_p150: cores are (bank, 0), pages 64-aligned."""
    x = (np.arange(12 * 5, dtype=np.int32) - 30).reshape(12, 5)
    config = sharded(HS, "dram", crs(2, 0, 7, 0), (3, 5))
    view = blackhole.to_device(x, "int32", "row_major", config)
    buf = sim_buffer(view)
    assert buf.aligned_page_size == 64
    for r in range(12):
        bank = 2 + r // 3
        at = buf.address + (r % 3) * 64
        assert buf.bank_bytes(bank, at, 20).tobytes() == x[r].tobytes(), r
    np.testing.assert_array_equal(view.to_host(), x)
    with raises_status(SC.INVALID_ARGUMENT, "DRAM"):
        blackhole.to_device(x, "int32", "row_major", sharded(HS, "dram", crs(4, 0, 8, 0), (3, 5)))


def test_block_sharded_blackhole_wide_grid(blackhole):
    """Blackhole's 13-column grid takes block shards at x = 8..12 (off wormhole's 8x8)."""
    x = page_id_tiles(2, 5)
    config = sharded(BS, "l1", crs(8, 8, 12, 9), (32, 32))
    expected = {(8 + j, 8 + i): [i * 5 + j] for i in range(2) for j in range(5)}
    view = blackhole.to_device(x, "uint32", "tile", config)
    assert shard_table(config, view.spec) == expected
    buf = sim_buffer(view)
    for (cx, cy), (page,) in expected.items():
        got = buf.bank_bytes(cy * 13 + cx, buf.address, 4096).view(np.uint32)
        assert (got == page + 1).all()
    np.testing.assert_array_equal(view.to_host(), x)


# --------------------------------------------------------------------------- validation

def _tile(shape, config, dtype="bfloat16"):
    return tspec(shape, dtype, "tile", config)


VALIDATION_CASES = {
    "height_shard_width_not_tensor_width": (
        lambda: _tile((160, 64), sharded(HS, "l1", crs(0, 0, 7, 0), (64, 32))), ["height sharding", "width"]),
    "height_shard_width_rm": (
        lambda: tspec((8, 24), "float32", "row_major", sharded(HS, "l1", crs(0, 0, 1, 0), (4, 48))),
        ["height sharding"]),
    "width_shard_height_not_tensor_height": (
        lambda: _tile((128, 64), sharded(WS, "l1", crs(0, 0, 7, 0), (64, 32))), ["width sharding", "height"]),
    "height_more_shards_than_cores": (
        lambda: _tile((160, 64), sharded(HS, "l1", crs(0, 0, 1, 1), (32, 64))), ["5 shards", "4 cores"]),
    "width_more_shards_than_cores": (
        lambda: _tile((32, 320), sharded(WS, "l1", crs(0, 0, 2, 0), (32, 64))), ["5 shards", "3 cores"]),
    "block_non_rectangular": (
        lambda: _tile((64, 64), sharded(BS, "l1", CoreRangeSet([CoreRange((0, 0), (1, 0)),
                                                                CoreRange((0, 1), (2, 1))]), (32, 32))),
        ["rectangular"]),
    "block_shard_grid_wider_than_core_grid": (
        lambda: _tile((96, 160), sharded(BS, "l1", crs(0, 0, 1, 2), (64, 64))), ["does not fit"]),
    "block_shard_grid_taller_colmajor": (
        lambda: _tile((96, 160), sharded(BS, "l1", crs(0, 0, 2, 1), (64, 64), CM)), ["does not fit"]),
    "tile_shard_height_not_32_multiple": (
        lambda: _tile((64, 64), sharded(HS, "l1", crs(0, 0, 3, 0), (16, 64))), ["multiple", "32x32"]),
    "tile_shard_width_not_32_multiple": (
        lambda: _tile((64, 96), sharded(WS, "l1", crs(0, 0, 1, 0), (64, 48))), ["multiple", "32x32"]),
    "rm_width_not_multiple_of_shard_width": (
        lambda: tspec((4, 96), "uint16", "row_major", sharded(WS, "l1", crs(0, 0, 2, 0), (4, 40))),
        ["multiple of the shard width"]),
    "bfloat8_b_row_major": (
        lambda: tspec((4, 4), "bfloat8_b", "row_major", hal.DRAM_MEMORY_CONFIG), ["bfloat8_b", "TILE"]),
    "bfloat4_b_row_major": (
        lambda: tspec((4, 4), "Bfp4_b", "row_major", hal.DRAM_MEMORY_CONFIG), ["bfloat4_b", "TILE"]),
    "unknown_dtype": (lambda: DataFormat.parse("float8"), ["unknown data format", "float8"]),
    "unknown_layout": (lambda: Layout.parse("tiled"), ["unknown layout", "tiled"]),
    "unknown_memory_layout": (lambda: MemoryConfig("diagonal", "l1"), ["TensorMemoryLayout", "diagonal"]),
    "unknown_buffer_type": (lambda: MemoryConfig("interleaved", "sram"), ["BufferType", "sram"]),
    "sharded_without_shard_spec": (lambda: MemoryConfig(HS, "l1"), ["HEIGHT_SHARDED", "shard_spec"]),
    "interleaved_with_shard_spec": (
        lambda: MemoryConfig(IL, "l1", ShardSpec(crs(0, 0, 0, 0), (32, 32))), ["INTERLEAVED", "shard_spec"]),
    "overlapping_core_ranges": (
        lambda: CoreRangeSet([CoreRange((0, 0), (2, 2)), CoreRange((2, 2), (3, 3))]), ["overlap", "(2,2)"]),
    "empty_core_range": (lambda: CoreRange((3, 0), (1, 0)), ["empty"]),
    "empty_core_range_set": (lambda: CoreRangeSet([]), ["at least one"]),
    "shard_shape_not_2d": (lambda: ShardSpec(crs(0, 0, 0, 0), (32, 32, 32)), ["two positive"]),
    "shard_shape_zero": (lambda: ShardSpec(crs(0, 0, 0, 0), (0, 32)), ["two positive"]),
}


@pytest.mark.parametrize("case", sorted(VALIDATION_CASES))
def test_validation_errors(case):
    make, keywords = VALIDATION_CASES[case]
    with raises_status(SC.INVALID_ARGUMENT, *keywords) as info:
        make()
    assert isinstance(info.value, ValueError)


TO_DEVICE_ERRORS = {
    "float_into_int_format": (np.array([1.0, 2.0]), "int32", "row_major", None, ["cannot go to integer", "int32"]),
    "float_into_uint8_tile": (np.ones((3, 3), np.float32), "uint8", "tile", None, ["without rounding"]),
    "minus_one_into_uint8": (np.array([3, -1, 7]), "uint8", "row_major", None, ["-1", "does not fit", "uint8"]),
    "256_into_uint8": (np.array([255, 256]), "uint8", "tile", None, ["256", "does not fit"]),
    "big_into_int32": (np.array([2**31], np.int64), "int32", "row_major", None, ["2147483648", "int32"]),
    "negative_into_uint32": (np.array([-5], np.int64), "uint32", "row_major", None, ["-5", "uint32"]),
    "unknown_dtype": (np.ones(3, np.float32), "float8", "row_major", None, ["unknown data format"]),
    "unknown_layout": (np.ones(3, np.float32), "float32", "tiles", None, ["unknown layout"]),
    "bfp8_row_major": (np.ones(3, np.float32), "bfloat8_b", "row_major", None, ["TILE"]),
    "complex_data": (np.ones(3, np.complex64), "float32", "row_major", None, ["cannot go to float32"]),
    "core_outside_grid_height": (np.ones((64, 64), np.float32), "bfloat16", "tile",
                                 sharded(HS, "l1", crs(7, 0, 8, 0), (32, 64)), ["outside", "8x8", "(8,0)"]),
    "core_outside_grid_block": (np.ones((64, 64), np.float32), "bfloat16", "tile",
                                sharded(BS, "l1", crs(7, 7, 8, 8), (32, 32)), ["outside", "8x8"]),
    "core_outside_grid_width_colmajor": (np.ones((32, 64), np.float32), "bfloat16", "tile",
                                         sharded(WS, "l1", crs(0, 7, 0, 8), (32, 32), CM), ["outside", "(0,8)"]),
    "dram_shard_on_bank_12": (np.ones((64, 64), np.float32), "float32", "tile",
                              sharded(HS, "dram", crs(11, 0, 12, 0), (32, 64)), ["DRAM", "(12,0)"]),
    "dram_shard_on_row_1": (np.ones((64, 64), np.float32), "float32", "tile",
                            sharded(HS, "dram", crs(0, 0, 0, 1), (32, 64)), ["DRAM", "(0,1)"]),
    "height_shard_width_mismatch": (np.ones((64, 64), np.float32), "float32", "tile",
                                    sharded(HS, "l1", crs(0, 0, 3, 0), (32, 32)), ["height sharding"]),
}


@pytest.mark.parametrize("case", sorted(TO_DEVICE_ERRORS))
def test_to_device_errors(device, case):
    x, dtype, layout, config, keywords = TO_DEVICE_ERRORS[case]
    before = device.allocator.statistics
    l1_before = device.backend.memory.l1_allocator.allocated_bytes
    with raises_status(SC.INVALID_ARGUMENT, *keywords):
        device.to_device(x, dtype, layout, config)
    assert device.allocator.statistics == before
    assert device.backend.memory.l1_allocator.allocated_bytes == l1_before


def test_pad_value_must_fit_int_format(device):
    with raises_status(SC.INVALID_ARGUMENT, "pad_value"):
        device.to_device(np.ones((3, 3), np.uint8), "uint8", "tile", pad_value=-1)


def test_block_grid_with_unused_cores_off_chip_is_rejected(device):
    """A shard grid naming cores that do not exist ((0,0)-(8,8) on an 8x8 chip) is
    rejected for HEIGHT sharding even when the off-chip cores hold no shard; BLOCK
    sharding of the same grid should be rejected alike (tt-metal's legacy Buffer path
    looks up a bank for every core of the grid)."""
    with raises_status(SC.INVALID_ARGUMENT, "outside"):
        device.allocator.allocate_tensor((64, 64), "bfloat16", "tile", sharded(HS, "l1", crs(0, 0, 8, 0), (32, 64)))
    with raises_status(SC.INVALID_ARGUMENT, "outside"):
        device.allocator.allocate_tensor((64, 64), "bfloat16", "tile", sharded(BS, "l1", crs(0, 0, 8, 8), (32, 32)))


# --------------------------------------------------------------------------- allocator policy

def placement(view) -> tuple[str, str]:
    mc = view.spec.memory_config
    return mc.buffer_type.name, mc.memory_layout.name


def test_policy_small_tensor_goes_to_l1_height_sharded(device):
    x = np.arange(10 * 32 * 40, dtype=np.float32).reshape(10 * 32, 40)  # 10 page rows x 2 page columns
    view = device.to_device(x, "bfloat16", "tile")
    assert placement(view) == ("L1", "HEIGHT_SHARDED")
    shard = view.spec.memory_config.shard_spec
    assert shard.shape == (32, 64) and shard.orientation is RM
    assert [(c.x, c.y) for c in shard.cores()] == [(x_, 0) for x_ in range(8)] + [(0, 1), (1, 1)]
    # Page row r lands on core r (row-major), two tiles per shard.
    buf = sim_buffer(view)
    assert buf.page_rows.tolist() == [r // 2 for r in range(20)]
    np.testing.assert_array_equal(view.to_host(), x.astype(ml_dtypes.bfloat16))


def test_policy_spreads_many_page_rows_over_all_cores(device):
    """65 page rows: at most ceil(65/64) = 2 rows per core, on the first 33 cores."""
    view = device.allocator.allocate_tensor((65 * 32, 32), "bfloat16", "tile")
    assert placement(view) == ("L1", "HEIGHT_SHARDED")
    shard = view.spec.memory_config.shard_spec
    assert shard.shape == (64, 32)
    assert shard.grid.num_cores() == 33
    assert [(c.x, c.y) for c in shard.cores()][-2:] == [(7, 3), (0, 4)]


def test_policy_large_tensor_goes_to_dram(device):
    """8192x8192 bf16 tiles: 4 page rows of 256 tiles per core = 2 MiB > half an L1 bank."""
    view = device.allocator.allocate_tensor((8192, 8192), "bfloat16", "tile")
    assert placement(view) == ("DRAM", "INTERLEAVED")
    assert view.spec.memory_config.shard_spec is None
    view.get_buffer().release()


def test_policy_4096_square_bf16_fits_half_l1(device):
    """4096x4096 bf16: 2 page rows x 128 tiles x 2 KiB = 512 KiB per core, under half of
    the 1,396,736-byte bank, so the documented policy keeps it in L1."""
    view = device.allocator.allocate_tensor((4096, 4096), "bfloat16", "tile")
    assert placement(view) == ("L1", "HEIGHT_SHARDED")
    assert view.spec.memory_config.shard_spec.shape == (64, 4096)
    view.get_buffer().release()


def test_policy_half_l1_bank_boundary(device):
    """A one-page-row tensor goes to L1 iff its shard is at most half an L1 bank."""
    half = device.arch.l1_bank_size * 0.5
    n = int(half // 2048)
    assert n * 2048 <= half < (n + 1) * 2048
    fits = device.allocator.allocate_tensor((32, 32 * n), "bfloat16", "tile")
    assert placement(fits) == ("L1", "HEIGHT_SHARDED")
    fits.get_buffer().release()
    # L1 has room for the bigger shard: DRAM is the policy's choice, not a fallback.
    assert device.backend.memory.l1_allocator.largest_free_block >= (n + 1) * 2048
    too_big = device.allocator.allocate_tensor((32, 32 * (n + 1)), "bfloat16", "tile")
    assert placement(too_big) == ("DRAM", "INTERLEAVED")


def test_policy_leaves_the_bottom_half_of_l1_to_circular_buffers(device):
    """Many small tensors fill only the top half of L1 banks; the next goes to DRAM, and
    a program with large circular buffers still runs beside them all."""
    arch = device.arch
    x = np.ones((32, 32), np.float32)
    tensors = [device.to_device(x, "bfloat16", "tile")]
    while placement(tensors[-1])[0] == "L1":
        tensors.append(device.to_device(x, "bfloat16", "tile"))
    assert len(tensors) > 100
    lowest = device.backend.memory.l1_allocator.lowest_allocated()
    assert lowest >= arch.l1_unreserved_base + arch.l1_bank_size // 2
    assert lowest - 2048 < arch.l1_unreserved_base + arch.l1_bank_size // 2  # the fallback was needed
    np.testing.assert_array_equal(ops.add(tensors[0], tensors[-1]).to_host(), 2 * x)
    wide = device.to_device(np.zeros((32, 32 * 64), np.float32), "bfloat16", "tile", hal.DRAM_MEMORY_CONFIG)
    assert np.allclose(ops.softmax(wide).to_host(), 1 / (32 * 64))  # 64-page circular buffers fit


def test_policy_transfer_only_usage_goes_to_dram(device):
    x = np.ones((32, 32), np.float32)
    view = device.to_device(x, "float32", "tile", usage=BU.TRANSFER)
    assert placement(view) == ("DRAM", "INTERLEAVED")
    assert device.to_device(x, "float32", "tile", usage=BU.DISPATCH_STORAGE_READ).spec.memory_config.buffer_type \
        is BufferType.L1
    np.testing.assert_array_equal(view.to_host(), x)


def test_policy_empty_tensor_goes_to_dram(device):
    view = device.to_device(np.zeros((0, 5), np.float32), "float32", "tile")
    assert placement(view) == ("DRAM", "INTERLEAVED") and view.byte_length == 0
    assert view.to_host().shape == (0, 5)


def test_explicit_memory_config_wins(device):
    x = np.ones((32, 32), np.float32)
    assert placement(device.to_device(x, "float32", "tile", hal.DRAM_MEMORY_CONFIG)) == ("DRAM", "INTERLEAVED")
    config = sharded(HS, "l1", crs(2, 2, 2, 2), (32, 32))
    view = device.to_device(x, "float32", "tile", config, usage=BU.TRANSFER)
    assert view.spec.memory_config == config
    assert sim_buffer(view).page_rows.tolist() == [2 * 8 + 2]
    # A wide tensor the policy would put in DRAM goes to L1 interleaved when asked.
    wide = device.allocator.allocate_tensor((32, 32 * 400), "bfloat16", "tile", hal.L1_MEMORY_CONFIG)
    assert placement(wide) == ("L1", "INTERLEAVED")


def test_explicit_l1_that_cannot_fit_is_resource_exhausted(device):
    stats = device.allocator.statistics
    l1_used = device.backend.memory.l1_allocator.allocated_bytes
    pages = device.arch.l1_bank_size // 2048 + 1  # one shard bigger than a whole bank
    with raises_status(SC.RESOURCE_EXHAUSTED, "does not fit"):
        device.allocator.allocate_tensor((32, 32 * pages), "bfloat16", "tile",
                                         sharded(HS, "l1", crs(0, 0, 0, 0), (32, 32 * pages)))
    with raises_status(SC.RESOURCE_EXHAUSTED, "does not fit"):
        device.allocator.allocate_tensor((32 * 64, 32 * pages), "bfloat16", "tile", hal.L1_MEMORY_CONFIG)
    assert device.allocator.statistics == stats
    assert device.backend.memory.l1_allocator.allocated_bytes == l1_used


def test_policy_falls_back_to_dram_when_l1_is_full():
    device = hal.create_device("tenstorrent://mock?arch=wormhole_b0")
    try:
        memory = device.backend.memory
        x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)  # 2 tiles: 4 KiB on one core
        assert placement(device.to_device(x, "bfloat16", "tile")) == ("L1", "HEIGHT_SHARDED")
        # Fill L1 with explicit L1 tensors until less than 4 KiB per bank is left.
        per_bank = device.arch.l1_bank_size // 2048 - 1  # leaves 2048 + (bank % 2048) bytes
        filler = device.allocator.allocate_tensor((32 * per_bank, 32 * 64), "bfloat16", "tile", hal.L1_MEMORY_CONFIG)
        assert placement(filler) == ("L1", "INTERLEAVED")
        assert memory.l1_allocator.largest_free_block < 4096
        stats = device.allocator.statistics
        view = device.to_device(x, "bfloat16", "tile")
        assert placement(view) == ("DRAM", "INTERLEAVED")
        after = device.allocator.statistics
        assert after["device_bytes_allocated"] - stats["device_bytes_allocated"] == view.spec.size == 4096
        np.testing.assert_array_equal(view.to_host(), x.astype(ml_dtypes.bfloat16))
        # An explicit L1 request now fails and changes nothing.
        with raises_status(SC.RESOURCE_EXHAUSTED):
            device.to_device(x, "bfloat16", "tile", sharded(HS, "l1", crs(0, 0, 0, 0), (32, 64)))
        assert device.allocator.statistics == after
        # Freed L1 is usable again.
        filler.get_buffer().release()
        assert placement(device.to_device(x, "bfloat16", "tile")) == ("L1", "HEIGHT_SHARDED")
    finally:
        device.close()


def test_policy_blackhole_grid_is_13_wide(blackhole):
    view = blackhole.allocator.allocate_tensor((20 * 32, 32), "float32", "tile")
    assert placement(view) == ("L1", "HEIGHT_SHARDED")
    cores = [(c.x, c.y) for c in view.spec.memory_config.shard_spec.cores()]
    assert cores == [(x, 0) for x in range(13)] + [(x, 1) for x in range(7)]
    # L1 interleaved bank 0 on blackhole: the core the 130-entry shuffle gives bank 0.
    assert l1_bank_cores(130)[0] == shuffle_tables()[130].index(0)


# --------------------------------------------------------------------------- round trips

FORMATS = ["float32", "bfloat16", "bfloat8_b", "bfloat4_b", "int32", "uint16", "uint32", "uint8"]
PLACEMENTS = ["policy", "dram_interleaved", "l1_interleaved", "l1_height", "l1_width", "l1_block", "dram_height",
              "dram_width"]


def make_config(kind: str, spec: TensorSpec, draw) -> MemoryConfig | None:
    """A valid memory config of `kind` for the (DRAM interleaved) `spec`, sizes drawn by `draw`."""
    if kind == "policy":
        return None
    if kind == "dram_interleaved":
        return hal.DRAM_MEMORY_CONFIG
    if kind == "l1_interleaved":
        return hal.L1_MEMORY_CONFIG
    tile = spec.layout is Layout.TILE
    rows_2d, width = spec.height_2d, spec.padded_width
    unit_h = 32 if tile else 1
    page_rows = rows_2d // unit_h
    orientation = draw(st.sampled_from([RM, CM]))
    if kind in ("l1_height", "dram_height"):
        limit = 12 if kind == "dram_height" else 64
        sr = draw(st.integers(-(-page_rows // limit), page_rows))
        n = -(-page_rows // sr)
        grid = crs(0, 0, n - 1, 0) if kind == "dram_height" else crs(0, 0, 7, -(-n // 8) - 1)
        return sharded(HS, "dram" if kind == "dram_height" else "l1", grid, (sr * unit_h, width),
                       RM if kind == "dram_height" else orientation)

    def shard_width(limit):
        if tile:
            cols = width // 32
            return 32 * draw(st.integers(-(-cols // limit), cols))
        divisors = [d for d in range(1, width + 1) if width % d == 0 and width // d <= limit]
        return draw(st.sampled_from(divisors))

    if kind in ("l1_width", "dram_width"):
        limit = 12 if kind == "dram_width" else 64
        sw = shard_width(limit)
        n = -(-width // sw)
        grid = crs(0, 0, n - 1, 0) if kind == "dram_width" else crs(0, 0, 7, -(-n // 8) - 1)
        return sharded(WS, "dram" if kind == "dram_width" else "l1", grid, (rows_2d, sw),
                       RM if kind == "dram_width" else orientation)
    sr = draw(st.integers(-(-page_rows // 8), page_rows))
    sw = shard_width(8)
    nsh, nsc = -(-page_rows // sr), -(-width // sw)
    gx, gy = (nsc, nsh) if orientation is RM else (nsh, nsc)
    x0, y0 = draw(st.integers(0, 8 - gx)), draw(st.integers(0, 8 - gy))
    return sharded(BS, "l1", crs(x0, y0, x0 + gx - 1, y0 + gy - 1), (sr * unit_h, sw), orientation)


def random_values(rng, shape, fmt: DataFormat) -> np.ndarray:
    if fmt.is_integer:
        info = np.iinfo(fmt.host_dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=fmt.host_dtype)
    values = (rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 5, size=shape)).astype(np.float32)
    flat = values.reshape(-1)
    if flat.size:
        specials = np.array([0.0, -0.0, 1e-40, -3e-39, 3e38, -1.5, 65504.0, 1.0 + 2**-8], np.float32)
        picks = rng.integers(0, flat.size, size=min(flat.size, 8))
        flat[picks] = specials[: picks.size]
    return values


def block_float_bound(x: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """Largest error per element: one code step 2^(E - 127 - (m - 1)) of its face row
    (16 values sharing the largest float32 exponent E; padding is 0), or a denormal."""
    m = 7 if spec.dtype is DataFormat.bfloat8_b else 3
    h, w = spec.height, spec.width
    mat = x.reshape(-1, h, w)
    pw = -(-w // 16) * 16
    padded = np.zeros((mat.shape[0], h, pw), np.float32)
    padded[:, :, :w] = mat
    exps = ((padded.view(np.uint32) >> 23) & 0xFF).astype(np.int64).reshape(mat.shape[0], h, pw // 16, 16)
    shared = exps.max(axis=-1, keepdims=True)
    step = np.ldexp(1.0, (shared - 127 - (m - 1)).astype(np.int32))
    step = np.broadcast_to(step, exps.shape).reshape(mat.shape[0], h, pw)[:, :, :w]
    return np.maximum(step, 2.0 ** -120).reshape(x.shape)


def check_round_trip(x: np.ndarray, fmt: DataFormat, back: np.ndarray, spec: TensorSpec) -> None:
    assert back.shape == x.shape
    if fmt is DataFormat.float32 or fmt.is_integer:
        assert back.dtype == fmt.host_dtype
        assert back.tobytes() == x.astype(fmt.host_dtype).tobytes()  # exact, -0 included
    elif fmt is DataFormat.bfloat16:
        assert back.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(back.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    else:
        assert back.dtype == np.float32
        error = np.abs(back.astype(np.float64) - x.astype(np.float64))
        bound = block_float_bound(x, spec)
        bad = np.argwhere(error > bound)
        assert bad.size == 0, f"{fmt.name}: error above one code step at {bad[:3].tolist()}"
        # And not trivially: the values are genuinely reproduced where the step is small.
        big = np.abs(x) > 64 * bound
        if big.any():
            assert (np.sign(back[big]) == np.sign(x[big])).all()


@st.composite
def round_trip_case(draw):
    fmt = DataFormat[draw(st.sampled_from(FORMATS))]
    layout = Layout.TILE if fmt.is_block_float else draw(st.sampled_from([Layout.TILE, Layout.ROW_MAJOR]))
    rank = draw(st.integers(1, 4))
    inner = [draw(st.integers(1, 70)) for _ in range(min(rank, 2))]
    outer = [draw(st.integers(1, 3)) for _ in range(rank - 2)]
    shape = tuple(outer + inner)
    kind = draw(st.sampled_from(PLACEMENTS))
    base = TensorSpec(shape, fmt, layout, hal.DRAM_MEMORY_CONFIG)
    config = make_config(kind, base, draw)
    seed = draw(st.integers(0, 2**32 - 1))
    return fmt, layout, shape, kind, config, seed


@settings(max_examples=int(os.environ.get("PLACEMENT_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=round_trip_case())
def test_round_trip_every_placement(device, case):
    fmt, layout, shape, kind, config, seed = case
    x = random_values(np.random.default_rng(seed), shape, fmt)
    view = device.to_device(x, fmt, layout, config)
    if config is not None:
        assert view.spec.memory_config == config
    assert view.spec.shape == shape and view.shape == list(shape)
    check_round_trip(x, fmt, view.to_host(), view.spec)
    # The bytes are the page-ordered encoding, whatever the placement.
    reference = codec.encode_tensor(host_values(x, fmt), view.spec)
    assert view.get_buffer().map_read() == reference.tobytes()
    view.get_buffer().release()


def expected_page_location(device, view, page: int) -> tuple[int, int]:
    """(storage row, address) of a page by tt-metal's rules: interleaved page i in bank
    i % N (DRAM bank, or the core the L1 shuffle gives bank i % N) at base + (i // N) *
    aligned page; sharded per the placement's page map, at base + slot * aligned page."""
    arch, spec, buf = device.arch, view.spec, sim_buffer(view)
    btype = spec.memory_config.buffer_type
    align = arch.dram_alignment if btype is BufferType.DRAM else arch.l1_alignment
    aligned = -(-spec.page_size // align) * align
    if spec.memory_config.is_sharded:
        pages = spec.memory_config.sharded_pages(spec)
        shard, slot = pages.page_map()
        core = pages.cores[int(shard[page])]
        return storage_row(arch, btype, (core.x, core.y)), buf.address + int(slot[page]) * aligned
    if btype is BufferType.DRAM:
        n = arch.dram_bank_count
        return page % n, buf.address + (page // n) * aligned
    n = arch.worker_cores
    return core_of_bank(n)[page % n], buf.address + (page // n) * aligned


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(case=round_trip_case(), data=st.data())
def test_partial_writes_land_at_page_locations(device, case, data):
    """map_write / map_read of arbitrary ranges (inside one page or across pages) agree
    with a byte reference, and every page sits at its tt-metal location."""
    fmt, layout, shape, kind, config, seed = case
    view = device.allocator.allocate_tensor(shape, fmt, layout, config)
    buffer, size, page_size = view.get_buffer(), view.spec.size, view.spec.page_size
    if size == 0:
        return
    rng = np.random.default_rng(seed)
    reference = rng.integers(0, 256, size, dtype=np.uint8)
    buffer.map_write(0, reference)
    for _ in range(6):
        if data.draw(st.booleans()):  # inside one page
            page = data.draw(st.integers(0, size // page_size - 1))
            start = data.draw(st.integers(0, page_size - 1))
            offset, length = page * page_size + start, data.draw(st.integers(0, page_size - start))
        else:
            offset = data.draw(st.integers(0, size - 1))
            length = data.draw(st.integers(0, size - offset))
        chunk = rng.integers(0, 256, length, dtype=np.uint8)
        buffer.map_write(offset, chunk)
        reference[offset:offset + length] = chunk
        read_at = data.draw(st.integers(0, size - 1))
        read_length = data.draw(st.integers(0, min(size - read_at, 2 * page_size)))
        assert buffer.map_read(read_at, read_length) == reference[read_at:read_at + read_length].tobytes()
    buf = sim_buffer(view)
    for page in range(size // page_size):
        row, at = expected_page_location(device, view, page)
        np.testing.assert_array_equal(buf.bank_bytes(row, at, page_size),
                                      reference[page * page_size:(page + 1) * page_size], err_msg=f"page {page}")
    buffer.release()


@pytest.mark.parametrize("fmt", FORMATS)
def test_bytes_identical_across_placements(device, fmt):
    """A (2, 45, 70) tensor: the buffer bytes equal tt_hal.target.conversions.encode_tensor and are the
    same for every placement; to_host agrees everywhere."""
    fmt = DataFormat[fmt]
    x = random_values(np.random.default_rng(7), (2, 45, 70), fmt)
    layouts = [Layout.TILE] if fmt.is_block_float else [Layout.TILE, Layout.ROW_MAJOR]
    for layout in layouts:
        tile = layout is Layout.TILE
        rows_2d = 2 * (64 if tile else 45)
        width = 96 if tile else 70
        configs = [None, hal.DRAM_MEMORY_CONFIG, hal.L1_MEMORY_CONFIG,
                   sharded(HS, "l1", crs(0, 0, 7, 0), (64 if tile else 12, width), CM),
                   sharded(WS, "l1", crs(0, 0, 2, 0), (rows_2d, 32)) if tile else
                   sharded(WS, "l1", crs(0, 0, 4, 0), (rows_2d, 14)),
                   sharded(BS, "l1", crs(1, 1, 3, 2), (64, 32)) if tile else
                   sharded(BS, "l1", crs(1, 1, 2, 7), (16, 35)),
                   sharded(HS, "dram", crs(0, 0, 3, 0), (32 if tile else 30, width))]
        first = None
        for config in configs:
            view = device.to_device(x, fmt, layout, config)
            data = view.get_buffer().map_read()
            assert len(data) == view.spec.size == view.byte_length
            assert data == codec.encode_tensor(host_values(x, fmt), view.spec).tobytes()
            if first is None:
                first = data, view.to_host()
                check_round_trip(x, fmt, first[1], view.spec)
            else:
                assert data == first[0], f"{layout.name} {view.spec.memory_config.describe()}"
                np.testing.assert_array_equal(np.asarray(view.to_host()).view(np.uint8),
                                              np.asarray(first[1]).view(np.uint8))


def test_tile_bytes_are_tiles_in_page_order(device):
    """Independent of the codec: a uint32 matrix constant per tile gives buffer bytes
    that are tile after tile, row-major over the (outer x padded H, padded W) matrix."""
    x = page_id_tiles(4, 3)[:100, :70].reshape(1, 100, 70).copy()  # padding -> 13 rows, 26 cols
    view = device.to_device(x, "uint32", "tile", sharded(BS, "l1", crs(0, 0, 1, 1), (64, 64)))
    words = np.frombuffer(view.get_buffer().map_read(), np.uint32).reshape(12, 1024)
    for page in range(12):
        tile = words[page]
        assert set(np.unique(tile).tolist()) <= {page + 1, 0}
        assert (tile == page + 1).sum() == min(32, 100 - 32 * (page // 3)) * min(32, 70 - 32 * (page % 3))


@pytest.mark.parametrize("via", ["command_buffer", "queue_copy"])
@pytest.mark.parametrize("target_kind", ["same_placement", "dram_interleaved", "raw_buffer"])
def test_queue_copy_of_tiled_buffer_gives_same_tensor(device, via, target_kind):
    x = random_values(np.random.default_rng(3), (3, 40, 50), DataFormat.bfloat16)
    source = device.to_device(x, "bfloat16", "tile", sharded(HS, "l1", crs(0, 0, 7, 1), (64, 64)))
    spec = source.spec
    if target_kind == "same_placement":
        target = device.allocator.allocate_tensor(x.shape, "bfloat16", "tile", spec.memory_config)
        target_buffer = target.get_buffer()
    elif target_kind == "dram_interleaved":
        target = device.allocator.allocate_tensor(x.shape, "bfloat16", "tile", hal.DRAM_MEMORY_CONFIG)
        target_buffer = target.get_buffer()
    else:
        target_buffer = device.allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, spec.size)
        target = hal.HalBufferView(target_buffer, x.shape, tensor_element_type(spec), spec=spec)
    target_buffer.map_fill(0, spec.size, b"\xff")  # the copy must overwrite every byte
    assert target_buffer.map_read(0, spec.size) != source.get_buffer().map_read()
    sem = device.create_semaphore(0)
    if via == "command_buffer":
        cb = device.create_command_buffer()
        cb.copy(source.get_buffer(), target_buffer, 0, 0, spec.size)
        cb.end()
        device.queue_execute(cb, [], [(sem, 1)])
    else:
        device.queue_copy(source.get_buffer(), target_buffer, [], [(sem, 1)], 0, 0, spec.size)
    wait(sem)
    assert target_buffer.map_read(0, spec.size) == source.get_buffer().map_read()
    back = target.to_host()
    np.testing.assert_array_equal(back.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_buffer_view_spec_must_match_shape_and_type(device):
    view = device.to_device(np.ones((40, 50), np.float32), "bfloat16", "tile")
    spec, buffer = view.spec, view.get_buffer()
    with raises_status(SC.INVALID_ARGUMENT, "shape"):
        hal.HalBufferView(buffer, (50, 40), tensor_element_type(spec), spec=spec)
    with raises_status(SC.INVALID_ARGUMENT, "element type"):
        hal.HalBufferView(buffer, (40, 50), hal.HalElementType.FLOAT_32, spec=spec)
    small = device.allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, spec.size - 1)
    with raises_status(SC.OUT_OF_RANGE, "exceeds"):
        hal.HalBufferView(small, (40, 50), tensor_element_type(spec), spec=spec)
    same = hal.HalBufferView(buffer, [40, 50], tensor_element_type(spec), spec=spec)
    assert same.byte_length == spec.size == 4 * 2048
    np.testing.assert_array_equal(same.to_host(np.float32), view.to_host(np.float32))


@pytest.mark.parametrize("dtype,element_type", [
    (np.float32, hal.HalElementType.FLOAT_32), (np.int32, hal.HalElementType.SINT_32),
    (np.uint8, hal.HalElementType.UINT_8), (ml_dtypes.bfloat16, hal.HalElementType.BFLOAT_16),
])
def test_to_host_of_dense_iree_view(device, dtype, element_type):
    x = (np.arange(3 * 5 * 7) % 200).reshape(3, 5, 7).astype(dtype)
    view = device.allocator.allocate_buffer_copy(MT.DEVICE_LOCAL, BU.DEFAULT, device, x, element_type=element_type)
    assert view.spec is None and view.shape == [3, 5, 7]
    back = view.to_host()
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, x)
    assert view.get_buffer().map_read() == x.tobytes()  # dense: row-major bytes, no tiles


def test_to_host_cast_and_bfloat16_input(device):
    x = np.array([[1.5, -2.25, 3.0e10]], np.float32).astype(ml_dtypes.bfloat16)
    view = device.to_device(x)  # bfloat16 input -> bfloat16 format, exact
    assert view.spec.dtype is DataFormat.bfloat16
    np.testing.assert_array_equal(view.to_host().view(np.uint16), x.view(np.uint16))
    as_f32 = view.to_host(np.float32)
    assert as_f32.dtype == np.float32
    np.testing.assert_array_equal(as_f32, x.astype(np.float32))


def test_scalar_and_rank_zero(device):
    x = np.array(3.25, np.float32)
    for layout in ("tile", "row_major"):
        view = device.to_device(x, "float32", layout)
        back = view.to_host()
        assert back.shape == () and back == np.float32(3.25)


def test_non_contiguous_input(device):
    x = np.arange(40 * 70, dtype=np.int32).reshape(40, 70)[::2, ::-3].T  # strided, transposed view
    for config in (None, sharded(WS, "l1", crs(0, 0, 0, 0), (32, 32))):
        view = device.to_device(x, "int32", "tile", config)
        np.testing.assert_array_equal(view.to_host(), x)


# --------------------------------------------------------------------------- bugs (fail until fixed)

@pytest.mark.parametrize("config", [sharded(HS, "l1", crs(0, 0, 1, 0), (32, 64)),
                                    sharded(BS, "dram", crs(0, 0, 1, 0), (64, 32)),
                                    hal.DRAM_MEMORY_CONFIG, hal.L1_MEMORY_CONFIG],
                         ids=["l1_height", "dram_block", "dram_interleaved", "l1_interleaved"])
def test_zero_length_access_at_end_of_buffer(device, config):
    """IREE allows a zero-length range at offset == byte_length (calculate_range accepts
    it): map_read returns b"", map_write / map_fill of nothing succeed. BUG: for sharded
    buffers tt_hal.sim.memory.SimBuffer._single_page indexes page_rows[num_pages] and raises a
    bare IndexError (interleaved buffers are fine)."""
    view = device.to_device(np.ones((64, 64), np.float32), "float32", "tile", config)
    buffer, size = view.get_buffer(), view.spec.size
    assert buffer.map_read(size, 0) == b""
    buffer.map_write(size, b"")
    buffer.map_fill(size, 0, b"\0")
    assert buffer.subspan(size, 0).map_read() == b""
    np.testing.assert_array_equal(view.to_host(), np.ones((64, 64), np.float32))


def test_empty_tensor_with_explicit_sharded_placement(device):
    """A (0, 64) tensor height-sharded in L1 is valid (0 shards <= cores; allocation
    succeeds) and must read back as an empty (0, 64) array. BUG: to_host() reads 0 bytes
    at offset 0, and SimBuffer._single_page indexes the empty page table: IndexError."""
    view = device.to_device(np.zeros((0, 64), np.float32), "float32", "tile",
                            sharded(HS, "l1", crs(0, 0, 1, 0), (32, 64)))
    assert view.spec.size == 0
    back = view.to_host()
    assert back.shape == (0, 64) and back.dtype == np.float32
