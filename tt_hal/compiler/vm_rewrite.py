"""Rewrites a program's VM IR so that a Python module named `hal` serves its imports
(tt_hal/runtime/hal_module.py), where iree.runtime's native HAL module would.

iree-base-runtime 3.13's PyModuleInterface cannot serve IREE's `hal` imports as the
compiler declares them (docs/dev/iree-compiler-bridge.md, section 8): it cannot declare variadic calling
conventions, set a module version, store its objects in the program's typed globals,
or take mixed i32/i64 arguments (it packs them without the VM's 8-byte alignment).
So, in the `vm` dialect, before the bytecode is written:

- every call to `@hal.X` becomes a plain `vm.call` of a fixed-arity import `hal.X`:
  each variadic segment (push constants, bindings, shapes, fences) is passed as one
  `!vm.list<?>` built in place, tuple elements one after another; a yieldable call
  (`hal.fence.await`) becomes a call and a branch to its continuation;
- every i32 argument and result of a hal import is widened to i64;
- the `hal` imports are declared anew from those calls, without `minimum_version`;
- every `!vm.ref<!hal.*>` becomes `!vm.list<?>`: the Python module's handles are
  one-element lists holding a handle id (the only refs Python can make that globals
  of any type can hold).

The `hal` module exports each import under the same name with the calling
convention these declarations give (`hal_module.EXPORTS`, checked against them by
tests/test_vm_rewrite.py).
"""

from __future__ import annotations

import re

from iree.compiler import ir

from hal.status import HalError, StatusCode

HAL_REF = re.compile(r"!vm\.ref<!hal\.[a-z_]+>")
LIST = "!vm.list<?>"
_CALLS = ("vm.call", "vm.call.variadic", "vm.call.yieldable", "vm.call.variadic.yieldable")
_LIST_SETTERS = {"i32": "vm.list.set.i32", "i64": "vm.list.set.i64", "f32": "vm.list.set.f32"}


def rewrite(vm_text: str) -> str:
    """The VM IR text (`--compile-to=vm` output) rewritten as the module docstring says."""
    with ir.Context():
        module = ir.Module.parse(vm_text)
        vm_module = module.body.operations[0]
        body = vm_module.regions[0].blocks[0]
        signatures: dict[str, tuple[list[str], list[str]]] = {}
        for op in list(body.operations):
            if op.operation.name == "vm.func":
                for region in op.operation.regions:
                    for block in region.blocks:
                        for inner in list(block.operations):
                            if inner.operation.name in _CALLS and _callee(inner.operation).startswith("hal."):
                                _rewrite_call(inner.operation, signatures)
        for op in list(body.operations):
            if op.operation.name == "vm.import" and _symbol(op.operation).startswith("hal."):
                op.operation.erase()
        declarations = "\n".join(_import(name, args, results) for name, (args, results) in sorted(signatures.items()))
        text = str(module)
    marker = text.index("{", text.index("vm.module")) + 1
    return HAL_REF.sub(LIST, text[:marker] + "\n" + declarations + text[marker:])


def _callee(op) -> str:
    return str(op.attributes["callee"]).lstrip("@")


def _symbol(op) -> str:
    return str(op.attributes["sym_name"]).strip('"')


def _import(name: str, args: list[str], results: list[str]) -> str:
    arguments = ", ".join(f"%a{k} : {t}" for k, t in enumerate(args))
    returns = f" -> ({', '.join(results)})" if results else ""
    return f"  vm.import private @{name}({arguments}){returns}"


def _i32(value) -> bool:
    return str(value.type) == "i32"


def _const_i32(number: int):
    i32 = ir.IntegerType.get_signless(32)
    return ir.Operation.create("vm.const.i32", results=[i32],
                               attributes={"value": ir.IntegerAttr.get(i32, number)}).result


def _widen(value):
    if not _i32(value):
        return value
    return ir.Operation.create("vm.ext.i32.i64.s", results=[ir.IntegerType.get_signless(64)], operands=[value]).result


def _list(values):
    """A `!vm.list<?>` holding `values` in order, built before the insertion point."""
    list_type = ir.Type.parse(LIST)
    handle = ir.Operation.create("vm.list.alloc", results=[list_type], operands=[_const_i32(len(values))]).result
    ir.Operation.create("vm.list.resize", operands=[handle, _const_i32(len(values))])
    for index, value in enumerate(values):
        setter = _LIST_SETTERS.get(str(value.type), "vm.list.set.ref")
        ir.Operation.create(setter, operands=[handle, _const_i32(index), value])
    return handle


def _segments(op) -> list[tuple[bool, list]]:
    """(is_variadic, operands) per segment of a call's operands."""
    operands = list(op.operands)
    if "segment_sizes" not in op.attributes:
        return [(False, [value]) for value in operands]
    sizes = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["segment_sizes"])]
    types = [ir.TypeAttr(t).value for t in ir.ArrayAttr(op.attributes["segment_types"])]
    segments, at = [], 0
    for size, segment_type in zip(sizes, types):
        width = ir.TupleType(segment_type).num_types if str(segment_type).startswith("tuple<") else 1
        count = 1 if size < 0 else size * width
        segments.append((size >= 0, operands[at:at + count]))
        at += count
    if at != len(operands):
        raise HalError(StatusCode.INTERNAL, f"{_callee(op)}: segment sizes {sizes} do not cover the operands")
    return segments


def _rewrite_call(op, signatures) -> None:
    callee = _callee(op)
    yieldable = op.name.endswith("yieldable")
    with ir.InsertionPoint(op), op.location:
        operands = [_list(values) if variadic else _widen(values[0]) for variadic, values in _segments(op)]
        result_types = ([ir.TypeAttr(t).value for t in ir.ArrayAttr(op.attributes["result_types"])] if yieldable
                        else [r.type for r in op.results])
        widened = [ir.IntegerType.get_signless(64) if str(t) == "i32" else t for t in result_types]
        call = ir.Operation.create("vm.call", results=widened, operands=operands,
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
        results = [ir.Operation.create("vm.trunc.i64.i32", results=[t], operands=[r]).result if str(t) == "i32" else r
                   for t, r in zip(result_types, call.results)]
        if yieldable:
            successor = op.successors[0]
            ir.Operation.create("vm.br", operands=results, successors=[successor])
        else:
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
    signature = ([str(v.type) for v in operands], [str(t) for t in widened])
    if signatures.setdefault(callee, signature) != signature:
        raise HalError(StatusCode.INTERNAL, f"{callee} is called with two signatures: {signatures[callee]} and "
                                            f"{signature}")
    op.erase()
