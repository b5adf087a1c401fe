"""The `tt-hal` command line.

    tt-hal compile model.mlir -o model.ttm [--data-format bfloat16|float32]
    tt-hal run model.mlir|model.ttm [--input a.npy ...] [--random] [--check]

Exit codes: 0 success; 1 `--check` found outputs beyond the tolerance; 2 bad usage;
3 the program did not compile (diagnostics or UNIMPLEMENTED on stderr); 4 the run
failed on the device.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_COMPILE, EXIT_RUN = 0, 1, 2, 3, 4


class _Failure(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _compile(source: str, args) -> bytes:
    import compiler
    from hal.status import HalError
    try:
        return compiler.compile_module(source, data_format=args.data_format, math_fidelity=args.math_fidelity)
    except HalError as e:
        raise _Failure(EXIT_COMPILE, f"tt-hal: cannot compile {source}:\n{e}") from None


def cmd_compile(args) -> int:
    data = _compile(args.source, args)
    output = args.output or os.path.splitext(args.source)[0] + ".ttm"
    with open(output, "wb") as f:
        f.write(data)
    print(f"wrote {output} ({len(data)} bytes)")
    return EXIT_OK


def _inputs(function, args) -> list[np.ndarray]:
    if args.input and args.random:
        raise _Failure(EXIT_USAGE, "tt-hal: give --input files or --random, not both")
    if args.random:
        from compiler.reference import random_inputs
        return random_inputs(function.inputs, args.seed)
    if len(args.input) != len(function.inputs):
        raise _Failure(EXIT_USAGE, f"tt-hal: {function.name} takes {len(function.inputs)} inputs "
                                   f"({', '.join(f'{d.name}{list(s)}' for s, d in function.inputs)}); "
                                   f"got {len(args.input)} --input files (or use --random)")
    arrays = []
    for path in args.input:
        try:
            arrays.append(np.load(path))
        except (OSError, ValueError) as e:
            raise _Failure(EXIT_USAGE, f"tt-hal: cannot read {path}: {e}") from None
    return arrays


def cmd_run(args) -> int:
    import hal
    from hal.module import HalModule, read_module
    from hal.status import HalError

    data = _compile(args.model, args) if args.model.endswith(".mlir") else args.model
    try:
        record, executable, source = read_module(data)
        device = hal.create_device(args.device)
        module = HalModule(device, record, executable, source)
    except HalError as e:
        raise _Failure(EXIT_RUN, f"tt-hal: cannot load {args.model}: {e}") from None
    name = args.function or (list(module.functions)[0] if len(module.functions) == 1 else "main")
    try:
        function = module[name]
    except HalError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: {e.message}") from None
    try:
        arrays = function.check_arguments(_inputs(function, args))
    except HalError as e:
        raise _Failure(EXIT_USAGE, f"tt-hal: {e.message}") from None
    try:
        outputs = function.invoke(arrays)
    except HalError as e:
        raise _Failure(EXIT_RUN, f"tt-hal: {name} failed on {device}: {e}") from None
    for i, out in enumerate(outputs):
        print(f"output {i}: {out.dtype.name}{list(out.shape)}")
        print(np.array2string(out, threshold=args.print_elements, edgeitems=3, precision=5))
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            np.save(os.path.join(args.output_dir, f"output{i}.npy"), out)
    if not args.check:
        return EXIT_OK
    if source is None:
        raise _Failure(EXIT_USAGE, f"tt-hal: {args.model} carries no MLIR source to check against")
    from compiler import reference, tolerance
    references = reference.run_llvm_cpu(source, name, arrays)
    data_format = record["data_format"]
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


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tt-hal", description="Compile and run MLIR programs on a (simulated) "
                                                             "Tenstorrent device through IREE.")
    commands = top.add_subparsers(dest="command", required=True)

    def compile_options(p):
        p.add_argument("--data-format", default="bfloat16", choices=("bfloat16", "float32"),
                       help="how tensors live on the device (default: bfloat16)")
        p.add_argument("--math-fidelity", default="HiFi4", choices=("LoFi", "HiFi2", "HiFi3", "HiFi4"),
                       help="matmul fidelity phases (default: HiFi4)")

    p = commands.add_parser("compile", help="MLIR (StableHLO, linalg, TOSA) -> a .ttm module")
    p.add_argument("source", help="the .mlir file")
    p.add_argument("-o", "--output", help="the .ttm file (default: beside the source)")
    compile_options(p)
    p.set_defaults(run=cmd_compile)

    p = commands.add_parser("run", help="run a .mlir or .ttm on the device and print its outputs")
    p.add_argument("model", help="a .mlir file (compiled first) or a .ttm module")
    p.add_argument("--function", help="the function to run (default: the only one, or main)")
    p.add_argument("--input", action="append", default=[], help="a .npy file per argument, in order")
    p.add_argument("--random", action="store_true",
                   help="uniform(-1, 1) inputs of the function's types (matrices scaled by sqrt(3 / rows))")
    p.add_argument("--seed", type=int, default=0, help="seed of --random (default: 0)")
    p.add_argument("--check", action="store_true",
                   help="compare with IREE's llvm-cpu result on local-task; exit 1 beyond the format's tolerance")
    p.add_argument("--device", default="tenstorrent", help="device URI (default: tenstorrent)")
    p.add_argument("--output-dir", help="also save each output as outputN.npy here")
    p.add_argument("--print-elements", type=int, default=20, help="print arrays up to this size whole")
    compile_options(p)
    p.set_defaults(run=cmd_run)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except _Failure as failure:
        print(failure, file=sys.stderr)
        return failure.code


if __name__ == "__main__":
    sys.exit(main())
