"""Spike: compile MLIR in process with iree-base-compiler 3.13 and walk the result.

Run: python docs/dev/examples/iree_bridge_spike.py docs/dev/examples/mlp.mlir
Needs: pip install "iree-base-compiler==3.13.*"  (iree-base-runtime 3.13.0 for --run)
Not production code: the reference for docs/dev/iree-compiler-bridge.md.
"""
import ctypes
import re
import sys

from iree.compiler import ir
from iree.compiler.api import Output, Session, Source
from iree.compiler.api import ctypes_dl as _cdl
from iree.compiler.passmanager import PassManager

# --- 1. in-process compile ------------------------------------------------------------
# The Python wrapper (iree.compiler.api) does not expose SetCompileToPhase or callback
# diagnostics; both are exported by libIREECompiler.so, so bind them with ctypes.
_DIAG_CB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)
_SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}
_lib = _cdl._dylib  # loaded when iree.compiler.api is imported
_lib.ireeCompilerInvocationSetCompileToPhase.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_lib.ireeCompilerInvocationSetCompileToPhase.restype = None
_lib.ireeCompilerInvocationEnableCallbackDiagnostics.argtypes = [
    ctypes.c_void_p, ctypes.c_int, _DIAG_CB, ctypes.c_void_p]
_lib.ireeCompilerInvocationEnableCallbackDiagnostics.restype = None

FLAGS = ("--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=generic")


class CompileError(Exception):
    def __init__(self, what, diagnostics):
        super().__init__(what + "".join(f"\n{s}: {m}" for s, m in diagnostics))
        self.diagnostics = diagnostics  # [(severity, "file:line:col: message ...")]


def compile_mlir(text, compile_to="executable-sources", flags=FLAGS, output="text"):
    """output: "text" -> str, "vmfb" -> bytes (use compile_to="end")."""
    # Guard: an unregistered op ("foo.bar") segfaults the compiler (the session context
    # allows unregistered dialects). A plain ir.Context rejects it with an MLIRError.
    with ir.Context():
        ir.Module.parse(text)
    session = Session()
    session.set_flags(*flags)
    inv = session.invocation()
    diags = []

    @_DIAG_CB
    def on_diag(severity, msg, size, _user):
        diags.append((_SEVERITY.get(severity, str(severity)), ctypes.string_at(msg, size).decode()))

    _lib.ireeCompilerInvocationEnableCallbackDiagnostics(inv._inv_p, 0, on_diag, None)
    if compile_to != "end":
        _lib.ireeCompilerInvocationSetCompileToPhase(inv._inv_p, compile_to.encode())
    if not inv.parse_source(Source.wrap_buffer(session, text.encode() + b"\0", buffer_name="input.mlir")):
        raise CompileError("parse failed", diags)
    if not inv.execute():
        raise CompileError(f"compile to {compile_to} failed", diags)
    out = Output.open_membuffer()
    (inv.output_vm_bytecode if output == "vmfb" else inv.output_ir)(out)
    data = bytes(out.map_memory())
    inv.close()
    session.close()
    return data if output == "vmfb" else data.decode()


# --- 2. normalize dispatch bodies: named ops -> linalg.generic, softmax decomposed --------
NORMALIZE = ("builtin.module(hal.executable(hal.executable.variant(builtin.module(func.func("
             "iree-codegen-decompose-softmax, linalg-generalize-named-ops, canonicalize, cse)))))")


# --- 3. walk -------------------------------------------------------------------------------
def children(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation


def walk(op, fn):
    fn(op)
    for c in children(op):
        walk(c, fn)


def const(v):
    """Python value of an SSA value produced by arith.constant, else None."""
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)) and owner.operation.name == "arith.constant":
        a = owner.operation.attributes["value"]
        return a.value if isinstance(a, (ir.IntegerAttr, ir.FloatAttr)) else str(a)
    return None


def ttype(t):
    if isinstance(t, ir.RankedTensorType):  # value types come back already downcast
        return f"{t.element_type}{['?' if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]}"
    return str(t)


def amap(attr):  # AffineMapAttr -> "(d0, d1) -> (d1)"
    m = attr.value
    res = [f"d{e.position}" if isinstance(e, ir.AffineDimExpr) else str(e) for e in m.results]
    return f"({', '.join(f'd{i}' for i in range(m.n_dims))}) -> ({', '.join(res)})"


def linalg_op(op):
    n_in, n_out = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
    ops = list(op.operands)
    lines = [f"    {op.name} ins={[ttype(v.type) for v in ops[:n_in]]} outs={[ttype(v.type) for v in ops[n_in:]]}"]
    if "indexing_maps" in op.attributes:
        lines.append(f"      maps={[amap(a) for a in op.attributes['indexing_maps']]}")
    if "iterator_types" in op.attributes:  # ArrayAttr of #linalg.iterator_type<...>: parse str
        its = [re.search(r"<(\w+)>", str(a)).group(1) for a in op.attributes["iterator_types"]]
        lines.append(f"      iterators={its}")
    if op.regions and op.name == "linalg.generic":
        for b in op.regions[0].blocks[0].operations:
            args = [f"arg{v.arg_number}" if isinstance(v, ir.BlockArgument)
                    else repr(const(v)) if const(v) is not None else v.get_name() for v in b.operands]
            lines.append(f"      {b.result.get_name() + ' = ' if len(b.results) == 1 else ''}"
                         f"{b.name}({', '.join(args)})")
    return lines


def dispatches(module):
    lines = []
    for exe in module.body.operations:
        if exe.operation.name != "hal.executable":
            continue
        for variant in children(exe.operation):
            for o in children(variant):
                if o.name == "hal.executable.export":
                    n_workload = len(o.regions[0].blocks[0].arguments) - 1  # arg0 is the !hal.device
                    lines.append(f"export @{o.opview.sym_name.value} ordinal={o.opview.ordinal.value} "
                                 f"workload={n_workload}")
                elif o.name == "builtin.module":
                    def visit(x):
                        if x.name == "hal.interface.binding.subspan":
                            s = x.opview
                            ro = "ro" if s.descriptor_flags.value & 1 else "rw"  # 1=ReadOnly, 2=Indirect
                            lines.append(f"  binding({s.binding.value}) {ro} offset={const(s.byte_offset)} : "
                                         f"{x.results[0].type}")
                        elif x.name == "hal.interface.constant.load":
                            lines.append(f"  push_constant[{x.opview.ordinal.value}] : {x.results[0].type}")
                        elif x.name.startswith("linalg.") and x.name != "linalg.yield" \
                                and not x.parent.name.startswith("linalg."):
                            lines.extend(linalg_op(x))
                        elif x.name.startswith("iree_linalg_ext."):
                            lines.append(f"    UNSUPPORTED {x.name} at {x.location}")
                    walk(o, visit)
    return lines


def host_schedule(module):
    lines = []
    for f in module.body.operations:
        f = f.operation
        if f.name != "util.func" or "iree.abi.stub" not in f.attributes:
            continue  # public ABI entry points carry iree.abi.stub
        lines.append(f"util.func @{f.attributes['sym_name'].value}")

        def visit(x, depth):
            pad = "  " * depth
            if x.name == "stream.cmd.dispatch":
                d = x.opview
                acc = {1: "ro", 2: "wo", 3: "rw"}
                b = [f"{acc[a.value]} {r.get_name()}[{const(o) if const(o) is not None else o.get_name()} for "
                     f"{const(n) if const(n) is not None else n.get_name()}]"
                     for a, r, o, n in zip(x.attributes["resource_accesses"], d.resources, d.resource_offsets,
                                           d.resource_lengths)]
                lines.append(f"{pad}dispatch {x.attributes['entry_points'][0]} "
                             f"workload={[w.get_name() for w in d.workload]} "
                             f"push={[u.get_name() for u in d.uniform_operands]} {b}")
                return
            if x.name.startswith(("stream.", "hal.", "util.")) and x.name != "stream.yield":
                lines.append(f"{pad}{', '.join(r.get_name() for r in x.results)}{' = ' if len(x.results) else ''}"
                             f"{x.name}({', '.join(v.get_name() for v in x.operands)})")
            for c in children(x):
                visit(c, depth + 1)

        for c in children(f):
            visit(c, 1)
    return lines


if __name__ == "__main__":
    text = compile_mlir(open(sys.argv[1]).read())
    with ir.Context():  # iree.compiler.ir's Context has every IREE dialect and pass registered
        module = ir.Module.parse(text)
        PassManager.parse(NORMALIZE).run(module.operation)
        print("\n".join(dispatches(module)))
        print("\n".join(host_schedule(module)))
