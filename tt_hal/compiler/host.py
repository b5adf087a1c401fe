"""IREE's host schedule -> the module's host program.

At the `executable-sources` phase each public function is a stream-level schedule:
imports of the arguments, `stream.resource.alloca`, `stream.cmd.execute` regions of
dispatches (serial, or inside `stream.cmd.concurrent`), deallocas, timepoints and
exports. IREE packs tensors into byte slabs; a Tensix tensor is tiles, not bytes,
so each (slab, byte offset, tensor type) a dispatch reads or writes becomes one
*slot*: a device tensor with its own allocation. The schedule's order, barriers and
timepoints carry over step by step (tt_hal/runtime/module.py runs them on hal).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
from iree.compiler import ir

from hal.status import HalError, StatusCode
from tt_hal.compiler.lowering import (
    DispatchLowering,
    Integers,
    Options,
    Tensor,
    _children,
    _shape,
    build_kernel,
    canonical,
    dense_array,
    location,
    unimplemented,
)
from tt_hal.runtime import host_program


class Slot:
    """A slot while the schedule is walked: its device shape is known once something writes it."""

    def __init__(self, index: int, shape, kind: host_program.SlotKind, root=None):
        self.index = index
        self.shape = tuple(shape)
        self.device_shape = None  # set by its first writer, or the default for inputs
        self.kind = kind
        self.root = root

    def record(self) -> host_program.Slot:
        return host_program.Slot(self.shape, tuple(self.device_shape), self.kind)


class _Constant:
    """A module constant where a dispatch expects a slot."""

    def __init__(self, constant: int, shape, device_shape):
        self.constant = constant
        self.shape = tuple(shape)
        self.device_shape = tuple(device_shape)


def _buffer_bytes(op) -> bytes:
    """The bytes of a util.buffer.constant: a dense<...> attribute or a
    #util.composite of them (printed; its parts have no Python accessor)."""
    attr = op.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        return dense_array(op, attr).tobytes()
    text = str(attr)
    match = re.fullmatch(r"#util\.composite<(\d+)xi8, \[(.*)\]>", text, re.DOTALL)
    if not match:
        raise unimplemented(op, f"a constant buffer {text[:60]}...: the bridge reads dense<...> and "
                                f"#util.composite constants")
    parts, depth, start = [], 0, 0
    body = match.group(2)
    for i, char in enumerate(body):  # split at the commas between parts
        depth += char in "<[(" and 1 or 0
        depth -= char in ">])" and 1 or 0
        if char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    data = b"".join(dense_array(op, ir.Attribute.parse(p.strip())).tobytes() for p in parts if p.strip())
    if len(data) != int(match.group(1)):
        raise HalError(StatusCode.INTERNAL, f"constant buffer of {len(data)} bytes, expected {match.group(1)}")
    return data


def _f32(shape) -> host_program.TensorType:
    """An argument or result: the bridge compiles f32 tensors."""
    return host_program.TensorType(tuple(shape), np.dtype(np.float32))


def _squeezed(shape) -> tuple:
    return tuple(d for d in shape if d != 1)


def _bound(op, slot: Slot, shape) -> tuple:
    """The device shape a dispatch sees a slot through when it reads it as `shape`."""
    if _squeezed(shape) == _squeezed(slot.shape):
        return slot.device_shape  # only unit dims differ: the same tiles
    own = canonical(Tensor(shape).device_shape)
    held = canonical(slot.device_shape)
    if own[-1] == held[-1] and math.prod(own[:-1]) == math.prod(held[:-1]) and (
            own[-2] == held[-2] or (own[-2] % 32 == 0 and held[-2] % 32 == 0)):
        return own  # outer dims folded differently into the same tile rows
    if len(shape) == 1:
        return slot.device_shape  # flattened by IREE (elementwise dispatches): lowered on the slot's tiles
    raise unimplemented(op, f"a tensor of shape {slot.shape} read as {tuple(shape)}: this reshape moves data "
                            f"between tiles, which the bridge does not lower yet")


def _symbols(attr) -> list[str]:
    """@exe::@variant::@export -> ["exe", "variant", "export"]."""
    return [s.strip().lstrip("@").strip('"') for s in str(attr).split("::")]


class ModuleLowering:
    """Walks a normalised `executable-sources` module into the host program's record
    and the kernels it launches."""

    def __init__(self, module, options: Options):
        self.options = options
        self.dispatches = {}  # (executable, export) -> func.func
        self.kernels: dict[str, tuple[int, tuple]] = {}
        self.globals: dict[str, bytes] = {}  # util.global name -> the bytes its initializer stores
        self.constants: list[host_program.Constant] = []
        self.constant_index: dict = {}
        self.lowered: dict = {}
        self.functions = []
        for op in module.body.operations:
            op = op.operation
            if op.name == "hal.executable":
                exe = op.attributes["sym_name"].value
                for variant in _children(op):
                    for inner in _children(variant):
                        if inner.name == "builtin.module":
                            for func in _children(inner):
                                if func.name == "func.func":
                                    self.dispatches[(exe, func.attributes["sym_name"].value)] = func
            elif op.name == "util.initializer":
                self.initializer(op)
        for op in module.body.operations:
            op = op.operation
            if op.name == "util.func" and "iree.abi.stub" in op.attributes:
                self.functions.append(_FunctionLowering(self, op).run())

    def initializer(self, op) -> None:
        """Constant weights: IREE's initializer maps a constant buffer (a
        #util.composite of dense<...> parts) into a util.global resource."""
        buffers, stored = [], []
        for block in op.regions[0].blocks:
            for child in block.operations:
                child = child.operation
                if child.name == "util.buffer.constant":
                    buffers.append(_buffer_bytes(child))
                elif child.name == "util.global.store":
                    stored.append(child.attributes["global"].value)
        if len(buffers) != 1 or len(stored) != 1:
            raise unimplemented(op, "an initializer other than one constant buffer mapped into one global")
        self.globals[stored[0]] = buffers[0]

    def constant(self, data, device_shape) -> int:
        """The index of a module constant holding `data` with `device_shape`."""
        data = np.ascontiguousarray(data, np.float32)
        key = (data.shape, tuple(device_shape), data.tobytes())
        if key not in self.constant_index:
            self.constant_index[key] = len(self.constants)
            self.constants.append(host_program.Constant(data.shape, tuple(device_shape), data))
        return self.constant_index[key]

    def kernel(self, key: tuple) -> int:
        # Keyed by repr: 0.0 == -0.0, but a kernel with a -0.0 constant is another kernel.
        return self.kernels.setdefault(repr(key), (len(self.kernels), key))[0]

    def exports(self) -> list:
        """The library Exports of every kernel, in kernel-index order, named uniquely."""
        return [dataclasses.replace(build_kernel(key), name=f"{key[0]}_{index}")
                for index, key in self.kernels.values()]


class _FunctionLowering:
    def __init__(self, module: ModuleLowering, func):
        self.module = module
        self.func = func
        self.name = func.attributes["sym_name"].value
        self.env: dict = {}  # ir.Value -> resource (root, offset) / timepoint ids / slot
        self.integers = Integers()
        self.slots: list[Slot] = []
        self.by_key: dict = {}
        self.steps: list[host_program.Step] = []
        self.slab_steps: dict[int, tuple] = {}  # index in steps of an alloca or dealloca -> its slab's root
        self.inputs: list[host_program.TensorType] = []
        self.outputs: list[host_program.TensorType] = []
        self.timepoints = itertools.count()
        self.roots = itertools.count()

    def slot(self, root, offset: int, shape, kind: host_program.SlotKind) -> Slot:
        """The slot of a tensor at `offset` in a slab; tensors of the same size there
        are one tensor seen through a reshape (e.g. (1, 1, 512) as (512,))."""
        key = (root, offset, math.prod(shape))
        if key not in self.by_key:
            self.by_key[key] = Slot(len(self.slots), shape, kind, root)
            self.slots.append(self.by_key[key])
        return self.by_key[key]

    def run(self) -> host_program.Function:
        block_args = list(self.func.regions[0].blocks[0].arguments)
        self.arguments = {arg: i for i, arg in enumerate(block_args)}
        for op in _children(self.func):
            self.op(op)
        for index, root in self.slab_steps.items():  # allocas and deallocas cover every slot of their slab
            slots = tuple(s.index for s in self.slots if s.root == root)
            self.steps[index] = dataclasses.replace(self.steps[index], slots=slots)
        for slot in self.slots:
            if slot.device_shape is None:  # never written by a dispatch
                raise HalError(StatusCode.UNIMPLEMENTED, f"{self.name}: a result the schedule never writes with a "
                                                         f"dispatch ({slot.shape}); copies and fills of slabs are "
                                                         f"not supported yet")
        return host_program.Function(self.name, tuple(self.inputs), tuple(self.outputs),
                                     tuple(s.record() for s in self.slots), tuple(self.steps))

    def value(self, v):
        return self.env[v] if v in self.env else self.integers[v]

    def op(self, op) -> None:
        name = op.name
        operands = list(op.operands)
        if name in ("arith.constant", "hal.element_type", "hal.encoding_type"):
            return
        if self.integers.handle(op):
            return
        if name == "hal.buffer_view.assert":
            view = op.opview
            index = self.arguments[operands[0]]
            shape = [self.value(d) for d in view.shape]
            if "<f32>" not in str(view.element_type.owner):
                raise unimplemented(op, f"input {index}: the bridge compiles f32 tensors")
            self.inputs.append(_f32(shape))
        elif name == "hal.buffer_view.dim":
            raise unimplemented(op, "a dynamic dimension: the bridge compiles static shapes")
        elif name == "stream.tensor.import":
            index = self.arguments[operands[0]]
            shape = _shape(op.attributes["result_encoding"].value)
            root = ("input", index)
            slot = self.slot(root, 0, shape, host_program.SlotKind.input)
            slot.device_shape = Tensor(shape).device_shape
            self.steps.append(host_program.ImportStep(index, slot.index))
            self.env[op.results[0]] = (root, 0)
        elif name == "stream.resource.alloca":
            root = ("alloca", next(self.roots))
            self.env[op.results[0]] = (root, 0)
            self.slab_step(host_program.AllocaStep, root, op, op.results[1])
        elif name == "stream.resource.dealloca":
            root, _ = self.value(operands[0])
            self.slab_step(host_program.DeallocaStep, root, op, op.results[0])
        elif name == "stream.timepoint.join":
            self.env[op.results[0]] = sorted({t for v in operands for t in self.value(v)})
        elif name == "stream.timepoint.immediate":
            self.env[op.results[0]] = []
        elif name == "stream.timepoint.await":
            resources = [v for v in operands if not str(v.type).startswith("!stream.timepoint")]
            for result, resource in zip(op.results, resources):
                self.env[result] = self.value(resource)
            self.steps.append(host_program.WaitStep(self.waits(op)))
        elif name == "util.global.load":
            global_name = op.attributes["global"].value
            if global_name not in self.module.globals:
                raise unimplemented(op, f"util.global @{global_name} is not a constant the bridge can read")
            self.env[op.results[0]] = (("global", global_name), 0)
        elif name == "stream.resource.subview":
            root, base = self.value(operands[0])
            self.env[op.results[0]] = (root, base + self.value(op.opview.source_offset))
        elif name == "stream.cmd.execute":
            self.execute(op)
        elif name == "stream.tensor.export":
            root, offset = self.value(operands[0])
            shape = _shape(op.attributes["source_encoding"].value)
            slot = self.by_key.get((root, offset, math.prod(shape)))
            if slot is None:
                raise unimplemented(op, f"a result ({shape}) that no dispatch writes")
            self.env[op.results[0]] = (slot, shape)
        elif name == "util.return":
            for index, v in enumerate(operands):
                if v in self.arguments:  # an argument returned as it is
                    self.outputs.append(self.inputs[self.arguments[v]])
                    self.steps.append(host_program.ReturnInputStep(index, self.arguments[v]))
                    continue
                slot, shape = self.value(v)
                self.outputs.append(_f32(shape))
                self.steps.append(host_program.ExportStep(index, slot.index))
        else:
            raise unimplemented(op, f"{name} in the host schedule is not supported yet")

    def waits(self, op) -> tuple[int, ...]:
        return tuple(sorted({t for v in op.operands if str(v.type).startswith("!stream.timepoint")
                             for t in self.value(v)}))

    def slab_step(self, step_type, root, op, timepoint) -> None:
        """An alloca or dealloca of the slab `root`, signalling `timepoint`; which slots
        the slab holds is known once the whole function is walked (run)."""
        signal = next(self.timepoints)
        self.env[timepoint] = [signal]
        self.slab_steps[len(self.steps)] = root
        self.steps.append(step_type(self.waits(op), signal, ()))

    def execute(self, op) -> None:
        view = op.opview
        block = op.regions[0].blocks[0]
        for outer, inner in zip(view.resource_operands, block.arguments):
            self.env[inner] = self.value(outer)
        commands: list[host_program.Command] = []
        for child in block.operations:
            child = child.operation
            if child.name == "stream.cmd.concurrent":
                groups = [self.dispatch(d) for d in _children(child) if d.name != "stream.yield"]
            elif child.name == "stream.yield":
                continue
            else:
                groups = [self.dispatch(child)]
            # One launch of each dispatch per stage; a barrier between stages.
            for stage in itertools.zip_longest(*groups):
                commands.extend(c for c in stage if c is not None)
                commands.append(host_program.Barrier())
        signal = next(self.timepoints)
        self.env[op.results[0]] = [signal]
        self.steps.append(host_program.ExecuteStep(self.waits(op), signal, tuple(commands)))

    def dispatch(self, op) -> list[host_program.Dispatch]:
        if op.name != "stream.cmd.dispatch":
            raise unimplemented(op, f"{op.name} in a stream.cmd.execute is not supported yet (IREE makes copies and "
                                    f"fills of slices, concatenations and splats)")
        view = op.opview
        exe, _variant, export = _symbols(op.attributes["entry_points"][0])
        func = self.module.dispatches[(exe, export)]
        if list(view.workload):
            raise unimplemented(op, f"@{export} takes a workload (dynamic shapes); the bridge compiles static shapes")
        # Push constants are known here: IREE passes binding offsets through them when
        # one executable serves several call sites.
        constants = tuple(self.value(v) for v in view.uniform_operands)
        lowering = DispatchLowering(func, constants, self.module.options)
        slots = {}
        try:
            for (binding, sub_offset), shape in lowering.tensors().items():
                root, base = self.value(view.resources[binding])
                offset = base + self.value(view.resource_offsets[binding]) + sub_offset
                if root[0] == "global":  # constant weights: a module constant
                    data = np.frombuffer(self.module.globals[root[1]], np.float32, math.prod(shape), offset)
                    device_shape = Tensor(shape).device_shape
                    slots[(binding, sub_offset)] = (
                        _Constant(self.module.constant(data.reshape(shape), device_shape), shape, device_shape),
                        shape)
                    continue
                kind = host_program.SlotKind.input if root[0] == "input" else host_program.SlotKind.alloca
                slots[(binding, sub_offset)] = (self.slot(root, offset, shape, kind), shape)
            bound = {key: _bound(op, s, shape) for key, (s, shape) in slots.items() if s.device_shape is not None}
            cache_key = (exe, export, constants, tuple(sorted(bound.items())))
            if cache_key not in self.module.lowered:
                self.module.lowered[cache_key] = lowering.run(bound)
        except HalError as e:
            raise HalError(e.code, f"{e.message}\n  in dispatch @{export} at {location(op)}") from None
        lowering = self.module.lowered[cache_key]
        slots = {key: s for key, (s, _) in slots.items()}
        for binding, device_shape in lowering.outputs.items():
            if isinstance(slots[binding], _Constant):
                raise unimplemented(op, f"@{export} writes into a constant")
            if slots[binding].device_shape is None:
                slots[binding].device_shape = device_shape
        temps = {}
        for temp in lowering.temps:
            slot = Slot(len(self.slots), temp.shape, host_program.SlotKind.temp)
            slot.device_shape = temp.device_shape
            self.slots.append(slot)
            temps[temp.ref[1]] = slot

        def ref(operand) -> host_program.Binding:
            if isinstance(operand, tuple):  # ("mask", valid, axis): a mask tile of the device
                _, valid, axis = operand
                return host_program.MaskRef(valid, axis)
            kind, index = operand.ref
            if kind == "constant":  # a tensor constant of the dispatch
                return host_program.ConstantRef(self.module.constant(index, operand.device_shape))
            slot = (slots if kind in ("binding", "output") else temps)[index]
            if isinstance(slot, _Constant):
                return host_program.ConstantRef(slot.constant)
            return host_program.SlotRef(slot.index)

        return [host_program.Dispatch(self.module.kernel(launch.kernel), tuple(int(c) for c in launch.constants),
                                      tuple(ref(o) for o in launch.operands), launch.tiles)
                for launch in lowering.launches]


def lower_module(module, options: Options) -> tuple[list[host_program.Function], list, list[host_program.Constant]]:
    """(functions, exports, constants): the host program of every public function,
    the library exports their launches index, and the module constants."""
    lowering = ModuleLowering(module, options)
    return lowering.functions, lowering.exports(), lowering.constants

