"""Tries each exported model on the project's .vmfb path: `tt_hal.compiler.vmfb.compile_vmfb`,
run by iree.runtime's VM on the simulated tenstorrent device (`tt_hal.runtime.load_vm_flatbuffer`),
against the same .mlir compiled for llvm-cpu and run on local-task, within
tt_hal.compiler.tolerance's float32 limit (the limit tests/test_compiler.py::test_vmfb uses).

Runs in the project's environment (system python), not the export virtualenv:

    python examples/models/exports/run_tt.py                 # every model
    python examples/models/exports/run_tt.py torch_mlp ...   # some
    python examples/models/exports/run_tt.py --patched       # also the workaround experiment

For a model that does not compile it prints compile_vmfb's error and then every dispatch
that has no Tensix lowering (tt_hal.compiler.dispatch.lower_export, one by one), not only
the first. `--patched` rewrites the executable-sources text of such a model with three
stand-ins for what the lowering lacks (a dispatch's `arith.constant dense_resource<...>`
as `dense<...>` from the module's resource blob; relu as `arith.cmpf ugt` + `arith.select`
as `arith.maximumf`; `math.fpowi x, 3` as `x * x * x`) and runs compile_vmfb's remaining
phases on it: what the model would measure once those are lowered. It changes no tt_hal code.

Each model's calls are the ones its export script checks (same seeds, same shapes); a
stateful model's calls run in order on one loaded module, on both sides.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import iree.runtime as rt
import numpy as np
from iree.compiler import ir

from hal import HalError
from tt_hal import runtime
from tt_hal.compiler import dispatch, frontend, tolerance, vm_rewrite
from tt_hal.compiler.vmfb import compile_vmfb, lower_dispatches, retarget
from tt_hal.target.ttx import write_executable

HERE = Path(__file__).resolve().parent
LIMIT = tolerance.TOLERANCE["float32"]


def normal(shape, seed, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) + shift).astype(np.float32)


# model -> [(function, [inputs])], as the export scripts check them.
CALLS = {
    "torch_mlp": [("main", [normal((8, 64), 0)])],
    "torch_attention": [("main", [normal((1, 16, 64), 0)])],
    "jax_mlp": [("main", [normal((8, 64), 0)])],
    "jax_attention": [("main", [normal((1, 16, 64), 0)])],
    "torch_mlp_dynamic": [("main", [normal((b, 64), i)]) for i, b in enumerate((8, 5, 33))],
    "torch_stateful": [("step", [normal((8, 64), i)]) for i in range(3)] + [("read", [])],
    "jax_control_flow": [("main", [normal((8, 64), i, s)]) for i, s in enumerate((0.5, -0.5))],
}


def results(value) -> list[np.ndarray]:
    if value is None:
        return []
    if not isinstance(value, (tuple, list)):
        value = (value,)
    return [np.asarray(v.to_host()) if hasattr(v, "to_host") else np.asarray(v) for v in value]


def llvm_cpu(text: str, calls) -> list[list[np.ndarray]]:
    """The calls' results on local-task, in order, in one context (globals persist)."""
    context = rt.SystemContext(config=rt.Config("local-task"))
    vm_module = rt.VmModule.copy_buffer(context.instance, frontend.compile_vmfb(text))
    context.add_vm_module(vm_module)
    module = context.modules[vm_module.name]
    return [results(module[name](*args)) for name, args in calls]


def dispatch_failures(text: str, name: str) -> list[str]:
    """'@export: first line of its error' for every dispatch lower_export rejects."""
    sources = frontend.compile_to_sources(text, name)
    failures = []
    with ir.Context():
        module = ir.Module.parse(sources)
        frontend.normalize(module)
        variants = [op for op in _walk(module.operation) if op.name == "hal.executable.variant"]
        for variant in variants:
            ops = list(_walk(variant))
            functions = {_symbol(op): op for op in ops if op.name == "func.func"}
            for op in ops:
                if op.name == "hal.executable.export":
                    try:
                        dispatch.lower_export(op, functions[_symbol(op)])
                    except HalError as e:
                        failures.append(f"@{_symbol(op)}: {e.code.name}; {e.message.splitlines()[0]}")
    return failures


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def patch_sources(sources: str) -> str:
    """The stand-ins of --patched, on executable-sources text (printed without locations)."""
    with ir.Context():
        sources = ir.Module.parse(sources).operation.get_asm(enable_debug_info=False)
    cut = sources.index("{-#") if "{-#" in sources else len(sources)
    blobs = dict(re.findall(r'^\s*([\w.$]+): "0x([0-9A-Fa-f]+)"', sources[cut:], re.M))
    body = re.sub(r'(?<=arith\.constant )dense_resource<([\w.$]+)>',
                  lambda m: f'dense<"0x{blobs[m.group(1)][8:]}">', sources[:cut])  # blob: 4-byte alignment, data
    body = re.sub(r'(%\w+) = arith\.cmpf ugt, (%\w+), (%\w+) : f32\n\s*(%\w+) = arith\.select \1, \2, \3 : f32',
                  r'\4 = arith.maximumf \2, \3 : f32', body)
    body = re.sub(r'%(\w+) = math\.fpowi (%\w+), %c3_i64 : f32, i64',
                  r'%cube\1 = arith.mulf \2, \2 : f32\n            %\1 = arith.mulf %cube\1, \2 : f32', body)
    while match := _MULTI_RESULT.search(body):
        end = body.index("return", match.end())  # the uses, up to the dispatch function's return
        uses = re.sub(rf'%{match.group(2)}#(\d+)', rf'%split{match.group(2)}_\1', body[match.end():end])
        body = body[:match.start()] + _split_generic(match) + uses + body[end:]
    return body + sources[cut:]


_MULTI_RESULT = re.compile(
    r'( *)%(\w+):(\d+) = linalg\.generic \{indexing_maps = \[([^\]]*)\], iterator_types = (\[[^\]]*\])\} '
    r'ins\(([^)]*) : ([^)]*)\) outs\(([^)]*) : ([^)]*)\) \{\n\s*\^bb0\(([^)]*)\):\n(.*?)\n\s*linalg\.yield ([^:]*) : '
    r'[^\n]*\n\s*\} -> \(([^)]*)\)\n', re.S)


def _split_generic(m: re.Match) -> str:
    """A linalg.generic with n results as n generics, each the whole body yielding one result
    (`%r#i` becomes `%splitr_i`)."""
    indent, name, n = m.group(1), m.group(2), int(m.group(3))
    maps, outs, out_types = (m.group(i).split(", ") for i in (4, 8, 9))
    args, yields, result_types = m.group(10).split(", "), m.group(12).strip().split(", "), m.group(13).split(", ")
    n_in = len(maps) - n
    text = ""
    for i in range(n):
        maps_i, args_i = ", ".join(maps[:n_in] + [maps[n_in + i]]), ", ".join(args[:n_in] + [args[n_in + i]])
        text += (f"{indent}%split{name}_{i} = linalg.generic {{indexing_maps = [{maps_i}], iterator_types = "
                 f"{m.group(5)}}} ins({m.group(6)} : {m.group(7)}) outs({outs[i]} : {out_types[i]}) {{\n"
                 f"{indent}^bb0({args_i}):\n{m.group(11)}\n"
                 f"{indent}  linalg.yield {yields[i]} : f32\n{indent}}} -> {result_types[i]}\n")
    return text


def compile_patched(text: str, name: str) -> bytes:
    """compile_vmfb's phases, with patch_sources applied at executable-sources."""
    sources = patch_sources(frontend.compile_to_sources(text, name))
    hal_ir = retarget(frontend.compile_phase(sources, "executable-sources", "hal"),
                      write_executable(lower_dispatches(sources)))
    return frontend.compile_phase(vm_rewrite.rewrite(frontend.compile_phase(hal_ir, "hal", "vm")), "vm", None)


def run(vmfb: bytes, calls, references) -> tuple[float, float]:
    """(max normalized error, max abs error) over every call's outputs."""
    module = runtime.load_vm_flatbuffer(vmfb, driver="tenstorrent")
    normalized = absolute = 0.0
    for (function, args), reference in zip(calls, references):
        outputs = results(module[function](*args))
        for out, ref in zip(outputs, reference, strict=True):
            normalized = max(normalized, tolerance.max_error(out, ref))
            absolute = max(absolute, float(np.abs(out.astype(np.float64) - ref).max()) if ref.size else 0.0)
    return normalized, absolute


def try_model(name: str, patched: bool) -> bool:
    path = Path(os.path.relpath(HERE / f"{name}.mlir"))  # errors name the file as given
    text, calls = path.read_text(), CALLS[name]
    print(f"## {name}")
    references = llvm_cpu(text, calls)
    start = time.perf_counter()
    try:
        vmfb = compile_vmfb(path)
    except HalError as error:
        print(f"compile_vmfb: {error.code.name}; {error.message.splitlines()[0]}")
        for line in dispatch_failures(text, str(path)):
            print(f"  {line}")
        if not patched:
            return False
        try:
            vmfb = compile_patched(text, str(path))
        except HalError as error:
            print(f"patched: still fails: {error.code.name}; {error.message.splitlines()[0]}")
            return False
        normalized, absolute = run(vmfb, calls, references)
        print(f"patched: runs; normalized error {normalized:.4f} (limit {LIMIT:.4f}), max abs error {absolute:.3g}")
        return False
    print(f"compiled in {time.perf_counter() - start:.1f} s")
    normalized, absolute = run(vmfb, calls, references)
    ok = normalized <= LIMIT
    print(f"{'pass' if ok else 'BEYOND TOLERANCE'}: normalized error {normalized:.4f} (limit {LIMIT:.4f}), "
          f"max abs error {absolute:.3g}, {len(calls)} call(s)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(CALLS), help=f"any of {', '.join(CALLS)}")
    parser.add_argument("--patched", action="store_true", help="also run the workaround experiment on failures")
    args = parser.parse_args()
    unknown = [m for m in args.models if m not in CALLS]
    if unknown:
        parser.error(f"unknown models {unknown}; expected any of {', '.join(CALLS)}")
    passed = [try_model(name, args.patched) for name in args.models]
    print(f"\n{sum(passed)} of {len(passed)} models pass on the .vmfb path")
    return 0 if all(passed) else 1


if __name__ == "__main__":
    sys.exit(main())
