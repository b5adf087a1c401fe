"""A Tensix program: what one export of a .ttx executable runs on each core
(tt-metal's Program: CreateCircularBuffer, CreateKernel, SetRuntimeArgs): kernels
(ISA code for a processor, with compile-time args and a compute config), circular
buffers and runtime-arg templates.

Every core a dispatch uses runs the same kernels over its own circular buffers.
Workgroup w (x fastest over the dispatch grid) runs on core w % cores, row-major
over the worker grid; a core with several workgroups runs them one after another.
Each kernel's runtime args come from `RuntimeArg` templates, filled per workgroup
from the dispatch's bindings, push constants and workgroup id.
"""

from __future__ import annotations

import dataclasses
import enum
import functools

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.isa import (
    MAX_RUNTIME_ARGS,
    NUM_CIRCULAR_BUFFERS,
    MathFidelity,
    Processor,
    disassemble,
    validate_code,
)
from tt_hal.target.layout import DataFormat


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """ComputeConfig: math fidelity, fp32 Dst accumulation, approximate SFPU."""

    math_fidelity: MathFidelity = MathFidelity.HiFi4
    fp32_dest_acc_en: bool = False
    math_approx_mode: bool = False
    dst_full_sync_en: bool = False

    def dst_capacity(self) -> int:
        """Dst tiles a kernel may use between acquire and release."""
        tiles = 16 if self.dst_full_sync_en else 8
        return tiles // 2 if self.fp32_dest_acc_en else tiles


@dataclasses.dataclass(frozen=True)
class Kernel:
    name: str
    processor: Processor
    code: np.ndarray  # int64 (n, WIDTH)
    compile_args: tuple[int, ...] = ()
    config: KernelConfig = KernelConfig()
    register_names: tuple = dataclasses.field(default=(), compare=False)  # per row: {register: name}

    def disassemble(self) -> str:
        return disassemble(self.code, self.register_names, title=f"{self.name} ({self.processor.name})")


@dataclasses.dataclass(frozen=True)
class CircularBufferConfig:
    """CircularBufferConfig(total_size, {index: format}).set_page_size(index, page_size)."""

    index: int
    data_format: DataFormat
    page_size: int
    num_pages: int

    @property
    def total_size(self) -> int:
        return self.page_size * self.num_pages


class ArgKind(enum.IntEnum):
    LITERAL = 0  # value
    BINDING_ADDRESS = 1  # base address of binding `value`'s buffer
    BINDING_PAGE_OFFSET = 2  # binding offset / the buffer's page size
    BINDING_PAGES = 3  # binding length / page size, rounded up
    CONSTANT = 4  # push constant `value` (uint32)
    WORKGROUP_ID = 5  # dimension `value`
    WORKGROUP_COUNT = 6  # dimension `value`
    BINDING_IS_DRAM = 7  # 1 if binding `value`'s buffer is in DRAM, 0 for L1
    BINDING_BYTE_OFFSET = 8  # binding offset in bytes (IREE's bindings start at any byte)
    BINDING_PAGE_SIZE = 9  # the buffer's page size: NoC byte ranges stop at its page boundaries


BINDING_ARGS = (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_PAGE_OFFSET, ArgKind.BINDING_PAGES, ArgKind.BINDING_IS_DRAM,
                ArgKind.BINDING_BYTE_OFFSET, ArgKind.BINDING_PAGE_SIZE)  # kinds whose value names a binding
_PAGE_ARGS = frozenset((ArgKind.BINDING_PAGE_OFFSET, ArgKind.BINDING_PAGES))


@dataclasses.dataclass(frozen=True)
class RuntimeArg:
    kind: ArgKind
    value: int = 0


@dataclasses.dataclass(frozen=True)
class Program:
    circular_buffers: tuple[CircularBufferConfig, ...]
    kernels: tuple[Kernel, ...]  # at most one per processor
    runtime_args: tuple[tuple[RuntimeArg, ...], ...]  # per kernel, same order

    def __post_init__(self):
        where = "program"
        seen = set()
        for cb in self.circular_buffers:
            if not 0 <= cb.index < NUM_CIRCULAR_BUFFERS or cb.index in seen:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: circular buffer index {cb.index} is out of "
                                                            f"range or repeated")
            if cb.page_size <= 0 or cb.num_pages <= 0:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: circular buffer c_{cb.index} needs a positive "
                                                            f"page size and page count")
            seen.add(cb.index)
        processors = [k.processor for k in self.kernels]
        if len(set(processors)) != len(processors):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: two kernels on one processor")
        if len(self.runtime_args) != len(self.kernels):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: one runtime-args template per kernel expected")
        for kernel, args in zip(self.kernels, self.runtime_args):
            validate_code(kernel.code, f"kernel {kernel.name}")
            if len(args) > MAX_RUNTIME_ARGS:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"kernel {kernel.name}: {len(args)} runtime args; the hardware allows "
                               f"{MAX_RUNTIME_ARGS} per core")

    def kernel(self, processor: Processor) -> Kernel | None:
        for kernel in self.kernels:
            if kernel.processor == processor:
                return kernel
        return None

    def circular_buffer(self, index: int) -> CircularBufferConfig | None:
        for cb in self.circular_buffers:
            if cb.index == index:
                return cb
        return None


@dataclasses.dataclass(frozen=True)
class Export:
    """One entry point of an executable (iree_hal_executable_export_info_t)."""

    name: str
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]
    program: Program

    @functools.cached_property
    def page_aligned_bindings(self) -> frozenset[int]:
        """The bindings that must start on a page boundary of their buffer because the
        kernels address them by whole pages: their runtime args name the binding's page
        offset or page count, or its address without its byte offset. The others may
        start at any byte, as IREE's bindings do: kernels address them through
        BINDING_BYTE_OFFSET, or not at all."""
        kinds: dict[int, set[ArgKind]] = {}
        for template in self.program.runtime_args:
            for arg in template:
                if arg.kind in BINDING_ARGS:
                    kinds.setdefault(arg.value, set()).add(arg.kind)
        return frozenset(binding for binding, named in kinds.items() if named & _PAGE_ARGS or (
            ArgKind.BINDING_ADDRESS in named and ArgKind.BINDING_BYTE_OFFSET not in named))

    def __post_init__(self):
        """INVALID_ARGUMENT for a runtime arg naming a binding, push constant or
        workgroup dimension the export does not have."""
        limits = {ArgKind.CONSTANT: self.constant_count, ArgKind.WORKGROUP_ID: 3, ArgKind.WORKGROUP_COUNT: 3,
                  **dict.fromkeys(BINDING_ARGS, self.binding_count)}
        for kernel, template in zip(self.program.kernels, self.program.runtime_args):
            for k, arg in enumerate(template):
                limit = limits.get(arg.kind)
                if limit is not None and not 0 <= arg.value < limit:
                    raise HalError(StatusCode.INVALID_ARGUMENT,
                                   f"export {self.name}: kernel {kernel.name} runtime arg {k} is {arg.kind.name} "
                                   f"{arg.value}, but the export has {limit}")
