"""The .ttx executable format: a size-prefixed FlatBuffer (schema tt_hal/target/ttx.fbs,
file identifier TTX0 at bytes 8..12) holding exports, each a Tensix program.
`write_executable` and `read_executable` convert between bytes and
tt_hal.target.program.Export objects; any malformed input is INVALID_ARGUMENT, never a crash.
The size prefix lets a truncated or extended file be told from a whole one.
"""

from __future__ import annotations

import flatbuffers
import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target import ttx_generated as fb
from tt_hal.target.isa import WIDTH, MathFidelity, Processor
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import (
    ArgKind,
    CircularBufferConfig,
    Export,
    Kernel,
    KernelConfig,
    Program,
    RuntimeArg,
    Stage,
)

EXECUTABLE_FORMAT = "tenstorrent-ttx-fb"  # the format name executable caches accept (IREE's hal.executable.format)
FILE_IDENTIFIER = b"TTX0"
VERSION = 1


def _vector(builder, start, values, prepend) -> int:
    start(builder, len(values))
    for value in reversed(values):
        prepend(int(value))
    return builder.EndVector()


def _write_kernel(builder, kernel: Kernel, args) -> int:
    name = builder.CreateString(kernel.name)
    code = builder.CreateNumpyVector(np.ascontiguousarray(kernel.code, np.int64).reshape(-1))
    compile_args = builder.CreateNumpyVector(np.array(kernel.compile_args, np.int64))
    kinds = builder.CreateNumpyVector(np.array([int(a.kind) for a in args], np.uint8))
    values = builder.CreateNumpyVector(np.array([a.value for a in args], np.int64))
    fb.KernelStart(builder)
    fb.KernelAddName(builder, name)
    fb.KernelAddProcessor(builder, int(kernel.processor))
    fb.KernelAddCode(builder, code)
    fb.KernelAddCompileArgs(builder, compile_args)
    fb.KernelAddMathFidelity(builder, int(kernel.config.math_fidelity))
    fb.KernelAddFp32DestAccEn(builder, kernel.config.fp32_dest_acc_en)
    fb.KernelAddMathApproxMode(builder, kernel.config.math_approx_mode)
    fb.KernelAddDstFullSyncEn(builder, kernel.config.dst_full_sync_en)
    fb.KernelAddRuntimeArgKinds(builder, kinds)
    fb.KernelAddRuntimeArgValues(builder, values)
    return fb.KernelEnd(builder)


def _write_export(builder, export: Export) -> int:
    program = export.program
    name = builder.CreateString(export.name)
    kernels = [_write_kernel(builder, k, a) for k, a in zip(program.kernels, program.runtime_args)]
    cbs = []
    for cb in program.circular_buffers:
        fb.CircularBufferStart(builder)
        fb.CircularBufferAddIndex(builder, cb.index)
        fb.CircularBufferAddDataFormat(builder, int(cb.data_format))
        fb.CircularBufferAddPageSize(builder, cb.page_size)
        fb.CircularBufferAddNumPages(builder, cb.num_pages)
        cbs.append(fb.CircularBufferEnd(builder))
    workgroup = builder.CreateNumpyVector(np.array(export.workgroup_size, np.uint32))
    kernel_vector = _vector(builder, fb.ExportStartKernelsVector, kernels, builder.PrependUOffsetTRelative)
    cb_vector = _vector(builder, fb.ExportStartCircularBuffersVector, cbs, builder.PrependUOffsetTRelative)
    fb.ExportStart(builder)
    fb.ExportAddName(builder, name)
    fb.ExportAddConstantCount(builder, export.constant_count)
    fb.ExportAddBindingCount(builder, export.binding_count)
    fb.ExportAddWorkgroupSize(builder, workgroup)
    fb.ExportAddCircularBuffers(builder, cb_vector)
    fb.ExportAddKernels(builder, kernel_vector)
    return fb.ExportEnd(builder)


def write_executable(exports: list[Export]) -> bytes:
    builder = flatbuffers.Builder(1024)
    offsets = [_write_export(builder, export) for export in exports]
    vector = _vector(builder, fb.ExecutableStartExportsVector, offsets, builder.PrependUOffsetTRelative)
    fb.ExecutableStart(builder)
    fb.ExecutableAddVersion(builder, VERSION)
    fb.ExecutableAddExports(builder, vector)
    builder.FinishSizePrefixed(fb.ExecutableEnd(builder), FILE_IDENTIFIER)
    return bytes(builder.Output())


def _numpy(vector, length: int, dtype) -> np.ndarray:
    return np.array(vector, dtype) if length else np.zeros(0, dtype)


def _read_kernel(k) -> tuple[Kernel, tuple[RuntimeArg, ...]]:
    code = _numpy(k.CodeAsNumpy(), k.CodeLength(), np.int64)
    if code.size % WIDTH:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"kernel code of {code.size} words is not a multiple of {WIDTH}")
    config = KernelConfig(MathFidelity(k.MathFidelity()), k.Fp32DestAccEn(), k.MathApproxMode(), k.DstFullSyncEn())
    kernel = Kernel((k.Name() or b"").decode(), Processor(k.Processor()), code.reshape(-1, WIDTH),
                    tuple(int(v) for v in _numpy(k.CompileArgsAsNumpy(), k.CompileArgsLength(), np.int64)), config)
    kinds = _numpy(k.RuntimeArgKindsAsNumpy(), k.RuntimeArgKindsLength(), np.uint8)
    values = _numpy(k.RuntimeArgValuesAsNumpy(), k.RuntimeArgValuesLength(), np.int64)
    if kinds.shape != values.shape:
        raise HalError(StatusCode.INVALID_ARGUMENT, "runtime arg kinds and values differ in length")
    return kernel, tuple(RuntimeArg(ArgKind(int(a)), int(v)) for a, v in zip(kinds, values))


def _read_export(e) -> Export:
    kernels = [_read_kernel(e.Kernels(i)) for i in range(e.KernelsLength())]
    cbs = []
    for i in range(e.CircularBuffersLength()):
        cb = e.CircularBuffers(i)
        cbs.append(CircularBufferConfig(cb.Index(), DataFormat(cb.DataFormat()), cb.PageSize(), cb.NumPages()))
    workgroup = tuple(int(v) for v in _numpy(e.WorkgroupSizeAsNumpy(), e.WorkgroupSizeLength(), np.uint32))
    if len(workgroup) != 3:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"workgroup size has {len(workgroup)} dimensions, not 3")
    program = Program(tuple(cbs), tuple(k for k, _ in kernels), tuple(a for _, a in kernels))
    return Export((e.Name() or b"").decode(), e.ConstantCount(), e.BindingCount(), workgroup, (Stage(program),))


def read_executable(data) -> list[Export]:
    """The exports of a .ttx file; INVALID_ARGUMENT for anything malformed."""
    data = bytes(data)
    if len(data) < 12 or data[8:12] != FILE_IDENTIFIER:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"not a .ttx executable: {len(data)} bytes without the TTX0 file identifier")
    size = int.from_bytes(data[:4], "little")
    if size != len(data) - 4:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"malformed .ttx executable: {len(data)} bytes, but its size prefix says {size + 4} "
                       f"(truncated or extended)")
    try:
        root = fb.Executable.GetRootAs(data, 4)
        if root.Version() != VERSION:
            raise HalError(StatusCode.INVALID_ARGUMENT, f".ttx version {root.Version()}; this reader knows {VERSION}")
        return [_read_export(root.Exports(i)) for i in range(root.ExportsLength())]
    except HalError as error:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"malformed .ttx executable: {error.message}") from None
    except Exception as error:  # any damage the FlatBuffers reader trips over
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"malformed .ttx executable ({type(error).__name__}: {error})") from None
