"""Workgroups on cores and runtime args (tt_hal/target/workgroups.py), which the
simulator and the hardware backend share."""

from __future__ import annotations

import itertools

import numba
import numpy as np

from tt_hal.target.program import ArgKind, RuntimeArg
from tt_hal.target.workgroups import (
    BINDING_VALUES,
    arg_template,
    binding_args,
    binding_table,
    core_coord,
    fill_runtime_args,
    workgroup_id,
)


def test_workgroups_go_x_fastest_over_rounds():
    count = np.array([3, 2, 2], np.int64)
    expected = [(x, y, z) for z, y, x in itertools.product(range(2), range(2), range(3))]
    cores = 5
    got = [workgroup_id(first, k, count) for first in range(0, 12, cores) for k in range(min(cores, 12 - first))]
    assert got == expected


def test_cores_of_a_round_go_row_major_over_the_grid():
    assert [core_coord(k, 3) for k in range(7)] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2)]


def test_binding_args_count_whole_pages_and_keep_the_byte_offset():
    assert binding_args(0x1000, True, 2048, 4096, 2049) == (0x1000, True, 2, 2, 4096, 2048)
    assert binding_args(64, False, 32, 0, 32) == (64, False, 0, 1, 0, 32)
    assert binding_args(0x1000, True, 4096, 4176, 10) == (0x1000, True, 1, 1, 4176, 4096)  # IREE: any byte offset


def test_binding_table_has_a_row_per_binding():
    assert binding_table([]).shape == (0, BINDING_VALUES)
    assert binding_table([(64, False, 32, 16, 8)]).tolist() == [[64, 0, 0, 1, 16, 32]]


def test_every_arg_kind_is_filled_from_its_source():
    constants = np.array([11, 12], np.int64)
    ids, count = np.array([1, 2, 3], np.int64), np.array([4, 5, 6], np.int64)
    bindings = binding_table([(0x100, False, 32, 0, 32), (0x2000, True, 64, 144, 100)])
    expected = {ArgKind.LITERAL: 7, ArgKind.CONSTANT: 12, ArgKind.WORKGROUP_ID: 3, ArgKind.WORKGROUP_COUNT: 6,
                ArgKind.BINDING_ADDRESS: 0x2000, ArgKind.BINDING_IS_DRAM: 1, ArgKind.BINDING_PAGE_OFFSET: 2,
                ArgKind.BINDING_PAGES: 2, ArgKind.BINDING_BYTE_OFFSET: 144, ArgKind.BINDING_PAGE_SIZE: 64}
    values = {ArgKind.LITERAL: 7, ArgKind.CONSTANT: 1, ArgKind.WORKGROUP_ID: 2, ArgKind.WORKGROUP_COUNT: 2}
    template = tuple(RuntimeArg(kind, values.get(kind, 1)) for kind in ArgKind)
    out = np.full(len(template) + 1, -1, np.int64)
    fill_runtime_args(arg_template(template), constants, ids, count, bindings, out)
    assert out.tolist() == [expected[kind] for kind in ArgKind] + [-1]


def test_numba_code_calls_them():
    @numba.njit
    def first_core_of_round(first, count, grid_x):
        return workgroup_id(first, 0, count), core_coord(0, grid_x)

    assert first_core_of_round(7, np.array([3, 2, 2], np.int64), 8) == ((1, 0, 1), (0, 0))
