"""bench/ab.py: two checkouts' call times in alternating processes and their outputs
compared byte for byte (here this checkout against itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "ab.py"
sys.path.insert(0, str(ROOT / "bench"))  # as `tt-hal bench` does

import ab  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=900)


def test_a_checkout_against_itself_times_both_sides_and_finds_the_same_outputs():
    result = run("--base", str(ROOT), "--rounds", "1", "--calls", "2", "--outputs", "jax_mlp")
    assert result.returncode == 0, result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("jax_mlp")]
    base, this, ratio = row.split()[1:]
    assert float(base) > 0 and float(this) > 0 and float(ratio) > 0
    assert "outputs: 1 compared byte for byte, all identical" in result.stdout


def test_outputs_that_differ_in_bytes_dtype_or_presence_are_named(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    same = np.arange(6, dtype=np.float32)
    np.savez(a, same=same, value=np.float32([1.0, 2.0]), kind=np.int32([1]), gone=same)
    np.savez(b, same=same, value=np.float32([1.0, np.nextafter(np.float32(2.0), np.float32(3.0))]),
             kind=np.int64([1]))
    assert ab.differing(str(a), str(b)) == (4, ["gone", "kind", "value"])
    assert ab.differing(str(a), str(a)) == (4, [])


def test_a_folder_that_is_no_checkout_and_an_unknown_model_are_usage_errors(tmp_path):
    result = run("--base", str(tmp_path), "jax_mlp")
    assert result.returncode == 2 and "is not a checkout of this repository" in result.stderr
    result = run("--base", str(ROOT), "no_such_model")
    assert result.returncode == 2 and "unknown model no_such_model" in result.stderr
