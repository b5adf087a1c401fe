"""Data movement on a Tensix core (numba), TT-Metal's dataflow_api: circular buffers
(cb_reserve_back, cb_push_back, cb_wait_front, cb_pop_front, get_write_ptr,
get_read_ptr) and NoC transfers through address generators.

Circular buffer `cb` is cb_config[cb] = (data format, page size, pages, L1 address).
Each core counts the pages pushed to, popped from and reserved in each of its
buffers: the write pointer is page `pushed % pages`, the read pointer page
`popped % pages`. An address generator (address, page size, is_dram) names a bound
buffer by its base address; the buffer decides where each page lives. Transfers
complete at once, so barriers only order.
"""

from __future__ import annotations

import numba

from tt_hal.sim.faults import Fault
from tt_hal.sim.memory import copy_bytes, page_span
from tt_hal.target.isa import ADDRGEN_SLOTS, Op

CB_OPS = (Op.CB_RESERVE_BACK, Op.CB_PUSH_BACK, Op.CB_WAIT_FRONT, Op.CB_POP_FRONT, Op.GET_WRITE_PTR, Op.GET_READ_PTR)
NOC_OPS = (Op.ADDRGEN, Op.NOC_READ_PAGE, Op.NOC_WRITE_PAGE, Op.NOC_READ, Op.NOC_WRITE, Op.NOC_READ_BARRIER,
           Op.NOC_WRITE_BARRIER)


@numba.njit(cache=True, nogil=True)
def cb_page_address(cb_config, cb, count, index):
    """L1 address of page `index` past page `count` (pages pushed or popped so far)."""
    return cb_config[cb, 3] + ((count + index) % cb_config[cb, 2]) * cb_config[cb, 1]


@numba.njit(cache=True, nogil=True)
def cb_instruction(op, a, b, r, c, cb_config, cb_pushed, cb_popped, cb_reserved, fault):
    """One circular-buffer instruction (an op of CB_OPS) of core c with registers r:
    returns (fault code, blocked). A blocked reserve or wait changes nothing, so it
    runs again once another kernel has moved."""
    cb = b if op == Op.GET_WRITE_PTR or op == Op.GET_READ_PTR else a
    pages = cb_config[cb, 2]
    if pages == 0:
        return Fault.CB_UNCONFIGURED, False
    if op == Op.GET_WRITE_PTR:
        r[a] = cb_page_address(cb_config, cb, cb_pushed[c, cb], 0)
        return Fault.OK, False
    if op == Op.GET_READ_PTR:
        r[a] = cb_page_address(cb_config, cb, cb_popped[c, cb], 0)
        return Fault.OK, False
    n = r[b]
    held = cb_pushed[c, cb] - cb_popped[c, cb]
    fault[4], fault[5], fault[6], fault[7] = cb, n, held, pages
    if n < 0:
        return Fault.CB_NEGATIVE, False
    if (op == Op.CB_RESERVE_BACK or op == Op.CB_WAIT_FRONT) and n > pages:
        return Fault.CB_TOO_SMALL, False
    if op == Op.CB_RESERVE_BACK:
        if pages - held < n:
            return Fault.OK, True
        cb_reserved[c, cb] = max(cb_reserved[c, cb], n)
    elif op == Op.CB_WAIT_FRONT:
        if held < n:
            return Fault.OK, True
    elif op == Op.CB_PUSH_BACK:
        if n > cb_reserved[c, cb]:
            return Fault.CB_PUSH_UNRESERVED, False
        cb_pushed[c, cb] += n
        cb_reserved[c, cb] -= n
    else:  # Op.CB_POP_FRONT
        if n > held:
            return Fault.CB_POP_UNAVAILABLE, False
        cb_popped[c, cb] += n
    return Fault.OK, False


@numba.njit(cache=True, nogil=True)
def noc_instruction(op, a, b, cc, d, e, r, gens, core_l1, l1_base, l1, dram, buffers, buffer_banks, page_rows,
                    page_addresses, fault):
    """One NoC instruction (an op of NOC_OPS) of a kernel with registers r and address
    generators `gens` (ADDRGEN_SLOTS, 3), on a core whose L1 is core_l1; returns a
    fault code."""
    if op == Op.ADDRGEN:
        gens[a, 0], gens[a, 1], gens[a, 2] = r[b], r[cc], r[d] != 0
        return Fault.OK
    if op == Op.NOC_READ_BARRIER or op == Op.NOC_WRITE_BARRIER:
        return Fault.OK  # transfers complete at once
    if not 0 <= a < ADDRGEN_SLOTS or gens[a, 1] == 0:
        return Fault.ADDRGEN_UNSET
    if op == Op.NOC_READ_PAGE or op == Op.NOC_WRITE_PAGE:
        offset, l1_at, length = 0, r[cc], gens[a, 1]
    else:
        offset, l1_at, length = r[cc], r[d], r[e]
    return noc_transfer(op == Op.NOC_READ_PAGE or op == Op.NOC_READ, gens[a], r[b], offset, length, core_l1, l1_at,
                        l1_base, l1, dram, buffers, buffer_banks, page_rows, page_addresses, fault)


@numba.njit(cache=True, nogil=True)
def find_buffer(buffers, address, is_dram):
    for k in range(buffers.shape[0]):
        if buffers[k, 1] == address and buffers[k, 0] == is_dram:
            return k
    return -1


@numba.njit(cache=True, nogil=True)
def noc_transfer(is_read, gen, page, offset, length, core_l1, l1_at, l1_base, l1, dram, buffers, buffer_banks,
                 page_rows, page_addresses, fault):
    """One NoC read (buffer page -> this core's L1) or write (the other way). The
    generator's base address must be a bound buffer's, with its page size; the
    range must lie inside one page and the L1 range above the reserved base."""
    k = find_buffer(buffers, gen[0], gen[2])
    fault[4], fault[5], fault[6], fault[7] = gen[0], page, offset, length
    if k < 0 or buffers[k, 3] != gen[1]:
        return Fault.NOC_OUT_OF_BOUNDS
    page_size = buffers[k, 3]
    if page < 0 or page * page_size >= buffers[k, 2] or offset < 0 or length < 0 or offset + length > page_size:
        return Fault.NOC_OUT_OF_BOUNDS
    if l1_at < l1_base or l1_at + length > core_l1.shape[0]:
        fault[4] = l1_at
        return Fault.L1_OUT_OF_BOUNDS
    # The buffer's own page placement (tt_hal.sim.memory.page_span), from its rows of the tables.
    table, pages = buffers[k, 7], -(-buffers[k, 2] // page_size)
    table_end = table + pages if table >= 0 else 0
    banks = buffer_banks[buffers[k, 5]:buffers[k, 5] + buffers[k, 6]]
    bank_row, at, _ = page_span(banks, page_rows[max(table, 0):table_end], page_addresses[max(table, 0):table_end],
                                buffers[k, 1], page_size, buffers[k, 4], page * page_size + offset, length)
    storage = dram if gen[2] else l1
    if is_read:
        copy_bytes(core_l1[l1_at:l1_at + length], storage[bank_row, at:at + length])
    else:
        copy_bytes(storage[bank_row, at:at + length], core_l1[l1_at:l1_at + length])
    return Fault.OK
