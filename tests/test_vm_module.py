"""The IREE VM module `tt` (tt_hal/runtime/vm_module.py): programs compiled by IREE for the CPU
and run by iree.runtime (local-task) call ops on the simulated tenstorrent device,
in the sync and the coarse-fences form; errors surface as exceptions naming the op,
and a failing async call fails its signal fence instead of leaving it unsignalled.

Tolerances (values in bfloat16 on the device, float64 numpy references; measured
with the seeds below, bounds chosen with 2.5-4x margin):
  matmul (64, K) @ (K, 96), U(-1, 1), K = 64..256: max abs error <= 0.02 * max|ref|
      (measured 0.0037-0.0067 * max|ref|: bf16 rounding of inputs and output; grows with K).
  softmax (64, 100) of N(0, 1) * 2: max abs error <= 0.02 * max(ref) (measured
      0.0055; the kernel's own bound is test_ops_library.softmax_bound), rows sum to
      1 within 0.02 (measured 0.008).
  layernorm (64, 100) of N(0, 1) * 2, gamma U(0.5, 1.5), beta U(-0.5, 0.5): max abs
      error <= 0.025 * max|ref| (measured 0.0076; zero-mean rows: an offset mean
      costs more, see test_ops_library.norm_bound).
  add, mul, relu, exp of U(-2, 2): <= 0.01 (exp 0.02) * max|ref| (measured 0.0039,
      0.0050, 0.0020, 0.0054).
"""

import threading
import time

import iree.runtime as rt
import numpy as np
import pytest

from tt_hal.compiler.frontend import compile_vmfb
from tt_hal.runtime.vm_module import create_tt_module

DEADLINE_S = 120  # a call still running after this has hung (calls take < 1 s; the machine is shared)
DELAY_S = 0.3     # how long after an async call a thread signals its wait fence


@pytest.fixture(scope="module")
def config():
    return rt.Config("local-task")


@pytest.fixture(scope="module")
def tt(config, device):
    return create_tt_module(config.vm_instance, device, iree_device=config.device)


@pytest.fixture(scope="module")
def direct(config, tt):
    """A context holding only `tt`, to call its functions from Python."""
    return rt.VmContext(config.vm_instance, [tt])


def within(fn, seconds=DEADLINE_S):
    """fn()'s result or exception, or a test failure if it has not returned in time."""
    outcome = {}

    def run():
        try:
            outcome["result"] = fn()
        except BaseException as error:  # noqa: BLE001 (re-raised in the test's thread)
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"the call did not return within {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def tensor_type(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def program_text(op: str, shapes, result_shape, asynchronous: bool = False) -> str:
    """@main(x, rest...): doubles x on the CPU, calls tt.<op>(2x, rest...), doubles the
    result on the CPU (doubling is exact, so it adds no error). The async import is a
    util.func: iree-import-public drops iree.abi.model from a func.func (see
    examples/iree_interop/tt_import.mlir)."""
    types = [tensor_type(s) for s in shapes]
    result = tensor_type(result_shape)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    signature = f"({', '.join(types)}) -> {result}"
    args = ", ".join(["%x2"] + [f"%a{i}" for i in range(1, len(types))])
    if asynchronous:
        declaration = (f'util.func private @"tt.{op}$async"({params}) -> {result} '
                       f'attributes {{iree.abi.model = "coarse-fences", nosideeffects}}')
        call = f'util.call @"tt.{op}$async"({args}) : {signature}'
    else:
        declaration = f"func.func private @tt.{op}{signature}"
        call = f"call @tt.{op}({args}) : {signature}"
    return f"""
{declaration}
func.func @main({params}) -> {result} {{
  %x2 = arith.addf %a0, %a0 : {types[0]}
  %y = {call}
  %z = arith.addf %y, %y : {result}
  return %z : {result}
}}
"""


def run_program(config, tt, text: str, *arrays) -> np.ndarray:
    vmfb = compile_vmfb(text)
    context = rt.SystemContext(vm_modules=[tt, rt.VmModule.copy_buffer(config.vm_instance, vmfb)], config=config)
    return within(lambda: context.modules.module.main(*arrays).to_host())


def buffer_view(config, array, element_type=rt.HalElementType.FLOAT_32) -> rt.HalBufferView:
    return config.device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
        device=config.device, buffer=np.ascontiguousarray(array), element_type=element_type)


def invoke(direct, tt, name: str, *refs) -> np.ndarray:
    """Calls tt.<name> with VmRefs (buffer views, fences); its result as float32."""
    arguments = rt.VmVariantList(len(refs))
    for ref in refs:
        arguments.push_ref(ref)
    results = rt.VmVariantList(1)
    direct.invoke(tt.lookup_function(name), arguments, results)
    view = results.get_as_object(0, rt.HalBufferView)
    return np.array(view.map().asarray(view.shape, np.dtype(np.float32)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, gamma, beta):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * gamma + beta


# ---- Compiled programs calling tt ----

@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "coarse-fences"])
@pytest.mark.parametrize("k", [64, 128, 256])
def test_vmfb_matmul(config, tt, k, asynchronous):
    """Also proves the coarse-fences import is what the program calls: its signature
    (4 arguments) must match tt.matmul$async when the context resolves imports."""
    rng = np.random.default_rng(k)
    a = rng.uniform(-1, 1, (64, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, 96)).astype(np.float32)
    got = run_program(config, tt, program_text("matmul", [a.shape, b.shape], (64, 96), asynchronous), a, b)
    reference = 2 * (2 * a.astype(np.float64) @ b)
    assert np.abs(got - reference).max() <= 0.02 * np.abs(reference).max()


def test_vmfb_softmax(config, tt):
    x = np.random.default_rng(1).standard_normal((64, 100)).astype(np.float32)
    got = run_program(config, tt, program_text("softmax", [x.shape], x.shape), x) / 2
    reference = softmax(2 * x.astype(np.float64))
    assert np.abs(got - reference).max() <= 0.02 * reference.max()
    assert np.abs(got.sum(axis=-1) - 1).max() <= 0.02


def test_vmfb_layernorm(config, tt):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 100)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 100).astype(np.float32)
    beta = rng.uniform(-0.5, 0.5, 100).astype(np.float32)
    got = run_program(config, tt, program_text("layernorm", [x.shape, gamma.shape, beta.shape], x.shape),
                      x, gamma, beta)
    reference = 2 * layernorm(2 * x.astype(np.float64), gamma, beta)
    assert np.abs(got - reference).max() <= 0.025 * np.abs(reference).max()


# ---- Every op, called from Python ----

ELEMENTWISE = {  # name -> (numpy reference, relative tolerance of bf16 on the device)
    "add": (np.add, 0.01), "mul": (np.multiply, 0.01),
    "relu": (lambda a: np.maximum(a, 0), 0.01), "exp": (np.exp, 0.02),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_ops(config, direct, tt, name):
    """(40, 70): not a multiple of the 32x32 tile, so the padding path is used."""
    reference_op, tolerance = ELEMENTWISE[name]
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-2, 2, (40, 70)).astype(np.float32) for _ in range(2 if name in ("add", "mul") else 1)]
    got = within(lambda: invoke(direct, tt, name, *(buffer_view(config, a).ref for a in arrays)))
    reference = reference_op(*(a.astype(np.float64) for a in arrays))
    assert got.shape == reference.shape
    assert np.abs(got - reference).max() <= tolerance * np.abs(reference).max()


# ---- The coarse-fences form, called from Python ----

def async_arguments(config, a, b):
    wait_semaphore, signal_semaphore = config.device.create_semaphore(0), config.device.create_semaphore(0)
    refs = (buffer_view(config, a).ref, buffer_view(config, b).ref,
            rt.HalFence.create_at(wait_semaphore, 1).ref, rt.HalFence.create_at(signal_semaphore, 1).ref)
    return wait_semaphore, signal_semaphore, refs


def test_async_waits_for_the_wait_fence_then_signals(config, direct, tt):
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (32, 64)).astype(np.float32), rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    wait_semaphore, signal_semaphore, refs = async_arguments(config, a, b)
    seen = {}

    def release():
        time.sleep(DELAY_S)
        seen["signal value before the wait fence"] = signal_semaphore.query()
        wait_semaphore.signal(1)

    threading.Thread(target=release, daemon=True).start()
    start = time.perf_counter()
    got = within(lambda: invoke(direct, tt, "matmul$async", *refs))
    elapsed = time.perf_counter() - start
    assert seen["signal value before the wait fence"] == 0  # not signalled while the wait fence was pending
    assert elapsed >= DELAY_S
    assert signal_semaphore.query() == 1
    reference = a.astype(np.float64) @ b
    assert np.abs(got - reference).max() <= 0.02 * np.abs(reference).max()


def test_async_failed_wait_fence_fails_the_signal_fence(config, direct, tt):
    a = np.ones((32, 32), np.float32)
    wait_semaphore, signal_semaphore, refs = async_arguments(config, a, a)
    wait_semaphore.fail("the producer failed")
    with pytest.raises(RuntimeError, match=r"tt\.matmul\$async.*the producer failed"):
        within(lambda: invoke(direct, tt, "matmul$async", *refs))
    with pytest.raises(RuntimeError, match="the producer failed"):
        signal_semaphore.query()


def test_async_wait_times_out(config, device):
    """A wait fence nobody signals: DEADLINE_EXCEEDED after timeout_ns, not a hang."""
    tt = create_tt_module(config.vm_instance, device, iree_device=config.device, timeout_ns=int(DELAY_S * 1e9))
    direct = rt.VmContext(config.vm_instance, [tt])
    a = np.ones((32, 32), np.float32)
    _, signal_semaphore, refs = async_arguments(config, a, a)
    with pytest.raises(RuntimeError, match=r"DEADLINE_EXCEEDED; tt\.matmul\$async: the wait fence was not reached"):
        within(lambda: invoke(direct, tt, "matmul$async", *refs))
    with pytest.raises(RuntimeError, match="wait fence was not reached"):
        signal_semaphore.query()


# ---- Errors ----

def test_vmfb_bad_shapes_raise_naming_the_op(config, tt):
    """The program declares a matmul of (32, 64) @ (32, 64): IREE compiles it, the op rejects it."""
    text = program_text("matmul", [(32, 64), (32, 64)], (32, 64))
    a = np.ones((32, 64), np.float32)
    with pytest.raises(RuntimeError, match=r"tt\.matmul: matmul of \[32, 64\] and \[32, 64\]: expected \(M, K\)"):
        run_program(config, tt, text, a, a)


def test_async_bad_shapes_raise_and_fail_the_signal_fence(config, direct, tt):
    a = np.ones((32, 64), np.float32)
    wait_semaphore, signal_semaphore, refs = async_arguments(config, a, a)
    wait_semaphore.signal(1)
    with pytest.raises(RuntimeError, match=r"tt\.matmul: matmul of .* expected \(M, K\) @ \(K, N\)"):
        within(lambda: invoke(direct, tt, "matmul$async", *refs))
    with pytest.raises(RuntimeError, match=r"tt\.matmul: matmul of"):
        signal_semaphore.query()


def test_non_float_arguments_are_rejected(config, direct, tt):
    view = buffer_view(config, np.ones((32, 32), np.int32), rt.HalElementType.SINT_32)
    with pytest.raises(RuntimeError, match=r"tt\.relu: argument 0 has element type SINT_32"):
        within(lambda: invoke(direct, tt, "relu", view.ref))
