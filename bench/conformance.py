"""Conformance: IREE's own e2e op tests (tests/e2e/{stablehlo_ops,tosa_ops,linalg,linalg_ext_ops}/*.mlir)
compiled with tt_hal.compiler.compile_vmfb and run on the simulated tenstorrent device, each result
compared with IREE's llvm-cpu build of the same program on iree.runtime local-task.

    python bench/conformance.py [--suite stablehlo_ops ...] [--filter add] [--jobs 2] [--timeout 120]
                                [--iree /work/.mirror/iree-org+iree/repo] [--json out.json]

A test is one `func.func @name()` of a file: public, no arguments, its inputs built in its body
(util.unfoldable_constant, which stays: it keeps IREE from folding the test away) and its results
checked with IREE's `check` ops, which our runtime has no module for. The rewrite rule, applied to
each test on its own (a module of that function and the file's private helpers):
- every check op in the function's body is removed and the values it checks become the function's
  results, in order: `expect_eq_const(%x, dense<...>)` and `expect_almost_eq_const` give %x,
  `expect_eq(%a, %b)` and `expect_almost_eq(%a, %b)` give %a and %b, `expect_true(%x)` and
  `expect_false(%x)` give %x;
- check ops nested in regions (tosa.cond_if's branches assert which branch ran) are removed and not
  returned: only one branch runs, and the value the branches yield is checked after them anyway;
- the function (public: private functions are the file's helpers) returns those values; for the
  reference only, a function @conformance_expected returns the file's constants (the dense<...> of
  the *_const checks), so that IREE itself turns them into arrays of the checked types.

Each test then, in a worker process, with a time limit (--timeout, default 120 s, for all of it):
1. reference: the program with @conformance_expected compiled for llvm-cpu and run on local-task;
   its results must satisfy the file's own checks, as IREE's check module defines them (eq: equal;
   almost_eq: |x - expected| <= atol + rtol |expected| with the op's atol, rtol, default 1e-4 and 0;
   true/false: nonzero/zero). If IREE cannot compile the file, or its results fail the checks, the
   test is "skipped (reference)": it says nothing about tt-hal.
2. ours: compile_vmfb, load_vm_flatbuffer(driver="tenstorrent"), call; the results compared with the
   reference's by tt_hal.compiler.tolerance.check(outputs, references, "float32"): floats within
   15 * 2^-8 of the output's scale (max |out - ref| / max |ref|, as for the example models),
   integers and booleans equal; complex results compare as their real and imaginary parts.
Outcomes: pass; wrong (runs, results differ); unimplemented (HalError UNIMPLEMENTED: no Tensix
lowering, at compile time or, for a dispatch of dynamic shapes lowered per call, at the call);
rejected (another HalError from compile_vmfb, e.g. INVALID_ARGUMENT, except INTERNAL: the bridge
failing is a crash); crash (any other exception, or the worker process died); timeout; skipped (the
reference, or the rewrite, failed). Unimplemented tests are counted by blocker (the first one the
lowering meets: a test may have more): the error's first clause without its source location and
sizes ("arith.remf in the body of a linalg.generic has no
Tensix lowering yet", "iree_tensor_ext.dispatch.tensor.load on i32").

The report: a markdown table per suite, the top blockers, every wrong result, crash and timeout;
--json writes every test's outcome. The exit code is 0 unless the script itself fails.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib.metadata
import json
import multiprocessing
import os
import queue
import re
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from iree.compiler import ir  # noqa: E402
from iree.compiler.dialects import arith, func  # noqa: E402

from hal.status import HalError, StatusCode  # noqa: E402
from tt_hal import compiler, runtime  # noqa: E402
from tt_hal.compiler import frontend, reference, tolerance  # noqa: E402

SUITES = ("stablehlo_ops", "tosa_ops", "linalg", "linalg_ext_ops")
DEFAULT_IREE = Path("/work/.mirror/iree-org+iree/repo")  # a bare git mirror of github.com/iree-org/iree
OUTCOMES = ("pass", "wrong", "unimplemented", "rejected", "crash", "timeout", "skipped")
DATA_FORMAT = "float32"  # what the .vmfb path computes in
TIMEOUT_SECONDS = 120
WARM_UP_SECONDS = 600  # a worker's first program: numba compiles the simulator (~1 min) unless cached
EXPECTED_FUNCTION = "conformance_expected"
TOP_BLOCKERS = 15
DETAIL_CHARS = 4000  # of an error's text kept in the JSON
# One program through both paths, run by each worker before its first test, so that numba's
# compile of the simulator does not count against a test's time limit.
WARM_UP = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
TEST_NAME = re.compile(r"^\s*func\.func\s+(?:public\s+)?@([\w$.]+)\s*\(\s*\)", re.M)


# ---- The test files ----

class IreeTests:
    """The e2e test files of IREE: a checkout (its tests/e2e directory) or a git directory, read at HEAD."""

    def __init__(self, path: Path):
        self.path = path
        self.is_checkout = (path / "tests" / "e2e").is_dir()

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True,
                              text=True).stdout

    def files(self, suite: str) -> list[str]:
        """The suite's .mlir files as paths relative to the repository, sorted."""
        folder = f"tests/e2e/{suite}"
        if self.is_checkout:
            names = [str(p.relative_to(self.path)) for p in (self.path / folder).glob("*.mlir")]
        else:
            names = self._git("ls-tree", "--name-only", "HEAD", f"{folder}/").split()
        return sorted(n for n in names if n.endswith(".mlir"))

    def read(self, name: str) -> str:
        return (self.path / name).read_text() if self.is_checkout else self._git("show", f"HEAD:{name}")


def git_commit(path: Path) -> str | None:
    """The commit at HEAD of the repository at `path` and its date, or None (no git history)."""
    try:
        return subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%H (%cs)", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


# ---- The rewrite: check ops -> results ----

@dataclasses.dataclass
class Check:
    """One check op of a test, as the reference must satisfy it."""

    op: str  # "expect_eq_const", "expect_almost_eq", "expect_true", ...
    results: list[int]  # the indices of the values it checks among the test function's results
    constant: int | None = None  # its constant's index among @conformance_expected's results (*_const)
    atol: float = 0.0
    rtol: float = 0.0


@dataclasses.dataclass
class Test:
    suite: str
    file: str  # relative to the suite, e.g. "add.mlir"
    name: str
    program: str = ""  # the test function (public, returning the checked values) and the file's helpers
    reference_program: str = ""  # program and @conformance_expected
    checks: list[Check] = dataclasses.field(default_factory=list)
    nested_checks: int = 0  # check ops inside regions, removed and not returned
    error: str = ""  # why the rewrite failed: the test is then skipped


class RewriteError(Exception):
    pass


def is_test(op) -> bool:
    """A test function: a public func.func without arguments."""
    if op.name != "func.func":
        return False
    visibility = op.attributes["sym_visibility"].value if "sym_visibility" in op.attributes else "public"
    return visibility == "public" and not ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs


def symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def rewrite_file(suite: str, file: str, text: str) -> list[Test]:
    """The file's tests, each rewritten into programs of its own (see the module docstring)."""
    with ir.Context(), ir.Location.unknown():
        try:
            names = [symbol(op.operation) for op in ir.Module.parse(text).body.operations if is_test(op.operation)]
        except ir.MLIRError as error:
            # IREE's tests at the mirror's HEAD and the installed iree-base-compiler can disagree on an
            # op's syntax: llvm-cpu cannot compile the file either.
            reason = f"iree-base-compiler does not parse the file: {error.error_diagnostics[0].message}" \
                if error.error_diagnostics else f"iree-base-compiler does not parse the file: {error}"
            return [Test(suite, file, name, error=reason) for name in TEST_NAME.findall(text) or ["(file)"]]
        tests = []
        for name in names:
            test = Test(suite, file, name)
            try:
                rewrite_test(test, ir.Module.parse(text))  # a fresh module: the other tests are erased from it
            except RewriteError as error:
                test.error = f"rewrite: {error}"
            tests.append(test)
        return tests


def rewrite_test(test: Test, module: ir.Module) -> None:
    """Fills in test.program, reference_program, checks and nested_checks from the file's module."""
    function = None
    for op in list(module.body.operations):
        op = op.operation
        if is_test(op) and symbol(op) != test.name:
            op.erase()
        elif is_test(op):
            function = op
    returns = [op for op in frontend.operations(function) if op.name == "func.return"]
    if len(returns) != 1:
        raise RewriteError(f"{len(returns)} func.return ops: the checked values need one")
    values, constants = [], []
    for block in function.regions[0].blocks:
        block_checks = [op.operation for op in block.operations if op.operation.name.startswith("check.")]
        if block_checks and block.operations[-1].operation.name != "func.return":
            raise RewriteError("check ops in a block that does not return")
        for op in block_checks:
            test.checks.append(read_check(op, values, constants))
    all_checks = [op for op in frontend.operations(function) if op.name.startswith("check.")]
    test.nested_checks = len(all_checks) - len(test.checks)
    with ir.InsertionPoint(returns[0]):
        func.ReturnOp(values, loc=returns[0].location)
    returns[0].erase()
    for op in all_checks:
        op.erase()
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], [v.type for v in values]))
    test.program = source_text(module, test.file)
    with ir.InsertionPoint(module.body):
        expected = func.FuncOp(EXPECTED_FUNCTION, ([], [c.type for c in constants]), visibility="public")
    with ir.InsertionPoint(expected.add_entry_block()):
        func.ReturnOp([arith.ConstantOp(c.type, c).result for c in constants])
    test.reference_program = source_text(module, test.file)


def read_check(op, values: list, constants: list) -> Check:
    """The Check of a check op; appends the values it checks to `values` and its constant to `constants`."""
    kind = op.name.removeprefix("check.")
    tolerances = {name: ir.FloatAttr(op.attributes[name]).value for name in ("atol", "rtol") if name in op.attributes}
    first = len(values)
    if kind in ("expect_eq_const", "expect_almost_eq_const"):
        values.append(op.operands[0])
        constants.append(op.attributes["value"])
        return Check(kind, [first], constant=len(constants) - 1, **tolerances)
    if kind in ("expect_eq", "expect_almost_eq"):
        values.extend(op.operands[:2])
        return Check(kind, [first, first + 1], **tolerances)
    if kind in ("expect_true", "expect_false"):
        values.append(op.operands[0])
        return Check(kind, [first])
    raise RewriteError(f"check.{kind} is not a check op the rewrite knows")


def source_text(module: ir.Module, file: str) -> str:
    """The module with source locations, naming the test file: errors then point at IREE's lines."""
    return module.operation.get_asm(enable_debug_info=True).replace('loc("-":', f'loc("{file}":')


# ---- One test, in a worker process ----

def outcome(test: Test, kind: str, phase: str, message: str = "", detail: str = "") -> dict:
    return {"suite": test.suite, "file": test.file, "test": test.name, "outcome": kind, "phase": phase,
            "message": message, "detail": detail[:DETAIL_CHARS], "seconds": 0.0,
            "results": sum(len(c.results) for c in test.checks), "nested_checks": test.nested_checks}


def headline(text: str) -> str:
    """An error's first line, and its first compiler error line when the first line is generic."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if not lines:
        return ""
    errors = [line for line in lines[1:] if line.startswith("error:")]
    return f"{lines[0]} {errors[0]}" if errors else lines[0]


def numbers(array) -> np.ndarray:
    """An array in a type numpy compares exactly: integers and booleans as they are, floats (f16,
    bf16 too) as float64, complex as complex128."""
    array = np.asarray(array)
    if array.dtype.kind in "biu":
        return array
    return array.astype(np.complex128 if np.iscomplexobj(array) else np.float64)


def satisfies(check: Check, results: list[np.ndarray], constants: list[np.ndarray]) -> bool:
    """Whether the reference's results pass the check as IREE's check module runs it."""
    value = numbers(results[check.results[0]])
    if check.op in ("expect_true", "expect_false"):
        return bool(np.all(value != 0)) == (check.op == "expect_true")
    expected = numbers(constants[check.constant] if check.constant is not None else results[check.results[1]])
    if value.shape != expected.shape:
        return False
    if check.op in ("expect_eq", "expect_eq_const"):
        return bool(np.array_equal(value, expected, equal_nan=value.dtype.kind not in "biu"))
    close = (value == expected) | (np.isfinite(expected) & (np.abs(value - expected) <= check.atol +
                                                             check.rtol * np.abs(expected)))
    return bool(np.all(close))


def real_parts(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Complex arrays as their real and imaginary parts (tolerance.check compares real numbers)."""
    parts = []
    for array in arrays:
        array = np.asarray(array)
        parts.extend([array.real, array.imag] if np.iscomplexobj(array) else [array])
    return parts


def run_test(test: Test, on_phase=lambda phase: None) -> dict:
    """The outcome of one rewritten test: reference, our compile, our run, the comparison.
    `on_phase(name)` is told each phase as it starts: a timeout then says where the test was."""
    on_phase("reference")
    try:
        cpu = reference.load_module(test.reference_program)
        expected = reference.host_results(cpu[test.name]())
        constants = reference.host_results(cpu[EXPECTED_FUNCTION]())
    except Exception as error:  # whatever stops the reference skips the test
        return outcome(test, "skipped", "reference", f"llvm-cpu: {headline(error)}", str(error))
    failed = [c for c in test.checks if not satisfies(c, expected, constants)]
    if failed:
        return outcome(test, "skipped", "reference", f"llvm-cpu's results fail the file's {failed[0].op} "
                                                     f"(results {failed[0].results})")
    on_phase("compile")
    try:
        vmfb = compiler.compile_vmfb(test.program)
    except HalError as error:
        # INTERNAL is the bridge failing on a program it accepted: a bug, as a crash is.
        kind = {StatusCode.UNIMPLEMENTED: "unimplemented", StatusCode.INTERNAL: "crash"}.get(error.code, "rejected")
        return outcome(test, kind, "compile", f"{error.code.name}: {headline(error.message)}", error.message)
    except Exception as error:
        return outcome(test, "crash", "compile", f"{type(error).__name__}: {headline(error)}", traceback.format_exc())
    phase = "load"
    on_phase(phase)
    try:
        module = runtime.load_vm_flatbuffer(vmfb, driver="tenstorrent")
        phase = "run"
        on_phase(phase)
        outputs = reference.host_results(module[test.name]())
    except HalError as error:
        # A dispatch of dynamic shapes is lowered at the call: its missing lowering is UNIMPLEMENTED then.
        kind = "unimplemented" if error.code == StatusCode.UNIMPLEMENTED else "crash"
        return outcome(test, kind, phase, f"{error.code.name}: {headline(error.message)}", traceback.format_exc())
    except Exception as error:
        return outcome(test, "crash", phase, f"{type(error).__name__}: {headline(error)}", traceback.format_exc())
    on_phase("compare")
    try:
        tolerance.check(real_parts(outputs), real_parts(expected), DATA_FORMAT)
    except AssertionError as error:
        return outcome(test, "wrong", "compare", headline(error), str(error))
    return outcome(test, "pass", "compare")


def warm_up() -> str:
    """Runs WARM_UP through both paths; "" or what failed (the tests will then say more)."""
    try:
        inputs = [np.arange(4, dtype=np.float32)] * 2
        reference.host_results(reference.load_module(WARM_UP)["main"](*inputs))
        module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(WARM_UP), driver="tenstorrent")
        reference.host_results(module["main"](*inputs))
        return ""
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def serve(connection) -> None:
    """A worker process: warms up, then runs the tests it receives until it receives None. For each
    it sends the name of each phase as it starts (str), then the outcome (dict)."""
    os.dup2(2, 1)  # anything the compiler or simulator prints goes to stderr: stdout is the report
    connection.send(warm_up())
    while (test := connection.recv()) is not None:
        connection.send(run_test(test, on_phase=connection.send))


class Worker:
    """A process that runs tests one at a time. A test that outlives its time limit, or a crash
    (which may leave the device in a bad state), gets the process killed and a new one started."""

    def __init__(self, context):
        self.context = context
        self.start()

    def start(self) -> None:
        self.connection, child = self.context.Pipe()
        self.process = self.context.Process(target=serve, args=(child,), daemon=True)
        self.process.start()
        child.close()  # only the child holds its end: its death then reads as end of file here
        if not self.connection.poll(WARM_UP_SECONDS):
            self.kill()
            raise RuntimeError(f"a worker did not warm up in {WARM_UP_SECONDS} s")
        failure = self.connection.recv()
        if failure:
            print(f"warning: a worker's warm-up failed: {failure}", file=sys.stderr)

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()

    def stop(self) -> None:
        try:
            self.connection.send(None)
            self.process.join(10)
        except (BrokenPipeError, OSError):
            pass
        if self.process.is_alive():
            self.kill()

    def run(self, test: Test, timeout: float) -> dict:
        self.connection.send(test)
        deadline = time.monotonic() + timeout
        phase = "reference"
        try:
            while self.connection.poll(max(0.0, deadline - time.monotonic())):
                message = self.connection.recv()
                if isinstance(message, str):
                    phase = message
                    continue
                if message["outcome"] == "crash":
                    self.stop()
                    self.start()
                return message
        except EOFError:
            self.process.join()
            code = self.process.exitcode
            self.connection.close()
            self.start()
            return outcome(test, "crash", phase, f"the worker process died (exit code {code})")
        self.kill()
        self.start()
        return outcome(test, "timeout", phase, f"no result in {timeout:g} s")


def run_all(tests: list[Test], jobs: int, timeout: float) -> list[dict]:
    """Every test's outcome, in the order of `tests`; `jobs` workers take the tests in turn."""
    outcomes: list[dict | None] = [None] * len(tests)
    pending = queue.Queue()
    for index, test in enumerate(tests):
        if test.error:
            outcomes[index] = outcome(test, "skipped", "rewrite" if test.error.startswith("rewrite") else "reference",
                                      test.error)
        else:
            pending.put(index)
    finished = 0
    lock = threading.Lock()
    # spawn, not fork: the parent has IREE's compiler loaded, whose threads a fork would not copy.
    context = multiprocessing.get_context("spawn")

    def report_progress(index: int) -> None:
        nonlocal finished
        result = outcomes[index]
        with lock:
            finished += 1
            print(f"[{finished}/{pending_count}] {result['suite']}/{result['file']} @{result['test']}: "
                  f"{result['outcome']} ({result['seconds']:.1f} s) {result['message'][:160]}", file=sys.stderr,
                  flush=True)

    def drive() -> None:
        worker = Worker(context)
        try:
            while True:
                try:
                    index = pending.get_nowait()
                except queue.Empty:
                    return
                started = time.perf_counter()
                outcomes[index] = worker.run(tests[index], timeout)
                outcomes[index]["seconds"] = time.perf_counter() - started
                report_progress(index)
        finally:
            worker.stop()

    pending_count = pending.qsize()
    threads = [threading.Thread(target=drive) for _ in range(min(jobs, pending_count))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    missing = [f"{t.suite}/{t.file} @{t.name}" for t, o in zip(tests, outcomes) if o is None]
    if missing:
        raise RuntimeError(f"{len(missing)} tests have no outcome (a worker failed to start?): {missing[:5]}")
    return outcomes


# ---- The report ----

def blocker(message: str) -> str:
    """What an unimplemented test is blocked by, for counting: the error's first clause without the
    status code, source location and sizes. "UNIMPLEMENTED: remainder.mlir:5:13: arith.remf in the body
    of a linalg.generic has no Tensix lowering yet (supported: ...)" -> "arith.remf in the body of a
    linalg.generic has no Tensix lowering yet"."""
    text = re.sub(r"^(?:UNIMPLEMENTED: )+", "", message)
    text = re.sub(r"^(?:[\w./<>-]+:\d+:\d+: )+", "", text)  # source locations
    # Maps and shapes first: they hold " (", where the first clause would otherwise end.
    text = re.sub(r"affine_map<\(.*?\) -> \(.*?\)>", "affine_map<...>", text)
    text = re.sub(r"\(\d+(?:, \d+)*,?\)", "(...)", text)  # device shapes
    text = re.sub(r"tensor<[\d?x]+x", "tensor<...x", text)  # shapes, keeping the element type
    text = re.split(r": | \((?!\.\.\.\))", text, maxsplit=1)[0]  # the first clause: what, not why
    return re.sub(r"\b\d+\b", "N", text)  # dims and counts


def summarize(outcomes: list[dict], suites: list[str]) -> dict:
    counts = {suite: collections.Counter({kind: 0 for kind in OUTCOMES}) for suite in suites
              if any(r["suite"] == suite for r in outcomes)}  # the suites --filter left tests of
    for result in outcomes:
        counts[result["suite"]][result["outcome"]] += 1
    blockers = collections.Counter(blocker(r["message"]) for r in outcomes if r["outcome"] == "unimplemented")
    return {"counts": {suite: dict(c) for suite, c in counts.items()},
            "blockers": [{"count": n, "blocker": b} for b, n in blockers.most_common()]}


def markdown(outcomes: list[dict], summary: dict, facts: dict) -> str:
    lines = [f"IREE e2e op tests ({facts['iree']}, commit {facts['iree_commit']}) on tt-hal's simulated "
             f"tenstorrent device (tt-hal commit {facts['tt_hal_commit']}) vs IREE llvm-cpu (iree-base-compiler "
             f"{facts['iree_compiler']}); tolerance {DATA_FORMAT}; wall time {facts['wall_seconds']:.0f} s", "",
             "| suite | tests | pass | wrong | unimplemented | rejected | crash | timeout | skipped (reference) "
             "| pass / tests with a reference |", "|---|" + "---:|" * 9]
    rows = list(summary["counts"].items())
    totals = sum((collections.Counter(counts) for _, counts in rows), collections.Counter())
    for suite, counts in rows + ([("total", totals)] if len(rows) > 1 else []):
        tests = sum(counts[k] for k in OUTCOMES)
        runnable = tests - counts["skipped"]
        cells = [str(counts[k]) for k in OUTCOMES]
        lines.append(f"| {suite} | {tests} | " + " | ".join(cells) + f" | {counts['pass']}/{runnable} |")
    lines += ["", f"Top {TOP_BLOCKERS} blockers (unimplemented tests by the first op or construct without a "
                  f"Tensix lowering):", "", "| tests | blocker |", "|---:|---|"]
    lines += [f"| {b['count']} | {b['blocker']} |" for b in summary["blockers"][:TOP_BLOCKERS]]
    for kind, title in (("wrong", "Wrong results"), ("crash", "Crashes"), ("timeout", "Timeouts"),
                        ("rejected", "Rejected by compile_vmfb")):
        chosen = [r for r in outcomes if r["outcome"] == kind]
        lines += ["", f"{title}: {len(chosen)}"]
        for r in chosen:
            lines.append(f"- {r['suite']}/{r['file']} @{r['test']} ({r['phase']}): {r['message']}")
            if kind == "wrong":
                lines += [f"  - {line}" for line in r["detail"].splitlines()[1:]]
    skipped = collections.Counter(re.sub(r"\d+:\d+", "L:C", r["message"])[:200]
                                  for r in outcomes if r["outcome"] == "skipped")
    lines += ["", f"Skipped (no llvm-cpu reference, or the rewrite failed): {sum(skipped.values())}"]
    lines += [f"- {n} x {message}" for message, n in skipped.most_common()]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", choices=SUITES, help="a suite to run (repeatable; default all)")
    parser.add_argument("--filter", default="", help="run only files whose suite/file path contains this")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS, help="seconds per test (default 120)")
    parser.add_argument("--iree", type=Path, default=DEFAULT_IREE, help="an IREE checkout or git directory")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    args = parser.parse_args()
    suites = args.suite or list(SUITES)
    started = time.perf_counter()
    source = IreeTests(args.iree)
    tests = []
    for suite in suites:
        for name in source.files(suite):
            file = name.removeprefix(f"tests/e2e/{suite}/")
            if args.filter in f"{suite}/{file}":
                tests += rewrite_file(suite, file, source.read(name))
    print(f"{len(tests)} tests in {len({(t.suite, t.file) for t in tests})} files, {args.jobs} jobs",
          file=sys.stderr)
    outcomes = run_all(tests, args.jobs, args.timeout)
    # The commits say what the figures are of; tt-hal's working tree may hold changes beyond its commit.
    facts = {"tt_hal_commit": git_commit(ROOT), "iree": str(args.iree), "iree_commit": git_commit(args.iree),
             "iree_compiler": importlib.metadata.version("iree-base-compiler"),
             "command": " ".join(sys.argv), "jobs": args.jobs, "timeout_seconds": args.timeout,
             "tolerance": {DATA_FORMAT: tolerance.TOLERANCE[DATA_FORMAT]},
             "wall_seconds": time.perf_counter() - started}
    summary = summarize(outcomes, suites)
    if args.json:  # first: the run's data outlives a failed print (a closed pipe)
        args.json.write_text(json.dumps({**facts, **summary, "tests": outcomes}, indent=2))
    print(markdown(outcomes, summary, facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
