"""64-bit integers on the SFPU's 32-bit ones, exactly.

The Tensix has no 64-bit integer arithmetic (TT-Metal's SFPU integer ops are int32 and
uint32), and tt-mlir narrows i64 to i32. tt-hal keeps IREE's i64 exact instead: an i64
value is a pair of int32 values, its low word and its high word, and each op below is
built from int32 SFPU ops on the pairs (wrapping, as arith's i64 ops wrap). A tensor of
i64 is two int32 tensors (tt_hal.compiler.lowering.Tensor.high). Ops not here (division
by a value known only at run time, shifts by amounts known only at run time) are
UNIMPLEMENTED.

Each builder takes `emit(instruction) -> value number` of the code being built and
value numbers of int32 values; a pair is (low, high).
"""

from __future__ import annotations

from typing import Callable

from tt_hal.kernels.fused import Binary, Constant, Instruction, Ternary, Unary
from tt_hal.target.isa import SfpuOp

Pair = tuple[int, int]
WORD = 1 << 32
# divided_by's divisors: below this in magnitude, so that a remainder shifted up by a limb
# of at least one bit and the limb fit an int32 (the SFPU's division is int32's).
DIVISOR_LIMIT = 1 << 30


def split(value: int) -> tuple[int, int]:
    """A Python int as an i64's (low, high) words, each a signed int32 (wrapping to 64 bits)."""
    value &= (1 << 64) - 1
    return _signed(value % WORD), _signed(value >> 32)


def _signed(word: int) -> int:
    return word - WORD if word >= WORD >> 1 else word


class Pairs:
    """Builders of i64 code from int32 instructions."""

    def __init__(self, emit: Callable[[Instruction], int]):
        self.emit = emit

    def constant(self, value: int) -> int:
        return self.emit(Constant(value, True))

    def _op(self, op: SfpuOp, a: int, b: int) -> int:
        return self.emit(Binary(op, a, b))

    def _by(self, op: SfpuOp, a: int, n: int) -> int:
        return self._op(op, a, self.constant(n))

    def sign_extended(self, x: int) -> Pair:
        return x, self._by(SfpuOp.SHR, x, 31)

    def zero_extended(self, x: int) -> Pair:
        return x, self.constant(0)

    def add(self, a: Pair, b: Pair) -> Pair:
        low = self._op(SfpuOp.ADD_INT, a[0], b[0])
        carry = self._op(SfpuOp.LT_UINT, low, a[0])  # the low words' sum wrapped
        return low, self._op(SfpuOp.ADD_INT, self._op(SfpuOp.ADD_INT, a[1], b[1]), carry)

    def subtract(self, a: Pair, b: Pair) -> Pair:
        borrow = self._op(SfpuOp.LT_UINT, a[0], b[0])
        high = self._op(SfpuOp.SUB_INT, self._op(SfpuOp.SUB_INT, a[1], b[1]), borrow)
        return self._op(SfpuOp.SUB_INT, a[0], b[0]), high

    def multiply(self, a: Pair, b: Pair) -> Pair:
        """The low 64 bits of a * b: a0*b0 in full, plus the low words of a0*b1 and a1*b0
        in the high word."""
        high = self._op(SfpuOp.ADD_INT, self.high_product(a[0], b[0]), self._op(SfpuOp.MUL_INT, a[0], b[1]))
        high = self._op(SfpuOp.ADD_INT, high, self._op(SfpuOp.MUL_INT, a[1], b[0]))
        return self._op(SfpuOp.MUL_INT, a[0], b[0]), high

    def high_product(self, x: int, y: int) -> int:
        """The high word of the unsigned 64-bit product of two words, from 16-bit halves
        (each partial product fits a word): hi(x*y) = x1*y1 + hi16(x0*y1) + hi16(x1*y0) +
        hi16(lo16(x0*y1) + lo16(x1*y0) + hi16(x0*y0))."""
        mask, half = self.constant(0xFFFF), self.constant(16)
        x0, x1 = self._op(SfpuOp.AND, x, mask), self._op(SfpuOp.SHRU, x, half)
        y0, y1 = self._op(SfpuOp.AND, y, mask), self._op(SfpuOp.SHRU, y, half)
        p00, p01 = self._op(SfpuOp.MUL_INT, x0, y0), self._op(SfpuOp.MUL_INT, x0, y1)
        p10, p11 = self._op(SfpuOp.MUL_INT, x1, y0), self._op(SfpuOp.MUL_INT, x1, y1)
        middle = self._op(SfpuOp.ADD_INT, self._op(SfpuOp.SHRU, p00, half), self._op(SfpuOp.AND, p01, mask))
        middle = self._op(SfpuOp.ADD_INT, middle, self._op(SfpuOp.AND, p10, mask))
        high = self._op(SfpuOp.ADD_INT, p11, self._op(SfpuOp.SHRU, p01, half))
        high = self._op(SfpuOp.ADD_INT, high, self._op(SfpuOp.SHRU, p10, half))
        return self._op(SfpuOp.ADD_INT, high, self._op(SfpuOp.SHRU, middle, half))

    def saturated(self, a: Pair) -> int:
        """a as an int32, saturated to its range: a itself wherever it fits."""
        fits = self._op(SfpuOp.EQ_INT, a[1], self._by(SfpuOp.SHR, a[0], 31))
        negative = self._op(SfpuOp.LT_INT, a[1], self.constant(0))
        bound = self.emit(Ternary(SfpuOp.WHERE_INT, negative, self.constant(-(1 << 31)), self.constant((1 << 31) - 1)))
        return self.emit(Ternary(SfpuOp.WHERE_INT, fits, a[0], bound))

    def bitwise(self, op: SfpuOp, a: Pair, b: Pair) -> Pair:
        return self._op(op, a[0], b[0]), self._op(op, a[1], b[1])

    def equal(self, a: Pair, b: Pair) -> int:
        return self._op(SfpuOp.AND, self._op(SfpuOp.EQ_INT, a[0], b[0]), self._op(SfpuOp.EQ_INT, a[1], b[1]))

    def less(self, a: Pair, b: Pair, signed: bool) -> int:
        """1 where a < b: the high words decide, the low ones (unsigned) on a tie."""
        high_less = self._op(SfpuOp.LT_INT if signed else SfpuOp.LT_UINT, a[1], b[1])
        tie = self._op(SfpuOp.AND, self._op(SfpuOp.EQ_INT, a[1], b[1]), self._op(SfpuOp.LT_UINT, a[0], b[0]))
        return self._op(SfpuOp.OR, high_less, tie)

    def compare(self, predicate: str, a: Pair, b: Pair) -> int:
        """arith.cmpi's `predicate` (eq, ne, slt, ..., uge) as 1 or 0."""
        if predicate in ("eq", "ne"):
            result = self.equal(a, b)
            return result if predicate == "eq" else self._by(SfpuOp.XOR, result, 1)
        signed = predicate[0] == "s"
        relation = predicate[1:]
        if relation in ("lt", "ge"):
            result = self.less(a, b, signed)
        else:  # gt, le: b < a
            result = self.less(b, a, signed)
        return result if relation in ("lt", "gt") else self._by(SfpuOp.XOR, result, 1)

    def to_float(self, a: Pair, signed: bool) -> int:
        """a as a float32 (arith.sitofp, uitofp): rounded to nearest even where it fits 32
        bits (the int32 or uint32 conversion: ids, masks, counts), else high 2^32 + low,
        rounded twice (within one unit in the last place)."""
        low = self.emit(Unary(SfpuOp.U32_TO_F32, a[0]))
        high = self.emit(Unary(SfpuOp.I32_TO_F32 if signed else SfpuOp.U32_TO_F32, a[1]))
        wide = self._op(SfpuOp.ADD, self.emit(Unary(SfpuOp.MUL_SCALAR, high, float(WORD))), low)
        if signed:
            fits = self._op(SfpuOp.EQ_INT, a[1], self._by(SfpuOp.SHR, a[0], 31))
            narrow = self.emit(Unary(SfpuOp.I32_TO_F32, a[0]))
        else:
            fits, narrow = self._op(SfpuOp.EQ_INT, a[1], self.constant(0)), low
        return self.emit(Ternary(SfpuOp.WHERE_INT, fits, narrow, wide))

    def negated(self, a: Pair) -> Pair:
        return self.subtract((self.constant(0), self.constant(0)), a)

    def absolute(self, a: Pair, negative: int | None = None) -> Pair:
        """|a| (math.absi: the most negative value stays itself, as it wraps); `negative`:
        1 where a < 0, if the caller has it already."""
        negative = self._by(SfpuOp.LT_INT, a[1], 0) if negative is None else negative
        return self.select(SfpuOp.WHERE_INT, negative, self.negated(a), a)

    def bits(self, a: Pair, low: int, width: int) -> int:
        """Bits [low, low + width) of a (width <= 16) as a non-negative int32."""
        if low >= 32:
            part = self._by(SfpuOp.SHRU, a[1], low - 32)
        elif low + width <= 32:
            part = self._by(SfpuOp.SHRU, a[0], low)
        else:  # across the words
            part = self._op(SfpuOp.OR, self._by(SfpuOp.SHRU, a[0], low), self._by(SfpuOp.SHL, a[1], 32 - low))
        return self._by(SfpuOp.AND, part, (1 << width) - 1)

    def placed(self, a: Pair, digit: int, low: int, width: int) -> Pair:
        """a with `digit` (below 2^width) ORed in at bit `low`, where a's bits are 0."""
        if low >= 32:
            return a[0], self._op(SfpuOp.OR, a[1], self._by(SfpuOp.SHL, digit, low - 32))
        low_word = self._op(SfpuOp.OR, a[0], self._by(SfpuOp.SHL, digit, low))
        if low + width <= 32:
            return low_word, a[1]
        return low_word, self._op(SfpuOp.OR, a[1], self._by(SfpuOp.SHRU, digit, 32 - low))

    def divided_by(self, a: Pair, divisor: int, signed: bool) -> tuple[Pair, Pair]:
        """(quotient, remainder) of a by a constant 0 < |divisor| < DIVISOR_LIMIT
        (arith.divsi/remsi: toward zero, the remainder with a's sign; divui/remui on the
        unsigned values): long division of |a| in limbs of as many bits as keep the
        remainder shifted up by a limb, plus the limb, below 2^31, one int32 division
        each (16-bit limbs for a divisor below 2^15: four)."""
        magnitude = abs(divisor)
        negative = self._by(SfpuOp.LT_INT, a[1], 0) if signed else None
        x = self.absolute(a, negative) if signed else a
        width = min(16, 31 - magnitude.bit_length())
        quotient, remainder = (self.constant(0), self.constant(0)), self.constant(0)
        low = 64
        while low > 0:
            limb = min(width, low)
            low -= limb
            current = self._op(SfpuOp.OR, self._by(SfpuOp.SHL, remainder, limb), self.bits(x, low, limb))
            digit = self._by(SfpuOp.DIV_INT, current, magnitude)
            remainder = self._op(SfpuOp.SUB_INT, current, self._by(SfpuOp.MUL_INT, digit, magnitude))
            quotient = self.placed(quotient, digit, low, limb)
        rest = (remainder, self.constant(0))
        if not signed:
            return quotient, rest
        flip = self._by(SfpuOp.XOR, negative, 1) if divisor < 0 else negative
        return (self.select(SfpuOp.WHERE_INT, flip, self.negated(quotient), quotient),
                self.select(SfpuOp.WHERE_INT, negative, self.negated(rest), rest))

    def rounded_quotient(self, a: Pair, divisor: int, floor: bool) -> Pair:
        """arith.floordivsi (floor) or ceildivsi of a by a constant: the quotient toward
        zero, less (floor) or plus (ceil) one where the remainder is not 0 and the exact
        quotient is negative (floor) or positive (ceil)."""
        quotient, remainder = self.divided_by(a, divisor, True)
        negative = self._by(SfpuOp.LT_INT, a[1], 0)
        differ = self._by(SfpuOp.XOR, negative, 1) if divisor < 0 else negative  # a and divisor differ in sign
        sided = differ if floor else self._by(SfpuOp.XOR, differ, 1)
        step = self._op(SfpuOp.AND, self._by(SfpuOp.NE_INT, remainder[0], 0), sided)
        step_pair = (step, self.constant(0))
        return self.subtract(quotient, step_pair) if floor else self.add(quotient, step_pair)

    def select(self, where: SfpuOp, condition: int, a: Pair, b: Pair) -> Pair:
        return (self.emit(Ternary(where, condition, a[0], b[0])), self.emit(Ternary(where, condition, a[1], b[1])))

    def extreme(self, a: Pair, b: Pair, maximum: bool, signed: bool) -> Pair:
        """max or min of a and b."""
        take_a = self.less(b, a, signed) if maximum else self.less(a, b, signed)
        return self.select(SfpuOp.WHERE_INT, take_a, a, b)

    def shift_left(self, a: Pair, n: int) -> Pair:
        """a << n for a constant n in [0, 64)."""
        if n == 0:
            return a
        if n >= 32:
            return self.constant(0), self._by(SfpuOp.SHL, a[0], n - 32)
        high = self._op(SfpuOp.OR, self._by(SfpuOp.SHL, a[1], n), self._by(SfpuOp.SHRU, a[0], 32 - n))
        return self._by(SfpuOp.SHL, a[0], n), high

    def shift_right(self, a: Pair, n: int, arithmetic: bool) -> Pair:
        """a >> n (arithmetic or logical) for a constant n in [0, 64)."""
        if n == 0:
            return a
        shift = SfpuOp.SHR if arithmetic else SfpuOp.SHRU
        if n >= 32:
            high = self._by(SfpuOp.SHR, a[1], 31) if arithmetic else self.constant(0)
            return self._by(shift, a[1], n - 32), high
        low = self._op(SfpuOp.OR, self._by(SfpuOp.SHRU, a[0], n), self._by(SfpuOp.SHL, a[1], 32 - n))
        return low, self._by(shift, a[1], n)
