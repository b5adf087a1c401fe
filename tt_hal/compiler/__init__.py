"""The compiler bridge: MLIR (StableHLO, linalg on tensors, TOSA) -> IREE as the front
end -> Tensix kernels and a host program, in one module file (.ttm) that
`tt_hal.runtime.load_module` runs.

    import hal
    from tt_hal import compiler, runtime
    ttm = compiler.compile_module("mlp.mlir")
    module = runtime.load_module(ttm, hal.create_device("tenstorrent"))
    y = module.main(x, w1, b1, w2, b2)

`compile_module` loads on first use: importing the package does not load IREE's compiler.
"""

from __future__ import annotations

import importlib

_EXPORTS = dict.fromkeys(("DATA_FORMATS", "compile_module"), "tt_hal.compiler.api")
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tt_hal.compiler' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
