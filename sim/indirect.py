"""Calls from one jitted function to another through the callee's address (numba).

numba links a jitted callee's code into every caller and optimizes and emits it again
there (and a callee inlined at numba's level is typed again there too), so the tile
ops, called from the interpreter's one big function, cost their compile twice on a
cold start. A function declared here compiles once, on its own, when its address is
first asked for; the caller takes the address as an int64 argument and calls it with
`call`, which numba types from the callee's declared signatures without compiling or
linking the callee. Being a compile unit of its own, it can also compile in another
process (compile_elsewhere) while this one compiles its caller.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys

from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from hal.log import get_logger

log = get_logger(__name__)

# Dispatcher -> the argument types it is declared for (each returning int64).
_DECLARED: dict[object, tuple[tuple[types.Type, ...], ...]] = {}
# (dispatcher, argument types) -> the process compiling it into numba's on-disk cache
_ELSEWHERE: dict[tuple[object, tuple[types.Type, ...]], subprocess.Popen] = {}
# How long `address` waits for such a process before it compiles the function itself.
ELSEWHERE_TIMEOUT = 300.0


def declare(dispatcher, *argument_types: tuple[types.Type, ...]):
    """Declares the argument types `dispatcher` (returning an int64) is called with through
    `call`; returns the dispatcher."""
    _DECLARED[dispatcher] = argument_types
    return dispatcher


def _signature(dispatcher, argument_types: tuple[types.Type, ...]):
    if argument_types not in _DECLARED.get(dispatcher, ()):
        raise TypeError(f"{dispatcher.py_func.__name__} is not declared for {argument_types}")
    return types.int64(*argument_types)  # int64, not the Fault its body returns


def _cached(dispatcher, signature) -> bool:
    """Does numba's on-disk cache hold `dispatcher`'s overload for `signature`? Read from
    the cache's index as Dispatcher.compile finds it, in under a millisecond: no code
    loaded (a third of a second for compute), no target context set up (as long).
    numba has no public call for this: its internal ones, and True (nothing started)
    if they ever change."""
    try:
        cache = dispatcher._cache
        return cache._index_key(signature, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
    except (AttributeError, TypeError):
        return True


def compile_elsewhere(dispatcher, argument_types: tuple[types.Type, ...]) -> bool:
    """Starts compiling `dispatcher` for `argument_types` into numba's on-disk cache in a
    process of its own, unless it is compiled here or cached already (then `address`
    loads it); `address` waits for that process and loads what it compiled. For a cold
    start on more than one core: the caller compiles something else meanwhile. True if
    started."""
    signature = _signature(dispatcher, argument_types)
    key = (dispatcher, argument_types)
    if argument_types in dispatcher.overloads or key in _ELSEWHERE or _cached(dispatcher, signature):
        return False
    index = _DECLARED[dispatcher].index(argument_types)
    script = ("import importlib, sys\nfrom tt_hal.sim import indirect\n"
              "function = getattr(importlib.import_module(sys.argv[1]), sys.argv[2])\n"
              "indirect.address(function, indirect.declared(function)[int(sys.argv[3])])\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "TT_HAL_QUIET": "1"}
    _ELSEWHERE[key] = subprocess.Popen(
        [sys.executable, "-c", script, dispatcher.py_func.__module__, dispatcher.py_func.__name__, str(index)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    return True


@atexit.register
def _stop_elsewhere() -> None:
    """Ends the compiles this process started and never waited for (a device made and
    no dispatch run): none outlives its process, busy for seconds with nobody waiting.
    numba writes a cache entry whole, so a stopped compile leaves none behind."""
    for process in _ELSEWHERE.values():
        if process.poll() is None:
            process.kill()
            process.wait()
    _ELSEWHERE.clear()


def declared(dispatcher) -> tuple[tuple[types.Type, ...], ...]:
    """The argument types `dispatcher` is declared for."""
    return _DECLARED[dispatcher]


def declared_functions() -> list:
    """Every dispatcher declared here (the units called by address)."""
    return list(_DECLARED)


def address(dispatcher, argument_types: tuple[types.Type, ...]) -> int:
    """The address of `dispatcher` compiled for declared `argument_types`: compiled here, or
    loaded from numba's cache, on first use (after the process compile_elsewhere started
    for it ends)."""
    signature = _signature(dispatcher, argument_types)
    process = _ELSEWHERE.pop((dispatcher, argument_types), None)
    if process is not None:
        try:
            if process.wait(timeout=ELSEWHERE_TIMEOUT) != 0:
                log.warning("compiling %s in another process failed (exit code %d); compiling it here",
                            dispatcher.py_func.__name__, process.returncode)
        except subprocess.TimeoutExpired:
            log.warning("compiling %s in another process took over %.0f s; compiling it here",
                        dispatcher.py_func.__name__, ELSEWHERE_TIMEOUT)
            process.kill()
            process.wait()
    if argument_types not in dispatcher.overloads:
        dispatcher.compile(signature)  # loads it from numba's cache when it is there
    result = dispatcher.overloads[argument_types]
    return result.library.get_pointer_to_function(result.fndesc.llvm_func_name)


@intrinsic
def call(typingctx, function, at, arguments):
    """function(*arguments) of the jitted `function` (a global) at address `at`: the
    address of `function` for exactly these argument types. Raises what it raises."""
    if not isinstance(function, types.Dispatcher) or not isinstance(arguments, types.BaseTuple):
        return None
    argument_types = tuple(arguments.types)
    if argument_types not in _DECLARED.get(function.dispatcher, ()):
        raise errors.TypingError(f"{function.dispatcher.py_func.__name__} is not declared for {argument_types}"
                                 " (sim/indirect.declare)")

    def codegen(context, builder, signature, args):
        _, at_value, values = args
        values = [builder.extract_value(values, i) for i in range(len(argument_types))]
        pointer = builder.inttoptr(at_value, context.call_conv.get_function_type(
            types.int64, argument_types).as_pointer())
        status, result = context.call_conv.call_function(builder, pointer, types.int64, argument_types, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return types.int64(function, at, arguments), codegen

