"""The types of a compiled function's arguments and results, read from the declaration
IREE writes into a .vmfb's reflection (`iree.abi.declaration`), e.g.

    sync func @main(%input0: tensor<?x64xf32>, %input1: i32) -> (%output0: tensor<?x64xf32>)

so a tool can make inputs for a program it knows only as a .vmfb.
"""

from __future__ import annotations

import dataclasses
import re

import ml_dtypes
import numpy as np

from hal.status import HalError, StatusCode

# MLIR element type -> numpy dtype, for the types programs use.
DTYPES = {
    "f64": np.dtype(np.float64), "f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "i64": np.dtype(np.int64), "i32": np.dtype(np.int32), "i16": np.dtype(np.int16),
    "i8": np.dtype(np.int8), "i1": np.dtype(np.bool_),
    "ui64": np.dtype(np.uint64), "ui32": np.dtype(np.uint32), "ui16": np.dtype(np.uint16), "ui8": np.dtype(np.uint8),
}
_VALUE = re.compile(r"%[\w$.-]+\s*:\s*(tensor<[^>]*>|[\w!.]+)")


@dataclasses.dataclass(frozen=True)
class TensorType:
    """A tensor's shape (None for a dynamic dimension) and element type; a scalar
    argument (an `i32`, not a `tensor<i32>`) has `scalar` set."""

    shape: tuple[int | None, ...]
    dtype: np.dtype
    scalar: bool = False

    @property
    def static(self) -> bool:
        return None not in self.shape

    def __str__(self) -> str:
        if self.scalar:
            return self.dtype.name
        return f"{self.dtype.name}[{', '.join('?' if d is None else str(d) for d in self.shape)}]"


def parse_type(text: str) -> TensorType | None:
    """`tensor<3x?xf32>`, `tensor<f32>` or `i32` as a TensorType; None for a type that
    is not a tensor of a known element type (a `!hal.buffer_view`, a list).
    INVALID_ARGUMENT for a tensor dimension that is neither a number nor `?` (a damaged
    .vmfb's declaration)."""
    text = text.strip()
    if text.startswith("tensor<") and text.endswith(">"):
        *dims, element = text[len("tensor<"):-1].split("x")
        if element not in DTYPES:
            return None
        try:
            shape = tuple(None if d == "?" else int(d) for d in dims)
        except ValueError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"type {text!r}: a dimension is neither a number nor "
                                                        f"'?'") from None
        return TensorType(shape, DTYPES[element])
    return TensorType((), DTYPES[text], scalar=True) if text in DTYPES else None


def parse_declaration(declaration: str) -> tuple[list[TensorType | None], list[TensorType | None]]:
    """(argument types, result types) of an `iree.abi.declaration`."""
    arguments, _, results = declaration.partition("->")
    return ([parse_type(t) for t in _VALUE.findall(arguments)], [parse_type(t) for t in _VALUE.findall(results)])
