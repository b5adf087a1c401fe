"""The `tt-hal` command line.

    tt-hal devices [--json]                         drivers, devices, arch presets
    tt-hal info model.vmfb|kernels.ttx|model.mlir   functions, exports, stages, circular buffers, L1 use
    tt-hal compile model.mlir -o model.vmfb
    tt-hal run model.mlir|model.vmfb [--function f] [--input a.npy ...] [--random] [--check]
    tt-hal trace model.mlir|model.vmfb|script.py -o trace.json [--graph g.png] [--chip chip.png]
    tt-hal codegen model.mlir|model.vmfb|kernels.ttx -o dir/   the TT-Metal C++ kernels, one file each, and an index
    tt-hal bench [--quick] [--only suite,...]       the bench/ suite, a table of ratios

Exit codes: 0 success; 1 `--check` found outputs beyond the tolerance (or a benchmark
suite failed); 2 bad usage or an unreadable file; 3 the program did not compile
(diagnostics or UNIMPLEMENTED on stderr; for `codegen`, a kernel with no TT-Metal C++);
4 the run failed on the device (or a traced script failed).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import runpy
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_COMPILE, EXIT_RUN = 0, 1, 2, 3, 4
GRAPH_FORMATS = (".txt", ".dot", ".png")  # what --graph writes, by the file's extension


class _Failure(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _compile(source: str) -> bytes:
    from hal.status import HalError, StatusCode
    from tt_hal import compiler
    if not os.path.isfile(source):  # a usage error, not a program that does not compile
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot read {source}: no such file")
    try:
        return compiler.compile_vmfb(source)
    except HalError as e:
        code = EXIT_USAGE if e.code == StatusCode.NOT_FOUND else EXIT_COMPILE
        raise _Failure(code, f"tt-hal: cannot compile {source}:\n{e}") from None


def _writable_directory(path: str, what: str) -> None:
    """EXIT_USAGE unless `path`'s directory exists: checked before the work, not after."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot write {what} {path}: no directory {directory!r}")


def _creatable_directory(path: str, what: str) -> None:
    """EXIT_USAGE unless `path` is a directory, or one os.makedirs can make (its nearest
    existing ancestor is a writable directory): checked before the work, not after."""
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot write {what} {path}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot write {what} {path}: {existing} is not writable")


def _write(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot write {path}: {e.strerror}") from None


def cmd_compile(args) -> int:
    output = args.output or os.path.splitext(args.source)[0] + ".vmfb"
    _writable_directory(output, "the program to")
    data = _compile(args.source)
    _write(output, data)
    print(f"wrote {output} ({len(data)} bytes)")
    return EXIT_OK


def _inputs(function, args) -> list:
    from hal.status import HalError
    if args.input and args.random:
        raise _Failure(EXIT_USAGE, "tt-hal: give --input files or --random, not both")
    signature = ", ".join(map(str, function.inputs))
    if args.random:
        from tt_hal.compiler.reference import random_inputs
        try:
            return random_inputs(function.inputs, args.seed)
        except HalError as e:
            raise _Failure(EXIT_USAGE, f"tt-hal: {function.name}({signature}): {e.message}") from None
    if len(args.input) != len(function.inputs):
        raise _Failure(EXIT_USAGE, f"tt-hal: {function.name} takes {len(function.inputs)} inputs ({signature}); "
                                   f"got {len(args.input)} --input files (or use --random)")
    arrays = []
    for index, (path, t) in enumerate(zip(args.input, function.inputs)):
        try:
            array = np.load(path)
        except (OSError, ValueError) as e:
            raise _Failure(EXIT_USAGE, f"tt-hal: cannot read {path}: {e}") from None
        if t is not None and (array.dtype != t.dtype or len(array.shape) != len(t.shape) or any(
                d is not None and d != n for d, n in zip(t.shape, array.shape))):
            hint = f" (save it as {t.dtype.name}: np.save(path, x.astype(np.{t.dtype.name})))" \
                if array.dtype != t.dtype and array.shape == tuple(d or n for d, n in zip(t.shape, array.shape)) else ""
            raise _Failure(EXIT_USAGE, f"tt-hal: {path}: {array.dtype.name}{list(array.shape)}; input {index} of "
                                       f"{function.name} is {t}{hint}")
        arrays.append(array[()] if t is not None and t.scalar else array)
    return arrays


def _set_numerics(args) -> None:
    """--numerics: the default of every simulated device this process opens (scripts' too)."""
    from hal.backend import NUMERICS_ENVIRONMENT
    if args.numerics:
        os.environ[NUMERICS_ENVIRONMENT] = args.numerics


def _load(args):
    """(module, function, input arrays) for `run` and `trace`."""
    from hal.status import HalError, StatusCode
    from tt_hal import runtime
    from tt_hal.runtime.system import open_device
    try:  # the device first: its errors are not the program's
        device = open_device(args.device)
    except HalError as e:
        code = EXIT_USAGE if e.code == StatusCode.INVALID_ARGUMENT else EXIT_RUN
        raise _Failure(code, f"tt-hal: device {args.device!r}: {e.message}") from None
    data = _compile(args.model) if args.model.endswith(".mlir") else _read(args.model)
    try:
        module = runtime.load_vm_flatbuffer(data, device=device)
    except HalError as e:
        code = EXIT_USAGE if e.code == StatusCode.INVALID_ARGUMENT else EXIT_RUN
        raise _Failure(code, f"tt-hal: cannot load {args.model}: {e.message}") from None
    names = module.function_names
    name = args.function or ("main" if "main" in names or len(names) != 1 else names[0])
    try:
        function = module[name]
    except HalError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: {e.message}") from None
    return module, function, _inputs(function, args)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot read {path}: {e.strerror}") from None


def _invoke(module, function, arrays) -> list[np.ndarray]:
    from hal.status import HalError
    try:
        results = function(*arrays)
    except HalError as e:
        raise _Failure(EXIT_RUN, f"tt-hal: {function.name} failed on {module.device}: {e}") from None
    results = () if results is None else results if isinstance(results, tuple) else (results,)
    return [np.asarray(r) for r in results]


def cmd_run(args) -> int:
    if args.check and not args.model.endswith(".mlir"):
        raise _Failure(EXIT_USAGE, f"tt-hal: --check compiles the MLIR for IREE's llvm-cpu as well: run the .mlir, "
                                   f"not {args.model}")
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            raise _Failure(EXIT_USAGE, f"tt-hal: cannot write outputs to {args.output_dir}: {e.strerror}") from None
    _set_numerics(args)
    module, function, arrays = _load(args)
    outputs = _invoke(module, function, arrays)
    for i, out in enumerate(outputs):
        print(f"output {i}: {out.dtype.name}{list(out.shape)}")
        print(np.array2string(out, threshold=args.print_elements, edgeitems=3, precision=5))
        if args.output_dir:
            try:
                np.save(os.path.join(args.output_dir, f"output{i}.npy"), out)
            except OSError as e:
                raise _Failure(EXIT_USAGE, f"tt-hal: cannot write outputs to {args.output_dir}: "
                                           f"{e.strerror}") from None
    if not args.check:
        return EXIT_OK
    from tt_hal.compiler import reference, tolerance
    from tt_hal.compiler.dispatch import FORMAT
    with open(args.model) as f:
        references = reference.run_llvm_cpu(f.read(), function.name, arrays)
    data_format = FORMAT.name  # what the .vmfb path computes in
    print(f"check against iree.runtime llvm-cpu (local-task), {data_format} tolerance "
          f"{tolerance.TOLERANCE[data_format]} (max abs error / max |reference|):")
    print(tolerance.report(outputs, references))
    try:
        tolerance.check(outputs, references, data_format)
    except AssertionError:
        print("check: FAILED", file=sys.stderr)
        return EXIT_MISMATCH
    print("check: passed")
    return EXIT_OK


def cmd_devices(args) -> int:
    from tt_hal.tools import inspection
    report = inspection.devices_report()
    print(json.dumps(report, indent=2) if args.json else inspection.format_devices(report))
    errors = [d["error"] for driver in report["drivers"] for d in [driver, *driver["devices"]] if d["error"]]
    if any(e.startswith("INVALID_ARGUMENT") for e in errors):  # e.g. TT_HAL_MODE=bogus: configuration
        return EXIT_USAGE
    return EXIT_RUN if errors else EXIT_OK


def cmd_info(args) -> int:
    from hal.status import HalError
    from tt_hal.tools import inspection
    data = _compile(args.file) if args.file.endswith(".mlir") else args.file
    try:
        report = inspection.describe_file(data, args.arch)
    except HalError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: {e.message}") from None
    if isinstance(data, bytes):
        report["file"] = args.file
    print(json.dumps(report, indent=2) if args.json else
          inspection.format_info(report, disassemble=args.disassemble, kernels=not args.no_kernels))
    return EXIT_OK


def cmd_trace(args) -> int:
    """Runs a module (or a Python script, every device of which is traced through
    TT_HAL_TRACE) with profiling on, then writes the trace and the pictures asked for."""
    from hal.device import TRACE_ENVIRONMENT
    for path in (args.output, args.graph, args.chip):  # before the run, not after it
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise _Failure(EXIT_USAGE, f"tt-hal: cannot write {path}: no directory {os.path.dirname(path)!r}")
    if args.graph and os.path.splitext(args.graph)[1] not in GRAPH_FORMATS:
        raise _Failure(EXIT_USAGE, f"tt-hal: --graph {args.graph}: the graph is written as {', '.join(GRAPH_FORMATS)}")
    if args.chip and not args.chip.endswith(".png"):
        raise _Failure(EXIT_USAGE, f"tt-hal: --chip {args.chip}: the chip picture is a .png")
    if not os.path.isfile(args.model):
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot read {args.model}: no such file")
    _set_numerics(args)
    if args.model.endswith(".py"):
        if args.graph or args.chip:
            raise _Failure(EXIT_USAGE, "tt-hal: --graph and --chip need a program (.mlir or .vmfb), not a script")
        os.environ[TRACE_ENVIRONMENT] = args.output
        sys.argv = [args.model, *args.script_args]
        try:
            runpy.run_path(args.model, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                raise _Failure(EXIT_RUN, f"tt-hal: {args.model} exited with {e.code}") from None
        except Exception:  # noqa: BLE001 - whatever the script raised: its traceback, then the run's exit code
            traceback.print_exc()
            raise _Failure(EXIT_RUN, f"tt-hal: {args.model} raised; the traces of its devices are written") from None
        finally:
            from hal.device import close_traced_devices
            close_traced_devices()
        if not os.path.exists(args.output):
            raise _Failure(EXIT_RUN, f"tt-hal: {args.model} created no tenstorrent device; nothing to trace")
    else:
        module, function, arrays = _load(args)
        device = module.device
        for _ in range(args.warmup):  # the first call compiles the simulator's numba kernels
            _invoke(module, function, arrays)
        device.begin_profiling(file_path=args.output)
        try:
            outputs = _invoke(module, function, arrays)
        finally:
            device.end_profiling()
        print(f"{function.name}: {len(outputs)} output{'s' * (len(outputs) != 1)} "
              f"({', '.join(f'{o.dtype.name}{list(o.shape)}' for o in outputs)}); traced call after "
              f"{args.warmup} untraced warm-up call{'s' * (args.warmup != 1)}")
        _write_graph(device, args.graph)
        if args.chip:
            from tt_hal.tools import pictures
            pictures.save_chip_png(device, args.chip, device.peak_memory_map(), "at peak", device.profiling_trace())
            print(f"wrote {args.chip} (the chip's L1 and DRAM use at the run's peak)")
    with open(args.output) as f:
        print(_trace_summary(json.load(f), args.output))
    return EXIT_OK


def _write_graph(device, path: str | None) -> None:
    if not path:
        return
    graph = device.submission_graph()
    if path.endswith(".png"):
        from tt_hal.tools import pictures
        pictures.save_submission_graph_png(graph, path)
    else:
        with open(path, "w") as f:
            f.write(graph.to_dot() if path.endswith(".dot") else graph.to_text() + "\n")
    print(f"wrote {path} (submission graph: {len(graph.nodes)} submissions)")


def _trace_summary(trace: dict, path: str) -> str:
    """Event counts and the dispatches that took longest, for the terminal."""
    events = [e for e in trace["traceEvents"] if e["ph"] != "M"]
    cores = {(e["pid"], e["tid"]) for e in events if e.get("cat") == "kernel"}
    kinds = collections.Counter(e.get("cat") or e["ph"] for e in events)
    commands = {}
    for e in events:
        if e.get("cat") == "command" and e["name"] not in ("wait_for_event",):
            total = commands.setdefault(e["name"], [0, 0.0])
            total[0] += 1
            total[1] += e["dur"]
    lines = [(f"wrote {path}: {len(events)} events ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
              f"{len(cores)} cores used; open it in https://ui.perfetto.dev or chrome://tracing")]
    if commands:
        lines.append("queue commands by total time (host time of the simulator, not chip time):")
        for name, (count, micros) in sorted(commands.items(), key=lambda kv: -kv[1][1])[:10]:
            lines.append(f"  {name:<28} x{count:<4} {micros / 1e3:10.3f} ms")
    return "\n".join(lines)


ROLES = {"RISCV_1": "reader", "COMPUTE": "compute", "RISCV_0": "writer"}  # TT-Metal's conventions, by processor
CORES = {"RISCV_1": "NCRISC", "COMPUTE": "TRISCs", "RISCV_0": "BRISC"}
INDEX = "index.txt"


def _executable(path: str) -> bytes:
    """The .ttx of a .mlir (compiled), a .vmfb (the one it carries) or a .ttx."""
    from tt_hal.target.ttx import FILE_IDENTIFIER
    from tt_hal.tools.inspection import embedded_executable
    data = _compile(path) if path.endswith(".mlir") else _read(path)
    if data[8:12] == FILE_IDENTIFIER:
        return data
    if data.startswith(b"PK\x03\x04"):  # a .vmfb: a zip archive around IREE's bytecode module
        executable = embedded_executable(data)
        if executable is None:
            raise _Failure(EXIT_USAGE, f"tt-hal: {path} holds no .ttx executable: it was not compiled for the "
                                       f"tenstorrent device (tt-hal compile)")
        return executable
    raise _Failure(EXIT_USAGE, f"tt-hal: {path} is neither a .mlir, a .vmfb program nor a .ttx executable")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _file_name(name: str) -> str:
    """An export's name as a directory name: what a file system takes."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name).lstrip(".")
    return safe or "export"


def cmd_codegen(args) -> int:
    """Writes the TT-Metal C++ source of every kernel of every stage of every export
    (native/codegen.py) as <dir>/<export>/stage<k>_<reader|compute|writer>.cpp, and
    <dir>/index.txt saying what each file is; exports with dynamic shapes have no
    kernels until a dispatch's push constants fix the shapes: the index says so."""
    from hal.status import HalError
    from tt_hal.native.codegen import TT_METAL_VERSION, WORKGROUP_ARGS, program_sources
    from tt_hal.target.program import ArgKind, BindingSource
    from tt_hal.target.ttx import read_executable
    output = args.output or os.path.splitext(args.file)[0] + "-kernels"
    _creatable_directory(output, "kernels to")  # before the work, not after it
    data = _executable(args.file)
    try:
        exports = read_executable(data)
    except HalError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: {args.file}: {e.message}") from None
    sources, failures, index = {}, [], []
    directories: set[str] = set()
    for ordinal, export in enumerate(exports):
        directory = _file_name(export.name)
        if directory in directories:
            directory = f"{directory}.{ordinal}"
        directories.add(directory)
        head = (f"export {ordinal} {export.name}: {export.binding_count} bindings, {export.constant_count} push "
                f"constants, workgroup size {'x'.join(map(str, export.workgroup_size))}")
        if export.dynamic:
            index += [head, "  dynamic shapes: no kernels yet; lowered for each dispatch's push constants at run time "
                            "(tt_hal/compiler/specialize.py), so there is no C++ to write", ""]
            continue
        index.append(f"{head}, {len(export.stages)} stage{'s' * (len(export.stages) != 1)}")
        for k, stage in enumerate(export.stages, 1):
            grid = "the dispatch's" if stage.workgroup_count is None else "x".join(map(str, stage.workgroup_count))
            cbs = ", ".join(f"c_{cb.index} {cb.num_pages}x{cb.page_size} B {cb.data_format.name}"
                            for cb in stage.program.circular_buffers) or "none"
            constants = "the dispatch's" if stage.constants is None else "[" + ", ".join(
                f"dispatch's {c.value}" if c.kind == ArgKind.CONSTANT else str(c.value) for c in stage.constants) + "]"
            bindings = "the dispatch's" if stage.bindings is None else "[" + ", ".join(
                f"{'binding' if source == BindingSource.DISPATCH else 'export tensor'} {i}"
                for source, i in stage.bindings) + "]"
            index.append(f"  stage {k}: workgroups {grid}; push constants {constants}; bindings {bindings}; "
                         f"circular buffers: {cbs}")
            try:
                generated = program_sources(stage.program)
            except HalError as e:
                failures.append(f"{export.name} stage {k}: {e.code.name}: {e.message}")
                index.append(f"    NOT GENERATED: {e.code.name}: {e.message}")
                continue
            for kernel, template in zip(stage.program.kernels, stage.program.runtime_args):
                processor = kernel.processor.name
                name = f"{directory}/stage{k}_{ROLES[processor]}.cpp"
                sources[name] = generated[kernel.processor]
                index.append(f"    {name}  {processor} ({CORES[processor]}) kernel {kernel.name!r}, "
                             f"{len(kernel.code)} instructions, {len(template)} runtime args of its own")
        index.append("")
    dynamic = sum(e.dynamic for e in exports)
    of = f" of {_plural(len(exports), 'export')}" + (
        f" ({dynamic} with dynamic shapes: no kernels until a dispatch fixes the shapes)" if dynamic else "")
    try:
        os.makedirs(output, exist_ok=True)
        for name, source in sources.items():
            os.makedirs(os.path.join(output, os.path.dirname(name)), exist_ok=True)
            with open(os.path.join(output, name), "w") as f:
                f.write(source)
        with open(os.path.join(output, INDEX), "w") as f:
            f.write(f"TT-Metal C++ kernels of {args.file}: {_plural(len(sources), 'kernel')}{of}; generated by "
                    f"tt-hal {_version()} (native/codegen.py) for tt-metal {TT_METAL_VERSION}.\n"
                    "Files are <export>/stage<k>_<reader|compute|writer>.cpp: the reader runs on RISCV_1 (NCRISC), "
                    "compute on the TRISCs, the writer on RISCV_0 (BRISC).\n"
                    "Each defines kernel_main(); its runtime args are its own (counted below), then the workgroup "
                    f"id and count (x, y, z: {WORKGROUP_ARGS} args), then the stage's push constants.\n\n"
                    + "\n".join(index))
    except OSError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: cannot write kernels to {output}: {e.strerror}") from None
    print(f"wrote {_plural(len(sources), 'TT-Metal C++ kernel')}{of} to {output}; what each file is: "
          f"{os.path.join(output, INDEX)}")
    if failures:
        raise _Failure(EXIT_COMPILE, f"tt-hal: {_plural(len(failures), 'stage')} of {args.file} have no TT-Metal C++ "
                                     f"(see {os.path.join(output, INDEX)}); first: {failures[0]}")
    return EXIT_OK


def bench_directory() -> Path:
    """bench/ of the source tree tt-hal runs from (benchmarks are not installed)."""
    return Path(__file__).resolve().parents[2] / "bench"


def cmd_bench(args) -> int:
    directory = bench_directory()
    if not (directory / "run_all.py").exists():
        raise _Failure(EXIT_USAGE, f"tt-hal: no bench/run_all.py beside the package ({directory}); "
                                   f"benchmarks run from a source checkout (pip install -e .)")
    # In a child interpreter: the suites set OpenBLAS's thread timeout before numpy loads
    # (bench/blas.py), and numpy is loaded here already. run_all exits 0, 1 (a suite
    # failed: EXIT_MISMATCH) or 2 (usage), as the command does.
    code = (f"import sys; sys.path.insert(0, {str(directory)!r}); import run_all; "
            f"sys.exit(run_all.main(sys.argv[1:], prog='tt-hal bench'))")
    return subprocess.run([sys.executable, "-c", code, *args.bench_args]).returncode


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("tt-hal")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tt-hal", description="Compile and run MLIR programs on a (simulated) "
                                                             "Tenstorrent device through IREE.")
    top.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    top.add_argument("--log-level", help="log the library to stderr at this level (debug, info, warning, error; "
                                         "default: $TT_HAL_LOG)")
    commands = top.add_subparsers(dest="command", required=True)

    p = commands.add_parser("compile", help="MLIR (StableHLO, linalg, TOSA, torch) -> an IREE .vmfb for the device")
    p.add_argument("source", help="the .mlir file")
    p.add_argument("-o", "--output", help="the .vmfb file (default: beside the source)")
    p.set_defaults(run=cmd_compile)

    from hal.backend import NUMERICS

    def run_options(p):
        p.add_argument("--function", help="the function to run (default: the only one, or main)")
        p.add_argument("--input", action="append", default=[], help="a .npy file per argument, in order")
        p.add_argument("--random", action="store_true",
                       help="uniform(-1, 1) inputs of the function's types (matrices scaled by sqrt(3 / rows))")
        p.add_argument("--seed", type=int, default=0, help="seed of --random (default: 0)")
        p.add_argument("--device", default="tenstorrent", help="device URI (default: tenstorrent)")
        p.add_argument("--numerics", choices=NUMERICS,
                       help="how a simulated chip computes FPU ops: fast (float32, the default) or exact (the "
                            "chip's datapath bit for bit, slower; docs/fidelity.md); a device URI's numerics= wins")

    p = commands.add_parser("run", help="run a .mlir or .vmfb on the device and print its outputs")
    p.add_argument("model", help="a .mlir file (compiled first) or a .vmfb")
    p.add_argument("--check", action="store_true",
                   help="compare with IREE's llvm-cpu result on local-task; exit 1 beyond the format's tolerance")
    p.add_argument("--output-dir", help="also save each output as outputN.npy here")
    p.add_argument("--print-elements", type=int, default=20, help="print arrays up to this size whole")
    run_options(p)
    p.set_defaults(run=cmd_run)

    p = commands.add_parser("devices", help="drivers, devices (mode, arch, grid, memory) and mock arch presets")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(run=cmd_devices)

    p = commands.add_parser("info", help="what a .vmfb program or .ttx executable holds: functions, exports, "
                                         "stages, circular buffers, L1 use, kernels")
    p.add_argument("file", help="a .vmfb, .ttx or .mlir (compiled first)")
    p.add_argument("--arch", help="lay out L1 as on this arch preset (default: wormhole_b0)")
    p.add_argument("--disassemble", action="store_true", help="also list every kernel's instructions")
    p.add_argument("--no-kernels", action="store_true", help="leave out the kernel tables")
    p.add_argument("--json", action="store_true", help="print JSON (with disassembly) instead of text")
    p.set_defaults(run=cmd_info)

    p = commands.add_parser("trace", help="run a module or Python script with profiling on and write a "
                                          "Chrome/Perfetto trace",
                            usage="tt-hal trace model.mlir|model.vmfb|script.py [options] [-- script arguments]")
    p.add_argument("model", help="a .mlir or .vmfb (run once, like `run`) or a .py script (every device traced)")
    p.add_argument("-o", "--output", default="trace.json", help="the trace file (default: trace.json)")
    p.add_argument("--graph", help="also write the submission graph: .txt, .dot or .png")
    p.add_argument("--chip", help="also draw the chip's L1 use and shard placement to this .png")
    p.add_argument("--warmup", type=int, default=1,
                   help="untraced calls first, so the trace shows the steady state and not numba compiling the "
                        "simulator's kernels (default: 1; 0 traces the first call)")
    run_options(p)
    p.set_defaults(run=cmd_trace)

    about = ("write the TT-Metal C++ kernels of a program (native/codegen.py), as the hardware backend hands them "
             "to TT-Metal: one file per kernel, <dir>/<export>/stage<k>_<reader|compute|writer>.cpp, and "
             "<dir>/index.txt saying what each is")
    p = commands.add_parser("codegen", help="write the TT-Metal C++ kernels of a program: a file per kernel, and an "
                                            "index", description=about[0].upper() + about[1:] + ".")
    p.add_argument("file", help="a .mlir (compiled first), .vmfb or .ttx")
    p.add_argument("-o", "--output", help="the directory (created; default: beside the file, <name>-kernels)")
    p.set_defaults(run=cmd_codegen)

    p = commands.add_parser("bench", add_help=False, help="run the bench/ suite side by side and print a table of "
                                                          "ratios (options: see tt-hal bench --help)")
    p.set_defaults(run=cmd_bench)  # its options are bench/run_all.py's, passed on as they are
    return top


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args = []
    if "--" in argv:  # `tt-hal trace script.py -o t.json -- script arguments`
        split = argv.index("--")
        argv, script_args = argv[:split], argv[split + 1:]
    top = parser()
    args, extra = top.parse_known_args(argv)
    args.script_args = script_args
    if args.log_level:
        from hal import log
        log.configure(args.log_level)
    if args.command == "bench":
        args.bench_args = extra
    elif extra:
        top.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.run(args)
    except _Failure as failure:
        print(failure, file=sys.stderr)
        return failure.code
    except BrokenPipeError:  # `tt-hal info x.vmfb | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
