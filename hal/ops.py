"""Eager ops on device tensors, the way TTNN users work: each takes and returns
TILE-layout HalBufferViews (from `device.to_device(..., layout="tile")`) and runs as
a real dispatch: a program of the kernel library, written to .ttx, prepared by the
device's executable cache, recorded in a command buffer and executed on the compute
queue. Ops return when the dispatch is done; a failed dispatch raises its error.

    c = hal.ops.add(a, b)                  # b may be a row (1, W), column (H, 1) or scalar
    y = hal.ops.matmul(a, w, math_fidelity="LoFi")
    z = hal.ops.gelu(y)
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from hal import library
from hal.buffer import HalBufferView
from hal.command_buffer import HalCommandBuffer
from hal.isa import Broadcast, MathFidelity, SfpuOp
from hal.layout import DataFormat, Layout
from hal.placement import MemoryConfig
from hal.status import HalError, StatusCode
from hal.ttx import write_executable

WAIT_NS = 600 * 10**9  # a dispatch that takes longer has hung; the wait gives up
_EXECUTABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # device -> {key: HalExecutable}


def _device(*views: HalBufferView):
    device = None
    for view in views:
        if not isinstance(view, HalBufferView) or view.spec is None:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"hal.ops take device tensors (device.to_device), got {view!r}")
        if view.spec.layout is not Layout.TILE:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"hal.ops take TILE-layout tensors; this one is {view.spec.layout.name}: "
                           f"{view.spec.describe()}")
        owner = view.get_buffer().allocation.device
        if device is not None and owner is not device:
            raise HalError(StatusCode.INVALID_ARGUMENT, "hal.ops inputs live on different devices")
        device = owner
    return device


def _executable(device, key, build):
    cache = _EXECUTABLES.setdefault(device, {})
    if key not in cache:
        cache[key] = device.create_executable_cache().prepare_executable(
            "tenstorrent-ttx-fb", write_executable([build()]))
    return cache[key]


def _cores(device, grid) -> int:
    if grid is None:
        return device.arch.worker_cores
    count = math.prod(grid) if isinstance(grid, tuple) else int(grid)
    if not 1 <= count <= device.arch.worker_cores:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"grid {grid} asks for {count} cores; the device has {device.arch.worker_cores}")
    return count


def _run(device, executable, tiles: int, constants, views, grid) -> None:
    command_buffer = HalCommandBuffer(device)
    command_buffer.dispatch(executable, 0, (max(1, min(_cores(device, grid), tiles)), 1, 1),
                            np.array(constants, np.uint32).tobytes(), [v.get_buffer() for v in views])
    command_buffer.end()
    done = device.create_semaphore(0)
    device.queue_execute(command_buffer, [], [(done, 1)])
    if not done.wait(1, timeout=WAIT_NS):
        raise HalError(StatusCode.DEADLINE_EXCEEDED, f"dispatch did not finish within {WAIT_NS // 10**9} s")


def _output(device, shape, dtype, memory_config: MemoryConfig | None) -> HalBufferView:
    return device.allocator.allocate_tensor(shape, dtype, Layout.TILE, memory_config)


def _fidelity(math_fidelity) -> MathFidelity:
    if isinstance(math_fidelity, str):
        try:
            return MathFidelity[math_fidelity]
        except KeyError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"unknown math fidelity {math_fidelity!r}; expected one of "
                                                        f"{', '.join(MathFidelity.__members__)}") from None
    return MathFidelity(math_fidelity)


def _broadcast(a, b) -> Broadcast:
    if b.shape == a.shape:
        return Broadcast.NONE
    if math.prod(b.shape) == 1:
        return Broadcast.SCALAR
    if b.shape[-1] == a.shape[-1] and math.prod(b.shape[:-1]) == 1:
        return Broadcast.ROW
    if len(b.shape) == len(a.shape) and b.shape[:-1] == a.shape[:-1] and b.shape[-1] == 1:
        return Broadcast.COL
    raise HalError(StatusCode.INVALID_ARGUMENT,
                   f"cannot broadcast {b.shape} against {a.shape}: b must have a's shape, be a row (1, W), a column "
                   f"(..., H, 1) with a's outer and H dimensions, or one element")


def _binary(op: str, a, b, dtype, memory_config, math_fidelity, grid):
    device = _device(a, b)
    broadcast = _broadcast(a, b)
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    fidelity = _fidelity(math_fidelity)
    key = ("binary", op, a.spec.dtype, b.spec.dtype, out_format, broadcast, fidelity)
    executable = _executable(device, key, lambda: library.eltwise_binary(
        op, a.spec.dtype, b.spec.dtype, out_format, broadcast, math_fidelity=fidelity))
    out = _output(device, a.shape, out_format, memory_config)
    tiles = out.spec.num_pages
    _run(device, executable, tiles, [tiles, out.spec.page_grid[1]], (a, b, out), grid)
    return out


def add(a, b, *, dtype=None, memory_config=None, grid=None):
    return _binary("add", a, b, dtype, memory_config, MathFidelity.HiFi4, grid)


def sub(a, b, *, dtype=None, memory_config=None, grid=None):
    return _binary("sub", a, b, dtype, memory_config, MathFidelity.HiFi4, grid)


def mul(a, b, *, dtype=None, memory_config=None, math_fidelity="HiFi4", grid=None):
    return _binary("mul", a, b, dtype, memory_config, math_fidelity, grid)


def unary(name: str, a, parameter: float = 0.0, *, dtype=None, memory_config=None, grid=None):
    """An SFPU op by name (hal.isa.SfpuOp: exp, log, sqrt, rsqrt, recip, relu, gelu,
    sigmoid, tanh, silu, neg, abs, square, sin, cos, add_scalar, mul_scalar, power,
    leaky_relu)."""
    device = _device(a)
    try:
        op = SfpuOp[name.upper()]
    except KeyError:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"unknown unary op {name!r}") from None
    if op >= SfpuOp.ADD:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{name} is a binary SFPU op")
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    executable = _executable(device, ("unary", op, float(parameter), a.spec.dtype, out_format),
                             lambda: library.eltwise_unary(op, a.spec.dtype, out_format, parameter))
    out = _output(device, a.shape, out_format, memory_config)
    _run(device, executable, out.spec.num_pages, [out.spec.num_pages], (a, out), grid)
    return out


def _unary_op(name: str):
    def op(a, *, dtype=None, memory_config=None, grid=None):
        return unary(name, a, dtype=dtype, memory_config=memory_config, grid=grid)
    op.__name__ = name
    op.__doc__ = f"{name}(a) on the SFPU."
    return op


exp, log, sqrt, rsqrt, recip, relu, gelu, sigmoid, tanh, silu, neg = (
    _unary_op(n) for n in ("exp", "log", "sqrt", "rsqrt", "recip", "relu", "gelu", "sigmoid", "tanh", "silu", "neg"))
abs = _unary_op("abs")  # noqa: A001 (ttnn's name)


def matmul(a, b, *, math_fidelity="HiFi4", fp32_dest_acc_en: bool = False, dtype=None, memory_config=None,
           grid=None):
    """a (M, K) @ b (K, N), tiled; output tiles spread over the grid's cores."""
    device = _device(a, b)
    if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"matmul of {a.shape} and {b.shape}: expected (M, K) @ (K, N)")
    fidelity = _fidelity(math_fidelity)
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    key = ("matmul", a.spec.dtype, b.spec.dtype, out_format, fidelity, bool(fp32_dest_acc_en))
    executable = _executable(device, key, lambda: library.matmul(
        a.spec.dtype, b.spec.dtype, out_format, math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest_acc_en))
    out = _output(device, (a.shape[0], b.shape[1]), out_format, memory_config)
    m_tiles, n_tiles = out.spec.page_grid
    k_tiles = a.spec.page_grid[1]
    _run(device, executable, m_tiles * n_tiles, [m_tiles * n_tiles, k_tiles, n_tiles], (a, b, out), grid)
    return out
