"""16-bit floats (bf16 and IEEE half, f16) on the SFPU's int32 and float32 ops, exactly.

bf16 is the Tensix's own format: a dispatch holds bf16 tensors in bfloat16 tiles, which
the packer rounds into; only `arith.truncf` to bf16 inside a body needs code
(`bfloat16_rounded`). f16 has no tile format on this path and is computed as float32:
a dispatch loads an f16 tensor as its raw 16-bit patterns (UInt16 tiles) and widens
them, and narrows float32 values to f16 patterns where it stores one or where a body
truncates to f16 (`arith.truncf`). Both
conversions are compositions of int32 SFPU ops (TT-Metal's integer ops and
`typecast_tile`), exact as IEEE 754 defines them: f16 -> f32 is exact; f32 -> f16
rounds to nearest, ties to even, with f16's subnormals, overflow to infinity, and NaN
kept quiet with the top of its payload (as compiler-rt's `__truncsfhf2`, which IREE's
llvm-cpu code calls, keeps it).

Each builder takes `emit(instruction) -> value number` of the code being built and the
value number of its operand, as tt_hal.compiler.int64's do.
"""

from __future__ import annotations

from typing import Callable

from tt_hal.kernels.fused import Binary, Constant, Instruction, Ternary, Unary
from tt_hal.target.isa import SfpuOp

Emit = Callable[[Instruction], int]
_BIAS_DIFFERENCE = 127 - 15  # float32's exponent bias minus f16's
_SUBNORMAL_SCALE = 2.0 ** 24  # f16's subnormals are multiples of 2^-24


def _integer(emit: Emit, value: int) -> int:
    return emit(Constant(value, True))


def _binary(emit: Emit, op: SfpuOp, a: int, b: int) -> int:
    return emit(Binary(op, a, b))


def _by(emit: Emit, op: SfpuOp, a: int, n: int) -> int:
    return _binary(emit, op, a, _integer(emit, n))


def _where(emit: Emit, condition: int, a: int, b: int) -> int:
    """a where the int32 condition is nonzero, else b (in a's kind)."""
    return emit(Ternary(SfpuOp.WHERE_INT, condition, a, b))


def to_float(emit: Emit, half: int) -> int:
    """The float32 value of f16 bit patterns (an int32 value of 0..65535)."""
    sign_bit = _by(emit, SfpuOp.SHR, half, 15)
    exponent = _by(emit, SfpuOp.AND, _by(emit, SfpuOp.SHR, half, 10), 0x1F)
    mantissa = _by(emit, SfpuOp.AND, half, 0x3FF)
    sign = _by(emit, SfpuOp.SHL, sign_bit, 31)
    fraction = _by(emit, SfpuOp.SHL, mantissa, 13)
    normal = _binary(emit, SfpuOp.OR, _by(emit, SfpuOp.SHL, _by(emit, SfpuOp.ADD_INT, exponent, _BIAS_DIFFERENCE), 23),
                     fraction)
    special = _by(emit, SfpuOp.OR, fraction, 0x7F800000)  # infinity, NaN
    bits = _binary(emit, SfpuOp.OR, sign, _where(emit, _by(emit, SfpuOp.EQ_INT, exponent, 0x1F), special, normal))
    zero = emit(Constant(0.0))
    value = emit(Ternary(SfpuOp.WHERE, zero, zero, bits))  # the bits as a float (where moves them whole)
    tiny = emit(Unary(SfpuOp.MUL_SCALAR, emit(Unary(SfpuOp.I32_TO_F32, mantissa)), 1 / _SUBNORMAL_SCALE))
    subnormal = _where(emit, sign_bit, emit(Unary(SfpuOp.NEG, tiny)), tiny)  # zero too, with its sign
    return _where(emit, _by(emit, SfpuOp.EQ_INT, exponent, 0), subnormal, value)


def from_float(emit: Emit, x: int) -> int:
    """The f16 bit patterns (int32 values of 0..65535) of float32 values, rounded to
    nearest even."""
    bits = _by(emit, SfpuOp.OR, x, 0)  # the float's bits as an int32 (OR moves them)
    sign = _by(emit, SfpuOp.AND, _by(emit, SfpuOp.SHRU, bits, 16), 0x8000)
    magnitude = _by(emit, SfpuOp.AND, bits, 0x7FFFFFFF)
    # A normal f16: rebias, then + 0xFFF + the lowest kept bit and drop 13 bits (a carry
    # into the exponent is right, up to the largest finite value).
    kept = _by(emit, SfpuOp.AND, _by(emit, SfpuOp.SHRU, magnitude, 13), 1)
    rebiased = _by(emit, SfpuOp.SUB_INT, magnitude, _BIAS_DIFFERENCE << 23)
    normal = _by(emit, SfpuOp.SHRU, _binary(emit, SfpuOp.ADD_INT, _by(emit, SfpuOp.ADD_INT, rebiased, 0xFFF), kept), 13)
    # Below f16's smallest normal (2^-14): |x| 2^24 rounded to an integer, ties to even
    # (exact: a power-of-two scaling); 1024 is the smallest normal's pattern.
    scaled = emit(Unary(SfpuOp.MUL_SCALAR, emit(Unary(SfpuOp.ABS, x)), _SUBNORMAL_SCALE))
    subnormal = emit(Unary(SfpuOp.F32_TO_I32, emit(Unary(SfpuOp.ROUND_EVEN, scaled))))
    finite = _where(emit, _by(emit, SfpuOp.LT_INT, magnitude, 0x38800000), subnormal, normal)
    # From 65520 up (what rounds past the largest finite 65504): infinity.
    large = _where(emit, _by(emit, SfpuOp.GE_INT, magnitude, 0x477FF000), _integer(emit, 0x7C00), finite)
    nan = _by(emit, SfpuOp.OR, _by(emit, SfpuOp.AND, _by(emit, SfpuOp.SHRU, magnitude, 13), 0x1FF), 0x7E00)
    return _binary(emit, SfpuOp.OR, sign,
                   _where(emit, _by(emit, SfpuOp.GT_INT, magnitude, 0x7F800000), nan, large))


def rounded(emit: Emit, x: int) -> int:
    """float32 values rounded to f16's (arith.truncf to f16), as float32."""
    return to_float(emit, from_float(emit, x))


def bfloat16_rounded(emit: Emit, x: int) -> int:
    """float32 values rounded to bf16's, nearest even, as arith.truncf (and TT-Metal's
    SFPU typecast) round: on the bits, + 0x7FFF + the lowest kept bit, the low half
    cleared; a NaN stays the NaN it is (the carry could make an infinity of it)."""
    bits = _by(emit, SfpuOp.OR, x, 0)
    kept = _by(emit, SfpuOp.AND, _by(emit, SfpuOp.SHRU, bits, 16), 1)
    carried = _by(emit, SfpuOp.ADD_INT, _binary(emit, SfpuOp.ADD_INT, bits, kept), 0x7FFF)
    zero = emit(Constant(0.0))
    value = emit(Ternary(SfpuOp.WHERE, zero, zero, _by(emit, SfpuOp.AND, carried, -(1 << 16))))
    return emit(Ternary(SfpuOp.WHERE, _binary(emit, SfpuOp.NE, x, x), x, value))
