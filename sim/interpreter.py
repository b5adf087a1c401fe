"""Tensix cores running a program (numba): the instruction loop and its scheduler.

All cores of a dispatch round run in one numba call. Each core has three kernels
(writer on RISCV_0, reader on RISCV_1, compute); the scheduler runs them round-robin,
each until it blocks on a circular buffer or halts, so kernels cooperate as they do
on the chip, and it runs a core until none of its kernels can move before it goes on
to the next: a round's cores share no circular buffer (nothing of the ISA waits on
another core), so this is an order the chip could take, and one core's circular
buffers and Dst stay in the host's caches while it runs (the 64 cores' together do
not). A pass over the cores in which nothing moves while some kernel is still
blocked is a deadlock, reported with what every kernel waits for.

The loop itself runs scalar instructions, control flow, argument reads and Dst's
acquire and release. Circular-buffer, NoC and L1 store instructions are
sim/dataflow.py's (the loop hands a buffer's counts to cb_sync and stores what it
returns), compute instructions sim/compute.py's (tilize and untilize of blocks
through layout_block, the others through compute).
"""

from __future__ import annotations

import numba
import numpy as np

from tt_hal.sim import indirect
from tt_hal.sim.compute import COMPUTE_AT, compute, layout_block
from tt_hal.sim.dataflow import (
    CB_OPS,
    NOC_TRANSFER_OPS,
    cb_page_address,
    cb_sync,
    l1_fill,
    l1_load,
    noc_gather,
    noc_instruction,
)
from tt_hal.sim.faults import Fault
from tt_hal.sim.numerics import OPERAND_ROWS
from tt_hal.target.isa import Op, Processor
from tt_hal.target.sizes import TILE_ELEMENTS
from tt_hal.target.workgroups import fill_runtime_args, workgroup_id

# State row p of a core holds the kernel of Processor(p).
WRITER, READER, COMPUTE = int(Processor.RISCV_0), int(Processor.RISCV_1), int(Processor.COMPUTE)
PROCESSORS = len(Processor)
# Budget units of a tile op against 1 for a scalar instruction (SimDevice.instruction_budget):
# a tile op takes a few microseconds here, a scalar instruction nanoseconds, so a
# runaway loop of tile ops meets the budget in seconds; 64 leaves a 4096^3 matmul
# (2.1M matmul_tiles) within the default budget.
TILE_OP_COST = 64
NO_WAIT = -1  # waiting[c, p, 0] of a kernel that is not blocked
# Budget units between two looks at the `stop` flag a dispatch's watchdog sets at its
# wall-clock deadline: microseconds of scalar instructions, a few dozen tile ops.
# stop = (the dispatch the watchdog stopped, the dispatch running), numbered: the cores
# stop when they are equal, so one array serves a thread's dispatches one after another
# and a flag written late for the last dispatch never stops the next.
STOP_POLL = 4096
# Bytes of compute's working space (run_round's `work`): three float32 tiles, a float64
# one and matmul_tile_exact's operands.
WORK_BYTES = (5 + OPERAND_ROWS) * 4 * TILE_ELEMENTS


# Without reference counts: every kernel switch takes views of the state arrays, which
# numba would count atomically; the working space is the caller's (this allocates nothing).
@numba.njit(cache=True, nogil=True, _nrt=False)
def run_round(codes, ct_args, arg_table, rt_counts, constants, binding_args, workgroup_count, first, lo, hi,
              core_rows, l1, dram, l1_base, buffers, buffer_banks, page_rows, page_addresses, cb_config,
              fidelity, fp32_dest, dst_capacity, fpu_model, addresses, budget, stop,
              workgroup_ids, rt_args, pcs, regs, done, waiting, cb_pushed, cb_popped, cb_reserved, addrgens, dst,
              dirty, instructions, acquired, fault, work):
    """Runs cores [lo, hi) of a round until all their kernels halt, or a fault. Core c
    uses L1 row core_rows[c] and runs workgroup first + c; its state is set up here:
    workgroup ids and runtime args from `arg_table` (3, n, 2) = (ArgKind, value) rows,
    everything else reset. arg_table None: workgroup_ids and rt_args are the caller's
    (a host that sets them per core, as the tests' fake TT-Metal does).

    State arrays are the caller's, so that a fault can be reported from them:
    pcs/done (cores, 3); regs (cores, 3, 32); waiting (cores, 3, 2) = (cb, pages) a
    blocked kernel waits for; cb_pushed/popped/reserved (cores, 32); addrgens
    (cores, 3, ADDRGEN_SLOTS, 3) = (address, page size, is_dram); dst (cores, 16,
    1024) and dirty (cores,): Dst tiles [0, dirty) written since the last release;
    instructions (cores, 3) counts what each kernel executed (for traces); acquired
    (cores,): a kernel holds Dst. fault: (code, core, processor, pc, a, b, c, d), zeroed
    here. work: WORK_BYTES of uint8, compute's working space. stop: (2,), the cores stop (Fault.DEADLINE)
    when another thread sets stop[0] to stop[1] (STOP_POLL). fpu_model: FpuModel.jit_argument;
    addresses: compute.kernel_addresses(fpu_model).
    Returns the budget spent: an instruction costs 1 and a tile op (compute,
    tilize_block / untilize_block) TILE_OP_COST (matmul_block: per tile product), so
    that the budget bounds time: a tile op is a thousand elements' work, a scalar
    instruction one; a row of NOC_READ_ROWS / NOC_WRITE_ROWS and an element of
    NOC_GATHER cost 1 each, charged before the instruction runs.

    One jitted function, the setup and the loop: numba optimizes a jitted function with
    everything it calls linked in, so each level of calls above the loop would cost its
    compile again (seconds of a cold start). The tile ops it calls by address
    (sim/indirect.py), so they compile once, apart."""
    if arg_table is not None:
        for c in range(lo, hi):
            workgroup_ids[c, 0], workgroup_ids[c, 1], workgroup_ids[c, 2] = workgroup_id(first, c, workgroup_count)
            for p in range(PROCESSORS):
                fill_runtime_args(arg_table[p, :rt_counts[p]], constants, workgroup_ids[c], workgroup_count,
                                  binding_args, rt_args[c, p])
    fault[:] = 0
    pcs[lo:hi] = 0
    regs[lo:hi] = 0
    done[lo:hi] = False
    waiting[lo:hi] = NO_WAIT
    cb_pushed[lo:hi] = 0
    cb_popped[lo:hi] = 0
    cb_reserved[lo:hi] = 0
    addrgens[lo:hi] = 0
    instructions[lo:hi] = 0
    acquired[lo:hi] = False
    for c in range(lo, hi):  # Dst is clean between dispatches: what the last run left unreleased
        dst[c, :dirty[c], :] = 0.0
        dirty[c] = 0
    # compute's working space: three float32 tiles, a float64 one and matmul_tile_exact's operands
    tile = 4 * TILE_ELEMENTS
    src_a, src_b, scratch = work[:tile].view(np.float32), work[tile:2 * tile].view(np.float32), \
        work[2 * tile:3 * tile].view(np.float32)
    results = work[3 * tile:5 * tile].view(np.float64)
    operands = work[5 * tile:].view(np.uint32).reshape(OPERAND_ROWS, TILE_ELEMENTS)
    executed = 0  # instructions, for traces
    spent = 0  # budget units: an instruction 1, a tile op TILE_OP_COST
    poll = min(budget, STOP_POLL)  # where the budget and the stop flag are looked at next
    while True:
        moved = False
        running = False
        for c in range(lo, hi):
            row = core_rows[c]
            progress = True
            while progress:  # core c until none of its kernels moves: its L1 and Dst stay in the host's caches
                progress = False
                for p in (READER, COMPUTE, WRITER):
                    if done[c, p]:
                        continue
                    running = True
                    code = codes[p]
                    r = regs[c, p]
                    pc = pcs[c, p]
                    before = executed
                    while True:
                        if spent >= poll:
                            if spent >= budget or stop[0] == stop[1]:
                                fault[0] = Fault.BUDGET if spent >= budget else Fault.DEADLINE
                                fault[1], fault[2], fault[3], fault[4] = c, p, pc, budget
                                pcs[c, p] = pc
                                instructions[c, p] += executed - before
                                return spent
                            poll = min(budget, spent + STOP_POLL)
                        op = code[pc, 0]
                        a, b, cc, d, e, f = code[pc, 1], code[pc, 2], code[pc, 3], code[pc, 4], code[pc, 5], code[pc, 6]
                        executed += 1
                        spent += 1
                        nxt = pc + 1
                        err = Fault.OK
                        if op == Op.LI:
                            r[a] = b
                        elif op == Op.MOV:
                            r[a] = r[b]
                        elif op == Op.ADD:
                            r[a] = r[b] + r[cc]
                        elif op == Op.SUB:
                            r[a] = r[b] - r[cc]
                        elif op == Op.MUL:
                            r[a] = r[b] * r[cc]
                        elif op == Op.DIV or op == Op.MOD:
                            if r[cc] == 0:
                                err = Fault.DIVIDE_BY_ZERO
                            elif op == Op.DIV:
                                r[a] = r[b] // r[cc]
                            else:
                                r[a] = r[b] % r[cc]
                        elif op == Op.AND:
                            r[a] = r[b] & r[cc]
                        elif op == Op.OR:
                            r[a] = r[b] | r[cc]
                        elif op == Op.XOR:
                            r[a] = r[b] ^ r[cc]
                        elif op == Op.SHL:
                            r[a] = r[b] << r[cc]
                        elif op == Op.SHR:
                            r[a] = r[b] >> r[cc]
                        elif op == Op.MIN:
                            r[a] = min(r[b], r[cc])
                        elif op == Op.MAX:
                            r[a] = max(r[b], r[cc])
                        elif op == Op.ADDI:
                            r[a] = r[b] + cc
                        elif op == Op.MULI:
                            r[a] = r[b] * cc
                        elif op == Op.JMP:
                            nxt = a
                        elif op == Op.BEQ:
                            nxt = cc if r[a] == r[b] else nxt
                        elif op == Op.BNE:
                            nxt = cc if r[a] != r[b] else nxt
                        elif op == Op.BLT:
                            nxt = cc if r[a] < r[b] else nxt
                        elif op == Op.BGE:
                            nxt = cc if r[a] >= r[b] else nxt
                        elif op == Op.HALT:
                            done[c, p] = True
                            progress = True
                            break
                        elif op == Op.ARG:
                            if not 0 <= b < rt_counts[p]:
                                err = Fault.ARG_INDEX
                            else:
                                r[a] = rt_args[c, p, b]
                        elif op == Op.CT_ARG:
                            if not 0 <= b < ct_args.shape[1]:
                                err = Fault.ARG_INDEX
                            else:
                                r[a] = ct_args[p, b]
                        elif op == Op.CONSTANT:
                            if not 0 <= b < constants.shape[0]:
                                err = Fault.ARG_INDEX
                            else:
                                r[a] = constants[b]
                        elif op == Op.WORKGROUP_ID:
                            r[a] = workgroup_ids[c, b]
                        elif op == Op.WORKGROUP_COUNT:
                            r[a] = workgroup_count[b]
                        elif op == Op.WORKGROUP_RANGE:
                            total, ids = r[cc], workgroup_ids[c]
                            w = (ids[2] * workgroup_count[1] + ids[1]) * workgroup_count[0] + ids[0]
                            n = workgroup_count[0] * workgroup_count[1] * workgroup_count[2]
                            r[a], r[b] = w * total // n, (w + 1) * total // n
                        elif op in CB_OPS:
                            cb = b if op == Op.GET_WRITE_PTR or op == Op.GET_READ_PTR else a
                            pages = cb_config[cb, 2]
                            if pages == 0:
                                err = Fault.CB_UNCONFIGURED
                            elif op == Op.GET_WRITE_PTR or op == Op.GET_READ_PTR:
                                count = cb_pushed[c, cb] if op == Op.GET_WRITE_PTR else cb_popped[c, cb]
                                r[a] = cb_page_address(cb_config[cb, 3], cb_config[cb, 1], pages, count, 0)
                            else:
                                n = r[b]
                                err, blocked, pushed, popped, reserved = cb_sync(
                                    op, n, pages, cb_pushed[c, cb], cb_popped[c, cb], cb_reserved[c, cb])
                                if err != Fault.OK:  # its details: the buffer, the pages asked for, held, its size
                                    fault[4], fault[5], fault[6], fault[7] = cb, n, pushed - popped, pages
                                elif blocked:
                                    waiting[c, p, 0], waiting[c, p, 1] = cb, n
                                    break
                                else:
                                    cb_pushed[c, cb], cb_popped[c, cb], cb_reserved[c, cb] = pushed, popped, reserved
                        elif op in NOC_TRANSFER_OPS:
                            if op == Op.NOC_READ_ROWS or op == Op.NOC_WRITE_ROWS:
                                spent += min(max(r[e], 0), budget)  # a row costs what an instruction does
                            if spent > budget:  # charged before it runs: a runaway row count stops here
                                err, fault[4] = Fault.BUDGET, budget
                            else:
                                err = noc_instruction(op, a, b, cc, d, e, f, code[pc, 7], r, addrgens, c, p, l1, row,
                                                      l1_base, dram, buffers, buffer_banks, page_rows, page_addresses,
                                                      fault)
                        elif op == Op.NOC_READ_BARRIER or op == Op.NOC_WRITE_BARRIER:
                            pass  # transfers complete at once
                        elif op == Op.L1_FILL:
                            err = l1_fill(l1, row, l1_base, r[a], r[b], cc, fault)
                        elif op == Op.L1_LOAD:
                            err, r[a] = l1_load(l1, row, l1_base, r[b], fault)
                        elif op == Op.NOC_GATHER:
                            rows, count = min(max(r[code[pc, 7]], 0), budget), min(max(r[d], 0), budget)
                            spent += rows * count  # an element costs what an instruction does, charged before it runs
                            if spent > budget:
                                err, fault[4] = Fault.BUDGET, budget
                            else:
                                err = noc_gather(a, r[b], r[cc], r[d], r[e], f, r[code[pc, 7]], r[code[pc, 8]],
                                                 addrgens, c, p, l1, row, l1_base, dram, buffers, buffer_banks,
                                                 page_rows, page_addresses, fault)
                        elif op == Op.TILE_REGS_ACQUIRE:
                            acquired[c] = True
                        elif op == Op.TILE_REGS_COMMIT or op == Op.TILE_REGS_WAIT:
                            if not acquired[c]:
                                err = Fault.DST_NOT_ACQUIRED
                        elif op == Op.TILE_REGS_RELEASE:
                            acquired[c] = False
                            dst[c, :dirty[c], :] = 0.0  # the packer clears Dst as it releases it
                            dirty[c] = 0
                        elif op == Op.TILIZE_BLOCK or op == Op.UNTILIZE_BLOCK:
                            spent += TILE_OP_COST - 1
                            err = layout_block(op, a, b, r[cc], c, row, l1, cb_config, cb_pushed, cb_popped,
                                               acquired[c], dst_capacity, fault)
                        else:
                            spent += TILE_OP_COST - 1
                            g, h, q = code[pc, 7], code[pc, 8], code[pc, 9]
                            if op == Op.MATMUL_BLOCK:  # ct * rt tile products (a block past Dst faults)
                                spent += TILE_OP_COST * max(min(r[g], dst_capacity) * min(r[h], dst_capacity) - 1, 0)
                            elif op == Op.ADD_BLOCK or op == Op.SUB_BLOCK or op == Op.MUL_BLOCK or \
                                    op == Op.PACK_TILES:  # a tile op per tile of the block
                                spent += TILE_OP_COST * max(min(r[d if op == Op.PACK_TILES else f], dst_capacity) - 1,
                                                            0)
                            err = indirect.call(compute, addresses[COMPUTE_AT], (
                                op, a, b, cc, d, e, f, g, h, q, r, c, row, l1, cb_config, cb_pushed, cb_popped, dirty,
                                dst, acquired[c], fidelity, fp32_dest, dst_capacity, fpu_model, addresses, src_a,
                                src_b, scratch, results, operands, fault))
                        if err != Fault.OK:
                            fault[0], fault[1], fault[2], fault[3] = err, c, p, pc
                            pcs[c, p] = pc
                            instructions[c, p] += executed - before
                            return spent
                        pc = nxt
                        progress = True
                        waiting[c, p, 0] = NO_WAIT
                    pcs[c, p] = pc
                    instructions[c, p] += executed - before
                moved = moved or progress
        if not running:
            return spent
        if not moved:
            fault[0] = Fault.DEADLOCK
            return spent
