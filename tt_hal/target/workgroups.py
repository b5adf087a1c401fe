"""How a dispatch becomes cores and runtime args, the same for every backend
(numba functions, callable from Python and from numba code).

A dispatch of W workgroups runs in rounds of as many workgroups as the worker grid
has cores: the k-th core of the round that starts at workgroup `first` runs
workgroup first + k, its id x fastest over the dispatch grid, and sits at
(k % grid_x, k // grid_x), row-major over the worker grid. Each kernel's runtime
args are its (ArgKind, value) template filled from that workgroup, the push
constants and the bindings' BINDING_* values.
"""

from __future__ import annotations

import numba
import numpy as np

from tt_hal.target.program import ArgKind, RuntimeArg
from tt_hal.target.sizes import ceil_div


@numba.njit(cache=True, nogil=True)
def workgroup_id(first, k, workgroup_count):
    """(x, y, z) of the workgroup the k-th core runs in the round that starts at
    workgroup `first`."""
    w = first + k
    count_x, count_y = workgroup_count[0], workgroup_count[1]
    return w % count_x, w // count_x % count_y, w // (count_x * count_y)


@numba.njit(cache=True, nogil=True)
def core_coord(k, grid_x):
    """(x, y) of the k-th core of a round on a worker grid `grid_x` cores wide."""
    return k % grid_x, k // grid_x


BINDING_VALUES = 6  # what binding_args returns


@numba.njit(cache=True, nogil=True)
def binding_args(address, is_dram, page_size, offset, length):
    """The BINDING_* values of a binding of `length` bytes at byte `offset` of its
    buffer: (address, is_dram, first page, pages rounded up, byte offset, page size)."""
    return address, is_dram, offset // page_size, ceil_div(length, page_size), offset, page_size


def binding_table(bindings) -> np.ndarray:
    """The binding_args of each (address, is_dram, page size, offset, length), one row
    each, as fill_runtime_args reads them."""
    return np.array([binding_args(*binding) for binding in bindings], np.int64).reshape(-1, BINDING_VALUES)


def arg_template(template: tuple[RuntimeArg, ...]) -> np.ndarray:
    """A kernel's runtime-arg template as fill_runtime_args reads it: (n, 2) rows of
    (ArgKind, value)."""
    return np.array([(int(arg.kind), arg.value) for arg in template], np.int64).reshape(-1, 2)


@numba.njit(cache=True, nogil=True)
def fill_runtime_args(template, constants, ids, workgroup_count, bindings, out):
    """out[:n] = the runtime args of an (n, 2) template for the workgroup of id `ids`;
    row b of `bindings` is binding b's binding_args."""
    for k in range(template.shape[0]):
        kind, value = template[k, 0], template[k, 1]
        if kind == ArgKind.LITERAL:
            out[k] = value
        elif kind == ArgKind.CONSTANT:
            out[k] = constants[value]
        elif kind == ArgKind.WORKGROUP_ID:
            out[k] = ids[value]
        elif kind == ArgKind.WORKGROUP_COUNT:
            out[k] = workgroup_count[value]
        elif kind == ArgKind.BINDING_ADDRESS:
            out[k] = bindings[value, 0]
        elif kind == ArgKind.BINDING_IS_DRAM:
            out[k] = bindings[value, 1]
        elif kind == ArgKind.BINDING_PAGE_OFFSET:
            out[k] = bindings[value, 2]
        elif kind == ArgKind.BINDING_PAGES:
            out[k] = bindings[value, 3]
        elif kind == ArgKind.BINDING_BYTE_OFFSET:
            out[k] = bindings[value, 4]
        else:  # ArgKind.BINDING_PAGE_SIZE
            out[k] = bindings[value, 5]
