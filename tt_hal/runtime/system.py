"""Loading and calling a `.vmfb` on device "tenstorrent", with the names of
iree.runtime's system API (`iree/runtime/system_api.py`):

    from tt_hal import runtime
    module = runtime.load_vm_flatbuffer_file("model.vmfb", driver="tenstorrent")
    y = module.main(x, w)                       # numpy (or hal.HalBufferView) in, numpy out

    config = runtime.Config("tenstorrent://mock?arch=blackhole_p150")
    context = runtime.SystemContext(config=config)
    context.add_vm_module(runtime.VmModule.copy_buffer(config.vm_instance, vmfb))
    context.modules.module.main(x, w)

iree.runtime's own VM runs the program; its `hal` imports go to the `hal` module of
tt_hal/runtime/hal_module.py on a tenstorrent HalDevice. A function declared
`coarse-fences` (iree-turbine's `$async` entry points) is called with a wait fence
already reached and a signal fence the call waits for, as iree.runtime does.
Arguments are numpy arrays (copied to the device), hal.HalBufferViews of the same
device, Python ints and floats; results come back as numpy arrays (buffer views
read to the host) and numbers. Errors are hal.HalErrors with IREE's status codes.
"""

from __future__ import annotations

import os
import re
import types

import iree.runtime as rt
import numpy as np

import hal
from hal.buffer import HalBufferView
from hal.driver import parse_uri
from hal.status import HalError, StatusCode
from hal.types import BufferUsage, HalElementType, MemoryType
from tt_hal.runtime.bytecode import check_bytecode
from tt_hal.runtime.hal_module import create_hal_module
from tt_hal.runtime.signature import parse_declaration

DRIVER = "tenstorrent"
# "CODE; message" in the text of a VM failure; a hal import's own error ends at "; while calling import".
_CODES = "|".join(code.name for code in StatusCode)
# What iree.runtime raises for a failed status: ValueError for INVALID_ARGUMENT, IndexError for
# OUT_OF_RANGE (e.g. its bytecode verifier's "global byte_offset out of range"), RuntimeError otherwise.
VM_ERRORS = (RuntimeError, ValueError, IndexError)
_STATUS = re.compile(r"\b(" + _CODES + r")\b;\s*([^\n]*?)(?:; while calling import.*)?$", re.M)


def open_device(driver_name: str | None = None) -> hal.HalDevice:
    """The tenstorrent device programs run on: "tenstorrent" (the default) or a device
    URI; INVALID_ARGUMENT for another driver's."""
    uri = driver_name or DRIVER
    if parse_uri(uri)[0] != DRIVER:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"driver {uri!r}: tt-hal runs programs on '{DRIVER}' devices")
    return hal.get_device(uri)


class VmModule:
    """iree.runtime.VmModule's constructor from a .vmfb's bytes, checked first: IREE's
    verifier lets through damage that crashes the process (tt_hal/runtime/bytecode.py)."""

    @staticmethod
    def copy_buffer(instance: rt.VmInstance, buffer) -> rt.VmModule:
        """The module (what a SystemContext takes); INVALID_ARGUMENT for a damaged file."""
        check_bytecode(buffer)
        try:
            module = rt.VmModule.copy_buffer(instance, buffer)
        except VM_ERRORS as error:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"not a .vmfb (IREE VM flatbuffer): {error}") from None
        try:  # IREE's loader checks no name's encoding, and binding or naming the module in a message decodes them
            module.name, module.function_names  # noqa: B018 - read to decode
        except (RuntimeError, UnicodeError) as error:  # nanobind raises either for bytes that are not UTF-8
            raise HalError(StatusCode.INVALID_ARGUMENT, f"damaged .vmfb: the module's name or a function's name is "
                                                        f"not UTF-8 ({error})") from None
        return module


class Config:
    """A VM instance and the tenstorrent device programs run on (iree.runtime.Config's
    role). `driver_name` is "tenstorrent" or a device URI; `device` a HalDevice."""

    def __init__(self, driver_name: str | None = None, *, device: hal.HalDevice | None = None):
        self.vm_instance = rt.VmInstance()
        self.device = open_device(driver_name) if device is None else device
        self.hal_module, self.hal_state = create_hal_module(self.device)


class SystemContext:
    """A VM context of the `hal` module and the programs (iree.runtime.SystemContext)."""

    def __init__(self, vm_modules=None, config: Config | None = None):
        self.config = config if config is not None else Config()
        self._modules: list[rt.VmModule] = []
        self.vm_context = None
        self.modules = types.SimpleNamespace()
        for module in vm_modules or ():
            self.add_vm_module(module)

    @property
    def instance(self) -> rt.VmInstance:
        return self.config.vm_instance

    def add_vm_module(self, vm_module: rt.VmModule) -> None:
        self._modules.append(vm_module)
        try:
            self.vm_context = rt.VmContext(self.instance, modules=[self.config.hal_module, *self._modules])
        except VM_ERRORS as error:
            self._modules.pop()
            raise _load_error(vm_module, error) from None
        setattr(self.modules, vm_module.name, BoundModule(self, vm_module))


class BoundModule:
    """A program's functions by name: `module.main(...)`, `module["main"](...)`."""

    def __init__(self, context: SystemContext, vm_module: rt.VmModule):
        self._context = context
        self.vm_module = vm_module
        self.name = vm_module.name
        self._functions: dict[str, FunctionInvoker] = {}  # looked up once: `module.main(x)` per call is common

    def __getattr__(self, name: str) -> FunctionInvoker:
        if name.startswith("_"):
            raise AttributeError(name)  # private state, and copy/pickle probing for protocols; module["_f"] works
        try:
            return self[name]
        except HalError as error:
            if error.code != StatusCode.NOT_FOUND:
                raise  # a function there but damaged is the program's error, not a missing attribute
            raise AttributeError(error.message) from None

    def __getitem__(self, name: str) -> FunctionInvoker:
        if name not in self._functions:
            function = self.vm_module.lookup_function(name)
            if function is None:
                raise HalError(StatusCode.NOT_FOUND, f"no function {name!r} in module {self.name!r}; functions: "
                                                     f"{', '.join(self.function_names) or 'none'}")
            self._functions[name] = FunctionInvoker(self._context, function)
        return self._functions[name]

    @property
    def device(self) -> hal.HalDevice:
        """The device the program runs on."""
        return self._context.config.device

    @property
    def function_names(self) -> list[str]:
        return [n for n in self.vm_module.function_names if not n.startswith("__")]

    def __repr__(self) -> str:
        return f"<BoundModule {self.name} on {self._context.config.device!r}>"


class FunctionInvoker:
    """Calls one function of a program in its context."""

    def __init__(self, context: SystemContext, function):
        self._context = context
        self.function = function
        try:  # a damaged .vmfb's strings may not decode (nanobind raises RuntimeError)
            self.name = function.name
            reflection = dict(function.reflection)
        except (RuntimeError, UnicodeError) as error:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"a function's name or reflection metadata does not decode "
                                                        f"({error}): a damaged .vmfb") from None
        self.coarse_fences = reflection.get("iree.abi.model") == "coarse-fences"
        self.declaration = reflection.get("iree.abi.declaration", "")
        # The argument and result types (TensorType; None where the declaration gives none).
        try:
            self.inputs, self.results = parse_declaration(self.declaration)
        except HalError as error:
            raise HalError(error.code, f"function {self.name!r}: its iree.abi.declaration does not parse: "
                                       f"{error.message} (a damaged .vmfb)") from None

    def __repr__(self) -> str:
        return f"<FunctionInvoker {self.declaration or self.name}>"

    def __call__(self, *args):
        config = self._context.config
        handles = config.hal_state.handles
        first_handle = handles.next_id
        try:
            return self._invoke(config, handles, args)
        finally:
            # The call's buffers go now (failed or not), not at a later sweep: memory is free
            # for the next call, which then gets the same addresses (and the dispatches'
            # cached binding tables).
            handles.sweep(first_handle)

    def _invoke(self, config, handles, args):
        arguments = rt.VmVariantList(len(args) + 2)
        for index, value in enumerate(args):
            _push(arguments, handles, config.device, value, index)
        done = None
        if self.coarse_fences:
            reached = hal.HalFence.create_at(config.device.create_semaphore(1), 1)
            done = hal.HalFence.create_at(config.device.create_semaphore(0), 1)
            arguments.push_ref(handles.wrap(reached))
            arguments.push_ref(handles.wrap(done))
        results = rt.VmVariantList(4)
        try:
            self._context.vm_context.invoke(self.function, arguments, results)
        except VM_ERRORS as error:
            raise _call_error(self.name, error) from None
        if done is not None:
            done.wait()
        values = [_result(handles, results.get_variant(k), k) for k in range(results.size)]
        return values[0] if len(values) == 1 else tuple(values) if values else None


def _push(arguments: rt.VmVariantList, handles, device, value, index: int) -> None:
    if isinstance(value, (bool, np.bool_)):
        arguments.push_int(int(value))
    elif isinstance(value, (int, np.integer)):
        arguments.push_int(int(value))
    elif isinstance(value, (float, np.floating)):
        arguments.push_float(float(value))
    elif isinstance(value, HalBufferView):
        arguments.push_ref(handles.wrap(value))
    else:
        array = np.asarray(value, order="C")
        try:
            element_type = HalElementType.from_dtype(array.dtype)
        except ValueError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"argument {index}: numpy dtype {array.dtype} has no IREE "
                                                        f"element type") from None
        view = device.allocator.allocate_buffer_copy(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT | BufferUsage.MAPPING,
                                                     device, array, element_type)
        arguments.push_ref(handles.wrap(view))


def _result(handles, value, index: int):
    if isinstance(value, (int, float)) or value is None:
        return value
    view = handles.get(value, HalBufferView, f"result {index}")
    return view.to_host()


def _status(error: Exception) -> tuple[StatusCode, str]:
    """IREE's status code and message out of the text of a VM failure."""
    text = str(error)
    for match in _STATUS.finditer(text):
        if match.group(1) != "UNKNOWN":
            return StatusCode[match.group(1)], match.group(2).strip()
    return StatusCode.INTERNAL, text


def _call_error(name: str, error: Exception) -> HalError:
    code, message = _status(error)
    return HalError(code, f"{name}: {message}")


def _load_error(vm_module: rt.VmModule, error: Exception) -> HalError:
    code, message = _status(error)
    text = str(error)
    if "not found or unavailable" in text or "signature mismatch between module and source hal" in text or \
            "required module 'hal' version mismatch" in text:
        return HalError(StatusCode.INVALID_ARGUMENT, f"module {vm_module.name!r} was not compiled for the tenstorrent "
                                                     f"device (compile it with `tt-hal compile` or "
                                                     f"tt_hal.compiler.compile_vmfb): {message}")
    return HalError(code, f"module {vm_module.name!r} does not load: {message}")


def load_vm_module(vm_module: rt.VmModule, config: Config | None = None) -> BoundModule:
    context = SystemContext(vm_modules=[vm_module], config=config)
    return getattr(context.modules, vm_module.name)


def load_vm_flatbuffer(vm_flatbuffer: bytes, *, driver: str | None = None,
                       device: hal.HalDevice | None = None) -> BoundModule:
    """A .vmfb's functions, callable on a tenstorrent device (`driver`: "tenstorrent" or a
    URI; or an open `device`, which programs may share)."""
    config = Config(driver, device=device)
    return load_vm_module(VmModule.copy_buffer(config.vm_instance, vm_flatbuffer), config)


def load_vm_flatbuffer_file(path: str | os.PathLike, *, driver: str | None = None,
                            device: hal.HalDevice | None = None) -> BoundModule:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise HalError(StatusCode.NOT_FOUND, f"no .vmfb file {os.fspath(path)!r}") from None
    return load_vm_flatbuffer(data, driver=driver, device=device)
