"""Chip presets. Sizes from tt-metal / tt-umd (see ../shared/FACTS.md, 'Chips and memory').

The reserved L1 base and L1_SMALL depend on firmware build and device options, so
they are configuration: `ArchSpec.with_options(l1_unreserved_base=...)`.
"""

from __future__ import annotations

import dataclasses

from hal.status import HalError, StatusCode

GiB = 1 << 30


@dataclasses.dataclass(frozen=True)
class ArchSpec:
    name: str
    grid_x: int  # worker columns
    grid_y: int  # worker rows
    l1_size: int  # bytes of L1 per worker core
    dram_bank_count: int
    dram_bank_size: int
    dram_alignment: int  # DRAM read alignment (bytes)
    l1_alignment: int = 16
    # First L1 byte not used by firmware, mailboxes and kernel config. Approximate:
    # the real value moves with every firmware release.
    l1_unreserved_base: int = 100 * 1024
    l1_small_size: int = 0  # CreateDevice(l1_small_size=...): carved from the top of L1
    max_hw_cqs: int = 2

    def __post_init__(self):
        if self.l1_unreserved_base < 0 or self.l1_small_size < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{self.name}: l1_unreserved_base and l1_small_size must not be negative")
        if self.l1_bank_size <= 0:
            raise HalError(
                StatusCode.INVALID_ARGUMENT,
                f"{self.name}: l1_unreserved_base {self.l1_unreserved_base} + l1_small_size {self.l1_small_size} "
                f"leave no L1 for buffers (L1 is {self.l1_size} bytes per core)",
            )

    @property
    def worker_cores(self) -> int:
        return self.grid_x * self.grid_y

    @property
    def dram_size(self) -> int:
        return self.dram_bank_count * self.dram_bank_size

    @property
    def l1_bank_size(self) -> int:
        """Bytes of each core's L1 the allocator may hand out."""
        return self.l1_size - self.l1_unreserved_base - self.l1_small_size

    def with_options(self, **changes) -> "ArchSpec":
        return dataclasses.replace(self, **changes)


ARCHS = {
    "wormhole_b0": ArchSpec(
        name="wormhole_b0", grid_x=8, grid_y=8, l1_size=1_499_136,
        dram_bank_count=12, dram_bank_size=1 * GiB, dram_alignment=32,
    ),
    "blackhole_p150": ArchSpec(
        name="blackhole_p150", grid_x=13, grid_y=10, l1_size=1_572_864,
        dram_bank_count=8, dram_bank_size=4_278_190_080, dram_alignment=64,
    ),
    # 120 worker cores (11x10) is inferred from the p100a's 7-bank configuration.
    "blackhole_p100": ArchSpec(
        name="blackhole_p100", grid_x=11, grid_y=10, l1_size=1_572_864,
        dram_bank_count=7, dram_bank_size=4_278_190_080, dram_alignment=64,
    ),
}
ARCHS["n150"] = ARCHS["wormhole_b0"]
ARCHS["p150"] = ARCHS["blackhole_p150"]
ARCHS["p100"] = ARCHS["blackhole_p100"]

DEFAULT_ARCH = "wormhole_b0"


def get_arch(name: str) -> ArchSpec:
    try:
        return ARCHS[name]
    except KeyError:
        raise HalError(
            StatusCode.INVALID_ARGUMENT,
            f"unknown arch {name!r}; known: {', '.join(sorted(ARCHS))}",
        ) from None
