"""Running compiled programs on a device: IREE `.vmfb` programs in iree.runtime's VM
with a `hal` module over tt-hal's HAL (system: `load_vm_flatbuffer_file`, `Config`,
`SystemContext`; hal_module; the functions' types: signature). Names load on first
use."""

from __future__ import annotations

import importlib

_EXPORTS = dict.fromkeys(("BoundModule", "Config", "FunctionInvoker", "SystemContext", "VmModule",
                          "load_vm_flatbuffer", "load_vm_flatbuffer_file", "load_vm_module"), "tt_hal.runtime.system")
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tt_hal.runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
