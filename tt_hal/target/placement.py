"""Where a tensor's pages live: ttnn's MemoryConfig, ShardSpec and core ranges.

INTERLEAVED spreads pages round-robin over the banks (DRAM banks, or one L1 bank
per worker core). HEIGHT/WIDTH/BLOCK_SHARDED cut the folded 2D tensor into
shards of `shard_spec.shape` elements and give shard k, enumerated row-major over
the shards, to the k-th core of the shard grid (cores listed row-major, or
column-major for COL_MAJOR orientation); partial last shards are padded. See
../shared/FACTS.md 'Chips and memory'.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Iterable

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.sizes import ceil_div


class BufferType(enum.Enum):
    """tt-metal's BufferType: where a buffer's pages live, DRAM banks, worker-core L1,
    or host memory the device reaches over PCIe (not for tensors)."""

    DRAM = "dram"
    L1 = "l1"
    SYSTEM_MEMORY = "system_memory"


class TensorMemoryLayout(enum.IntEnum):
    """tt-metal's values (1 was SINGLE_BANK, now gone)."""

    INTERLEAVED = 0
    HEIGHT_SHARDED = 2
    WIDTH_SHARDED = 3
    BLOCK_SHARDED = 4


class ShardOrientation(enum.IntEnum):
    """ttnn.ShardOrientation: shards go to the grid's cores row by row, or column by column."""

    ROW_MAJOR = 0
    COL_MAJOR = 1


@dataclasses.dataclass(frozen=True, order=True)
class CoreCoord:
    """A worker core in logical coordinates (x = column, y = row); for DRAM sharding,
    x is the DRAM bank and y is 0."""

    x: int
    y: int

    def __repr__(self) -> str:
        return f"({self.x},{self.y})"


@dataclasses.dataclass(frozen=True)
class CoreRange:
    """The rectangle of cores from `start` to `end`, both included."""

    start: CoreCoord
    end: CoreCoord

    def __post_init__(self):
        object.__setattr__(self, "start", _coord(self.start))
        object.__setattr__(self, "end", _coord(self.end))
        if self.start.x > self.end.x or self.start.y > self.end.y or self.start.x < 0 or self.start.y < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"core range {self} is empty or negative")

    def __repr__(self) -> str:
        return f"[{self.start!r}-{self.end!r}]"

    @property
    def grid_size(self) -> tuple[int, int]:
        """(columns, rows)."""
        return self.end.x - self.start.x + 1, self.end.y - self.start.y + 1

    def cores(self, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR) -> list[CoreCoord]:
        xs = range(self.start.x, self.end.x + 1)
        ys = range(self.start.y, self.end.y + 1)
        if orientation is ShardOrientation.ROW_MAJOR:
            return [CoreCoord(x, y) for y in ys for x in xs]
        return [CoreCoord(x, y) for x in xs for y in ys]


@dataclasses.dataclass(frozen=True)
class CoreRangeSet:
    """Disjoint core ranges; cores are enumerated range by range."""

    ranges: tuple[CoreRange, ...]

    def __init__(self, ranges: CoreRange | Iterable[CoreRange]):
        if isinstance(ranges, CoreRange):
            ranges = (ranges,)
        ranges = tuple(r if isinstance(r, CoreRange) else CoreRange(*r) for r in ranges)
        if not ranges:
            raise HalError(StatusCode.INVALID_ARGUMENT, "a core range set needs at least one core range")
        seen: set[CoreCoord] = set()
        for r in ranges:
            cores = set(r.cores())
            if seen & cores:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"core ranges overlap at {sorted(seen & cores)[0]!r}")
            seen |= cores
        object.__setattr__(self, "ranges", ranges)

    def __repr__(self) -> str:
        return "{" + ", ".join(map(repr, self.ranges)) + "}"

    def num_cores(self) -> int:
        return sum(r.grid_size[0] * r.grid_size[1] for r in self.ranges)

    def cores(self, orientation: ShardOrientation = ShardOrientation.ROW_MAJOR) -> list[CoreCoord]:
        return [core for r in self.ranges for core in r.cores(orientation)]


def _coord(value) -> CoreCoord:
    return value if isinstance(value, CoreCoord) else CoreCoord(*value)


def num_cores_to_core_range_set(num_cores: int, grid_x: int) -> CoreRangeSet:
    """The first `num_cores` cores of a grid `grid_x` wide, row-major (ttnn's
    num_cores_to_corerangeset): full rows, then a partial row."""
    full_rows, rest = divmod(num_cores, grid_x)
    ranges = []
    if full_rows:
        ranges.append(CoreRange(CoreCoord(0, 0), CoreCoord(grid_x - 1, full_rows - 1)))
    if rest:
        ranges.append(CoreRange(CoreCoord(0, full_rows), CoreCoord(rest - 1, full_rows)))
    return CoreRangeSet(ranges)


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """Shards of `shape` = [height, width] elements of the folded 2D tensor, on `grid`."""

    grid: CoreRangeSet
    shape: tuple[int, int]
    orientation: ShardOrientation = ShardOrientation.ROW_MAJOR

    def __post_init__(self):
        if not isinstance(self.grid, CoreRangeSet):
            object.__setattr__(self, "grid", CoreRangeSet(self.grid))
        shape = tuple(int(d) for d in self.shape)
        if len(shape) != 2 or min(shape) <= 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"shard shape {list(self.shape)} must be two positive sizes")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "orientation", ShardOrientation(self.orientation))

    def cores(self) -> list[CoreCoord]:
        return self.grid.cores(self.orientation)


@dataclasses.dataclass(frozen=True)
class ShardedPages:
    """A sharded buffer as the backend sees it: a grid of pages cut into shards of
    `shard_shape` pages; shard k (row-major over the shards) lives on `cores[k]`."""

    page_grid: tuple[int, int]
    shard_shape: tuple[int, int]
    cores: tuple[CoreCoord, ...]
    grid_cores: tuple[CoreCoord, ...]  # every core of the shard spec's grid

    @property
    def shard_grid(self) -> tuple[int, int]:
        return ceil_div(self.page_grid[0], self.shard_shape[0]), ceil_div(self.page_grid[1], self.shard_shape[1])

    @property
    def pages_per_shard(self) -> int:
        return self.shard_shape[0] * self.shard_shape[1]

    def page_map(self) -> tuple[np.ndarray, np.ndarray]:
        """(shard, slot) of every page in page order: page (r, c) is in shard
        (r // sh, c // sw) at slot (r % sh) * sw + c % sw of that shard."""
        rows, cols = np.divmod(np.arange(self.page_grid[0] * self.page_grid[1], dtype=np.int64), self.page_grid[1])
        sh, sw = self.shard_shape
        shard = (rows // sh) * self.shard_grid[1] + cols // sw
        slot = (rows % sh) * sw + cols % sw
        return shard, slot


@dataclasses.dataclass(frozen=True)
class MemoryConfig:
    """ttnn.MemoryConfig: memory layout, buffer type and (when sharded) shard spec."""

    memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    buffer_type: BufferType = BufferType.DRAM
    shard_spec: ShardSpec | None = None

    def __post_init__(self):
        object.__setattr__(self, "memory_layout", _parse(TensorMemoryLayout, self.memory_layout))
        object.__setattr__(self, "buffer_type", _parse(BufferType, self.buffer_type))
        if self.buffer_type is BufferType.SYSTEM_MEMORY:
            raise HalError(StatusCode.INVALID_ARGUMENT, "a device tensor lives in DRAM or L1, not in SYSTEM_MEMORY")
        sharded = self.memory_layout is not TensorMemoryLayout.INTERLEAVED
        if sharded and self.shard_spec is None:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{self.memory_layout.name} needs a shard_spec")
        if not sharded and self.shard_spec is not None:
            raise HalError(StatusCode.INVALID_ARGUMENT, "an INTERLEAVED memory config takes no shard_spec")

    @property
    def is_sharded(self) -> bool:
        return self.shard_spec is not None

    def describe(self) -> str:
        text = f"{self.buffer_type.name} {self.memory_layout.name}"
        if self.shard_spec is not None:
            s = self.shard_spec
            text += f" shards {list(s.shape)} on {s.grid!r} {s.orientation.name}"
        return text

    def validate_for(self, spec) -> ShardedPages | None:
        """INVALID_ARGUMENT when this placement cannot hold the tensor `spec`
        (a tt_hal.target.layout.TensorSpec), else its sharded pages (None: interleaved).
        Fit within the chip is checked at allocation."""
        if self.shard_spec is None:
            return None
        shard = self.shard_spec
        where = f"{self.memory_layout.name} of a {list(spec.shape)} {spec.layout.name} tensor " \
                f"(folded to {spec.height_2d}x{spec.padded_width}) in shards of {list(shard.shape)}"
        page_rows, page_cols = spec.page_shape
        if shard.shape[0] % page_rows or shard.shape[1] % page_cols:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{where}: the shard shape must be a multiple of the page shape {page_rows}x{page_cols}")
        if spec.padded_width % page_cols:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{where}: the tensor width must be a multiple of the shard width for ROW_MAJOR sharding")
        if self.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED and shard.shape[1] != spec.padded_width:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{where}: height sharding needs the shard width to equal the tensor width "
                           f"{spec.padded_width}")
        if self.memory_layout is TensorMemoryLayout.WIDTH_SHARDED and shard.shape[0] != spec.height_2d:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{where}: width sharding needs the shard height to equal the tensor height "
                           f"{spec.height_2d}")
        pages = self.sharded_pages(spec)
        shards_y, shards_x = pages.shard_grid
        if shards_y * shards_x > shard.grid.num_cores():
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{where}: {shards_y * shards_x} shards but only {shard.grid.num_cores()} cores in "
                           f"{shard.grid!r}")
        if self.memory_layout is TensorMemoryLayout.BLOCK_SHARDED:
            if len(shard.grid.ranges) != 1:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: block sharding needs one rectangular core "
                                                            f"range, got {shard.grid!r}")
            columns, rows = shard.grid.ranges[0].grid_size
            if shard.orientation is ShardOrientation.COL_MAJOR:
                columns, rows = rows, columns
            if shards_x > columns or shards_y > rows:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"{where}: a {shards_y}x{shards_x} grid of shards does not fit the {rows}x{columns} "
                               f"{shard.orientation.name} core grid")
        return pages

    def sharded_pages(self, spec) -> ShardedPages:
        shard = self.shard_spec
        page_rows, page_cols = spec.page_shape
        cores = shard.cores()
        if self.memory_layout is TensorMemoryLayout.BLOCK_SHARDED:
            cores = _block_cores(shard, spec, page_rows, page_cols)
        return ShardedPages(spec.page_grid, (shard.shape[0] // page_rows, shard.shape[1] // page_cols), tuple(cores),
                            tuple(shard.grid.cores()))


def _block_cores(shard: ShardSpec, spec, page_rows: int, page_cols: int) -> list[CoreCoord]:
    """Block shard (i, j) lives on the core in row i, column j of the grid (transposed
    for COL_MAJOR), whatever the grid's width: cores listed in shard order."""
    box = shard.grid.ranges[0]
    shards_y = ceil_div(spec.page_grid[0], (shard.shape[0] // page_rows))
    shards_x = ceil_div(spec.page_grid[1], (shard.shape[1] // page_cols))
    if shard.orientation is ShardOrientation.ROW_MAJOR:
        return [CoreCoord(box.start.x + j, box.start.y + i) for i in range(shards_y) for j in range(shards_x)]
    return [CoreCoord(box.start.x + i, box.start.y + j) for i in range(shards_y) for j in range(shards_x)]


def _parse(enum_type, value):
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        for member in enum_type:
            if value.upper() in (member.name, str(member.value).upper()):
                return member
    try:
        return enum_type(value)
    except ValueError:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"unknown {enum_type.__name__} {value!r}; expected one of "
                       f"{', '.join(m.name for m in enum_type)}") from None


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)

