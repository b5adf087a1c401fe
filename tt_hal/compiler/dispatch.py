"""One IREE dispatch -> one staged export of the .ttx.

IREE binds a dispatch's tensors as byte ranges of row-major data. The kernel library
computes on tiles, so a dispatch runs as stages (tt_hal.target.program.Stage), in
order:

1. each tensor the dispatch loads is tilized (tt_hal.kernels.rowmajor.tilize) from its
   binding into a scratch tile tensor of the export;
2. the dispatch's linalg ops run as library launches (tt_hal.compiler.lowering) on
   scratch tile tensors, with constant tensors and mask tiles as export tensors that
   hold values;
3. each tensor it stores is untilized from its scratch tiles into its binding.

A last fused elementwise launch writing an output untilizes it itself, and tilizes the
whole unbroadcast bindings that only it loads (fused.eltwise_fused_untilized:
_untilized_output): an elementwise dispatch is one stage. Matmul, fused elementwise,
transpose and reduce launches read the small bindings only they load as tiles of their
rows (rowmajor.read_row_tiles: _row_major_operands), without their tilize stages, and
write the small outputs only they write to their rows (write_row_tiles:
_row_major_outputs), without their untilize stages.

A tensor of shape (..., M, N) is tiled as a batch of (M, N) matrices (TILE layout);
vectors are rows. IREE collapses elementwise dispatches to 1-D: when every tensor of
a dispatch is 1-D and of one size, they are folded to a matrix that pads least.
Stages have their own grids (a workgroup per worker core, at most one per tile) and
push constants: literals, and a binding's byte offset inside its range, a literal or
the dispatch's push constant (IREE passes offsets so where call sites share an
executable).
The compute format is float32 (tiles reach the FPU as tf32, and its multiplier sees
bf16: docs/fidelity.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re

import numpy as np
from iree.compiler import ir

from hal.status import HalError, StatusCode
from tt_hal.compiler.lowering import (
    ROW_TILE_READS,
    DispatchLowering,
    Launch,
    Options,
    PushConstant,
    Tensor,
    Window,
    build_kernel,
    loaded,
    location,
)
from tt_hal.kernels import fused, rowmajor
from tt_hal.kernels.common import MASK_FORMAT, mask_values, strip_tiles, workgroup_count
from tt_hal.target.arch import DEFAULT_ARCH, get_arch
from tt_hal.target.isa import Broadcast, MathFidelity
from tt_hal.target.layout import DataFormat, Layout
from tt_hal.target.program import ArgKind, BindingSource, Export, ExportTensor, RuntimeArg, Stage
from tt_hal.target.sizes import TILE, ceil_div, tile_count

OPTIONS = Options(DataFormat.float32, MathFidelity.HiFi4)
FORMAT = OPTIONS.data_format
CORES = get_arch(DEFAULT_ARCH).worker_cores  # a stage's grid: one workgroup per core; more cores run it in rounds
MAX_FOLDED_COLUMNS = 4096
ROW_ELEMENTS = 1024  # a row-major export tensor's row: a 4 KB page of 4-byte elements


def pipeline_layout(export) -> tuple[int, int]:
    """(push constants, bindings) of a hal.executable.export's pipeline layout."""
    text = str(export.attributes["layout"])
    constants = re.search(r"constants\s*=\s*(\d+)", text)
    return int(constants.group(1)) if constants else 0, text.count("#hal.pipeline.binding<")


def fold(n: int) -> tuple[int, int]:
    """The (rows, columns) of n elements (columns dividing n) with the fewest tiles;
    of those, the widest."""
    best = (1, n)
    for columns in range(1, min(n, MAX_FOLDED_COLUMNS) + 1):
        if n % columns == 0:
            rows = n // columns
            cost = ceil_div(rows, TILE) * ceil_div(columns, TILE)
            if cost <= ceil_div(best[0], TILE) * ceil_div(best[1], TILE):
                best = (rows, columns)
    return best


@functools.cache
def _library(kernel: tuple) -> Export:
    return build_kernel(kernel)


# A stage adds no window to a byte offset that is a push constant: such a dispatch is lowered for
# each call's push constants instead (tt_hal/compiler/vmfb.py).
PUSH_CONSTANT_WINDOW = "a slice of a binding whose byte offset IREE passes as a push constant"


@functools.cache
def _rowmajor(builder, data_format: DataFormat) -> Export:
    return builder(data_format, offsets=True)


def _constants(values) -> tuple[RuntimeArg, ...]:
    """A stage's push constants: uint32 literals, and the dispatch's own (PushConstant)."""
    constants = []
    for v in values:
        if isinstance(v, PushConstant):
            constants.append(RuntimeArg(ArgKind.CONSTANT, v.ordinal))
        elif 0 <= int(v) < 1 << 32:
            constants.append(RuntimeArg(ArgKind.LITERAL, int(v)))
        else:
            raise HalError(StatusCode.UNIMPLEMENTED, f"a push constant of {v}: stage constants are uint32")
    return tuple(constants)


def _matrices(device_shape) -> tuple[int, int, int]:
    """(batches, rows, columns) of a tile tensor's device shape."""
    return math.prod(device_shape[:-2]), device_shape[-2], device_shape[-1]


class _ExportBuilder:
    """Export tensors and stages, as the dispatch's lowering asks for them."""

    def __init__(self):
        self.tensors: list[ExportTensor] = []
        self.stages: list[Stage] = []
        self.index: dict = {}  # what a tensor is for -> its index

    def tensor(self, key, shape, data_format: DataFormat, values=None, layout: Layout = Layout.TILE) -> int:
        if key not in self.index:
            self.index[key] = len(self.tensors)
            self.tensors.append(ExportTensor(tuple(shape), data_format, values, layout))
        return self.index[key]

    def view(self, key, shape, data_format: DataFormat, base: int, first_page: int) -> int:
        """A tile tensor that is the pages of tensor `base` from `first_page` on."""
        if key not in self.index:
            self.index[key] = len(self.tensors)
            self.tensors.append(ExportTensor(tuple(shape), data_format, base=base, first_page=first_page))
        return self.index[key]

    def row_major_tensor(self, tensor: Tensor, default_format: DataFormat) -> int:
        """A row-major export tensor (a gather's source or table): the elements of the
        tensor's device shape in order, in rows of ROW_ELEMENTS (pages of 4 KB)."""
        data_format = tensor.data_format or default_format
        n = math.prod(tensor.device_shape)
        shape = (ceil_div(n, ROW_ELEMENTS), ROW_ELEMENTS)
        values = None
        if tensor.ref[0] == "constant":
            values = np.zeros(math.prod(shape), np.int32 if data_format.is_integer else np.float32)
            values[:n] = np.asarray(tensor.ref[1]).reshape(-1)
            values = values.reshape(shape)
            key = ("rows", data_format, values.tobytes())
        else:
            key = tensor.ref
        return self.tensor(key, shape, data_format, values, Layout.ROW_MAJOR)

    def row_major(self, builder, device_shape, data_format: DataFormat, offset: int | PushConstant,
                  bindings, window: Window | None = None) -> None:
        """A tilize or untilize stage between a binding (at byte `offset` of its range,
        a literal or the dispatch's push constant; the slice `window` of it) and a tile
        tensor."""
        constants = _row_constants(device_shape, data_format, offset, window)
        self.stages.append(Stage(_rowmajor(builder, data_format).program, workgroup_count(constants[0], CORES),
                                 _constants(constants), bindings))

    def launch(self, launch: Launch, operand_binding, rows: tuple[bool, ...] = (), row_output=None) -> None:
        """`launch` as a stage; with `rows` (_row_major_operands), reading the operands
        rows marks from their bindings (row-major, as loaded) instead of from tilize
        stages; with `row_output` ((output key, window): _row_major_outputs) writing its
        output row-major into that binding instead of through an untilize stage."""
        kernel, constants, bindings = launch.kernel, list(launch.constants), []
        for k, operand in enumerate(launch.operands[:-1]):
            if k < len(rows) and rows[k]:
                constants += _row_tile_constants(operand, operand.ref[1][1], operand.window)
                bindings.append((BindingSource.DISPATCH, operand.ref[1][0]))
            else:
                bindings.append(operand_binding(operand))
        if row_output is None:
            bindings.append(operand_binding(launch.operands[-1]))
        else:
            key, window = row_output
            constants += _row_tile_constants(launch.operands[-1], key[1], window)
            bindings.append((BindingSource.DISPATCH, key[0]))
        if rows or row_output is not None:
            kernel += (rows or (False,) * len(_row_tile_inputs(launch)), row_output is not None)
        export = _library(kernel)
        self.stages.append(Stage(export.program, workgroup_count(launch.tiles, CORES), _constants(constants),
                                 tuple(bindings)))

    def untilized(self, launch: Launch, key, rows: tuple[bool, ...], device_shape, window: Window | None,
                  operand_binding, row_tiles: tuple[bool, ...] = ()) -> None:
        """The fused elementwise `launch` writing output `key` row-major itself, and reading
        the inputs `rows` marks from their bindings' rows and those `row_tiles` marks as
        tiles of their rows (fused.eltwise_fused_untilized), in place of it, the output's
        untilize stage and those inputs' tilize stages."""
        inputs = _fused_operands(launch)
        row_tiles = row_tiles or (False,) * len(inputs)
        export = _library(_untilized_kernel(launch, rows, row_tiles))
        constants = _row_constants(device_shape, launch.kernel[4], key[1], window)
        offsets = [t.ref[1][1] for t, is_rows in zip(inputs, rows) if is_rows]
        constants = constants[:rowmajor.OFFSET_CONSTANTS] + offsets + constants[rowmajor.OFFSET_CONSTANTS:]
        constants += launch.constants[3:]  # the code's scalars
        for t, is_row_tiles in zip(inputs, row_tiles):
            if is_row_tiles:
                constants += _row_tile_constants(t, t.ref[1][1], t.window)
        bindings = tuple((BindingSource.DISPATCH, t.ref[1][0]) if is_rows or is_row_tiles else operand_binding(t)
                         for t, is_rows, is_row_tiles in zip(inputs, rows, row_tiles))
        self.stages.append(Stage(export.stages[0].program, workgroup_count(constants[0], CORES),
                                 _constants(constants), bindings + ((BindingSource.DISPATCH, key[0]),)))


def _untilized_kernel(launch: Launch, rows: tuple[bool, ...], row_tiles: tuple[bool, ...]) -> tuple:
    """The library kernel of a last fused `launch` that writes its output row-major
    (_ExportBuilder.untilized)."""
    _, _, fused_inputs, code, out_format, _, _, fp32_dest = launch.kernel
    return "eltwise_fused_untilized", fused_inputs, rows, code, out_format, fp32_dest, row_tiles


def _row_tile_constants(tensor: Tensor, offset: int | PushConstant, window: Window | None) -> list:
    """The push constants of a tensor a kernel reads or writes as tiles of its binding's
    rows (rowmajor.read_row_tiles, write_row_tiles), at byte `offset` or the slice `window`."""
    return rowmajor.row_tile_constants(_row_constants(tensor.device_shape, tensor.data_format or FORMAT, offset,
                                                      window))


def _row_constants(device_shape, data_format: DataFormat, offset: int | PushConstant,
                   window: Window | None) -> list:
    """The push constants of a row-major program (rowmajor.push_constants) over a tile
    tensor's matrices at byte `offset` of a binding's range, or at the slice `window` of it."""
    batches, rows, columns = _matrices(device_shape)
    if window is None:
        return rowmajor.push_constants(rows, columns, [offset], batches)
    if isinstance(offset, PushConstant):  # one constant: the offset IREE passes, the window at its start
        if window.start:
            raise HalError(StatusCode.UNIMPLEMENTED, PUSH_CONSTANT_WINDOW)
        start = offset
    else:
        start = offset + window.start * data_format.element_size
    return rowmajor.push_constants(rows, columns, [start], batches,
                                   window.row_stride, window.batch_stride, window.segment, window.segment_stride,
                                   window.row_group, window.row_group_stride)


def lower_export(export_op, func) -> Export:
    """The staged export of a hal.executable.export whose function is `func`."""
    name = ir.StringAttr(export_op.attributes["sym_name"]).value
    constant_count, binding_count = pipeline_layout(export_op)
    return lower_function(name, constant_count, binding_count, func, location(export_op))


def lower_function(name: str, constant_count: int, binding_count: int, func, where: str) -> Export:
    """The staged export `name` of dispatch function `func` (at `where`, for errors)."""
    try:
        return _lowered(name, constant_count, binding_count, func)
    except HalError as e:
        raise HalError(e.code, f"{e.message}\n  in dispatch @{name} at {where}") from None
    except Exception as e:  # a bug here, not in the program: said so, with the dispatch, the cause chained
        raise HalError(StatusCode.INTERNAL, f"tt-hal's compiler failed on dispatch @{name} at {where}: "
                                            f"{type(e).__name__}: {e} (a bug in tt-hal: please report it "
                                            f"with the program)") from e


def _lowered(name: str, constant_count: int, binding_count: int, func) -> Export:
    lowering = DispatchLowering(func, OPTIONS)
    accesses = lowering.tensors()  # (binding, byte offset) -> shape
    lowering.run(_folded(accesses))
    out = _ExportBuilder()
    lowering.launches, batched = _gather_batches(lowering.launches, lowering.temp_numbers)
    for merged, gathered in batched:  # each gather's result a view of its matrix of the batch
        data_format = merged.data_format or FORMAT
        base = out.tensor(merged.ref, merged.device_shape, data_format)
        for b, t in enumerate(gathered):
            out.view(t.ref, t.device_shape, data_format, base, b * tile_count(t.device_shape))
    untilized = _untilized_output(lowering)
    as_rows = set() if untilized is None else {t.ref for t, is_rows in
                                               zip(_fused_operands(lowering.launches[-1]), untilized[1]) if is_rows}
    last_launch = len(lowering.launches) - 1

    def kernel(index: int, rows: tuple[bool, ...]) -> tuple:  # of a launch reading operands as row tiles
        if untilized is not None and index == last_launch:
            return _untilized_kernel(lowering.launches[index], untilized[1], rows)
        return lowering.launches[index].kernel + (rows,)

    row_operands = _row_major_operands(lowering, as_rows, kernel)
    as_rows |= {t.ref for index, rows in row_operands.items()
                for t, is_rows in zip(lowering.launches[index].operands, rows) if is_rows}
    tilized = {key: tensor for key, tensor in _loads(lowering).items() if ("binding", key) not in as_rows}
    for batch, window in _tilize_batches(tilized):  # (the rest are read from their rows by the launches)
        (key, tensor), data_format = batch[0], batch[0][1].data_format or FORMAT
        if len(batch) == 1:
            device_shape, scratch = tensor.device_shape, out.tensor(("binding", key), tensor.device_shape, data_format)
        else:  # a batch of windows in one tile tensor, each load a view of its matrix
            device_shape = (len(batch), *tensor.device_shape)
            scratch = out.tensor(("binding", tuple(k for k, _ in batch)), device_shape, data_format)
            for b, (k, t) in enumerate(batch):
                out.view(("binding", k), t.device_shape, data_format, scratch, b * tile_count(t.device_shape))
        out.row_major(rowmajor.tilize, device_shape, data_format, key[1],
                      ((BindingSource.DISPATCH, key[0]), (BindingSource.TENSOR, scratch)), window)

    def operand_binding(operand):
        if isinstance(operand, tuple) and operand[0] == "rows":  # ("rows", access): the binding as it is
            return BindingSource.DISPATCH, operand[1][0]
        if isinstance(operand, tuple):  # ("mask", valid, axis)
            _, valid, axis = operand
            return BindingSource.TENSOR, out.tensor(operand, (TILE, TILE), MASK_FORMAT, mask_values(valid, axis))
        kind, what = operand.ref
        if operand.row_major:
            return BindingSource.TENSOR, out.row_major_tensor(operand, FORMAT)
        if kind == "constant":
            data_format = operand.data_format or FORMAT
            values = np.asarray(what, np.int32 if data_format.is_integer else np.float32).reshape(operand.device_shape)
            key = ("constant", operand.device_shape, data_format, values.tobytes())
            return BindingSource.TENSOR, out.tensor(key, operand.device_shape, data_format, values)
        return BindingSource.TENSOR, out.tensor((kind, what), operand.device_shape, operand.data_format or FORMAT)

    row_outputs = _row_major_outputs(lowering, last_launch if untilized is not None else None)
    for index, launch in enumerate(lowering.launches[:-1] if untilized is not None else lowering.launches):
        key = row_outputs.get(index)
        out.launch(launch, operand_binding, row_operands.get(index, ()),
                   None if key is None else (key, lowering.outputs[key][2]))
    if untilized is not None:
        last, rows = untilized
        device_shape, _, window = lowering.outputs[last]
        out.untilized(lowering.launches[-1], last, rows, device_shape, window, operand_binding,
                      row_operands.get(last_launch, ()))
    for key, (device_shape, data_format, window) in lowering.outputs.items():
        if untilized is not None and key == untilized[0] or key in row_outputs.values():
            continue
        scratch = out.tensor(("output", key), device_shape, data_format)
        out.row_major(rowmajor.untilize, device_shape, data_format, key[1],
                      ((BindingSource.TENSOR, scratch), (BindingSource.DISPATCH, key[0])), window)
    return Export(name, constant_count, binding_count, (1, 1, 1), tuple(out.stages), tuple(out.tensors))


def _gather_batches(launches: list[Launch], temp_numbers) -> tuple[list[Launch], list[tuple[Tensor, list]]]:
    """The launches with the gathers of one source into scratch matrices alike (an NCHW
    strided convolution's taps: runs too short for windows) merged into one gather of
    the batch of them, where the first was: (launches, [(the batch's scratch tensor, the
    gathers' results in its order)]). Only where nothing between them writes the source
    and each result is written by its gather alone, so that moving them changes nothing."""
    writes: dict = {}
    for launch in launches:
        target = launch.operands[-1]
        if isinstance(target, Tensor):
            writes[id(target)] = writes.get(id(target), 0) + 1
    alike: dict = {}
    for index, launch in enumerate(launches):
        if launch.kernel[0] != "gather":
            continue
        source, table, target = launch.operands  # a table read from a binding is ("rows", access)
        if not (isinstance(table, Tensor) and table.ref[0] == "constant" and target.ref[0] == "temp"
                and writes[id(target)] == 1 and _matrices(target.device_shape)[0] == 1):
            continue
        key = (launch.kernel, source if isinstance(source, tuple) else id(source),
               launch.constants[rowmajor.OFFSET_CONSTANTS], target.device_shape, target.data_format)
        alike.setdefault(key, []).append(index)
    merged, dropped, batched = {}, set(), []
    for indices in alike.values():
        source = launches[indices[0]].operands[0]
        between = launches[indices[0] + 1:indices[-1]]
        if len(indices) < 2 or any(launch.operands[-1] is source for launch in between):
            continue
        gathers = [launches[i] for i in indices]
        gathered = [launch.operands[-1] for launch in gathers]
        table = np.concatenate([np.asarray(launch.operands[1].ref[1]).reshape(-1) for launch in gathers])
        first = gathered[0]
        target = Tensor((len(gathers), *first.device_shape), ref=("temp", next(temp_numbers)),
                        data_format=first.data_format)
        constants = rowmajor.push_constants(*first.device_shape[-2:], gathers[0].constants[rowmajor.OFFSET_CONSTANTS:],
                                            len(gathers))
        merged[indices[0]] = Launch(gathers[0].kernel, constants, [
            source, Tensor(table.shape, ref=("constant", table), data_format=gathers[0].operands[1].data_format,
                           row_major=True), target], constants[0])
        dropped.update(indices[1:])
        batched.append((target, gathered))
    return [merged.get(i, launch) for i, launch in enumerate(launches) if i not in dropped], batched


def _tilize_batches(loads: dict) -> list[tuple[list, Window | None]]:
    """The tilize stages of the loaded bindings `loads` ({key: Tensor}): (the loads a
    stage tilizes, the window of its binding it reads). One load alone, or a batch of
    single-matrix windows of one binding that are alike but for their evenly spaced
    starts (a convolution's taps along a row of its kernel: one launch instead of one
    each), tilized as the matrices of one window."""
    alike: dict = {}
    for key, tensor in loads.items():
        window = tensor.window
        batchable = window is not None and isinstance(key[1], int) and _matrices(tensor.device_shape)[0] == 1
        group = (key[0], key[1], tensor.device_shape, tensor.data_format, dataclasses.replace(window, start=0)) \
            if batchable else key
        alike.setdefault(group, []).append((key, tensor))
    batches = []
    for group in alike.values():
        if len(group) > 1:  # windows alike: runs of evenly spaced starts
            group.sort(key=lambda load: load[1].window.start)
        run = group[:1]
        for load in group[1:]:
            last = run[-1][1].window.start
            step = load[1].window.start - last
            if step > 0 and (len(run) == 1 or step == last - run[-2][1].window.start):
                run.append(load)
            else:
                batches.append(_batch_window(run))
                run = [load]
        batches.append(_batch_window(run))
    return batches


def _batch_window(loads: list) -> tuple[list, Window | None]:
    """(loads, the window one tilize of them reads: the first's, their starts' spacing its batch stride)."""
    first = loads[0][1].window
    if len(loads) == 1:
        return loads, first
    return loads, dataclasses.replace(first, batch_stride=loads[1][1].window.start - first.start)


def _fused_operands(launch: Launch) -> list[Tensor]:
    """A fused elementwise launch's inputs: its operands but the output and padding masks."""
    return [o for o in launch.operands[:-1] if not isinstance(o, tuple)]


def _untilized_output(lowering: DispatchLowering) -> tuple | None:
    """(the output the last launch writes, which of its inputs it reads as rows) when that
    launch is a fused elementwise kernel that can write the output row-major itself
    (ExportBuilder.untilized: its result untilized in compute, without the untilize
    launch after it nor a round trip through scratch tiles); it reads as rows the whole
    unbroadcast bindings of the output's shape that no other launch reads (without a
    tilize launch before it either). Else None."""
    if not lowering.launches or lowering.launches[-1].kernel[0] != "eltwise_fused":
        return None
    launch = lowering.launches[-1]
    out = launch.operands[-1]
    if out.ref is None or out.ref[0] != "output" or out.ref[1] not in lowering.outputs:
        return None
    key = out.ref[1]
    device_shape, data_format, window = lowering.outputs[key]
    shape = _matrices(device_shape)
    if data_format is not launch.kernel[4] or _matrices(out.device_shape) != shape or (
            window is not None and isinstance(key[1], PushConstant)):  # the untilize stage's error, unchanged
        return None
    read_before = {o.ref for other in lowering.launches[:-1] for o in other.operands if loaded(o)}
    rows = tuple(window is None and loaded(t) and t.ref not in read_before
                 and t.window is None and not t.row_major and _matrices(t.device_shape) == shape
                 and source.broadcast is Broadcast.NONE and not source.batch_broadcast
                 and source.data_format is t.data_format
                 for t, source in zip(_fused_operands(launch), launch.kernel[2]))
    tiled = {t.ref for t, is_rows in zip(_fused_operands(launch), rows) if loaded(t) and not is_rows}  # anyway
    rows = [is_rows and t.ref not in tiled for t, is_rows in zip(_fused_operands(launch), rows)]
    for i in [i for i, is_rows in enumerate(rows) if is_rows][fused.MAX_ROW_INPUTS:]:  # the rest tilized first
        rows[i] = False
    while not _buildable(_untilized_kernel(launch, tuple(rows), ())):  # its reader's registers: fewer as rows
        if not any(rows):
            return None
        rows[max(i for i, is_rows in enumerate(rows) if is_rows)] = False
    return key, tuple(rows)


# What a tilize stage tilizes, but block floats: a reader reads whole elements.
ROW_TILE_FORMATS = (DataFormat.float32, DataFormat.bfloat16, DataFormat.int32, DataFormat.uint32, DataFormat.uint16,
                    DataFormat.uint8)


def _row_major_operands(lowering: DispatchLowering, as_rows: set, kernel) -> dict[int, tuple[bool, ...]]:
    """{launch index: which of its inputs it reads as row tiles} where every launch that
    reads a loaded binding (not already `as_rows`: the last launch's blocks of rows,
    _untilized_output) is a matmul, fused elementwise, transpose or reduce launch: they
    read it as row tiles (rowmajor.read_row_tiles) and it needs no tilize stage, if they
    read its tiles at most ROW_TILE_READS times in all (a fused kernel, broadcast or not,
    one tile of each input per output tile) and their kernels (`kernel(index, rows)`
    names one) have the registers for it (else a reader runs out: RESOURCE_EXHAUSTED)."""
    reads: dict = {}  # loaded ref -> [(launch index, operand position, tile reads)], None: tilized
    for index, launch in enumerate(lowering.launches):
        readable, formats = _row_tile_reads(launch)
        for position, operand in enumerate(launch.operands):
            if not loaded(operand) or operand.ref in as_rows:
                continue
            n = readable.get(position)
            ok = (n is not None and not operand.row_major and (operand.data_format or FORMAT) in formats
                  and _row_tiles_take(operand.window, operand.ref[1][1]))
            uses = reads.setdefault(operand.ref, [])
            if uses is not None:
                reads[operand.ref] = uses + [(index, position, n)] if ok else None
    candidates = {ref for ref, uses in reads.items() if uses and sum(n for _, _, n in uses) <= ROW_TILE_READS}
    while True:  # drop what a kernel cannot read so (and so every other reader of it), until all build
        found = {}
        for ref in candidates:
            for index, position, _ in reads[ref]:
                found.setdefault(index, set()).add(position)
        rows = {index: tuple(p in positions for p in range(len(_row_tile_inputs(lowering.launches[index]))))
                for index, positions in found.items()}
        failed = {index for index, flags in rows.items() if not _buildable(kernel(index, flags))}
        if not failed:
            return rows
        candidates -= {ref for ref in candidates if any(index in failed for index, _, _ in reads[ref])}


def _row_major_outputs(lowering: DispatchLowering, last: int | None) -> dict[int, tuple]:
    """{launch index: output key} for the matmul, fused elementwise, transpose and
    reduce launches (but launch `last`, which writes rows already) that alone write an
    output no launch reads, of at most ROW_TILE_READS tiles: they write it row-major
    themselves (rowmajor.write_row_tiles), with no untilize stage after them."""
    writers, read = {}, set()
    for index, launch in enumerate(lowering.launches):
        target = launch.operands[-1]
        if isinstance(target, Tensor) and target.ref is not None and target.ref[0] == "output":
            writers.setdefault(target.ref, []).append(index)
        read |= {o.ref for o in launch.operands[:-1] if isinstance(o, Tensor) and o.ref is not None
                 and o.ref[0] == "output"}
    found = {}
    for ref, indices in writers.items():
        key, index = ref[1], indices[0]
        if len(indices) != 1 or ref in read or key not in lowering.outputs or index == last:
            continue
        launch, (device_shape, data_format, window) = lowering.launches[index], lowering.outputs[key]
        target = launch.operands[-1]
        if (launch.kernel[0] in ("matmul", "eltwise_fused", "transpose", "reduce") and launch.tiles <= ROW_TILE_READS
                and data_format in ROW_TILE_FORMATS and (target.data_format or FORMAT) is data_format
                and _matrices(target.device_shape) == _matrices(device_shape)
                and _row_tiles_take(window, key[1])
                and _buildable(launch.kernel + ((False,) * len(_row_tile_inputs(launch)), True))):
            found[index] = key
    return found


def _row_tiles_take(window: Window | None, offset: int | PushConstant) -> bool:
    """Can a kernel read or write a binding's tiles from its rows (rowmajor.read_row_tiles,
    write_row_tiles) at byte `offset` or the slice `window` of it? Not a window at a
    push constant (the untilize stage's error) nor one whose rows are runs of segments
    (a face row is one transfer) or come in groups (a row is found from the first)."""
    return window is None or not (isinstance(offset, PushConstant) or window.segment is not None
                                  or window.row_group is not None)


def _row_tile_inputs(launch: Launch) -> list:
    """The operands of a launch whose kernel can read row tiles, in its kernel's order."""
    if launch.kernel[0] == "eltwise_fused":
        return _fused_operands(launch)
    return launch.operands[:2] if launch.kernel[0] == "matmul" else launch.operands[:1]


def _row_tile_reads(launch: Launch) -> tuple[dict[int, int], tuple]:
    """({operand position: how many tile reads the launch makes of it} for the operands
    it could read as row tiles, the formats it reads so); ({}, ()) for a kernel that
    reads none so."""
    if launch.kernel[0] == "matmul":
        total, k_tiles, n_tiles = launch.constants[:3]
        output_rows = total // n_tiles  # over the batch: each reads a's tile row once per strip, b's all
        return ({0: output_rows * k_tiles * ceil_div(n_tiles, strip_tiles(launch.kernel[5])),
                 1: output_rows * k_tiles * n_tiles}, (DataFormat.float32, DataFormat.bfloat16))
    if launch.kernel[0] == "eltwise_fused":
        return dict.fromkeys(range(len(_fused_operands(launch))), launch.tiles), ROW_TILE_FORMATS
    if launch.kernel[0] == "transpose":  # an input tile per output tile
        return {0: launch.tiles}, ROW_TILE_FORMATS
    if launch.kernel[0] == "reduce":  # R input tiles per output tile
        return {0: launch.tiles * launch.constants[1]}, ROW_TILE_FORMATS
    return {}, ()


def _buildable(kernel: tuple) -> bool:
    try:
        _library(kernel)
    except HalError as error:
        if error.code != StatusCode.RESOURCE_EXHAUSTED:
            raise
        return False
    return True


def _folded(accesses: dict) -> dict:
    """The device shapes to give 1-D tensors of one size when they are all the dispatch
    has (IREE's collapsed elementwise dispatches); else none."""
    sizes = {shape for shape in accesses.values()}
    if len(sizes) == 1 and len(next(iter(sizes))) == 1:
        (n,) = next(iter(sizes))
        return dict.fromkeys(accesses, fold(n))
    return {}


def _loads(lowering: DispatchLowering) -> dict:
    """{key: Tensor} of the loaded bindings the launches read."""
    loads = {}
    for launch in lowering.launches:
        for operand in launch.operands:
            if loaded(operand):
                loads.setdefault(operand.ref[1], operand)
    return loads



