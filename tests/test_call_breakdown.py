"""bench/call_breakdown.py: a model's call by phase (run in a subprocess: it wraps the
hal module's imports and the simulator's run_programs for the rest of its process)."""

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "call_breakdown.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_a_call_is_split_into_imports_launches_and_the_rest():
    result = run("torch_mlp", "--calls", "2", "--timeline")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    call = float(re.search(r"torch_mlp: call +([\d.]+) ms", out).group(1))
    imports = float(re.search(r"hal imports +([\d.]+) ms \((\d+) calls\)", out).group(1))
    launches, commands = (int(v) for v in re.search(
        r"run_programs +[\d.]+ ms \((\d+) launches in (\d+) queue commands\)", out).groups())
    run_round = float(re.search(r"run_round +([\d.]+) ms", out).group(1))
    run_programs = float(re.search(r"run_programs +([\d.]+) ms", out).group(1))
    assert 0 < imports <= call and launches >= commands > 0 and 0 < run_round <= run_programs
    assert "hal.fence_await" in out or "hal.device_queue_execute" in out
    before, between, after = (float(v) for v in re.search(
        r"around the launches +([\d.]+) ms before the first, ([\d.]+) ms between, ([\d.]+) ms after", out).groups())
    assert before + between + after <= call
    # the timeline: the last call's imports and its launches, in order, within the call
    lines = out[out.index("the last call"):].splitlines()[1:]
    starts = [float(line.split()[0]) for line in lines]
    assert starts == sorted(starts) and all(0 <= s <= call * 2 for s in starts)
    counted = [int(m.group(1)) for m in (re.search(r"(\d+) launches, ", line) for line in lines) if m]
    assert sum(counted) == launches and any(" hal.device_queue_execute" in line for line in lines)


def test_an_unknown_model_is_a_usage_error():
    result = run("no_such_model")
    assert result.returncode == 2
    assert "unknown model no_such_model" in result.stderr
