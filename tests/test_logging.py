"""Logging: the library logs under the `tt_hal` logger, TT_HAL_LOG sends it to stderr,
and library code never prints (only the command line does)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ("import numpy as np, hal\n"
          "from tt_hal import ops\n"
          "d = hal.create_device('tenstorrent')\n"
          "x = d.to_device(np.ones((32, 32), np.float32), dtype='bfloat16', layout='tile')\n"
          "ops.add(x, x).to_host()\n")


def run(level: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TT_HAL_LOG"}
    if level is not None:
        env["TT_HAL_LOG"] = level
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT)


def test_tt_hal_log_debug_logs_device_queue_and_dispatch():
    stderr = run("debug").stderr
    assert " INFO tt_hal.hal.driver: created <HalDevice tenstorrent://0" in stderr
    assert " DEBUG tt_hal.hal.queue: issue #1 execute_now on CQ0: 1 commands" in stderr  # the first: not inline
    assert " DEBUG tt_hal.sim.dispatch: eltwise_add: 1 workgroups on 1 cores in 1 rounds" in stderr
    assert stderr.count("tt_hal.hal.driver: created") == 1  # once: not also through a root handler


def test_levels_filter_and_silence_is_the_default():
    assert "DEBUG" not in run("info").stderr and "tt_hal.hal.driver: created" in run("info").stderr
    assert run(None).stderr == ""
    assert run("warning").stderr == ""


def test_a_bad_level_is_said_once_and_ignored():
    result = run("loud")
    assert result.returncode == 0
    assert result.stderr.strip() == "TT_HAL_LOG='loud' is not a logging level (debug, info, warning, error); ignored"


def test_library_code_never_prints():
    """print() only in the command lines (tt_hal/tools/cli.py; native/ttmetal_check.py,
    which .ci/run calls to fetch the TT-Metal wheel)."""
    offenders = []
    for package in ("hal", "sim", "compiler", "native", "tt_hal"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT).as_posix() in ("tt_hal/tools/cli.py", "native/ttmetal_check.py"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
