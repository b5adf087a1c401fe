"""`compile_module`: MLIR -> IREE as the front end -> Tensix kernels and a host
program, in one .ttm module file."""

from __future__ import annotations

import os

from iree.compiler import ir

from hal.log import get_logger
from hal.status import HalError, StatusCode
from tt_hal.compiler import frontend
from tt_hal.compiler.host import lower_module
from tt_hal.compiler.lowering import Options
from tt_hal.runtime.host_program import ModuleRecord
from tt_hal.runtime.module import write_module
from tt_hal.target.isa import MathFidelity
from tt_hal.target.layout import DataFormat
from tt_hal.target.ttx import write_executable

log = get_logger(__name__)

DATA_FORMATS = ("bfloat16", "float32")


def compile_module(source: str | os.PathLike, *, data_format: str = "bfloat16", math_fidelity: str = "HiFi4") -> bytes:
    """The .ttm bytes of an MLIR program (text, or the path of a .mlir file).

    `data_format`: how tensors live on the device: "bfloat16" (as TTNN does) or
    "float32". Errors: INVALID_ARGUMENT with the compiler's diagnostics for MLIR IREE
    rejects, UNIMPLEMENTED naming the op and its location for what has no Tensix
    lowering yet."""
    text, name = frontend.read_source(source)
    if data_format not in DATA_FORMATS:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"data_format {data_format!r}: expected one of {DATA_FORMATS}")
    try:
        fidelity = MathFidelity[math_fidelity]
    except KeyError:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"math_fidelity {math_fidelity!r}: expected one of "
                                                    f"{', '.join(MathFidelity.__members__)}") from None
    options = Options(DataFormat.parse(data_format), fidelity)
    sources = frontend.compile_to_sources(text, name)
    with ir.Context():
        module = ir.Module.parse(sources)
        frontend.normalize(module)
        functions, exports, constants = lower_module(module, options)
    log.info("compiled %s: %d functions, %d kernel exports, %d constants (%s, %s)", name, len(functions),
             len(exports), len(constants), data_format, fidelity.name)
    record = ModuleRecord(options.data_format, fidelity, tuple(functions), tuple(constants))
    return write_module(record, write_executable(exports), text)
