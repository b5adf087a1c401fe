"""The compiler: MLIR (StableHLO, linalg on tensors, TOSA, torch) -> a real IREE `.vmfb`
for the tenstorrent device: iree-base-compiler runs phase by phase, each dispatch
becomes a staged Tensix export of a `.ttx` (dispatch.py), IREE's host code stays IREE's
(vmfb.py). `tt_hal.runtime.load_vm_flatbuffer` runs it in iree.runtime's VM.

    from tt_hal import compiler, runtime
    vmfb = compiler.compile_vmfb("mlp.mlir")
    module = runtime.load_vm_flatbuffer(vmfb, driver="tenstorrent")
    y = module.main(x, w1, b1, w2, b2)

`compile_vmfb` loads on first use: importing the package does not load IREE's compiler.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"compile_vmfb": "tt_hal.compiler.vmfb"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tt_hal.compiler' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
