"""A real IREE `.vmfb` for the tenstorrent device: iree-base-compiler in process,
phase by phase (docs/dev/iree-compiler-bridge.md, section 8):

1. to `executable-sources`: each dispatch is a `hal.executable` of linalg on tensors;
   each export is lowered to a staged Tensix export of one `.ttx`
   (tt_hal/compiler/dispatch.py), or kept as MLIR to be lowered for each dispatch's
   shapes when they are dynamic (tt_hal/compiler/specialize.py); every executable
   binary carries it (IREE links the dispatches into one executable, and its host code
   looks them up by name);
2. on to `hal` with IREE's llvm-cpu target: IREE's host code (its scheduling, buffers,
   fences, control flow and globals) is final here; every `hal.executable.binary`
   then takes format `tenstorrent-ttx-fb` and the `.ttx`, and the device queries ask
   for a tenstorrent device and that format;
3. on to `vm`, where the hal imports are rewritten for a Python `hal` module
   (tt_hal/compiler/vm_rewrite.py);
4. on to the `.vmfb`: IREE's bytecode module, run by iree.runtime's VM with the
   `hal` module of tt_hal/runtime/hal_module.py (loaded by tt_hal.runtime.system).
"""

from __future__ import annotations

import os

import numpy as np
from iree.compiler import ir

from hal.device import DEVICE_ID
from hal.status import HalError
from tt_hal.compiler import dispatch, frontend, specialize, vm_rewrite
from tt_hal.target.program import Export
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

DEVICE_PATTERN = f"{DEVICE_ID}*"  # what the program's device query matches (hal.device.id)


def compile_vmfb(source: str | os.PathLike) -> bytes:
    """The .vmfb of an MLIR program (text, or the path of a .mlir file). Errors:
    INVALID_ARGUMENT with the compiler's diagnostics for MLIR IREE rejects,
    UNIMPLEMENTED naming the op and its location for what has no Tensix lowering."""
    text, name = frontend.read_source(source)
    sources = frontend.declare_signatures(frontend.compile_to_sources(text, name), text)
    ttx = write_executable(lower_dispatches(sources))
    hal_ir = retarget(frontend.compile_phase(sources, "executable-sources", "hal"), ttx)
    vm_ir = vm_rewrite.rewrite(frontend.compile_phase(hal_ir, "hal", "vm"))
    return frontend.compile_phase(vm_ir, "vm", None)


def lower_dispatches(sources: str) -> list[Export]:
    """The staged Tensix export of every dispatch at the executable-sources phase."""
    with ir.Context():
        module = ir.Module.parse(sources)
        frontend.inline_resources(module, frontend.resource_blobs(sources))
        frontend.normalize(module)
        exports = []
        for variant in frontend.operations(module.operation):
            if variant.name != "hal.executable.variant":
                continue
            ops = list(frontend.operations(variant))
            functions = {_symbol(op): op for op in ops if op.name == "func.func"}
            for op in ops:
                if op.name != "hal.executable.export":
                    continue
                func = functions[_symbol(op)]
                if specialize.is_dynamic(func):  # lowered for each dispatch's shapes
                    exports.append(specialize.dynamic_export(_symbol(op), *dispatch.pipeline_layout(op), func))
                else:
                    try:
                        exports.append(dispatch.lower_export(op, func))
                    except HalError as error:  # a slice placed by a push constant: lowered for each call's
                        if dispatch.PUSH_CONSTANT_WINDOW not in error.message:
                            raise
                        exports.append(specialize.dynamic_export(_symbol(op), *dispatch.pipeline_layout(op), func))
    return exports


def retarget(hal_ir: str, ttx: bytes) -> str:
    """The hal-phase IR with every executable binary replaced by `ttx` and the device
    queries asking for a tenstorrent device."""
    data = np.frombuffer(ttx, np.int8)
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(hal_ir)
        for op in frontend.operations(module.operation):
            if op.name == "hal.executable.binary":
                op.attributes["format"] = ir.StringAttr.get(EXECUTABLE_FORMAT)
                op.attributes["data"] = ir.DenseElementsAttr.get(data, type=ir.VectorType.get(
                    [len(data)], ir.IntegerType.get_signless(8)))
                del op.attributes["mime_type"]
            elif op.name == "hal.device.query":
                category = ir.StringAttr(op.attributes["category"]).value
                if category == "hal.device.id":
                    op.attributes["key"] = ir.StringAttr.get(DEVICE_PATTERN)
                elif category == "hal.executable.format":
                    op.attributes["key"] = ir.StringAttr.get(EXECUTABLE_FORMAT)
        return str(module)


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value
