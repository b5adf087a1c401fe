"""tt_hal.compiler.int64: i64 ops built from int32 SFPU ops, checked against Python's
integers on words drawn over the whole range and near the carries. The code is run by
a numpy interpreter of the SFPU's int32 ops (tests/reference.py's twins of the ops'
definitions); tests/test_compiler.py runs the same builders on the simulated chip
against llvm-cpu."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import integer_binary
from tt_hal.compiler import int64
from tt_hal.kernels.fused import Binary, Constant, Input, Ternary
from tt_hal.target.isa import SfpuOp

MASK = (1 << 64) - 1


def signed64(value: int) -> int:
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


class Interpreter:
    """Runs int32 code over numpy arrays, as the fused kernel's SFPU ops define them."""

    def __init__(self, *inputs: int):
        self.values: list[np.ndarray] = []
        self.inputs = [np.array([w], np.int32) for value in inputs for w in int64.split(value)]

    def emit(self, instruction) -> int:
        if isinstance(instruction, Input):
            value = self.inputs[instruction.index]
        elif isinstance(instruction, Constant):
            value = np.array([instruction.value], np.int64).astype(np.int32)
        elif isinstance(instruction, Ternary):
            assert instruction.op is SfpuOp.WHERE_INT
            value = np.where(self.values[instruction.c] != 0, self.values[instruction.a], self.values[instruction.b])
        else:
            assert isinstance(instruction, Binary)
            value = integer_binary(instruction.op, self.values[instruction.a], self.values[instruction.b])
        self.values.append(value)
        return len(self.values) - 1

    def run(self, build, *values: int):
        """build(Pairs, *input pairs) -> a pair or a value; returns it as Python ints."""
        pairs = int64.Pairs(self.emit)
        operands = [(self.emit(Input(2 * i)), self.emit(Input(2 * i + 1))) for i in range(len(values))]
        result = build(pairs, *operands)
        if isinstance(result, tuple):
            low, high = (int(self.values[v][0]) for v in result)
            return signed64((high << 32) | (low & 0xFFFFFFFF))
        return int(self.values[result][0])


# Whole-range words, and values near the places where carries and compares of the low
# word matter (0, +-2^31, +-2^32, the extremes).
EDGES = [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 32 - 1, 2 ** 32, -2 ** 32, 2 ** 63 - 1, -2 ** 63]
values = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), st.sampled_from(EDGES),
                   st.builds(lambda e, d: signed64(e + d), st.sampled_from(EDGES), st.integers(-3, 3)))


def run(build, *operands: int):
    return Interpreter(*operands).run(build, *operands)


@settings(max_examples=300, deadline=None)
@given(values, values)
def test_arithmetic_wraps_as_i64(a, b):
    assert run(lambda p, x, y: p.add(x, y), a, b) == signed64(a + b)
    assert run(lambda p, x, y: p.subtract(x, y), a, b) == signed64(a - b)
    assert run(lambda p, x, y: p.multiply(x, y), a, b) == signed64(a * b)
    for op, python in ((SfpuOp.AND, int.__and__), (SfpuOp.OR, int.__or__), (SfpuOp.XOR, int.__xor__)):
        assert run(lambda p, x, y, op=op: p.bitwise(op, x, y), a, b) == signed64(python(a, b))


@settings(max_examples=300, deadline=None)
@given(values, values)
def test_compares_and_extremes(a, b):
    ua, ub = a & MASK, b & MASK
    expected = {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b,
                "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}
    for predicate, want in expected.items():
        assert run(lambda p, x, y, w=predicate: p.compare(w, x, y), a, b) == int(want), predicate
    assert run(lambda p, x, y: p.extreme(x, y, True, True), a, b) == max(a, b)
    assert run(lambda p, x, y: p.extreme(x, y, False, True), a, b) == min(a, b)
    assert run(lambda p, x, y: p.extreme(x, y, True, False), a, b) == signed64(max(ua, ub))
    assert run(lambda p, x, y: p.extreme(x, y, False, False), a, b) == signed64(min(ua, ub))


@settings(max_examples=200, deadline=None)
@given(values)
def test_saturated_to_int32(a):
    assert run(lambda p, x: p.saturated(x), a) == min(max(a, -2 ** 31), 2 ** 31 - 1)


@settings(max_examples=200, deadline=None)
@given(values, st.integers(0, 63))
def test_shifts_by_constants(a, n):
    assert run(lambda p, x: p.shift_left(x, n), a) == signed64(a << n)
    assert run(lambda p, x: p.shift_right(x, n, True), a) == a >> n
    assert run(lambda p, x: p.shift_right(x, n, False), a) == signed64((a & MASK) >> n)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1))
def test_high_product_of_words(x, y):
    interpreter = Interpreter()
    words = [interpreter.emit(Constant(int64.split(v)[0], True)) for v in (x, y)]
    high = int64.Pairs(interpreter.emit).high_product(*words)
    assert int(interpreter.values[high][0]) & 0xFFFFFFFF == (x * y) >> 32


@pytest.mark.parametrize("value", [0, 5, -5, 2 ** 31, -2 ** 31 - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 + 3])
def test_split_words(value):
    low, high = int64.split(value)
    assert -2 ** 31 <= low < 2 ** 31 and -2 ** 31 <= high < 2 ** 31
    assert signed64((high << 32) | (low & 0xFFFFFFFF)) == signed64(value)


@given(st.integers(-2 ** 31, 2 ** 31 - 1))
def test_extensions(x):
    def extend(signed):
        return lambda p: p.sign_extended(p.constant(x)) if signed else p.zero_extended(p.constant(x))

    assert run(extend(True)) == x
    assert run(extend(False)) == x & 0xFFFFFFFF


def truncated_division(a: int, d: int) -> tuple[int, int]:
    """Python's (quotient toward zero, remainder with a's sign), as arith.divsi/remsi."""
    q = abs(a) // abs(d) * (1 if (a < 0) == (d < 0) else -1)
    return q, a - q * d


# where the limb width changes
DIVISOR_EDGES = [1, 2, 3, 7, 10, 2 ** 15 - 1, 2 ** 15, 2 ** 16 + 1, 2 ** 29, int64.DIVISOR_LIMIT - 1]
divisors = st.one_of(st.integers(1, 40), st.integers(1, int64.DIVISOR_LIMIT - 1), st.sampled_from(DIVISOR_EDGES))


@settings(max_examples=300, deadline=None)
@given(values, divisors, st.booleans())
def test_division_by_constants(a, magnitude, negative):
    """divsi, remsi (either sign of divisor), divui, remui, floordivsi and ceildivsi by a
    constant: long division in limbs, exact over the whole range (-2^63 / -1 wraps)."""
    d = -magnitude if negative else magnitude
    q, r = truncated_division(a, d)
    assert run(lambda p, x: p.divided_by(x, d, True)[0], a) == signed64(q)
    assert run(lambda p, x: p.divided_by(x, d, True)[1], a) == r
    assert run(lambda p, x: p.rounded_quotient(x, d, True), a) == signed64(a // d)
    assert run(lambda p, x: p.rounded_quotient(x, d, False), a) == signed64(-(-a // d))
    unsigned = a & MASK
    assert run(lambda p, x: p.divided_by(x, magnitude, False)[0], a) == signed64(unsigned // magnitude)
    assert run(lambda p, x: p.divided_by(x, magnitude, False)[1], a) == unsigned % magnitude


@given(values)
def test_absolute(a):
    assert run(lambda p, x: p.absolute(x), a) == signed64(abs(a))
