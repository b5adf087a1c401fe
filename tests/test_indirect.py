"""sim/indirect.py: jitted calls through a callee's address."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import types
from numba.core import errors

from tt_hal.sim import indirect

ARGUMENTS = (types.int64, types.Array(types.float32, 1, "C"))


@numba.njit(nogil=True)
def _scale(k, values):
    if k < 0:
        raise ValueError("k must not be negative")
    values[k] *= 2.0
    return k + 1


indirect.declare(_scale, ARGUMENTS)


@numba.njit(nogil=True)
def _twice(at, k, values):
    return indirect.call(_scale, at, (k, values)) + indirect.call(_scale, at, (k, values))


@numba.njit(nogil=True)
def _with_wrong_types(at, values):
    return indirect.call(_scale, at, (1.5, values))


def test_a_call_through_the_address_runs_the_callee():
    values = np.ones(4, np.float32)
    assert _twice(indirect.address(_scale, ARGUMENTS), 2, values) == 6
    np.testing.assert_array_equal(values, [1, 1, 4, 1])


def test_the_callee_is_compiled_once_and_not_linked_into_the_caller():
    at = indirect.address(_scale, ARGUMENTS)
    assert indirect.address(_scale, ARGUMENTS) == at
    assert list(_scale.overloads) == [ARGUMENTS]
    _twice(at, 0, np.ones(1, np.float32))
    caller = next(iter(_twice.overloads.values()))
    assert "_scale" not in caller.library.get_llvm_str()


def test_the_callee_returns_an_int64_whatever_its_body_returns():
    assert _scale.overloads[ARGUMENTS].signature.return_type == types.int64


def test_an_exception_in_the_callee_reaches_the_caller():
    with pytest.raises(ValueError, match="k must not be negative"):
        _twice(indirect.address(_scale, ARGUMENTS), -1, np.ones(1, np.float32))


def test_a_call_with_undeclared_argument_types_does_not_compile():
    with pytest.raises(errors.TypingError, match="_scale is not declared for"):
        _with_wrong_types(indirect.address(_scale, ARGUMENTS), np.ones(2, np.float32))


def test_an_address_for_undeclared_argument_types_is_refused():
    with pytest.raises(TypeError, match="not declared"):
        indirect.address(_scale, (types.float64, ARGUMENTS[1]))


PROBE_MODULE = '''
import os
import sys

import numba
from numba import types
from tt_hal.sim import indirect

if os.environ.get("PROBE_FAIL_ELSEWHERE") and sys.argv[0] == "-c":  # in the compiling process
    raise RuntimeError("the compiling process fails")

ARGUMENTS = (types.int64,)


@numba.njit(cache=True)
def triple(k):
    return 3 * k


indirect.declare(triple, ARGUMENTS)
'''
PROBE = '''
import probe_kernel
from tt_hal.sim import indirect
started = indirect.compile_elsewhere(probe_kernel.triple, probe_kernel.ARGUMENTS)
indirect.address(probe_kernel.triple, probe_kernel.ARGUMENTS)
stats = probe_kernel.triple.stats
print(started, sum(stats.cache_misses.values()), probe_kernel.triple(14))
'''


def _run_probe(tmp_path, probe: str = PROBE, **environment) -> subprocess.CompletedProcess:
    (tmp_path / "probe_kernel.py").write_text(PROBE_MODULE)
    (tmp_path / "probe.py").write_text(probe)
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "TT_HAL_LOG": "warning",
                   "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]), **environment}
    return subprocess.run([sys.executable, str(tmp_path / "probe.py")], env=environment, capture_output=True,
                          text=True, timeout=300, check=True)


def test_a_function_compiled_elsewhere_is_loaded_from_the_cache(tmp_path):
    """compile_elsewhere compiles in another process into numba's cache, and address loads
    it from there (no cache miss: nothing compiled here); once cached, nothing is
    started and address loads it."""
    assert _run_probe(tmp_path).stdout.split() == ["True", "0", "42"]
    assert _run_probe(tmp_path).stdout.split() == ["False", "0", "42"]


def test_a_failed_compile_elsewhere_compiles_here_and_says_so(tmp_path):
    done = _run_probe(tmp_path, PROBE_FAIL_ELSEWHERE="1")
    assert done.stdout.split() == ["True", "1", "42"]  # started; then a cache miss: compiled here
    assert "compiling triple in another process failed (exit code 1); compiling it here" in done.stderr


def test_a_compile_nobody_waited_for_ends_with_its_process(tmp_path):
    """A process that started a compile elsewhere and exits without waiting for it (a
    device made, no dispatch run) stops it: no compiling process outlives it."""
    done = _run_probe(tmp_path, "import probe_kernel\nfrom tt_hal.sim import indirect\n"
                                "assert indirect.compile_elsewhere(probe_kernel.triple, probe_kernel.ARGUMENTS)\n"
                                "print(next(iter(indirect._ELSEWHERE.values())).pid)\n")
    with pytest.raises(ProcessLookupError):  # killed and reaped by its parent at exit
        os.kill(int(done.stdout), 0)
