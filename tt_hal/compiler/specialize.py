"""Dispatches with dynamic shapes (or slice offsets), lowered when they are dispatched.

IREE passes a dispatch's dynamic dims as push constants (a 64-bit value as two 32-bit
words), and the offsets of slices it reads or writes at places known only at run time
(dynamic_slice, dynamic_update_slice: a KV cache's position). The lowering
(tt_hal/compiler/lowering.py) sizes grids, tile counts, padding masks and scratch
tensors and places slices when it runs, so such a dispatch goes into the .ttx as the
MLIR of its function (Export.source, no stages) and is lowered again for the push
constants of each dispatch: they replace the function's `hal.interface.constant.load`s,
IREE's canonicalizer folds every shape and offset static, and the function lowers as a
static one would. tt_hal/runtime/hal_module.py calls `specialize` when the VM records
such a dispatch and keeps the programs of recent push constants, so each new shape or
place costs one lowering (about 0.1-0.3 s).
"""

from __future__ import annotations

from collections.abc import Sequence

from iree.compiler import ir
from iree.compiler.passmanager import PassManager

from hal.status import HalError, StatusCode
from tt_hal.compiler import dispatch, frontend
from tt_hal.compiler.lowering import DYNAMIC, location
from tt_hal.target.program import Export

CANONICALIZE = "builtin.module(func.func(canonicalize, cse))"
TRIAL_DIM = 40  # the value of a dynamic dim when a dynamic export is lowered once at compile time, as a check
_SLICES = ("iree_tensor_ext.dispatch.tensor.load", "iree_tensor_ext.dispatch.tensor.store")

def is_dynamic(func) -> bool:
    """Does the dispatch function bind a tensor of dynamic shape, or load or store a
    slice of sizes known only when it runs, or at offsets IREE passes when it runs
    (dynamic_update_slice)? Offsets computed from tensor data inside the dispatch are not
    such: the chip computes them (tt_hal/compiler/lowering.py, DispatchLowering._slice_table)."""
    data = set()  # values computed from tensor elements
    for op in frontend.operations(func):
        if op.name == "tensor.extract" or (any(v in data for v in op.operands) and
                                           not any(isinstance(r.type, ir.ShapedType) for r in op.results)):
            data.update(op.results)
        if op.name == "hal.interface.binding.subspan" and op.opview.dynamic_dims:
            return True
        if op.name in _SLICES and (DYNAMIC in ir.DenseI64ArrayAttr(op.attributes["static_sizes"]) or
                                   any(v not in data for v in op.opview.offsets)):
            return True
    return False


def dynamic_export(name: str, constant_count: int, binding_count: int, func) -> Export:
    """The export of a dispatch function with dynamic shapes: its MLIR, checked by
    lowering it once for trial push constants (dims TRIAL_DIM), so that an op without
    a Tensix lowering fails the compile, not the first call."""
    export = Export(name, constant_count, binding_count, (1, 1, 1), (), (),
                    func.get_asm(enable_debug_info=True))
    high = _high_words(func)
    try:
        specialize(export, [0 if ordinal in high else TRIAL_DIM for ordinal in range(constant_count)])
    except HalError as error:
        if error.code == StatusCode.UNIMPLEMENTED:
            raise
        # Dims that only make sense together (a packed dim half another) cannot all be the trial
        # value: IREE's verifier refuses the folded IR. The dispatch's own push constants will agree.
    return export


def specialize(export: Export, constants: Sequence[int]) -> Export:
    """The static export of a dynamic one for these push constants (uint32 words)."""
    if len(constants) != export.constant_count:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{export.name} takes {export.constant_count} push constants, "
                                                    f"got {len(constants)}")
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(export.source)
        [func] = [op for op in frontend.operations(module.operation) if op.name == "func.func"]
        for op in list(frontend.operations(func)):
            if op.name == "hal.interface.constant.load":
                word = int(constants[op.opview.ordinal.value]) & 0xFFFFFFFF
                type_ = op.results[0].type
                value = word - (1 << 32) if word >= 1 << 31 and ir.IntegerType(type_).width == 32 else word
                with ir.InsertionPoint(op):
                    constant = ir.Operation.create("arith.constant", results=[type_],
                                                   attributes={"value": ir.IntegerAttr.get(type_, value)})
                op.results[0].replace_all_uses_with(constant.results[0])
                op.erase()
        try:
            PassManager.parse(CANONICALIZE).run(module.operation)
        except ir.MLIRError as error:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{export.name}: its push constants {list(constants)} do not make a valid program: "
                           f"{str(error).splitlines()[0]}") from None
        name = f"{export.name}<{','.join(str(int(c)) for c in constants)}>"
        return dispatch.lower_function(name, export.constant_count, export.binding_count, func, location(func))


def _high_words(func) -> set[int]:
    """The push constants that are the high words of 64-bit values (shifted left by 32)."""
    loads = {op.results[0]: op.opview.ordinal.value for op in frontend.operations(func)
             if op.name == "hal.interface.constant.load"}
    high = set()
    for op in frontend.operations(func):
        if op.name in ("arith.extui", "arith.extsi") and op.operands[0] in loads:
            for use in op.results[0].uses:
                if use.owner.name == "arith.shli" and use.operand_number == 0:
                    high.add(loads[op.operands[0]])
    return high
