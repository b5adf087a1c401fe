"""Calls from one jitted function to another through the callee's address (numba).

numba links a jitted callee's code into every caller and optimizes and emits it again
there (and a callee inlined at numba's level is typed again there too), so the tile
ops, called from the interpreter's one big function, cost their compile twice on a
cold start. A function declared here compiles once, on its own, when its address is
first asked for; the caller takes the address as an int64 argument and calls it with
`call`, which numba types from the callee's declared signatures without compiling or
linking the callee.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

# Dispatcher -> the argument types it is declared for (each returning int64).
_DECLARED: dict[object, tuple[tuple[types.Type, ...], ...]] = {}


def declare(dispatcher, *argument_types: tuple[types.Type, ...]):
    """Declares the argument types `dispatcher` (returning an int64) is called with through
    `call`; returns the dispatcher."""
    _DECLARED[dispatcher] = argument_types
    return dispatcher


def address(dispatcher, argument_types: tuple[types.Type, ...]) -> int:
    """The address of `dispatcher` compiled for declared `argument_types` (compiling it,
    or loading it from numba's cache, on first use)."""
    if argument_types not in _DECLARED.get(dispatcher, ()):
        raise TypeError(f"{dispatcher.py_func.__name__} is not declared for {argument_types}")
    if argument_types not in dispatcher.overloads:
        dispatcher.compile(types.int64(*argument_types))  # int64, not the Fault its body returns
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

