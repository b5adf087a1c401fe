"""Compiled modules (.ttm): Tensix kernels plus the host program that runs them.

`tt_hal.compiler.compile_module` writes one; `hal.load_module(path_or_bytes, device)` loads
it, and each public function of the MLIR becomes a callable that takes and returns
numpy arrays of the function's tensor types:

    module = hal.load_module("mlp.ttm", device)
    y = module.main(x, w1, b1, w2, b2)           # one result: an array; several: a tuple

The file is a zip archive (as IREE's .vmfb is zip-readable): `module.json` holds
the host program (tt_hal/runtime/host_program.py), `kernels.ttx` the executable,
`source.mlir` the program it was compiled from, `constants/N.npy` the values of the
module constants. The host program is IREE's schedule: imports (row-major f32 ->
tiles in the module's data format), allocas, command buffers of dispatches and
barriers submitted with queue_execute on semaphores, deallocas, waits and exports
(tiles -> row-major f32).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import zipfile
import zlib

import numpy as np

from hal.buffer import HalBufferView
from hal.command_buffer import HalCommandBuffer
from hal.status import HalError, StatusCode
from tt_hal import ops
from tt_hal.kernels.common import workgroup_count
from tt_hal.runtime.host_program import (
    AllocaStep,
    Barrier,
    Command,
    ConstantRef,
    DeallocaStep,
    ExecuteStep,
    ExportStep,
    Function,
    ImportStep,
    MaskRef,
    ModuleRecord,
    ReturnInputStep,
    SlotKind,
    SlotRef,
    WaitStep,
)
from tt_hal.target.layout import Layout
from tt_hal.target.ttx import EXECUTABLE_FORMAT


def write_module(record: ModuleRecord, executable: bytes, source: str | None = None) -> bytes:
    """The .ttm bytes of a module's record (with its constants' values), its .ttx and
    the MLIR it was compiled from."""
    files = [("module.json", json.dumps(record.to_json(), indent=1).encode()), ("kernels.ttx", executable),
             ("source.mlir", source.encode() if source is not None else None)]
    for i, constant in enumerate(record.constants):
        npy = io.BytesIO()
        np.save(npy, constant.data, allow_pickle=False)
        files.append((_constant_file(i), npy.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            if data is not None:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible bytes
                archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def read_module(path_or_bytes) -> tuple[ModuleRecord, bytes, str | None]:
    """(record, .ttx bytes, source or None) of a .ttm file; INVALID_ARGUMENT if it is
    not one, or its record is malformed."""
    data = path_or_bytes
    if isinstance(path_or_bytes, (str, os.PathLike)):
        try:
            with open(path_or_bytes, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise HalError(StatusCode.NOT_FOUND, f"no module file {os.fspath(path_or_bytes)!r}") from None
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
            executable = archive.read("kernels.ttx")
            source = archive.read("source.mlir").decode() if "source.mlir" in archive.namelist() else None
            record = ModuleRecord.from_json(
                json.loads(archive.read("module.json")),
                lambda i: np.load(io.BytesIO(archive.read(_constant_file(i))), allow_pickle=False))
    except HalError:  # a malformed record, which says what is wrong (and is a ValueError too)
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, zlib.error, NotImplementedError) as e:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"not a tt-hal module (.ttm), or a damaged one: {e}") from None
    return record, executable, source


def _constant_file(index: int) -> str:
    return f"constants/{index}.npy"


def load_module(path_or_bytes, device) -> HalModule:
    """The HalModule of a .ttm file (a path or its bytes) on `device`; its constants are
    uploaded now. NOT_FOUND for a missing file, INVALID_ARGUMENT if it is not a .ttm."""
    record, executable, source = read_module(path_or_bytes)
    return HalModule(device, record, executable, source)


class HalModule:
    """A loaded module: its functions by name (`module.main`, `module["main"]`)."""

    def __init__(self, device, record: ModuleRecord, executable: bytes, source: str | None = None):
        self.device = device
        self.record = record
        self.source = source
        self.data_format = record.data_format
        self.executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, executable)
        self.functions = {f.name: HalModuleFunction(self, f) for f in record.functions}
        # Constant weights are uploaded once and live as long as the module.
        self.constants = [device.to_device(c.data.reshape(c.device_shape), self.data_format, Layout.TILE)
                          for c in record.constants]

    def __repr__(self) -> str:
        return f"<HalModule functions={list(self.functions)} data_format={self.data_format.name}>"

    def __getitem__(self, name: str) -> HalModuleFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise HalError(StatusCode.NOT_FOUND, f"no function {name!r} in the module; it has "
                                                 f"{', '.join(self.functions)}") from None

    def __getattr__(self, name: str):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    def lookup_function(self, name: str) -> HalModuleFunction:
        return self[name]


class HalModuleFunction:
    """One function of a module. `inputs` / `outputs`: [(shape, numpy dtype)]."""

    def __init__(self, module: HalModule, record: Function):
        self.module = module
        self.name = record.name
        self.record = record
        self.inputs = [(t.shape, t.dtype) for t in record.inputs]
        self.outputs = [(t.shape, t.dtype) for t in record.outputs]

    def __repr__(self) -> str:
        def sig(xs):
            return ", ".join(f"{d.name}{list(s)}" for s, d in xs)

        return f"<function {self.name}({sig(self.inputs)}) -> ({sig(self.outputs)})>"

    def check_arguments(self, arrays) -> list[np.ndarray]:
        """The arguments as arrays; INVALID_ARGUMENT unless they match the signature exactly."""
        if len(arrays) != len(self.inputs):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{self.name} takes {len(self.inputs)} arguments, "
                                                        f"got {len(arrays)}")
        checked = []
        for i, (array, (shape, dtype)) in enumerate(zip(arrays, self.inputs)):
            array = np.asarray(array)
            if array.shape != shape or array.dtype != dtype:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"{self.name}: argument {i} is {array.dtype.name}{list(array.shape)}; the function "
                               f"takes {dtype.name}{list(shape)}")
            checked.append(array)
        return checked

    def __call__(self, *arrays):
        outputs = self.invoke(self.check_arguments(arrays))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def invoke(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Runs the host program: the steps in order, each queue operation waiting on
        and signalling the semaphores of its timepoints."""
        device, module = self.module.device, self.module
        fmt = module.data_format
        slots = self.record.slots
        views: list[HalBufferView | None] = [None] * len(slots)
        semaphores: dict[int, object] = {}
        outputs: list = [None] * len(self.outputs)

        def allocate(index):
            views[index] = device.allocator.allocate_tensor(slots[index].device_shape, fmt, Layout.TILE)

        def waits(step):
            return [(semaphores[t], 1) for t in step.wait]

        def signal(step):
            semaphores[step.signal] = device.create_semaphore(0)
            return [(semaphores[step.signal], 1)]

        try:
            for index, slot in enumerate(slots):
                if slot.kind is SlotKind.temp:
                    allocate(index)
            for step in self.record.steps:
                match step:
                    case ImportStep():
                        array = arrays[step.input].reshape(slots[step.slot].device_shape)
                        views[step.slot] = device.to_device(array, fmt, Layout.TILE)
                    case AllocaStep():
                        for index in step.slots:
                            allocate(index)
                        semaphores[step.signal] = device.create_semaphore(1)  # allocated now, on the host
                    case ExecuteStep():
                        device.queue_execute(self._command_buffer(step.commands, views), waits(step), signal(step))
                    case DeallocaStep():
                        for index in step.slots:
                            device.queue_dealloca(views[index].get_buffer(), waits(step), [])
                            views[index] = None
                        device.queue_barrier(waits(step), signal(step))
                    case WaitStep():
                        ops.wait_done(waits(step), self.name)
                    case ReturnInputStep():
                        outputs[step.output] = arrays[step.input].copy()
                    case ExportStep():
                        shape = self.outputs[step.output][0]
                        outputs[step.output] = views[step.slot].to_host(np.float32).reshape(shape)
        finally:
            # Nothing may be freed while a submission still uses it: wait for each, failed or not.
            for semaphore in semaphores.values():
                with contextlib.suppress(HalError):
                    ops.wait_done([(semaphore, 1)], self.name)
            for view in views:
                if view is not None:
                    view.get_buffer().release()
        return outputs

    def _command_buffer(self, commands: tuple[Command, ...], views) -> HalCommandBuffer:
        device = self.module.device
        command_buffer = HalCommandBuffer(device)
        for command in commands:
            if isinstance(command, Barrier):
                command_buffer.execution_barrier()
                continue
            buffers = []
            for ref in command.bindings:
                match ref:
                    case SlotRef():
                        view = views[ref.slot]
                    case ConstantRef():
                        view = self.module.constants[ref.constant]
                    case MaskRef():  # the mask tiles the library's kernels bind
                        view = ops.mask_tile(device, ref.valid, ref.axis)
                buffers.append(view.get_buffer())
            command_buffer.dispatch(self.module.executable, command.kernel,
                                    workgroup_count(command.tiles, device.arch.worker_cores),
                                    np.array(command.constants, np.uint32).tobytes(), buffers)
        command_buffer.end()
        return command_buffer
