"""Model-level differential tests: each model in examples/models, from MLIR text.

(a) the reference: IREE's llvm-cpu build of the model on iree.runtime local-task
    agrees with a float64 numpy twin of the model (written here, not from the MLIR);
(b) tt-hal: the model compiled by tt_hal.compiler.compile_vmfb and run by iree.runtime's VM
    on the simulated tenstorrent device agrees with that reference within
    tt_hal.compiler.tolerance's float32 tolerance (the .vmfb path computes in float32).
So a tt-hal failure with (a) passing points at tt_hal/compiler/ or hal/, not at the model.

Every .mlir in examples/models needs a twin in TWINS.

The models exported from PyTorch (iree-turbine) and JAX in examples/models/exports are
checked against their framework by their own scripts (they need torch and jax, which
the project does not install); here each runs its calls (examples/models/exports/calls.py)
on the tenstorrent device against llvm-cpu, in order on one loaded program (the
dynamic-shape one at several batch sizes, one of them again).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tt_hal.compiler.reference
import tt_hal.compiler.tolerance
from hal import HalError, StatusCode
from tt_hal import compiler, runtime
from tt_hal.runtime.signature import TensorType

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"
MODEL_FILES = sorted(MODELS.glob("*.mlir"))
EXPORTS = MODELS / "exports"
SEED = 0  # the same inputs for every front end of a model (mlp and mlp_stablehlo)
REFERENCE_TOLERANCE = 1e-5  # llvm-cpu f32 vs numpy f64, max abs error / max |ref|


# ---- float64 numpy twins ----------------------------------------------------------------------

def relu(x):
    return np.maximum(x, 0.0)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp(x, w1, b1, w2, b2):
    return relu(relu(x @ w1 + b1) @ w2 + b2)


def layernorm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def attention(x, wq, wk, wv, wo):
    q, k, v = x @ wq, x @ wk, x @ wv
    p = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return p @ v @ wo


def control_flow(x, w, n):
    """examples/models/control_flow.mlir from a fresh start (its running total is zero)."""
    h = x
    for _ in range(n):
        h = np.tanh(h @ w)
    y = -h if n % 2 else h
    return y, y


def quantized_mlp(x, w1, w2):
    """examples/models/quantized_mlp.mlir: int8 layers with int32 accumulation (exact in int64 here)."""
    acc1 = x.astype(np.int64) @ w1.astype(np.int64)
    q = np.clip(np.round(relu(acc1 * 0.125)), -128, 127).astype(np.int64)  # np.round: half to even
    return (q @ w2.astype(np.int64)) * 0.0625


TWINS = {
    "control_flow": control_flow,
    "quantized_mlp": quantized_mlp,
    "mlp": mlp,
    "mlp_stablehlo": mlp,
    "mlp_tosa": mlp,
    "softmax": softmax,
    "layernorm": layernorm,
    "attention": attention,
    "attention_jax": attention,
}


# ---- inputs -----------------------------------------------------------------------------------

def make_inputs(text: str, seed: int = SEED) -> list[np.ndarray]:
    """Seeded float32 inputs of @main's signature, scaled so that every intermediate is O(1):
    the first argument (the activation) ~ N(0, 1); a matrix after it is a weight
    [fan_in, fan_out] ~ U(-1, 1) * sqrt(3 / fan_in), variance 1 / fan_in, so x @ w keeps
    unit variance (attention's scores then have std ~1: a softmax that is neither flat nor
    one-hot); a vector (bias, gamma, beta) ~ U(-1, 1); an integer scalar (a trip count) 3;
    an integer tensor uniform over its type's range (+-2^15 for 32 bits)."""
    rng = np.random.default_rng(seed)
    arguments, _ = tt_hal.compiler.reference.function_signatures(text)["main"]
    inputs = []
    for i, t in enumerate(arguments):
        shape, dtype = t.shape, t.dtype
        if t.scalar:
            inputs.append(3)
            continue
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype) if dtype.itemsize <= 2 else np.iinfo(np.int16)
            value = rng.integers(info.min, info.max + 1, shape)
        elif i == 0:
            value = rng.standard_normal(shape)
        elif len(shape) == 2:
            value = rng.uniform(-1, 1, shape) * np.sqrt(3 / shape[0])
        else:
            value = rng.uniform(-1, 1, shape)
        inputs.append(value.astype(dtype))
    return inputs


def model_text(path: Path) -> str:
    assert path.stem in TWINS, f"{path.name} has no numpy twin in tests/test_models.py TWINS"
    return path.read_text()


# ---- tests ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_reference_matches_numpy(path):
    text = model_text(path)
    inputs = make_inputs(text)
    got = tt_hal.compiler.reference.run_llvm_cpu(text, None, inputs)
    want = TWINS[path.stem](*(x.astype(np.float64) if isinstance(x, np.ndarray) else x for x in inputs))
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tt_hal.compiler.tolerance.max_error(g, w) <= REFERENCE_TOLERANCE, \
            tt_hal.compiler.tolerance.report(got, list(want))


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_tt_hal_matches_reference(path):
    text = model_text(path)
    inputs = make_inputs(text)
    reference = tt_hal.compiler.reference.run_llvm_cpu(text, None, inputs)
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(text), driver="tenstorrent")
    outputs = module.main(*inputs)
    tt_hal.compiler.tolerance.check(outputs, reference, "float32")


def exported_calls() -> dict:
    spec = importlib.util.spec_from_file_location("calls", EXPORTS / "calls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CALLS


CALLS = exported_calls()


@pytest.mark.parametrize("name", list(CALLS))
def test_exported_model_matches_llvm_cpu(name):
    """Every call's every output (a stateful model's too: its globals carry over)."""
    path = EXPORTS / f"{name}.mlir"
    cpu = tt_hal.compiler.reference.load_module(path.read_text())
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(path), driver="tenstorrent")
    host_results = tt_hal.compiler.reference.host_results
    for function, args in CALLS[name]:
        tt_hal.compiler.tolerance.check(host_results(module[function](*args)), host_results(cpu[function](*args)),
                                        "float32")


@pytest.mark.parametrize("name", list(CALLS))
def test_exported_model_declares_its_signature(name):
    """Each function's argument types (None for a dynamic dim) fit its calls' arrays:
    iree-turbine's wrappers declare none, so compile_vmfb declares them from the
    source's torch types, and `tt-hal run model --random` knows what to make."""
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(EXPORTS / f"{name}.mlir"), driver="tenstorrent")
    for function, args in CALLS[name]:
        for stem in (function, f"{function}$async") if f"{function}$async" in module.function_names else (function,):
            types = module[stem].inputs
            assert len(types) == len(args), (stem, types)
            for t, a in zip(types, args):
                assert t.dtype == a.dtype and len(t.shape) == a.ndim and \
                    all(d is None or d == n for d, n in zip(t.shape, a.shape)), (stem, str(t), a.shape)
            assert module[stem].results and None not in module[stem].results, stem


def test_declared_types_of_torch_values():
    from tt_hal.compiler.frontend import declared_type

    assert declared_type("!torch.vtensor<[?,64],f32>") == "tensor<?x64xf32>"
    assert declared_type("!torch.vtensor<[2,-1,3],si64>") == "tensor<2x?x3xi64>"
    assert declared_type("!torch.vtensor<[],f32>") == "tensor<f32>"
    assert declared_type("!torch.vtensor<[4],i1>") == "tensor<4xi1>"
    assert declared_type("!torch.int") == "i64" and declared_type("tensor<3xf32>") == "tensor<3xf32>"
    assert declared_type("!torch.vtensor<[4],complex<f32>>") is None and declared_type("!torch.list<int>") is None


def test_exports_have_their_calls():
    assert {p.stem for p in EXPORTS.glob("*.mlir")} == set(CALLS)


def test_models_present():
    assert {p.stem for p in MODEL_FILES} >= {"mlp", "mlp_stablehlo", "softmax", "layernorm", "attention"}


# ---- the helpers themselves ---------------------------------------------------------------------

TWO_RESULTS = """
func.func @pair(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = stablehlo.add %a, %bb : tensor<4x8xf32>
  %p = stablehlo.multiply %a, %bb : tensor<4x8xf32>
  return %s, %p : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func private @helper(%a: tensor<2xi32>) -> tensor<2xi32> {
  return %a : tensor<2xi32>
}
"""


def test_reference_signatures_and_tuple_results():
    signatures = tt_hal.compiler.reference.function_signatures(TWO_RESULTS)
    f32 = np.dtype(np.float32)
    assert signatures == {"pair": ([TensorType((4, 8), f32), TensorType((8,), f32)],
                                   [TensorType((4, 8), f32), TensorType((4, 8), f32)])}
    a, b = np.arange(32, dtype=np.float32).reshape(4, 8), np.linspace(-1, 1, 8, dtype=np.float32)
    s, p = tt_hal.compiler.reference.run_llvm_cpu(TWO_RESULTS, None, [a, b])  # the single public function
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)


def test_tolerance_check():
    ref = np.array([[1.0, -2.0], [0.5, 4.0]], np.float32)
    assert tt_hal.compiler.tolerance.max_error(ref + 0.04, ref) == pytest.approx(0.01)
    tt_hal.compiler.tolerance.check(ref + 0.02, [ref], "float32")  # 0.005 of the scale 4
    tt_hal.compiler.tolerance.check((ref, ref), [ref, ref], "bfloat16")
    with pytest.raises(AssertionError, match=r"outputs \[1\].*\n.*\noutput 1 \[2, 2\]: max abs err 0\.4"):
        tt_hal.compiler.tolerance.check((ref, ref + 0.4), [ref, ref], "bfloat16")
    with pytest.raises(AssertionError, match="shape"):
        tt_hal.compiler.tolerance.check(ref[:1], [ref], "bfloat16")
    assert tt_hal.compiler.tolerance.max_error(np.full(2, np.nan), np.zeros(2)) == float("inf")
    assert "PCC 1.000000" in tt_hal.compiler.tolerance.report([ref], [ref])


def test_random_inputs_of_each_kind():
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    ids, flags, scale, w = tt_hal.compiler.reference.random_inputs(
        [TensorType((64,), i32), TensorType((5,), np.dtype(np.bool_)), TensorType((), f32, scalar=True),
         TensorType((300, 4), f32)], seed=3)
    assert ids.dtype == i32 and ids.shape == (64,) and ids.min() >= 0 and ids.max() < 4  # rows of any table
    assert flags.dtype == np.bool_ and flags.shape == (5,)
    assert isinstance(scale, float)
    assert w.shape == (300, 4) and np.abs(w).max() <= np.sqrt(3 / 300)
    with pytest.raises(HalError) as info:
        tt_hal.compiler.reference.random_inputs([TensorType((None, 4), f32)])
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "static shapes" in info.value.message
