"""Reference runs: the same MLIR compiled by IREE for llvm-cpu and run on iree.runtime's
local-task driver. The model-level tests compare tt-hal's results with these.

    outputs = run_llvm_cpu(text, None, [x, w1, b1, w2, b2])
    signatures = function_signatures(text)    # {"main": ([TensorType, ...], [TensorType, ...])}
"""

from __future__ import annotations

import functools

import iree.runtime as rt
import numpy as np
from iree.compiler import ir

from hal.status import HalError, StatusCode
from tt_hal.compiler import frontend
from tt_hal.runtime.signature import TensorType, parse_type


@functools.lru_cache(maxsize=32)
def compiled(text: str) -> bytes:
    """The llvm-cpu .vmfb of `text`; tests run the same model many times."""
    return frontend.compile_llvm_cpu(text)


@functools.cache
def _config() -> rt.Config:
    # One local-task device (and its worker threads) per process, not one per run.
    return rt.Config("local-task")


def _entry(text: str, function: str | None) -> str:
    if function is not None:
        return function
    public = list(function_signatures(text))
    return public[0] if len(public) == 1 else "main"


def load_module(text: str):
    """The compiled program's functions on local-task, by name, in a context of their
    own: a program's globals persist across its calls."""
    context = rt.SystemContext(config=_config())
    vm_module = rt.VmModule.copy_buffer(context.instance, compiled(text))
    context.add_vm_module(vm_module)
    return context.modules[vm_module.name]  # module name: "module" or jit_<fn>


def load(text: str, function: str | None = None):
    """The compiled function as an iree.runtime callable (numpy in, DeviceArray(s) out)."""
    return load_module(text)[_entry(text, function)]


def host_results(value) -> list[np.ndarray]:
    """A call's results, none, one or several, iree.runtime DeviceArrays or arrays, as
    a list of host numpy arrays."""
    if value is None:
        return []
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [np.asarray(v.to_host()) if hasattr(v, "to_host") else np.asarray(v) for v in values]


def run_llvm_cpu(text: str, function: str | None, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Runs `function` (None: the only public function, else "main") of `text` on
    local-task and returns its results as host numpy arrays."""
    return host_results(load(text, function)(*inputs))


def function_signatures(text: str) -> dict[str, tuple[list, list]]:
    """{name: ([TensorType of each input], [TensorType of each result])} for each
    public func.func, in order (None for a type that is not a tensor or number)."""
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
                [parse_type(str(t)) for t in function_type.inputs], [parse_type(str(t)) for t in function_type.results])
    return signatures


def random_inputs(types: list[TensorType | None], seed: int = 0) -> list:
    """Inputs of these types: uniform(-1, 1), matrices scaled by sqrt(3 / rows) to
    unit variance along their rows, so products through them stay O(1) as a model's
    weights would; integers in [0, 4) (non-negative and small, so token ids index
    real rows of a table), booleans at random; numbers for scalar
    arguments. INVALID_ARGUMENT for a dynamic shape or a type with no values."""
    rng = np.random.default_rng(seed)
    inputs = []
    for index, t in enumerate(types):
        if t is None or not t.static:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"input {index} is {t or 'not a tensor'}: random inputs need "
                                                        f"static shapes; give the inputs")
        if t.dtype == np.bool_:
            value = rng.integers(0, 2, t.shape).astype(np.bool_)
        elif np.issubdtype(t.dtype, np.integer):
            value = rng.integers(0, 4, t.shape).astype(t.dtype)
        else:
            scale = np.sqrt(3.0 / t.shape[-2]) if len(t.shape) >= 2 else 1.0
            value = (rng.uniform(-1.0, 1.0, t.shape) * scale).astype(t.dtype)
        inputs.append(value[()].item() if t.scalar else value)  # a Python number, as iree.runtime takes it
    return inputs
