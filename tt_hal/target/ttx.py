"""The .ttx executable format: a size-prefixed FlatBuffer (schema tt_hal/target/ttx.fbs,
file identifier TTX0 at bytes 8..12) holding exports, each a sequence of stages
(Tensix programs) and the tensors they share. `write_executable` and
`read_executable` convert between bytes and tt_hal.target.program.Export objects;
any malformed input is INVALID_ARGUMENT, never a crash. The size prefix lets a
truncated or extended file be told from a whole one.
"""

from __future__ import annotations

import math

import flatbuffers
import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target import ttx_generated as fb
from tt_hal.target.isa import WIDTH, MathFidelity, Processor
from tt_hal.target.layout import DataFormat, Layout
from tt_hal.target.program import (
    ArgKind,
    BindingSource,
    CircularBufferConfig,
    Export,
    ExportTensor,
    Kernel,
    KernelConfig,
    Program,
    RuntimeArg,
    Stage,
)

EXECUTABLE_FORMAT = "tenstorrent-ttx-fb"  # the format name executable caches accept (IREE's hal.executable.format)
FILE_IDENTIFIER = b"TTX0"
VERSION = 8  # 1: one program per export; 2: stages and tensors; 3: SFPU ops renumbered (binary from 64);
# 4: integer SFPU ops, ternary ops from 128, UNARY_BCAST; 5: L1_LOAD, row-major export tensors;
# 6: instructions of 9 operands (MATMUL_BLOCK), NOC_READ_SPAN/NOC_WRITE_SPAN, their rows (NOC_READ_ROWS/
# NOC_WRITE_ROWS), NOC_GATHER of rows, WORKGROUP_RANGE; 7: ADD_BLOCK, SUB_BLOCK, MUL_BLOCK, PACK_TILES;
# 8: tensor views (Tensor.base, first_page)


def _vector(builder, start, values, prepend) -> int:
    start(builder, len(values))
    for value in reversed(values):
        prepend(value)
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


def _write_stage(builder, stage: Stage) -> int:
    program = stage.program
    kernels = [_write_kernel(builder, k, a) for k, a in zip(program.kernels, program.runtime_args)]
    cbs = []
    for cb in program.circular_buffers:
        fb.CircularBufferStart(builder)
        fb.CircularBufferAddIndex(builder, cb.index)
        fb.CircularBufferAddDataFormat(builder, int(cb.data_format))
        fb.CircularBufferAddPageSize(builder, cb.page_size)
        fb.CircularBufferAddNumPages(builder, cb.num_pages)
        cbs.append(fb.CircularBufferEnd(builder))
    kernel_vector = _vector(builder, fb.StageStartKernelsVector, kernels, builder.PrependUOffsetTRelative)
    cb_vector = _vector(builder, fb.StageStartCircularBuffersVector, cbs, builder.PrependUOffsetTRelative)
    # Absent (None) and empty differ: absent is the dispatch's.
    workgroup = None if stage.workgroup_count is None else \
        builder.CreateNumpyVector(np.array(stage.workgroup_count, np.uint32))
    constants = None if stage.constants is None else _vector(
        builder, fb.StageStartConstantsVector, stage.constants,
        lambda c: fb.CreateStageConstant(builder, int(c.kind), c.value))
    bindings = None if stage.bindings is None else _vector(
        builder, fb.StageStartBindingsVector, stage.bindings,
        lambda b: fb.CreateStageBinding(builder, int(b[0]), b[1]))
    fb.StageStart(builder)
    fb.StageAddCircularBuffers(builder, cb_vector)
    fb.StageAddKernels(builder, kernel_vector)
    if workgroup is not None:
        fb.StageAddWorkgroupCount(builder, workgroup)
    if constants is not None:
        fb.StageAddConstants(builder, constants)
    if bindings is not None:
        fb.StageAddBindings(builder, bindings)
    return fb.StageEnd(builder)


def _value_words(tensor: ExportTensor) -> np.ndarray:
    """A tensor's values as the .ttx keeps them: float32, or an integer format's values
    as the float32 of the same 32 bits (two's complement)."""
    if tensor.data_format.is_integer:
        words = (np.asarray(tensor.values).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
        return words.reshape(-1).view(np.float32)
    return np.ascontiguousarray(tensor.values, np.float32).reshape(-1)


def _write_tensor(builder, tensor: ExportTensor) -> int:
    shape = builder.CreateNumpyVector(np.array(tensor.shape, np.uint32))
    values = None if tensor.values is None else builder.CreateNumpyVector(_value_words(tensor))
    fb.TensorStart(builder)
    fb.TensorAddShape(builder, shape)
    fb.TensorAddDataFormat(builder, int(tensor.data_format))
    fb.TensorAddLayout(builder, int(tensor.layout))
    if values is not None:
        fb.TensorAddValues(builder, values)
    if tensor.base is not None:
        fb.TensorAddBase(builder, tensor.base)
        fb.TensorAddFirstPage(builder, tensor.first_page)
    return fb.TensorEnd(builder)


def _write_export(builder, export: Export) -> int:
    name = builder.CreateString(export.name)
    stages = [_write_stage(builder, stage) for stage in export.stages]
    tensors = [_write_tensor(builder, tensor) for tensor in export.tensors]
    workgroup = builder.CreateNumpyVector(np.array(export.workgroup_size, np.uint32))
    stage_vector = _vector(builder, fb.ExportStartStagesVector, stages, builder.PrependUOffsetTRelative)
    tensor_vector = _vector(builder, fb.ExportStartTensorsVector, tensors, builder.PrependUOffsetTRelative)
    source = builder.CreateString(export.source) if export.source else None
    fb.ExportStart(builder)
    fb.ExportAddName(builder, name)
    fb.ExportAddConstantCount(builder, export.constant_count)
    fb.ExportAddBindingCount(builder, export.binding_count)
    fb.ExportAddWorkgroupSize(builder, workgroup)
    fb.ExportAddStages(builder, stage_vector)
    fb.ExportAddTensors(builder, tensor_vector)
    if source is not None:
        fb.ExportAddSource(builder, source)
    return fb.ExportEnd(builder)


def write_executable(exports: list[Export]) -> bytes:
    builder = flatbuffers.Builder(1024)
    offsets = [_write_export(builder, export) for export in exports]
    vector = _vector(builder, fb.ExecutableStartExportsVector, offsets, builder.PrependUOffsetTRelative)
    fb.ExecutableStart(builder)
    builder.ForceDefaults(True)  # the version is stored even when it is the schema's default, so later readers
    fb.ExecutableAddVersion(builder, VERSION)  # (whose default is newer) can tell it; version 1 left it out
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


def _uints(vector, length: int, what: str, count: int | None = None) -> tuple[int, ...]:
    """A uint32 vector as ints; INVALID_ARGUMENT unless it has `count` of them (when given)."""
    values = tuple(int(v) for v in _numpy(vector, length, np.uint32))
    if count is not None and len(values) != count:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what} has {len(values)} dimensions, not {count}")
    return values


def _read_stage(s) -> Stage:
    kernels = [_read_kernel(s.Kernels(i)) for i in range(s.KernelsLength())]
    cbs = []
    for i in range(s.CircularBuffersLength()):
        cb = s.CircularBuffers(i)
        cbs.append(CircularBufferConfig(cb.Index(), DataFormat(cb.DataFormat()), cb.PageSize(), cb.NumPages()))
    program = Program(tuple(cbs), tuple(k for k, _ in kernels), tuple(a for _, a in kernels))
    # An absent vector is the dispatch's (None); an empty one is none.
    workgroup_count = None if s.WorkgroupCountIsNone() else \
        _uints(s.WorkgroupCountAsNumpy(), s.WorkgroupCountLength(), "a stage's workgroup count", 3)
    constants = None if s.ConstantsIsNone() else tuple(
        RuntimeArg(ArgKind(c.Kind()), c.Value()) for c in map(s.Constants, range(s.ConstantsLength())))
    bindings = None if s.BindingsIsNone() else tuple(
        (BindingSource(b.Source()), b.Index()) for b in map(s.Bindings, range(s.BindingsLength())))
    return Stage(program, workgroup_count, constants, bindings)


def _read_tensor(t) -> ExportTensor:
    shape = _uints(t.ShapeAsNumpy(), t.ShapeLength(), "a tensor shape")
    values = None
    if not t.ValuesIsNone():
        values = _numpy(t.ValuesAsNumpy(), t.ValuesLength(), np.float32)
        if values.size != math.prod(shape):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"a tensor of shape {shape} with {values.size} values")
        values = values.reshape(shape)
    data_format = DataFormat(t.DataFormat())
    if values is not None and data_format.is_integer:
        values = values.view(np.int32).astype(data_format.host_dtype)
    if t.Layout() not in set(Layout):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"a tensor of layout {t.Layout()}: layouts are "
                                                    f"{', '.join(f'{v.name} ({int(v)})' for v in Layout)}")
    return ExportTensor(shape, data_format, values, Layout(t.Layout()), None if t.Base() < 0 else t.Base(),
                        t.FirstPage())


def _read_export(e) -> Export:
    name = (e.Name() or b"").decode()
    if e.StagesIsNone():  # written by every version since 2 (empty for a dynamic export)
        raise HalError(StatusCode.INVALID_ARGUMENT, f"export {name} has no stages vector: a damaged .ttx")
    workgroup = _uints(e.WorkgroupSizeAsNumpy(), e.WorkgroupSizeLength(), "workgroup size", 3)
    return Export(name, e.ConstantCount(), e.BindingCount(), workgroup,
                  tuple(_read_stage(e.Stages(i)) for i in range(e.StagesLength())),
                  tuple(_read_tensor(e.Tensors(i)) for i in range(e.TensorsLength())), (e.Source() or b"").decode())


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
