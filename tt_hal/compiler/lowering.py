"""One IREE dispatch -> a sequence of Tensix kernel launches.

A dispatch at IREE's `executable-sources` phase, normalised (tt_hal.compiler.frontend), is a
function that loads tensors from bindings, runs linalg.generic ops on them and
stores results to bindings. Each generic becomes one or more launches of the kernel
library (tt_hal/kernels/):

- contraction (mulf + addf over one reduction dim)  -> matmul (batched), + init
- reduction (addf / maximumf / maxnumf over the last or second-to-last dim)
                                                     -> [fused prologue] + reduce, + init
- parallel generic with `linalg.yield %in` through a swapped map -> transpose
- any other parallel generic                         -> eltwise_fused (the body as SFPU code)
- fill (a generic yielding a scalar)                 -> kept as a constant until used
- an operand read through a map the tile kernels cannot follow (a window such as
  d1 + d4, a permutation of outer dims, a broadcast over some batch dims), and the
  operands of a reduction over several dims or an outer one
                                                     -> gather (tt_hal/kernels/gather.py)
                                                        into the loop space, then as above

Bodies compute float32 and integers of up to 32 bits (int32 tiles, int32 in a 32-bit
Dst; docs/compiler.md says how narrow types and casts go), and i64 exactly as pairs of
int32 words (tt_hal/compiler/int64.py) in elementwise generics, loads and stores.
Values between ops live in temporaries: scratch tile tensors of the export (tt_hal/compiler/dispatch.py). Every
tensor is a tile tensor of its *device shape*: its logical shape with unit dims where a
reduction left them, so a row max of (64, 512) is a (64, 1) column that broadcasts along
rows. Padding stays zero (the tilize stage zeroes a partial tile's padding, fused kernels
re-zero the padding they write), so a matmul over a padded K stays exact.
Anything else is UNIMPLEMENTED, naming the op and its source location.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import ClassVar

import ml_dtypes
import numpy as np
from iree.compiler import ir

from hal.status import HalError, StatusCode
from tt_hal.compiler import float16, int64
from tt_hal.kernels import fused, gather, matmul, reduce, rowmajor, transpose
from tt_hal.kernels.fused import Binary, Constant, FusedInput, Input, Instruction, Scalar, Ternary, Unary, renumbered
from tt_hal.target.isa import Broadcast, MathFidelity, ReduceKind, SfpuOp, float_bits
from tt_hal.target.layout import DataFormat
from tt_hal.target.sizes import TILE, ceil_div, tile_count

FLAT = "flat"  # the loop space of a collapsed elementwise dispatch: the tiles of the tensor it flattened


@dataclasses.dataclass(frozen=True)
class Options:
    data_format: DataFormat
    math_fidelity: MathFidelity = MathFidelity.HiFi4

    @property
    def fp32_dest_acc_en(self) -> bool:
        return self.data_format is DataFormat.float32


@dataclasses.dataclass(frozen=True)
class Window:
    """Where a loaded or stored tensor lies in its binding's row-major tensor, in
    elements: its first element, and the distance between its rows and between its
    matrices (of its device shape); with a `segment`, each row is runs of that many
    columns `segment_stride` apart (a merged (C, H*W) result in a padded (C, H + 2, W + 2)
    window: runs of W, W + 2 apart); with a `row_group`, the rows come in groups of that
    many `row_group_stride` apart (an (H*W, C) tap of a padded (H + 2, W + 2, C) image:
    groups of W rows, (W + 2) C apart)."""

    start: int
    row_stride: int
    batch_stride: int
    segment: int | None = None
    segment_stride: int | None = None
    row_group: int | None = None
    row_group_stride: int | None = None


class Tensor:
    """A tensor of the dispatch: logical shape, device shape, and where it lives
    (`ref`: ("binding", access) loaded, ("output", access) stored, ("temp", k) or
    ("constant", values), an access being (binding, byte offset, slice or None);
    `fill`: a splat not materialised: a float, an int, a PushConstant's value or a 0-d
    Tensor's). Its tiles are in the compute format, or in `data_format`: int32 for
    integers, a binding's memory format for a load or store (UInt8 for an i8). `window`:
    a slice's place in its binding (None: the whole binding). `row_major`: the elements
    of the device shape in row-major order instead of tiles (a gather's source or index
    table). `high`: an i64 tensor's high words (tt_hal.compiler.int64), this tensor
    holding its low ones."""

    def __init__(self, shape, device_shape=None, ref=None, fill=None, data_format=None, window=None,
                 row_major=False, high: "Tensor | None" = None):
        self.shape = tuple(shape)
        self.device_shape = tuple(device_shape) if device_shape is not None else default_device_shape(shape)
        self.ref = ref
        self.fill = fill
        self.data_format = data_format
        self.window = window
        self.row_major = row_major
        self.high = high


@dataclasses.dataclass
class Launch:
    """One kernel dispatch: `kernel` names a library program and its build arguments
    (hashable, so equal kernels share one export), over `tiles` work items."""

    kernel: tuple
    constants: list
    operands: list  # Tensor, ("mask", valid, axis), or ("rows", access): a binding read row-major
    tiles: int


def _written(launch: Launch, tensor: Tensor) -> bool:
    """Does the launch write the tensor (its last operand, the same storage)?"""
    target = launch.operands[-1]
    return isinstance(target, Tensor) and target.ref is not None and target.ref[0] != "constant" and \
        target.ref == tensor.ref


def _live(launches: list[Launch]) -> list[Launch]:
    """The launches without those that write only scratch tensors no later launch reads
    (a gather whose result a later gather took from its source at once)."""
    read: set = set()
    kept = []
    for launch in reversed(launches):
        target = launch.operands[-1]
        if isinstance(target, Tensor) and target.ref[0] == "temp" and target.ref not in read:
            continue
        kept.append(launch)
        read.update(t.ref for t in launch.operands[:-1] if isinstance(t, Tensor) and t.ref is not None
                    and t.ref[0] == "temp")
    return kept[::-1]


def default_device_shape(shape) -> tuple:
    """Rank >= 2 as is; a vector is a row (1, N); a scalar one element."""
    shape = tuple(shape)
    return shape if len(shape) >= 2 else (1,) * (2 - len(shape)) + shape


def canonical(shape) -> tuple:
    """Leading unit dims do not change a tile tensor: (1, 1, 512) ~ (1, 512)."""
    shape = tuple(shape)
    while len(shape) > 2 and shape[0] == 1:
        shape = shape[1:]
    return (1,) * (2 - len(shape)) + shape


def tiles(n: int) -> int:
    return ceil_div(n, TILE)


# The library programs a Launch.kernel may name.
_PROGRAMS = {"matmul": matmul.matmul, "reduce": reduce.reduce, "transpose": transpose.transpose,
             "eltwise_fused": fused.eltwise_fused, "gather": gather.gather,
             "untilize": lambda fmt: rowmajor.untilize(fmt, offsets=True),
             "eltwise_fused_untilized": fused.eltwise_fused_untilized}


def build_kernel(kernel: tuple):
    """The library Export a Launch.kernel names."""
    name, *args = kernel
    return _PROGRAMS[name](*args)


def location(op) -> str:
    """An op's source location as file:line:col (the innermost call site)."""
    match = re.search(r'"([^"]*)":(\d+):(\d+)', str(op.location))
    return f"{match.group(1)}:{match.group(2)}:{match.group(3)}" if match else str(op.location)


def unimplemented(op, what: str) -> HalError:
    return HalError(StatusCode.UNIMPLEMENTED, f"{location(op)}: {what}")


def _children(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation


def _constant(value):
    """The Python value of an arith.constant result, else None."""
    owner = value.owner
    if isinstance(owner, (ir.Operation, ir.OpView)) and owner.operation.name == "arith.constant":
        attr = owner.operation.attributes["value"]
        if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
            return attr.value
    return None


def _of_loops(value, dims: set) -> bool:
    """Is a generic body's `value` a function of constants and of linalg.index of `dims`
    alone (no block argument, no extract, nothing from outside the body but constants)?"""
    read = _loops_read(value, [], {})
    return read is not None and read <= dims


def _loops_read(value, maps: list, memo: dict) -> set | None:
    """The loops a generic body's `value` is a function of: the linalg.index dims and the
    map dims of the inputs (`maps`: an input's loop dims by argument number) it reads,
    besides constants; None where it reads anything else (the output, an extract, a value
    from outside the body)."""
    if value in memo:
        return memo[value]
    if isinstance(value, ir.BlockArgument):
        number = value.arg_number
        read = set(maps[number]) if number < len(maps) and maps[number] is not None else None
    else:
        operation = value.owner.operation
        if operation.name == "arith.constant":
            read = set()
        elif operation.name == "linalg.index":
            read = {ir.IntegerAttr(operation.attributes["dim"]).value}
        elif operation.name == "tensor.extract" or operation.parent.name != "linalg.generic":
            read = None
        else:
            read = set()
            for v in operation.operands:
                operand = _loops_read(v, maps, memo)
                if operand is None:
                    read = None
                    break
                read |= operand
    memo[value] = read
    return read


def _difference(value) -> tuple | None:
    """(a, b) of a value that is arith.subf a, b; else None."""
    if isinstance(value, ir.BlockArgument) or value.owner.operation.name != "arith.subf":
        return None
    return tuple(value.owner.operation.operands)


def _maxima(op, n_in: int) -> set:
    """(x, m) pairs of a generic's block arguments where input m is a float max reduction
    (linalg.generic with maxnumf or maximumf) of input x: exp(x - m) is then a softmax's
    (EXP_FLOOR)."""
    arguments, operands = op.regions[0].blocks[0].arguments, list(op.operands)[:n_in]
    found = set()
    for j, m in enumerate(operands):
        reduction = m.owner if isinstance(m, ir.OpResult) else None
        if reduction is None or reduction.name != "linalg.generic" or "reduction" not in _iterators(reduction):
            continue
        combined = list(reduction.regions[0].blocks[0].operations)[-1].operands[0]
        if isinstance(combined, ir.BlockArgument) or \
                combined.owner.operation.name not in ("arith.maxnumf", "arith.maximumf"):
            continue
        sources = list(reduction.operands)[:ir.DenseI32ArrayAttr(reduction.attributes["operandSegmentSizes"])[0]]
        found |= {(arguments[i], arguments[j]) for i, x in enumerate(operands) if x in sources}
    return found


def _own_loops(dims, extents) -> dict:
    """_code's `loops` for a space over loop dims `dims` alone, each its own axis in order."""
    return {d: (i, 1, extents[d]) for i, d in enumerate(dims)}


def _shape(op, type_) -> tuple:
    """The static shape of `type_`, a type of `op`'s (() for a scalar)."""
    if not isinstance(type_, ir.RankedTensorType):
        return ()
    if any(type_.is_dynamic_dim(i) for i in range(type_.rank)):
        raise unimplemented(op, f"dynamic shape {type_}: the bridge compiles static shapes")
    return tuple(type_.shape)


def dense_array(op, attr) -> np.ndarray:
    """The values of a dense elements attribute (f32 and bf16 as float32, integers as
    their width)."""
    if not isinstance(attr, ir.DenseElementsAttr):
        raise unimplemented(op, f"a constant stored as {str(attr)[:40]}...: the bridge reads dense<...> constants")
    element = str(attr.type.element_type)
    dtypes = {"f32": np.float32, "bf16": np.float32, "f16": np.float16, "i1": np.bool_, "i8": np.int8,
              "i16": np.int16, "i32": np.int32, "i64": np.int64}
    if element not in dtypes:
        raise unimplemented(op, f"a constant of {element}: the bridge reads f32, bf16, f16 and integer constants")
    if attr.is_splat:
        value = attr.get_splat_value().value
        return np.full(attr.type.shape, value, dtypes[element])
    if element == "bf16":
        return _bfloat16_values(attr).reshape(attr.type.shape)
    return np.array(attr, dtypes[element]).reshape(attr.type.shape).astype(np.float32 if element == "f16" else
                                                                           dtypes[element])


def _bfloat16_values(attr) -> np.ndarray:
    """A bf16 dense attribute's values as float32, read from its printed form (the
    Python bindings give bf16 no buffer): the hex of its raw data, or its literals
    (those printed with 7 digits round back to the bf16 they are; a NaN or an infinity
    is printed as its bits)."""
    text = str(attr)
    raw = re.match(r'dense<"0x([0-9A-Fa-f]*)">', text)
    if raw:
        return (np.frombuffer(bytes.fromhex(raw.group(1)), "<u2").astype(np.uint32) << 16).view(np.float32)
    literals = re.findall(r"0x[0-9A-Fa-f]+|[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)", text[:text.rindex(" : ")])
    values = [np.uint32(int(t, 16) << 16).view(np.float32) if t.startswith("0x") else float(t) for t in literals]
    return np.array(values, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


# Integer sums and matmuls run bytewise through the FPU: exact while 255 * terms and
# 255 * 255 * K stay below 2^24.
INTEGER_SUM_LIMIT = (1 << 24) // 255
INTEGER_MATMUL_LIMIT = (1 << 24) // (255 * 255)
# Element types a dispatch computes: float32, bfloat16 (computed in float32 in Dst,
# held in bfloat16 tiles: the packer rounds), f16 (computed and held as float32,
# converted where loaded and stored: tt_hal.compiler.float16), and integers of up to 32
# bits (index as i32) held in int32 tiles (narrow ones sign-extended, i1 as 0 or 1).
INTEGER_FORMAT = DataFormat.int32
FLOAT_TYPES = ("f32", "bf16", "f16")
# OCP microscaling element types held as their bits, as integers of that width
# (sign-extended, as the narrow integers): loaded, stored and moved as those integers,
# decoded to float32 by extf and scaling_extf and encoded by truncf and scaling_truncf
# in a body, as IREE's llvm-cpu pipeline does (_Code.bit_float_cast).
BIT_FLOATS = {"f8E8M0FNU": 8, "f4E2M1FN": 4}
# The formats of the tiles a dispatch loads and stores each element type in: as IREE
# keeps it in memory (i1 as a byte, f16 as its bit patterns).
MEMORY_FORMATS = {"f32": DataFormat.float32, "bf16": DataFormat.bfloat16, "f16": DataFormat.uint16,
                  "i1": DataFormat.uint8, "i8": DataFormat.uint8, "i16": DataFormat.uint16, "i32": DataFormat.int32,
                  "f8E8M0FNU": DataFormat.uint8}


def _is_identity(init: Tensor, identity: tuple) -> bool:
    """Is `init` a fill with one of a combining op's identities (NaN for max and min:
    maxnumf's, as IREE's softmax starts from it)?"""
    return isinstance(init.fill, (int, float)) and any(
        init.fill == v or math.isnan(init.fill) and math.isnan(v) for v in identity)


def _appender(code: list) -> Callable[[Instruction], int]:
    """emit(instruction) -> its value number, for code built as a plain list."""
    def emit(instruction) -> int:
        code.append(instruction)
        return len(code) - 1
    return emit


def _element(type_):
    """The element type of a shaped type, else the type."""
    return type_.element_type if isinstance(type_, ir.ShapedType) else type_


def integer_width(type_) -> int | None:
    """The bit width of an integer element type (index: 32; a BIT_FLOATS type's), None
    for a float."""
    element = _element(type_)
    if isinstance(element, ir.IndexType):
        return 32
    if str(element) in BIT_FLOATS:
        return BIT_FLOATS[str(element)]
    return ir.IntegerType(element).width if isinstance(element, ir.IntegerType) else None


def is_wide(type_) -> bool:
    """Is it an integer wider than 32 bits (an i64: two int32 words, tt_hal.compiler.int64)?"""
    return (integer_width(type_) or 0) > 32


def is_complex(type_) -> bool:
    """Is it a complex number (complex<f32>: its real and imaginary parts, two float32 words)?"""
    return isinstance(_element(type_), ir.ComplexType)


def is_pair(type_) -> bool:
    """Is a value of this type held as two 32-bit words, each a tensor of its own (an i64's
    low and high words, a complex's real and imaginary parts: Tensor.high)?"""
    return is_wide(type_) or is_complex(type_)


def word_format(type_) -> DataFormat:
    """The format of each word of a pair type."""
    return INTEGER_FORMAT if is_wide(type_) else DataFormat.float32


def _check_element_type(op, type_) -> None:
    element = _element(type_)
    if str(element) not in FLOAT_TYPES and not (integer_width(element) or 64) <= 32:
        raise unimplemented(op, f"{op.name} on {element}: the bridge computes f32, bf16, f16, integers of up "
                                f"to 32 bits and {', '.join(BIT_FLOATS)}")


def tile_format(type_) -> DataFormat | None:
    """The format of the tiles a value of `type_` is held in inside a dispatch: int32 for
    an integer, bfloat16 for a bf16, None (the compute format) for f32 and f16."""
    if integer_width(type_):
        return INTEGER_FORMAT
    return DataFormat.bfloat16 if str(_element(type_)) == "bf16" else None


def _fill_value(value, width: int | None):
    """A constant as a fill holds it: a float, or an integer's canonical int32."""
    return _canonical_integer(int(value), width) if width else float(value)


def _canonical_integer(value: int, width: int) -> int:
    """An integer of `width` bits as the lowering holds it in int32: i1 as 0 or 1, wider
    ones sign-extended."""
    if width == 1:
        return value & 1
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


@dataclasses.dataclass(frozen=True)
class PushConstant:
    """A dispatch's push constant `ordinal`, unknown when the dispatch is compiled (as a
    uint32: IREE splits a 64-bit value into a low and a high word, and a program's
    address arithmetic is 32-bit, so the high word must be zero)."""

    ordinal: int


@dataclasses.dataclass(frozen=True)
class _HighWord:
    """A push constant shifted into the high 32 bits of an i64."""

    ordinal: int


class Integers:
    """Evaluates the index and integer arithmetic of a function at compile time:
    byte offsets and sizes, push constants (`hal.interface.constant.load`, as
    PushConstant values: they are known only when the dispatch runs), IREE's 64-bit
    split into two i32 and `util.assume.int`."""

    _BINARY: ClassVar[dict] = {
        "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
        "arith.shrui": lambda a, b: a >> b, "arith.shli": lambda a, b: a << b, "arith.ori": lambda a, b: a | b,
        "arith.andi": lambda a, b: a & b, "arith.divui": lambda a, b: a // b}
    _CASTS = ("arith.index_castui", "arith.index_cast", "arith.extui", "arith.extsi", "util.assume.int",
              "iree_tensor_ext.dispatch.workload.ordinal")

    def __init__(self):
        self.env: dict = {}
        self.runtime: set = set()  # scalars computed from tensor data: the chip computes them where used

    def __contains__(self, value) -> bool:
        return value in self.env or isinstance(_constant(value), int)

    def __getitem__(self, value) -> int:
        if value in self.env:
            return self.env[value]
        constant = _constant(value)
        if not isinstance(constant, int):
            owner = value.owner
            what = owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None
            where = f"{location(what)}: " if what is not None else ""
            raise HalError(StatusCode.UNIMPLEMENTED,
                           f"{where}{value.get_name()} ({what.name if what is not None else 'a block argument'}) is "
                           f"an integer known only at run time; the Tensix lowering needs the integers of addresses "
                           f"and sizes when it lowers")
        return constant

    def handle(self, op) -> bool:
        """Evaluates `op` if it is integer arithmetic on scalars; False if it is not
        (arith ops on tensors are the program's data, not its addresses)."""
        name, operands = op.name, list(op.operands)
        if name == "tensor.extract":  # a value of tensor data, known only when the dispatch runs
            self.runtime.update(op.results)
            return False
        if any(isinstance(v.type, ir.ShapedType) for v in [*operands, *op.results]):
            return False
        if any(v in self.runtime for v in operands):  # lowered as SFPU code where it is used (_Code)
            self.runtime.update(op.results)
            return True
        if name in self._BINARY:
            a, b = self[operands[0]], self[operands[1]]
            self.env[op.results[0]] = self._symbolic(op, a, b) if not isinstance(a, int) or \
                not isinstance(b, int) else self._BINARY[name](a, b)
        elif name in self._CASTS:  # util.assume.int passes each operand through, a workload ordinal its value
            for result, operand in zip(op.results, operands):
                self.env[result] = self[operand]
        elif name == "arith.trunci":
            value = self[operands[0]]
            if isinstance(value, PushConstant):  # a flag passed so (jnp.var's n > ddof): SFPU code where it is used
                self.runtime.update(op.results)
                return True
            if not isinstance(value, int):
                raise unimplemented(op, "a truncated push constant")
            self.env[op.results[0]] = value & ((1 << op.results[0].type.width) - 1)
        elif name == "hal.interface.constant.load":
            self.env[op.results[0]] = PushConstant(op.opview.ordinal.value)
        else:
            return False
        return True

    @staticmethod
    def _symbolic(op, a, b):
        """IREE's i64 from two push constants, lo | (hi << 32), is the low word: the high
        one is zero for any offset a program can address. Other arithmetic on unknown
        push constants is not lowered."""
        if op.name == "arith.shli" and isinstance(a, PushConstant) and b == 32:
            return _HighWord(a.ordinal)
        if op.name == "arith.ori" and {type(a), type(b)} == {PushConstant, _HighWord}:
            return a if isinstance(a, PushConstant) else b
        raise unimplemented(op, f"{op.name} of a push constant: the Tensix lowering takes push constants as they "
                                f"are (binding offsets)")


# SFPU ops of math/arith body ops.
_UNARY = {"math.exp": SfpuOp.EXP, "math.log": SfpuOp.LOG, "math.sqrt": SfpuOp.SQRT, "math.rsqrt": SfpuOp.RSQRT,
          "math.tanh": SfpuOp.TANH, "math.absf": SfpuOp.ABS, "arith.negf": SfpuOp.NEG, "math.sin": SfpuOp.SIN,
          "math.cos": SfpuOp.COS, "math.floor": SfpuOp.FLOOR, "math.ceil": SfpuOp.CEIL, "math.trunc": SfpuOp.TRUNC,
          "math.roundeven": SfpuOp.ROUND_EVEN, "math.expm1": SfpuOp.EXPM1, "math.log1p": SfpuOp.LOG1P,
          "math.erf": SfpuOp.ERF, "math.erfc": SfpuOp.ERFC, "math.tan": SfpuOp.TAN, "math.atan": SfpuOp.ATAN,
          "math.asin": SfpuOp.ASIN, "math.acos": SfpuOp.ACOS, "math.sinh": SfpuOp.SINH, "math.cosh": SfpuOp.COSH,
          "math.asinh": SfpuOp.ASINH, "math.acosh": SfpuOp.ACOSH, "math.atanh": SfpuOp.ATANH,
          "math.exp2": SfpuOp.EXP2, "math.cbrt": SfpuOp.CBRT}
_BINARY = {"arith.addf": SfpuOp.ADD, "arith.subf": SfpuOp.SUB, "arith.mulf": SfpuOp.MUL, "arith.divf": SfpuOp.DIV,
           "arith.maximumf": SfpuOp.MAXIMUM, "arith.maxnumf": SfpuOp.MAXIMUM, "arith.minimumf": SfpuOp.MINIMUM,
           "arith.minnumf": SfpuOp.MINIMUM, "arith.remf": SfpuOp.FMOD, "math.atan2": SfpuOp.ATAN2,
           "math.powf": SfpuOp.POW}
# Logarithms in other bases: log(x) times a constant.
_LOG_SCALE = {"math.log2": 1 / math.log(2), "math.log10": 1 / math.log(10)}
# A reduction's combining op -> (the SFPU op that combines a partial result with an init,
# the op's identities: an init filled with one is left out; NaN for max and min: maxnumf's,
# as IREE's softmax starts from it). Floats reduce by reduce_tile (a min as -max(-x));
# integers by tt_hal's own lowerings (_integer_sum, _integer_extreme).
_FOLDS = {"arith.addf": (SfpuOp.ADD, (0.0,)), "arith.addi": (SfpuOp.ADD_INT, (0,)),
          **{name: (SfpuOp.MAXIMUM, (-math.inf, math.nan)) for name in ("arith.maximumf", "arith.maxnumf")},
          **{name: (SfpuOp.MINIMUM, (math.inf, math.nan)) for name in ("arith.minimumf", "arith.minnumf")},
          "arith.maxsi": (SfpuOp.MAX_INT, (-(1 << 31),)), "arith.minsi": (SfpuOp.MIN_INT, ((1 << 31) - 1,)),
          "arith.maxui": (SfpuOp.MAX_UINT, (0,)), "arith.minui": (SfpuOp.MIN_UINT, (-1,)),
          # of i1 (0 or 1) only: all and any (jnp.all, a NaN check), as min and max
          "arith.andi": (SfpuOp.AND, (1,)), "arith.ori": (SfpuOp.OR, (0,))}
_PREDICATE_FOLDS = {"arith.andi": "arith.minsi", "arith.ori": "arith.maxsi"}
_MIN_REDUCTIONS = ("arith.minimumf", "arith.minnumf")  # min(x) = -max(-x): the kernel library reduces by max


# Integer body ops (int32 in Dst; a narrow type's result made canonical again after).
_INTEGER_BINARY = {"arith.addi": SfpuOp.ADD_INT, "arith.subi": SfpuOp.SUB_INT, "arith.muli": SfpuOp.MUL_INT,
                   "arith.divsi": SfpuOp.DIV_INT, "arith.floordivsi": SfpuOp.FLOORDIV_INT,
                   "arith.remsi": SfpuOp.REM_INT, "arith.maxsi": SfpuOp.MAX_INT, "arith.minsi": SfpuOp.MIN_INT,
                   "arith.andi": SfpuOp.AND, "arith.ori": SfpuOp.OR, "arith.xori": SfpuOp.XOR,
                   "arith.shli": SfpuOp.SHL, "arith.shrsi": SfpuOp.SHR}
# Unsigned ones: (the op on i32, the op on a narrower type's zero-extended operands).
_UNSIGNED_BINARY = {"arith.divui": (None, SfpuOp.DIV_INT), "arith.remui": (SfpuOp.REM_UINT, SfpuOp.REM_INT),
                    "arith.maxui": (SfpuOp.MAX_UINT, SfpuOp.MAX_INT), "arith.minui": (SfpuOp.MIN_UINT, SfpuOp.MIN_INT),
                    "arith.shrui": (SfpuOp.SHRU, SfpuOp.SHRU)}
_CASTS = ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.sitofp",
          "arith.uitofp", "arith.fptosi", "arith.fptoui", "arith.bitcast", "arith.extf", "arith.truncf",
          "arith.scaling_extf", "arith.scaling_truncf")
_SPECIAL = {"math.fpowi", "arith.select", "arith.cmpf", "arith.cmpi", "math.round", "math.isnan", "math.isinf",
            "math.isfinite", "math.copysign", "math.absi", "math.ctpop", "math.ctlz", "math.cttz", "linalg.index",
            "tensor.extract", *_LOG_SCALE, *_CASTS,
            *_UNSIGNED_BINARY}  # lowered in _Code.op
# arith.cmpf's predicate numbers (mlir/Dialect/Arith/IR/ArithBase.td, CmpFPredicate).
_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
               "uno", "true")
# arith.cmpi's (CmpIPredicate), and the SFPU's integer compare of each: (signed or on
# i32, on a narrower type's zero-extended operands).
_INTEGER_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_INTEGER_RELATIONS = {"eq": (SfpuOp.EQ_INT,) * 2, "ne": (SfpuOp.NE_INT,) * 2, "slt": (SfpuOp.LT_INT,) * 2,
                      "sle": (SfpuOp.LE_INT,) * 2, "sgt": (SfpuOp.GT_INT,) * 2, "sge": (SfpuOp.GE_INT,) * 2,
                      "ult": (SfpuOp.LT_UINT, SfpuOp.LT_INT), "ule": (SfpuOp.LE_UINT, SfpuOp.LE_INT),
                      "ugt": (SfpuOp.GT_UINT, SfpuOp.GT_INT), "uge": (SfpuOp.GE_UINT, SfpuOp.GE_INT)}
# The SFPU's compares (false for a NaN but NE), by the relation a predicate tests, and
# the same against zero for a compare with the constant 0.
_RELATIONS = {"eq": SfpuOp.EQ, "ne": SfpuOp.NE, "gt": SfpuOp.GT, "ge": SfpuOp.GE, "lt": SfpuOp.LT, "le": SfpuOp.LE}
_ZERO_RELATIONS = {SfpuOp.EQ: SfpuOp.EQZ, SfpuOp.NE: SfpuOp.NEZ, SfpuOp.GT: SfpuOp.GTZ, SfpuOp.GE: SfpuOp.GEZ,
                   SfpuOp.LT: SfpuOp.LTZ, SfpuOp.LE: SfpuOp.LEZ}


class _Code:
    """Builds eltwise_fused code from a generic's body: block args become inputs
    (or constants, for fills), body ops SFPU instructions. Values are float32 or
    int32 (integers of up to 32 bits: narrow ones sign-extended, i1 as 0 or 1); a
    float compare's predicate stays a float 0 or 1 until an integer op needs it."""

    def __init__(self, leaves, inputs, scalar_leaf, index_input=None, extract_input=None):
        self.leaves = leaves  # MLIR value -> Input or Constant
        self.inputs = inputs  # (Tensor, FusedInput) of each Input, as the caller builds them
        self.scalar_leaf = scalar_leaf  # a scalar value -> the instruction of its value, None if not known
        self.index_input = index_input  # loop dim -> the Input of a tensor of its index values
        self.extract_input = extract_input  # (tensor.extract, this code) -> the Input of the values it extracts
        self.code: list[Instruction] = []
        self.integer: list[bool] = []  # value -> is it an int32
        self.memo: dict = {}
        self.pairs: dict = {}  # an i64 value -> its (low, high) words' values
        self.int64 = int64.Pairs(self.emit)
        self.maxima: set = set()  # (x, m) of block arguments where m is a max reduction of x (_maxima)

    def emit(self, instruction: Instruction) -> int:
        same = self._simplified(instruction)
        if same is not None:
            return same
        self.code.append(instruction)
        self.integer.append(fused.is_integer(instruction, self.integer, [fi for _, fi in self.inputs]))
        return len(self.code) - 1

    def _known(self, value: int) -> int | None:
        """The int32 a value is, where it is an integer constant."""
        instruction = self.code[value]
        if isinstance(instruction, Constant) and instruction.integer:
            return instruction.value - (1 << 32) if instruction.value >= 1 << 31 else instruction.value
        return None

    def _simplified(self, instruction: Instruction) -> int | None:
        """The value an integer op with a known operand already is (x + 0, x & 0, x | 0,
        x * 1, x <u 0, a select on a constant), or None: i64 code against constants (a
        compare with 0, an add of a small index) keeps only the words that matter, and
        _cone drops the rest."""
        if isinstance(instruction, Ternary) and instruction.op == SfpuOp.WHERE_INT:
            condition = self._known(instruction.c)
            return None if condition is None else instruction.a if condition else instruction.b
        if not isinstance(instruction, Binary) or instruction.op not in _IDENTITIES:
            return None
        a, b = instruction.a, instruction.b
        for x, y in ((a, b), (b, a)) if instruction.op in _COMMUTATIVE_INT else ((a, b),):
            kept = _IDENTITIES[instruction.op].get(self._known(y))
            if kept == "y" or kept == "x" and self.integer[x]:  # (x | 0 of a float x is its bits: as_bits)
                return x if kept == "x" else y
        return None

    def int_constant(self, value: int) -> int:
        return self.emit(Constant(value, True))

    def binary(self, sfpu: SfpuOp, a: int, b: int) -> int:
        return self.emit(Binary(sfpu, a, b))

    def value(self, v) -> int:
        if v in self.memo:
            return self.memo[v]
        if is_pair(v.type):
            owner = v.owner
            raise unimplemented(owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None,
                                f"{v.get_name()} of {v.type} used where the bridge computes 32 bits")
        leaf = self.leaves.get(v) or self.scalar_leaf(v)
        index = self.emit(leaf) if leaf is not None else self.op(v.owner.operation)
        self.memo[v] = index
        return index

    def pair(self, v) -> tuple[int, int]:
        """An i64 value as its (low word, high word) int32 values."""
        if v in self.pairs:
            return self.pairs[v]
        constant = _constant(v)
        if isinstance(constant, int):
            result = tuple(self.int64.constant(word) for word in int64.split(constant))
        else:
            leaf = self.leaves.get(v) or self.scalar_leaf(v)
            result = (self.emit(leaf[0]), self.emit(leaf[1])) if leaf is not None else self.wide_op(v.owner.operation)
        self.pairs[v] = result
        return result

    def wide_op(self, op) -> tuple[int, int]:
        """An op whose result is an i64 (int64's builders) or a complex."""
        name, operands, ops = op.name, list(op.operands), self.int64
        if name == "tensor.extract":
            low, high = self.extracted(op)
            return self.emit(low), self.emit(high)
        if is_complex(op.results[0].type):
            return self.complex_op(op)
        if name in ("arith.extsi", "arith.index_cast", "arith.extui", "arith.index_castui"):
            source = operands[0]
            if is_wide(source.type):
                return self.pair(source)
            x = self.cast(op) if integer_width(source.type) == 1 and name == "arith.extsi" else \
                self.integer_value(source)
            if name in ("arith.extui", "arith.index_castui"):
                return ops.zero_extended(self.zero_extended(x, integer_width(source.type)))
            return ops.sign_extended(x)
        if name == "arith.select":
            condition = self.value(operands[0])
            where = SfpuOp.WHERE_INT if self.integer[condition] else SfpuOp.WHERE
            return ops.select(where, condition, self.pair(operands[1]), self.pair(operands[2]))
        if name == "arith.fptosi":
            return self.float_to_int64(self.value(operands[0]))
        if name in ("arith.shli", "arith.shrui", "arith.shrsi"):
            amount = _constant(operands[1])
            if not isinstance(amount, int) or not 0 <= amount < 64:
                raise unimplemented(op, f"{name} on i64 by an amount not a constant in [0, 64)")
            if name == "arith.shli":
                return ops.shift_left(self.pair(operands[0]), amount)
            return ops.shift_right(self.pair(operands[0]), amount, name == "arith.shrsi")
        a, b = (self.pair(v) for v in operands) if len(operands) == 2 else (None, None)
        if name in _INT64_BINARY and a is not None:
            return getattr(ops, _INT64_BINARY[name])(a, b)
        if name in _INT64_BITWISE and a is not None:
            return ops.bitwise(_INT64_BITWISE[name], a, b)
        if name in _INT64_EXTREMES and a is not None:
            maximum, signed = _INT64_EXTREMES[name]
            return ops.extreme(a, b, maximum, signed)
        if name == "math.absi":
            return ops.absolute(self.pair(operands[0]))
        if name in _INT64_DIVISIONS:
            signed = name.endswith("si")
            divisor = _constant(operands[1])  # (a signed Python int)
            if isinstance(divisor, int) and not signed:
                divisor &= (1 << 64) - 1
            if not isinstance(divisor, int) or not 0 < abs(divisor) < int64.DIVISOR_LIMIT:
                raise unimplemented(op, f"{name} on i64 by a divisor that is not a constant of magnitude in "
                                        f"[1, 2^30) (division by values known only at run time is not lowered)")
            if name in ("arith.floordivsi", "arith.ceildivsi"):
                return ops.rounded_quotient(self.pair(operands[0]), divisor, name == "arith.floordivsi")
            quotient, remainder = ops.divided_by(self.pair(operands[0]), divisor, signed)
            return quotient if "div" in name else remainder
        raise unimplemented(op, f"{name} on i64: the bridge's i64 ops are {', '.join(_INT64_OPS)}")

    def float_to_int64(self, x: int) -> tuple[int, int]:
        """fptosi of a float32 to i64, exactly (toward zero): below 2^31 in magnitude the
        int32 conversion sign-extended; beyond, x is an integer, its high word floor(x /
        2^32) and its low word the rest, x - high 2^32, exact in float32 (x's own bits)."""
        emit = self.emit
        small = self.int64.sign_extended(emit(Unary(SfpuOp.F32_TO_I32, x)))
        high = emit(Unary(SfpuOp.FLOOR, emit(Unary(SfpuOp.MUL_SCALAR, x, 2.0 ** -32))))
        rest = emit(Binary(SfpuOp.SUB, x, emit(Unary(SfpuOp.MUL_SCALAR, high, 2.0 ** 32))))
        large = emit(Unary(SfpuOp.F32_TO_U32, rest)), emit(Unary(SfpuOp.F32_TO_I32, high))
        inside = emit(Binary(SfpuOp.LT, emit(Unary(SfpuOp.ABS, x)), emit(Constant(2.0 ** 31))))
        return self.int64.select(SfpuOp.WHERE, inside, small, large)

    def complex_op(self, op) -> tuple[int, int]:
        """An op whose result is a complex: its (real, imaginary) parts."""
        name, operands = op.name, list(op.operands)
        if name == "complex.create":
            return self.value(operands[0]), self.value(operands[1])
        if name == "complex.conj":
            real, imaginary = self.pair(operands[0])
            return real, self.emit(Unary(SfpuOp.NEG, imaginary))
        if name == "complex.neg":
            return tuple(self.emit(Unary(SfpuOp.NEG, part)) for part in self.pair(operands[0]))
        if name in ("complex.add", "complex.sub"):
            sfpu = SfpuOp.ADD if name == "complex.add" else SfpuOp.SUB
            return tuple(self.emit(Binary(sfpu, x, y)) for x, y in zip(self.pair(operands[0]), self.pair(operands[1])))
        if name == "complex.mul":  # (a + bi)(c + di) = (ac - bd) + (ad + bc)i
            (a, b), (c, d) = self.pair(operands[0]), self.pair(operands[1])
            product = lambda x, y: self.emit(Binary(SfpuOp.MUL, x, y))  # noqa: E731
            return (self.emit(Binary(SfpuOp.SUB, product(a, c), product(b, d))),
                    self.emit(Binary(SfpuOp.ADD, product(a, d), product(b, c))))
        if name == "arith.select":
            condition = self.value(operands[0])
            where = SfpuOp.WHERE_INT if self.integer[condition] else SfpuOp.WHERE
            return tuple(self.emit(Ternary(where, condition, x, y))
                         for x, y in zip(self.pair(operands[1]), self.pair(operands[2])))
        raise unimplemented(op, f"{name} on complex: the bridge's complex ops are {', '.join(_COMPLEX_OPS)}")

    def extracted(self, op):
        """The leaf of the values a tensor.extract takes (of an i64 or a complex: the pair
        of leaves)."""
        if self.extract_input is None:
            raise unimplemented(op, "tensor.extract outside an elementwise body")
        return self.extract_input(op, self)

    def narrow_of_wide(self, op) -> int:
        """An op of i64 or complex operands whose result is 32 bits or less."""
        name, operands = op.name, list(op.operands)
        if name in ("complex.re", "complex.im"):
            return self.pair(operands[0])[name == "complex.im"]
        if is_complex(operands[0].type):
            raise unimplemented(op, f"{name} of a complex: the bridge's complex ops are {', '.join(_COMPLEX_OPS)}")
        if name == "arith.cmpi":
            predicate = _INTEGER_PREDICATES[int(ir.IntegerAttr(op.attributes["predicate"]).value)]
            return self.int64.compare(predicate, self.pair(operands[0]), self.pair(operands[1]))
        if name == "arith.trunci":
            return self.narrowed(self.pair(operands[0])[0], integer_width(op.results[0].type))
        if name in ("arith.sitofp", "arith.uitofp"):
            return self.int64.to_float(self.pair(operands[0]), name == "arith.sitofp")
        if name in ("arith.index_cast", "arith.index_castui"):
            # An index is 32 bits here (the range of any address): one past it saturates, so that
            # a following clamp into a tensor (a gather's) makes of it what it makes of the i64.
            return self.int64.saturated(self.pair(operands[0]))
        raise unimplemented(op, f"{name} of an i64 to {op.results[0].type}: the bridge's i64 ops are "
                                f"{', '.join(_INT64_OPS)}")

    def result(self, v) -> int:
        """The code's last value: `v` in its type's kind (a float predicate as an int32)."""
        index = self.value(v)
        if integer_width(v.type) and not self.integer[index]:
            index = self.emit(Unary(SfpuOp.F32_TO_I32, index))
        return index

    # ---- integers ----
    def integer_value(self, v) -> int:
        """v as an int32 (a float predicate converted)."""
        index = self.value(v)
        return index if self.integer[index] else self.emit(Unary(SfpuOp.F32_TO_I32, index))

    def above_exp_floor(self, difference: int, maximum: int) -> int:
        """Float x - m raised to EXP_FLOOR where it is below and m below MASKED_MAX
        (NaN stays NaN)."""
        floor = self.emit(Constant(EXP_FLOOR))
        raised = self.emit(Ternary(SfpuOp.WHERE, self.emit(Binary(SfpuOp.LT, difference, floor)), floor, difference))
        masked = self.emit(Binary(SfpuOp.LT, maximum, self.emit(Constant(MASKED_MAX))))
        return self.emit(Ternary(SfpuOp.WHERE, masked, raised, difference))

    def clamped_index(self, v, extent: int) -> int:
        """Index v clamped into a dim of `extent` (out of range is undefined: no read
        lands outside the tensor)."""
        i = self.emit(Binary(SfpuOp.MAX_INT, self.integer_value(v), self.emit(Constant(0, True))))
        return self.emit(Binary(SfpuOp.MIN_INT, i, self.emit(Constant(extent - 1, True))))

    def narrowed(self, index: int, width: int) -> int:
        """An int32 made the canonical value of an i`width`: the low bits sign-extended (i1: 0 or 1)."""
        if width >= 32:
            return index
        if width == 1:
            return self.emit(Binary(SfpuOp.AND, index, self.emit(Constant(1, True))))
        shift = self.emit(Constant(32 - width, True))
        return self.emit(Binary(SfpuOp.SHR, self.emit(Binary(SfpuOp.SHL, index, shift)), shift))

    def zero_extended(self, index: int, width: int) -> int:
        """The unsigned value of a canonical i`width` (< 32) as an int32."""
        if width in (1, 32):
            return index
        return self.emit(Binary(SfpuOp.AND, index, self.emit(Constant((1 << width) - 1, True))))

    def integer_op(self, op) -> int:
        """addi .. shrui, cmpi: on int32, an unsigned op on zero-extended operands below i32."""
        name, operands = op.name, list(op.operands)
        width = integer_width(operands[0].type)
        a, b = (self.integer_value(v) for v in operands)
        if name == "arith.cmpi":
            predicate = _INTEGER_PREDICATES[int(ir.IntegerAttr(op.attributes["predicate"]).value)]
            wide, narrow = _INTEGER_RELATIONS[predicate]
        elif name in _UNSIGNED_BINARY:
            wide, narrow = _UNSIGNED_BINARY[name]
        else:
            result = self.emit(Binary(_INTEGER_BINARY[name], a, b))
            return self.narrowed(result, width) if name in ("arith.addi", "arith.subi", "arith.muli", "arith.shli",
                                                            "arith.divsi", "arith.floordivsi") else result
        if width == 32 or wide == narrow:
            if wide is None:
                raise unimplemented(op, f"{name} on i32: the SFPU divides int32 signed only")
            return self.emit(Binary(wide, a, b))
        result = self.emit(Binary(narrow, self.zero_extended(a, width), self.zero_extended(b, width)))
        return result if name == "arith.cmpi" else self.narrowed(result, width)

    def cast(self, op) -> int:
        """Casts between integer widths, index, float32, bfloat16 and f16 (a bf16 or f16
        value is its float32 value here)."""
        name, source = op.name, op.operands[0]
        width, out_width = integer_width(source.type), integer_width(op.results[0].type)
        if name.startswith("arith.scaling_") or \
                any(str(_element(v.type)) in BIT_FLOATS for v in (source, op.results[0])):
            return self.bit_float_cast(op)
        if name in ("arith.extf", "arith.truncf"):
            narrow = str(_element((source if name == "arith.extf" else op.results[0]).type))
            if narrow not in ("bf16", "f16"):
                raise unimplemented(op, f"{name} with {narrow}: the bridge computes f32, bf16 and f16")
            if name == "arith.extf":
                return self.value(source)
            rounded = float16.bfloat16_rounded if narrow == "bf16" else float16.rounded
            return rounded(self.emit, self.value(source))
        if name == "arith.bitcast":
            if width == 32 and out_width is None and str(_element(op.results[0].type)) == "f32":
                return self.as_float(self.integer_value(source))
            if width or out_width != 32:
                raise unimplemented(op, f"arith.bitcast of {source.type} to {op.results[0].type}: the lowering "
                                        f"reinterprets f32 and i32 as each other only")
            return self.as_bits(self.value(source))
        if name in ("arith.fptosi", "arith.fptoui"):
            to = SfpuOp.F32_TO_I32 if name == "arith.fptosi" else SfpuOp.F32_TO_U32
            return self.narrowed(self.emit(Unary(to, self.value(source))), out_width)
        if name == "arith.uitofp" and width == 1 and not self.integer[self.value(source)]:
            return self.value(source)  # a float predicate already
        x = self.integer_value(source)
        if name == "arith.sitofp":
            return self.emit(Unary(SfpuOp.I32_TO_F32, self.emit(Unary(SfpuOp.NEG_INT, x)) if width == 1 else x))
        if name == "arith.uitofp":
            if width == 32:
                return self.emit(Unary(SfpuOp.U32_TO_F32, x))
            return self.emit(Unary(SfpuOp.I32_TO_F32, self.zero_extended(x, width)))
        if out_width < width:  # trunci, or an index cast to a narrower type
            return self.narrowed(x, out_width)
        if name == "arith.extsi" and width == 1:  # true is -1
            return self.emit(Unary(SfpuOp.NEG_INT, x))
        if name in ("arith.extui", "arith.index_castui"):
            return self.zero_extended(x, width)
        return x  # extsi, index_cast: canonical values are sign-extended already

    def as_float(self, bits: int) -> int:
        """An int32 value's bits as a float32 value: where_tile moves b's bits whole and
        gives its result a's kind (a float)."""
        zero = self.emit(Constant(0.0))
        return self.emit(Ternary(SfpuOp.WHERE, zero, zero, bits))

    def as_bits(self, value: int) -> int:
        """A float32 value's bits as an int32 value."""
        return self.emit(Binary(SfpuOp.OR, value, self.emit(Constant(0, True))))

    def bit_float_cast(self, op) -> int:
        """Casts with a BIT_FLOATS type, as IREE's llvm-cpu pipeline computes them (MLIR's
        arith expansions, IREE's small-float emulation): a bitcast to or from an integer
        of its width keeps the bits; extf decodes (f8E8M0FNU e: the float32 of bits
        e << 23, NaN for 0xFF; f4E2M1FN: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives);
        truncf encodes (`encoded`); scaling_extf(x, s) = extf(x) * extf(s);
        scaling_truncf(x, s) = truncf(x / extf(s))."""
        name, (source, *scale), result = op.name, op.operands, op.results[0]
        narrow = str(_element((source if name.endswith("extf") else result).type))
        if scale and str(_element(scale[0].type)) != "f8E8M0FNU":
            raise unimplemented(op, f"{name} with a {scale[0].type} scale: the lowering takes f8E8M0FNU scales")
        if name == "arith.bitcast" and integer_width(source.type) == integer_width(result.type):
            return self.integer_value(source)
        if name in ("arith.extf", "arith.scaling_extf") and narrow in BIT_FLOATS:
            value = self.decoded(self.integer_value(source), narrow)
        elif name in ("arith.truncf", "arith.scaling_truncf") and narrow in BIT_FLOATS:
            value = self.value(source)
        else:
            raise unimplemented(op, f"{name} of {source.type} to {result.type}: the lowering converts "
                                    f"{' and '.join(BIT_FLOATS)} to and from f32 only")
        if scale:
            factor = self.decoded(self.integer_value(scale[0]), "f8E8M0FNU")
            value = self.emit(Binary(SfpuOp.MUL if name.endswith("extf") else SfpuOp.DIV, value, factor))
        return value if name.endswith("extf") else self.encoded(value, narrow)

    def decoded(self, bits: int, narrow: str) -> int:
        """The float32 value of a BIT_FLOATS value (its bits, sign-extended)."""
        constant, binary = self.int_constant, self.binary
        if narrow == "f8E8M0FNU":
            e = binary(SfpuOp.AND, bits, constant(0xFF))
            nan = binary(SfpuOp.EQ_INT, e, constant(0xFF))
            return self.as_float(self.emit(Ternary(SfpuOp.WHERE_INT, nan, constant(-1),
                                                   binary(SfpuOp.SHL, e, constant(23)))))
        sign = binary(SfpuOp.SHL, binary(SfpuOp.AND, bits, constant(8)), constant(28))
        exponent = binary(SfpuOp.AND, binary(SfpuOp.SHR, bits, constant(1)), constant(3))
        mantissa = binary(SfpuOp.AND, bits, constant(1))
        normal = binary(SfpuOp.OR, binary(SfpuOp.SHL, binary(SfpuOp.ADD_INT, exponent, constant(126)), constant(23)),
                        binary(SfpuOp.SHL, mantissa, constant(22)))
        half = self.emit(Ternary(SfpuOp.WHERE_INT, mantissa, constant(0x3F000000), constant(0)))  # 0.5 or 0
        return self.as_float(binary(SfpuOp.OR, sign, self.emit(Ternary(SfpuOp.WHERE_INT, exponent, normal, half))))

    def encoded(self, value: int, narrow: str) -> int:
        """A float32 value as a BIT_FLOATS value, as IREE's llvm-cpu pipeline computes it:
        f8E8M0FNU, the float32's exponent byte (MLIR's F8E8M0TruncFOpConverter);
        f4E2M1FN, IREE's TruncFToSmallFloat (ConvertUnsupportedFloatArith.cpp): round to
        nearest even, overflow and infinities saturated to +-6, NaN to +0, float32
        subnormals to a signed zero, and below 1.0 its subnormal path, which keeps
        only the rounded mantissa bit: [0.75, 1) gives 0, not 1 (ml_dtypes and the OCP
        spec give 1; docs/fidelity.md)."""
        constant, binary = self.int_constant, self.binary

        def where(condition: int, a: int, b: int) -> int:
            return self.emit(Ternary(SfpuOp.WHERE_INT, condition, a, b))

        def nearest_even(x: int, shift: int) -> int:  # x plus the bias that makes >> shift round to even
            even = binary(SfpuOp.SHL, constant(1), shift)
            odd = binary(SfpuOp.SHRU, even, constant(1))
            has_even = binary(SfpuOp.NE_INT, binary(SfpuOp.AND, x, even), constant(0))
            return binary(SfpuOp.ADD_INT, x, where(has_even, odd, binary(SfpuOp.SUB_INT, odd, constant(1))))

        bits = self.as_bits(value)
        if narrow == "f8E8M0FNU":
            return self.narrowed(binary(SfpuOp.SHRU, bits, constant(23)), 8)
        sign = binary(SfpuOp.SHL, binary(SfpuOp.SHRU, bits, constant(31)), constant(3))
        exponent = binary(SfpuOp.AND, binary(SfpuOp.SHRU, bits, constant(23)), constant(0xFF))
        mantissa = binary(SfpuOp.AND, bits, constant(0x7FFFFF))
        special = binary(SfpuOp.EQ_INT, exponent, constant(0xFF))
        infinite = binary(SfpuOp.AND, special, binary(SfpuOp.EQ_INT, mantissa, constant(0)))
        nan = binary(SfpuOp.XOR, special, infinite)
        unbiased = binary(SfpuOp.SUB_INT, exponent, constant(127))
        f4_exponent = binary(SfpuOp.ADD_INT, unbiased, constant(1))
        underflow = binary(SfpuOp.LE_INT, f4_exponent, constant(0))
        rounded = nearest_even(mantissa, constant(22))
        carry = binary(SfpuOp.GT_INT, rounded, constant(0x7FFFFF))
        f4_exponent = where(carry, binary(SfpuOp.ADD_INT, f4_exponent, constant(1)), f4_exponent)
        rounded = where(carry, constant(0), rounded)
        overflow = binary(SfpuOp.GT_INT, f4_exponent, constant(3))
        normal = binary(SfpuOp.OR, binary(SfpuOp.OR, sign, binary(SfpuOp.SHL, f4_exponent, constant(1))),
                        binary(SfpuOp.AND, binary(SfpuOp.SHRU, rounded, constant(22)), constant(1)))
        shift = binary(SfpuOp.SUB_INT, constant(22), unbiased)
        significand = nearest_even(binary(SfpuOp.OR, mantissa, constant(0x800000)), shift)
        subnormal = binary(SfpuOp.OR, sign, binary(SfpuOp.AND, binary(SfpuOp.SHRU, significand, shift),
                                                  constant(1)))
        subnormal = where(binary(SfpuOp.GT_INT, shift, constant(24)), sign, subnormal)
        result = where(underflow, subnormal, normal)
        result = where(binary(SfpuOp.EQ_INT, exponent, constant(0)), sign, result)
        result = where(binary(SfpuOp.OR, overflow, infinite), binary(SfpuOp.OR, sign, constant(7)), result)
        return self.narrowed(where(nan, constant(0), result), 4)

    # ---- body ops ----
    def op(self, op) -> int:
        name = op.name
        operands = list(op.operands)
        if any(is_pair(v.type) and not isinstance(_constant(v), int) for v in operands):  # (fpowi's constant power)
            return self.narrow_of_wide(op)
        subtracted = _difference(operands[0]) if name == "math.exp" else None
        if subtracted in self.maxima:  # a softmax's exp(x - max)
            return self.emit(Unary(SfpuOp.EXP, self.above_exp_floor(self.value(operands[0]),
                                                                     self.value(subtracted[1]))))
        if name in _UNARY:
            return self.emit(Unary(_UNARY[name], self.value(operands[0])))
        if name in ("math.powf", "math.fpowi") and _constant(operands[1]) is not None:
            return self.emit(Unary(SfpuOp.POWER, self.value(operands[0]), float(_constant(operands[1]))))
        if name == "arith.select":
            return self.select(op)
        special = self.special(op)
        if special is not None:
            return special
        if name == "arith.cmpf":
            return self.compare(op)
        if name in _CASTS:
            return self.cast(op)
        if name == "math.absi":
            return self.emit(Unary(SfpuOp.ABS_INT, self.integer_value(operands[0])))
        if name == "linalg.index":  # a tensor of the loop indices along the dim, made when the program loads
            if self.index_input is None:
                raise unimplemented(op, "linalg.index outside an elementwise body")
            return self.emit(self.index_input(ir.IntegerAttr(op.attributes["dim"]).value))
        if name == "tensor.extract":  # a gather: the values at indices computed per element
            return self.emit(self.extracted(op))
        if name in ("arith.andi", "arith.ori", "arith.xori") and integer_width(op.results[0].type) == 1 and \
                not any(self.integer[self.value(v)] for v in operands):  # float predicates: stay floats
            a, b = (self.value(v) for v in operands)
            if name == "arith.xori":  # a != b
                return self.emit(Binary(SfpuOp.NE, a, b))
            return self.emit(Binary(SfpuOp.MUL if name == "arith.andi" else SfpuOp.MAXIMUM, a, b))
        if name in _INTEGER_BINARY or name in _UNSIGNED_BINARY or name == "arith.cmpi":
            return self.integer_op(op)
        if name in _BINARY:
            a, b = operands
            ca, cb = _constant(a), _constant(b)
            if cb is not None and name in ("arith.addf", "arith.subf", "arith.mulf", "arith.divf"):
                x = self.value(a)
                cb = float(cb)
                if name == "arith.addf":
                    return self.emit(Unary(SfpuOp.ADD_SCALAR, x, cb))
                if name == "arith.subf":
                    return self.emit(Unary(SfpuOp.ADD_SCALAR, x, -cb))
                if name == "arith.mulf":
                    return self.emit(Unary(SfpuOp.MUL_SCALAR, x, cb))
                if cb != 0.0 and math.isfinite(cb) and abs(math.frexp(cb)[0]) == 0.5:
                    return self.emit(Unary(SfpuOp.MUL_SCALAR, x, 1.0 / cb))  # exact: a power of two's reciprocal
                # x * (1/c) is not x / c (torch's integer floor_divide, floor(-889.0 / 7.0), would give -128)
                return self.emit(Binary(SfpuOp.DIV, x, self.emit(Constant(cb))))
            if ca is not None and name in ("arith.addf", "arith.mulf"):
                op_ = SfpuOp.ADD_SCALAR if name == "arith.addf" else SfpuOp.MUL_SCALAR
                return self.emit(Unary(op_, self.value(b), float(ca)))
            if cb == 0.0 and name in ("arith.maximumf", "arith.maxnumf"):
                return self.emit(Unary(SfpuOp.RELU, self.value(a)))
            if ca == 1.0 and name == "arith.divf":
                return self.emit(Unary(SfpuOp.RECIP, self.value(b)))
            return self.emit(Binary(_BINARY[name], self.value(a), self.value(b)))
        supported = sorted(set(_UNARY) | set(_BINARY) | set(_INTEGER_BINARY) | _SPECIAL)
        raise unimplemented(op, f"{name} in the body of a linalg.generic has no Tensix lowering yet "
                                f"(supported: {', '.join(supported)})")

    def compare(self, op) -> int:
        """cmpf a P b -> 1.0 or 0.0, as IEEE defines P for NaN operands too: an ordered
        predicate is the SFPU's compare; an unordered one also holds where either
        operand is NaN (x != x), `one` only where neither is."""
        predicate = _PREDICATES[int(ir.IntegerAttr(op.attributes["predicate"]).value)]
        if predicate in ("false", "true"):
            return self.emit(Constant(float(predicate == "true")))
        a, b = op.operands
        unordered = self.unordered(a, b) if predicate in ("ord", "uno", "one", "ueq", "ugt", "uge", "ult", "ule") \
            else None
        if predicate in ("ord", "uno"):
            return unordered if predicate == "uno" else self.emit(Unary(SfpuOp.EQZ, unordered))
        relation = _RELATIONS[predicate.lstrip("ou") if predicate not in ("une", "one") else "ne"]
        if _constant(b) == 0:  # against zero: one instruction (a constant zero's sign does not matter)
            holds = self.emit(Unary(_ZERO_RELATIONS[relation], self.value(a)))
        else:
            holds = self.emit(Binary(relation, self.value(a), self.value(b)))
        if predicate == "one":  # NE holds for NaN; one does not
            return self.emit(Binary(SfpuOp.MUL, holds, self.emit(Unary(SfpuOp.EQZ, unordered))))
        if unordered is not None:
            return self.emit(Binary(SfpuOp.MAXIMUM, holds, unordered))
        return holds

    def unordered(self, a, b) -> int:
        """1.0 where a or b is NaN (a constant b is not)."""
        nan_a = self.emit(Binary(SfpuOp.NE, self.value(a), self.value(a)))
        if _constant(b) is not None:
            return nan_a if not math.isnan(_constant(b)) else self.emit(Constant(1.0))
        return self.emit(Binary(SfpuOp.MAXIMUM, nan_a, self.emit(Binary(SfpuOp.NE, self.value(b), self.value(b)))))

    def special(self, op) -> int | None:
        """math.round (ties away from zero), math.log2/log10, math.copysign,
        math.isnan/isinf/isfinite: composed of SFPU ops (None if `op` is none of them)."""
        name, operands = op.name, list(op.operands)
        if name in _LOG_SCALE:
            return self.emit(Unary(SfpuOp.MUL_SCALAR, self.emit(Unary(SfpuOp.LOG, self.value(operands[0]))),
                                   _LOG_SCALE[name]))
        if name == "math.round":  # trunc(x) + sign(x) where |x - trunc(x)| >= 0.5: every step exact
            x = self.value(operands[0])
            whole = self.emit(Unary(SfpuOp.TRUNC, x))
            fraction = self.emit(Unary(SfpuOp.ABS, self.emit(Binary(SfpuOp.SUB, x, whole))))
            away = self.emit(Binary(SfpuOp.GE, fraction, self.emit(Constant(0.5))))
            step = self.emit(Binary(SfpuOp.MUL, away, self.emit(Unary(SfpuOp.SIGN, x))))
            return self.emit(Binary(SfpuOp.ADD, whole, step))
        if name == "math.copysign":  # |a|, negated where b < 0 or b is -0 (1 / -0 = -inf); a NaN b counts as +
            magnitude = self.emit(Unary(SfpuOp.ABS, self.value(operands[0])))
            b = self.value(operands[1])
            negative = self.emit(Binary(SfpuOp.MAXIMUM, self.emit(Unary(SfpuOp.LTZ, b)),
                                        self.emit(Unary(SfpuOp.LTZ, self.emit(Unary(SfpuOp.RECIP, b))))))
            return self.emit(Ternary(SfpuOp.WHERE, negative, self.emit(Unary(SfpuOp.NEG, magnitude)), magnitude))
        if name in ("math.ctpop", "math.ctlz", "math.cttz"):
            width = integer_width(op.results[0].type)
            return self.bit_count(name, self.zero_extended(self.integer_value(operands[0]), width), width)
        if name == "math.isnan":
            x = self.value(operands[0])
            return self.emit(Binary(SfpuOp.NE, x, x))
        if name in ("math.isinf", "math.isfinite"):
            magnitude = self.emit(Unary(SfpuOp.ABS, self.value(operands[0])))
            relation = SfpuOp.EQ if name == "math.isinf" else SfpuOp.LT
            return self.emit(Binary(relation, magnitude, self.emit(Constant(math.inf))))
        return None

    def bit_count(self, name: str, x: int, width: int) -> int:
        """math.ctpop (SWAR: pairs, nibbles, bytes, summed by a multiply), ctlz (five
        halving steps) and cttz (ctpop of the trailing zeros' mask, (x & -x) - 1) of
        the zero-extended i`width` value `x`, from int32 shifts, masks and selects."""
        constant, binary = self.int_constant, self.binary
        if name == "math.cttz":
            lowest = binary(SfpuOp.AND, x, self.emit(Unary(SfpuOp.NEG_INT, x)))
            count = self.bit_count("math.ctpop", binary(SfpuOp.SUB_INT, lowest, constant(1)), 32)
            return binary(SfpuOp.MIN_INT, count, constant(width))  # x = 0: all ones, 32
        if name == "math.ctpop":
            t = binary(SfpuOp.SUB_INT, x, binary(SfpuOp.AND, binary(SfpuOp.SHRU, x, constant(1)), constant(0x55555555)))
            fours = constant(0x33333333)
            t = binary(SfpuOp.ADD_INT, binary(SfpuOp.AND, t, fours),
                       binary(SfpuOp.AND, binary(SfpuOp.SHRU, t, constant(2)), fours))
            t = binary(SfpuOp.AND, binary(SfpuOp.ADD_INT, t, binary(SfpuOp.SHRU, t, constant(4))), constant(0x0F0F0F0F))
            return binary(SfpuOp.SHRU, binary(SfpuOp.MUL_INT, t, constant(0x01010101)), constant(24))
        zero, count, value = constant(0), constant(0), x
        for step in (16, 8, 4, 2, 1):
            empty = binary(SfpuOp.EQ_INT, binary(SfpuOp.SHRU, value, constant(32 - step)), zero)
            count = binary(SfpuOp.ADD_INT, count, binary(SfpuOp.MUL_INT, empty, constant(step)))
            if step > 1:
                value = self.emit(Ternary(SfpuOp.WHERE_INT, empty, binary(SfpuOp.SHL, value, constant(step)), value))
        count = self.emit(Ternary(SfpuOp.WHERE_INT, binary(SfpuOp.EQ_INT, x, zero), constant(32), count))
        return count if width == 32 else binary(SfpuOp.SUB_INT, count, constant(32 - width))

    def select(self, op) -> int:
        """select(c, x, y) -> where_tile: x where c != 0 (a float or an int32 condition),
        else y, each moved whole (as int32 if integers)."""
        condition, a, b = op.operands
        c = self.value(condition)
        if integer_width(op.results[0].type):
            x, y = self.integer_value(a), self.integer_value(b)
        else:
            x, y = self.value(a), self.value(b)
        return self.emit(Ternary(SfpuOp.WHERE_INT if self.integer[c] else SfpuOp.WHERE, c, x, y))


# Integer widths IREE packs several to a byte: loaded and stored bytewise, computed as int32.
PACKED_WIDTHS = (2, 4)
# i64 body ops -> their tt_hal.compiler.int64 builders.
_INT64_BINARY = {"arith.addi": "add", "arith.subi": "subtract", "arith.muli": "multiply"}
_INT64_BITWISE = {"arith.andi": SfpuOp.AND, "arith.ori": SfpuOp.OR, "arith.xori": SfpuOp.XOR}
_INT64_EXTREMES = {"arith.maxsi": (True, True), "arith.minsi": (False, True), "arith.maxui": (True, False),
                   "arith.minui": (False, False)}
_COMPLEX_OPS = ("complex.create", "re", "im", "conj", "neg", "add", "sub", "mul", "select")
_INT64_DIVISIONS = ("arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi")
_INT64_OPS = ("addi", "subi", "muli", "andi", "ori", "xori", "max/min (signed and unsigned)", "cmpi", "select",
              "shifts by constants", "divisions and remainders by constants", "absi", "extsi/extui/trunci/index_cast",
              "sitofp/uitofp", "fptosi")
# Integer ops with an operand y that decides them: {y: the result, x itself or y}
# (_Code._simplified); the commutative ones in either order.
_IDENTITIES = {SfpuOp.ADD_INT: {0: "x"}, SfpuOp.SUB_INT: {0: "x"}, SfpuOp.OR: {0: "x", -1: "y"},
               SfpuOp.XOR: {0: "x"}, SfpuOp.AND: {0: "y", -1: "x"}, SfpuOp.MUL_INT: {0: "y", 1: "x"},
               SfpuOp.SHL: {0: "x"}, SfpuOp.SHR: {0: "x"}, SfpuOp.SHRU: {0: "x"}, SfpuOp.LT_UINT: {0: "y"}}
_COMMUTATIVE_INT = (SfpuOp.ADD_INT, SfpuOp.OR, SfpuOp.XOR, SfpuOp.AND, SfpuOp.MUL_INT)
# Ops of a dispatch that handle i64 tensors (as pairs of int32 tensors); any other op on
# one is UNIMPLEMENTED.
_WIDE_AWARE = ("iree_tensor_ext.dispatch.tensor.load", "iree_tensor_ext.dispatch.tensor.store", "linalg.generic",
               "tensor.extract", "tensor.extract_slice", "arith.constant", "tensor.empty", "iree_linalg_ext.sort",
               "iree_linalg_ext.scan", "iree_linalg_ext.scatter", "iree_linalg_ext.gather")  # (these two: i64 indices)
DYNAMIC = -(1 << 63)  # MLIR's kDynamic in static offsets and sizes
# iree_linalg_ext ops built from gathers, fused kernels and matmuls -> DispatchLowering's method.
_NETWORK_OPS = {"iree_linalg_ext.sort": "sort", "iree_linalg_ext.topk": "topk", "iree_linalg_ext.topk_v2": "topk",
                "iree_linalg_ext.arg_compare": "topk", "iree_linalg_ext.scan": "scan",
                "iree_linalg_ext.scatter": "scatter", "iree_linalg_ext.map_load": "map_load",
                "iree_linalg_ext.map_store": "map_store", "iree_linalg_ext.gather": "gather",
                "iree_linalg_ext.fft": "fft", "iree_linalg_ext.winograd.input_transform": "winograd",
                "iree_linalg_ext.winograd.output_transform": "winograd", "iree_linalg_ext.attention": "attention"}
# Winograd F(6x6, 3x3), IREE's only tile (WinogradConstants.h): an 8x8 input tile d
# becomes B^T d B; an 8x8 product m gives the 6x6 output tile A^T m A.
WINOGRAD_BT = np.array([[1, 0, -21 / 4, 0, 21 / 4, 0, -1, 0],
                        [0, 1, 1, -17 / 4, -17 / 4, 1, 1, 0],
                        [0, -1, 1, 17 / 4, -17 / 4, -1, 1, 0],
                        [0, 1 / 2, 1 / 4, -5 / 2, -5 / 4, 2, 1, 0],
                        [0, -1 / 2, 1 / 4, 5 / 2, -5 / 4, -2, 1, 0],
                        [0, 2, 4, -5 / 2, -5, 1 / 2, 1, 0],
                        [0, -2, 4, 5 / 2, -5, -1 / 2, 1, 0],
                        [0, -1, 0, 21 / 4, 0, -21 / 4, 0, 1]], np.float32)
WINOGRAD_AT = np.array([[1, 1, 1, 1, 1, 1, 1, 0],
                        [0, 1, -1, 2, -2, 1 / 2, -1 / 2, 0],
                        [0, 1, 1, 4, 4, 1 / 4, 1 / 4, 0],
                        [0, 1, -1, 8, -8, 1 / 8, -1 / 8, 0],
                        [0, 1, 1, 16, 16, 1 / 16, 1 / 16, 0],
                        [0, 1, -1, 32, -32, 1 / 32, -1 / 32, 1]], np.float32)
SCATTER_LIMIT = 1 << 22  # elements of a scatter's (row, batch) or (row, batch, slice) comparison space
# A float reduction over at most this many elements per result (a 3x3 depthwise window, a
# 2x2 pooling window) is unrolled over the result's shape (_unrolled_reduction).
UNROLLED_REDUCTION = 16
# An elementwise generic's loops are merged with no operand held in the merged tiling
# only when that cuts its tiles this many times (_merged_loops); an operand reading part
# of a merged group is gathered into it up to this many elements.
MERGE_WITHOUT_HELD = 4
EXPANDED_OPERAND = 1 << 16
# exp(x - m), m the row max of x (a softmax's, a logsumexp's), takes x - m no lower than
# EXP_FLOOR where m is below MASKED_MAX: the FPU's reduce_tile max keeps 7 mantissa bits,
# rounded toward zero, so for a row of huge negatives (a fully masked attention row,
# finfo.min) every x - m would be about -1e36 and every exp 0: 0 / 0 where IEEE arithmetic
# gives each element 1/n. Only such a row's max is that low (its truncation moves it by
# more than 80); other rows keep their exact zeros (e^-80 weights in a matmul after would
# make subnormal products, which the host computes ~100 times slower).
EXP_FLOOR = -80.0
MASKED_MAX = -(2.0 ** 15)
# A body's value computed from some of the loops only is computed over their space alone
# (_hoisted) where that saves this many instruction-tiles (a few launches).
HOISTED = 64
_UNROLLED_COMBINES = ("arith.addf", "arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf")


def _slice_positions(row_shape, slice_shape) -> np.ndarray:
    """int32 of `row_shape`: each element's flat position in an update slice of
    `slice_shape` placed at the row's start, -1 outside it."""
    positions = np.full(row_shape, -1, np.int32)
    positions[tuple(slice(0, s) for s in slice_shape)] = np.arange(math.prod(slice_shape),
                                                                   dtype=np.int32).reshape(slice_shape)
    return positions


def _binding_shape(subspan, ints) -> tuple:
    """The shape of the tensor a hal.interface.binding.subspan binds (None for a dynamic
    dim not known at compile time)."""
    # !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x?xf32>>: the inner tensor's dims
    dims = re.findall(r"tensor<((?:[0-9?]+x)*)", str(subspan.results[0].type))[-1].split("x")[:-1]
    dynamic = iter(subspan.opview.dynamic_dims)
    shape = []
    for d in dims:
        if d != "?":
            shape.append(int(d))
            continue
        value = next(dynamic)
        shape.append(ints[value] if value in ints and isinstance(ints[value], int) else None)
    return tuple(shape)


def _access(op, subspan) -> tuple:
    """(binding, byte offset, slice) of a dispatch.tensor.load or store through `subspan`
    ((binding, byte offset, its tensor's shape)): slice is None when the op reads or
    writes the whole binding, else (offsets, sizes)."""
    binding, offset, full = subspan
    offsets = tuple(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    sizes = tuple(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    strides = tuple(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    if DYNAMIC in offsets or DYNAMIC in sizes or DYNAMIC in strides:
        raise unimplemented(op, f"{op.name} of a slice with offsets {offsets}, sizes {sizes}, strides {strides}: "
                                f"the bridge reads and writes static slices")
    if not any(offsets) and sizes == full and all(s == 1 for s in strides):
        return binding, offset, None
    if None in full:
        raise unimplemented(op, f"{op.name} of a slice of a tensor of dynamic shape {full}")
    return binding, offset, (offsets, sizes) if all(s == 1 for s in strides) else (offsets, sizes, strides)


def _extents(op, operands, maps, loops: int) -> list[int]:
    """Each loop's extent, from the operands read through projections of it (0: none does)."""
    extents = [0] * loops
    for v, dims in zip(operands, maps):
        for j, d in enumerate(dims or ()):
            extents[d] = _shape(op, v.type)[j]
    return extents


def _words(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """i64 values as their (low, high) int32 words."""
    values = values.astype(np.int64)
    return (values & 0xFFFFFFFF).astype(np.uint32).view(np.int32), (values >> 32).astype(np.int32)


def _offsets(op, ints: Integers) -> list:
    """The offsets of a dispatch.tensor.load or store's slice: ints, or the MLIR values
    of those computed from tensor data (Integers.runtime)."""
    dynamic = iter(op.opview.offsets)
    offsets = []
    for o in ir.DenseI64ArrayAttr(op.attributes["static_offsets"]):
        if o == DYNAMIC:
            value = next(dynamic)
            o = value if value in ints.runtime else ints[value]
        offsets.append(o)
    return offsets


def _data_offsets(op, ints: Integers) -> bool:
    """Does a load or store take offsets computed from tensor data?"""
    return any(v in ints.runtime for v in op.opview.offsets)


def _slice_indices(full, offsets, sizes, strides=None) -> np.ndarray:
    """The flat indices, in a row-major tensor of shape `full`, of a slice's elements."""
    strides = strides or (1,) * len(full)
    return np.arange(math.prod(full), dtype=np.int64).reshape(full)[
        tuple(slice(o, o + n * s, s) for o, n, s in zip(offsets, sizes, strides))]


def _merged_window(op, full, offsets, sizes) -> tuple[tuple, Window]:
    """(device shape, window) of a slice stored as one batch of matrices: its
    contiguous dims merged into at most three (batch, rows, columns)."""
    strides = [math.prod(full[i + 1:]) for i in range(len(full))]
    merged = _merged([(n, s) for n, s in zip(sizes, strides) if n != 1]) or [(1, 1)]
    if merged[-1][1] != 1:  # no contiguous innermost dim (a column): rows of one element
        merged.append((1, 1))
    if len(merged) > 3:
        raise unimplemented(op, f"{op.name} of a slice (offsets {list(offsets)}, sizes {list(sizes)} of "
                                f"{list(full)}) that is not a batch of evenly spaced matrices in memory")
    merged = [(1, merged[0][0])] * (len(merged) == 1) + merged
    start = sum(o * s for o, s in zip(offsets, strides))
    (rows, row_stride), (columns, _) = merged[-2:]
    batch_stride = merged[-3][1] if len(merged) == 3 else rows * row_stride
    return tuple(n for n, _ in merged), Window(start, row_stride, batch_stride)


def _matrix_batch(op, full, offsets, sizes) -> tuple[tuple, Window] | None:
    """_merged_window, or None where the slice is no batch of matrices (a padded volume's
    interior: (C, D, H, W) in (C, D + 2, H + 2, W + 2), two levels of batch)."""
    try:
        return _merged_window(op, full, offsets, sizes)
    except HalError as error:
        if error.code != StatusCode.UNIMPLEMENTED:
            raise
        return None


def _window(op, full, device_shape, offsets, sizes, steps=None) -> Window:
    """Where a slice (offsets, sizes, steps: 1 if not given) of a row-major tensor of
    shape `full`, seen with `device_shape`, lies: each device dim (batch, rows, columns)
    must be whole dims of the slice; its rows runs of columns evenly spaced (one run, or
    segments: a merged (C, H*W) device shape of a padded (C, H, W) window), its rows
    evenly spaced (or in evenly spaced groups: a merged (H*W, C) device shape of a padded
    (H, W, C) window, or every other row of a strided slice: a transposed convolution's
    input spread into its dilated buffer), its matrices evenly spaced."""
    steps = steps or (1,) * len(full)
    start = sum(o * math.prod(full[i + 1:]) for i, o in enumerate(offsets))
    strides = [math.prod(full[i + 1:]) * step for i, step in enumerate(steps)]
    dims = [(n, s) for n, s in zip(sizes, strides) if n != 1]  # (size, element stride), outermost first
    *batch, rows, columns = device_shape
    merged = _merged(dims)
    if len(merged) <= 1 and (not merged or merged[0][1] == 1):  # one contiguous range: any device shape
        return Window(start, columns, rows * columns)

    def unimplemented_slice(what: str) -> HalError:
        return unimplemented(op, f"{op.name} of a slice (offsets {list(offsets)}, sizes {list(sizes)}, strides "
                                 f"{list(steps)} of {list(full)}) {what}")

    groups = []  # the slice's dims of the columns, the rows, the batch
    for extent in (columns, rows, math.prod(batch)):
        group = []
        while math.prod(n for n, _ in group) < extent and dims:
            group.insert(0, dims.pop())
        if math.prod(n for n, _ in group) != extent:
            raise unimplemented_slice(f"whose dims the device shape {tuple(device_shape)} does not follow")
        groups.append(_merged(group))
    runs, row_dims, batch_dims = groups
    if (runs and runs[-1][1] != 1) or len(runs) > 2:
        raise unimplemented_slice("whose rows are not contiguous in memory, nor runs evenly spaced")
    if len(row_dims) > 2 or len(batch_dims) > 1:
        raise unimplemented_slice("whose rows or matrices are not evenly spaced in memory")
    row_stride = row_dims[-1][1] if row_dims else columns
    batch_stride = batch_dims[0][1] if batch_dims else rows * row_stride
    segments = (runs[1][0], runs[0][1]) if len(runs) == 2 else (None, None)  # runs of the inner dim's extent
    row_groups = (row_dims[1][0], row_dims[0][1]) if len(row_dims) == 2 else ()  # groups of the inner dim's rows
    return Window(start, row_stride, batch_stride, *segments, *row_groups)


# A gather from a whole binding whose elements lie as a window of it, each row runs of at
# least this many contiguous elements, is that window's tilize instead (_strided_window):
# a tilize moves a run of 32 rows per instruction where the gather moves an element.
WINDOW_RUN = 8


def _strided_window(table: np.ndarray, device_shape) -> Window | None:
    """The window of a row-major binding holding, in the row-major order of
    `device_shape` (batch, rows, columns), the elements at the flat indices `table` (in
    that order): its rows runs of at least WINDOW_RUN contiguous elements (or whole
    rows) evenly spaced, its rows evenly spaced or in evenly spaced groups of evenly
    spaced rows, its matrices evenly spaced. None if there is none (a convolution tap's
    window of a padded image is one: H runs of W per channel, or H groups of W rows)."""
    *batch, rows, columns = device_shape
    t = table.reshape(math.prod(batch), rows, columns)
    start = int(t[0, 0, 0])
    row = t[0, 0] - start
    breaks = np.flatnonzero(row != np.arange(columns))
    segment = int(breaks[0]) if breaks.size else columns
    segment_stride = int(row[segment]) if breaks.size else segment
    firsts = t[0, :, 0] - start
    row_stride = int(firsts[1]) if rows > 1 else columns
    groups = np.flatnonzero(np.diff(firsts) != row_stride)
    row_group = int(groups[0]) + 1 if groups.size else rows
    row_group_stride = int(firsts[row_group]) if groups.size else row_group * row_stride
    batch_stride = int(t[1, 0, 0]) - start if t.shape[0] > 1 else rows * row_stride
    if segment < min(WINDOW_RUN, columns) or min(row_stride, batch_stride, segment_stride, row_group_stride) < 0:
        return None
    column, r = np.arange(columns), np.arange(rows)
    expected = (start + np.arange(t.shape[0])[:, None, None] * batch_stride
                + (r // row_group * row_group_stride + r % row_group * row_stride)[:, None]
                + column // segment * segment_stride + column % segment)
    if not np.array_equal(t, expected):
        return None
    return Window(start, row_stride, batch_stride, *((segment, segment_stride) if breaks.size else (None, None)),
                  *((row_group, row_group_stride) if groups.size else ()))


def _merged(dims: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(size, element stride) dims, outermost first, with each run of contiguous ones as one."""
    dims = list(dims)
    for k in range(len(dims) - 1, 0, -1):
        (outer, outer_stride), (inner, inner_stride) = dims[k - 1], dims[k]
        if outer_stride == inner * inner_stride:
            dims[k - 1:k + 1] = [(outer * inner, inner_stride)]
    return dims


def _iterators(generic) -> list[str]:
    return [re.search(r"<(\w+)>", str(a)).group(1) for a in generic.attributes["iterator_types"]]


def _affine(generic) -> list[list[str]]:
    """Each indexing map's results as Python expressions of the loop indices d0, d1, ...
    (floordiv and mod as // and %, which floor as MLIR's do)."""
    maps = []
    for attr in generic.attributes["indexing_maps"]:
        exprs = []
        for expr in attr.value.results:
            text = _python_affine(expr)
            if "s" in text:
                raise unimplemented(generic, f"indexing map {attr}: the lowering evaluates dims, constants, +, *, "
                                             f"floordiv and mod")
            exprs.append(text)
        maps.append(exprs)
    return maps


def _python_affine(expr) -> str:
    """An affine expression as Python over d<k> and s<k> (floordiv and mod as // and %,
    which floor as MLIR's do); UNIMPLEMENTED for anything else (ceildiv)."""
    text = str(expr).replace(" floordiv ", " // ").replace(" mod ", " % ")
    if not re.fullmatch(r"[ds0-9\s+\-*/%()]+", text):
        raise HalError(StatusCode.UNIMPLEMENTED, f"the affine expression {expr}: the lowering evaluates dims, "
                                                 f"symbols, constants, +, *, floordiv and mod")
    return text


def _projection(exprs: list[str]) -> list[int] | None:
    """The loop dims of a map whose results are plain dims; None for any other map."""
    dims = [re.fullmatch(r"d(\d+)", e) for e in exprs]
    return None if not all(dims) else [int(m.group(1)) for m in dims]


def _evaluate(expr: str, env: dict) -> np.ndarray:
    """An affine expression (_affine) over index arrays."""
    return eval(expr, {"__builtins__": {}}, env)  # noqa: S307 (digits, d<k>, s<k>, + - * // % only)


def _dims(exprs: list[str]) -> list[int]:
    """The loop dims a map's expressions use, in order."""
    return sorted({int(d) for e in exprs for d in re.findall(r"d(\d+)", e)})


_INDEX_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.divsi": lambda a, b: np.trunc(
        a / b).astype(np.int64), "arith.divui": np.floor_divide, "arith.floordivsi": np.floor_divide,
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b), "arith.ceildivui": lambda a, b: -np.floor_divide(-a, b),
    "arith.remsi": np.fmod, "arith.remui": np.remainder, "arith.minsi": np.minimum, "arith.maxsi": np.maximum,
    "arith.minui": np.minimum, "arith.maxui": np.maximum, "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor}
_INDEX_COMPARE = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
                  "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater,
                  "uge": np.greater_equal}


def _index_region(op, arguments: list[np.ndarray]) -> list:
    """The values an op's region yields for block arguments `arguments` (index arrays),
    evaluated with numpy (_evaluated)."""
    block = op.regions[0].blocks[0]
    env = {argument: value for argument, value in zip(block.arguments, arguments)}

    def value(v):
        if v in env:
            return env[v]
        constant = _constant(v)
        if constant is None:
            raise unimplemented(op, f"a region value {v.get_name()} not known when the dispatch is lowered")
        return constant

    for inner in list(block.operations)[:-1]:
        operands = [value(v) for v in inner.operands] if inner.name != "arith.constant" else []
        env.update(zip(inner.results, _evaluated(inner, operands)))
    return [value(v) for v in list(block.operations)[-1].operands]


def _loop_value(value, loop_indices: Callable[[int], np.ndarray], memo: dict) -> np.ndarray:
    """A generic body's value that is a function of the loops alone (_of_loops), evaluated
    with numpy over the loop space (`loop_indices`: a loop dim's index at each element)."""
    if value not in memo:
        operation = value.owner.operation
        if operation.name == "linalg.index":
            memo[value] = loop_indices(ir.IntegerAttr(operation.attributes["dim"]).value)
        elif operation.name == "arith.constant":
            memo[value] = _constant(value)
        else:
            results = _evaluated(operation, [_loop_value(v, loop_indices, memo) for v in operation.operands])
            memo[value] = results[list(operation.results).index(value)]
    return memo[value]


def _evaluated(inner, operands: list) -> list:
    """The results of index op `inner` on numpy `operands`: index and integer arithmetic,
    compares, selects, affine.apply, linearize_index and delinearize_index; UNIMPLEMENTED
    naming anything else."""
    name = inner.name
    if name == "arith.constant":
        return [_constant(inner.results[0])]
    if name in _INDEX_BINARY:
        return [_INDEX_BINARY[name](np.asarray(operands[0], np.int64), np.asarray(operands[1], np.int64))]
    if name == "arith.cmpi":
        predicate = _INTEGER_PREDICATES[int(ir.IntegerAttr(inner.attributes["predicate"]).value)]
        return [_INDEX_COMPARE[predicate](*operands)]
    if name == "arith.select":
        return [np.where(*operands)]
    if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"):
        return operands
    if name == "affine.apply":
        mapping = ir.AffineMapAttr(inner.attributes["map"]).value
        names = {f"d{i}": operands[i] for i in range(mapping.n_dims)}
        names |= {f"s{i}": operands[mapping.n_dims + i] for i in range(mapping.n_symbols)}
        return [_evaluate(_python_affine(expr), names) for expr in mapping.results]
    if name in ("affine.linearize_index", "affine.delinearize_index"):
        basis = list(ir.DenseI64ArrayAttr(inner.attributes["static_basis"]))
        dynamic = iter(operands[-basis.count(DYNAMIC):] if DYNAMIC in basis else [])
        basis = [next(dynamic) if b == DYNAMIC else b for b in basis]
        count = len(inner.operands) - sum(b == DYNAMIC for b in basis)  # indices (linearize) or 1
        if name == "affine.linearize_index":
            full = basis if len(basis) == count else [None, *basis]  # the outer bound may be left out
            return [sum(np.asarray(i, np.int64) * math.prod(full[k + 1:]) for k, i in enumerate(operands[:count]))]
        x, count = np.asarray(operands[0], np.int64), len(inner.results)
        full = basis if len(basis) == count else [None, *basis]
        return [x // math.prod(full[1:])] + [(x // math.prod(full[k + 1:])) % full[k] for k in range(1, count)]
    raise unimplemented(inner, f"{name} in an index region has no evaluation")


def _is_constant(tensor: Tensor) -> bool:
    """A tile tensor whose values the lowering knows (a module constant, of 32 bits or less)."""
    return tensor.ref is not None and tensor.ref[0] == "constant" and not tensor.row_major and tensor.high is None


def _tilings(dims: list[int], extents) -> list[list[list[int]]]:
    """Ways to tile a result over loop dims `dims` (of `extents`), each a list of groups
    of dims merged into one (the same elements in the same order), fewest tiles first
    (ties: fewer merges first): each dim its own, the last two merged (64x16x16, C H W,
    as 64 x 256: 16 whole tiles, not 64 a quarter full), all but the last merged
    (16x16x64, H W C, as 256 x 64)."""
    candidates = [[[d] for d in dims]]
    if len(dims) >= 3:
        candidates += [[[d] for d in dims[:-2]] + [dims[-2:]], [dims[:-1], dims[-1:]]]
    return sorted(candidates, key=lambda groups: tile_count([math.prod(extents[d] for d in g) for g in groups]))


def _broadcast_shape(space, dims) -> list[int]:
    """The shape an operand reading loop dims `dims` has in the loop space `space`: their
    extents, 1 in every other dim (where it is broadcast)."""
    return [extent if a in dims else 1 for a, extent in enumerate(space)]


def _merged_maps(maps, groups) -> list[list[int]] | None:
    """`maps` over the loops `groups` make (group g the new loop g), or None where a map
    reads some of a group's dims but not all of them in order, one after another."""
    number = {d: g for g, group in enumerate(groups) for d in group}
    merged = []
    for dims in maps:
        new, k = [], 0
        while k < len(dims):
            group = groups[number[dims[k]]]
            if dims[k:k + len(group)] != group:
                return None
            new.append(number[dims[k]])
            k += len(group)
        merged.append(new)
    return merged


def _plain_contraction(a_dims, b_dims, out_dims, k: int) -> bool:
    """Are these a matmul's maps over the reduction loop k: a (batch, m, k), b (k, n) or
    (batch, k, n) for a result (batch, m, n)?"""
    if len(out_dims) < 2 or k not in a_dims or k not in b_dims:
        return False
    m, n, batch = out_dims[-2], out_dims[-1], list(out_dims[:-2])
    return sorted(a_dims) == sorted(batch + [m, k]) and set(b_dims) <= set(batch + [k, n]) and n in b_dims


def _regrouped_dims(dims, reductions) -> list[int]:
    """The loop dims an operand reading `dims` reads once its reduction loops are one,
    numbered reductions[0] (DispatchLowering._regrouped)."""
    parallel = [d for d in dims if d not in reductions]
    return parallel + ([reductions[0]] if len(parallel) < len(dims) else [])


def _whole_load(tensor: Tensor) -> bool:
    """Is `tensor` a whole binding as loaded (its row-major bytes in order: any device
    shape of its elements reads them)?"""
    return tensor.ref is not None and tensor.ref[0] == "binding" and tensor.window is None and \
        tensor.ref[1][2] is None and not tensor.row_major and tensor.high is None


def _retiled(tensor: Tensor, device_shape) -> Tensor | None:
    """`tensor` in another device shape at no cost, or None: as it is (the same tiles);
    a constant written, a whole binding or a window of one tilized, in the device shape
    it is read in, when its elements keep their order (and the window's elements lie
    as a window in that shape too)."""
    if canonical(tensor.device_shape) == canonical(device_shape):
        return tensor
    if not (_is_constant(tensor) or _whole_load(tensor) or _is_window_load(tensor)):
        return None
    moved = Tensor(tensor.shape, device_shape, tensor.ref, data_format=tensor.data_format)
    if not np.array_equal(_device_order(moved).reshape(-1), np.arange(math.prod(tensor.shape))):
        return None
    if _is_constant(tensor):
        return moved
    if _whole_load(tensor):
        moved.ref = ("binding", (*tensor.ref[1][:2], ("as", canonical(device_shape))))
        return moved
    indices = _window_indices(tensor.window, tensor.device_shape).reshape(-1)[_device_order(tensor).reshape(-1)]
    return _window_load(tensor.ref[1][:2], indices.reshape(tensor.shape), device_shape, tensor.data_format)


def _is_window_load(tensor: Tensor) -> bool:
    """Is `tensor` a window of a whole binding as loaded (_window_load)?"""
    return tensor.ref is not None and tensor.ref[0] == "binding" and isinstance(tensor.ref[1][2], tuple) and \
        tensor.ref[1][2][:1] == ("window",)


def _window_load(place, indices: np.ndarray, device_shape, data_format) -> Tensor | None:
    """The load of the window of the binding at `place` (binding, byte offset) that holds
    its row-major tensor's elements at the flat `indices`, tiled as `device_shape`; None
    if they are not a window in that device shape (_strided_window)."""
    held = Tensor(indices.shape, device_shape)
    table = np.empty(indices.size, np.int64)
    table[_device_order(held).reshape(-1)] = indices.reshape(-1)
    window = _strided_window(table, device_shape)
    if window is None:
        return None
    access = (*place, ("window", dataclasses.astuple(window), held.device_shape))
    return Tensor(held.shape, held.device_shape, ("binding", access), data_format=data_format, window=window)


def _window_indices(window: Window, device_shape) -> np.ndarray:
    """The flat indices in its binding's row-major tensor of the elements a window holds,
    as a (batch, rows, columns) array of the matrices of `device_shape`."""
    *batch, rows, columns = device_shape
    segment, group = window.segment or columns, window.row_group or rows
    # (a segment stride of 0 repeats the segment: a vector read into every row of a merged group)
    segment_stride = segment if window.segment_stride is None else window.segment_stride
    column, row = np.arange(columns), np.arange(rows)
    return (window.start + np.arange(math.prod(batch))[:, None, None] * window.batch_stride
            + (row // group * (window.row_group_stride or 0) + row % group * window.row_stride)[:, None]
            + column // segment * segment_stride + column % segment)


def _merged_tilings(shape) -> list[tuple]:
    """Device shapes of a tensor's elements in order: the default one, then (batch,
    rows, columns) with the middle dims merged into the rows and (rows, columns) with
    all of them, the fewer tiles first."""
    default = default_device_shape(shape)
    *outer, rows, columns = default
    merged = {(outer[0], math.prod(outer[1:]) * rows, columns), (math.prod(outer) * rows, columns)} if outer else set()
    return [default] + sorted(merged - {default}, key=lambda device: (tile_count(device), len(device)))


def _merges(shape, device) -> bool:
    """Is `device` `shape` with runs of its consecutive dims merged into one each?"""
    dims = [d for d in shape if d != 1]
    for extent in (d for d in device if d != 1):
        product = 1
        while dims and product < extent:
            product *= dims.pop(0)
        if product != extent:
            return False
    return not dims


def _device_order(tensor: Tensor) -> np.ndarray:
    """Where each element of a tile tensor (logical shape) is in the row-major order of
    its device shape: in order (the same dims, some of them merged, or a vector folded
    into a matrix), or transposed when the device shape swaps the logical shape's last
    two dims."""
    n = math.prod(tensor.shape)
    shape, device = tensor.shape, tensor.device_shape

    def essential(dims):
        return [d for d in dims if d != 1]

    if essential(device) == essential(shape) or _merges(shape, device):
        return np.arange(n, dtype=np.int64).reshape(shape)
    swapped = (*shape[:-2], shape[-1], shape[-2]) if len(shape) >= 2 else shape
    if len(essential(shape)) >= 2 and essential(device) == essential(swapped):
        return np.arange(n, dtype=np.int64).reshape(swapped).swapaxes(-1, -2)
    if len(essential(shape)) <= 1 and math.prod(device) == n:
        return np.arange(n, dtype=np.int64).reshape(shape)
    raise HalError(StatusCode.INTERNAL, f"a tensor of shape {shape} held as device shape {device}")


class DispatchLowering:
    """Lowers one dispatch function, for any push constants, given the device shapes
    its tensors are to have (`bound`: access (binding, byte offset, slice) -> device
    shape, absent if unassigned)."""

    def __init__(self, func, options: Options):
        self.func = func
        self.options = options

    def tensors(self) -> dict[tuple, tuple]:
        """(binding, byte offset, slice) -> tensor shape, of every tensor the dispatch
        loads or stores (slice: None for the whole binding)."""
        ints, subspans, found = Integers(), {}, {}
        for op in _children(self.func):
            if ints.handle(op):
                continue
            if op.name == "hal.interface.binding.subspan":
                subspans[op.results[0]] = (op.opview.binding.value, ints[op.opview.byte_offset],
                                           _binding_shape(op, ints))
            elif op.name == "iree_tensor_ext.dispatch.tensor.load" and not _data_offsets(op, ints):
                found[_access(op, subspans[op.operands[0]])] = _shape(op, op.results[0].type)
            elif op.name == "iree_tensor_ext.dispatch.tensor.store":
                found[_access(op, subspans[op.operands[1]])] = _shape(op, op.operands[0].type)
        return found

    def run(self, bound: dict[tuple, tuple]):
        self.bound = bound
        self.launches: list[Launch] = []
        self.temp_numbers = itertools.count()  # a scratch tensor's number, each once
        self.values: dict = {}
        self.scalars: dict = {}  # a scalar of the dispatch -> the 0-d tensor it was extracted from
        self.subspans: dict = {}  # subspan value -> (binding, byte offset, the binding's tensor shape)
        self.outputs: dict[tuple, tuple] = {}  # access -> (device shape, format, window) it was written with
        # id(gather result) -> (it, its source, the source's logical flat index of each element, fill): a
        # gather of it gathers from the source at once (_gather)
        self.gathered: dict[int, tuple] = {}
        self.untilized: dict[int, tuple] = {}  # id(tensor) -> (it, its _rows, the untilize launch's index)
        ints = self.ints = Integers()
        for op in _children(self.func):
            name = op.name
            if ints.handle(op) or name == "func.return":
                continue
            if name not in _WIDE_AWARE and any(isinstance(v.type, ir.ShapedType) and is_pair(v.type)
                                               for v in [*op.operands, *op.results]):
                raise unimplemented(op, f"{name} on i64 or complex: the bridge takes them through loads, stores, "
                                        f"elementwise generics and extracts")
            if name == "arith.constant":
                if isinstance(op.results[0].type, ir.RankedTensorType):
                    self.values[op.results[0]] = self.constant(op)
            elif name == "tensor.empty":
                self.values[op.results[0]] = Tensor(_shape(op, op.results[0].type))
            elif name == "hal.interface.binding.subspan":
                view = op.opview
                if not all(d in ints and isinstance(ints[d], int) for d in view.dynamic_dims):  # specialized: constants
                    raise unimplemented(op, "a binding with dynamic dims: the bridge compiles static shapes")
                self.subspans[op.results[0]] = (view.binding.value, ints[view.byte_offset], _binding_shape(op, ints))
            elif name == "iree_tensor_ext.dispatch.tensor.load":
                self.load(op)
            elif name == "iree_tensor_ext.dispatch.tensor.store":
                self.store(op)
            elif name == "linalg.generic":
                self.generic(op)
            elif name in ("linalg.pack", "linalg.unpack"):
                self.pack(op)
            elif name in _NETWORK_OPS:
                getattr(self, _NETWORK_OPS[name])(op)
            elif name in _CASTS and isinstance(op.operands[0].type, ir.RankedTensorType):
                self.tensor_cast(op)
            elif name == "tensor.extract":
                self.scalars[op.results[0]] = self.extract(op)
            elif name == "tensor.extract_slice":
                self.values[op.results[0]] = self.extract_slice(op)
            else:
                raise unimplemented(op, f"{name} has no Tensix lowering yet")
        self.launches = _live(self.launches)
        return self

    def extract(self, op) -> Tensor:
        """The 0-d tensor of a scalar a tensor.extract takes out of a tensor (at indices
        known when the dispatch is lowered): the tensor itself if it is 0-d, else gathered."""
        source = self.values[op.operands[0]]
        if len(op.operands) == 1:
            return source
        indices = [self.ints[v] for v in op.operands[1:]]
        if not all(isinstance(i, int) and 0 <= i < n for i, n in zip(indices, source.shape)):
            raise unimplemented(op, f"tensor.extract at {indices} of a tensor of shape {list(source.shape)}: the "
                                    f"lowering extracts at indices known when it lowers, inside the tensor")
        return self._gather_words(op, source, np.array(np.ravel_multi_index(indices, source.shape)))

    def extract_slice(self, op) -> Tensor:
        """A slice of a tensor of the dispatch (of a constant, say) at offsets known when
        the dispatch is lowered: a gather (of an i64, of both words)."""
        if len(op.operands) > 1:
            raise unimplemented(op, "tensor.extract_slice at offsets or of sizes known only at run time")
        offsets, sizes, strides = (list(ir.DenseI64ArrayAttr(op.attributes[f"static_{key}"]))
                                   for key in ("offsets", "sizes", "strides"))
        source = self.values[op.operands[0]]
        indices = _slice_indices(source.shape, offsets, sizes, strides).reshape(_shape(op, op.results[0].type))
        return self._gather_words(op, source, indices)

    def _gather_words(self, op, source: Tensor, indices: np.ndarray, fill=0) -> Tensor:
        """_gather of a tensor and, for a pair type (i64, complex), of its high words too."""
        low = self._gather(op, source, indices, fill)
        if source.high is not None:
            low.high = self._gather(op, source.high, indices, fill)
        return low

    def constant(self, op) -> Tensor:
        """A tensor constant of the dispatch: a fill if it is a splat, else a module
        constant (an export tensor, written when the executable is prepared)."""
        shape = _shape(op, op.results[0].type)
        if is_wide(op.results[0].type):
            data = dense_array(op, op.attributes["value"]).reshape(shape).astype(np.int64)
            low, high = (self._constant_words(words, shape) for words in _words(data))
            low.high = high
            return low
        _check_element_type(op, op.results[0].type)
        data = dense_array(op, op.attributes["value"]).reshape(shape)
        width = integer_width(op.results[0].type)
        fmt = tile_format(op.results[0].type)
        if data.size and (data == data.flat[0]).all():
            return Tensor(shape, fill=_fill_value(data.flat[0], width), data_format=fmt)
        if width:
            data = np.vectorize(lambda x: _canonical_integer(int(x), width), otypes=[np.int32])(data)
        return Tensor(shape, ref=("constant", data), data_format=fmt)

    @staticmethod
    def _constant_words(words: np.ndarray, shape) -> Tensor:
        if words.size and (words == words.flat[0]).all():
            return Tensor(shape, fill=int(words.flat[0]), data_format=INTEGER_FORMAT)
        return Tensor(shape, ref=("constant", words), data_format=INTEGER_FORMAT)

    def tensor_cast(self, op) -> None:
        """A cast of a whole tensor outside a generic (an i1 argument's bytes to i1, an i1
        to the i8 it is stored as, ...): elementwise code over it."""
        source, result = op.operands[0], op.results[0]
        tensor = self.values[source]
        if tensor.data_format is DataFormat.uint8 and op.name == "arith.trunci" and \
                integer_width(result.type) == 1 and tensor.ref is not None and tensor.ref[0] == "binding":
            self.values[result] = tensor  # an i1 argument: bytes of 0 or 1 already
            return
        if tensor.fill is not None:
            raise unimplemented(op, f"{op.name} of a splat tensor")
        inputs = [(tensor, FusedInput(self._format(tensor)))]
        code = _Code({source: Input(0)}, inputs, lambda v: self._scalar_leaf(v, inputs))
        value = code.result(result)
        out = self._temp(tensor.shape, tensor.device_shape, tile_format(result.type))
        self._fused(op, *_cone(code.code, value, inputs), out)
        self.values[result] = out

    def _format(self, tensor: Tensor) -> DataFormat:
        """The format of a tensor's tiles."""
        return tensor.data_format or self.options.data_format

    def _placed(self, op, subspan, shape, held=None):
        """(access, device shape, window) of a load or store of `shape` through `subspan`;
        a slice stored from a tensor of device shape `held` keeps it where the window can
        take it (no retiling before its untilize: a merged (C, H*W) result stored into a
        padded window writes each row as H runs)."""
        access = _access(op, self.subspans[subspan])
        device_shape = self.bound.get(access) or default_device_shape(shape)
        if access[2] is None:
            return access, device_shape, None
        full = self.subspans[subspan][2]
        if held is not None and access not in self.bound and canonical(held) != canonical(device_shape):
            try:
                return access, held, _window(op, full, held, *access[2])
            except HalError as error:
                if error.code != StatusCode.UNIMPLEMENTED:
                    raise
        return access, device_shape, _window(op, full, device_shape, *access[2])

    def load(self, op) -> None:
        """A tensor loaded from a binding: tilized in its memory format. A narrow integer
        is sign-extended into int32 tiles (but an i1 argument's bytes, which are 0 or 1)."""
        shape = _shape(op, op.results[0].type)
        result = op.results[0]
        if is_pair(result.type):
            self.values[result] = self._load_wide(op, shape)
            return
        if integer_width(result.type) in PACKED_WIDTHS:
            self.values[result] = self._load_packed(op, shape, integer_width(result.type))
            return
        _check_element_type(op, result.type)
        element = str(result.type.element_type)
        width = integer_width(result.type)
        if element not in MEMORY_FORMATS:
            raise unimplemented(op, f"a load of {element}: the bridge loads {', '.join(MEMORY_FORMATS)}")
        full = self.subspans[op.operands[0]][2]
        device_shape = default_device_shape(shape)
        if _data_offsets(op, self.ints):
            whole = self._whole(op, full, MEMORY_FORMATS[element])
            raw = self._gather_at(op, whole, self._slice_table(op, full, shape))
        else:
            try:
                access, device_shape, window = self._placed(op, op.operands[0], shape)
                raw = Tensor(shape, device_shape, ("binding", access), data_format=MEMORY_FORMATS[element],
                             window=window)
            except HalError as error:  # a slice the tilize stage cannot read: gathered from the whole binding
                access = _access(op, self.subspans[op.operands[0]])
                if error.code != StatusCode.UNIMPLEMENTED or access[2] is None:
                    raise
                raw = self._gather(op, self._whole(op, full, MEMORY_FORMATS[element]),
                                   _slice_indices(full, *access[2]).reshape(shape))
        if element == "f16":  # the bit patterns widened to float32
            out = self._temp(shape, device_shape)
            code = [Input(0)]
            float16.to_float(_appender(code), 0)
            self._fused(op, code, [(raw, FusedInput(raw.data_format))], out)
            raw = out
        elif width in (8, 16) and not all(use.owner.name == "arith.trunci" and
                                          integer_width(use.owner.results[0].type) == 1 for use in result.uses):
            out = self._temp(shape, device_shape, INTEGER_FORMAT)
            extended = [Input(0), Constant(32 - width, True), Binary(SfpuOp.SHL, 0, 1), Binary(SfpuOp.SHR, 2, 1)]
            self._fused(op, extended, [(raw, FusedInput(raw.data_format))], out)
            raw = out
        self.values[result] = raw

    def _whole(self, op, shape, data_format: DataFormat) -> Tensor:
        """The whole binding a load reads, as a tensor of `shape` in `data_format` (a
        gather's source)."""
        binding, offset, _ = self.subspans[op.operands[0]]
        return Tensor(shape, ref=("binding", (binding, offset, None)), data_format=data_format)

    def _elements(self, op, shape) -> tuple[np.ndarray, tuple]:
        """(the flat indices of a load's elements in its binding's row-major tensor, as
        `shape`; the device shape the dispatch's other tensors give it) of a load whose
        words a gather picks (an i64, an i2 or i4)."""
        full = self.subspans[op.operands[0]][2]
        if None in full:
            raise unimplemented(op, f"a load of {op.results[0].type} from a binding of dynamic shape {full}")
        access = _access(op, self.subspans[op.operands[0]])
        flat = np.arange(math.prod(full)) if access[2] is None else _slice_indices(full, *access[2])
        return flat.reshape(shape), self.bound.get(access) or default_device_shape(shape)

    def _load_wide(self, op, shape) -> Tensor:
        """An i64 (or complex) tensor loaded: its low and its high words (real and
        imaginary parts) gathered from the binding read as int32 (float32) words."""
        full = self.subspans[op.operands[0]][2]
        if None in full:
            raise unimplemented(op, f"a load of {op.results[0].type} from a binding of dynamic shape {full}")
        fmt = word_format(op.results[0].type)
        words = self._whole(op, (2 * math.prod(full),), fmt)
        if _data_offsets(op, self.ints):
            table = self._slice_table(op, full, shape)
            halves = []
            for word in (0, 1):
                places = self._temp(shape, table.device_shape, INTEGER_FORMAT)
                code = [Input(0), Constant(2, True), Binary(SfpuOp.MUL_INT, 0, 1), Constant(word, True),
                        Binary(SfpuOp.ADD_INT, 2, 3)]
                self._fused(op, code, [(table, FusedInput(INTEGER_FORMAT))], places)
                halves.append(self._gather_at(op, words, places))
        else:
            flat, device_shape = self._elements(op, shape)
            halves = [self._gather(op, words, 2 * flat + word, out=self._temp(shape, device_shape, fmt))
                      for word in (0, 1)]
        halves[0].high = halves[1]
        return halves[0]

    def _load_packed(self, op, shape, bits: int) -> Tensor:
        """An i2 or i4 tensor loaded (IREE packs 8 / bits of them in a byte, the first in
        the low bits): each element's byte gathered, shifted down and sign-extended."""
        per_byte = 8 // bits
        flat, device_shape = self._elements(op, shape)
        full = self.subspans[op.operands[0]][2]
        data = self._whole(op, (ceil_div(math.prod(full), per_byte),), DataFormat.uint8)
        data = self._gather(op, data, flat // per_byte, out=self._temp(shape, device_shape, INTEGER_FORMAT))
        shifts = Tensor(shape, ref=("constant", (flat % per_byte * bits).astype(np.int32)), data_format=INTEGER_FORMAT)
        inputs: list = []
        code = _Code({}, inputs, lambda v: None)
        x = code.emit(Binary(SfpuOp.SHRU, code.emit(self._leaf(op, data, inputs, device_shape)),
                             code.emit(self._leaf(op, shifts, inputs, device_shape))))
        value = code.narrowed(x, bits)
        out = self._temp(shape, device_shape, INTEGER_FORMAT)
        self._fused(op, *_cone(code.code, value, inputs), out)
        return out

    def _store_packed(self, op, tensor: Tensor, bits: int) -> None:
        """An i2 or i4 tensor stored whole, packed 8 / bits to a byte: the elements of each
        byte gathered (one gather per place in the byte), masked, shifted up and ORed."""
        access = _access(op, self.subspans[op.operands[1]])
        if access[2] is not None:
            raise unimplemented(op, f"a store of i{bits} into a slice ({access[2]}): the bridge packs whole bindings")
        per_byte, n = 8 // bits, math.prod(tensor.shape)
        places = np.arange(ceil_div(n, per_byte) * per_byte).reshape(-1, per_byte)
        places[places >= n] = -1
        inputs: list = []
        code = _Code({}, inputs, lambda v: None)
        mask, packed = code.emit(Constant((1 << bits) - 1, True)), None
        for j in range(per_byte):
            word = code.emit(Binary(SfpuOp.AND, code.emit(self._leaf(op, self._gather(op, tensor, places[:, j]),
                                                                          inputs, (1, places.shape[0]))), mask))
            if j:
                word = code.emit(Binary(SfpuOp.SHL, word, code.emit(Constant(j * bits, True))))
            packed = word if packed is None else code.emit(Binary(SfpuOp.OR, packed, word))
        out = Tensor((places.shape[0],), None, ("output", access), data_format=DataFormat.uint8)
        self._fused(op, *_cone(code.code, packed, inputs), out)
        self.outputs[access] = (out.device_shape, DataFormat.uint8, None)

    def _store_wide(self, op, tensor: Tensor) -> None:
        """An i64 (or complex) tensor stored: its words interleaved (low, high; real,
        imaginary) into a tensor of 32-bit words over the binding's bytes (a slice's rows
        and matrices as evenly spaced runs of words), by two gathers (each word's other
        places zero bits) and an OR of the bits."""
        binding, offset, full = self.subspans[op.operands[1]]
        access = _access(op, self.subspans[op.operands[1]])
        n = math.prod(tensor.shape)
        wanted, window = (n, 2), None
        if access[2] is not None:
            if len(access[2]) == 3:
                raise unimplemented(op, f"a store of {op.operands[0].type} into a slice with strides {access[2][2]}")
            offsets, sizes = access[2]
            wanted, window = _merged_window(op, (*full, 2), (*offsets, 0), (*sizes, 2))
        places = np.arange(2 * n).reshape(wanted)  # word places, in the slice's row-major order
        columns = [self._gather(op, word, np.where(places % 2 == w, places // 2, -1))
                   for w, word in enumerate((tensor, tensor.high))]
        out = Tensor(wanted, wanted, ("output", access), data_format=INTEGER_FORMAT)
        self._fused(op, (Input(0), Input(1), Binary(SfpuOp.OR, 0, 1)),
                    [(column, FusedInput(self._format(column))) for column in columns], out)
        self.outputs[access] = (wanted, INTEGER_FORMAT, window)

    def _slice_table(self, op, full, shape) -> Tensor:
        """The flat indices, in the row-major tensor of shape `full` a load reads, of the
        elements of its slice whose offsets are computed from tensor data: the static part
        as a constant, each data offset (clamped into its dim, as out of range is
        undefined) times its dim's stride added by a fused kernel."""
        sizes = tuple(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
        strides = tuple(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
        if DYNAMIC in sizes or DYNAMIC in strides or None in full:
            raise unimplemented(op, f"{op.name} of a slice of sizes {sizes} and strides {strides} of {full}, at "
                                    f"offsets computed from tensor data: the bridge gathers static sizes")
        offsets = _offsets(op, self.ints)
        static = [o if isinstance(o, int) else 0 for o in offsets]
        base = _slice_indices(full, static, sizes, strides).reshape(shape).astype(np.int32)
        inputs: list = []
        code = _Code({}, inputs, lambda v: self._scalar_leaf(v, inputs))
        flat = code.emit(self._leaf(op, Tensor(shape, ref=("constant", base), data_format=INTEGER_FORMAT), inputs,
                                    default_device_shape(shape)))
        for d, offset in enumerate(offsets):
            if isinstance(offset, int):
                continue
            i = code.integer_value(offset)
            i = code.emit(Binary(SfpuOp.MAX_INT, i, code.emit(Constant(0, True))))
            last = full[d] - (sizes[d] - 1) * strides[d] - 1  # the last offset whose slice fits
            i = code.emit(Binary(SfpuOp.MIN_INT, i, code.emit(Constant(last, True))))
            stride = math.prod(full[d + 1:])
            if stride != 1:
                i = code.emit(Binary(SfpuOp.MUL_INT, i, code.emit(Constant(stride, True))))
            flat = code.emit(Binary(SfpuOp.ADD_INT, flat, i))
        table = self._temp(shape, default_device_shape(shape), INTEGER_FORMAT)
        self._fused(op, *_cone(code.code, flat, inputs), table)
        return table

    def store(self, op) -> None:
        value = op.operands[0]
        tensor = self.values[value]
        if is_pair(value.type):
            self._store_wide(op, tensor)
            return
        if integer_width(value.type) in PACKED_WIDTHS:
            self._store_packed(op, tensor, integer_width(value.type))
            return
        if self._store_gathered_source(op, tensor):
            return
        held = None if tensor.fill is not None or tensor.row_major else tensor.device_shape
        if _whole_load(tensor):
            tensor = self._copied(op, tensor)
            held = tensor.device_shape
        try:
            access, wanted, window = self._placed(op, op.operands[1], tensor.shape, held)
        except HalError as error:  # a slice whose dims the tensor's do not follow: its elements regrouped
            access = _access(op, self.subspans[op.operands[1]])
            if error.code != StatusCode.UNIMPLEMENTED or access[2] is None:
                raise
            merged = None if len(access[2]) == 3 else _matrix_batch(op, self.subspans[op.operands[1]][2], *access[2])
            if merged is None:  # no window (strided, or two levels of batch): the whole binding written back
                tensor, access = self._merged_into_binding(op, tensor, access), (*access[:2], None)
                wanted, window = tensor.device_shape, None
            else:
                wanted, window = merged
                tensor = self._gather(op, tensor, np.arange(math.prod(wanted)).reshape(wanted))
        if window is None and access not in self.bound:  # a whole binding takes the tensor's own device shape
            wanted = tensor.device_shape
        element = str(value.type.element_type)
        if element not in MEMORY_FORMATS:
            raise unimplemented(op, f"a store of {element}: the bridge stores {', '.join(MEMORY_FORMATS)}")
        data_format = MEMORY_FORMATS[element]
        out = Tensor(tensor.shape, wanted, ("output", access), data_format=data_format)
        if element == "f16" and tensor.fill is not None:  # a fill stored as its f16 pattern
            tensor = Tensor(tensor.shape, fill=int(np.float16(tensor.fill).view(np.uint16)),
                            data_format=DataFormat.uint16)
        elif element == "f16":  # float32 values narrowed to f16 patterns
            tensor = self._as(op, tensor, wanted)
            code = [Input(0)]
            float16.from_float(_appender(code), 0)
            self._fused(op, code, [(tensor, FusedInput(self._format(tensor)))], out)
            self.outputs[access] = (wanted, data_format, window)
            return
        if tensor.fill is not None:
            inputs = []
            self._fused(op, (self._fill_leaf(tensor.fill, inputs),), inputs, out)
        elif tensor.ref is not None and tensor.ref[0] == "temp" and data_format is self._format(tensor) and \
                canonical(tensor.device_shape) == canonical(wanted):
            tensor.ref = ("output", access)  # the producer writes the binding directly
            tensor.device_shape = wanted
        elif data_format is not self._format(tensor):  # packed to the stored format (an integer's low bytes)
            if canonical(tensor.device_shape) != canonical(wanted):
                raise unimplemented(op, f"a {element} tensor of device shape {tensor.device_shape} stored as {wanted}")
            self._fused(op, (Input(0),), [(tensor, FusedInput(self._format(tensor)))], out)
        else:
            self._convert(op, tensor, out)
        self.outputs[access] = (wanted, data_format, window)

    def _store_gathered_source(self, op, tensor: Tensor) -> bool:
        """Stores a gather's result by writing its source (a scratch tensor of the
        binding's format, each element gathered once) through the window of the binding
        where the gather puts its elements, if they lie as one: an attention's result
        gathered into its dims and transposed back to sequence-first is written as the
        attention leaves it; the gather and the untilize before it, then unread, are
        dropped (_live). False (nothing done) otherwise."""
        earlier = self.gathered.get(id(tensor))
        if earlier is None or earlier[0] is not tensor:
            return False
        _, source, table, _ = earlier
        window = self._store_window(op, source, table)
        if window is None or sum(_written(launch, source) for launch in self.launches) != 1:
            return False
        access = _access(op, self.subspans[op.operands[1]])
        source.ref = ("output", access)
        self.outputs[access] = (source.device_shape, MEMORY_FORMATS[str(op.operands[0].type.element_type)], window)
        return True

    def _store_window(self, op, source: Tensor, table: np.ndarray) -> Window | None:
        """The window of the binding a store `op` writes through which `source` (a
        scratch tensor of the binding's format) lands where the store would put its
        elements gathered at the flat indices `table` (each once); None if there is none."""
        element = str(op.operands[0].type.element_type)
        access = _access(op, self.subspans[op.operands[1]])
        n = math.prod(source.shape)
        if element not in MEMORY_FORMATS or source.ref is None or source.ref[0] != "temp" or source.row_major or \
                source.high is not None or self._format(source) is not MEMORY_FORMATS[element] or \
                access in self.bound or table.size != n or (table < 0).any() or np.unique(table).size != n:
            return None
        full = self.subspans[op.operands[1]][2]
        places = np.arange(math.prod(full)) if access[2] is None else _slice_indices(full, *access[2])
        at = np.empty(n, np.int64)
        at[table] = places.reshape(-1)  # each source element's place in the binding
        in_device = np.empty(n, np.int64)
        in_device[_device_order(source).reshape(-1)] = at
        return _strided_window(in_device, source.device_shape)

    def _merged_into_binding(self, op, tensor: Tensor, access) -> Tensor:
        """The whole binding a store writes a slice of that is no window (an NCHW
        transposed convolution's input spread over every other column: runs of one
        element; a volume's interior in its padded buffer: two levels of batch), with
        `tensor`'s elements in the slice's places and the binding's own elsewhere: the
        binding read, the tensor gathered into its shape, one select. The dispatch then
        writes the binding whole; its other elements keep their values (launches run in
        order, so nothing writes them in between)."""
        binding, offset, full = self.subspans[op.operands[1]]
        element = str(op.operands[0].type.element_type)
        if element not in MEMORY_FORMATS or MEMORY_FORMATS[element].element_size != gather.ELEMENT_SIZE:
            raise unimplemented(op, f"a store of {element} into a slice {access[2]} of {list(full)} that is no "
                                    f"window: the bridge merges 4-byte elements only")
        table = np.full(math.prod(full), -1, np.int64)
        table[_slice_indices(full, *access[2]).reshape(-1)] = np.arange(math.prod(tensor.shape))
        table = table.reshape(full)
        placed = self._gather(op, tensor, table)
        old = Tensor(full, ref=("binding", (binding, offset, None)), data_format=MEMORY_FORMATS[element])
        mask = Tensor(full, ref=("constant", (table >= 0).astype(np.int32)), data_format=INTEGER_FORMAT)
        inputs: list = []
        leaves = [self._leaf(op, t, inputs, placed.device_shape) for t in (mask, placed, old)]
        out = self._temp(full, placed.device_shape, placed.data_format)
        self._fused(op, [*leaves, Ternary(SfpuOp.WHERE_INT, 0, 1, 2)], inputs, out)
        return out

    def _copied(self, op, tensor: Tensor) -> Tensor:
        """A whole loaded binding stored as it is into a slice of another (IREE's
        slow_memcpy: an image copied into its padded buffer), loaded in the device shape
        the slice's rows take (_merged_window: its contiguous dims merged), so it moves
        as the fewest rows: a (32, 32, 3) image as 32 rows of 96 (one block), not 32
        matrices of (32, 3) (32 blocks)."""
        subspan = op.operands[1]
        access = _access(op, self.subspans[subspan])
        if access[2] is None or len(access[2]) == 3:  # a whole binding, or a strided slice: as it is
            return tensor
        merged = _matrix_batch(op, self.subspans[subspan][2], *access[2])
        if merged is None:  # not a batch of matrices: the store regroups it as before
            return tensor
        merged = merged[0]
        if canonical(merged) == canonical(tensor.device_shape):
            return tensor
        binding, offset, _ = tensor.ref[1]
        return Tensor(tensor.shape, merged, ("binding", (binding, offset, ("as", merged))),
                      data_format=tensor.data_format)

    def pack(self, op) -> None:
        """linalg.pack (a tensor tiled: padded, its tiled dims split, the outer dims
        permuted, the tiles last) and linalg.unpack (the inverse, sliced back): a gather
        by the index table of that layout."""
        is_pack = op.name == "linalg.pack"
        tensor = self.values[op.operands[0]]
        out_shape = _shape(op, op.results[0].type)
        positions = list(ir.DenseI64ArrayAttr(op.attributes["inner_dims_pos"]))
        perm = list(ir.DenseI64ArrayAttr(op.attributes["outer_dims_perm"])) \
            if "outer_dims_perm" in op.attributes else None
        static = list(ir.DenseI64ArrayAttr(op.attributes["static_inner_tiles"]))
        dynamic = list(op.operands)[len(op.operands) - static.count(DYNAMIC):]
        dynamic_tiles = iter(self.ints[v] for v in dynamic)
        tile_of = dict(zip(positions, [next(dynamic_tiles) if t == DYNAMIC else t for t in static]))
        plain = tensor.shape if is_pack else out_shape  # the shape that is not tiled
        padded = [ceil_div(n, tile_of[i]) * tile_of[i] if i in tile_of else n for i, n in enumerate(plain)]
        split, outer_axes, inner_axes = [], [], {}
        for i, n in enumerate(padded):
            split += [n // tile_of[i], tile_of[i]] if i in tile_of else [n]
            outer_axes.append(len(split) - (2 if i in tile_of else 1))
            inner_axes[i] = len(split) - 1
        order = [outer_axes[p] for p in (perm or range(len(plain)))] + [inner_axes[i] for i in positions]
        fill = 0
        if is_pack:
            index = np.full(padded, -1, np.int64)
            index[tuple(slice(0, n) for n in plain)] = np.arange(math.prod(plain)).reshape(plain)
            index = index.reshape(split).transpose(order)
            if len(op.operands) - len(dynamic) == 3:  # padding_value
                fill = self._scalar_fill(op.operands[2])
                if not isinstance(fill, (int, float)):
                    raise unimplemented(op, "linalg.pack with a padding value known only at run time")
        else:
            index = np.arange(math.prod(tensor.shape)).reshape(tensor.shape).transpose(np.argsort(order))
            index = index.reshape(padded)[tuple(slice(0, n) for n in plain)]
        self.values[op.results[0]] = self._gather(op, tensor, index.reshape(out_shape), fill)

    # ---- sorting networks and scans: iree_linalg_ext sort, topk, arg_compare, scan ----
    @staticmethod
    def _segments(op) -> list[list]:
        """An op's operands in their operandSegmentSizes groups (one group without it)."""
        operands = list(op.operands)
        if "operandSegmentSizes" not in op.attributes:
            return [operands]
        groups, at = [], 0
        for size in ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]):
            groups.append(operands[at:at + size])
            at += size
        return groups

    def _along(self, op, tensor: Tensor, positions, d: int, shape=None, fill=0) -> Tensor:
        """`tensor` with dim `d` taken at `positions` (-1: `fill`), as `shape` if given."""
        positions = np.asarray(positions, np.int64)
        taken = np.take(np.arange(math.prod(tensor.shape)).reshape(tensor.shape), np.maximum(positions, 0), axis=d)
        along = [1] * len(tensor.shape)
        along[d] = len(positions)
        taken = np.where(positions.reshape(along) >= 0, taken, -1)
        return self._gather_words(op, tensor, taken.reshape(shape or taken.shape), fill)

    @staticmethod
    def _positions(shape, d: int, values=None) -> Tensor:
        """An int32 constant tensor of `shape` holding each element's index along dim `d`
        (mapped through `values` if given)."""
        index = np.indices(shape, dtype=np.int64)[d]
        data = (index if values is None else np.asarray(values, np.int64)[index]).astype(np.int32)
        return Tensor(shape, ref=("constant", data), data_format=INTEGER_FORMAT)

    def _network(self, op, keys: list[Tensor], payloads: list[Tensor], d: int) -> tuple[list[Tensor], Tensor]:
        """keys and payloads sorted along dim `d` by the op's comparator region (its block
        arguments a pair per key: (a, b) -> a goes first), ties by original position
        (so it is stable): a bitonic network over the dim padded to a power of two, each
        compare-exchange a gather of the partners and one fused kernel per word tensor (an
        i64's or a complex's two words move as two tensors). Returns (the sorted tensors,
        keys then payloads, each of the padded length; the original positions, which the
        padding's exceed)."""
        n = keys[0].shape[d]
        size = 1 << max(n - 1, 0).bit_length()
        pad = [i if i < n else -1 for i in range(size)]
        spans, tensors = [], []  # each key's and payload's words' places among the word tensors
        for t in keys + payloads:
            taken = self._along(op, t, pad, d)
            spans.append(range(len(tensors), len(tensors) + (1 if taken.high is None else 2)))
            tensors += [taken] if taken.high is None else [taken, taken.high]
        order = self._positions(tensors[0].shape, d)
        k = 2
        while k <= size:
            j = k // 2
            while j >= 1:
                partner = [i ^ j for i in range(size)]
                keep_first = [int((i < partner[i]) == (i & k == 0)) for i in range(size)]
                tensors, order = self._exchange(op, spans[:len(keys)], tensors, order, partner, keep_first, n, d)
                j //= 2
            k *= 2
        for span in spans:
            if len(span) == 2:
                tensors[span[0]].high = tensors[span[1]]
        return [tensors[span[0]] for span in spans], order

    def _exchange(self, op, keys: list[range], tensors: list[Tensor], order: Tensor, partner, keep_first, n: int,
                  d: int):
        """One compare-exchange stage of _network over word tensors (`keys`: each key's
        words' places among them): place i along dim d and place partner[i] compare their
        elements; place i keeps the one that goes first if keep_first[i], else the other.
        Returns (tensors, order) after it."""
        region = op.regions[0].blocks[0]
        result = list(region.operations)[-1].operands[0]
        shape, m = order.shape, len(tensors)
        inputs = [(t, FusedInput(self._format(t))) for t in tensors]
        inputs += [(self._along(op, t, partner, d), FusedInput(self._format(t))) for t in tensors]
        inputs += [(order, FusedInput(INTEGER_FORMAT)),
                   (self._along(op, order, partner, d), FusedInput(INTEGER_FORMAT)),
                   (self._positions(shape, d, keep_first), FusedInput(INTEGER_FORMAT))]
        code = _Code({}, inputs, lambda v: self._scalar_leaf(v, inputs))

        def precedes(first: int, second: int) -> int:
            """The region's verdict with the tensors from input `first` as a, `second` as b."""
            code.leaves = {region.arguments[2 * i + side]: Input(base + span[0]) if len(span) == 1 else
                           (Input(base + span[0]), Input(base + span[1]))
                           for i, span in enumerate(keys) for side, base in ((0, first), (1, second))}
            code.memo, code.pairs = {}, {}
            return code.result(result)

        def emit(sfpu: SfpuOp, a: int, b: int) -> int:
            return code.emit(Binary(sfpu, a, b))

        partner_first, self_first = precedes(m, 0), precedes(0, m)
        one, mine, theirs, wanted, count = (code.emit(x) for x in (
            Constant(1, True), Input(2 * m), Input(2 * m + 1), Input(2 * m + 2), Constant(n, True)))
        earlier = emit(SfpuOp.LT_INT, theirs, mine)
        # The partner's goes first: by the region, or on a tie by position; real elements
        # go before the padding, which goes by position.
        before = emit(SfpuOp.OR, partner_first, emit(SfpuOp.AND, emit(SfpuOp.XOR, self_first, one), earlier))
        real_theirs, real_mine = emit(SfpuOp.LT_INT, theirs, count), emit(SfpuOp.LT_INT, mine, count)
        both = emit(SfpuOp.AND, real_theirs, real_mine)
        neither = emit(SfpuOp.XOR, emit(SfpuOp.OR, real_theirs, real_mine), one)
        before = emit(SfpuOp.OR, emit(SfpuOp.AND, real_theirs, emit(SfpuOp.XOR, real_mine, one)),
                      emit(SfpuOp.OR, emit(SfpuOp.AND, both, before), emit(SfpuOp.AND, neither, earlier)))
        take = emit(SfpuOp.EQ_INT, before, wanted)  # take the partner's
        results = []
        for i, t in enumerate(tensors + [order]):
            mine_i, theirs_i = (i, m + i) if i < m else (2 * m, 2 * m + 1)
            results.append(self._selected(op, code.code, take, Input(theirs_i), Input(mine_i), inputs, t,
                                          t.device_shape))
        return results[:-1], results[-1]

    def sort(self, op) -> None:
        """iree_linalg_ext.sort: its outs sorted in place along `dimension`."""
        d = ir.IntegerAttr(op.attributes["dimension"]).value
        tensors = [self.values[v] for v in self._segments(op)[-1]]  # (ins,) outs
        n = tensors[0].shape[d]
        ranked, _ = self._network(op, tensors, [], d)
        for result, t, tensor in zip(op.results, ranked, tensors):
            self.values[result] = self._along(op, t, range(n), d, tensor.shape)

    def topk(self, op) -> None:
        """iree_linalg_ext.topk, topk_v2 (the first k along `dimension` in the region's
        order of the outs' elements and then the input's, with their indices: the outs',
        then the op's or the positions; IREE inserts each input element into the outs,
        which a fill of -inf leaves out) and arg_compare (the first one, the dim dropped,
        its position plus index_base)."""
        d = ir.IntegerAttr(op.attributes["dimension"]).value
        groups = self._segments(op)
        if len(groups) == 1:  # topk: values, (indices,) out values, out indices
            operands = groups[0]
            groups = [operands[:1], operands[1:-2], *([v] for v in operands[-2:])]
        values, indices = self.values[groups[0][0]], [self.values[v] for v in groups[1]]
        out_shape = _shape(op, op.results[0].type)
        is_arg = op.name == "iree_linalg_ext.arg_compare"
        k = 1 if is_arg else out_shape[d]
        if not is_arg:  # the outs first: they win ties, as IREE keeps a slot unless the element goes before it
            outs = [self.values[v] for v in groups[2] + groups[3]]
            if len(outs) == 2 and not indices:  # the input's positions, after the outs' indices
                indices = [self._positions(values.shape, d)]
            values = self._joined(op, outs[0], values, d)
            indices = [self._joined(op, outs[1], t, d) for t in indices]
        ranked, order = self._network(op, [values], indices, d)
        taken = [self._along(op, t, range(k), d, out_shape) for t in ranked[:1] + (ranked[1:] or [order])]
        if is_arg and len(groups) > 4 and groups[4]:  # index_base
            base = self._scalar_fill(groups[4][0])
            if not isinstance(base, int):
                raise unimplemented(op, "arg_compare with an index_base known only at run time")
            shifted = self._temp(out_shape, taken[1].device_shape, INTEGER_FORMAT)
            self._fused(op, [Input(0), Constant(base, True), Binary(SfpuOp.ADD_INT, 0, 1)],
                        [(taken[1], FusedInput(INTEGER_FORMAT))], shifted)
            taken[1] = shifted
        if is_arg:  # the outs' values take part too, and win ties (a reduction into them)
            taken = self._kept(op, taken, [self.values[groups[2][0]], self.values[groups[3][0]]])
        for result, tensor in zip(op.results, taken):
            self.values[result] = tensor

    def _joined(self, op, first: Tensor, second: Tensor, d: int) -> Tensor:
        """`first` and then `second` along dim `d` (the other dims alike): each gathered
        into its part of the joined length, the other part filled, and the parts selected
        by position in one fused kernel."""
        m, n = first.shape[d], second.shape[d]
        parts = [self._along(op, first, [i if i < m else -1 for i in range(m + n)], d),
                 self._along(op, second, [i - m if i >= m else -1 for i in range(m + n)], d)]
        inputs = [(t, FusedInput(self._format(t))) for t in parts]
        inputs.append((self._positions(parts[0].shape, d, [int(i < m) for i in range(m + n)]),
                       FusedInput(INTEGER_FORMAT)))
        return self._selected(op, [Input(2)], 0, Input(0), Input(1), inputs, parts[0], parts[0].device_shape)

    def _kept(self, op, candidates: list[Tensor], current: list[Tensor]) -> list[Tensor]:
        """(value, index) of the candidate where the op's region puts it before the
        current value, else the current (value, index)."""
        region = op.regions[0].blocks[0]
        inputs: list = []
        device_shape = candidates[0].device_shape
        leaves = [self._leaf(op, t, inputs, device_shape) for t in candidates + current]
        code = _Code({region.arguments[0]: leaves[0], region.arguments[1]: leaves[2]}, inputs,
                     lambda v: self._scalar_leaf(v, inputs))
        better = code.result(list(region.operations)[-1].operands[0])
        return [self._selected(op, code.code, better, leaves[i], leaves[2 + i], inputs, t, device_shape)
                for i, t in enumerate(candidates)]

    def _selected(self, op, code: list, condition: int, chosen: Instruction, other: Instruction, inputs: list,
                  like: Tensor, device_shape) -> Tensor:
        """A new tensor shaped like `like`: `chosen` where `code`'s value `condition` holds,
        else `other` (both moved whole), by a fused kernel of just the code it needs."""
        select = [*code, chosen, other]
        select.append(Ternary(SfpuOp.WHERE_INT, condition, len(select) - 2, len(select) - 1))
        sub_code, sub_inputs = _cone(select, len(select) - 1, inputs)
        out = self._temp(like.shape, device_shape, like.data_format)
        self._fused(op, sub_code, sub_inputs, out)
        return out

    def fft(self, op) -> None:
        """iree_linalg_ext.fft: one Cooley-Tukey stage s along the last dim (IREE's
        FftOp::generateScalarImplementation): with m = 2^s and h = m / 2, place p at j = p
        mod m takes u = a[l] and t = w * a[l + h], l = p - j + j mod h, and becomes u + t
        if j < h, else u - t; w = exp(-2 pi i (j mod h) / m), or the op's coefficients.
        The partners are gathers of the real and imaginary parts, w and the sign constants,
        and each part one fused kernel."""
        operands = list(op.operands)
        real, imag = (self.values[v] for v in operands[-2:])
        for v in operands[-2:]:
            _check_element_type(op, v.type)
        stage = self.ints[operands[0]]
        shape, d = real.shape, len(real.shape) - 1
        m, n = 1 << stage, real.shape[-1]
        half = m // 2
        p = np.arange(n)
        j = p % m
        lhs = p - j + j % half
        if len(operands) == 5:  # coefficients given (h of each part)
            w = [self._gather(op, self.values[v], np.broadcast_to(j % half, shape)) for v in operands[1:3]]
        else:  # computed as IREE's scalar code does, in float32
            angle = np.float32(-2 * math.pi) / np.float32(m) * (j % half).astype(np.float32)
            w = [Tensor(shape, ref=("constant", np.broadcast_to(f(angle), shape).astype(np.float32)))
                 for f in (np.cos, np.sin)]
        sign = Tensor(shape, ref=("constant", np.broadcast_to(np.where(j < half, 1.0, -1.0), shape).astype(np.float32)))
        parts = [self._along(op, t, positions, d) for positions in (lhs, lhs + half) for t in (real, imag)]
        inputs: list = []
        leaves = [self._leaf(op, t, inputs, real.device_shape) for t in [*parts, *w, sign]]
        u_re, u_im, a_re, a_im, w_re, w_im, s = range(7)
        for result, (x, y, z, sub) in zip(op.results, ((u_re, a_re, a_im, SfpuOp.SUB), (u_im, a_im, a_re, SfpuOp.ADD))):
            # t = w_re * y -/+ w_im * z (the real part: xu - yv; the imaginary one: xv + yu); x + s * t
            code = [*leaves, Binary(SfpuOp.MUL, w_re, y), Binary(SfpuOp.MUL, w_im, z), Binary(sub, 7, 8),
                    Binary(SfpuOp.MUL, s, 9), Binary(SfpuOp.ADD, x, 10)]
            out = self._temp(shape, real.device_shape)
            self._fused(op, code, inputs, out)
            self.values[result] = out

    def scan(self, op) -> None:
        """iree_linalg_ext.scan along `dimension`: out[i] = init + x[0] + ... + x[i] for
        the region's combiner (inclusive; exclusive stops at x[i - 1]) and the
        accumulator, out[n - 1]: Hillis-Steele doubling, x[i] + x[i - s] for s = 1, 2, 4, ... (a
        gather of the shifted tensor and a fused kernel each), which regroups the
        combiner's terms (it must be associative, as IREE's own parallel scan assumes)."""
        d = ir.IntegerAttr(op.attributes["dimension"]).value
        inclusive = ir.BoolAttr(op.attributes["inclusive"]).value
        source, _, accumulator = list(op.operands)  # input, output, accumulator (in segments of 1 and 2 or not)
        x, init = self.values[source], self.values[accumulator]
        view = default_device_shape(x.shape)  # as the gathers below tile it
        high = None if x.high is None else self._as(op, x.high, view)
        x = self._as(op, x, view)
        x.high = high
        n = x.shape[d]
        region = op.regions[0].blocks[0]
        result = list(region.operations)[-1].operands[0]
        integer = integer_width(result.type) is not None

        def leaf(t: Tensor, inputs: list):
            low = self._leaf(op, t, inputs, view)
            return low if t.high is None else (low, self._leaf(op, t.high, inputs, view))

        def combined(acc: Tensor, value: Tensor) -> tuple[_Code, list[int]]:
            """The region's code for acc (its first argument) and value (its second; either
            may be a fill: a scan of a fill, an init of zeros), and its result's words."""
            inputs: list = []
            code = _Code({argument: leaf(t, inputs) for argument, t in zip(region.arguments, (acc, value))}, inputs,
                         lambda v: self._scalar_leaf(v, inputs))
            return code, list(code.pair(result)) if is_pair(result.type) else [code.result(result)]

        def where(code: _Code, values: list[int], mask: Tensor, otherwise: Tensor) -> Tensor:
            """The combined value where `mask`, else `otherwise` (each word by a kernel)."""
            keep = code.emit(self._leaf(op, mask, code.inputs, view))
            others = [code.emit(self._leaf(op, t, code.inputs, view))
                      for t in (otherwise, otherwise.high)[:len(values)]]
            chosen = [code.emit(Ternary(SfpuOp.WHERE_INT, keep, value, other)) for value, other in zip(values, others)]
            return self._words(op, code.code, code.inputs, chosen, x.shape, view, INTEGER_FORMAT if integer else None)

        step = 1
        while step < n:
            shifted = self._along(op, x, [i - step if i >= step else -1 for i in range(n)], d)
            x = where(*combined(shifted, x), self._positions(x.shape, d, [int(i >= step) for i in range(n)]), x)
            step *= 2
        spread = self._spread(op, init, x.shape, d)
        if inclusive:
            out = where(*combined(spread, x), self._positions(x.shape, d, [1] * n), spread)
        else:  # init + x[0] + ... + x[i - 1], and init alone at 0
            out = where(*combined(spread, self._along(op, x, [i - 1 for i in range(n)], d)),
                        self._positions(x.shape, d, [int(i > 0) for i in range(n)]), spread)
        # The accumulator ends as the last output (which an exclusive scan's x[n - 1] misses).
        self.values[op.results[0]], self.values[op.results[1]] = out, self._along(op, out, [n - 1], d, init.shape)

    def winograd(self, op) -> None:
        """iree_linalg_ext.winograd.input_transform and output_transform (F(6x6, 3x3)):
        each is linear in its tiles, so one matmul of a constant by the tiles' elements
        as columns. Input: the 8x8 tiles at steps of 6 over the image dims (zeros past
        the image) gathered as a (64, tiles x other dims) operand, times kron(B^T, B^T),
        whose row (a, b) and column (i, j) hold B^T[a, i] B^T[b, j]: the result's (8, 8,
        N, tiles, C) in row-major order. Output: the (8, 8, rest) input as (64, rest),
        times kron(A^T, A^T) (36 x 64), each 6x6 tile then gathered into its place in
        the image (NHWC or NCHW). The FPU's matmul: its operands truncated as any
        matmul's (docs/fidelity.md); A^T's entries are powers of two, B^T's products are
        not all bf16 numbers."""
        source, output = (self.values[v] for v in op.operands[:2])
        m, k = (ir.IntegerAttr(op.attributes[name]).value for name in ("output_tile_size", "kernel_size"))
        if (m, k) != (6, 3):
            raise unimplemented(op, f"a Winograd transform F({m}x{m}, {k}x{k}): IREE's only one is F(6x6, 3x3)")
        size = m + k - 1
        if op.name.endswith("input_transform"):
            spatial, tiled, matrix = source.shape, output.shape, np.kron(WINOGRAD_BT, WINOGRAD_BT)
        else:  # the tiles' rows and columns past m fall out
            spatial, tiled, matrix = output.shape, source.shape, np.kron(WINOGRAD_AT, WINOGRAD_AT)
        # The tiles' elements as columns: (i, j) of each tile, then (n, tile row, tile column,
        # c); a rank-2 image is one tile.
        n_tiles = math.prod(tiled[2:])
        i, j, n, th, tw, c = np.indices((size, size, *(tiled[2:] or (1, 1, 1, 1)))).reshape(6, -1)
        rows, columns = th * m + i, tw * m + j
        image = list(ir.DenseI64ArrayAttr(op.attributes["image_dimensions"])) if len(spatial) == 4 else [0, 1]
        coordinates = {(0, 1): [rows, columns], (1, 2): [n, rows, columns, c],
                       (2, 3): [n, c, rows, columns]}[tuple(image)]
        inside = (rows < spatial[image[0]]) & (columns < spatial[image[1]])
        flat = np.ravel_multi_index([np.where(inside, x, 0) for x in coordinates], spatial)
        flat = np.where(inside, flat, -1).reshape(size * size, n_tiles)
        constant = Tensor(matrix.shape, ref=("constant", matrix), data_format=DataFormat.float32)
        if op.name.endswith("input_transform"):
            product = self._matmul(op, constant, self._gather(op, source, flat), (size * size, n_tiles), size * size,
                                   False, (size * size, n_tiles))
            table = np.arange(size * size * n_tiles).reshape(output.shape)  # the same elements, in 6 dims
        else:
            operand = self._gather(op, source, np.arange(math.prod(source.shape)).reshape(size * size, n_tiles))
            product = self._matmul(op, constant, operand, (m * m, n_tiles), size * size, False, (m * m, n_tiles))
            # Output element (i, j) of tile column t is product[i * m + j, t] (i, j < m: all inside the image).
            kept = (i < m) & (j < m)
            table = np.full(math.prod(spatial), -1, np.int64)
            column = np.arange(size * size * n_tiles) % n_tiles
            table[flat.reshape(-1)[kept]] = ((i * m + j) * n_tiles + column)[kept]
            table = table.reshape(spatial)
        self.values[op.results[0]] = self._gather(op, product, table)

    def attention(self, op) -> None:
        """iree_linalg_ext.attention (torch's scaled_dot_product_attention): softmax(S) V
        with S = Q K^T scale through the region, plus the mask, over the op's maps, its loops
        sorted by role from them: batch (in Q, the result, and K or V: multi-query
        attention's K and V shared by the heads are read for each), m (Q and the result),
        k1 (Q and K), k2 (K and V), n (V and the result). Q K^T is one batched matmul (each
        operand gathered into (batch, m, k1) and (batch, k1, k2) matrices,
        _gather_operand); one fused kernel scales it, applies the region (to S log2(e), then
        over log2(e), as IREE's decomposition for exp2 does: llvm-cpu's results) and adds
        the mask (a float mask as it is; an integer one 0 where its low bit is set, else
        -inf: torch's `attn_mask` and `is_causal`); the row max and the
        exponentials of S less it, their row sum (reduce_tile), P V a second matmul, over
        the sum; gathered into the result's dims (one gather launch, also where they are
        in order)."""
        q_v, k_v, v_v, scale_v, *mask_v, out_v = list(op.operands)
        q, k, v, out = (self.values[x] for x in (q_v, k_v, v_v, out_v))
        exprs = _affine(op)
        maps = [_projection(exprs[i]) for i in (0, 1, 2, -1)]
        if any(dims is None for dims in maps):
            raise unimplemented(op, f"iree_linalg_ext.attention with maps {exprs}: the lowering takes projections")
        q_dims, k_dims, v_dims, out_dims = maps
        extents = {d: e for tensor, dims in zip((q, k, v, out), maps) for d, e in zip(dims, tensor.shape)}
        # (a batch dim that K or V does not read is broadcast over: multi-query attention's heads)
        batch = [d for d in out_dims if d in q_dims and (d in k_dims or d in v_dims)]
        m = [d for d in out_dims if d in q_dims and d not in batch]
        n = [d for d in out_dims if d in v_dims and d not in batch]
        k1 = [d for d in q_dims if d in k_dims and d not in batch]
        k2 = [d for d in k_dims if d in v_dims and d not in batch]
        if sorted(batch + m + n + k1 + k2) != sorted(extents):
            raise unimplemented(op, f"iree_linalg_ext.attention with maps {exprs}")
        outer = [[d] for d in batch]
        size = {name: math.prod(extents[d] for d in dims) for name, dims in (("m", m), ("n", n), ("k1", k1),
                                                                             ("k2", k2))}
        b_shape = tuple(extents[d] for d in batch)
        scores = self._matmul(op, self._gather_operand(op, q, exprs[0], outer + [m, k1], extents),
                              self._gather_operand(op, k, exprs[1], outer + [k1, k2], extents),
                              (*b_shape, size["m"], size["k2"]), size["k1"], bool(batch),
                              (*b_shape, size["m"], size["k2"]))
        space = scores.device_shape
        row = (*space[:-1], 1)
        inputs: list = [(scores, FusedInput(self._format(scores)))]
        code = _Code({}, inputs, lambda value: self._scalar_leaf(value, inputs))
        scale = self._scalar_leaf(scale_v, inputs)
        if scale is None:
            raise unimplemented(op, "iree_linalg_ext.attention with a scale computed in the dispatch")
        region = op.regions[0].blocks[0]
        score = code.binary(SfpuOp.MUL, code.emit(Input(0)), code.emit(scale))
        result = list(region.operations)[-1].operands[0]
        if result != region.arguments[0]:  # as IREE's decomposition with exp2: the region sees S log2(e)
            code.memo[region.arguments[0]] = code.emit(Unary(SfpuOp.MUL_SCALAR, score, math.log2(math.e)))
            score = code.emit(Unary(SfpuOp.MUL_SCALAR, code.value(result), math.log(2)))
        if mask_v:
            mask = self._gather_operand(op, self.values[mask_v[0]], exprs[4], outer + [m, k2], extents,
                                        scores.shape, space)
            inputs.append((mask, FusedInput(self._format(mask))))
            added = code.emit(Input(len(inputs) - 1))
            if integer_width(mask_v[0].type.element_type) is not None:
                kept = code.binary(SfpuOp.AND, added, code.int_constant(1))
                added = code.emit(Ternary(SfpuOp.WHERE_INT, kept, code.emit(Constant(0.0)),
                                          code.emit(Constant(-math.inf))))
            score = code.binary(SfpuOp.ADD, score, added)
        scaled = self._temp(scores.shape, space)
        self._fused(op, *_cone(code.code, score, inputs), scaled)
        largest = self._reduced(op, scaled, "arith.maximumf", 0, space, -1, row, row)
        weights = self._temp(scores.shape, space)
        inputs = [(scaled, FusedInput(self._format(scaled))),
                  (largest, FusedInput(self._format(largest), Broadcast.COL))]
        code = _Code({}, inputs, lambda value: None)
        maximum = code.emit(Input(1))
        difference = code.binary(SfpuOp.SUB, code.emit(Input(0)), maximum)
        code.emit(Unary(SfpuOp.EXP, code.above_exp_floor(difference, maximum)))
        self._fused(op, code.code, inputs, weights)
        total = self._reduced(op, weights, "arith.addf", 0, space, -1, row, row)
        device = (*b_shape, size["m"], size["n"])
        product = self._matmul(op, weights, self._gather_operand(op, v, exprs[2], outer + [k2, n], extents),
                               device, size["k2"], bool(batch), device)
        normalized = self._temp(device, device, tile_format(op.results[0].type))
        self._fused(op, [Input(0), Input(1), Binary(SfpuOp.DIV, 0, 1)],
                    [(product, FusedInput(self._format(product))),
                     (total, FusedInput(self._format(total), Broadcast.COL))], normalized)
        place = dict(zip(out_dims, np.indices(out.shape)))
        merged = [np.ravel_multi_index([place[d] for d in g], [extents[d] for d in g]) for g in (m, n)]
        index = np.ravel_multi_index([place[d] for d in batch] + merged, device)
        self.values[op.results[0]] = self._gather(op, normalized, index.reshape(out.shape))

    def _places(self, op, indices: Tensor, dimension_map, shape, n_batch: int, slice_shape, mask) -> Tensor:
        """The flat places, in a row-major tensor of `shape`, of the elements of a
        scatter's updates or a gather's result, as an int32 (batch, slice) tile tensor:
        index component k of batch b gives dim dimension_map[k]; the slice's dims are the
        last ones of `shape`, its positions added; -1 out of bounds or where `mask` (an
        i1 per batch) is false. One fused kernel: components as columns, slice positions
        as rows."""
        depth, n_slice = len(dimension_map), math.prod(slice_shape)
        inputs: list = []
        code: list = []

        def emit(instruction) -> int:
            code.append(instruction)
            return len(code) - 1

        flat_indices = self._gather(op, indices, np.arange(math.prod(indices.shape)).reshape(n_batch, depth))
        component = {}
        for k, dim in enumerate(dimension_map):
            column = self._along(op, flat_indices, [k], 1, (n_batch, 1))
            inputs.append((column, FusedInput(INTEGER_FORMAT, Broadcast.COL)))
            component[dim] = emit(Input(len(inputs) - 1))
        slice_position = np.indices(slice_shape).reshape(len(slice_shape), 1, n_slice) if slice_shape else []
        first_slice_dim = len(shape) - len(slice_shape)
        zero, one = emit(Constant(0, True)), emit(Constant(1, True))
        flat, valid = emit(Constant(0, True)), one
        strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        for dim, extent in enumerate(shape):
            coordinate = component.get(dim)
            if dim >= first_slice_dim:
                row = Tensor((1, n_slice), ref=("constant", slice_position[dim - first_slice_dim].astype(np.int32)),
                             data_format=INTEGER_FORMAT)
                inputs.append((row, FusedInput(INTEGER_FORMAT, Broadcast.ROW)))
                position = emit(Input(len(inputs) - 1))
                coordinate = position if coordinate is None else emit(Binary(SfpuOp.ADD_INT, coordinate, position))
            if coordinate is None:
                continue
            inside = emit(Binary(SfpuOp.AND, emit(Binary(SfpuOp.GE_INT, coordinate, zero)),
                                 emit(Binary(SfpuOp.LT_INT, coordinate, emit(Constant(extent, True))))))
            valid = emit(Binary(SfpuOp.AND, valid, inside))
            term = emit(Binary(SfpuOp.MUL_INT, coordinate, emit(Constant(strides[dim], True))))
            flat = emit(Binary(SfpuOp.ADD_INT, flat, term))
        if mask is not None:  # an i1 per batch element: false leaves the element out
            mask = self._gather(op, mask, np.arange(n_batch).reshape(n_batch, 1))
            inputs.append((mask, FusedInput(self._format(mask), Broadcast.COL)))
            valid = emit(Binary(SfpuOp.AND, valid, emit(Binary(SfpuOp.NE_INT, emit(Input(len(inputs) - 1)), zero))))
        emit(Ternary(SfpuOp.WHERE_INT, valid, flat, emit(Constant(-1, True))))
        places = self._temp((n_batch, n_slice), (n_batch, n_slice), INTEGER_FORMAT)
        self._fused(op, code, inputs, places)
        return places

    def _indices(self, op, indices_v, others) -> Tensor:
        """A gather's or scatter's indices as int32: i64 ones (torch's) saturated, as
        index_cast does (an index past int32 is out of bounds of any tensor either way);
        the op's other operands must not be i64."""
        for v in others:
            if is_pair(v.type):
                raise unimplemented(op, f"{op.name} of {v.type}: the bridge's gathers and scatters move up to 32 "
                                        f"bits (i64 indices are taken)")
        indices = self.values[indices_v]
        if indices.high is None:
            return indices
        inputs = [(t, FusedInput(INTEGER_FORMAT)) for t in (indices, indices.high)]
        code = _Code({}, inputs, lambda v: None)
        value = code.int64.saturated((code.emit(Input(0)), code.emit(Input(1))))
        out = self._temp(indices.shape, indices.device_shape, INTEGER_FORMAT)
        self._fused(op, *_cone(code.code, value, inputs), out)
        return out

    def gather(self, op) -> None:
        """iree_linalg_ext.gather: result element (batch b, slice position s) is the
        source's at the place b's indices and s give (_places); where that is out of
        bounds or the mask is false, the output's own element stays."""
        source_v, indices_v, *mask_v, output_v = list(op.operands)  # (source, indices, mask?) output
        source, output = (self.values[v] for v in (source_v, output_v))
        indices = self._indices(op, indices_v, [source_v, *mask_v, output_v])
        dimension_map = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
        batch_rank = len(output.shape) - (len(source.shape) - len(dimension_map))
        n_batch, slice_shape = math.prod(output.shape[:batch_rank]), output.shape[batch_rank:]
        places = self._places(op, indices, dimension_map, source.shape, n_batch, slice_shape,
                              self.values[mask_v[0]] if mask_v else None)
        taken = self._gather_at(op, source, places)
        flat = (n_batch, math.prod(slice_shape))
        if output.ref is None and output.fill is None:  # a tensor.empty: nothing of it to keep
            self.values[op.results[0]] = self._gather(op, taken, np.arange(math.prod(flat)).reshape(output.shape))
            return
        kept = self._gather(op, output, np.arange(math.prod(output.shape)).reshape(flat))
        inputs: list = []
        leaves = [self._leaf(op, t, inputs, flat) for t in (places, taken, kept)]
        code = [*leaves, Constant(0, True), Binary(SfpuOp.GE_INT, 0, 3), Ternary(SfpuOp.WHERE_INT, 4, 1, 2)]
        result = self._temp(flat, flat, output.data_format)
        self._fused(op, code, inputs, result)
        self.values[op.results[0]] = self._gather(op, result, np.arange(math.prod(flat)).reshape(output.shape))

    def scatter(self, op) -> None:
        """iree_linalg_ext.scatter: each update slice goes to the row of the original its
        indices name (IREE's dimension_map permutes the leading dims: the slice is within
        the trailing ones), combined there with the original by the region (update
        first). Rows are matched with batches, not elements with update elements (a cache
        of 1,200 rows of 16 updated by 500 rows: 600,000 pairs, not 150 million). Where
        places are unique or the region a plain update: S[o], the update element that
        goes last to original element o, -1 for none (_scatter_sources: the op's order for
        repeated places); the updates gathered at S; where S >= 0, region(update,
        original), else the original. Where repeated places combine (unique_indices
        false): the region's op folded over each row's updates (_scatter_fold), then
        with the original."""
        updates_v, indices_v, *mask_v, original_v = list(op.operands)  # (updates, indices, mask?) original
        updates, original = (self.values[v] for v in (updates_v, original_v))
        indices = self._indices(op, indices_v, [updates_v, *mask_v, original_v])
        mask = self.values[mask_v[0]] if mask_v else None
        dimension_map = list(ir.DenseI64ArrayAttr(op.attributes["dimension_map"]))
        unique = "unique_indices" in op.attributes and ir.BoolAttr(op.attributes["unique_indices"]).value
        region = op.regions[0].blocks[0]
        combined = list(region.operations)[-1].operands[0]
        batch_rank = len(updates.shape) - (len(original.shape) - len(dimension_map))
        n_batch, slice_shape = math.prod(updates.shape[:batch_rank]), updates.shape[batch_rank:]
        inputs: list = []
        if unique or combined == region.arguments[0]:
            source = self._scatter_sources(op, indices, dimension_map, original.shape, n_batch, slice_shape, mask)
            arrived = self._gather_at(op, updates, source)
            leaves = [self._leaf(op, t, inputs, original.device_shape) for t in (arrived, original, source)]
        else:
            total = self._scatter_fold(op, updates, indices, dimension_map, original.shape, n_batch, slice_shape,
                                       mask, region)
            leaves = [self._leaf(op, t, inputs, original.device_shape) for t in (total, original)]
        body = _Code({region.arguments[0]: leaves[0], region.arguments[1]: leaves[1]}, inputs,
                     lambda v: self._scalar_leaf(v, inputs))
        value = body.result(combined) if integer_width(combined.type) else body.value(combined)
        if len(leaves) == 3:
            has = body.emit(Binary(SfpuOp.GE_INT, body.emit(leaves[2]), body.emit(Constant(0, True))))
            value = body.emit(Ternary(SfpuOp.WHERE_INT, has, value, body.emit(leaves[1])))
        out = self._temp(original.shape, original.device_shape, original.data_format)
        self._fused(op, *_cone(body.code, value, inputs), out)
        self.values[op.results[0]] = out

    def _scatter_sources(self, op, indices: Tensor, dimension_map, shape, n_batch: int, slice_shape,
                         mask) -> Tensor:
        """S, of `shape` (the original's): the flat number (batch, slice position) of the
        last update element going to each element, -1 for none: R[b], the row batch b goes
        to (_places, -1 out of bounds or masked off); R_last[r], the last b with R[b] == r
        (_last_match over the (row, batch) space); S = R_last * slice size + the element's
        position in the slice (-1 outside it), one fused kernel."""
        depth = len(dimension_map)
        n_slice = math.prod(slice_shape)
        rows = self._places(op, indices, dimension_map, shape[:depth], n_batch, (), mask)
        n_rows = math.prod(shape[:depth])
        last = self._last_match(op, rows, n_rows)
        in_slice = _slice_positions(shape[depth:], slice_shape)
        position = Tensor((1, in_slice.size), ref=("constant", in_slice.reshape(1, -1)), data_format=INTEGER_FORMAT)
        code = [Input(0), Input(1), Constant(0, True), Binary(SfpuOp.GE_INT, 0, 2), Binary(SfpuOp.GE_INT, 1, 2),
                Binary(SfpuOp.AND, 3, 4), Constant(n_slice, True), Binary(SfpuOp.MUL_INT, 0, 6),
                Binary(SfpuOp.ADD_INT, 7, 1), Constant(-1, True), Ternary(SfpuOp.WHERE_INT, 5, 8, 9)]
        table = self._temp((n_rows, in_slice.size), (n_rows, in_slice.size), INTEGER_FORMAT)
        self._fused(op, code, [(last, FusedInput(INTEGER_FORMAT, Broadcast.COL)),
                               (position, FusedInput(INTEGER_FORMAT, Broadcast.ROW))], table)
        return self._gather(op, table, np.arange(math.prod(shape)).reshape(shape))

    def _last_match(self, op, places: Tensor, n_places: int) -> Tensor:
        """(n_places, 1) int32: for each place o, the last u whose places[u] == o (-1 for
        none), an exact int32 max over the (place, u) space."""
        space, match = self._matched(op, places, n_places, self._positions((1, math.prod(places.shape)), 1), -1)
        return self._integer_extreme(op, match, space, -1, (n_places, 1), (n_places, 1), True, True)

    def _matched(self, op, places: Tensor, n_places: int, chosen: Tensor, otherwise: int | float,
                 width: int | None = None):
        """(the space, a tensor over it): over the (place o, u) space, where places[u] ==
        o, chosen[u], else `otherwise` (places, int32, and chosen: flat in u; an integer
        `otherwise` makes an int32 tensor). With a `width`, chosen is (u, width) and the
        space (o, u, width): each place's tile rows are the u, one batch a place (the
        places and chosen are each one batch serving all). At most SCATTER_LIMIT
        elements."""
        n = math.prod(places.shape)
        space = (n_places, n) if width is None else (n_places, n, width)
        if math.prod(space) > SCATTER_LIMIT:
            raise unimplemented(op, f"a scatter matching {n} updates with {n_places} places: the Tensix lowering "
                                    f"compares every pair, up to {SCATTER_LIMIT} elements")
        if width is None:
            shapes, broadcasts = ((1, n), (n_places, 1), (1, n)), (Broadcast.ROW, Broadcast.COL, Broadcast.ROW)
        else:
            shapes = ((1, n, 1), (n_places, 1, 1), (1, n, width))
            broadcasts = (Broadcast.COL, Broadcast.SCALAR, Broadcast.NONE)
        row = self._gather(op, places, np.arange(n).reshape(shapes[0]))
        chosen = self._gather(op, chosen, np.arange(math.prod(chosen.shape)).reshape(shapes[2]))
        place_of = self._positions(shapes[1], 0)
        batched = width is not None
        integer = isinstance(otherwise, int)
        out = self._temp(space, space, INTEGER_FORMAT if integer else None)
        inputs = [(row, FusedInput(INTEGER_FORMAT, broadcasts[0], batched)),
                  (place_of, FusedInput(INTEGER_FORMAT, broadcasts[1]))]
        if chosen.fill is None:
            inputs.append((chosen, FusedInput(self._format(chosen), broadcasts[2], batched)))
        leaf = self._fill_leaf(chosen.fill, inputs) if chosen.fill is not None else Input(2)
        self._fused(op, [Input(0), Input(1), Binary(SfpuOp.EQ_INT, 0, 1), leaf, Constant(otherwise, integer),
                         Ternary(SfpuOp.WHERE_INT, 2, 3, 4)], inputs, out)
        return space, out

    def _scatter_fold(self, op, updates: Tensor, indices: Tensor, dimension_map, shape, n_batch: int, slice_shape,
                      mask, region) -> Tensor:
        """Of `shape` (the original's): the region's op (one _FOLDS op of its two
        arguments) folded over the updates going to each element, its identity where none
        does (a segment sum, an index_add): R[b], the row batch b goes to (_places); a sum
        is the one-hot matrix [R[b] == r] over the (row, batch) space (_matched) times the
        update slices, a matmul (exact integer matmuls for integers up to
        INTEGER_MATMUL_LIMIT batches; for floats the FPU's, its operands truncated as any
        matmul's); other ops, and longer integer sums, are a reduction (_reduced) over the
        batches of the (row, batch, slice) space holding update b where R[b] == r, else
        the identity. A float sum comes in another order than IREE's loop's (one update
        after another), so it may round differently; integers are exact."""
        combined = list(region.operations)[-1].operands[0]
        combine = combined.owner.operation if not isinstance(combined, ir.BlockArgument) else None
        if combine is None or combine.name not in _FOLDS or \
                sorted(a.arg_number for a in combine.operands if isinstance(a, ir.BlockArgument)) != [0, 1]:
            raise unimplemented(op, f"a scatter whose region combines repeated indices (unique_indices false) by "
                                    f"{combine.name if combine is not None else 'nothing'} of other values than "
                                    f"its two arguments; supported: one of {', '.join(_FOLDS)} of both")
        width = integer_width(combined.type)
        identity = _FOLDS[combine.name][1][0]
        depth = len(dimension_map)
        n_rows, n_slice = math.prod(shape[:depth]), math.prod(slice_shape)
        rows = self._places(op, indices, dimension_map, shape[:depth], n_batch, (), mask)
        if combine.name in ("arith.addf", "arith.addi") and (not width or n_batch <= INTEGER_MATMUL_LIMIT):
            ones = Tensor((1, n_batch), fill=1 if width else 1.0, data_format=INTEGER_FORMAT if width else None)
            _, one_hot = self._matched(op, rows, n_rows, ones, identity)
            slices = self._gather(op, self._gatherable(op, updates),
                                  np.arange(n_batch * n_slice).reshape(n_batch, n_slice))
            folded = self._matmul(op, one_hot, slices, (n_rows, n_slice), n_batch, False, (n_rows, n_slice))
        else:
            space, full = self._matched(op, rows, n_rows, updates, identity, n_slice)
            out_shape = (n_rows, 1, n_slice)
            folded = self._reduced(op, full, combine.name, width, space, -2, out_shape, out_shape)
        in_slice = _slice_positions(shape[depth:], slice_shape).reshape(-1)
        table = np.arange(n_rows).reshape(-1, 1) * n_slice + in_slice
        return self._gather(op, folded, np.where(in_slice >= 0, table, -1).reshape(shape), identity)

    def map_load(self, op) -> None:
        """iree_linalg_ext.map_load: each output element reads the source at the indices
        the region yields for its own (the padding value where they fall outside): the
        region evaluated over the output's index grid, a gather."""
        source, output = (self.values[v] for v in op.operands[:2])
        *position, padding = _index_region(op, [np.indices(output.shape)[d] for d in range(len(output.shape))])
        fill = self._scalar_fill(list(op.regions[0].blocks[0].operations)[-1].operands[-1])
        if not isinstance(fill, (int, float)):
            raise unimplemented(op, "map_load with a padding value known only at run time")
        position = [np.broadcast_to(p, output.shape) for p in position]
        inside = np.logical_and.reduce([(p >= 0) & (p < n) for p, n in zip(position, source.shape)]) \
            if position else np.ones(output.shape, bool)
        flat = np.ravel_multi_index([np.where(inside, p, 0) for p in position], source.shape) if position \
            else np.zeros(output.shape, np.int64)
        self.values[op.results[0]] = self._gather(op, source, np.where(inside, flat, -1), fill)

    def map_store(self, op) -> None:
        """iree_linalg_ext.map_store: each input element goes to the output indices the
        region yields for its own, where its mask is true; output elements nothing goes
        to keep their value. The region evaluated over the input's index grid, inverted
        into a gather (of the last element going to each place), and a select."""
        source, output = (self.values[v] for v in op.operands[:2])
        *position, mask = _index_region(op, [np.indices(source.shape)[d] for d in range(len(source.shape))])
        position = [np.broadcast_to(p, source.shape).reshape(-1) for p in position]
        keep = np.broadcast_to(np.asarray(mask, bool), source.shape).reshape(-1) & np.logical_and.reduce(
            [(p >= 0) & (p < n) for p, n in zip(position, output.shape)])
        table = np.full(math.prod(output.shape), -1, np.int64)
        table[np.ravel_multi_index([p[keep] for p in position], output.shape)] = np.flatnonzero(keep)
        stored = self._gather(op, source, table.reshape(output.shape))
        if (table >= 0).all():
            self.values[op.results[0]] = stored
            return
        written = Tensor(output.shape, ref=("constant", (table >= 0).reshape(output.shape).astype(np.int32)),
                         data_format=INTEGER_FORMAT)
        inputs: list = []
        leaves = [self._leaf(op, t, inputs, stored.device_shape) for t in (written, stored, output)]
        code = [*leaves, Ternary(SfpuOp.WHERE_INT, 0, 1, 2)]
        out = self._temp(output.shape, stored.device_shape, output.data_format)
        self._fused(op, code, inputs, out)
        self.values[op.results[0]] = out

    def _spread(self, op, tensor: Tensor, shape, d: int) -> Tensor:
        """`tensor` (shape without dim d) repeated along a new dim d of `shape`."""
        index = np.arange(math.prod(tensor.shape)).reshape(tensor.shape)
        return self._gather_words(op, tensor, np.broadcast_to(np.expand_dims(index, d), shape).copy())

    # ---- launches ----
    def _temp(self, shape, device_shape, data_format: DataFormat | None = None) -> Tensor:
        """A scratch tensor, in the compute format or `data_format` (int32 for integers)."""
        return Tensor(shape, device_shape, ("temp", next(self.temp_numbers)), data_format=data_format)

    def _words(self, op, code: list, inputs: list, values, shape, device_shape, data_format) -> Tensor:
        """A new tensor of the code's `values` (one value, or a pair type's two words: the
        second becomes its `high`), a fused kernel each."""
        words = []
        for value in values:
            words.append(self._temp(shape, device_shape, data_format))
            self._fused(op, *_cone(code, value, inputs), words[-1])
        if len(words) == 2:
            words[0].high = words[1]
        return words[0]

    def _fp32_dest(self, code: Sequence[Instruction], fused_inputs: tuple[FusedInput, ...]) -> bool:
        # Integers need a 32-bit Dst, whatever the compute format.
        return self.options.fp32_dest_acc_en or any(fused.integer_values(code, fused_inputs))

    def _fits(self, code: Sequence[Instruction], inputs: list[tuple[Tensor, FusedInput]]) -> bool:
        """Is `code` one fused kernel (its Dst tiles and its inputs)?"""
        fused_inputs = tuple(fi for _, fi in inputs)
        return _row_tile_inputs_fit(inputs) and fused.fits(tuple(code), fused_inputs,
                                                           self._fp32_dest(code, fused_inputs))

    def _fused(self, op, code: Sequence[Instruction], inputs: list[tuple[Tensor, FusedInput]], out: Tensor) -> None:
        if len(code) > 1 and not self._fits(code, inputs):
            return self._split(op, code, inputs, out)
        fused_inputs = tuple(fi for _, fi in inputs)
        fp32_dest = self._fp32_dest(code, fused_inputs)
        # A Scalar here reads the dispatch's push constant `index`: the kernel's scalars are
        # those push constants, numbered in order.
        scalars = list(dict.fromkeys(PushConstant(ins.index) for ins in code if isinstance(ins, Scalar)))
        code = [dataclasses.replace(ins, index=scalars.index(PushConstant(ins.index))) if isinstance(ins, Scalar)
                else ins for ins in code]
        fmt = self._format(out)
        ds = out.device_shape
        mask_columns, mask_rows = ds[-1] % TILE, ds[-2] % TILE
        kernel = ("eltwise_fused", "eltwise_fused", fused_inputs, tuple(code), fmt, bool(mask_columns),
                  bool(mask_rows), fp32_dest)
        masks = (([("mask", mask_columns, -1)] if mask_columns else [])
                 + ([("mask", mask_rows, -2)] if mask_rows else []))
        if len(inputs) + len(masks) > fused.MAX_FUSED_INPUTS:
            raise unimplemented(op, f"an elementwise body reading {len(inputs)} tensors (and {len(masks)} padding "
                                    f"masks): a fused kernel reads at most {fused.MAX_FUSED_INPUTS}")
        n = tile_count(ds)
        self.launches.append(Launch(kernel, [n, tiles(ds[-2]), tiles(ds[-1]), *scalars],
                                    [t for t, _ in inputs] + masks + [out], n))

    def _split(self, op, code: Sequence[Instruction], inputs: list[tuple[Tensor, FusedInput]], out: Tensor) -> None:
        """Code too big for one fused kernel (its Dst tiles or its inputs), cut into
        kernels: in program order, each value whose code (reading the values cut so far)
        does not fit has its operands computed into scratch tensors of the output's shape
        first, each once however many later values read it."""
        integer = fused.integer_values(code, [fi for _, fi in inputs])
        cut: dict[int, tuple[Tensor, FusedInput]] = {}

        def fits(v: int) -> bool:
            sub_code, sub_inputs = _cone(code, v, inputs, cut)
            return len(sub_code) == 1 or (_row_tile_inputs_fit(sub_inputs) and
                                          fused.fits(tuple(sub_code), tuple(fi for _, fi in sub_inputs), True))

        for v, instruction in enumerate(code):
            if fits(v):
                continue
            for u in dict.fromkeys(instruction.operands):
                if u in cut or isinstance(code[u], (Input, Constant, Scalar)):
                    continue
                temp = self._temp(out.shape, out.device_shape, INTEGER_FORMAT if integer[u] else None)
                self._fused(op, *_cone(code, u, inputs, cut), temp)
                cut[u] = (temp, FusedInput(self._format(temp)))
        self._fused(op, *_cone(code, len(code) - 1, inputs, cut), out)

    def _transpose(self, op, tensor: Tensor, out: Tensor) -> None:
        fmt = self._format(tensor)
        if self._format(out) is not fmt:
            raise unimplemented(op, f"a transpose from {fmt.name} to {self._format(out).name} tiles")
        ds = out.device_shape
        n = tile_count(ds)
        self.launches.append(Launch(("transpose", fmt, fmt, self.options.fp32_dest_acc_en or fmt.is_integer),
                                    [n, tiles(ds[-2]), tiles(ds[-1])], [tensor, out], n))

    def _convert(self, op, tensor: Tensor, out: Tensor) -> None:
        """out = tensor, where their device shapes may differ by a swap of the last two dims."""
        src, dst = canonical(tensor.device_shape), canonical(out.device_shape)
        if src == dst:
            self._fused(op, (Input(0),), [(tensor, FusedInput(self._format(tensor)))], out)
        elif src[:-2] == dst[:-2] and (src[-1], src[-2]) == dst[-2:]:
            self._transpose(op, tensor, out)
        else:  # the same elements tiled another way
            self._gather(op, tensor, np.arange(math.prod(out.shape)).reshape(out.shape), out=out)

    def _as(self, op, tensor: Tensor, device_shape) -> Tensor:
        """`tensor` with the wanted device shape (a transposed copy if need be)."""
        retiled = _retiled(tensor, device_shape)
        if retiled is not None:
            return retiled
        out = self._temp(tensor.shape, device_shape, tensor.data_format)
        self._convert(op, tensor, out)
        return out

    # ---- linalg.generic ----
    def generic(self, op) -> None:
        """A linalg.generic; one with several results as one generic per result, each
        computing its own (elementwise only: a result never reads another's output)."""
        n_in, n_out = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
        if n_out == 1:
            return self._generic(op, n_in, 0)
        varying = self._constant_results(op, n_in, n_out)
        if len(varying) == 1:
            return self._generic(op, n_in, varying[0])
        if "reduction" in _iterators(op):
            if not self._folds(op, n_in, varying):
                return self._sequential_reduction(op, n_in, varying)
            return self._tree_reduction(op, n_in, n_out)
        block = op.regions[0].blocks[0]
        outputs = {block.arguments[n_in + k] for k in range(n_out)}
        for inner in block.operations:
            if any(v in outputs for v in inner.operands):
                raise unimplemented(op, f"a linalg.generic with {n_out} results whose body reads an output")
        for k in varying:
            self._generic(op, n_in, k)

    def _constant_results(self, op, n_in: int, n_out: int) -> list[int]:
        """The results a generic computes, after giving those it yields a constant for
        (every iteration writes the same: torch's average pooling yields its divisor
        beside the sum) their fill. A generic with an empty operand keeps them all."""
        yields = list(op.regions[0].blocks[0].operations)[-1].operands
        if any(0 in _shape(op, v.type) for v in op.operands):
            return list(range(n_out))
        varying = []
        for k, (value, result) in enumerate(zip(yields, op.results)):
            constant = _constant(value)
            if constant is None:
                computed = self._loop_function(op, n_in, k, value)
                if computed is None:
                    varying.append(k)
                else:
                    self.values[result] = computed
                continue
            fill = _fill_value(constant, integer_width(result.type))
            self.values[result] = Tensor(_shape(op, result.type), fill=fill, data_format=tile_format(result.type))
        return varying

    def _loop_function(self, op, n_in: int, k: int, value) -> Tensor | None:
        """Result k of a generic whose yield is a function of constants and of the loops
        its result map names only (every iteration of the other loops writes the same:
        torch's adaptive average pooling yields each window's count beside the sum),
        computed as elementwise code over the result's loops; None for any other."""
        exprs = _affine(op)
        dims = _projection(exprs[n_in + k])
        if dims is None or not _of_loops(value, set(dims)):
            return None
        extents = _extents(op, list(op.operands), [_projection(e) for e in exprs], len(_iterators(op)))
        shape = [extents[d] for d in dims]
        space, axis = self._space([], None, [list(range(len(dims)))], shape)
        inputs: list = []
        builder = self._code(op, [], [], space, axis, 0, inputs, _own_loops(dims, extents))
        values = builder.pair(value) if is_pair(value.type) else [builder.result(value)]
        return self._words(op, builder.code, inputs, values, tuple(shape), space, tile_format(op.results[k].type))

    def _tree_reduction(self, op, n_in: int, n_out: int) -> None:
        """A reduction with several results (an argmax: value and index): a tree. The body
        reads each accumulator (an out argument) against a value computed from the
        element alone (an input, or a function of it and of linalg.index, as when IREE
        fuses argmax's iota into it): those element values are computed for every element
        first; then each step applies the body to the first half of the reduced dim (as
        accumulators) and the second (as element values), a gather of each half and one
        fused kernel per result, an odd element passing through; last, the body with the
        init values. The body must be associative and commutative, as a reduce's is taken
        to be (StableHLO leaves the order to the implementation). An i64 result (torch's
        argmax index) is carried as its two words."""
        iterators, exprs = _iterators(op), _affine(op)
        maps = [_projection(e) for e in exprs]
        reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]
        parallel = [d for d in range(len(iterators)) if d not in reductions]
        if len(reductions) != 1 or any(m is None for m in maps) or any(m != parallel for m in maps[n_in:]):
            raise unimplemented(op, f"a linalg.generic with {n_out} results that reduces over several dims or "
                                    f"through maps that are not projections ({exprs})")
        operands = list(op.operands)
        for v in operands:
            if not is_wide(v.type):
                _check_element_type(op, v.type)
        block = op.regions[0].blocks[0]
        body, yields = list(block.operations)[:-1], list(block.operations)[-1].operands
        accumulators = list(block.arguments)[n_in:]
        elements = self._element_values(op, body, yields, list(block.arguments)[:n_in], accumulators)
        r = reductions[0]
        ins = [self.values[v] for v in operands[:n_in]]
        inits = [self.values[v] for v in operands[n_in:]]
        formats = [tile_format(v.type) for v in operands[n_in:]]
        extents = _extents(op, operands, maps, len(iterators))
        if extents[r] == 0:
            for result, init in zip(op.results, inits):
                self.values[result] = init
            return
        # The element values over the whole loop space.
        space, axis = self._space(ins, None, [*maps[:n_in], list(range(len(iterators)))], extents)
        inputs: list = []
        builder = self._code(op, ins, maps, space, axis, n_in, inputs)

        def word_values(code: _Code, v) -> list[int]:
            return list(code.pair(v)) if is_wide(v.type) else [code.result(v)]

        x = [self._words(op, builder.code, inputs, word_values(builder, value), tuple(extents), space, fmt)
             for value, fmt in zip(elements, formats)]

        def combined(firsts: list[Tensor], seconds: list[Tensor], mask: Tensor | None) -> list[Tensor]:
            """The body with accumulators `firsts` and element values `seconds`, each result
            kept from the accumulator where `mask` is 0."""
            shape = firsts[0].shape
            device_shape = default_device_shape(shape)
            results = []
            for k in range(n_out):
                inputs: list = []
                leaves = {v: self._leaf(op, t, inputs, device_shape) if t.high is None else
                          (self._leaf(op, t, inputs, device_shape), self._leaf(op, t.high, inputs, device_shape))
                          for v, t in [*zip(accumulators, firsts), *zip(elements, seconds)]}
                code = _Code(leaves, inputs, lambda v, inputs=inputs: self._scalar_leaf(v, inputs))
                values = word_values(code, yields[k])
                if mask is not None:
                    keep = code.emit(self._leaf(op, mask, inputs, device_shape))
                    values = [code.emit(Ternary(SfpuOp.WHERE_INT, keep, value, current))
                              for value, current in zip(values, word_values(code, accumulators[k]))]
                results.append(self._words(op, code.code, inputs, values, shape, device_shape, formats[k]))
            return results

        n = extents[r]
        while n > 1:
            half = (n + 1) // 2
            first = [self._along(op, t, range(half), r) for t in x]
            second = [self._along(op, t, [i + half if i + half < n else -1 for i in range(half)], r) for t in x]
            x = combined(first, second, self._positions(first[0].shape, r, [int(i + half < n) for i in range(half)]))
            n = half
        reduced = [self._along(op, t, [0], r, init.shape) for t, init in zip(x, inits)]
        for result, out in zip(op.results, combined(inits, reduced, None)):
            self.values[result] = out

    def _folds(self, op, n_in: int, ks: list[int]) -> bool:
        """Does the body fold results `ks` of a reduction from values of the element alone
        (_element_values), so that the order of the reduced elements does not matter?"""
        block = op.regions[0].blocks[0]
        operations = list(block.operations)
        yields = [operations[-1].operands[k] for k in ks]
        try:
            self._element_values(op, operations[:-1], yields, list(block.arguments)[:n_in],
                                 [block.arguments[n_in + k] for k in ks])
        except HalError as error:
            if error.code != StatusCode.UNIMPLEMENTED:
                raise
            return False
        return True

    def _sequential_reduction(self, op, n_in: int, ks: list[int]) -> None:
        """Results `ks` of a reduction over one dim of at most UNROLLED_REDUCTION elements
        whose body is no fold of element values (torch's max_pool2d(return_indices=True):
        the first place in the window whose element equals the max, read through
        linalg.index and tensor.extract, an index kept once set): the body applied in
        order, once per reduced position, each step elementwise code over the result's
        loops with that position's index a constant and its inputs taken there."""
        iterators, exprs = _iterators(op), _affine(op)
        maps = [_projection(e) for e in exprs]
        reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]
        parallel = [d for d in range(len(iterators)) if d not in reductions]
        operands = list(op.operands)
        extents = _extents(op, operands, maps, len(iterators))
        if len(reductions) != 1 or any(m is None for m in maps) or any(m != parallel for m in maps[n_in:]) or \
                extents[reductions[0]] > UNROLLED_REDUCTION:
            raise unimplemented(op, f"a reduction whose body depends on the order of the elements, over "
                                    f"{[extents[d] for d in reductions]} elements through maps {exprs}: the bridge "
                                    f"applies such a body in order over one reduced dim of at most "
                                    f"{UNROLLED_REDUCTION} elements through projections")
        r = reductions[0]
        n_out = len(op.results)
        for v in operands:
            if not is_pair(v.type):
                _check_element_type(op, v.type)
        shape = tuple(extents[d] for d in parallel)
        space, axis = self._space([], None, [list(range(len(parallel)))], shape)
        block = op.regions[0].blocks[0]
        yields = list(block.operations)[-1].operands
        accumulators = [self.values[v] for v in operands[n_in:]]
        in_maps = [[parallel.index(d) for d in dims if d != r] for dims in maps[:n_in]]
        loops = _own_loops(parallel, extents)
        for position in range(extents[r]):
            ins = [Tensor(t.shape, fill=0.0) if not list(block.arguments[i].uses) else  # a shape only
                   self._along(op, t, [position], dims.index(r), [extents[d] for d in dims if d != r])
                   if r in dims else t
                   for i, (t, dims) in enumerate(zip((self.values[v] for v in operands[:n_in]), maps))]
            inputs: list = []
            builder = self._code(op, ins + accumulators, in_maps + [list(range(len(parallel)))] * n_out, space,
                                 axis, n_in + n_out, inputs, {**loops, r: position})
            accumulators = [
                self._words(op, builder.code, inputs, builder.pair(yields[k]) if is_pair(yields[k].type)
                            else [builder.result(yields[k])], shape, space, tile_format(op.results[k].type))
                if k in ks else accumulators[k] for k in range(n_out)]
        for k in ks:
            self.values[op.results[k]] = accumulators[k]

    @staticmethod
    def _element_values(op, body, yields, arguments, accumulators) -> list:
        """For each accumulator, the body's value computed from the element alone (no
        accumulator) that it is combined with: the one value of its type that shares an
        op with it. Every op that reads an accumulator must read no other element value,
        so that the body is a function of the accumulators and these values only."""
        from_accumulators = set(accumulators)
        for inner in body:
            if any(v in from_accumulators for v in inner.operands):
                from_accumulators.update(inner.results)
        element = set(arguments) | {r for inner in body if not set(inner.results) & from_accumulators
                                    for r in inner.results}
        values = []
        for accumulator in accumulators:
            partners = {v for inner in body if accumulator in list(inner.operands) for v in inner.operands
                        if v in element and v.type == accumulator.type}
            if len(partners) != 1:
                raise unimplemented(op, f"a reduction with {len(accumulators)} results whose body does not combine "
                                        f"each accumulator with one value of the element ({len(partners)} found)")
            values.extend(partners)
        for inner in body:
            if set(inner.results) & from_accumulators and any(v in element and v not in values for v in
                                                                inner.operands):
                raise unimplemented(op, f"a reduction with {len(accumulators)} results whose body reads the element "
                                        f"other than through the values it combines the accumulators with")
        if any(v in element and v not in values for v in yields):
            raise unimplemented(op, "a reduction with several results that yields an element value it does not "
                                    "combine")
        return values

    def _generic(self, op, n_in: int, k: int) -> None:
        """Result `k` of a linalg.generic with `n_in` inputs."""
        operands = list(op.operands)
        operands = operands[:n_in] + [operands[n_in + k]]
        exprs = _affine(op)
        exprs = exprs[:n_in] + [exprs[n_in + k]]
        maps, iterators = [_projection(e) for e in exprs], _iterators(op)
        wide = any(is_pair(v.type) for v in operands)
        for v in operands:
            if not is_pair(v.type):
                _check_element_type(op, v.type)
        result_format = tile_format(op.results[k].type)
        ins = [self.values[v] if isinstance(v.type, ir.RankedTensorType) else None for v in operands[:n_in]]
        arguments = op.regions[0].blocks[0].arguments
        for i, tensor in enumerate(ins):
            if tensor is not None and not list(arguments[i].uses):  # a shape only (a pooling window)
                ins[i] = Tensor(tensor.shape, fill=0.0)
        scalars = [v for v in operands[:n_in] if not isinstance(v.type, ir.RankedTensorType)]
        init = self.values[operands[n_in]]
        body = list(op.regions[0].blocks[0].operations)
        body[-1] = _Yield(body[-1].operands[k])
        result = body[-1].operands[0]
        if maps[-1] is None:
            raise unimplemented(op, f"a linalg.generic whose result map ({', '.join(exprs[-1])}) is not a "
                                    f"projection of the loops")
        extents = _extents(op, operands, maps, len(iterators))
        if 0 in extents and not any(0 in _shape(op, v.type) for v in operands):
            raise unimplemented(op, "a loop dim that no operand's map reads as a plain dim")
        reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]
        if reductions and not self._folds(op, n_in, [k]):
            return self._sequential_reduction(op, n_in, [k])
        combined = result.owner.operation.name if not isinstance(result, ir.BlockArgument) else None
        if (wide or combined in ("arith.mulf", "arith.muli")) and reductions and len(op.results) == 1 and \
                len(reductions) == 1 and all(m is not None for m in maps):
            # An i64 sum, max, ...: a tree of the body on word pairs; a product (torch.prod),
            # which reduce_tile does not fold: a tree of multiplications.
            return self._tree_reduction(op, n_in, 1)
        if wide and (reductions or any(m is None for m in maps[:n_in])):
            raise unimplemented(op, "a linalg.generic on i64 that is not elementwise over projections of its "
                                    "loops or a reduction over one of them: the bridge's i64 generics are "
                                    "elementwise (tt_hal.compiler.int64)")
        if wide and is_wide(op.results[k].type) and len(body) == 1:
            source = operands[result.arg_number] if isinstance(result, ir.BlockArgument) else result
            fill = self._wide_fill(source, init.shape)
            if fill is not None:
                self.values[op.results[k]] = fill
                return
        unrolled = self._unrolled_reduction(op, ins, init, exprs, iterators, extents, body, result_format) \
            if reductions and not wide else None
        if unrolled is not None:
            self.values[op.results[k]] = unrolled
            return
        if reductions and not wide and any(m is None for m in maps[:n_in]) and n_in == 2 and \
                all(t is not None and t.fill is None for t in ins) and \
                not _plain_contraction(*(_regrouped_dims(_dims(e), reductions) for e in exprs[:2]), maps[-1],
                                       reductions[0]) and \
                self._product_sum(body, n_in, integer_width(op.results[0].type) is not None) and \
                self._grouped_contraction(op, ins, init, exprs[:n_in], maps[-1], reductions, extents):
            # A convolution whose regrouped operands would not be a matmul's (NCHW): its
            # operands gathered at once as the grouped matmul's (im2col), not regrouped first.
            return
        if any(m is None for m in maps[:n_in]) or len(reductions) > 1:
            ins, maps, iterators, extents = self._regrouped(op, ins, exprs, maps, iterators, extents, body)
            reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]

        if not reductions and len(body) == 1:
            if isinstance(result, ir.BlockArgument) and result.arg_number < n_in:
                source = operands[result.arg_number]
                if not isinstance(source.type, ir.RankedTensorType):  # fill with a scalar
                    fill = self._scalar_fill(source)
                    if fill is None:
                        raise unimplemented(op, "a fill with a value computed at run time (not read from a "
                                                "tensor of the dispatch)")
                    self.values[op.results[k]] = Tensor(init.shape, fill=fill, data_format=result_format)
                    return
            elif _constant(result) is not None:
                self.values[op.results[k]] = Tensor(init.shape, fill=self._scalar_fill(result),
                                                    data_format=result_format)
                return
        if scalars:
            raise unimplemented(op, "a linalg.generic with scalar operands")
        hoisted = {} if reductions else self._hoisted(op, ins, maps, extents, body)
        if hoisted:  # inputs after the generic's own
            ins = ins + [tensor for tensor, _ in hoisted.values()]
            maps = maps[:-1] + [dims for _, dims in hoisted.values()] + maps[-1:]
        stored = self._permuted_for_store(op, k, ins, maps, extents, body, n_in, result_format, list(hoisted)) \
            if not reductions and len(body) > 1 and maps[-1] != sorted(maps[-1]) else None
        if stored is not None:
            self.values[op.results[k]] = stored
            return
        if sorted(maps[-1] + reductions) == list(range(len(iterators))) and maps[-1] != sorted(maps[-1]):
            # A transpose writes through a permuted map: number the loops in the
            # result's order (the reductions after them), so the permutation moves to
            # the inputs' maps.
            order = maps[-1] + reductions  # new loop i is loop order[i]
            position = {d: i for i, d in enumerate(order)}
            maps = [[position[d] for d in dims] for dims in maps]
            iterators = [iterators[d] for d in order]
            extents = [extents[d] for d in order]
        if maps[-1] != sorted(maps[-1]):
            raise unimplemented(op, f"a linalg.generic whose result map {maps[-1]} permutes the loops")
        loops = None
        if not reductions:
            ins, maps, extents, loops = self._merged_loops(op, ins, maps, extents)
        if reductions and self._contraction(op, ins, init, maps, iterators, extents, body, n_in):
            return
        if reductions and reductions[0] < len(iterators) - 2:  # the reduce kernel reduces one of the last two dims
            ins, maps, iterators, extents = self._regrouped(op, ins, [[f"d{d}" for d in m] for m in maps], maps,
                                                            iterators, extents, body)
        space, axis = self._space(ins, init, maps, extents)
        if reductions and axis is FLAT:
            raise unimplemented(op, "a reduction of a flattened tensor")
        if not reductions:
            self.values[op.results[k]] = self._elementwise(op, ins, maps, space, axis, body, n_in,
                                                           self._temp(init.shape, space, result_format), loops,
                                                           list(hoisted))
        else:
            self.values[op.results[k]] = self._reduction(op, ins, init, maps, space, axis, reductions[0], body, n_in)

    def _permuted_for_store(self, op, k: int, ins, maps, extents, body, n_in: int, result_format,
                            hoisted: list) -> Tensor | None:
        """An elementwise generic whose result map permutes its loops and whose result is
        only stored (a LayerNorm IREE stores sequence-first), computed in the loops' order
        and gathered into the result's, where the store then writes it through a window
        (_store_gathered_source): no gather of its inputs. None where the store could not
        (the launches of the attempt, unread, are dropped by _live)."""
        result = op.results[k]
        uses = list(result.uses)
        if sorted(maps[-1]) != list(range(len(extents))) or len(uses) != 1 or \
                uses[0].owner.name != "iree_tensor_ext.dispatch.tensor.store":
            return None
        loop_shape = tuple(extents)
        try:
            ins, merged_maps, merged, loops = self._merged_loops(op, ins, maps[:-1] + [sorted(maps[-1])], extents)
            space, axis = self._space(ins, None, merged_maps, merged)
            computed = self._elementwise(op, ins, merged_maps, space, axis, body, n_in,
                                         self._temp(loop_shape, space, result_format), loops, hoisted)
        except HalError as error:  # (as the result's order would be computed then)
            if error.code != StatusCode.UNIMPLEMENTED:
                raise
            return None
        order = np.arange(math.prod(loop_shape)).reshape(loop_shape).transpose(maps[-1]).reshape(-1)
        if self._store_window(uses[0].owner, computed, order) is None:
            return None
        return self._gather_words(op, computed, order.reshape(_shape(op, result.type)))

    def _hoisted(self, op, ins, maps, extents, body) -> dict:
        """Values of an elementwise body that are functions of some of the loops (and of
        inputs read over those only), each computed once over those loops' space where
        that saves HOISTED instruction-tiles (its code's length times the tiles it spares,
        the loops as _merged_loops will run them, for each use): {key: (tensor, its loop
        dims)}. Two kinds of key: (index value, extent), an extract's index clamped into
        its dim, shared by every extract taking it (torch's interpolate: a source row from
        the output row's int64 place, some 20 instructions; extract_input reads it); and a
        value whose readers depend on more loops, or the result (torch's attention mask,
        an int64 product over (batch, query, key), broadcast over the heads), which _code
        then reads as the value's leaf. Indices of the loops alone are known when lowering
        (extract_input), not here."""
        if len(extents) < 2:
            return {}
        memo, loop_only = {}, {}

        def loops(v) -> set | None:
            return _loops_read(v, maps[:-1], memo)

        uses: collections.Counter = collections.Counter()  # (index, extent) -> the extracts taking it
        for inner in body[:-1]:
            if inner.name == "tensor.extract":
                uses.update(zip(list(inner.operands)[1:], _shape(op, inner.operands[0].type)))
        computed = [inner.results[0] for inner in body[:-1] if len(inner.results) == 1 and
                    inner.name not in ("linalg.index", "arith.constant", "tensor.extract")]
        frontier = [v for v in computed if any(  # read by ops of more loops, or yielded (as itself)
            u.owner.name == "linalg.yield" or u.owner.name != "tensor.extract" and loops(u.owner.results[0]) != loops(v)
            for u in v.uses)]
        whole_tiles = None
        hoisted = {}
        for key in [*uses, *frontier]:
            v, extent = key if isinstance(key, tuple) else (key, None)
            if isinstance(v, ir.BlockArgument) or _loops_read(v, [], loop_only) is not None:
                continue  # no arithmetic to hoist, or known when lowering
            dims = loops(v)
            if not dims or len(dims) == len(extents):
                continue
            if whole_tiles is None:  # the loops as _merged_loops will run them (found once, if asked)
                merge = self._merge(ins, maps, extents)
                groups = merge[0] if merge is not None else [[d] for d in range(len(extents))]
                whole_tiles = tile_count((1, *[math.prod(extents[d] for d in group) for group in groups]))
            dims = sorted(dims)
            shape = [extents[d] for d in dims]
            saved_tiles = (whole_tiles - tile_count((1, *shape))) * uses.get(key, 1)
            position = {d: i for i, d in enumerate(dims)}
            read = [m is not None and set(m) <= set(dims) and t is not None for t, m in zip(ins, maps)]
            sub_ins = [t if r else Tensor(_shape(op, a.type), fill=0.0) for t, r, a in zip(ins, read, op.operands)]
            sub_maps = [[position[d] for d in m] if r else [] for m, r in zip(maps, read)] + [list(range(len(dims)))]
            try:  # (views the code makes of inputs and does not take are dropped by _live)
                space, axis = self._space(sub_ins, None, sub_maps, shape)
                inputs: list = []
                builder = self._code(op, sub_ins, sub_maps, space, axis, len(ins), inputs, _own_loops(dims, extents))
                values = [builder.clamped_index(v, extent)] if extent is not None else \
                    list(builder.pair(v)) if is_pair(v.type) else [builder.result(v)]
            except HalError as error:
                if error.code != StatusCode.UNIMPLEMENTED:
                    raise
                continue
            if sum(len(_cone(builder.code, value, inputs)[0]) for value in values) * saved_tiles < HOISTED:
                continue
            data_format = INTEGER_FORMAT if builder.integer[values[0]] else None
            hoisted[key] = (self._words(op, builder.code, inputs, values, tuple(shape), space, data_format), dims)
        return hoisted

    def _merged_loops(self, op, ins, maps, extents) -> tuple[list, list, list, dict | None]:
        """An elementwise generic's (ins, maps, extents) with its loops merged as the
        fewest tiles hold them (_tilings) where it reads its operands in the loops' order
        and every tensor it reads over merged dims is a fill, a constant or a whole loaded
        binding (retiled for free: _as) or held that way already, one of them at least (a
        window reduction's or a convolution's result; a residual input is a whole
        binding), or none held and the tiles fall at least MERGE_WITHOUT_HELD-fold: a
        depthwise convolution's BatchNorm and ReLU6 run on its 16 whole tiles, not 64
        quarter-full ones after a retiling gather, its per-channel vectors as (64, 1)
        columns, not (64, 1, 1) in 64 tiles; a GroupNorm's (256, 4, 2) centring as (256,
        8) in 8 tiles, not 256. An operand reading part of a merged group (the group's
        statistics, (4,) over its first dim) is gathered into the merged dims when it
        holds at most EXPANDED_OPERAND elements there. As they are where not (the store
        or a consumer retiles a merged result once). Also returns where each loop's index
        is (linalg.index): {loop: (merged loop, divisor, extent)}, None if unmerged."""
        merge = self._merge(ins, maps, extents)
        if merge is None:
            return ins, maps, extents, None
        groups, expansions = merge
        merged = [math.prod(extents[d] for d in group) for group in groups]
        ins = [self._gather_words(op, tensor, table) if table is not None else tensor
               for tensor, (_, table) in zip(ins, expansions)]
        loops = {d: (g, math.prod(extents[e] for e in group[i + 1:]), extents[d])
                 for g, group in enumerate(groups) for i, d in enumerate(group)}
        return ins, [dims for dims, _ in expansions] + _merged_maps(maps[-1:], groups), merged, loops

    def _merge(self, ins, maps, extents) -> tuple[list, list] | None:
        """How _merged_loops merges the loops: (the groups, _expansions' of the inputs),
        None where it does not."""
        n = len(extents)
        if n < 3 or any(dims != sorted(dims) for dims in maps):
            return None
        for groups in _tilings(list(range(n)), extents):
            if len(groups) == n:
                break  # the loops as they are take no more tiles than the rest
            merged = [math.prod(extents[d] for d in group) for group in groups]
            expansions = self._expansions(ins, maps, groups, extents)
            if expansions is None:
                continue
            held = [canonical(tensor.device_shape) == canonical(_broadcast_shape(merged, dims))
                    for tensor, (dims, table) in zip(ins, expansions)
                    if tensor is not None and tensor.fill is None and table is None and not _is_constant(tensor)
                    and not _whole_load(tensor) and any(len(groups[a]) > 1 for a in dims)]
            fewer = tile_count(extents) >= MERGE_WITHOUT_HELD * tile_count(merged)
            if all(held) and (held or fewer):
                return groups, expansions
        return None

    @staticmethod
    def _expansions(ins, maps, groups, extents) -> list | None:
        """Per input, (its map over the merged loops `groups`, None or the flat indices
        gathering it into the merged dims it reads part of); None if an operand reads
        part of a group and cannot be gathered so (over EXPANDED_OPERAND elements)."""
        number = {d: g for g, group in enumerate(groups) for d in group}
        out = []
        for tensor, dims in zip(ins, maps[:-1]):
            whole = _merged_maps([dims], groups)
            if whole is not None:
                out.append((whole[0], None))
                continue
            touched = sorted({number[d] for d in dims})
            shape = [math.prod(extents[d] for d in groups[g]) for g in touched]
            if tensor is None or tensor.fill is not None:  # a fill is a constant whatever its map
                out.append((touched, None))
                continue
            if math.prod(shape) > EXPANDED_OPERAND:
                return None
            loops = [d for g in touched for d in groups[g]]
            grid = dict(zip(loops, np.indices([extents[d] for d in loops]).reshape(len(loops), -1)))
            table = np.ravel_multi_index([grid[d] for d in dims], [extents[d] for d in dims])
            out.append((touched, table.reshape(shape)))
        return out

    def _unrolled_reduction(self, op, ins, init, exprs, iterators, extents, body, result_format) -> Tensor | None:
        """A float reduction over at most UNROLLED_REDUCTION elements per result of a
        window (some operand indexed by a sum of dims) that is not a contraction (a
        depthwise convolution, a pooling window), unrolled: for each
        reduced position the element expression over the result's shape (its operands
        gathered there), computed by the fused kernels that combine the positions in
        order, as many positions a kernel as its inputs hold. The reduce kernel would pad
        the reduced dim to a whole tile: up to 32 / n times the work. None where it does
        not apply."""
        n_in = len(ins)
        reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]
        result = body[-1].operands[0]
        combine = result.owner.operation if not isinstance(result, ir.BlockArgument) else None
        out_dims = _projection(exprs[-1])
        if math.prod(extents[d] for d in reductions) > UNROLLED_REDUCTION or combine is None or \
                combine.name not in _UNROLLED_COMBINES or out_dims is None or \
                sorted(out_dims) != [d for d in range(len(iterators)) if d not in reductions] or \
                any(inner.name == "linalg.index" for inner in body[:-1]) or \
                any(t is not None and t.high is not None for t in ins) or \
                all(_projection(e) is not None for e in exprs[:n_in]):
            return None  # a reduction along axes (a softmax's row) is one reduce kernel: no gather per element
        is_out = [isinstance(v, ir.BlockArgument) and v.arg_number == n_in for v in combine.operands]
        used = [set(_dims(e)) for e in exprs[:n_in]]
        if is_out.count(True) != 1 or n_in == 2 and all(  # a contraction: a matmul's
                any(d in mine and d not in other for d in out_dims) for mine, other in (used, used[::-1])):
            return None
        element = combine.operands[1] if is_out[0] else combine.operands[0]
        space = tuple(extents[d] for d in out_dims)
        # The result's dims as the loops of the kernels, as the fewest tiles hold them.
        groups = _tilings(out_dims, extents)[0]
        tiled = tuple(math.prod(extents[d] for d in group) for group in groups)
        loops = list(range(len(groups)))
        values, gathered = [], {}  # the element's (code, inputs) at each reduced position
        for position in np.ndindex(*(extents[d] for d in reductions)):
            fixed = dict(zip(reductions, position))
            position_ins, position_maps = [], []
            for i, (tensor, map_exprs) in enumerate(zip(ins, exprs[:n_in])):
                map_exprs = [re.sub(r"d(\d+)", lambda m, fixed=fixed: str(fixed.get(int(m.group(1)), m.group(0))), e)
                             for e in map_exprs]
                dims = [d for d in out_dims if f"d{d}" in re.findall(r"d\d+", " ".join(map_exprs))]
                read = [g for g, group in enumerate(groups) if set(group) & set(dims)]  # the loops it varies over
                plain = _projection(map_exprs)
                if plain is not None and plain == dims and all(len(groups[g]) == 1 for g in read):
                    pass  # read as it is, as in any elementwise generic
                elif tensor is not None and tensor.fill is None:  # the place the window puts it, each once
                    key = (i, tuple(map_exprs))
                    if key not in gathered:
                        # tiled as the loops broadcast it: a per-channel weight (C, 1, 1) or (C, 1)
                        broadcast = tuple(_broadcast_shape(tiled, read)) if len(loops) >= 2 else None
                        gathered[key] = self._gather_operand(op, tensor, map_exprs, [groups[g] for g in read],
                                                             extents, device_shape=broadcast)
                    tensor = gathered[key]
                position_ins.append(tensor)
                position_maps.append(read)
            # a 1-D result as a column (its rows' values), as the reduce kernel leaves it
            view, axis = self._space(position_ins, None, position_maps + [loops], [*tiled, 1][:max(2, len(tiled))])
            inputs: list = []
            builder = self._code(op, position_ins, position_maps + [loops], view, axis, n_in, inputs)
            values.append(_cone(builder.code, builder.result(element), inputs))
        binary, identity = _FOLDS[combine.name]
        if not _is_identity(init, identity):
            inputs = []
            values.insert(0, ([self._leaf(op, init, inputs, view)], inputs))
        # Combined in order, each kernel computing as many positions' elements as it takes
        # (and the total so far): no scratch tensor per position.
        total = None
        while values:
            code, inputs = ([Input(0)], [(total, FusedInput(self._format(total)))]) if total is not None else ([], [])
            taken = 0
            while values:
                joined = _joined(code, inputs, *values[0])
                if code:
                    joined[0].append(Binary(binary, len(code) - 1, len(joined[0]) - 1))
                if taken and not self._fits(*joined):
                    break
                (code, inputs), taken = joined, taken + 1
                values.pop(0)
            total = self._temp(space, view, result_format if not values else None)
            self._fused(op, code, inputs, total)
        return total

    def _wide_fill(self, v, shape) -> Tensor | None:
        """A tensor of `shape` filled with an i64 scalar (a constant, or a 0-d tensor's
        value), its words as fills; None if `v` is not such a scalar."""
        known = _constant(v)
        known = self.ints.env.get(v) if known is None else known
        if isinstance(known, int):
            low, high = int64.split(known)
            return Tensor(shape, fill=low, data_format=INTEGER_FORMAT,
                          high=Tensor(shape, fill=high, data_format=INTEGER_FORMAT))
        if v in self.scalars:
            words = [t.fill if t.fill is not None else t for t in (self.scalars[v], self.scalars[v].high)]
            return Tensor(shape, fill=words[0], data_format=INTEGER_FORMAT,
                          high=Tensor(shape, fill=words[1], data_format=INTEGER_FORMAT))
        return None

    def _regrouped(self, op, ins, exprs, maps, iterators, extents, body):
        """The generic's operands and loops made ones the tile kernels follow: each input
        read through a map that is not a projection is gathered into the loop space of
        the dims it uses; with reductions, the parallel loops come first and the
        reduction loops become one last loop, every input gathered to match where its
        dims change (a contraction's operand keeping its own order of them). Returns (ins,
        maps, iterators, extents)."""
        n_in = len(ins)
        reductions = [d for d, kind in enumerate(iterators) if kind == "reduction"]
        if not reductions:
            number, groups_of = {d: d for d in range(len(iterators))}, lambda used: [[d] for d in used]
        else:
            if any(inner.name == "linalg.index" for inner in body[:-1]):
                raise unimplemented(op, "linalg.index in a reduction over several or outer dims")
            parallel = [d for d in range(len(iterators)) if d not in reductions]
            if sorted(maps[-1]) == parallel:  # numbered in the result's order: its map becomes the identity
                parallel = list(maps[-1])
            number = {d: i for i, d in enumerate(parallel)} | dict.fromkeys(reductions, len(parallel))

            def groups_of(used):
                return [[d] for d in parallel if d in used] + ([reductions] if set(used) & set(reductions) else [])
        contraction = bool(reductions) and self._product_sum(body, n_in, integer_width(op.results[0].type) is not None)
        new_ins, new_maps = [], []
        for tensor, map_exprs, dims in zip(ins, exprs[:n_in], maps[:n_in]):
            if not reductions and dims is not None:
                new_ins.append(tensor)
                new_maps.append(dims)
                continue
            groups = groups_of(_dims(map_exprs))
            if contraction and dims is not None:
                # A contraction's operand keeps its dims in the order it lies in (HWIO weights
                # as (K, O): a window of their binding, not a gather and a transpose).
                groups.sort(key=lambda group: min(dims.index(d) for d in group if d in dims))
            new_maps.append(list(dict.fromkeys(number[g[0]] for g in groups)))
            if tensor is not None and tensor.fill is None and \
                    (dims is None or any(len(g) > 1 for g in groups) or [g[0] for g in groups] != dims):
                tensor = self._gather_operand(op, tensor, map_exprs, groups, extents)
            new_ins.append(tensor)
        new_maps.append([number[d] for d in maps[-1]])
        if not reductions:
            return new_ins, new_maps, iterators, extents
        new_extents = [extents[d] for d in parallel] + [math.prod(extents[d] for d in reductions)]
        return new_ins, new_maps, ["parallel"] * len(parallel) + ["reduction"], new_extents

    def _gather_operand(self, op, tensor: Tensor, exprs: list[str], groups: list[list[int]], extents,
                        shape=None, device_shape=None) -> Tensor:
        """The operand read through the map `exprs` over the loop space of `groups` (a
        list of lists of loop dims; each group one dim of the result, its loops merged
        in order; `extents[d]` loop d's extent), as a tensor of that shape or of `shape`
        (the same elements with unit dims put in), tiled as `device_shape` if given (the
        same elements in order)."""
        dims = [d for group in groups for d in group]
        grid = np.indices([extents[d] for d in dims], sparse=True)
        env = {f"d{d}": grid[i] for i, d in enumerate(dims)}
        full = tuple(extents[d] for d in dims)
        try:
            index = [np.broadcast_to(_evaluate(e, env), full) for e in exprs]
        except NameError as error:
            raise unimplemented(op, f"an operand map ({', '.join(exprs)}) reading a loop outside {dims}: "
                                    f"{error}") from None
        for j, (position, extent) in enumerate(zip(index, tensor.shape)):
            if position.size and (position.min() < 0 or position.max() >= extent):
                raise unimplemented(op, f"an operand map ({', '.join(exprs)}) reading outside dim {j} of "
                                        f"{list(tensor.shape)}")
        flat = np.ravel_multi_index(index, tensor.shape) if index else np.zeros(full, np.int64)
        flat = flat.reshape(shape or [math.prod(extents[d] for d in g) for g in groups])
        if device_shape is None:
            return self._gather(op, tensor, flat)
        if flat.shape == tensor.shape and np.array_equal(flat.reshape(-1), np.arange(flat.size)):
            retiled = _retiled(tensor, device_shape)  # read as it is (an attention's mask, in its order)
            if retiled is not None:
                return retiled
        # into the device shape at once (a constant's values are known now, in any shape)
        windowed = self._windowed_load(tensor, flat, device_shape)
        if windowed is not None:
            return windowed
        out = None if _is_constant(tensor) else self._temp(flat.shape, device_shape, tensor.data_format)
        return self._as(op, self._gather(op, tensor, flat, out=out), device_shape)

    def _gather(self, op, source: Tensor, indices: np.ndarray, fill=0, out: Tensor | None = None,
                merged: bool = False) -> Tensor:
        """A tile tensor of indices' shape (or `out`, of that logical shape) whose
        elements are source's at the logical flat indices `indices` (-1: `fill`), known
        when the dispatch is lowered: a gather launch (tt_hal/kernels/gather.py) with a
        constant table; or a window of source's binding where they are one in the
        default tiling (or, `merged`, in any of _merged_tilings)."""
        shape = indices.shape
        if source.fill is not None and (indices >= 0).all() and out is None:
            return Tensor(shape, fill=source.fill, data_format=source.data_format)
        if out is None and _is_constant(source) and self._format(source).element_size == gather.ELEMENT_SIZE:
            # What the gather launch would copy, element for element: known now.
            values, inside = np.asarray(source.ref[1]).reshape(-1), indices >= 0
            taken = np.full(shape, fill, values.dtype)
            taken[inside] = values[indices[inside]]
            return Tensor(shape, ref=("constant", taken), data_format=source.data_format)
        earlier = self.gathered.get(id(source))
        if earlier is not None and earlier[0] is source:  # a gather of a gather: from the first's source at once
            _, inner, table, inner_fill = earlier
            composed = np.where(indices >= 0, table[np.maximum(indices, 0)], -1)
            if inner_fill == fill or not ((indices >= 0) & (composed < 0)).any():
                return self._gather(op, inner, composed, fill, out, merged)
        tilings = () if out is not None else _merged_tilings(shape) if merged else [default_device_shape(shape)]
        for device_shape in tilings:
            windowed = self._windowed_load(source, indices, device_shape)
            if windowed is not None:
                return windowed
        source = self._gatherable(op, source)
        operand, offset, order = self._rows(op, source, windows=True)
        logical = np.where(indices >= 0, order.reshape(-1)[np.maximum(indices, 0)], -1)
        out = out or self._temp(shape, default_device_shape(shape), source.data_format)
        # The gather moves 4-byte elements: into a bf16 `out` through a copy.
        gathered = out if self._format(out) is self._format(source) else \
            self._temp(shape, out.device_shape, source.data_format)
        table = np.empty(logical.size, np.int32)
        table[_device_order(out).reshape(-1)] = logical.reshape(-1)  # in the order of out's device shape
        table_tensor = Tensor(table.shape, ref=("constant", table), data_format=gather.TABLE_FORMAT, row_major=True)
        self._gather_launch(source, operand, offset, table_tensor, gathered, fill)
        if gathered is not out:
            self._elementwise_copy(op, gathered, out)
        else:
            self.gathered[id(out)] = (out, source, indices.reshape(-1), fill)
        return out

    def _windowed_load(self, source: Tensor, indices: np.ndarray, device_shape) -> Tensor | None:
        """What a gather of a whole loaded binding's elements at `indices` into a tensor
        of `device_shape` gives, as the load of a window of the binding where they are
        one (_strided_window): its tilize stage reads the window's rows, no gather launch
        (a depthwise convolution's taps of its padded input). The gather moves 4-byte
        elements; a bf16 binding's window keeps bf16 (the same values: a bf16 tile
        unpacks exactly). None where they are not one, for other formats, and for a
        window not at the start of a binding whose byte offset IREE passes as a push
        constant (a stage's one offset constant cannot add the two)."""
        data_format = self._format(source)
        if not _whole_load(source) or (indices < 0).any() or not (
                data_format.element_size == gather.ELEMENT_SIZE or data_format is DataFormat.bfloat16):
            return None
        loaded = _window_load(source.ref[1][:2], indices, device_shape, source.data_format)
        if loaded is not None and isinstance(source.ref[1][1], PushConstant) and loaded.window.start:
            return None
        return loaded

    def _gather_at(self, op, source: Tensor, table: Tensor) -> Tensor:
        """A tile tensor of the table's shapes whose elements are source's at the logical
        flat indices the int32 tile tensor `table` holds, computed on the chip."""
        if source.fill is not None:
            return Tensor(table.shape, fill=source.fill, data_format=source.data_format)
        source = self._gatherable(op, source)
        operand, offset, order = self._rows(op, source)
        if not np.array_equal(order.reshape(-1), np.arange(order.size)):
            raise unimplemented(op, f"a gather from a tensor held transposed (device shape {source.device_shape})")
        table_rows, _, _ = self._rows(op, table)
        out = self._temp(table.shape, table.device_shape, source.data_format)
        self._gather_launch(source, operand, offset, table_rows, out, 0)
        return out

    def _gatherable(self, op, source: Tensor) -> Tensor:
        """The source itself, or its copy in 4-byte elements (a fill materialised, narrow
        integers widened to int32; a tensor.empty, whose contents are undefined, as
        zeros)."""
        if source.fill is None and source.ref is None:
            source = Tensor(source.shape, fill=0 if self._format(source).is_integer else 0.0,
                            data_format=source.data_format)
        if source.fill is None and self._format(source).element_size == gather.ELEMENT_SIZE:
            return source
        integer = isinstance(source.fill, int) if source.fill is not None else self._format(source).is_integer
        copy = self._temp(source.shape, source.device_shape, INTEGER_FORMAT if integer else None)
        self._elementwise_copy(op, source, copy)
        return copy

    def _gather_launch(self, source: Tensor, operand, offset, table, out: Tensor, fill) -> None:
        fmt = self._format(source)
        ds = out.device_shape
        constants = rowmajor.push_constants(ds[-2], ds[-1], [offset, 0], math.prod(ds[:-2]))
        bits = int(fill) & 0xFFFFFFFF if fmt.is_integer else float_bits(float(fill))
        self.launches.append(Launch(("gather", fmt, bits), constants, [operand, table, out], constants[0]))

    def _elementwise_copy(self, op, tensor: Tensor, out: Tensor) -> None:
        """out = tensor (a fill materialised, or narrow integers widened to int32)."""
        inputs = []
        leaf = self._fill_leaf(tensor.fill, inputs) if tensor.fill is not None else Input(0)
        if tensor.fill is None:
            inputs.append((tensor, FusedInput(self._format(tensor))))
        self._fused(op, (leaf,), inputs, out)

    def _rows(self, op, tensor: Tensor, windows: bool = False):
        """(gather operand, its byte offset, the position of each of the tensor's elements
        in it) of a tensor read row-major: a whole binding of 4-byte elements as it is (or,
        `windows`, a window of one, its elements where the window puts them: an attention's
        q, k and v, slices of one binding, gathered with no tilize and untilize), a
        constant as one, anything else untilized into a row-major scratch tensor first."""
        n = math.prod(tensor.shape)
        logical = np.arange(n, dtype=np.int64).reshape(tensor.shape)
        if tensor.ref is not None and tensor.ref[0] == "binding" and tensor.window is None:
            return ("rows", tensor.ref[1]), tensor.ref[1][1], logical
        if windows and tensor.ref is not None and tensor.ref[0] == "binding" and not tensor.row_major:
            places = _window_indices(tensor.window, tensor.device_shape).reshape(-1)
            return ("rows", tensor.ref[1]), tensor.ref[1][1], places[_device_order(tensor)]
        if tensor.ref is not None and tensor.ref[0] == "constant":
            values = np.asarray(tensor.ref[1]).reshape(-1)
            return Tensor((n,), ref=("constant", values), data_format=tensor.data_format, row_major=True), 0, logical
        earlier = self.untilized.get(id(tensor))
        if earlier is not None and earlier[0] is tensor and not any(
                _written(launch, tensor) for launch in self.launches[earlier[2] + 1:]):
            return earlier[1]
        rows = self._temp(tensor.shape, tensor.device_shape, tensor.data_format)
        rows.row_major = True
        ds = tensor.device_shape
        constants = rowmajor.push_constants(ds[-2], ds[-1], [0], math.prod(ds[:-2]))
        self.launches.append(Launch(("untilize", self._format(tensor)), constants, [tensor, rows], constants[0]))
        self.untilized[id(tensor)] = (tensor, (rows, 0, _device_order(tensor)), len(self.launches) - 1)
        return self.untilized[id(tensor)][1]

    def _scalar_fill(self, v):
        """A scalar of the dispatch as a fill's value: a constant (a float, or an integer's
        canonical int32), a push constant (an i32 known when the dispatch runs), a 0-d
        tensor's value (the Tensor, or its own fill); None if the lowering cannot know it."""
        known = _constant(v)
        known = self.ints.env.get(v) if known is None else known
        if isinstance(known, (bool, int, float)):
            return _fill_value(known, integer_width(v.type))
        if isinstance(known, PushConstant) and integer_width(v.type) == 32:
            return known
        if v in self.scalars:
            scalar = self.scalars[v]
            return scalar.fill if scalar.fill is not None else scalar
        return None

    def _scalar_leaf(self, v, inputs: list):
        """The instruction of a scalar's value (_scalar_fill), None if it is not known; of
        an i64 or a complex, the pair of them."""
        if is_pair(v.type):
            known = _constant(v)
            known = self.ints.env.get(v) if known is None else known
            if isinstance(known, int):
                return tuple(Constant(word, True) for word in int64.split(known))
            if v in self.scalars:
                tensor = self.scalars[v]
                return tuple(self._fill_leaf(t.fill if t.fill is not None else t, inputs)
                             for t in (tensor, tensor.high))
            return None
        fill = self._scalar_fill(v)
        return None if fill is None else self._fill_leaf(fill, inputs)

    def _leaf(self, op, tensor: Tensor, inputs: list, device_shape) -> Instruction:
        """The code of a tensor read whole by a fused kernel writing `device_shape`: its
        fill's, or an input (appended to `inputs`; tiled as the output first if need be)."""
        if tensor.fill is not None:
            return self._fill_leaf(tensor.fill, inputs)
        tensor = self._as(op, tensor, device_shape)
        inputs.append((tensor, FusedInput(self._format(tensor))))
        return Input(len(inputs) - 1)

    def _fill_leaf(self, fill, inputs: list) -> Instruction:
        """The code of a fill's value: a constant; a push constant's (a Scalar numbered by
        the dispatch's push constant ordinal until _fused numbers the kernel's); or a 0-d
        tensor's, an input broadcast from its tile (appended to `inputs`)."""
        if isinstance(fill, Tensor):
            inputs.append((fill, FusedInput(self._format(fill), Broadcast.SCALAR, True)))
            return Input(len(inputs) - 1)
        if isinstance(fill, PushConstant):
            return Scalar(fill.ordinal)
        return Constant(fill, isinstance(fill, int))

    def _space(self, ins, init, maps, extents):
        """The device shape of the loop space and each loop dim's axis in it."""
        n = len(extents)
        if n >= 2:
            return tuple(extents), list(range(n))
        if n == 0:
            return (1, 1), []
        for tensor, dims in zip(ins + [init], maps):
            # IREE collapses elementwise dispatches to one dim: keep the tiles of the
            # tensor it flattened (each element stays where it is).
            if tensor is not None and tensor.fill is None and dims == [0] and \
                    min(canonical(tensor.device_shape)[-2:]) > 1:
                return canonical(tensor.device_shape), FLAT
        for tensor, dims in zip(ins + [init], maps):
            if tensor is not None and dims == [0] and canonical(tensor.device_shape) == (extents[0], 1) != (1, 1):
                return (extents[0], 1), [0]
        folded = [shape for shape in self.bound.values() if math.prod(shape) == extents[0] and min(shape) > 1]
        if folded:  # a generic reading no folded tensor (an iota): the tiles of the ones it is stored as
            return folded[0], FLAT
        return (1, extents[0]), [1]

    def _view(self, op, tensor: Tensor, dims, space, axis) -> tuple[Tensor, FusedInput]:
        """The operand seen through its map, as a broadcast input of the loop space."""
        if axis is FLAT:
            if not dims:
                return tensor, FusedInput(self._format(tensor), Broadcast.SCALAR, len(space) > 2)
            if canonical(tensor.device_shape) != canonical(space):
                raise unimplemented(op, f"flattened operands of different tile shapes ({tensor.device_shape}, "
                                        f"{space})")
            return tensor, FusedInput(self._format(tensor))
        axes = [axis[d] for d in dims]
        batch = [d for d in range(len(axis)) if axis[d] < len(space) - 2]  # loop dims of the outer dims
        partial = 0 < len([a for a in axes if a < len(space) - 2]) < len(space) - 2
        swapped = len(axes) >= 2 and axes[-2] > axes[-1] and axes[:-2] == sorted(axes[:-2]) and \
            all(a < axes[-1] for a in axes[:-2])  # sorted but for a swap of its last two
        if partial or (axes != sorted(axes) and not swapped):
            # A permutation beyond the last two dims, or a broadcast over some of the
            # outer dims: gathered into the loop space's order (the outer dims all there).
            wanted = sorted(set(dims) | set(batch)) if partial else sorted(dims)
            extents = {d: space[axis[d]] for d in range(len(axis))}
            tensor = self._gather_operand(op, tensor, [f"d{d}" for d in dims], [[d] for d in wanted], extents,
                                          [space[a] if a in [axis[d] for d in wanted] else 1
                                           for a in range(len(space))])
            dims, axes = wanted, [axis[d] for d in wanted]
        expected = _broadcast_shape(space, axes)
        if axes != sorted(axes):
            swapped, logical = list(tensor.device_shape), list(tensor.shape)
            swapped[-2:] = swapped[-1], swapped[-2]
            if len(logical) >= 2:
                logical[-2:] = logical[-1], logical[-2]
            source = self._temp(logical, tuple(swapped), tensor.data_format)
            self._transpose(op, tensor, source)
            tensor = source
        tensor = self._as(op, tensor, tuple(expected))
        outer, outer_space = math.prod(expected[:-2]), math.prod(space[:-2])
        if outer not in (1, outer_space) or (outer == outer_space and expected[:-2] != list(space[:-2])):
            raise unimplemented(op, f"an operand broadcast over some of the batch dims ({expected} in {space})")
        rows, columns = expected[-2] == 1 != space[-2], expected[-1] == 1 != space[-1]
        broadcast = Broadcast.SCALAR if rows and columns else Broadcast.ROW if rows else \
            Broadcast.COL if columns else Broadcast.NONE
        return tensor, FusedInput(self._format(tensor), broadcast, outer == 1 != outer_space)

    def _permuted(self, op, tensor: Tensor, dims, space, axis) -> Tensor | None:
        """A whole loaded binding's elements permuted beyond the last two dims, as a
        generic that copies it through the map `dims` gives them (an attention's heads
        transposed): the load of a window of the binding, in whichever of the merged
        tilings it is one (_merged_tilings: a (2, 16, 4, 16) result as (2, 64, 16), its rows
        in groups of 4: 4 tiles, not 32 quarter-full ones), or a gather. None for other
        maps, which the fused path takes."""
        axes = [axis[d] for d in dims]
        if sorted(axes) != list(range(len(space))) or axes[:-2] == sorted(axes[:-2]) and \
                all(a < min(axes[-2:]) for a in axes[:-2]):
            return None  # in order, or a swap of the last two dims alone (a transpose)
        grid = np.indices(space, sparse=True)
        flat = np.ravel_multi_index([np.broadcast_to(grid[a], space) for a in axes], tensor.shape)
        return self._gather(op, tensor, flat, merged=True)

    def _code(self, op, ins, maps, space, axis, n_in, inputs, loops=None, hoisted=()) -> _Code:
        """The builder of eltwise_fused code over the generic's inputs (fills become
        constants; an i64 input's leaf is the pair of its words' leaves). `loops`: where
        the body's loops are if _merged_loops merged them, or an int: the loop's fixed
        index. `hoisted`: the keys of _hoisted's tensors, inputs after the generic's own
        (a value's becomes its leaf)."""
        leaves = {}
        arguments = op.regions[0].blocks[0].arguments

        def leaf(tensor: Tensor, dims) -> Instruction:
            if tensor.fill is not None:
                return self._fill_leaf(tensor.fill, inputs)
            inputs.append(self._view(op, tensor, dims, space, axis))
            return Input(len(inputs) - 1)

        for i, (tensor, dims) in enumerate(zip(ins, maps[:n_in])):
            leaves[arguments[i]] = leaf(tensor, dims) if tensor.high is None else (leaf(tensor, dims),
                                                                                    leaf(tensor.high, dims))
        hoisted_leaves = {}  # (index, extent) -> its leaf
        for j, key in enumerate(hoisted):
            tensor, dims = ins[n_in + j], maps[n_in + j]
            words = leaf(tensor, dims) if tensor.high is None else (leaf(tensor, dims), leaf(tensor.high, dims))
            (hoisted_leaves if isinstance(key, tuple) else leaves)[key] = words
        index_inputs = {}

        def loop_indices(dim: int) -> np.ndarray:
            """Loop dim `dim`'s index at each element of the loop space."""
            if loops is not None and isinstance(loops.get(dim), int):
                return np.full(space, loops[dim], np.int32)
            if axis is FLAT:
                return np.arange(math.prod(space), dtype=np.int32).reshape(space)
            if loops is not None:
                loop, divisor, extent = loops[dim]
                return np.indices(space, dtype=np.int32)[axis[loop]] // divisor % extent
            return np.indices(space, dtype=np.int32)[axis[dim]]

        def constant_input(values: np.ndarray) -> Instruction:
            inputs.append((Tensor(space, space, ("constant", values.astype(np.int32)), data_format=INTEGER_FORMAT),
                           FusedInput(INTEGER_FORMAT)))
            return Input(len(inputs) - 1)

        def index_input(dim: int) -> Instruction:
            """Input of a constant tensor holding loop dim `dim`'s index at each element (a
            Constant where `loops` fixes the dim: a step of _sequential_reduction)."""
            if loops is not None and isinstance(loops.get(dim), int):
                return Constant(loops[dim], True)
            if dim not in index_inputs:
                index_inputs[dim] = constant_input(loop_indices(dim))
            return index_inputs[dim]

        def known_index(v, extent: int) -> np.ndarray | None:
            """Index v clamped into a dim of `extent` at each element of the loop space,
            where it is a function of the loops alone (a rotary embedding's half swap):
            known now. None where it is not, or has no numpy evaluation (_evaluated)."""
            if _loops_read(v, [], {}) is None:
                return None
            try:
                values = _loop_value(v, loop_indices, {})
            except HalError as error:
                if error.code != StatusCode.UNIMPLEMENTED:
                    raise
                return None
            return np.clip(np.broadcast_to(values, space), 0, extent - 1)

        def extract_input(extract, code: _Code) -> Instruction:
            """The values a tensor.extract in the body takes: its source gathered at the flat
            index its indices make (each clamped into its dim, as out of range is undefined)
            at each element of the loop space: a table known now where every index is a
            function of the loops, else computed by a fused kernel of its own (indices of
            the loops alone constant inputs of it, hoisted ones computed before)."""
            source = self.values.get(extract.operands[0])
            if source is None:
                raise unimplemented(extract, "tensor.extract of a tensor that is not a value of the dispatch")
            if len(extract.operands) == 1:  # a 0-d tensor's value
                leaves = [self._fill_leaf(t.fill if t.fill is not None else t, code.inputs)
                          for t in (source, source.high) if t is not None]
                return leaves[0] if len(leaves) == 1 else tuple(leaves)
            indices = list(zip(extract.operands[1:], source.shape))
            known = [known_index(v, extent) for v, extent in indices]
            if all(k is not None for k in known):
                flat = np.ravel_multi_index(known, source.shape)
                gathered = [self._gather(extract, word, flat) for word in (source, source.high) if word is not None]
            else:
                sub = _Code(code.leaves, code.inputs, code.scalar_leaf, code.index_input, code.extract_input)
                flat, stride = None, 1
                for (v, extent), values in reversed(list(zip(indices, known))):
                    if values is not None:
                        i = sub.emit(constant_input(values))
                    elif (v, extent) in hoisted_leaves:
                        i = sub.emit(hoisted_leaves[v, extent])
                    else:
                        i = sub.clamped_index(v, extent)
                    if stride != 1:
                        i = sub.emit(Binary(SfpuOp.MUL_INT, i, sub.emit(Constant(stride, True))))
                    flat = i if flat is None else sub.emit(Binary(SfpuOp.ADD_INT, flat, i))
                    stride *= extent
                table_code, table_inputs = _cone(sub.code, flat, code.inputs)
                table = self._temp(space, space, INTEGER_FORMAT)
                self._fused(extract, table_code, table_inputs, table)
                gathered = [self._gather_at(extract, word, table) for word in (source, source.high) if word is not None]
            leaves = []
            for tensor in gathered:
                if tensor.fill is not None:
                    leaves.append(self._fill_leaf(tensor.fill, code.inputs))
                else:
                    code.inputs.append((tensor, FusedInput(self._format(tensor))))
                    leaves.append(Input(len(code.inputs) - 1))
            return leaves[0] if len(leaves) == 1 else tuple(leaves)

        code = _Code(leaves, inputs, lambda v: self._scalar_leaf(v, inputs), index_input, extract_input)
        code.maxima = _maxima(op, n_in)
        return code

    def _elementwise(self, op, ins, maps, space, axis, body, n_in, out: Tensor, loops=None, hoisted=()) -> Tensor:
        result = body[-1].operands[0]
        if isinstance(result, ir.BlockArgument) and result.arg_number == n_in:
            raise unimplemented(op, "a linalg.generic that yields its own output")
        if isinstance(result, ir.BlockArgument) and len(body) == 1 and axis is not FLAT and \
                _whole_load(ins[result.arg_number]) and len(maps[result.arg_number]) == len(space):
            permuted = self._permuted(op, ins[result.arg_number], maps[result.arg_number], space, axis)
            if permuted is not None:
                return permuted
        inputs: list = []
        builder = self._code(op, ins, maps, space, axis, n_in, inputs, loops, hoisted)
        if is_pair(result.type):  # an i64 or a complex: its words computed by two kernels
            return self._words(op, builder.code, inputs, builder.pair(result), out.shape, out.device_shape,
                               word_format(result.type))
        code = builder.code
        index = builder.result(result)
        if index != len(code) - 1:  # (an i64's low word, say): the code of that value alone
            code, inputs = _cone(code, index, inputs)
        if len(code) == 1 and isinstance(code[0], Input):  # (a hoisted value): that input alone
            code, inputs = [Input(0)], [inputs[code[0].index]]
        if code == [Input(0)] and inputs[0][1].broadcast is Broadcast.NONE and not inputs[0][1].batch_broadcast:
            tensor = inputs[0][0]
            if tensor.ref is not None and tensor.ref[0] == "temp":
                return tensor  # a copy or a transpose already made by _view
        self._fused(op, code, inputs, out)
        return out

    def _combine(self, op, init: Tensor, partial: Tensor, binary: SfpuOp, identity: tuple[float, ...],
                 device_shape) -> Tensor:
        """init <op> partial, unless init is a fill with the op's identity."""
        if _is_identity(init, identity):
            return partial
        out = self._temp(partial.shape, device_shape, partial.data_format)
        inputs, code = [], []
        for tensor in (init, partial):
            if tensor.fill is not None:
                code.append(self._fill_leaf(tensor.fill, inputs))
            else:
                code.append(Input(len(inputs)))
                tensor = self._as(op, tensor, device_shape)
                inputs.append((tensor, FusedInput(self._format(tensor))))
        code.append(Binary(binary, 0, 1))
        self._fused(op, code, inputs, out)
        return out

    @staticmethod
    def _product_sum(body, n_in: int, integer: bool) -> bool:
        """Is the body out + a * b of its two inputs (floats whose operands may be extended
        from bf16 first, or integers whose operands may be sign-extended first)?"""
        names = [inner.name for inner in body[:-1]]
        multiply, extend = (["arith.muli", "arith.addi"], "arith.extsi") if integer else \
            (["arith.mulf", "arith.addf"], "arith.extf")
        if n_in != 2 or names[-2:] != multiply or any(name != extend for name in names[:-2]):
            return False
        product, accumulate = body[-3], body[-2]
        if {v.arg_number for v in map(_uncast, product.operands) if isinstance(v, ir.BlockArgument)} != {0, 1}:
            return False
        acc_operands = list(accumulate.operands)
        return (isinstance(acc_operands[0], ir.BlockArgument) and acc_operands[0].arg_number == 2
                and acc_operands[1] == product.results[0]) or \
            (isinstance(acc_operands[1], ir.BlockArgument) and acc_operands[1].arg_number == 2
             and acc_operands[0] == product.results[0])

    def _contraction(self, op, ins, init, maps, iterators, extents, body, n_in) -> bool:
        """matmul if the body is out + a * b over one reduction dim with matmul maps."""
        if not self._product_sum(body, n_in, integer_width(op.results[0].type) is not None):
            return False
        k = iterators.index("reduction")
        a_dims, b_dims, out_dims = maps
        if k not in a_dims or k not in b_dims:
            return False
        if not _plain_contraction(a_dims, b_dims, out_dims, k):
            return self._grouped_contraction(op, ins, init, [[f"d{d}" for d in dims] for dims in (a_dims, b_dims)],
                                             out_dims, [k], extents)
        m, n, batch = out_dims[-2], out_dims[-1], out_dims[:-2]
        a_tensor = self._operand(op, ins[0], a_dims, batch + [m, k], extents)
        b_batch = [d for d in batch if d in b_dims]
        if b_batch not in ([], batch):
            b_batch = batch  # b gathered over every batch dim
        transpose_b = b_dims == b_batch + [n, k] and ins[1].fill is None and \
            integer_width(op.results[0].type) is None  # torch's Linear weight, (out, in): read as it is
        b_tensor = self._as(op, ins[1], tuple(extents[d] for d in b_dims)) if transpose_b else \
            self._operand(op, ins[1], b_dims, b_batch + [k, n], extents)
        device = tuple(extents[d] for d in out_dims)
        stacked = _retiled(a_tensor, (math.prod(device[:-1]), extents[k])) if batch and not b_batch and \
            extents[m] % TILE and a_tensor.fill is None else None
        if stacked is not None:
            # b shared by the batch: one matmul of the batch's rows stacked, (B*M, K) @ (K, N),
            # not B matmuls each padding M rows to whole tiles (a loaded a tilized so at once)
            a_tensor, device = stacked, (stacked.device_shape[0], device[-1])
        out = self._matmul(op, a_tensor, b_tensor, device, extents[k], bool(b_batch), init.shape, transpose_b)
        self.values[op.results[0]] = self._accumulated(op, init, out)
        return True

    def _grouped_contraction(self, op, ins, init, exprs, out_dims, reductions, extents) -> bool:
        """A contraction whose rows or columns span several loop dims, in any order of the
        result's (torch's convolutions in NCHW: out[n, o, h, w] = sum_c x[n, c, h, w] w[o, c]),
        over the reduction loops `reductions` (merged into one K), its operands read through
        the maps `exprs` (a convolution's window, x[c, h + kh, w + kw], is one): each operand
        gathered at once into a batch of matrices (the dims of a group merged; im2col for a
        window), one matmul, and its result gathered back to the result's dims unless it
        holds them in order already. False if the maps are not those of a contraction (a
        reduction of a product)."""
        a_dims, b_dims = _dims(exprs[0]), _dims(exprs[1])
        batch = [d for d in out_dims if d in a_dims and d in b_dims]
        free = [d for d in out_dims if d not in batch]
        if free and free[0] in b_dims:  # the first free dim is a row: from b, so b a (the product commutes)
            ins, exprs, a_dims, b_dims = ins[::-1], exprs[::-1], b_dims, a_dims
        rows = [d for d in free if d in a_dims]
        columns = [d for d in free if d in b_dims]
        if not rows or not columns or len(rows) + len(columns) != len(free) or \
                sorted(a_dims) != sorted(batch + rows + reductions) or \
                sorted(b_dims) != sorted(batch + reductions + columns):
            return False
        outer = [[d] for d in batch]
        a = self._gather_operand(op, ins[0], exprs[0], outer + [rows, reductions], extents)
        b = self._gather_operand(op, ins[1], exprs[1], outer + [reductions, columns], extents)
        k_extent = math.prod(extents[d] for d in reductions)
        device = tuple(extents[d] for d in batch) + tuple(math.prod(extents[d] for d in g) for g in (rows, columns))
        place = dict(zip(out_dims, np.indices([extents[d] for d in out_dims])))
        merged = [np.ravel_multi_index([place[d] for d in g], [extents[d] for d in g]) for g in (rows, columns)]
        index = np.ravel_multi_index([place[d] for d in batch] + merged, device)
        if np.array_equal(index.reshape(-1), np.arange(index.size)) and _merges(init.shape, device):
            # The product holds the result's elements in its order (a batch of one image, C x H*W):
            # the result as it is, its dims merged, as its elementwise consumers then take it.
            product = self._matmul(op, a, b, device, k_extent, bool(batch), init.shape)
        else:
            product = self._gather(op, self._matmul(op, a, b, device, k_extent, bool(batch), device),
                                   index.reshape(init.shape))
        self.values[op.results[0]] = self._accumulated(op, init, product)
        return True

    def _accumulated(self, op, init: Tensor, product: Tensor) -> Tensor:
        """A contraction's init plus its product (int32 or float addition)."""
        if integer_width(op.results[0].type) is not None:
            return self._combine(op, init, product, SfpuOp.ADD_INT, (0,), product.device_shape)
        return self._combine(op, init, product, SfpuOp.ADD, (0.0,), product.device_shape)

    def _matmul(self, op, a: Tensor, b: Tensor, device, k_extent: int, b_batched: bool, shape,
                transpose_b: bool = False) -> Tensor:
        """a @ b over the batch dims of `device` (the product's device shape, rows and
        columns last; b shared by the batch unless `b_batched`; held as (N, K) with
        `transpose_b`), as a tensor of logical shape `shape`: the matmul kernel, or exact
        integer matmuls."""
        mt, nt, kt = tiles(device[-2]), tiles(device[-1]), tiles(k_extent)
        total = math.prod(device[:-2]) * mt * nt
        constants = [total, kt, nt, mt, kt * nt if b_batched else 0]
        if integer_width(op.results[0].type) is not None:
            return self._integer_matmul(op, a, b, constants, shape, device, k_extent)
        out = self._temp(shape, device, tile_format(op.results[0].type))
        kernel = ("matmul", self._format(a), self._format(b), self._format(out),
                  self.options.math_fidelity, self.options.fp32_dest_acc_en, transpose_b)
        self.launches.append(Launch(kernel, constants, [a, b, out], total))
        return out

    def _integer_matmul(self, op, a: Tensor, b: Tensor, constants, shape, device, k_extent: int) -> Tensor:
        """The wrapping int32 matmul a @ b, exactly: with a = sum_i a_i 2^8i (its bytes, 0..255)
        and b likewise, a @ b = sum over i + j <= 3 of (a_i @ b_j) << 8(i + j) mod 2^32; each
        a_i @ b_j is a float matmul at HiFi4 (bytes exact in bf16, products exact, sums exact
        in float32 while 65025 * K < 2^24: K <= INTEGER_MATMUL_LIMIT)."""
        if k_extent > INTEGER_MATMUL_LIMIT:
            raise unimplemented(op, f"an integer matmul over K = {k_extent}: the Tensix lowering multiplies "
                                    f"integers exactly up to K = {INTEGER_MATMUL_LIMIT}")
        a_bytes = [self._byte_plane(op, a, i) for i in range(4)]
        b_bytes = [self._byte_plane(op, b, j) for j in range(4)]
        kernel = ("matmul", DataFormat.float32, DataFormat.float32, DataFormat.float32, MathFidelity.HiFi4, True,
                  False)
        products = []
        for i in range(4):
            for j in range(4 - i):
                product = self._temp(shape, device, DataFormat.float32)
                self.launches.append(Launch(kernel, constants, [a_bytes[i], b_bytes[j], product], constants[0]))
                products.append((product, 8 * (i + j)))
        return self._from_bytes(op, products, SfpuOp.ADD_INT, shape, device)

    def _byte_plane(self, op, tensor: Tensor, k: int) -> Tensor:
        """float32 tiles of byte k (0..255) of an integer tensor."""
        code = [Input(0)]
        self._integer_byte(code, 0, k)
        plane = self._temp(tensor.shape, tensor.device_shape, DataFormat.float32)
        self._fused(op, code, [(tensor, FusedInput(self._format(tensor)))], plane)
        return plane

    def _operand(self, op, tensor: Tensor, dims, wanted, extents) -> Tensor:
        """A contraction operand in the dim order `wanted` (a transposed copy if its
        last two dims are swapped; a splat's tiles made in that order)."""
        shape = tuple(extents[d] for d in wanted)
        if tensor.fill is not None:  # a constant weight, say: IREE hands the dispatch a splat
            integer = isinstance(tensor.fill, int) or self._format(tensor).is_integer
            out = self._temp(shape, shape, INTEGER_FORMAT if integer else None)
            self._elementwise_copy(op, Tensor(shape, fill=tensor.fill, data_format=tensor.data_format), out)
            return out
        if dims == wanted:
            return self._as(op, tensor, shape)
        if dims[:-2] == wanted[:-2] and dims[-2:] == wanted[-2:][::-1]:
            # A transpose by the maps, not by comparing device shapes: a square operand has
            # the same device shape either way.
            out = self._temp(shape, shape, tensor.data_format)
            self._transpose(op, self._as(op, tensor, tuple(extents[d] for d in dims)), out)
            return out
        return self._gather_operand(op, tensor, [f"d{d}" for d in dims], [[d] for d in wanted], extents)

    def _reduction(self, op, ins, init, maps, space, axis, r, body, n_in) -> Tensor:
        result = body[-1].operands[0]
        combine = result.owner.operation if not isinstance(result, ir.BlockArgument) else None
        if combine is None or combine.name not in _FOLDS:
            raise unimplemented(op, f"a reduction combining with "
                                    f"{combine.name if combine is not None else 'nothing'}; supported: "
                                    f"{', '.join(_FOLDS)}, arith.mulf and arith.muli over one dim")
        a, b = combine.operands
        is_out = [isinstance(v, ir.BlockArgument) and v.arg_number == n_in for v in (a, b)]
        if is_out.count(True) != 1:
            raise unimplemented(op, "a reduction body that does not combine its output once")
        element = b if is_out[0] else a
        reduced_axis = axis[r] - len(space)  # -1 or -2 of the device shape
        if reduced_axis not in (-1, -2):
            raise unimplemented(op, f"a reduction over dim {r} of {len(space)}: the kernel library reduces the last "
                                    f"two dims")
        # The reduced operand: the element expression over the whole loop space.
        full = self._elementwise(op, ins, maps, space, axis, body[:-1] + [_Yield(element)], n_in,
                                 self._temp(space, space)) if not self._is_plain(ins, maps, element, space, axis) \
            else self._as(op, ins[element.arg_number], space)
        out_shape = list(space)
        out_shape[reduced_axis] = 1
        out_shape = tuple(out_shape)
        binary, identity = _FOLDS[combine.name]
        partial = self._reduced(op, full, combine.name, integer_width(result.type), space, reduced_axis, out_shape,
                                init.shape)
        return self._combine(op, init, partial, binary, identity, out_shape)

    def _reduced(self, op, full: Tensor, combine: str, width: int, space, reduced_axis: int, out_shape,
                 shape) -> Tensor:
        """`full` (of device shape `space`) reduced along its dim `reduced_axis` (-1 or -2)
        by the body op `combine` (a key of _FOLDS; `width`: the integer width, 0 for
        floats), into a tensor of `shape` and device shape `out_shape`."""
        if width and combine == "arith.addi":
            return self._integer_sum(op, full, space, reduced_axis, out_shape, shape)
        if combine in _PREDICATE_FOLDS:
            if width != 1:
                raise unimplemented(op, f"{combine} reduction of i{width}: the Tensix lowering folds i1 so (all, "
                                        f"any), not wider integers bit by bit")
            combine = _PREDICATE_FOLDS[combine]
        if width:
            signed = combine in ("arith.maxsi", "arith.minsi")
            if not signed and width < 32:
                raise unimplemented(op, f"{combine} reduction of i{width}: the Tensix lowering takes unsigned "
                                        f"extremes of i32 only")
            largest = combine in ("arith.maxsi", "arith.maxui")
            return self._integer_extreme(op, full, space, reduced_axis, out_shape, shape, signed, largest)
        negate = combine in _MIN_REDUCTIONS
        if negate:
            full = self._negated(op, full)
        kind = ReduceKind(int(ReduceKind.SUM_ROW if combine == "arith.addf" else ReduceKind.MAX_ROW) +
                          (reduced_axis == -2))
        partial = self._reduce(full, kind, space, reduced_axis, self._temp(shape, out_shape))
        return self._negated(op, partial) if negate else partial

    def _reduce(self, full: Tensor, kind: ReduceKind, space, reduced_axis: int, partial: Tensor) -> Tensor:
        """A reduce launch: `full` (of device shape `space`) reduced along its dim
        `reduced_axis` (-1 or -2) into `partial`, in partial's format (a bf16 `full` is
        unpacked as it is)."""
        fmt = self._format(partial)
        extent = space[reduced_axis]
        valid = extent % TILE
        columns = space[-1] % TILE if reduced_axis == -2 else 0
        rows_tiles, width_tiles = math.prod(space[:-2]) * tiles(space[-2]), tiles(space[-1])
        constants = [rows_tiles, width_tiles, 1] if reduced_axis == -1 else \
            [math.prod(space[:-2]) * width_tiles, tiles(space[-2]), width_tiles]
        masks = ([("mask", valid, reduced_axis)] if valid else []) + ([("mask", columns, -1)] if columns else [])
        kernel = ("reduce", kind, self._format(full), fmt, bool(valid), bool(columns),
                  self.options.fp32_dest_acc_en or fmt is DataFormat.float32)
        self.launches.append(Launch(kernel, constants, [full] + masks + [partial], constants[0]))
        return partial

    def _integer_sum(self, op, full: Tensor, space, reduced_axis: int, out_shape, shape) -> Tensor:
        """The wrapping int32 sum of `full` along `reduced_axis`, exactly: each of its four
        bytes (0..255, exact through the FPU's Src registers) is summed by reduce_tile into
        float32 (exact below 2^24, so for up to INTEGER_SUM_LIMIT terms), and the four sums
        are recombined as sum_k bytesum_k << 8k in int32."""
        if space[reduced_axis] > INTEGER_SUM_LIMIT:
            raise unimplemented(op, f"an integer sum of {space[reduced_axis]} terms: the Tensix lowering sums "
                                    f"integers exactly up to {INTEGER_SUM_LIMIT}")
        kind = ReduceKind.SUM_ROW if reduced_axis == -1 else ReduceKind.SUM_COL
        sums = [(self._reduce(self._byte_plane(op, full, k), kind, space, reduced_axis,
                              self._temp(shape, out_shape, DataFormat.float32)), 8 * k) for k in range(4)]
        return self._from_bytes(op, sums, SfpuOp.ADD_INT, shape, out_shape)

    def _integer_extreme(self, op, full: Tensor, space, reduced_axis: int, out_shape, shape, signed: bool,
                         largest: bool) -> Tensor:
        """The int32 max (or min) of `full` along `reduced_axis`, exactly, byte by byte
        from the top: u = x with the sign bit flipped (signed) and all bits flipped (min),
        so that u's unsigned order is the one wanted; m_k is the float reduce_tile max of
        u's byte k (0..255, exact) where u's higher bytes equal m_{k+1..3}, else -1; the
        result is sum_k m_k << 8k with the flips undone."""
        kind = ReduceKind.MAX_ROW if reduced_axis == -1 else ReduceKind.MAX_COL
        along = Broadcast.COL if reduced_axis == -1 else Broadcast.ROW  # a reduced tensor repeated along the axis
        flips = (0x80000000 if signed else 0) ^ (0 if largest else 0xFFFFFFFF)
        flip = _canonical_integer(flips, 32)
        maxima: list[Tensor] = []  # m_3, m_2, ...
        for k in (3, 2, 1, 0):
            code = [Input(0), Constant(flip, True), Binary(SfpuOp.XOR, 0, 1)]  # u: value 2
            inputs = [(full, FusedInput(self._format(full)))]
            byte = self._integer_byte(code, 2, k)
            for j, maximum in zip((3, 2, 1), maxima):  # where u's byte j is m_j, for each higher byte
                inputs.append((maximum, FusedInput(DataFormat.float32, along)))
                code.append(Input(len(inputs) - 1))
                m_j = len(code) - 1
                code.append(Binary(SfpuOp.EQ, self._integer_byte(code, 2, j), m_j))
                equal = len(code) - 1
                code.append(Constant(-1.0))
                code.append(Ternary(SfpuOp.WHERE, equal, byte, len(code) - 1))
                byte = len(code) - 1
            plane = self._temp(full.shape, space, DataFormat.float32)
            self._fused(op, code, inputs, plane)
            maxima.append(self._reduce(plane, kind, space, reduced_axis,
                                       self._temp(shape, out_shape, DataFormat.float32)))
        return self._from_bytes(op, list(zip(maxima, (24, 16, 8, 0))), SfpuOp.OR, shape, out_shape, flip)

    @staticmethod
    def _integer_byte(code: list, value: int, k: int) -> int:
        """Appends float((code[value] >> 8k) & 0xFF) to `code`; returns its number."""
        code += [Constant(8 * k, True), Binary(SfpuOp.SHRU, value, len(code)), Constant(0xFF, True)]
        code += [Binary(SfpuOp.AND, len(code) - 2, len(code) - 1)]
        code += [Unary(SfpuOp.I32_TO_F32, len(code) - 1)]
        return len(code) - 1

    def _from_bytes(self, op, parts: list, combine: SfpuOp, shape, device_shape, flip: int = 0) -> Tensor:
        """The int32 tensor combine_k(int32(part_k) << shift_k) ^ flip, of float32 tensors
        of integers (parts: (tensor, shift)): how the bytewise integer ops end."""
        code, inputs, total = [], [], None
        for tensor, shift in parts:
            inputs.append((tensor, FusedInput(DataFormat.float32)))
            code += [Input(len(inputs) - 1), Unary(SfpuOp.F32_TO_I32, len(code))]
            if shift:
                code += [Constant(shift, True), Binary(SfpuOp.SHL, len(code) - 1, len(code))]
            if total is not None:
                code.append(Binary(combine, total, len(code) - 1))
            total = len(code) - 1
        if flip:
            code += [Constant(flip, True), Binary(SfpuOp.XOR, total, len(code))]
        out = self._temp(shape, device_shape, INTEGER_FORMAT)
        self._fused(op, code, inputs, out)
        return out

    def _negated(self, op, tensor: Tensor) -> Tensor:
        """-tensor, a scratch tensor of its shape."""
        out = self._temp(tensor.shape, tensor.device_shape)
        self._fused(op, (Input(0), Unary(SfpuOp.NEG, 0)), [(tensor, FusedInput(self.options.data_format))], out)
        return out

    def _is_plain(self, ins, maps, element, space, axis) -> bool:
        """Is the reduced element an input read whole (no broadcast, no permutation)?"""
        if not isinstance(element, ir.BlockArgument) or element.arg_number >= len(ins):
            return False
        tensor, dims = ins[element.arg_number], maps[element.arg_number]
        return tensor.fill is None and dims == list(range(len(space))) and [axis[d] for d in dims] == dims


def _uncast(value):
    """`value` before the sign extensions that made it (an operand of an integer product)."""
    while isinstance(value.owner, (ir.Operation, ir.OpView)) and value.owner.operation.name == "arith.extsi":
        value = value.owner.operation.operands[0]
    return value


def _joined(code: list[Instruction], inputs: list, other_code: list[Instruction], other_inputs: list) -> tuple[
        list[Instruction], list]:
    """Code computing `code`'s values and then `other_code`'s (renumbered after them), and
    the inputs both read."""
    joined, joined_inputs, number = list(code), list(inputs), {}
    for v, instruction in enumerate(other_code):
        if isinstance(instruction, Input):
            joined_inputs.append(other_inputs[instruction.index])
            instruction = Input(len(joined_inputs) - 1)
        number[v] = len(joined)
        joined.append(renumbered(instruction, number))
    return joined, joined_inputs


# A launch reads an operand's tiles from its rows (four face reads each: 64 NoC reads of a
# face row, where a tilize stage reads 32 rows a block of 8 tiles) when it reads no more than
# this many tiles so: on this host a tile so read costs about a tenth of a tilize launch
# (docs/tensix.md, Performance), so small operands save time and large ones would not.
ROW_TILE_READS = 8


def loaded(operand) -> bool:
    """Is a launch operand a tensor loaded from a binding?"""
    return isinstance(operand, Tensor) and operand.ref is not None and operand.ref[0] == "binding"


def _row_tile_inputs_fit(inputs: list[tuple[Tensor, FusedInput]]) -> bool:
    """Does a fused kernel that may read a loaded binding as row tiles (a kernel of at most
    ROW_TILE_READS tiles: one read of each input a tile) take at most
    fused.FUSED_ROW_TILE_INPUTS inputs, as many as its reader has the registers for?"""
    return (len(inputs) <= fused.FUSED_ROW_TILE_INPUTS or not any(loaded(tensor) for tensor, _ in inputs)
            or max(tile_count(tensor.device_shape) for tensor, _ in inputs) > ROW_TILE_READS)


def _cone(code: Sequence[Instruction], value: int, inputs: list, cut: dict | None = None) -> tuple[list[Instruction],
                                                                                                  list]:
    """The code computing `value` alone, renumbered, and the inputs it reads; a value in
    `cut` (value -> (Tensor, FusedInput) it was computed into) is read as an input."""
    cut = cut or {}
    needed, stack = set(), [value]
    while stack:
        v = stack.pop()
        if v not in needed:
            needed.add(v)
            if v not in cut:
                stack.extend(code[v].operands)
    number, sub_code, sub_inputs, input_number = {}, [], [], {}
    for v in sorted(needed):
        instruction = code[v]
        if v in cut:
            key = ("cut", v)
            if key not in input_number:
                input_number[key] = len(sub_inputs)
                sub_inputs.append(cut[v])
            instruction = Input(input_number[key])
        elif isinstance(instruction, Input):
            if instruction.index not in input_number:
                input_number[instruction.index] = len(sub_inputs)
                sub_inputs.append(inputs[instruction.index])
            instruction = Input(input_number[instruction.index])
        number[v] = len(sub_code)
        sub_code.append(renumbered(instruction, number))
    return sub_code, sub_inputs


class _Yield:
    """A stand-in for linalg.yield of one value (to lower part of a body)."""

    def __init__(self, value):
        self.operands = [value]
