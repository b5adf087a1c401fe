"""IREE .vmfb programs run by iree.runtime's own VM on device "tenstorrent"
(tt_hal.compiler.compile_vmfb, tt_hal.runtime.system and hal_module): host code with
transfers, constants, globals, integer types and the coarse-fences ABI, each result
checked against numpy; host loops and branches over dispatches with a running total
in a global (examples/models/control_flow.mlir); bad input; handles released when the
VM drops them.

Programs whose dispatches have no Tensix lowering yet fail at compile time with
UNIMPLEMENTED (tested here too), never with a wrong answer."""

from pathlib import Path

import numpy as np
import pytest

from hal.status import HalError, StatusCode
from tt_hal import runtime
from tt_hal.compiler import frontend, tolerance
from tt_hal.compiler.vmfb import compile_vmfb

CONCAT = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> (tensor<128x64xf32>, tensor<64x64xf32>) {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %c = stablehlo.constant dense<2.5> : tensor<64x64xf32>
  return %0, %c : tensor<128x64xf32>, tensor<64x64xf32>
}"""
STATE = """
util.global private mutable @state = dense<1.0> : tensor<4xf32>
func.func @swap(%x: tensor<4xf32>) -> tensor<4xf32> {
  %old = util.global.load @state : tensor<4xf32>
  util.global.store %x, @state : tensor<4xf32>
  return %old : tensor<4xf32>
}"""
ASYNC = """
util.func public @main(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<16xi32>, tensor<2xi64>)
    attributes {iree.abi.model = "coarse-fences"} {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<8xi32>, tensor<8xi32>) -> tensor<16xi32>
  %c = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  util.return %0, %c : tensor<16xi32>, tensor<2xi64>
}"""  # as iree-turbine declares its async entry points


@pytest.fixture(scope="module")
def concat():
    return runtime.load_vm_flatbuffer(compile_vmfb(CONCAT), driver="tenstorrent")


def test_transfers_and_constants_run_on_the_tenstorrent_device(concat):
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    joined, splat = concat.main(a, -a)
    assert np.array_equal(joined, np.concatenate([a, -a])) and np.array_equal(splat, np.full((64, 64), 2.5, np.float32))
    assert concat.function_names == ["main"]
    assert "tenstorrent" in repr(concat)


def test_a_mutable_global_keeps_its_value_across_calls():
    module = runtime.load_vm_flatbuffer(compile_vmfb(STATE))
    first = module.swap(np.full(4, 7, np.float32))
    second = module.swap(np.full(4, 9, np.float32))
    assert np.array_equal(first, np.ones(4, np.float32)) and np.array_equal(second, np.full(4, 7, np.float32))


def test_integer_tensors_and_the_coarse_fences_abi():
    module = runtime.load_vm_flatbuffer(compile_vmfb(ASYNC))
    assert module.main.coarse_fences
    joined, constant = module.main(np.arange(8, dtype=np.int32), np.full(8, -5, np.int32))
    assert joined.dtype == np.int32 and np.array_equal(joined, np.r_[np.arange(8), np.full(8, -5)])
    assert constant.dtype == np.int64 and constant.tolist() == [3, 4]


@pytest.mark.parametrize("arguments, words", [
    ((np.ones((64, 64), np.float32),), "expected 2 arguments but passed 1"),
    ((np.ones((64, 64), np.float32), np.ones((3, 3), np.float32)), "input1: shape [3, 3]; the function takes [64, 64]"),
    ((np.ones((64, 64), np.float32), np.ones((64, 64), np.int32)), "input1: element type mismatch; expected FLOAT_32"),
])
def test_wrong_arguments_are_invalid_argument(concat, arguments, words):
    with pytest.raises(HalError) as error:
        concat.main(*arguments)
    assert error.value.code == StatusCode.INVALID_ARGUMENT and words in error.value.message


def test_modules_that_are_not_ours_or_not_modules_are_refused(concat):
    with pytest.raises(HalError) as error:
        runtime.load_vm_flatbuffer(frontend.compile_llvm_cpu(CONCAT))  # compiled for llvm-cpu
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "not compiled for the tenstorrent" in error.value.message
    with pytest.raises(HalError) as error:
        runtime.load_vm_flatbuffer(b"not a flatbuffer at all")
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "not a .vmfb" in error.value.message
    with pytest.raises(HalError) as error:
        concat["missing"]
    assert error.value.code == StatusCode.NOT_FOUND and "functions: main" in error.value.message
    with pytest.raises(HalError) as error:
        runtime.load_vm_flatbuffer_file("/no/such/model.vmfb")
    assert error.value.code == StatusCode.NOT_FOUND


def test_dispatches_without_a_lowering_fail_at_compile_time():
    text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n" \
           "  %0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xf8E4M3FN>\n" \
           "  %1 = stablehlo.exponential %0 : tensor<4xf8E4M3FN>\n" \
           "  %2 = stablehlo.convert %1 : (tensor<4xf8E4M3FN>) -> tensor<4xf32>\n  return %2 : tensor<4xf32>\n}"
    with pytest.raises(HalError) as error:
        compile_vmfb(text)
    assert error.value.code == StatusCode.UNIMPLEMENTED and "input.mlir:4:" in error.value.message
    assert "arith.extf" in error.value.message


def test_handles_the_vm_drops_are_released_and_device_memory_returns(concat):
    """A call's buffers (its arguments' copies, transients, results) are released when
    it returns: every later call finds the same memory in use and the same handles."""
    state = concat._context.config.hal_state
    assert state.handles.sweeping, "this iree.runtime build's list layout is not readable: handles would leak"
    a = np.ones((64, 64), np.float32)
    concat.main(a, a)
    allocator = concat._context.config.device.allocator
    live = allocator.statistics["device_bytes_allocated"] - allocator.statistics["device_bytes_freed"]
    handles = len(state.handles)
    for _ in range(300):
        concat.main(a, a)
        stats = allocator.statistics
        assert stats["device_bytes_allocated"] - stats["device_bytes_freed"] == live
    assert len(state.handles) == handles


def test_host_loops_branches_and_a_running_total_across_calls():
    """examples/models/control_flow.mlir: IREE's host code loops `n` times over a
    dispatch, branches on n's parity, and keeps a mutable global across calls."""
    module = runtime.load_vm_flatbuffer(compile_vmfb(Path(__file__).resolve().parents[1] / "examples" / "models" /
                                                     "control_flow.mlir"))
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    w = (rng.uniform(-1, 1, (64, 64)) * np.sqrt(3 / 64)).astype(np.float32)
    total = np.zeros((16, 64))
    for n in (3, 2, 0, 1):
        h = x.astype(np.float64)
        for _ in range(n):
            h = np.tanh(h @ w)
        y = -h if n % 2 else h
        total = total + y
        tolerance.check(module.main(x, w, n), [y, total], "float32")
