"""tt_hal/runtime/host_program.py: the schema of module.json.

A hand-written record that uses every step kind, command and binding reads into the
typed objects and writes back to the same JSON; each damage to it is INVALID_ARGUMENT
naming the field, on reading, so a damaged module fails when it loads and not in
the middle of a call. A compiled module round-trips to the same bytes.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import hal
from hal.status import StatusCode
from tt_hal import compiler, runtime
from tt_hal.runtime.host_program import (
    MODULE_FORMAT,
    MODULE_VERSION,
    AllocaStep,
    Barrier,
    ConstantRef,
    DeallocaStep,
    Dispatch,
    ExecuteStep,
    ExportStep,
    ImportStep,
    MaskRef,
    ModuleRecord,
    ReturnInputStep,
    SlotKind,
    SlotRef,
    WaitStep,
)
from tt_hal.runtime.module import read_module, write_module
from tt_hal.target.isa import MathFidelity
from tt_hal.target.layout import DataFormat

CONSTANTS = [np.arange(50, dtype=np.float32)]


def record_json() -> dict:
    """main(x) -> (kernel 1 (kernel 0 (x, constant 0, a mask)), x)."""
    tensor = {"shape": [40, 50], "dtype": "float32"}
    slot = {"shape": [40, 50], "device_shape": [40, 50]}
    return {
        "format": MODULE_FORMAT, "version": MODULE_VERSION, "data_format": "bfloat16", "math_fidelity": "HiFi2",
        "functions": [{
            "name": "main", "inputs": [tensor], "outputs": [tensor, tensor],
            "slots": [{**slot, "kind": "input"}, {**slot, "kind": "alloca"}, {**slot, "kind": "temp"}],
            "steps": [
                {"op": "import", "input": 0, "slot": 0},
                {"op": "alloca", "wait": [], "signal": 0, "slots": [1]},
                {"op": "execute", "wait": [0], "signal": 1, "commands": [
                    {"kernel": 0, "constants": [4, 2], "bindings": [0, ["constant", 0], ["mask", 18, -1], 2],
                     "tiles": 4},
                    {"barrier": True},
                    {"kernel": 1, "constants": [], "bindings": [2, 1], "tiles": 4},
                    {"barrier": True}]},
                {"op": "wait", "wait": [1]},
                {"op": "export", "output": 0, "slot": 1},
                {"op": "return_input", "output": 1, "input": 0},
                {"op": "dealloca", "wait": [1], "signal": 2, "slots": [1]}],
        }],
        "constants": [{"shape": [50], "device_shape": [1, 50]}],
    }


def read(value: dict, constants=CONSTANTS) -> ModuleRecord:
    return ModuleRecord.from_json(value, lambda i: constants[i])


def test_reads_into_typed_objects_and_writes_the_same_json():
    record = read(record_json())
    assert (record.data_format, record.math_fidelity) == (DataFormat.bfloat16, MathFidelity.HiFi2)
    (function,) = record.functions
    assert [s.kind for s in function.slots] == [SlotKind.input, SlotKind.alloca, SlotKind.temp]
    assert function.inputs[0].shape == (40, 50) and function.inputs[0].dtype == np.float32
    assert [type(s) for s in function.steps] == [ImportStep, AllocaStep, ExecuteStep, WaitStep, ExportStep,
                                                 ReturnInputStep, DeallocaStep]
    first, barrier, _, _ = function.steps[2].commands
    assert first == Dispatch(0, (4, 2), (SlotRef(0), ConstantRef(0), MaskRef(18, -1), SlotRef(2)), 4)
    assert barrier == Barrier() and function.commands() == list(function.steps[2].commands)
    assert record.constants[0].data is CONSTANTS[0]
    assert record.to_json() == record_json()


def test_compiled_module_round_trips():
    ttm = compiler.compile_module("""
        func.func @main(%a: tensor<40x50xf32>, %b: tensor<40x50xf32>) -> (tensor<40x50xf32>, tensor<40x50xf32>) {
          %s = stablehlo.add %a, %b : tensor<40x50xf32>
          %e = stablehlo.exponential %s : tensor<40x50xf32>
          return %e, %a : tensor<40x50xf32>, tensor<40x50xf32>
        }""")
    record, executable, source = read_module(ttm)
    assert write_module(record, executable, source) == ttm
    assert read(record.to_json(), [c.data for c in record.constants]) == record


def damaged(edit) -> dict:
    value = copy.deepcopy(record_json())
    edit(value, value["functions"][0])
    return value


def drop(record: dict, key: str) -> None:
    del record[key]


# (name, damage, words the message names)
DAMAGES = [
    ("not an object", lambda r, f: r.update(functions=[7]), ["functions[0]: expected an object, got 7"]),
    ("missing field", lambda r, f: drop(f, "slots"), ["functions[0].slots: missing"]),
    ("not a list", lambda r, f: f.update(inputs={}), ["functions[0].inputs: {}; expected a list"]),
    ("data format", lambda r, f: r.update(data_format="int4"), ["data_format: 'int4'", "bfloat16"]),
    ("math fidelity", lambda r, f: r.update(math_fidelity=4), ["math_fidelity: 4", "HiFi4"]),
    ("dtype", lambda r, f: f["inputs"][0].update(dtype="float33"), ["inputs[0].dtype", "not a numpy dtype"]),
    ("negative dim", lambda r, f: f["slots"][1].update(device_shape=[-1, 50]),
     ["slots[1].device_shape[0]: -1; expected an integer >= 0"]),
    ("slot kind", lambda r, f: f["slots"][2].update(kind="heap"), ["slots[2].kind: 'heap'", "input, alloca, temp"]),
    ("step op", lambda r, f: f["steps"][3].update(op="jump"), ["steps[3].op: 'jump'", "import, alloca"]),
    ("step op unhashable", lambda r, f: f["steps"][3].update(op=["wait"]), ["steps[3].op: ['wait']"]),
    ("bool as an index", lambda r, f: f["steps"][0].update(slot=True), ["steps[0].slot: True"]),
    ("push constant", lambda r, f: f["steps"][2]["commands"][0].update(constants=[2**32]),
     ["commands[0].constants[0]", "below 4294967296"]),
    ("binding", lambda r, f: f["steps"][2]["commands"][0]["bindings"].append("x"),
     ["bindings[4]: 'x' is not a binding"]),
    ("mask axis", lambda r, f: f["steps"][2]["commands"][0]["bindings"].__setitem__(2, ["mask", 18, 0]),
     ["bindings[2][2]: mask axis 0"]),
    ("barrier", lambda r, f: f["steps"][2]["commands"][1].update(barrier=False),
     ["commands[1].barrier: False; expected true"]),
    ("input index", lambda r, f: f["steps"][0].update(input=1), ["steps[0]: input 1, of 1"]),
    ("slot index", lambda r, f: f["steps"][4].update(slot=3), ["steps[4]: slot 3, of 3"]),
    ("constant index", lambda r, f: r.update(constants=[]), ["steps[2]: module constant 0, of 0"]),
    ("slot used before its alloca", lambda r, f: f["steps"][1].update(slots=[]),
     ["steps[2]: slot 1 is used while it holds no tensor"]),
    ("slot used after its dealloca", lambda r, f: f["steps"].append({"op": "dealloca", "wait": [], "signal": 3,
                                                                     "slots": [1]}),
     ["steps[7]: slot 1 is used while it holds no tensor"]),
    ("unsignalled timepoint", lambda r, f: f["steps"][3].update(wait=[5]),
     ["steps[3]: waits on timepoint 5, which no earlier step signals"]),
    ("timepoint signalled twice", lambda r, f: f["steps"][6].update(signal=0), ["steps[6]: signals timepoint 0 again"]),
    ("output never written", lambda r, f: f["steps"].pop(5), ["functions[0].steps: no step writes output 1"]),
    ("output written twice", lambda r, f: f["steps"][5].update(output=0), ["steps[5]: output 0 is written twice"]),
    ("import into a slot of another size", lambda r, f: f["inputs"][0].update(shape=[40, 51]),
     ["steps[0]: a host tensor of shape [40, 51] in slot 0 of device shape [40, 50]"]),
    ("two functions of one name", lambda r, f: r["functions"].append(f), ["two functions named 'main'"]),
]


@pytest.mark.parametrize("edit, words", [d[1:] for d in DAMAGES], ids=[d[0] for d in DAMAGES])
def test_damage_is_invalid_argument_naming_the_field(edit, words):
    with pytest.raises(hal.HalError) as info:
        read(damaged(edit))
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    assert "malformed host program in module.json" in info.value.message
    for word in words:
        assert word in info.value.message


@pytest.mark.parametrize("data, words", [
    (np.arange(50, dtype=np.float64), ["constants[0]: its data is float64[50]", "float32[50]"]),
    (np.arange(49, dtype=np.float32), ["its data is float32[49]", "device shape [1, 50]"]),
], ids=["dtype", "size"])
def test_constant_data_must_fit_its_record(data, words):
    with pytest.raises(hal.HalError) as info:
        read(record_json(), [data])
    assert info.value.code == StatusCode.INVALID_ARGUMENT
    for word in words:
        assert word in info.value.message


def test_other_format_or_version():
    for key, value in (("format", "tt-hal-modul"), ("version", MODULE_VERSION + 1)):
        with pytest.raises(hal.HalError, match="this hal reads 'tt-hal-module'") as info:
            read({**record_json(), key: value})
        assert info.value.code == StatusCode.INVALID_ARGUMENT


def test_load_module_checks_the_record(device):
    """A record written from typed objects that break a rule fails when loaded."""
    record = read(record_json())
    (function,) = record.functions
    steps = tuple(s for s in function.steps if not isinstance(s, ReturnInputStep))
    broken = dataclasses.replace(record, functions=(dataclasses.replace(function, steps=steps),))
    with pytest.raises(ValueError, match=r"functions\[0\].steps: no step writes output 1") as info:
        runtime.load_module(write_module(broken, b""), device)
    assert info.value.code == StatusCode.INVALID_ARGUMENT
