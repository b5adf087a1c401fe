"""The `tt-hal` command line (tt_hal/tools/cli.py), end to end: each test runs
`python -m tt_hal.tools.cli ...` as a subprocess on small StableHLO programs and checks its
exit code, its output and the files it writes.

Exit codes (tt_hal/tools/cli.py): 0 success; 1 --check beyond the tolerance; 2 bad usage or
an unreadable file; 3 the program did not compile; 4 the run failed (or the device could
not load the program).

The --check failure is a real disagreement, not a fake: the FPU's multiplier sees bf16
operands (docs/fidelity.md), so a matmul whose every output is a cancellation,
(1 + 2^-9) * 1 - 1 * 1 = 2^-9, computes 0 on the device where llvm-cpu computes 2^-9:
normalized error 1.0 against the float32 tolerance 0.0586 (15 * 2^-8).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tt_hal import runtime
from tt_hal.compiler import tolerance

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "examples" / "models" / "exports"
TIMEOUT = 600  # seconds per command; the machine is shared

MATMUL_BIAS = """\
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>
  %2 = stablehlo.add %0, %1 : tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}
"""
SIGNATURE = "float32[64, 64], float32[64, 64], float32[64]"

UNSUPPORTED = """\
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.add %a, %b : tensor<64x64xf32>
  %1 = stablehlo.convert %0 : (tensor<64x64xf32>) -> tensor<64x64xf8E4M3FN>
  %2 = stablehlo.exponential %1 : tensor<64x64xf8E4M3FN>
  %3 = stablehlo.convert %2 : (tensor<64x64xf8E4M3FN>) -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}
"""

MALFORMED = """\
func.func @main(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.add %a, %a : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
"""

F32_TOLERANCE = tolerance.TOLERANCE["float32"]


def tt_hal(*args, cwd=None) -> subprocess.CompletedProcess:
    # TT_HAL_QUIET: no first-run notice on stderr when numba's caches are cold, which the tests' stderr would show
    env = dict(os.environ, PYTHONPATH=str(ROOT), TT_HAL_QUIET="1")
    return subprocess.run([sys.executable, "-m", "tt_hal.tools.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


def normalized_errors(stdout: str) -> list[float]:
    """The `normalized err` of each output in --check's report."""
    return [float(x) for x in re.findall(r"normalized err ([0-9.eE+-]+|inf|nan)", stdout)]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A directory with the programs, their inputs (seeded), and matmul.vmfb compiled once."""
    d = tmp_path_factory.mktemp("cli")
    (d / "matmul.mlir").write_text(MATMUL_BIAS)
    (d / "unsupported.mlir").write_text(UNSUPPORTED)
    (d / "malformed.mlir").write_text(MALFORMED)
    rng = np.random.default_rng(7)
    inputs = {"a": rng.uniform(-1, 1, (64, 64)), "b": rng.uniform(-1, 1, (64, 64)) * np.sqrt(3 / 64),
              "bias": rng.uniform(-1, 1, 64)}
    for name, x in inputs.items():
        np.save(d / f"{name}.npy", x.astype(np.float32))
    # The bf16 multiplier's worst case (module docstring): every output cancels to 2^-9.
    cancel = np.zeros((64, 64), np.float32)
    cancel[:, 0], cancel[:, 1] = 1 + 2.0 ** -9, -1.0
    np.save(d / "cancel_a.npy", cancel)
    np.save(d / "ones_b.npy", np.ones((64, 64), np.float32))
    np.save(d / "zero_bias.npy", np.zeros(64, np.float32))
    result = tt_hal("compile", d / "matmul.mlir", "-o", d / "matmul.vmfb")
    assert result.returncode == 0, result.stderr
    return d


def numpy_matmul_bias(d: Path, a="a", b="b", bias="bias") -> np.ndarray:
    x, w, c = (np.load(d / f"{n}.npy").astype(np.float64) for n in (a, b, bias))
    return x @ w + c


# ---- compile -----------------------------------------------------------------------------------

def test_compile_writes_a_program_the_runtime_loads(work):
    """`compile x.mlir -o x.vmfb` wrote a .vmfb tt_hal.runtime loads (from the path and
    from the bytes), with the program's signature, and it runs."""
    path = work / "matmul.vmfb"
    for module in (runtime.load_vm_flatbuffer_file(path, driver="tenstorrent"),
                   runtime.load_vm_flatbuffer(path.read_bytes(), driver="tenstorrent")):
        function = module["main"]
        assert ", ".join(map(str, function.inputs)) == SIGNATURE
        assert [str(t) for t in function.results] == ["float32[64, 64]"]
        out = function(*(np.load(work / f"{n}.npy") for n in ("a", "b", "bias")))
        assert tolerance.max_error(out, numpy_matmul_bias(work)) <= F32_TOLERANCE


def test_compile_default_output_and_message(work, tmp_path):
    """Without -o the program goes beside the source; stdout names it and its size."""
    source = tmp_path / "model.mlir"
    source.write_text(MATMUL_BIAS)
    result = tt_hal("compile", source)
    assert result.returncode == 0, result.stderr
    written = tmp_path / "model.vmfb"
    assert result.stdout.strip() == f"wrote {written} ({written.stat().st_size} bytes)"
    assert written.read_bytes() == (work / "matmul.vmfb").read_bytes()  # the same program compiles the same


# ---- run ---------------------------------------------------------------------------------------

def test_run_mlir_random_check(work):
    """`run x.mlir --random --check`: prints the output, the report against llvm-cpu
    and `check: passed`; exit 0."""
    result = tt_hal("run", work / "matmul.mlir", "--random", "--check")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("output 0: float32[64, 64]\n")
    assert "check against iree.runtime llvm-cpu (local-task), float32 tolerance 0.05859375" in out
    assert re.search(r"output 0 \[64, 64\]: max abs err \S+, normalized err \S+ \(scale \S+\), PCC 0\.99", out)
    (error,) = normalized_errors(out)
    assert error <= F32_TOLERANCE
    assert out.rstrip().endswith("check: passed")
    assert result.stderr == ""


def test_run_torch_export_random_check():
    """An iree-turbine export (its wrappers declare no signature; compile_vmfb declares
    one from the torch types): `run --random --check` makes its inputs and passes."""
    result = tt_hal("run", EXPORTS / "torch_mlp.mlir", "--random", "--check")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("output 0: float32[8, 64]\n") and result.stdout.rstrip().endswith("check: passed")


def test_run_vmfb_with_inputs_matches_numpy(work, tmp_path):
    """`run x.vmfb --input a.npy --input b.npy --input bias.npy --output-dir D`: the
    saved output is a @ b + bias within the float32 tolerance, and the printed array
    is that output."""
    result = tt_hal("run", work / "matmul.vmfb", "--input", work / "a.npy", "--input", work / "b.npy", "--input",
                    work / "bias.npy", "--output-dir", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["output0.npy"]
    got = np.load(tmp_path / "out" / "output0.npy")
    assert got.dtype == np.float32 and got.shape == (64, 64)
    expected = numpy_matmul_bias(work)
    assert tolerance.max_error(got, expected) <= F32_TOLERANCE
    assert np.abs(got - expected).max() <= 2.0 ** -6 * np.abs(expected).max()  # well inside it
    printed = np.array2string(got, threshold=20, edgeitems=3, precision=5)
    assert result.stdout == f"output 0: float32[64, 64]\n{printed}\n"


def test_run_numerics_exact_and_fast(work, tmp_path):
    """`run --numerics exact` computes the FPU's ops bit for bit as the chip (slower), the
    default fast mode in float32: both within the float32 tolerance, not the same bits;
    a device URI's numerics= means the same; an unknown mode is a usage error."""
    inputs = [x for name in ("a", "b", "bias") for x in ("--input", work / f"{name}.npy")]
    outputs = {}
    for mode, options in (("fast", ["--numerics", "fast"]), ("exact", ["--numerics", "exact"]),
                          ("uri", ["--device", "tenstorrent://mock?numerics=exact"])):
        result = tt_hal("run", work / "matmul.vmfb", *inputs, *options, "--output-dir", tmp_path / mode)
        assert result.returncode == 0, result.stderr
        outputs[mode] = np.load(tmp_path / mode / "output0.npy")
        assert tolerance.max_error(outputs[mode], numpy_matmul_bias(work)) <= F32_TOLERANCE
    assert (outputs["exact"] != outputs["fast"]).any()
    np.testing.assert_array_equal(outputs["exact"], outputs["uri"])
    bad = tt_hal("run", work / "matmul.vmfb", *inputs, "--numerics", "bitexact")
    assert bad.returncode == 2 and "invalid choice: 'bitexact'" in bad.stderr


def test_check_needs_the_mlir(work):
    result = tt_hal("run", work / "matmul.vmfb", "--random", "--check")
    assert result.returncode == 2 and "run the .mlir" in result.stderr and result.stdout == ""


def test_check_fails_on_a_real_disagreement(work, tmp_path):
    """On the inputs where the bf16 multiplier loses everything (module docstring),
    --check reports the error beyond the tolerance, prints `check: FAILED` on stderr
    and exits 1; the outputs were still printed and saved, and they are that far from
    numpy."""
    inputs = ["--input", work / "cancel_a.npy", "--input", work / "ones_b.npy", "--input", work / "zero_bias.npy"]
    result = tt_hal("run", work / "matmul.mlir", *inputs, "--check", "--output-dir", tmp_path / "out")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.strip() == "check: FAILED"
    assert result.stdout.startswith("output 0: float32[64, 64]\n")
    (error,) = normalized_errors(result.stdout)
    assert error > 10 * F32_TOLERANCE  # measured 1.0
    got = np.load(tmp_path / "out" / "output0.npy")
    expected = numpy_matmul_bias(work, "cancel_a", "ones_b", "zero_bias")
    assert tolerance.max_error(got, expected) == pytest.approx(error, rel=1e-3)
    assert np.all(got == 0.0)  # 1 + 2^-9 reached the multiplier as 1


# ---- errors ------------------------------------------------------------------------------------

def test_wrong_number_of_inputs(work):
    """Exit 2, naming the function's inputs and how many files were given; no output."""
    result = tt_hal("run", work / "matmul.vmfb", "--input", work / "a.npy", "--input", work / "b.npy")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (f"tt-hal: main takes 3 inputs ({SIGNATURE}); got 2 --input files "
                                     f"(or use --random)")


def test_usage_errors(work, tmp_path):
    """--input with --random, and an unreadable .npy: exit 2 with the reason."""
    both = tt_hal("run", work / "matmul.vmfb", "--random", "--input", work / "a.npy")
    assert both.returncode == 2 and "give --input files or --random, not both" in both.stderr
    (tmp_path / "junk.npy").write_text("not numpy")
    bad = tt_hal("run", work / "matmul.vmfb", "--input", tmp_path / "junk.npy", "--input", work / "b.npy",
                 "--input", work / "bias.npy")
    assert bad.returncode == 2 and f"cannot read {tmp_path / 'junk.npy'}" in bad.stderr


def test_input_of_wrong_dtype_is_a_usage_error(work, tmp_path):
    np.save(tmp_path / "a64.npy", np.load(work / "a.npy").astype(np.float64))
    result = tt_hal("run", work / "matmul.vmfb", "--input", tmp_path / "a64.npy", "--input", work / "b.npy",
                    "--input", work / "bias.npy")
    assert f"{tmp_path / 'a64.npy'}: float64[64, 64]; input 0 of main is float32[64, 64]" in result.stderr
    assert result.returncode == 2


@pytest.mark.parametrize("command", ["compile", "run"])
def test_unsupported_op(work, tmp_path, command):
    """Exit 3: UNIMPLEMENTED with the op and its line (5: f8E4M3FN widened back) on stderr;
    nothing written."""
    args = ["-o", tmp_path / "x.vmfb"] if command == "compile" else ["--random"]
    result = tt_hal(command, work / "unsupported.mlir", *args)
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.startswith(f"tt-hal: cannot compile {work / 'unsupported.mlir'}:\nUNIMPLEMENTED; ")
    assert re.search(r"\.mlir:5:\d+: arith\.extf with f8E4M3FN: the bridge computes f32, bf16 and f16", result.stderr)
    assert not (tmp_path / "x.vmfb").exists()


def test_malformed_mlir(work, tmp_path):
    """Exit 3 with the parser's diagnostic (line 3: %1 is not defined)."""
    result = tt_hal("compile", work / "malformed.mlir", "-o", tmp_path / "x.vmfb")
    assert result.returncode == 3
    assert "the MLIR does not parse" in result.stderr
    assert re.search(r"error: \S*\.mlir:3:\d+: use of undeclared SSA value name", result.stderr)
    assert not (tmp_path / "x.vmfb").exists()


def test_missing_or_corrupt_program(tmp_path):
    """A .vmfb that does not exist, or is not one: a usage error (exit 2), saying which."""
    missing = tt_hal("run", tmp_path / "nothere.vmfb", "--random")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"tt-hal: cannot read {tmp_path / 'nothere.vmfb'}: No such file or directory"
    (tmp_path / "junk.vmfb").write_bytes(b"\x00" * 100)
    junk = tt_hal("run", tmp_path / "junk.vmfb", "--random")
    assert junk.returncode == 2 and "not a .vmfb" in junk.stderr


# ---- devices, info, trace ----------------------------------------------------------------------

def test_devices_lists_the_device_and_presets():
    result = tt_hal("devices")
    assert result.returncode == 0, result.stderr
    assert re.search(r"tenstorrent://0\s+mock\s+wormhole_b0\s+8x8\s+64\s+1,499,136 B", result.stdout), result.stdout
    for preset in ("wormhole_b0", "blackhole_p150", "blackhole_p100"):
        assert f"tenstorrent://mock?arch={preset}" in tt_hal("devices", "--json").stdout
    report = __import__("json").loads(tt_hal("devices", "--json").stdout)
    device = report["drivers"][0]["devices"][0]
    assert device["arch"]["dram_bank_count"] == 12 and device["num_hw_cqs"] == 2


def test_devices_without_hardware_in_hardware_mode_is_a_device_failure():
    env = dict(os.environ, PYTHONPATH=str(ROOT), TT_HAL_MODE="hardware")
    result = subprocess.run([sys.executable, "-m", "tt_hal.tools.cli", "devices"], env=env, capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 4
    assert "UNAVAILABLE" in result.stdout and "docs/hardware.md" in result.stdout


def test_info_describes_a_program(work):
    result = tt_hal("info", work / "matmul.vmfb")
    assert result.returncode == 0, result.stderr
    assert f"function main({SIGNATURE}) -> (float32[64, 64])" in result.stdout
    assert re.search(r"export 0: main_dispatch_0_matmul_64x64x64_f32 .*, \d+ stages\)", result.stdout)
    assert "circular buffers:" in result.stdout and "L1 per core:" in result.stdout
    assert "cb_wait_front" not in result.stdout
    listing = tt_hal("info", work / "matmul.vmfb", "--disassemble").stdout
    assert "cb_wait_front" in listing and "matmul_block" in listing
    report = __import__("json").loads(tt_hal("info", work / "matmul.vmfb", "--json").stdout)
    assert report["kind"] == "program" and report["functions"][0]["name"] == "main"
    (export,) = report["executable"]["exports"]
    assert any(k["name"] == "matmul" for stage in export["stages"] for k in stage["kernels"])


def test_info_of_a_file_that_is_no_module_is_a_usage_error(tmp_path):
    junk = tmp_path / "junk.ttx"
    junk.write_bytes(b"\x00" * 64)
    result = tt_hal("info", junk)
    assert result.returncode == 2
    assert "junk.ttx" in result.stderr and result.stdout == ""


def test_trace_of_a_program_writes_trace_graph_and_chip(work, tmp_path):
    import json
    out = tmp_path / "t.json"
    result = tt_hal("trace", work / "matmul.vmfb", "--random", "-o", out, "--graph", tmp_path / "g.dot",
                    "--chip", tmp_path / "chip.png")
    assert result.returncode == 0, result.stderr
    trace = json.loads(out.read_text())
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    stages = [e["name"] for e in trace["traceEvents"] if e.get("cat") == "command"]
    # One dispatch, traced as its stages: the matmul (reading a and b from their rows) and the
    # bias add writing rows (reading the bias from its rows).
    assert stages == [f"main_dispatch_0_matmul_64x64x64_f32[stage {k}/2]" for k in range(1, 3)]
    assert len(kernels) >= len(stages)
    assert "after 1 untraced warm-up call" in result.stdout
    assert "open it in https://ui.perfetto.dev" in result.stdout
    assert (tmp_path / "g.dot").read_text().startswith('digraph "tt')
    assert (tmp_path / "chip.png").read_bytes()[:4] == b"\x89PNG"
    png = tt_hal("trace", work / "matmul.vmfb", "--random", "-o", out, "--graph", tmp_path / "g.png")
    assert png.returncode == 0 and (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_trace_of_a_script_traces_its_devices(tmp_path):
    import json
    script = tmp_path / "script.py"
    script.write_text("import sys, numpy as np, hal\n"
                      "from tt_hal import ops\n"
                      "d = hal.create_device('tenstorrent')\n"
                      "x = d.to_device(np.ones((32, 32), np.float32), dtype='bfloat16', layout='tile')\n"
                      "print('sum', float(ops.sum(x, dim=1).to_host(np.float32).sum()), sys.argv[1:])\n")
    out = tmp_path / "s.json"
    result = tt_hal("trace", script, "-o", out, "--", "--flag")
    assert result.returncode == 0, result.stderr
    assert "sum 1024.0 ['--flag']" in result.stdout
    names = [e["name"] for e in json.loads(out.read_text())["traceEvents"] if e.get("cat") == "command"]
    assert names and names[0].startswith("reduce")
    idle = tmp_path / "idle.py"
    idle.write_text("print('no device')\n")
    none = tt_hal("trace", idle, "-o", tmp_path / "n.json")
    assert none.returncode == 4 and "created no tenstorrent device" in none.stderr


def test_bench_runs_the_suite_and_prints_ratios(tmp_path):
    import json
    result = tt_hal("bench", "--quick", "--only", "queue", "--json", tmp_path / "b.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "| suite | case | size | tt-hal | baseline | ratio |" in result.stdout
    assert re.search(r"\| queue \| submit_wait \|.*\(iree.runtime local-task\) \| [0-9.]+x \|", result.stdout)
    rows = json.loads((tmp_path / "b.json").read_text())["suites"][0]["rows"]
    assert {r["case"] for r in rows} == {"submit_wait", "pingpong"}
    unknown = tt_hal("bench", "--only", "nonsense", cwd=tmp_path)
    assert unknown.returncode == 2 and "tt-hal bench" in unknown.stderr


def test_trace_checks_output_paths_before_running(work, tmp_path):
    result = tt_hal("trace", work / "matmul.vmfb", "--random", "-o", tmp_path / "missing" / "t.json")
    assert result.returncode == 2 and "cannot write" in result.stderr and "main:" not in result.stdout


def test_a_failing_traced_script_is_a_run_failure_with_its_trace_written(tmp_path):
    import json
    script = tmp_path / "boom.py"
    script.write_text("import numpy as np, hal\n"
                      "d = hal.create_device('tenstorrent')\n"
                      "d.to_device(np.ones((32, 32), np.float32), dtype='bfloat16', layout='tile')\n"
                      "raise RuntimeError('boom')\n")
    result = tt_hal("trace", script, "-o", tmp_path / "b.json")
    assert result.returncode == 4
    assert "RuntimeError: boom" in result.stderr and "raised" in result.stderr
    events = json.loads((tmp_path / "b.json").read_text())["traceEvents"]
    assert [e["args"]["bytes"] for e in events if e["name"] == "to_device"] == [2048]


def test_version_and_bad_mode():
    assert tt_hal("--version").stdout.startswith("tt-hal ")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TT_HAL_MODE="bogus")
    result = subprocess.run([sys.executable, "-m", "tt_hal.tools.cli", "devices"], env=env, capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 2 and "TT_HAL_MODE" in result.stdout


@pytest.mark.parametrize("make_args, code, words", [
    (lambda w, t: ["compile", t / "missing.mlir"], 2, ["cannot read", "missing.mlir", "no such file"]),
    (lambda w, t: ["compile", w / "matmul.mlir", "-o", t / "nodir" / "x.vmfb"], 2, ["cannot write", "no directory"]),
    (lambda w, t: ["run", w / "matmul.mlir", "--random", "--device", "tenstorrent://nope"], 2,
     ["device 'tenstorrent://nope'", "expected an ordinal"]),
    (lambda w, t: ["run", w / "matmul.vmfb", "--random", "--output-dir", t / "file.txt" / "out"], 2,
     ["cannot write outputs to"]),
    (lambda w, t: ["trace", w / "matmul.vmfb", "--random", "-o", t / "t.json", "--chip", t / "chip.txt"], 2,
     ["--chip", "a .png"]),
    (lambda w, t: ["trace", w / "matmul.vmfb", "--random", "-o", t / "t.json", "--graph", t / "g.svg"], 2,
     ["--graph", ".txt, .dot, .png"]),
    (lambda w, t: ["trace", t / "missing.py", "-o", t / "t.json"], 2, ["cannot read", "missing.py"]),
], ids=["missing-mlir", "compile-into-missing-dir", "bad-device", "unwritable-output-dir", "chip-not-png",
        "graph-svg", "trace-missing-script"])
def test_usage_errors_keep_the_documented_exit_code(work, tmp_path, make_args, code, words):
    """Issue 20: each of these exited 3 or 4, blamed the file, or printed a traceback."""
    (tmp_path / "file.txt").write_text("a file where a directory should be")
    result = tt_hal(*make_args(work, tmp_path))
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr


def test_bad_mode_is_a_device_error_not_the_programs(work):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TT_HAL_MODE="bogus")
    result = subprocess.run([sys.executable, "-m", "tt_hal.tools.cli", "run", str(work / "matmul.vmfb"), "--random"],
                            env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2 and "TT_HAL_MODE" in result.stderr and "cannot load" not in result.stderr


def test_a_wrong_dtype_input_gets_a_hint_to_cast(work, tmp_path):
    np.save(tmp_path / "a64.npy", np.load(work / "a.npy").astype(np.float64))
    result = tt_hal("run", work / "matmul.vmfb", "--input", tmp_path / "a64.npy", "--input", work / "b.npy",
                    "--input", work / "bias.npy")
    assert result.returncode == 2 and "x.astype(np.float32)" in result.stderr


# ---- codegen (issue 20, finding 6) -------------------------------------------------------------

TT_HAL_COMMAND = Path(sys.executable).parent / "tt-hal"  # the console script `pip install` wrote


def installed_tt_hal(*args) -> subprocess.CompletedProcess:
    """The installed `tt-hal` command (as a user runs it), or the module if this
    interpreter has no console script."""
    command = [str(TT_HAL_COMMAND)] if TT_HAL_COMMAND.exists() else [sys.executable, "-m", "tt_hal.tools.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), TT_HAL_QUIET="1")
    return subprocess.run([*command, *map(str, args)], env=env, capture_output=True, text=True, timeout=TIMEOUT)


def relu_and_dynamic_ttx(broken: bool = False) -> tuple[bytes, object]:
    """A .ttx of two exports: `relu` (one stage: reader, compute, writer, as in the user
    guide) and `scaled` with dynamic shapes (MLIR, no stages); with `broken`, the
    writer also writes through address generator 1, which no ADDRGEN sets: the
    simulator would fault when it runs, and the TT-Metal codegen refuses it."""
    from tt_hal.target.isa import Op, Processor, SfpuOp
    from tt_hal.target.kernel_builder import KernelBuilder
    from tt_hal.target.layout import DataFormat
    from tt_hal.target.program import ArgKind, CircularBufferConfig, Program, RuntimeArg, Stage
    from tt_hal.target.ttx import Export, write_executable

    bf16 = DataFormat.bfloat16

    def mover(name, binding, cb, read):
        k = KernelBuilder(name)
        n, one, ptr = k.reg("n"), k.const(1, "one"), k.reg("ptr")
        k.emit(Op.CONSTANT, n, 0)
        k.addrgen(0, k.arg(0, "address"), k.const(bf16.tile_size), k.arg(1, "is_dram"))
        with k.loop(n) as tile:
            if read:
                k.cb_reserve_back(cb, one)
                k.emit(Op.GET_WRITE_PTR, ptr, cb)
                k.noc_read_page(0, tile, ptr)
                k.noc_read_barrier()
                k.cb_push_back(cb, one)
            else:
                k.cb_wait_front(cb, one)
                k.emit(Op.GET_READ_PTR, ptr, cb)
                k.noc_write_page(0, tile, ptr)
                k.noc_write_barrier()
                k.cb_pop_front(cb, one)
        if broken and not read:
            k.noc_write_page(1, one, ptr)
        args = (RuntimeArg(ArgKind.BINDING_ADDRESS, binding), RuntimeArg(ArgKind.BINDING_IS_DRAM, binding))
        return k.build(Processor.RISCV_1 if read else Processor.RISCV_0), args

    c = KernelBuilder("relu")
    n, one, zero = c.reg("n"), c.const(1, "one"), c.const(0, "zero")
    c.emit(Op.CONSTANT, n, 0)
    with c.loop(n):
        c.cb_wait_front(0, one)
        c.tile_regs_acquire()
        c.copy_tile(0, zero, zero)
        c.sfpu_unary(SfpuOp.RELU, zero, 0.0)
        c.tile_regs_commit()
        c.cb_reserve_back(16, one)
        c.tile_regs_wait()
        c.pack_tile(zero, 16, zero)
        c.tile_regs_release()
        c.cb_push_back(16, one)
        c.cb_pop_front(0, one)
    reader, reader_args = mover("reader", 0, 0, read=True)
    writer, writer_args = mover("writer", 1, 16, read=False)
    cbs = (CircularBufferConfig(0, bf16, bf16.tile_size, 2), CircularBufferConfig(16, bf16, bf16.tile_size, 2))
    program = Program(cbs, (reader, c.build(Processor.COMPUTE), writer), (reader_args, (), writer_args))
    dynamic = Export("scaled", 2, 2, (1, 1, 1), (), source="func.func @scaled() { return }")
    return write_executable([Export("relu", 1, 2, (1, 1, 1), (Stage(program),)), dynamic]), program


def test_codegen_of_a_ttx_writes_each_kernel_and_an_index(tmp_path):
    """One file per kernel at <export>/stage<k>_<role>.cpp, exactly what native/codegen.py
    generates; the index names each file's processor and kernel, and lists the
    dynamic-shape export as such (no kernels yet), not as a failure."""
    from tt_hal.native.codegen import program_sources
    from tt_hal.target.isa import Processor
    data, program = relu_and_dynamic_ttx()
    (tmp_path / "kernels.ttx").write_bytes(data)
    out = tmp_path / "out" / "kernels"  # parents are made
    result = installed_tt_hal("codegen", tmp_path / "kernels.ttx", "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.strip() == (f"wrote 3 TT-Metal C++ kernels of 2 exports (1 with dynamic shapes: no kernels "
                                     f"until a dispatch fixes the shapes) to {out}; what each file is: "
                                     f"{out / 'index.txt'}")
    expected = program_sources(program)
    for role, processor in (("reader", Processor.RISCV_1), ("compute", Processor.COMPUTE),
                            ("writer", Processor.RISCV_0)):
        assert (out / "relu" / f"stage1_{role}.cpp").read_text() == expected[processor]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "index.txt", "relu/stage1_compute.cpp", "relu/stage1_reader.cpp", "relu/stage1_writer.cpp"]
    index = (out / "index.txt").read_text()
    assert "relu/stage1_reader.cpp  RISCV_1 (NCRISC) kernel 'reader'" in index
    assert "relu/stage1_compute.cpp  COMPUTE (TRISCs) kernel 'relu'" in index
    assert "relu/stage1_writer.cpp  RISCV_0 (BRISC) kernel 'writer'" in index
    assert "export 1 scaled: 2 bindings, 2 push constants" in index
    assert "dynamic shapes: no kernels yet" in index


def test_codegen_of_an_mlir_and_its_vmfb_write_the_same_kernels(work, tmp_path):
    """A .mlir is compiled first; a .vmfb gives the .ttx it carries: the same files.
    The matmul dispatch's two stages (the matmul reading a and b from their rows, the bias
    add reading the bias from its rows and writing rows) each have a reader, a compute
    and a writer kernel."""
    from_mlir = installed_tt_hal("codegen", work / "matmul.mlir", "-o", tmp_path / "a")
    assert from_mlir.returncode == 0, from_mlir.stderr
    from_vmfb = installed_tt_hal("codegen", work / "matmul.vmfb", "-o", tmp_path / "b")
    assert from_vmfb.returncode == 0, from_vmfb.stderr
    assert "wrote 6 TT-Metal C++ kernels of 1 export to" in from_vmfb.stdout
    export = "main_dispatch_0_matmul_64x64x64_f32"
    files = sorted(p.relative_to(tmp_path / "b").as_posix() for p in (tmp_path / "b").rglob("*.cpp"))
    assert files == sorted(f"{export}/stage{k}_{role}.cpp" for k in range(1, 3)
                           for role in ("reader", "compute", "writer"))
    for name in files:
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()
    assert "matmul_block(" in (tmp_path / "b" / export / "stage1_compute.cpp").read_text()
    assert "void kernel_main()" in (tmp_path / "b" / export / "stage1_reader.cpp").read_text()
    index = (tmp_path / "b" / "index.txt").read_text()
    assert f"TT-Metal C++ kernels of {work / 'matmul.vmfb'}: 6 kernels of 1 export" in index
    assert f"export 0 {export}: " in index and ", 2 stages" in index


def test_codegen_lists_dynamic_shape_exports_without_failing(tmp_path):
    """A model with dynamic shapes: every export is lowered per call, so there is no
    C++ yet; exit 0 and the index says why."""
    result = installed_tt_hal("codegen", EXPORTS / "torch_mlp_dynamic.mlir", "-o", tmp_path / "k")
    assert result.returncode == 0, result.stderr
    assert "0 TT-Metal C++ kernels of 2 exports (2 with dynamic shapes" in result.stdout
    index = (tmp_path / "k" / "index.txt").read_text()
    assert index.count("dynamic shapes: no kernels yet") == 2
    assert list((tmp_path / "k").iterdir()) == [tmp_path / "k" / "index.txt"]


def test_codegen_of_a_kernel_it_cannot_translate_writes_the_rest_and_exits_3(tmp_path):
    data, _ = relu_and_dynamic_ttx(broken=True)
    (tmp_path / "broken.ttx").write_bytes(data)
    result = installed_tt_hal("codegen", tmp_path / "broken.ttx", "-o", tmp_path / "k")
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "1 stage of" in result.stderr and "address generator 1 before ADDRGEN sets it" in result.stderr
    assert "NOT GENERATED: INVALID_ARGUMENT" in (tmp_path / "k" / "index.txt").read_text()


@pytest.mark.parametrize("make_args, code, words", [
    (lambda w, t: ["codegen", t / "missing.ttx", "-o", t / "k"], 2, ["cannot read", "missing.ttx"]),
    (lambda w, t: ["codegen", t / "missing.mlir", "-o", t / "k"], 2, ["cannot read", "missing.mlir"]),
    (lambda w, t: ["codegen", t / "junk.ttx", "-o", t / "k"], 2, ["junk.ttx", "neither"]),
    (lambda w, t: ["codegen", t / "other.vmfb", "-o", t / "k"], 2, ["other.vmfb", "no .ttx executable"]),
    (lambda w, t: ["codegen", t / "damaged.ttx", "-o", t / "k"], 2, ["damaged.ttx", "malformed .ttx"]),
    (lambda w, t: ["codegen", w / "matmul.vmfb", "-o", t / "file.txt"], 2, ["cannot write kernels to", "file.txt"]),
    (lambda w, t: ["codegen", w / "matmul.vmfb", "-o", t / "file.txt" / "k"], 2, ["cannot write kernels to"]),
    (lambda w, t: ["codegen", w / "malformed.mlir", "-o", t / "k"], 3, ["cannot compile", "malformed.mlir"]),
], ids=["missing-ttx", "missing-mlir", "junk", "vmfb-without-ttx", "damaged-ttx", "output-is-a-file",
        "output-under-a-file", "mlir-does-not-compile"])
def test_codegen_errors_keep_the_documented_exit_codes(work, tmp_path, make_args, code, words):
    (tmp_path / "file.txt").write_text("a file where a directory should be")
    (tmp_path / "junk.ttx").write_bytes(b"\x00" * 64)
    (tmp_path / "other.vmfb").write_bytes(b"PK\x03\x04" + b"\x00" * 60)  # a zip, but no .ttx inside
    ttx, _ = relu_and_dynamic_ttx()
    (tmp_path / "damaged.ttx").write_bytes(ttx[:-40])
    result = installed_tt_hal(*make_args(work, tmp_path))
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    if code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr
    assert not (tmp_path / "k").exists()  # nothing is made before the input is read (and compiled)


def test_codegen_is_in_the_usage_text():
    result = installed_tt_hal("--help")
    assert result.returncode == 0 and "codegen" in result.stdout
    usage = installed_tt_hal("codegen", "--help").stdout
    assert "TT-Metal C++" in usage and "-o OUTPUT" in usage
