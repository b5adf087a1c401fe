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
from tt_hal.target.layout import DataFormat, Layout
from tt_hal.target.sizes import tile_count


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

    @classmethod
    def of_tiles(cls, index: int, data_format: DataFormat, num_pages: int) -> "CircularBufferConfig":
        """A circular buffer of `num_pages` pages of one `data_format` tile each."""
        return cls(index, data_format, data_format.tile_size, num_pages)

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
            validate_code(kernel.code, f"kernel {kernel.name}", kernel.processor)
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


class BindingSource(enum.IntEnum):
    """Where a stage's binding comes from."""

    DISPATCH = 0  # binding `index` of the dispatch, as bound
    TENSOR = 1  # the export's tensor `index`: device memory its executable holds


@dataclasses.dataclass(frozen=True)
class ExportTensor:
    """A tensor an export's stages share: the HAL allocates it (interleaved in DRAM,
    `layout` of `shape`: pages of `data_format` tiles, or of rows in ROW_MAJOR) when it
    prepares the executable, and writes `values` (float32 of `shape`, padding zero)
    into it; with no values it is scratch, whose contents no dispatch may rely on.
    A view (`base` not None) has no memory of its own: its tiles are those of the
    export's tile tensor `base` from page `first_page` on (a matrix of a batch one
    stage writes: a convolution's taps, tilized by one launch)."""

    shape: tuple[int, ...]
    data_format: DataFormat
    values: np.ndarray | None = dataclasses.field(default=None, compare=False)
    layout: Layout = Layout.TILE
    base: int | None = None
    first_page: int = 0

    def __post_init__(self):
        if len(self.shape) < 2 or min(self.shape) <= 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"an export tensor of shape {self.shape}: a tile tensor has "
                                                        f"rank 2 or more and no empty dimension")
        if self.values is not None and tuple(self.values.shape) != tuple(self.shape):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"an export tensor of shape {self.shape} with values of "
                                                        f"shape {self.values.shape}")
        if self.base is not None and (self.values is not None or self.layout is not Layout.TILE):
            what = "with values" if self.values is not None else "in ROW_MAJOR"
            raise HalError(StatusCode.INVALID_ARGUMENT, f"an export tensor viewing tensor {self.base} {what}: a view "
                                                        f"is of tiles and has no values of its own")

    @property
    def tiles(self) -> int:
        """Its pages in TILE layout."""
        return tile_count(self.shape)


@dataclasses.dataclass(frozen=True)
class Stage:
    """One program an export runs. A dispatch of an export runs its stages in order on
    the compute queue, each to completion before the next starts. A stage takes the
    dispatch's workgroup grid, push constants and bindings, or its own: a grid, push
    constants that are literals or the dispatch's (RuntimeArg LITERAL or CONSTANT),
    and bindings from the dispatch or the export's tensors (BindingSource, index)."""

    program: Program
    workgroup_count: tuple[int, int, int] | None = None
    constants: tuple[RuntimeArg, ...] | None = None
    bindings: tuple[tuple[BindingSource, int], ...] | None = None


@dataclasses.dataclass(frozen=True)
class Export:
    """One entry point of an executable (iree_hal_executable_export_info_t): the
    stages a dispatch of it runs, and the tensors they share."""

    name: str
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]
    stages: tuple[Stage, ...]
    tensors: tuple[ExportTensor, ...] = ()
    # An export with dynamic shapes has no stages but the MLIR of its dispatch, lowered
    # for each dispatch's push constants (tt_hal/compiler/specialize.py).
    source: str = ""

    @property
    def dynamic(self) -> bool:
        return bool(self.source) and not self.stages

    @property
    def program(self) -> Program:
        """The program of a one-stage export (the kernel library's)."""
        if len(self.stages) != 1:
            raise HalError(StatusCode.FAILED_PRECONDITION, f"export {self.name} runs {len(self.stages)} programs")
        return self.stages[0].program

    def stage_name(self, index: int) -> str:
        """Stage `index` as traces and fault reports name it: the export's name, with
        "[stage k/n]" (k counting from 1) when it has several stages."""
        return self.name if len(self.stages) == 1 else f"{self.name}[stage {index + 1}/{len(self.stages)}]"

    def dispatch_bindings(self, stage: Stage) -> list[int | None]:
        """The dispatch binding each of a stage's bindings is (None: an export tensor)."""
        if stage.bindings is None:
            return list(range(self.binding_count))
        return [index if source is BindingSource.DISPATCH else None for source, index in stage.bindings]

    @functools.cached_property
    def page_aligned_bindings(self) -> frozenset[int]:
        """The dispatch bindings that must start on a page boundary of their buffer
        because a stage's kernels address them by whole pages: their runtime args name
        the binding's page offset or page count, or its address without its byte
        offset. The others may start at any byte, as IREE's bindings do: kernels
        address them through BINDING_BYTE_OFFSET, or not at all."""
        aligned = set()
        for stage in self.stages:
            dispatch_bindings = self.dispatch_bindings(stage)
            kinds: dict[int, set[ArgKind]] = {}
            for template in stage.program.runtime_args:
                for arg in template:
                    if arg.kind in BINDING_ARGS:
                        kinds.setdefault(arg.value, set()).add(arg.kind)
            aligned.update(dispatch_bindings[b] for b, named in kinds.items() if dispatch_bindings[b] is not None and (
                named & _PAGE_ARGS or ArgKind.BINDING_ADDRESS in named and ArgKind.BINDING_BYTE_OFFSET not in named))
        return frozenset(aligned)

    def __post_init__(self):
        """INVALID_ARGUMENT for an export without stages (unless it is dynamic: its
        source and nothing else), for a view of tiles its base tensor does not hold
        (ExportTensor.base), and for a runtime arg, stage constant or stage binding
        naming a binding, push constant, tensor or workgroup dimension the export or
        stage does not have."""
        if not self.stages and not self.source:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"export {self.name} runs no program")
        if self.source and (self.stages or self.tensors):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"export {self.name} has both stages and the source of a "
                                                        f"dynamic export")
        for t, tensor in enumerate(self.tensors):
            if tensor.base is None:
                continue
            base = self.tensors[tensor.base] if 0 <= tensor.base < t else None
            if base is None or base.base is not None or base.layout is not Layout.TILE \
                    or base.data_format is not tensor.data_format \
                    or not 0 <= tensor.first_page <= base.tiles - tensor.tiles:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"export {self.name} tensor {t} views tiles [{tensor.first_page}, "
                               f"{tensor.first_page + tensor.tiles}) of tensor {tensor.base}: a view's base is an "
                               f"earlier {tensor.data_format.name} tile tensor of the export, not a view, holding them")
        for s, stage in enumerate(self.stages):
            what = f"export {self.stage_name(s)}"
            if stage.workgroup_count is not None and (
                    len(stage.workgroup_count) != 3 or min(stage.workgroup_count) < 1):
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: workgroup count {stage.workgroup_count} is not "
                                                            f"three positive counts")
            for k, arg in enumerate(stage.constants or ()):
                if arg.kind is ArgKind.CONSTANT and not 0 <= arg.value < self.constant_count or \
                        arg.kind is ArgKind.LITERAL and not 0 <= arg.value < 1 << 32 or \
                        arg.kind not in (ArgKind.CONSTANT, ArgKind.LITERAL):
                    raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: push constant {k} is {arg.kind.name} "
                                                                f"{arg.value}; a stage's push constants are uint32 "
                                                                f"literals or one of the export's "
                                                                f"{self.constant_count}")
            for k, (source, index) in enumerate(stage.bindings or ()):
                limit = self.binding_count if source is BindingSource.DISPATCH else len(self.tensors)
                if not 0 <= index < limit:
                    raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: binding {k} is {source.name} {index}, "
                                                                f"but the export has {limit}")
            limits = {ArgKind.CONSTANT: self.constant_count if stage.constants is None else len(stage.constants),
                      ArgKind.WORKGROUP_ID: 3, ArgKind.WORKGROUP_COUNT: 3,
                      **dict.fromkeys(BINDING_ARGS, self.binding_count if stage.bindings is None else
                                      len(stage.bindings))}
            for kernel, template in zip(stage.program.kernels, stage.program.runtime_args):
                for k, arg in enumerate(template):
                    limit = limits.get(arg.kind)
                    if limit is not None and not 0 <= arg.value < limit:
                        raise HalError(StatusCode.INVALID_ARGUMENT,
                                       f"{what}: kernel {kernel.name} runtime arg {k} is {arg.kind.name} "
                                       f"{arg.value}, but the {'stage' if len(self.stages) > 1 else 'export'} "
                                       f"has {limit}")
