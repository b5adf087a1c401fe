"""The first run's notice (issue 20, finding 4): with numba's caches of the simulator
missing (a fresh install) or just dropped as stale, the first compile says, once per
process, that the simulator's kernels are compiling (10-20 seconds); never with
TT_HAL_QUIET=1, never with warm caches. Checked on a small numba module in a temp
directory standing for the simulator's, so nothing of the simulator recompiles."""

import os
import subprocess
import sys
from pathlib import Path

import tt_hal

ROOT = Path(__file__).resolve().parents[1]
KERNELS = """\
import numba


@numba.njit(cache=True)
def inc(x):
    return x + 1


@numba.njit(cache=True)
def twice(x):
    return inc(x) * 2
"""
SCRIPT = """\
import pathlib, sys
import tt_hal
directory = pathlib.Path(sys.argv[1])
print("armed" if tt_hal.notice_first_compile([directory]) else "not armed")
sys.path.insert(0, str(directory))
import kernels
print(kernels.twice(1), kernels.inc(2.5))
"""


def run(directory: Path, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("TT_HAL_QUIET", "NUMBA_CACHE_DIR", "TT_HAL_LOG")}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(directory)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**environment, "PYTHONPATH": str(ROOT), **env})


def test_cache_check_on_an_empty_directory_and_a_cached_one(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv(tt_hal.QUIET_ENVIRONMENT, raising=False)
    assert tt_hal.numba_cache_directory(tmp_path) == tmp_path / "__pycache__"
    assert tt_hal.numba_caches_missing([tmp_path])
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "kernels.inc-4.py311.nbi").write_bytes(b"")
    assert not tt_hal.numba_caches_missing([tmp_path])
    assert not tt_hal.notice_first_compile([tmp_path])  # warm: nothing to say


def test_numba_cache_dir_is_where_the_check_looks(tmp_path, monkeypatch):
    """NUMBA_CACHE_DIR moves numba's caches (numba's UserProvidedCacheLocator): the
    check, and the stale-cache drop, look there."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    sources = tmp_path / "sim"
    sources.mkdir()
    cache = tt_hal.numba_cache_directory(sources)
    assert cache.parent == tmp_path / "cache" and cache.name.startswith("sim_")
    cache.mkdir(parents=True)
    (cache / "kernels.inc-4.py311.nbi").write_bytes(b"")
    assert not tt_hal.numba_caches_missing([sources])
    (sources / "kernels.py").write_text(KERNELS)  # sources the caches were not built from: stale
    tt_hal.drop_stale_numba_caches([sources], tmp_path / "stamp" / "sources.sha256")
    assert not (cache / "kernels.inc-4.py311.nbi").exists() and tt_hal.numba_caches_missing([sources])


def test_quiet_disarms_the_notice(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv(tt_hal.QUIET_ENVIRONMENT, "1")
    assert tt_hal.numba_caches_missing([tmp_path]) and not tt_hal.notice_first_compile([tmp_path])
    monkeypatch.setenv(tt_hal.QUIET_ENVIRONMENT, "0")
    assert not tt_hal.quiet()


def test_the_first_compile_says_so_once_then_never_again(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    cold = run(tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.splitlines() == ["armed", "4 3.5"]
    assert cold.stderr == tt_hal.COMPILE_NOTICE + "\n"  # once, though three functions compiled
    warm = run(tmp_path)  # numba cached them: no compile, no notice
    assert warm.returncode == 0 and warm.stdout.splitlines()[0] == "not armed" and warm.stderr == ""


def test_no_notice_with_tt_hal_quiet(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    quiet = run(tmp_path, TT_HAL_QUIET="1")
    assert quiet.returncode == 0 and quiet.stdout.splitlines()[0] == "not armed" and quiet.stderr == ""


def test_the_notice_is_a_plain_line_when_logging_is_configured(tmp_path):
    """IREE's compiler configures the root logger when it is imported; the notice stays
    one plain line, not a WARNING:tt_hal: record, and TT_HAL_LOG does not change it."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    script = "import logging\nlogging.basicConfig()\n" + SCRIPT
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                            timeout=300, cwd=ROOT, env={**{k: v for k, v in os.environ.items()
                                                           if k not in ("TT_HAL_QUIET", "NUMBA_CACHE_DIR")},
                                                        "PYTHONPATH": str(ROOT), "TT_HAL_LOG": "warning"})
    assert result.returncode == 0, result.stderr
    assert result.stderr == tt_hal.COMPILE_NOTICE + "\n"
