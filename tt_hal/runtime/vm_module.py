"""The IREE VM module `tt`: a `.vmfb` running in `iree.runtime` calls ops that run
on the tenstorrent device (docs/hal-api.md, "IREE VM module `tt`").

Each op is exported twice, in the two forms IREE's native ABI gives an import
(tt_hal/compiler/src/iree/compiler/Bindings/Native/Transforms/WrapEntryPoints.cpp):

    tt.<op>         sync:          (!hal.buffer_view...) -> !hal.buffer_view
    tt.<op>$async   coarse-fences: (!hal.buffer_view..., !hal.fence wait, !hal.fence signal) -> !hal.buffer_view

An op reads its iree buffer views on the host, puts them on the tenstorrent device
as TILE tensors in `dtype`, runs the eager op of `tt_hal.ops` and returns the result in
a new buffer view from the calling iree device's allocator, with the element type
of its first argument. The async form blocks its caller until the wait fence is
reached (or fails it after `timeout_ns`), runs the op, then signals the signal
fence; on any error it fails the signal fence too, so nothing waits on it forever.
"""

from __future__ import annotations

import iree.runtime as rt
import numpy as np

from hal.device import HalDevice
from hal.driver import get_device
from hal.status import HalError, StatusCode
from tt_hal import ops

MODULE_NAME = "tt"
ASYNC_SUFFIX = "$async"
LAYERNORM_EPS = 1e-5
# Element types an op accepts: it computes in `dtype` on the device, so only floats.
FLOAT_TYPES = (rt.HalElementType.FLOAT_32, rt.HalElementType.FLOAT_16, rt.HalElementType.BFLOAT_16)

# name -> (number of buffer-view arguments, op on device tensors)
OPS = {
    "matmul": (2, lambda a, b: ops.matmul(a, b)),
    "add": (2, lambda a, b: ops.add(a, b)),
    "mul": (2, lambda a, b: ops.mul(a, b)),
    "relu": (1, lambda a: ops.relu(a)),
    "exp": (1, lambda a: ops.exp(a)),
    "softmax": (1, lambda a: ops.softmax(a, -1)),
    "layernorm": (3, lambda x, gamma, beta: ops.layernorm(x, gamma, beta, LAYERNORM_EPS)),
}


def create_tt_module(instance: rt.VmInstance, device: HalDevice | None = None, *, dtype="bfloat16",
                     iree_device: rt.HalDevice | None = None, timeout_ns: int = ops.HANG_TIMEOUT_NS) -> rt.VmModule:
    """The `tt` module, to register in VmContexts of `instance` next to the hal module
    and the program (a PyModuleInterface module is not bound to one instance; the
    argument keeps create_hal_module's form).

    device: the tenstorrent device the ops run on (default hal.get_device()).
    iree_device: the iree.runtime device of the calling contexts; results are
        allocated with its allocator (default iree.runtime.get_device("local-task"),
        the device rt.Config("local-task") uses).
    timeout_ns: how long the async form waits for its wait fence.
    """
    if not isinstance(instance, rt.VmInstance):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"create_tt_module needs an iree.runtime.VmInstance, "
                                                    f"got {instance!r}")
    module = _TtModule(device if device is not None else get_device(),
                       iree_device if iree_device is not None else rt.get_device("local-task"), dtype, timeout_ns)
    # The constructor runs once per context; every context shares `module` (it holds no per-context state).
    iface = rt.PyModuleInterface(MODULE_NAME, lambda _iface: module)
    for name, (arity, _op) in OPS.items():
        iface.export(name, "0" + "r" * arity + "_r", _sync_entry(name))
        iface.export(name + ASYNC_SUFFIX, "0" + "r" * (arity + 2) + "_r", _async_entry(name))
    return iface.create()


def _sync_entry(name: str):
    def call(module: _TtModule, *refs):
        return module.run(name, refs)
    return call


def _async_entry(name: str):
    def call(module: _TtModule, *refs):
        *views, wait, signal = refs
        return module.run_async(name, views, wait, signal)
    return call


class _TtModule:
    def __init__(self, device: HalDevice, iree_device: rt.HalDevice, dtype, timeout_ns: int):
        self.device = device
        self.iree_device = iree_device
        self.dtype = dtype
        self.timeout_ns = timeout_ns

    def run(self, name: str, refs) -> rt.VmRef:
        """The op on buffer views (VmRefs); any failure as a HalError naming the op."""
        try:
            views = [_buffer_view(ref, i) for i, ref in enumerate(refs)]
            element_type = rt.HalElementType(views[0].element_type)  # the view gives a plain int
            arrays = [_to_numpy(view, i, element_type) for i, view in enumerate(views)]
            tensors = [self.device.to_device(array, self.dtype, "tile") for array in arrays]
            result = OPS[name][1](*tensors).to_host(np.float32)
            return self._buffer_view(result, element_type).ref
        except Exception as error:
            code = error.code if isinstance(error, HalError) else StatusCode.INTERNAL
            message = error.message if isinstance(error, HalError) else f"{type(error).__name__}: {error}"
            raise HalError(code, f"{MODULE_NAME}.{name}: {message}") from error

    def run_async(self, name: str, refs, wait: rt.VmRef | None, signal: rt.VmRef | None) -> rt.VmRef:
        """Waits for `wait`, runs the op, signals `signal`; a null fence means "already
        reached" (wait) or "nobody waits" (signal), as the compiler passes them."""
        signal_fence = signal.deref(rt.HalFence, True) if signal is not None else None
        try:
            wait_fence = wait.deref(rt.HalFence, True) if wait is not None else None
            # HalFence.wait releases the GIL, so the thread that signals it can run.
            if wait_fence is not None and not wait_fence.wait(timeout=self.timeout_ns):
                raise HalError(StatusCode.DEADLINE_EXCEEDED, f"{MODULE_NAME}.{name}{ASYNC_SUFFIX}: the wait fence "
                                                             f"was not reached in {self.timeout_ns / 1e9:g} s")
            result = self.run(name, refs)
        except Exception as error:
            if signal_fence is not None:
                signal_fence.fail(str(error))
            if isinstance(error, HalError):
                raise
            # A failed wait fence: iree.runtime raises a RuntimeError carrying the failure.
            raise HalError(StatusCode.ABORTED, f"{MODULE_NAME}.{name}{ASYNC_SUFFIX}: {error}") from error
        if signal_fence is not None:
            signal_fence.signal()
        return result

    def _buffer_view(self, array: np.ndarray, element_type) -> rt.HalBufferView:
        dtype = np.dtype(rt.HalElementType.map_to_dtype(element_type))
        return self.iree_device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
            device=self.iree_device, buffer=np.ascontiguousarray(array, dtype), element_type=element_type)


def _buffer_view(ref, index: int) -> rt.HalBufferView:
    view = ref.deref(rt.HalBufferView, True) if ref is not None else None
    if view is None:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"argument {index} is not a !hal.buffer_view: {ref!r}")
    return view


def _to_numpy(view: rt.HalBufferView, index: int, element_type) -> np.ndarray:
    """A float32 copy of the view's contents (read through a host mapping)."""
    if view.element_type != int(element_type) or element_type not in FLOAT_TYPES:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"argument {index} has element type {rt.HalElementType(view.element_type).name}; the arguments "
                       f"must share one of {', '.join(t.name for t in FLOAT_TYPES)}")
    if not view.get_buffer().memory_type() & int(rt.MemoryType.HOST_VISIBLE):
        raise HalError(StatusCode.UNIMPLEMENTED, f"argument {index} is not in host-visible memory")
    mapped = view.map()
    return np.array(mapped.asarray(view.shape, np.dtype(rt.HalElementType.map_to_dtype(element_type))), np.float32)
