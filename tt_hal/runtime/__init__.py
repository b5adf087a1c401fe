"""Running compiled programs on a device: .ttm modules (module: `load_module`) and
the `tt` IREE VM module (vm_module). Names load on first use."""

from __future__ import annotations

import importlib

_EXPORTS = dict.fromkeys(("HalModule", "HalModuleFunction", "load_module"), "tt_hal.runtime.module")
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tt_hal.runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
