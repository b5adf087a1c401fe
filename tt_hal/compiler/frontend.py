"""IREE as the front end: iree-base-compiler 3.13, in process.

`compile_to_sources` takes MLIR text (StableHLO, linalg on tensors, TOSA) through
IREE's input conversion, global optimisation, dispatch formation and stream
scheduling, and stops at the `executable-sources` phase: each dispatch is a
`hal.executable` whose body is linalg on tensors, and the host schedule is at the
stream level. `normalize` then turns named ops into `linalg.generic` and decomposes
softmax, so the lowering sees one kind of op. `compile_vmfb` is a full llvm-cpu
compile for reference runs on iree.runtime's local-task driver.

The Python API (iree.compiler.api) leaves out two C API calls the bridge needs: the
compile-to phase and callback diagnostics; both are bound here with ctypes.
See docs/dev/iree-compiler-bridge.md for what each phase gives.
"""

from __future__ import annotations

import ctypes
import os
import re

import numpy as np
from iree.compiler import ir
from iree.compiler.api import Output, Session, Source
from iree.compiler.api import ctypes_dl as _ctypes_dl
from iree.compiler.passmanager import PassManager

from hal.status import HalError, StatusCode
from tt_hal.runtime.signature import DTYPES

TARGET_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",  # "host" writes this machine's CPU into the IR
)
# Named ops -> linalg.generic, softmax -> max/sum/divide generics; on each dispatch's
# function, after dispatch formation (before it, global-opt raises generics back).
NORMALIZE = ("builtin.module(hal.executable(hal.executable.variant(builtin.module(func.func("
             "iree-codegen-decompose-softmax, linalg-generalize-named-ops, canonicalize, cse)))))")
BUFFER_NAME = "input.mlir"

_DIAGNOSTIC_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)
_SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}
_lib = _ctypes_dl._dylib
for _phase_setter in (_lib.ireeCompilerInvocationSetCompileToPhase, _lib.ireeCompilerInvocationSetCompileFromPhase):
    _phase_setter.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    _phase_setter.restype = None
_lib.ireeCompilerInvocationEnableCallbackDiagnostics.argtypes = [
    ctypes.c_void_p, ctypes.c_int, _DIAGNOSTIC_CALLBACK, ctypes.c_void_p]
_lib.ireeCompilerInvocationEnableCallbackDiagnostics.restype = None


def compile_error(code: StatusCode, what: str, diagnostics=()) -> HalError:
    """The compiler rejected the program: a HalError whose `diagnostics` holds
    (severity, "file:line:col: message") pairs as the compiler reported them, and
    whose message shows the errors among them."""
    diagnostics = list(diagnostics)
    shown = [f"{severity}: {message}" for severity, message in diagnostics if severity == "error"] or \
            [f"{severity}: {message}" for severity, message in diagnostics]
    error = HalError(code, what + "".join("\n  " + line.replace("\n", "\n  ") for line in shown))
    error.diagnostics = diagnostics
    return error


def validate(text: str, name: str = BUFFER_NAME) -> None:
    """Parses `text` in a plain context first: IREE's session context allows
    unregistered dialects, and an unknown op would crash the compiler later."""
    try:
        with ir.Context():
            ir.Module.parse(text)
    except ir.MLIRError as e:
        raise compile_error(StatusCode.INVALID_ARGUMENT, "the MLIR does not parse", [
            ("error", f"{_location(d.location, name)}: {d.message}") for d in e.error_diagnostics]) from None


def _location(location, name: str) -> str:
    """'loc("-":2:17)' -> 'name:2:17'."""
    text = str(location)
    match = re.search(r'"[^"]*":(\d+):(\d+)', text)
    return f"{name}:{match.group(1)}:{match.group(2)}" if match else text


def _invoke(text: str, phase: str | None, flags, vm_bytecode: bool, name: str = BUFFER_NAME,
            from_phase: str | None = None):
    """Runs iree-base-compiler on `text` (from `from_phase`, default the input) to
    `phase` (default: the end), returning MLIR text or, with `vm_bytecode`, the .vmfb."""
    if from_phase is None:
        validate(text, name)
    session = Session()
    try:
        session.set_flags(*flags)
        invocation = session.invocation()
        diagnostics = []

        @_DIAGNOSTIC_CALLBACK
        def on_diagnostic(severity, message, size, _user):
            diagnostics.append((_SEVERITY.get(severity, str(severity)), ctypes.string_at(message, size).decode()))

        _lib.ireeCompilerInvocationEnableCallbackDiagnostics(invocation._inv_p, 0, on_diagnostic, None)
        if phase is not None:
            _lib.ireeCompilerInvocationSetCompileToPhase(invocation._inv_p, phase.encode())
        if from_phase is not None:
            _lib.ireeCompilerInvocationSetCompileFromPhase(invocation._inv_p, from_phase.encode())
        source = Source.wrap_buffer(session, text.encode() + b"\0", buffer_name=name)
        if not invocation.parse_source(source):
            raise compile_error(StatusCode.INVALID_ARGUMENT, "the compiler could not parse the MLIR", diagnostics)
        if not invocation.execute():
            raise compile_error(StatusCode.INVALID_ARGUMENT, f"IREE could not compile the program "
                                                            f"(to {phase or 'vmfb'})", diagnostics)
        output = Output.open_membuffer()
        if vm_bytecode:
            invocation.output_vm_bytecode(output)
            result = bytes(output.map_memory())
        else:
            # Debug info keeps source locations (file:line:col) for error messages.
            result = invocation.export_module().get_asm(enable_debug_info=True)
        invocation.close()
        return result
    finally:
        session.close()


def compile_to_sources(text: str, name: str = BUFFER_NAME) -> str:
    """MLIR text at IREE's `executable-sources` phase, with source locations (in
    file `name`, as diagnostics and errors will say)."""
    return _invoke(text, "executable-sources", TARGET_FLAGS, vm_bytecode=False, name=name)


def compile_llvm_cpu(text: str) -> bytes:
    """A full llvm-cpu compile: the .vmfb iree.runtime runs on local-task."""
    return _invoke(text, None, TARGET_FLAGS, vm_bytecode=True)


def compile_phase(text: str, from_phase: str, to_phase: str | None) -> str | bytes:
    """Continues a compile: MLIR text at `from_phase` to `to_phase` (MLIR text), or to
    the end (.vmfb bytes) when `to_phase` is None."""
    return _invoke(text, to_phase, TARGET_FLAGS, vm_bytecode=to_phase is None, from_phase=from_phase)


def normalize(module: ir.Module) -> None:
    """Named ops -> linalg.generic and softmax decomposed, in every dispatch (in place)."""
    PassManager.parse(NORMALIZE).run(module.operation)


_RESOURCES = re.compile(r"\{-#\s*dialect_resources:\s*\{\s*builtin:\s*\{(.*?)\}\s*\}\s*#-\}", re.S)
_BLOB = re.compile(r'([\w.$"-]+)\s*:\s*"0x([0-9A-Fa-f]*)"')


def resource_blobs(text: str) -> dict[str, bytes]:
    """The `dense_resource` blobs of MLIR text, by name: the builtin dialect's resources
    at the end of the text (each a 4-byte alignment word, then the data). iree-turbine
    puts a model's weights there."""
    found = _RESOURCES.search(text)
    if found is None:
        return {}
    return {name.strip('"'): bytes.fromhex(data)[4:] for name, data in _BLOB.findall(found.group(1))}


def inline_resources(module: ir.Module, blobs: dict[str, bytes]) -> None:
    """Every `arith.constant dense_resource<name>` of `module` as the dense<...> constant
    it holds (in place): the Python bindings cannot read a resource's data, the
    lowering reads dense constants."""
    for op in operations(module.operation):
        if op.name != "arith.constant" or not str(op.attributes["value"]).startswith("dense_resource<"):
            continue
        attr = op.attributes["value"]
        name = str(attr)[len("dense_resource<"):].split(">")[0]
        element = str(attr.type.element_type)
        if name not in blobs or element not in DTYPES:
            continue  # left for the lowering to name
        values = np.frombuffer(blobs[name], DTYPES[element]).reshape(attr.type.shape)
        op.attributes["value"] = ir.DenseElementsAttr.get(values, type=attr.type)


# torch-mlir's value types -> builtin ones, for a declaration (torch.int is an i64 scalar).
_TORCH_DTYPES = {"f32": "f32", "f64": "f64", "f16": "f16", "bf16": "bf16", "si64": "i64", "si32": "i32",
                 "si16": "i16", "si8": "i8", "ui8": "i8", "i1": "i1"}
_TORCH_SCALARS = {"!torch.int": "i64", "!torch.float": "f64", "!torch.bool": "i1"}
_VTENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],(\w+)>")


def declared_type(type_text: str) -> str | None:
    """A source function's argument or result type as a declaration writes it:
    builtin types as they are, torch-mlir's value tensors and scalars as the builtin
    types they become (`!torch.vtensor<[?,64],f32>` -> `tensor<?x64xf32>`); None for
    another type."""
    if type_text.startswith(("tensor<", "i", "f", "bf16")):
        return type_text
    if type_text in _TORCH_SCALARS:
        return _TORCH_SCALARS[type_text]
    match = _VTENSOR.fullmatch(type_text)
    if match is None or match.group(2) not in _TORCH_DTYPES:
        return None
    dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
    shape = "x".join("?" if d in ("?", "-1") else d for d in dims)
    return f"tensor<{shape + 'x' if shape else ''}{_TORCH_DTYPES[match.group(2)]}>"


def declare_signatures(sources: str, text: str) -> str:
    """`sources` (a program at executable-sources) with an `iree.abi.declaration` for
    each public function that has none, from the types of the source function of its
    name in `text` (`name$async` too): IREE declares the functions whose ABI it wraps
    (StableHLO, linalg, TOSA), iree-turbine's wrappers declare none, and a tool that
    knows a program only as a .vmfb reads the declaration (tt_hal.runtime.signature)."""
    with ir.Context():
        source_types = {}
        for op in operations(ir.Module.parse(text).operation):
            if op.name == "func.func":
                function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
                source_types[ir.StringAttr(op.attributes["sym_name"]).value] = (
                    [declared_type(str(t)) for t in function_type.inputs],
                    [declared_type(str(t)) for t in function_type.results])
        module = ir.Module.parse(sources)
        for op in operations(module.operation):
            visibility = ir.StringAttr(op.attributes["sym_visibility"]).value \
                if op.name == "util.func" and "sym_visibility" in op.attributes else "public"
            if op.name != "util.func" or visibility != "public" or "iree.reflection" in op.attributes:
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            types = source_types.get(name.removesuffix("$async"))
            if types is None or None in types[0] + types[1]:
                continue
            arguments = ", ".join(f"%input{i}: {t}" for i, t in enumerate(types[0]))
            results = ", ".join(f"%output{i}: {t}" for i, t in enumerate(types[1]))
            declaration = f"{'async' if name.endswith('$async') else 'sync'} func @{name}({arguments}) -> ({results})"
            op.attributes["iree.reflection"] = ir.DictAttr.get(
                {"iree.abi.declaration": ir.StringAttr.get(declaration)})
        return module.operation.get_asm(enable_debug_info=True)


def operations(op):
    """Every operation nested in `op`, depth first."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from operations(inner.operation)


def read_source(source) -> tuple[str, str]:
    """(text, the name diagnostics use): a path's contents and the path, or the text as input.mlir."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and source.endswith(".mlir") and "\n" not in source):
        try:
            with open(source) as f:
                return f.read(), os.fspath(source)
        except FileNotFoundError:
            raise HalError(StatusCode.NOT_FOUND, f"no MLIR file {os.fspath(source)!r}") from None
    return source, BUFFER_NAME
