"""The gather program (tt_hal/kernels/gather.py) through the HAL: a tile tensor whose
elements are read from a row-major source where an index table says, or filled.

Its numpy twin: out = where(table >= 0, source[table], fill), tilized. Checked bit for
bit over random tables (single elements, runs of consecutive indices that cross the
source's 4096-byte pages and a row's end, fills), shapes, batches, workgroups and the
source's byte offset; the source buffer must be left alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_rowmajor import dispatch, host_bytes, placed, raw_buffer, tile_buffer, tiles, tilize_twin
from tt_hal.kernels.gather import gather
from tt_hal.target.layout import DataFormat
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

FILL = 0x7FC00001


@pytest.fixture(scope="module")
def executable(device):
    return device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([gather(DataFormat.float32, FILL)]))


def random_table(rng, size: int, n: int) -> np.ndarray:
    """`size` indices into n elements: runs of consecutive ones, single ones and -1."""
    table = np.empty(size, np.int64)
    at = 0
    while at < size:
        length = min(size - at, int(rng.integers(1, 80)))
        kind = rng.integers(0, 3)
        if kind == 0:
            start = int(rng.integers(0, max(1, n - length)))
            table[at:at + length] = np.minimum(np.arange(start, start + length), n - 1)
        elif kind == 1:
            table[at:at + length] = rng.integers(0, n, length)
        else:
            table[at:at + length] = -1
        at += length
    return table


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 70), columns=st.one_of(st.integers(1, 70), st.sampled_from([256, 300])),
       batches=st.sampled_from([1, 2]), n=st.integers(1, 3000), offset=st.integers(0, 100).map(lambda k: 16 * k),
       workgroups=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_gather_matches_its_twin(device, executable, rows, columns, batches, n, offset, workgroups, seed):
    rng = np.random.default_rng(seed)
    data, binding_offset, _ = placed(n * 4, offset, int(rng.integers(0, 5000)), False, seed)
    source = data[offset:offset + n * 4].view(np.uint32)
    table = random_table(rng, batches * rows * columns, n)
    indices = raw_buffer(device, table.astype(np.int32))
    src = raw_buffer(device, data)
    out = tile_buffer(device, DataFormat.float32, rows, columns,
                      np.full(tiles(rows, columns, batches) * 4096, 0xA5, np.uint8), batches)
    dispatch(device, executable, rows, columns, [(src, binding_offset, n * 4), indices, out], [0, 0], workgroups,
             batches)
    expected = np.where(table >= 0, source[np.maximum(table, 0)], np.uint32(FILL)).astype(np.uint32)
    assert np.array_equal(host_bytes(out), tilize_twin(expected.reshape(batches, rows, columns)))
    assert np.array_equal(host_bytes(src), data)


def test_a_gather_of_two_byte_elements_is_unimplemented():
    from hal.status import HalError, StatusCode
    with pytest.raises(HalError) as error:
        gather(DataFormat.bfloat16)
    assert error.value.code == StatusCode.UNIMPLEMENTED and "4-byte elements" in error.value.message
