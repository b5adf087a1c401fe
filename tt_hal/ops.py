"""Eager ops on device tensors, the way TTNN users work: each takes and returns
TILE-layout HalBufferViews (from `device.to_device(..., layout="tile")`) and runs as
a real dispatch: a program of the kernel library, written to .ttx, prepared by the
device's executable cache, recorded in a command buffer and executed on the compute
queue. Ops return when the dispatch is done; a failed dispatch raises its error.

    c = tt_hal.ops.add(a, b)                  # b may be a row (1, W), column (H, 1) or scalar
    y = tt_hal.ops.matmul(a, w, math_fidelity="LoFi")
    z = tt_hal.ops.gelu(y)
"""

from __future__ import annotations

import math

import numpy as np

from hal.buffer import HalBufferView
from hal.command_buffer import BindingRef, HalCommandBuffer
from hal.status import HalError, StatusCode
from tt_hal.kernels import eltwise, normalization, reduce

# aliased: ops.matmul and ops.transpose are this module's own names
from tt_hal.kernels import matmul as matmul_kernel
from tt_hal.kernels import transpose as transpose_kernel
from tt_hal.kernels.common import MASK_FORMAT, mask_values, workgroup_count
from tt_hal.target.isa import INTEGER_OPERANDS, INTEGER_RESULTS, Broadcast, MathFidelity, ReduceKind, SfpuOp
from tt_hal.target.layout import DataFormat, Layout
from tt_hal.target.placement import DRAM_MEMORY_CONFIG, MemoryConfig
from tt_hal.target.sizes import TILE, ceil_div
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

HANG_TIMEOUT_NS = 600 * 10**9  # device work that takes longer has hung: the wait gives up


def _device(*views: HalBufferView):
    device = None
    for view in views:
        if not isinstance(view, HalBufferView) or view.spec is None:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"tt_hal.ops take device tensors (device.to_device), got {view!r}")
        if view.spec.layout is not Layout.TILE:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"tt_hal.ops take TILE-layout tensors; this one is {view.spec.layout.name}: "
                           f"{view.spec.describe()}")
        owner = view.get_buffer().allocation.device
        if device is not None and owner is not device:
            raise HalError(StatusCode.INVALID_ARGUMENT, "tt_hal.ops inputs live on different devices")
        device = owner
    return device


def _executable(device, key, build):
    return device.cached(("tt_hal.ops", key), lambda: device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([build()])))


def _cores(device, grid) -> int:
    if grid is None:
        return device.arch.worker_cores
    count = math.prod(grid) if isinstance(grid, tuple) else int(grid)
    if not 1 <= count <= device.arch.worker_cores:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"grid {grid} asks for {count} cores; the device has {device.arch.worker_cores}")
    return count


def _run(device, executable, tiles: int, constants, views, grid) -> None:
    count = workgroup_count(tiles, _cores(device, grid))
    constant_bytes = np.array(constants, np.uint32).tobytes()
    key = ("tt_hal.ops.dispatch", executable, count, constant_bytes, len(views))
    command_buffer = device.cached(key, lambda: _recorded_dispatch(device, executable, count, constant_bytes,
                                                                   len(views)))
    device.execute_now(command_buffer, [v.get_buffer() for v in views], timeout=HANG_TIMEOUT_NS)


def _recorded_dispatch(device, executable, count, constants: bytes, binding_count: int) -> HalCommandBuffer:
    """A reusable command buffer of one dispatch whose bindings are binding-table slots
    0..binding_count-1: recorded once per program and shape (workgroup count and push
    constants), then executed over each call's tensors, as IREE's host code reuses
    recordings (recording and its validation cost more than the dispatch of a tile)."""
    command_buffer = HalCommandBuffer(device, binding_capacity=binding_count)
    command_buffer.dispatch(executable, 0, count, constants, [BindingRef(slot) for slot in range(binding_count)])
    command_buffer.end()
    return command_buffer


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
    executable = _executable(device, key, lambda: eltwise.eltwise_binary(
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
    """An SFPU op by name (tt_hal.target.isa.SfpuOp: exp, log, sqrt, rsqrt, recip, relu, gelu,
    sigmoid, tanh, silu, neg, abs, square, sin, cos, add_scalar, mul_scalar, power,
    leaky_relu)."""
    device = _device(a)
    try:
        op = SfpuOp[name.upper()]
    except KeyError:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"unknown unary op {name!r}") from None
    if op >= SfpuOp.ADD:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{name} is a binary SFPU op")
    if op in INTEGER_OPERANDS or op in INTEGER_RESULTS:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{name} is an integer SFPU op: eager unary ops run float ops "
                                                    f"(integer ones run in compiled dispatches)")
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    executable = _executable(device, ("unary", op, float(parameter), a.spec.dtype, out_format),
                             lambda: eltwise.eltwise_unary(op, a.spec.dtype, out_format, parameter))
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
abs = _unary_op("abs")  # shadows the builtin, as ttnn's name does


def matmul(a, b, *, math_fidelity="HiFi4", fp32_dest_acc_en: bool = False, dtype=None, memory_config=None,
           grid=None):
    """a (M, K) @ b (K, N), tiled; output tiles spread over the grid's cores."""
    device = _device(a, b)
    if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"matmul of {a.shape} and {b.shape}: expected (M, K) @ (K, N)")
    fidelity = _fidelity(math_fidelity)
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    key = ("matmul", a.spec.dtype, b.spec.dtype, out_format, fidelity, bool(fp32_dest_acc_en))
    executable = _executable(device, key, lambda: matmul_kernel.matmul(
        a.spec.dtype, b.spec.dtype, out_format, math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest_acc_en))
    out = _output(device, (a.shape[0], b.shape[1]), out_format, memory_config)
    m_tiles, n_tiles = out.spec.page_grid
    k_tiles = a.spec.page_grid[1]
    _run(device, executable, m_tiles * n_tiles, [m_tiles * n_tiles, k_tiles, n_tiles, m_tiles, 0], (a, b, out),
         grid)
    return out


# ---- Reductions, transpose, softmax and normalisations ----

def _dim(a, dim: int, allowed: tuple[int, ...], what: str) -> int:
    """`dim` as a negative index; UNIMPLEMENTED outside `allowed`."""
    rank = len(a.shape)
    if not -rank <= dim < rank:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: dim {dim} out of range for shape {a.shape}")
    negative = dim - rank if dim >= 0 else dim
    if negative not in allowed:
        raise HalError(StatusCode.UNIMPLEMENTED, f"{what} over dim {dim} of shape {a.shape}: the kernel library "
                                                 "works on the last "
                                                 f"{'two dimensions' if len(allowed) > 1 else 'dimension'}"
                                                 f" (dim {' or '.join(str(d) for d in allowed)})")
    return negative


def mask_tile(device, valid: int, axis: int) -> HalBufferView:
    """The bf16 mask tile the library's kernels mask padding with: 1.0 in the first
    `valid` columns (axis -1) or rows (axis -2), 0.0 elsewhere. One per device."""
    def build():
        return device.to_device(mask_values(valid, axis), MASK_FORMAT, "tile", DRAM_MEMORY_CONFIG)
    return device.cached(("tt_hal.ops.mask_tile", valid, axis), build)


def _reduction(kind_rows: ReduceKind, a, dim, dtype, memory_config, grid, fp32_dest_acc_en):
    device = _device(a)
    what = f"{'max' if kind_rows >= ReduceKind.MAX_ROW else 'sum'}"
    dim = _dim(a, dim, (-1, -2) if len(a.shape) >= 2 else (-1,), what)
    kind = ReduceKind(int(kind_rows) + (dim == -2))  # *_ROW reduces along a row (the last dim), *_COL a column
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    extent = a.shape[dim]
    valid = extent % TILE
    if extent == 0:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what} over an empty dimension of {a.shape}")
    shape = list(a.shape)
    shape[dim] = 1
    out = _output(device, tuple(shape), out_format, memory_config)
    rows, tiles_per_row = a.spec.page_grid
    if dim == -1:
        constants = [rows, tiles_per_row, 1]
    else:
        height_tiles = ceil_div(extent, TILE)
        constants = [rows // height_tiles * tiles_per_row, height_tiles, tiles_per_row]
    columns = a.shape[-1] % TILE if dim == -2 else 0  # padding columns of the output, zeroed
    key = ("reduce", kind, a.spec.dtype, out_format, bool(valid), bool(columns), fp32_dest_acc_en)
    executable = _executable(device, key, lambda: reduce.reduce(kind, a.spec.dtype, out_format, bool(valid),
                                                                bool(columns), fp32_dest_acc_en))
    masks = ((mask_tile(device, valid, dim),) if valid else ()) + ((mask_tile(device, columns, -1),) if columns else ())
    views = (a, *masks, out)
    _run(device, executable, constants[0], constants, views, grid)
    return out


def sum(a, dim: int = -1, *, dtype=None, memory_config=None, grid=None, fp32_dest_acc_en: bool = False):
    """Sum over dim -1 or -2, kept as size 1 (the tile-layout result: each row's sum
    in column 0, or each column's in row 0)."""
    return _reduction(ReduceKind.SUM_ROW, a, dim, dtype, memory_config, grid, fp32_dest_acc_en)


def max(a, dim: int = -1, *, dtype=None, memory_config=None, grid=None, fp32_dest_acc_en: bool = False):
    """Maximum over dim -1 or -2, kept as size 1."""
    return _reduction(ReduceKind.MAX_ROW, a, dim, dtype, memory_config, grid, fp32_dest_acc_en)


def transpose(a, dim0: int = -2, dim1: int = -1, *, dtype=None, memory_config=None, grid=None):
    """Swaps the last two dimensions (transpose_wh_tile on every tile)."""
    device = _device(a)
    if len(a.shape) < 2 or {_dim(a, dim0, (-1, -2), "transpose"), _dim(a, dim1, (-1, -2), "transpose")} != {-1, -2}:
        raise HalError(StatusCode.UNIMPLEMENTED, f"transpose of dims ({dim0}, {dim1}) of shape {a.shape}: the kernel "
                                                 f"library swaps the last two dimensions")
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    out = _output(device, tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), out_format, memory_config)
    fp32 = DataFormat.float32 in (a.spec.dtype, out_format)  # a float32 copy stays exact in an fp32 Dst
    executable = _executable(device, ("transpose", a.spec.dtype, out_format),
                             lambda: transpose_kernel.transpose(a.spec.dtype, out_format, fp32_dest_acc_en=fp32))
    height_tiles, width_tiles = ceil_div(out.shape[-2], TILE), ceil_div(out.shape[-1], TILE)
    tiles = out.spec.num_pages
    _run(device, executable, tiles, [tiles, height_tiles, width_tiles], (a, out), grid)
    return out


def _row_op(name: str, a, constants: list, dtype, memory_config, grid, key: tuple, build) -> HalBufferView:
    """Runs a row program of the library (softmax, layernorm, rmsnorm) on `a`'s tile
    rows; `key` names the program's build parameters besides the formats."""
    device = _device(a, *constants)
    width = a.shape[-1]
    for c in constants:
        if c.shape[-1] != width or math.prod(c.shape[:-1]) != 1:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{name}: gamma and beta must be rows of {width} elements "
                                                        f"((W,) or (1, W)), got {c.shape}")
    out_format = DataFormat.parse(dtype) if dtype is not None else a.spec.dtype
    valid = width % TILE
    key = (name, a.spec.dtype, out_format, width, *key) + tuple(c.spec.dtype for c in constants)
    executable = _executable(device, key, lambda: build(out_format, bool(valid)))
    out = _output(device, a.shape, out_format, memory_config)
    rows, tiles_per_row = a.spec.page_grid
    views = (a, *constants) + ((mask_tile(device, valid, -1),) if valid else ()) + (out,)
    _run(device, executable, rows, [rows, tiles_per_row], views, grid)
    return out


def softmax(a, dim: int = -1, *, dtype=None, memory_config=None, grid=None, fp32_dest_acc_en: bool = False):
    """softmax over the last dimension: exp(x - max) / sum, one tile row at a time."""
    _device(a)
    _dim(a, dim, (-1,), "softmax")
    return _row_op("softmax", a, [], dtype, memory_config, grid, (fp32_dest_acc_en,),
                   lambda out, masked: normalization.softmax(a.spec.dtype, out, a.shape[-1], masked, fp32_dest_acc_en))


def _norm(rms: bool, a, gamma, beta, eps, dtype, memory_config, grid, fp32_dest_acc_en):
    constants = [c for c in (gamma, beta) if c is not None]
    name = "rmsnorm" if rms else "layernorm"
    key = (float(eps), gamma is not None, beta is not None, fp32_dest_acc_en)
    return _row_op(name, a, constants, dtype, memory_config, grid, key, lambda out, masked: normalization.layernorm(
        a.spec.dtype, out, a.shape[-1], float(eps), gamma.spec.dtype if gamma is not None else None,
        beta.spec.dtype if beta is not None else None, rms, masked, fp32_dest_acc_en))


def layernorm(a, gamma=None, beta=None, eps: float = 1e-5, *, dtype=None, memory_config=None, grid=None,
              fp32_dest_acc_en: bool = False):
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last dimension."""
    return _norm(False, a, gamma, beta, eps, dtype, memory_config, grid, fp32_dest_acc_en)


def rmsnorm(a, gamma=None, beta=None, eps: float = 1e-5, *, dtype=None, memory_config=None, grid=None,
            fp32_dest_acc_en: bool = False):
    """x / sqrt(mean(x^2) + eps) * gamma (+ beta) over the last dimension."""
    return _norm(True, a, gamma, beta, eps, dtype, memory_config, grid, fp32_dest_acc_en)
