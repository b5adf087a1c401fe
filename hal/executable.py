"""Executables and the executable cache (`iree/hal/executable.h`,
`executable_cache.h`): .ttx files (format EXECUTABLE_FORMAT) prepared into
HalExecutables whose exports are sequences of Tensix programs (stages) and the
device tensors those share.

An export's tensors are allocated when the executable is prepared, on the cache's
device, and live as long as the executable: every dispatch of the export uses the
same memory, scratch included (a view tensor is pages of an earlier one: a subspan of
its buffer). That is safe because every dispatch runs on the
device's one compute queue (CQ0), whose programs run one after another, each to
completion (hal/device.py, queue_execute): two dispatches never run at once, so
neither sees the other's scratch half-written.
"""

from __future__ import annotations

import dataclasses
import functools

from hal.backend import Binding
from hal.buffer import HalBufferView, tensor_element_type
from hal.status import HalError, StatusCode
from tt_hal.target.layout import Layout, TensorSpec
from tt_hal.target.placement import DRAM_MEMORY_CONFIG
from tt_hal.target.program import Export
from tt_hal.target.ttx import EXECUTABLE_FORMAT, read_executable


@dataclasses.dataclass(frozen=True)
class ExportInfo:
    """iree_hal_executable_export_info_t's fields that apply here."""

    name: str
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]


class HalExecutable:
    """A prepared .ttx executable (iree_hal_executable_t): exports, each a sequence of
    Tensix programs, found by ordinal or by name, and each export's tensors, which
    are freed with the executable (once no command buffer or submission holds it)."""

    def __init__(self, exports: list[Export], tensors: list[tuple[HalBufferView, ...]], identifier: str = ""):
        self._exports = list(exports)
        self._tensors = list(tensors)  # per export, its tensors' device memory
        self.identifier = identifier
        for export, views in zip(self._exports, self._tensors):
            for t, view in enumerate(views):
                if export.tensors[t].base is None:  # a view's memory is its base's
                    view.get_buffer().allocation.owner = f"tensor {t} of export {export.name}, an executable's"
        # hal.command_buffer's lowering of its dispatches, by (ordinal, push constants,
        # binding count, name): the same for every command buffer that records one (a
        # .vmfb records its dispatches again on every call).
        self.launch_parts: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        return f"<HalExecutable {self.identifier or ''} exports={[e.name for e in self._exports]}>"

    @property
    def export_count(self) -> int:
        return len(self._exports)

    def export(self, ordinal: int) -> Export:
        if not 0 <= int(ordinal) < len(self._exports):
            raise HalError(StatusCode.OUT_OF_RANGE,
                           f"export ordinal {ordinal} out of range; the executable has {len(self._exports)} exports")
        return self._exports[int(ordinal)]

    def tensors(self, ordinal: int) -> tuple[HalBufferView, ...]:
        """The device tensors of export `ordinal` (Export.tensors), in order: the
        executable's own, freed with it; releasing or mapping one is
        FAILED_PRECONDITION (map_read reads it)."""
        self.export(ordinal)
        return self._tensors[int(ordinal)]

    def tensor_bindings(self, ordinal: int) -> tuple[Binding, ...]:
        """Export `ordinal`'s tensors as a stage binds them: each whole buffer (a view:
        its pages of its base's)."""
        return tuple(Binding(view.get_buffer().allocation.backend_buffer, view.get_buffer().byte_offset,
                             view.byte_length) for view in self.tensors(ordinal))

    @functools.cached_property
    def backend(self):
        """The backend its tensors are on (None: it has none). They are its own
        (Allocation.owner): freed with it, never alone, so that work holding the
        executable needs to hold none of them (nor check each is alive)."""
        return next((view.get_buffer().allocation.backend for views in self._tensors for view in views), None)

    @property
    def label(self) -> str:
        """Its tensors, in messages (as Allocation.label names a buffer's memory)."""
        return f"the tensors of {self!r}"

    def export_info(self, ordinal: int) -> ExportInfo:
        e = self.export(ordinal)
        return ExportInfo(e.name, e.constant_count, e.binding_count, e.workgroup_size)

    def lookup_export_by_name(self, name: str) -> int:
        for ordinal, export in enumerate(self._exports):
            if export.name == name:
                return ordinal
        raise HalError(StatusCode.NOT_FOUND, f"no export named {name!r}; exports: "
                                             f"{', '.join(e.name for e in self._exports) or 'none'}")


class HalExecutableCache:
    """Prepares executables from .ttx bytes (iree_hal_executable_cache_t); the one format
    is EXECUTABLE_FORMAT ("tenstorrent-ttx-fb")."""

    def __init__(self, device, identifier: str = "default"):
        self._device = device
        self.identifier = identifier

    def can_prepare_format(self, executable_format: str) -> bool:
        return executable_format == EXECUTABLE_FORMAT

    def prepare_executable(self, executable_format: str, executable_data, caching_mode: int = 0) -> HalExecutable:
        """A HalExecutable from .ttx bytes, its exports' tensors allocated on the device
        and their values written; NOT_FOUND for another format, INVALID_ARGUMENT for
        malformed data, RESOURCE_EXHAUSTED (naming the export and tensor) when a tensor
        does not fit."""
        if not self.can_prepare_format(executable_format):
            raise HalError(StatusCode.NOT_FOUND,
                           f"executable format {executable_format!r} is not supported; this device runs "
                           f"{EXECUTABLE_FORMAT!r}")
        exports = read_executable(executable_data)
        tensors: list[list[HalBufferView]] = []
        try:
            for export in exports:
                tensors.append([])
                for t in range(len(export.tensors)):
                    tensors[-1].append(self._allocate_tensor(export, t, tensors[-1]))
        except HalError:
            for view in (view for views in tensors for view in views):
                view.get_buffer().release()  # now, not when the error and its frames are let go of
            raise
        return HalExecutable(exports, [tuple(views) for views in tensors], self.identifier)

    def _allocate_tensor(self, export: Export, t: int, allocated: list[HalBufferView]) -> HalBufferView:
        """Tensor `t` of `export` on the device: in its layout, interleaved in DRAM; with
        values, written as HalDevice.to_device writes a tensor (padding zero); a view, its
        pages of its base, one of the tensors `allocated` before it (Export checked that
        the base holds them)."""
        tensor = export.tensors[t]
        if tensor.base is not None:
            spec = TensorSpec(tensor.shape, tensor.data_format, Layout.TILE, DRAM_MEMORY_CONFIG)
            buffer = allocated[tensor.base].get_buffer().subspan(tensor.first_page * spec.page_size, spec.size)
            return HalBufferView(buffer, spec.shape, tensor_element_type(spec), spec=spec)
        try:
            if tensor.values is None:
                return self._device.allocator.allocate_tensor(tensor.shape, tensor.data_format, tensor.layout,
                                                              DRAM_MEMORY_CONFIG)
            return self._device.to_device(tensor.values, tensor.data_format, tensor.layout, DRAM_MEMORY_CONFIG)
        except HalError as error:
            raise HalError(error.code, f"export {export.name} tensor {t} ({tensor.data_format.name} "
                                       f"{list(tensor.shape)}): {error.message}") from None
