"""tt_hal/compiler/vm_rewrite.py: IREE's VM IR rewritten for a Python `hal` module.

Every import the rewrite declares must be one the `hal` module exports, with the
same calling convention (the VM links them by exact match); no variadic call,
yieldable call, i32 at the hal boundary or typed hal ref may remain."""

import re

import iree.runtime as rt
import pytest

from tt_hal.compiler import frontend, vm_rewrite
from tt_hal.runtime.hal_module import EXPORTS, cconv

PROGRAM = """
util.global private mutable @state = dense<1.0> : tensor<4xf32>
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> (tensor<128x64xf32>, tensor<64x64xf32>) {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %c = stablehlo.constant dense<2.5> : tensor<64x64xf32>
  return %0, %c : tensor<128x64xf32>, tensor<64x64xf32>
}
func.func @stateful(%x: tensor<4xf32>) -> tensor<4xf32> attributes {iree.abi.model = "coarse-fences"} {
  %old = util.global.load @state : tensor<4xf32>
  util.global.store %x, @state : tensor<4xf32>
  return %old : tensor<4xf32>
}
"""
IMPORT = re.compile(r"vm\.import private @(hal\.[\w.]+)\((.*?)\)(?: -> \((.*?)\))?\s*$", re.M)
LETTERS = {"i64": "I", "!vm.list<?>": "r", "!vm.buffer": "r"}


@pytest.fixture(scope="module")
def rewritten() -> str:
    sources = frontend.compile_to_sources(PROGRAM)
    return vm_rewrite.rewrite(frontend.compile_phase(frontend.compile_phase(sources, "executable-sources", "hal"),
                                                     "hal", "vm"))


def test_every_declared_import_is_a_hal_module_export_with_its_calling_convention(rewritten):
    imports = IMPORT.findall(rewritten)
    assert len(imports) >= 15, rewritten
    for name, arguments, results in imports:
        argument_types = [a.split(" : ", 1)[1] for a in arguments.split(", ")] if arguments else []
        result_types = results.split(", ") if results else []
        letters = "0" + ("".join(LETTERS[t] for t in argument_types) or "v") + "_" + \
            ("".join(LETTERS[t] for t in result_types) or "v")
        short = name[len("hal."):]
        assert short in EXPORTS, f"{name} is not exported by the hal module"
        assert letters == cconv(short), f"{name}: declared {letters}, exported {cconv(short)}"


def test_no_variadic_yieldable_i32_or_typed_hal_ref_remains(rewritten):
    assert "vm.call.variadic" not in rewritten and "yieldable" not in rewritten
    assert "!vm.ref<!hal." not in rewritten and "minimum_version" not in rewritten
    for line in rewritten.splitlines():
        if "vm.call @hal." in line:
            signature = line.rsplit(" : ", 1)[1]
            assert "i32" not in signature, line


def test_the_rewritten_ir_compiles_to_a_vmfb_iree_runtime_loads(rewritten):
    module = rt.VmModule.copy_buffer(rt.VmInstance(), frontend.compile_phase(rewritten, "vm", None))
    assert {"main", "stateful"} <= set(module.function_names)
