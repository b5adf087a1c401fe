"""Reference runs: the same MLIR compiled by IREE for llvm-cpu and run on iree.runtime's
local-task driver. The model-level tests compare tt-hal's results with these.

    outputs = run_llvm_cpu(text, None, [x, w1, b1, w2, b2])
    signatures = function_signatures(text)    # {"main": ([(shape, dtype), ...], [...])}
"""

from __future__ import annotations

import functools

import iree.runtime as rt
import ml_dtypes
import numpy as np
from iree.compiler import ir

from tt_hal.compiler import frontend

# MLIR element type -> numpy dtype, for the types models use.
_DTYPES = {
    "f64": np.dtype(np.float64), "f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "i64": np.dtype(np.int64), "i32": np.dtype(np.int32), "i16": np.dtype(np.int16),
    "i8": np.dtype(np.int8), "i1": np.dtype(np.bool_),
}


@functools.lru_cache(maxsize=32)
def compiled(text: str) -> bytes:
    """The llvm-cpu .vmfb of `text`; tests run the same model many times."""
    return frontend.compile_vmfb(text)


@functools.cache
def _config() -> rt.Config:
    # One local-task device (and its worker threads) per process, not one per run.
    return rt.Config("local-task")


def _entry(text: str, function: str | None) -> str:
    if function is not None:
        return function
    public = list(function_signatures(text))
    return public[0] if len(public) == 1 else "main"


def load(text: str, function: str | None = None):
    """The compiled function as an iree.runtime callable (numpy in, DeviceArray(s) out)."""
    context = rt.SystemContext(config=_config())
    vm_module = rt.VmModule.copy_buffer(context.instance, compiled(text))
    context.add_vm_module(vm_module)
    return context.modules[vm_module.name][_entry(text, function)]  # module name: "module" or jit_<fn>


def run_llvm_cpu(text: str, function: str | None, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Runs `function` (None: the only public function, else "main") of `text` on
    local-task and returns its results as host numpy arrays."""
    results = load(text, function)(*inputs)
    if results is None:
        return []
    if not isinstance(results, (tuple, list)):
        results = (results,)
    return [np.asarray(r.to_host()) for r in results]


def _tensor(t) -> tuple[tuple[int, ...], np.dtype]:
    if isinstance(t, ir.RankedTensorType):
        if any(t.is_dynamic_dim(i) for i in range(t.rank)):
            raise ValueError(f"dynamic shape {t}: give the inputs explicitly")
        return tuple(t.shape), _DTYPES[str(t.element_type)]
    return (), _DTYPES[str(t)]  # a scalar argument


def function_signatures(text: str) -> dict[str, tuple[list, list]]:
    """{name: ([(shape, dtype) of each input], [(shape, dtype) of each result])} for
    each public func.func, in order."""
    signatures = {}
    with ir.Context():
        module = ir.Module.parse(text)
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                continue
            if "sym_visibility" in op.attributes and op.attributes["sym_visibility"].value != "public":
                continue  # JAX's helpers (`func.func private @relu`)
            function_type = op.attributes["function_type"].value
            signatures[op.attributes["sym_name"].value] = (
                [_tensor(t) for t in function_type.inputs], [_tensor(t) for t in function_type.results])
    return signatures


def random_inputs(signature, seed: int = 0) -> list[np.ndarray]:
    """Inputs for [(shape, dtype)]: uniform(-1, 1), matrices scaled by sqrt(3 / rows)
    to unit variance along their rows, so products through them stay O(1) as a
    model's weights would."""
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1.0, 1.0, shape) * (np.sqrt(3.0 / shape[-2]) if len(shape) >= 2 else 1.0)).astype(dtype)
            for shape, dtype in signature]
