"""Data movement on a Tensix core (numba), TT-Metal's dataflow_api: circular buffers
(cb_reserve_back, cb_push_back, cb_wait_front, cb_pop_front, get_write_ptr,
get_read_ptr), NoC transfers through address generators (one page range each, or
NOC_GATHER's runs), and a data movement kernel's own stores to and loads from L1
(L1_FILL, L1_LOAD).

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
from tt_hal.sim.memory import fill_bytes, load_int32, move_bytes, page_span, store_int32
from tt_hal.target.isa import ADDRGEN_SLOTS, Op
from tt_hal.target.sizes import ceil_div

CB_OPS = (Op.CB_RESERVE_BACK, Op.CB_PUSH_BACK, Op.CB_WAIT_FRONT, Op.CB_POP_FRONT, Op.GET_WRITE_PTR, Op.GET_READ_PTR)
NOC_TRANSFER_OPS = (Op.ADDRGEN, Op.NOC_READ_PAGE, Op.NOC_WRITE_PAGE, Op.NOC_READ, Op.NOC_WRITE, Op.NOC_READ_SPAN,
                    Op.NOC_WRITE_SPAN, Op.NOC_READ_ROWS, Op.NOC_WRITE_ROWS)
_READS = (Op.NOC_READ_PAGE, Op.NOC_READ, Op.NOC_READ_SPAN, Op.NOC_READ_ROWS)

# The functions an instruction runs take scalars where they can: numba increments and
# decrements (atomically) the reference count of every array a call passes, which
# costs more than a circular-buffer instruction itself.


@numba.njit(cache=True, nogil=True, inline="always")  # called with a literal index: see sim/compute.py
def cb_page_address(address, page_size, pages, count, index):
    """L1 address of page `index` past page `count` (pages pushed or popped so far) of
    a circular buffer at `address`."""
    return address + ((count + index) % pages) * page_size


@numba.njit(cache=True, nogil=True, inline="always")
def cb_sync(op, n, pages, pushed, popped, reserved):
    """cb_reserve_back, cb_push_back, cb_wait_front or cb_pop_front (op) of n pages on a
    circular buffer of `pages` pages that has had `pushed` pages pushed, `popped`
    popped and `reserved` reserved: (fault code, blocked, pushed, popped, reserved)
    after it. A blocked reserve or wait changes nothing; it runs again once another
    kernel has moved."""
    held = pushed - popped
    if n < 0:
        return Fault.CB_NEGATIVE, False, pushed, popped, reserved
    if (op == Op.CB_RESERVE_BACK or op == Op.CB_WAIT_FRONT) and n > pages:
        return Fault.CB_TOO_SMALL, False, pushed, popped, reserved
    if op == Op.CB_RESERVE_BACK:
        if pages - held < n:
            return Fault.OK, True, pushed, popped, reserved
        return Fault.OK, False, pushed, popped, max(reserved, n)
    if op == Op.CB_WAIT_FRONT:
        return Fault.OK, held < n, pushed, popped, reserved
    if op == Op.CB_PUSH_BACK:
        if n > reserved:
            return Fault.CB_PUSH_UNRESERVED, False, pushed, popped, reserved
        return Fault.OK, False, pushed + n, popped, reserved - n
    if n > held:  # Op.CB_POP_FRONT
        return Fault.CB_POP_UNAVAILABLE, False, pushed, popped, reserved
    return Fault.OK, False, pushed, popped + n, reserved


@numba.njit(cache=True, nogil=True)
def find_buffer(buffers, address, is_dram):
    for k in range(buffers.shape[0]):
        if buffers[k, 1] == address and buffers[k, 0] == is_dram:
            return k
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def generator_buffer(addrgens, c, p, a, buffers):
    """(fault code, buffer row k, its base address, page size, is_dram) of address
    generator slot a of kernel p on core c: the slot must be set, to a bound buffer's
    base address and page size."""
    if not 0 <= a < ADDRGEN_SLOTS or addrgens[c, p, a, 1] == 0:
        return Fault.ADDRGEN_UNSET, -1, 0, 0, 0
    address, page_size, is_dram = addrgens[c, p, a, 0], addrgens[c, p, a, 1], addrgens[c, p, a, 2]
    k = find_buffer(buffers, address, is_dram)
    if k < 0 or buffers[k, 3] != page_size:
        return Fault.NOC_OUT_OF_BOUNDS, -1, address, page_size, is_dram
    return Fault.OK, k, address, page_size, is_dram


@numba.njit(cache=True, nogil=True, _nrt=False)
def noc_instruction(op, a, b, cc, d, e, f, g, r, addrgens, c, p, l1, row, l1_base, dram, buffers, buffer_banks,
                    page_rows, page_addresses, fault):
    """One instruction of NOC_TRANSFER_OPS of kernel p on core c (registers r, L1 row
    `row`); returns a fault code. ADDRGEN sets generator slot a to (address, page
    size, is_dram); a read copies a page range of the buffer a generator names into
    L1, a write the other way. The generator's base address must be a bound buffer's,
    with its page size; the range must lie inside one page (a span's: inside the
    buffer's pages, one transfer per page it touches; rows of spans: every row's) and
    the L1 range above the reserved base. Every range is checked before any moves."""
    if op == Op.ADDRGEN:
        addrgens[c, p, a, 0], addrgens[c, p, a, 1], addrgens[c, p, a, 2] = r[b], r[cc], r[d] != 0
        return Fault.OK
    err, k, address, page_size, is_dram = generator_buffer(addrgens, c, p, a, buffers)
    pages = ceil_div(buffers[k, 2], page_size) if err == Fault.OK else 0
    rows, stride, pitch = 1, 0, 0  # rows of spans: `stride` bytes apart in the buffer, `pitch` in L1
    if op == Op.NOC_READ_ROWS or op == Op.NOC_WRITE_ROWS:
        rows, stride, pitch = r[e], r[f], r[g]
    if op == Op.NOC_READ_SPAN or op == Op.NOC_WRITE_SPAN or op == Op.NOC_READ_ROWS or op == Op.NOC_WRITE_ROWS:
        start, l1_at, length = r[b], r[cc], r[d]  # byte r[b] of the buffer on
        fault[4], fault[5], fault[6], fault[7] = address, start, l1_at, length
        if err != Fault.OK:
            return err
        if rows < 0:
            fault[6] = rows
            return Fault.NOC_OUT_OF_BOUNDS
        for i in range(rows):
            # Bounds without sums or products of kernel values: those wrap in int64 and pass.
            at, to = start + i * stride, l1_at + i * pitch
            fault[5], fault[6] = at, to
            if at < 0 or length < 0 or at > pages * page_size or length > pages * page_size - at:
                return Fault.NOC_OUT_OF_BOUNDS
            if to < l1_base or to > l1.shape[1] or length > l1.shape[1] - to:
                fault[4] = to
                return Fault.L1_OUT_OF_BOUNDS
    else:
        page = r[b]
        if op == Op.NOC_READ_PAGE or op == Op.NOC_WRITE_PAGE:
            offset, l1_at, length = 0, r[cc], page_size
        else:
            offset, l1_at, length = r[cc], r[d], r[e]
        fault[4], fault[5], fault[6], fault[7] = address, page, offset, length
        if err != Fault.OK:
            return err
        if page < 0 or page >= pages or offset < 0 or length < 0 or offset > page_size or length > page_size - offset:
            return Fault.NOC_OUT_OF_BOUNDS
        start = page * page_size + offset
        if l1_at < l1_base or l1_at > l1.shape[1] or length > l1.shape[1] - l1_at:
            fault[4] = l1_at
            return Fault.L1_OUT_OF_BOUNDS
    storage = dram if is_dram else l1
    dram_banks = dram.shape[0] if is_dram else 0  # tt_hal.sim.memory.host_offset's
    read = op in _READS
    for i in range(rows):
        at, to, left = start + i * stride, l1_at + i * pitch + row * l1.shape[1], length  # `to`: flat, for move_bytes
        while left > 0:  # one transfer per page
            chunk = min(left, page_size - at % page_size)
            # The buffer's own page placement (tt_hal.sim.memory.page_span), from its rows of the tables.
            place, _ = page_span(buffer_banks, buffers[k, 5], buffers[k, 6], page_rows, page_addresses, buffers[k, 7],
                                 address, page_size, buffers[k, 4], storage.shape[1], dram_banks, at, chunk)
            if read:
                move_bytes(l1, to, storage, place, chunk)
            else:
                move_bytes(storage, place, l1, to, chunk)
            at += chunk
            to += chunk
            left -= chunk
    return Fault.OK


@numba.njit(cache=True, nogil=True, _nrt=False)
def noc_gather(a, entries, l1_at, count, base, pattern, rows, stride, addrgens, c, p, l1, row, l1_base, dram, buffers,
               buffer_banks, page_rows, page_addresses, fault):
    """NOC_GATHER of kernel p on core c (L1 row `row`): `rows` rows (each `stride` bytes
    after the last, its entries and its elements alike) of `count` 4-byte elements into
    L1 from l1_at, element i the one at byte base + 4 * entry i of the buffer generator
    slot a names (entries: int32 words in L1 from `entries`), or the 32-bit `pattern`
    for a negative entry. Each run of consecutive entries is one transfer per page it
    touches. A row's entries and elements are word aligned in the usable L1, apart;
    rows run in order; returns a fault code."""
    fault[4], fault[5], fault[6], fault[7] = entries, l1_at, count, base
    err, k, address, page_size, is_dram = generator_buffer(addrgens, c, p, a, buffers)
    if err != Fault.OK:
        return err
    if rows < 0:
        fault[6] = rows
        return Fault.L1_OUT_OF_BOUNDS
    for r in range(rows):
        err = _gather_row(k, address, page_size, is_dram, entries + r * stride, l1_at + r * stride, count, base,
                          pattern, l1, row, l1_base, dram, buffers, buffer_banks, page_rows, page_addresses, fault)
        if err != Fault.OK:
            return err
    return Fault.OK


@numba.njit(cache=True, nogil=True, inline="always")
def _gather_row(k, address, page_size, is_dram, entries, l1_at, count, base, pattern, l1, row, l1_base, dram, buffers,
                buffer_banks, page_rows, page_addresses, fault):
    """One row of noc_gather into L1 from l1_at, its entries at `entries`, in buffer row k."""
    fault[4], fault[5], fault[6], fault[7] = entries, l1_at, count, base
    if entries % 4 != 0 or l1_at % 4 != 0:
        return Fault.L1_MISALIGNED
    size = l1.shape[1]
    # Bounds without sums or products of kernel values: those wrap in int64 and pass.
    if count < 0 or entries < l1_base or l1_at < l1_base or entries > size or l1_at > size or \
            count > (size - entries) // 4 or count > (size - l1_at) // 4:
        return Fault.L1_OUT_OF_BOUNDS
    if entries < l1_at + 4 * count and l1_at < entries + 4 * count:
        return Fault.L1_OVERLAP
    storage = dram if is_dram else l1
    dram_banks = dram.shape[0] if is_dram else 0  # tt_hal.sim.memory.host_offset's
    buffer_bytes = buffers[k, 2]
    # The page the last run read: byte page_start of the buffer on, at flat page_place of
    # `storage` (a gather's runs mostly fall in a few pages; finding one divides twice).
    page_start, page_place = -page_size, 0
    i = 0
    while i < count:
        index = l1_word(l1, row, entries + 4 * i)
        to = l1_at + 4 * i
        if index < 0:
            l1_store_word(l1, row, to, pattern)
            i += 1
            continue
        j = i + 1
        while j < count and l1_word(l1, row, entries + 4 * j) == index + (j - i):
            j += 1
        if base < 0 or base > buffer_bytes or index > (buffer_bytes - base) // 4 - (j - i):
            fault[4], fault[5], fault[6], fault[7] = address, base, index, 4 * (j - i)
            return Fault.NOC_OUT_OF_BOUNDS
        byte, left, to = base + 4 * index, 4 * (j - i), to + row * size  # `to`: a flat offset for move_bytes
        while left > 0:
            within = byte - page_start
            if within < 0 or within >= page_size:  # another page than the last run's: find its place
                within = byte % page_size
                page_start = byte - within
                page_place, _ = page_span(buffer_banks, buffers[k, 5], buffers[k, 6], page_rows, page_addresses,
                                          buffers[k, 7], address, page_size, buffers[k, 4], storage.shape[1],
                                          dram_banks, page_start, page_size)
            chunk = min(left, page_size - within)
            if chunk == 4:  # one element (a strided gather's every run): no memmove call
                store_int32(l1, to, load_int32(storage, page_place + within))
            else:
                move_bytes(l1, to, storage, page_place + within, chunk)
            byte, to, left = byte + chunk, to + chunk, left - chunk
        i = j
    return Fault.OK


@numba.njit(cache=True, nogil=True)
def l1_fill(l1, row, l1_base, address, length, pattern, fault):
    """L1_FILL on the core with L1 row `row`: `length` bytes from `address` set to the
    32-bit `pattern`, little-endian, repeated. Address and length are multiples of 4
    (the kernel stores uint32_t words) and the range lies in the usable L1, as a NoC
    transfer's must; returns a fault code."""
    fault[4], fault[5], fault[6], fault[7] = address, length, pattern, 0
    if address % 4 != 0 or length % 4 != 0:
        return Fault.L1_MISALIGNED
    if length < 0 or address < l1_base or address > l1.shape[1] or length > l1.shape[1] - address:
        return Fault.L1_OUT_OF_BOUNDS
    low = pattern & 0xFF
    if pattern & 0xFFFFFFFF == low * 0x01010101:  # one byte repeated, as zero padding is
        fill_bytes(l1, row * l1.shape[1] + address, low, length)
    else:
        for at in range(address, address + length, 4):
            l1_store_word(l1, row, at, pattern)
    return Fault.OK


@numba.njit(cache=True, nogil=True)
def l1_load(l1, row, l1_base, address, fault):
    """L1_LOAD on the core with L1 row `row`: (fault code, the little-endian int32 word
    at `address`, sign-extended). The address is a multiple of 4 in the usable L1."""
    fault[4], fault[5], fault[6], fault[7] = address, 4, 0, 0
    if address % 4 != 0:
        return Fault.L1_MISALIGNED, 0
    if address < l1_base or address > l1.shape[1] - 4:
        return Fault.L1_OUT_OF_BOUNDS, 0
    return Fault.OK, l1_word(l1, row, address)


@numba.njit(cache=True, nogil=True, inline="always")
def l1_word(l1, row, address):
    """The little-endian int32 word at `address` of L1 row `row`, sign-extended."""
    return load_int32(l1, row * l1.shape[1] + address)


@numba.njit(cache=True, nogil=True, inline="always")
def l1_store_word(l1, row, address, word):
    """Stores the low 32 bits of `word` little-endian at `address` of L1 row `row`."""
    store_int32(l1, row * l1.shape[1] + address, word)
