"""The host program of a compiled module (`module.json` in a .ttm), defined once.

tt_hal/compiler/host.py builds these objects from IREE's stream schedule;
tt_hal/runtime/module.py writes them, reads them back and runs them;
tt_hal/tools/inspection.py summarises them.

Each function has its signature, its *slots* (device tensors, each its own
allocation) and its *steps*: IREE's schedule in order. The queue steps (alloca,
execute, dealloca) wait on and signal *timepoints*, one semaphore each at run time.

Reading checks more than types, so that a damaged file fails when it loads, never
half-way through a call: indices are in range, a slot is used only while it holds a
tensor, a timepoint is waited on only after a step signals it, and each output is
written once. A record that breaks any of this is INVALID_ARGUMENT naming the field.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.isa import MathFidelity
from tt_hal.target.layout import DataFormat
from tt_hal.target.sizes import TILE

MODULE_FORMAT = "tt-hal-module"
MODULE_VERSION = 1


class SlotKind(enum.Enum):
    """Where a slot's tensor comes from (written by name)."""

    input = enum.auto()  # an argument, placed by an import step
    alloca = enum.auto()  # part of a slab that alloca and dealloca steps allocate and free
    temp = enum.auto()  # a dispatch's temporary, allocated for the whole call


@dataclasses.dataclass(frozen=True)
class TensorType:
    """An argument or a result of a function, on the host."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "dtype": self.dtype.name}

    @classmethod
    def from_json(cls, obj: _Object) -> TensorType:
        return cls(obj.integers("shape"), obj.dtype("dtype"))


@dataclasses.dataclass(frozen=True)
class Slot:
    """A device tensor of a function: its logical shape and the shape of its tiles."""

    shape: tuple[int, ...]
    device_shape: tuple[int, ...]
    kind: SlotKind

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "device_shape": list(self.device_shape), "kind": self.kind.name}

    @classmethod
    def from_json(cls, obj: _Object) -> Slot:
        return cls(obj.integers("shape"), obj.integers("device_shape"), obj.member("kind", SlotKind))


@dataclasses.dataclass(frozen=True)
class Constant:
    """A module constant, uploaded once when the module loads. Its values are not in
    module.json but in a file of their own (`constants/N.npy`), so `data` stays out
    of the JSON and of comparisons."""

    shape: tuple[int, ...]
    device_shape: tuple[int, ...]
    data: np.ndarray = dataclasses.field(compare=False, repr=False)

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "device_shape": list(self.device_shape)}

    @classmethod
    def from_json(cls, obj: _Object, data) -> Constant:
        constant = cls(obj.integers("shape"), obj.integers("device_shape"), data)
        if not (isinstance(data, np.ndarray) and data.dtype == np.float32 and data.shape == constant.shape
                and data.size == math.prod(constant.device_shape)):
            found = f"{data.dtype.name}{list(data.shape)}" if isinstance(data, np.ndarray) else type(data).__name__
            raise _malformed(obj.path, f"its data is {found}; expected float32{list(constant.shape)}, the size of "
                                       f"device shape {list(constant.device_shape)}")
        return constant


# ---- binding references: what a dispatch binds ----

@dataclasses.dataclass(frozen=True)
class SlotRef:
    """A slot of the function (written as its index)."""

    slot: int

    def to_json(self):
        return self.slot


@dataclasses.dataclass(frozen=True)
class ConstantRef:
    """A module constant (written ["constant", index])."""

    constant: int

    def to_json(self):
        return ["constant", self.constant]


@dataclasses.dataclass(frozen=True)
class MaskRef:
    """The device's mask tile for padding (tt_hal.ops.mask_tile): 1.0 in the first
    `valid` columns (axis -1) or rows (axis -2). Written ["mask", valid, axis]."""

    valid: int
    axis: int

    def to_json(self):
        return ["mask", self.valid, self.axis]


Binding = SlotRef | ConstantRef | MaskRef


def _binding(value, path: str) -> Binding:
    if isinstance(value, int) and not isinstance(value, bool):
        return SlotRef(_int(value, path))
    if isinstance(value, list) and len(value) == 2 and value[0] == "constant":
        return ConstantRef(_int(value[1], f"{path}[1]"))
    if isinstance(value, list) and len(value) == 3 and value[0] == "mask":
        if value[2] not in (-1, -2) or not isinstance(value[2], int):
            raise _malformed(f"{path}[2]", f"mask axis {value[2]!r}; expected -1 or -2")
        return MaskRef(_int(value[1], f"{path}[1]", below=TILE + 1), value[2])
    raise _malformed(path, f"{_shown(value)} is not a binding: expected a slot index, [\"constant\", index] or "
                           f"[\"mask\", valid, axis]")


# ---- commands of an execute step ----

@dataclasses.dataclass(frozen=True)
class Dispatch:
    """One launch of a kernel of kernels.ttx."""

    kernel: int  # the export ordinal
    constants: tuple[int, ...]  # push constants, uint32
    bindings: tuple[Binding, ...]
    tiles: int  # output tiles: the runtime spreads them over at most this many workgroups

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "constants": list(self.constants),
                "bindings": [b.to_json() for b in self.bindings], "tiles": self.tiles}

    @classmethod
    def from_json(cls, obj: _Object) -> Dispatch:
        return cls(obj.integer("kernel"), obj.integers("constants", below=2**32),
                   tuple(_binding(v, p) for v, p in obj.items("bindings")), obj.integer("tiles"))


@dataclasses.dataclass(frozen=True)
class Barrier:
    """An execution barrier: the commands after it start when those before it end."""

    def to_json(self) -> dict:
        return {"barrier": True}


Command = Dispatch | Barrier


def _command(obj: _Object) -> Command:
    if "barrier" not in obj.value:
        return Dispatch.from_json(obj)
    if obj.value["barrier"] is not True:
        raise _malformed(f"{obj.path}.barrier", f"{_shown(obj.value['barrier'])}; expected true")
    return Barrier()


# ---- steps ----

@dataclasses.dataclass(frozen=True)
class ImportStep:
    """Argument `input` (row-major) -> tiles in `slot`."""

    op: ClassVar[str] = "import"
    input: int
    slot: int

    def to_json(self) -> dict:
        return {"op": self.op, "input": self.input, "slot": self.slot}

    @classmethod
    def from_json(cls, obj: _Object) -> ImportStep:
        return cls(obj.integer("input"), obj.integer("slot"))


@dataclasses.dataclass(frozen=True)
class _SlabStep:
    """An alloca or a dealloca: the slots of one of IREE's slabs."""

    op: ClassVar[str]
    wait: tuple[int, ...]
    signal: int
    slots: tuple[int, ...]

    def to_json(self) -> dict:
        return {"op": self.op, "wait": list(self.wait), "signal": self.signal, "slots": list(self.slots)}

    @classmethod
    def from_json(cls, obj: _Object) -> _SlabStep:
        return cls(obj.integers("wait"), obj.integer("signal"), obj.integers("slots"))


class AllocaStep(_SlabStep):
    """Allocates the slots of a slab. The allocation happens on the host, so `signal`
    is signalled at once."""

    op = "alloca"


@dataclasses.dataclass(frozen=True)
class ExecuteStep:
    """One command buffer, submitted with queue_execute."""

    op: ClassVar[str] = "execute"
    wait: tuple[int, ...]
    signal: int
    commands: tuple[Command, ...]

    def to_json(self) -> dict:
        return {"op": self.op, "wait": list(self.wait), "signal": self.signal,
                "commands": [c.to_json() for c in self.commands]}

    @classmethod
    def from_json(cls, obj: _Object) -> ExecuteStep:
        return cls(obj.integers("wait"), obj.integer("signal"), tuple(_command(c) for c in obj.objects("commands")))


class DeallocaStep(_SlabStep):
    """Frees the slots of a slab with queue_dealloca, behind its waits."""

    op = "dealloca"


@dataclasses.dataclass(frozen=True)
class WaitStep:
    """The host waits for timepoints (IREE's stream.timepoint.await)."""

    op: ClassVar[str] = "wait"
    wait: tuple[int, ...]

    def to_json(self) -> dict:
        return {"op": self.op, "wait": list(self.wait)}

    @classmethod
    def from_json(cls, obj: _Object) -> WaitStep:
        return cls(obj.integers("wait"))


@dataclasses.dataclass(frozen=True)
class ReturnInputStep:
    """Result `output` is argument `input`, returned as it is."""

    op: ClassVar[str] = "return_input"
    output: int
    input: int

    def to_json(self) -> dict:
        return {"op": self.op, "output": self.output, "input": self.input}

    @classmethod
    def from_json(cls, obj: _Object) -> ReturnInputStep:
        return cls(obj.integer("output"), obj.integer("input"))


@dataclasses.dataclass(frozen=True)
class ExportStep:
    """Tiles in `slot` -> result `output` (row-major)."""

    op: ClassVar[str] = "export"
    output: int
    slot: int

    def to_json(self) -> dict:
        return {"op": self.op, "output": self.output, "slot": self.slot}

    @classmethod
    def from_json(cls, obj: _Object) -> ExportStep:
        return cls(obj.integer("output"), obj.integer("slot"))


Step = ImportStep | AllocaStep | ExecuteStep | DeallocaStep | WaitStep | ReturnInputStep | ExportStep
_STEPS = {cls.op: cls for cls in (ImportStep, AllocaStep, ExecuteStep, DeallocaStep, WaitStep, ReturnInputStep,
                                  ExportStep)}


def _step(obj: _Object) -> Step:
    op = obj.get("op")
    if not isinstance(op, str) or op not in _STEPS:
        raise _malformed(f"{obj.path}.op", f"{_shown(op)}; expected one of {', '.join(_STEPS)}")
    return _STEPS[op].from_json(obj)


# ---- functions and the module ----

@dataclasses.dataclass(frozen=True)
class Function:
    """A public function of the MLIR and the host program that runs it."""

    name: str
    inputs: tuple[TensorType, ...]
    outputs: tuple[TensorType, ...]
    slots: tuple[Slot, ...]
    steps: tuple[Step, ...]

    def commands(self) -> list[Command]:
        """The commands of every execute step, in order."""
        return [c for step in self.steps if isinstance(step, ExecuteStep) for c in step.commands]

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": [t.to_json() for t in self.inputs],
                "outputs": [t.to_json() for t in self.outputs], "slots": [s.to_json() for s in self.slots],
                "steps": [s.to_json() for s in self.steps]}

    @classmethod
    def from_json(cls, obj: _Object, constants: int) -> Function:
        function = cls(obj.string("name"), tuple(TensorType.from_json(t) for t in obj.objects("inputs")),
                       tuple(TensorType.from_json(t) for t in obj.objects("outputs")),
                       tuple(Slot.from_json(s) for s in obj.objects("slots")),
                       tuple(_step(s) for s in obj.objects("steps")))
        _StepChecker(function, obj.path, constants).run()
        return function


@dataclasses.dataclass(frozen=True)
class ModuleRecord:
    """What module.json holds: how tensors live on the device, the math fidelity the
    kernels were built with, the functions and the module constants."""

    data_format: DataFormat
    math_fidelity: MathFidelity
    functions: tuple[Function, ...]
    constants: tuple[Constant, ...]

    def to_json(self) -> dict:
        return {"format": MODULE_FORMAT, "version": MODULE_VERSION, "data_format": self.data_format.name,
                "math_fidelity": self.math_fidelity.name, "functions": [f.to_json() for f in self.functions],
                "constants": [c.to_json() for c in self.constants]}

    @classmethod
    def from_json(cls, value, constant_data: Callable[[int], np.ndarray]) -> ModuleRecord:
        """The record of module.json's `value`; `constant_data(i)` reads constant i's values."""
        if not isinstance(value, dict):
            raise _malformed("module.json", f"expected an object, got {_shown(value)}")
        if value.get("format") != MODULE_FORMAT or value.get("version") != MODULE_VERSION:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"module format {value.get('format')!r} version "
                                                        f"{value.get('version')!r}; this hal reads {MODULE_FORMAT!r} "
                                                        f"version {MODULE_VERSION}")
        obj = _Object(value, "")
        constants = tuple(Constant.from_json(c, constant_data(i)) for i, c in enumerate(obj.objects("constants")))
        functions = tuple(Function.from_json(f, len(constants)) for f in obj.objects("functions"))
        names = [f.name for f in functions]
        for name in names:
            if names.count(name) > 1:
                raise _malformed("functions", f"two functions named {name!r}")
        return cls(obj.member("data_format", DataFormat), obj.member("math_fidelity", MathFidelity), functions,
                   constants)


class _StepChecker:
    """Walks a function's steps as the runtime runs them, checking every reference."""

    def __init__(self, function: Function, path: str, constants: int):
        self.function, self.path, self.constants = function, path, constants
        self.live = {i for i, slot in enumerate(function.slots) if slot.kind is SlotKind.temp}
        self.signalled: set[int] = set()
        self.written: set[int] = set()
        self.at = path

    def run(self) -> None:
        function = self.function
        for n, step in enumerate(function.steps):
            self.at = f"{self.path}.steps[{n}]"
            self.step(step)
        unwritten = sorted(set(range(len(function.outputs))) - self.written)
        if unwritten:
            raise _malformed(f"{self.path}.steps", f"no step writes output {unwritten[0]}")

    def step(self, step: Step) -> None:
        function = self.function
        match step:
            case ImportStep():
                self.index(step.input, len(function.inputs), "input")
                self.same_size(function.inputs[step.input], step.slot)
                self.live.add(step.slot)
            case AllocaStep():
                self.timepoints(step.wait, step.signal)
                for slot in step.slots:
                    self.index(slot, len(function.slots), "slot")
                    self.live.add(slot)
            case ExecuteStep():
                self.timepoints(step.wait, step.signal)
                for command in step.commands:
                    if isinstance(command, Dispatch):
                        for binding in command.bindings:
                            self.binding(binding)
            case DeallocaStep():
                self.timepoints(step.wait, step.signal)
                for slot in step.slots:
                    self.use(slot)
                    self.live.discard(slot)
            case WaitStep():
                self.timepoints(step.wait, None)
            case ReturnInputStep():
                self.index(step.input, len(function.inputs), "input")
                self.write(step.output)
            case ExportStep():
                self.write(step.output)
                self.use(step.slot)
                self.same_size(function.outputs[step.output], step.slot)

    def binding(self, binding: Binding) -> None:
        match binding:
            case SlotRef():
                self.use(binding.slot)
            case ConstantRef():
                self.index(binding.constant, self.constants, "module constant")

    def index(self, value: int, count: int, what: str) -> None:
        if value >= count:
            raise _malformed(self.at, f"{what} {value}, of {count}")

    def use(self, slot: int) -> None:
        self.index(slot, len(self.function.slots), "slot")
        if slot not in self.live:
            raise _malformed(self.at, f"slot {slot} is used while it holds no tensor")

    def same_size(self, tensor: TensorType, slot: int) -> None:
        """The runtime reshapes between a host tensor and the slot's device shape."""
        self.index(slot, len(self.function.slots), "slot")
        device_shape = self.function.slots[slot].device_shape
        if math.prod(tensor.shape) != math.prod(device_shape):
            raise _malformed(self.at, f"a host tensor of shape {list(tensor.shape)} in slot {slot} of device "
                                      f"shape {list(device_shape)}")

    def write(self, output: int) -> None:
        self.index(output, len(self.function.outputs), "output")
        if output in self.written:
            raise _malformed(self.at, f"output {output} is written twice")
        self.written.add(output)

    def timepoints(self, wait: tuple[int, ...], signal: int | None) -> None:
        for t in wait:
            if t not in self.signalled:
                raise _malformed(self.at, f"waits on timepoint {t}, which no earlier step signals")
        if signal is not None:
            if signal in self.signalled:
                raise _malformed(self.at, f"signals timepoint {signal} again")
            self.signalled.add(signal)


# ---- reading JSON, with the path of what is read for messages ----

def _malformed(path: str, what: str) -> HalError:
    return HalError(StatusCode.INVALID_ARGUMENT, f"malformed host program in module.json: {path}: {what}")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(value, path: str, below: int | None = None) -> int:
    """A non-negative integer (below `below`), as every integer of the schema but a mask axis is."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (below is not None and value >= below):
        bound = "" if below is None else f" below {below}"
        raise _malformed(path, f"{_shown(value)}; expected an integer >= 0{bound}")
    return value


class _Object:
    """A JSON object of module.json and its path (`functions[0].steps[3]`)."""

    def __init__(self, value, path: str):
        if not isinstance(value, dict):
            raise _malformed(path, f"expected an object, got {_shown(value)}")
        self.value, self.path = value, path

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def get(self, key: str):
        if key not in self.value:
            raise _malformed(self.where(key), "missing")
        return self.value[key]

    def integer(self, key: str) -> int:
        return _int(self.get(key), self.where(key))

    def string(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str):
            raise _malformed(self.where(key), f"{_shown(value)}; expected a string")
        return value

    def items(self, key: str) -> list[tuple[object, str]]:
        """The elements of a list, each with its path."""
        value = self.get(key)
        if not isinstance(value, list):
            raise _malformed(self.where(key), f"{_shown(value)}; expected a list")
        return [(v, f"{self.where(key)}[{i}]") for i, v in enumerate(value)]

    def integers(self, key: str, below: int | None = None) -> tuple[int, ...]:
        return tuple(_int(v, p, below) for v, p in self.items(key))

    def objects(self, key: str) -> list[_Object]:
        return [_Object(v, p) for v, p in self.items(key)]

    def member(self, key: str, cls: type[enum.Enum]):
        """An enum member, written by name."""
        name = self.get(key)
        if not isinstance(name, str) or name not in cls.__members__:
            raise _malformed(self.where(key), f"{_shown(name)}; expected one of {', '.join(cls.__members__)}")
        return cls[name]

    def dtype(self, key: str) -> np.dtype:
        name = self.string(key)
        try:
            return np.dtype(name)
        except TypeError:
            raise _malformed(self.where(key), f"{name!r} is not a numpy dtype") from None
