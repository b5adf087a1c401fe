"""Executables and the executable cache (`iree/hal/executable.h`,
`executable_cache.h`): .ttx files (format EXECUTABLE_FORMAT) prepared into
HalExecutables whose exports are Tensix programs.
"""

from __future__ import annotations

import dataclasses

from hal.status import HalError, StatusCode
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
    """A prepared .ttx executable (iree_hal_executable_t): exports, each a Tensix program,
    found by ordinal or by name."""

    def __init__(self, exports: list[Export], identifier: str = ""):
        self._exports = list(exports)
        self.identifier = identifier

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
        """A HalExecutable from .ttx bytes; NOT_FOUND for another format,
        INVALID_ARGUMENT for malformed data."""
        if not self.can_prepare_format(executable_format):
            raise HalError(StatusCode.NOT_FOUND,
                           f"executable format {executable_format!r} is not supported; this device runs "
                           f"{EXECUTABLE_FORMAT!r}")
        return HalExecutable(read_executable(executable_data), self.identifier)
