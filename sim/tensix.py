"""Tensix cores running a program (numba): the ISA interpreter, circular buffers,
the NoC through address generators, and the compute engine's numerics.

All cores of a dispatch round run in one numba call. Each core has three kernels
(writer on RISCV_0, reader on RISCV_1, compute); the scheduler runs every kernel
until it blocks on a circular buffer or halts, round-robin, so kernels cooperate
as they do on the chip. A pass in which nothing moves while some kernel is still
blocked is a deadlock, reported with what every kernel waits for.

Numerics of the compute engine (stated in docs/tensix.md):
- unpack: tiles go to the Src registers as bf16 / tf32: float32 tiles lose their
  13 low mantissa bits, bf16 and block-float tiles are exact;
- math: the FPU multiplies in the math fidelity's phases (operand A split as
  hidden+4 MSBs | 3 LSBs, operand B as hidden+6 MSBs | 1 LSB of the bf16 mantissa),
  adds in float32, and Dst stores float32 (fp32_dest_acc_en) or rounds to bf16
  (nearest even);
- SFPU: float32 on the Dst tile, then stored like any Dst result;
- pack: Dst to the circular buffer's format with the packer's rounding, ties away
  from zero for bf16 and Bfp8_b (which goes through bf16 first); Bfp4_b truncates
  the Bfp8_b code.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from tt_hal.target.isa import ADDRGEN_SLOTS as SLOTS
from tt_hal.target.formats import (
    BFP4_MAGNITUDE_BITS, BFP8_MAGNITUDE_BITS, ROUND_NEAREST_AWAY, ROUND_NEAREST_EVEN, bf16_from_f32_bits,
    bfp_bits, bfp_code, bfp_decode_code, bfp_encode_row, bfp_shared_exponent,
)
from tt_hal.sim.memory import copy_bytes, page_span

# Opcodes: tt_hal.target.isa.Op's values (numba needs them as plain ints).
LI, MOV, ADD, SUB, MUL, DIV, MOD, AND, OR, XOR, SHL, SHR, MIN, MAX, ADDI, MULI = range(1, 17)
JMP, BEQ, BNE, BLT, BGE, HALT = range(20, 26)
ARG, CT_ARG, CONSTANT, WORKGROUP_ID, WORKGROUP_COUNT = range(30, 35)
CB_RESERVE_BACK, CB_PUSH_BACK, CB_WAIT_FRONT, CB_POP_FRONT, GET_WRITE_PTR, GET_READ_PTR = range(40, 46)
ADDRGEN, NOC_READ_PAGE, NOC_WRITE_PAGE, NOC_READ, NOC_WRITE, NOC_READ_BARRIER, NOC_WRITE_BARRIER = range(50, 57)
(TILE_REGS_ACQUIRE, TILE_REGS_COMMIT, TILE_REGS_WAIT, TILE_REGS_RELEASE, COPY_TILE, ADD_TILES, SUB_TILES, MUL_TILES,
 MATMUL_TILES, REDUCE_TILE, TRANSPOSE_WH_TILE, SFPU_UNARY, SFPU_BINARY, FILL_TILE, PACK_TILE) = range(60, 75)

# Fault codes; sim/dispatch.py turns them into reports.
OK, DEADLOCK, CB_PUSH_UNRESERVED, CB_POP_UNAVAILABLE, CB_TOO_SMALL, NOC_OUT_OF_BOUNDS, DST_INDEX, BUDGET, \
    DIVIDE_BY_ZERO, CB_UNCONFIGURED, L1_OUT_OF_BOUNDS, ARG_INDEX, ADDRGEN_UNSET, DST_NOT_ACQUIRED, \
    CB_NEGATIVE = range(15)

# Data formats (tt::DataFormat codes).
FLOAT32, FLOAT16_B, BFP8_B, BFP4_B, INT32, UINT16, UINT32, UINT8 = 0, 5, 6, 7, 8, 9, 24, 30

TILE = 32
FACE = 16
WRITER, READER, COMPUTE = 0, 1, 2
PROCESSORS = 3
DST_TILES = 16
NO_WAIT = -1


def _face_order() -> np.ndarray:
    """(row, column) -> index in a tile's stored (face) order."""
    index = np.empty((TILE, TILE), np.int64)
    for i in range(TILE):
        for j in range(TILE):
            index[i, j] = ((i // FACE) * 2 + j // FACE) * FACE * FACE + (i % FACE) * FACE + j % FACE
    return index


FACE_INDEX = _face_order()


# ---- Tile data: circular-buffer bytes <-> float32 values in face order ----

@intrinsic
def _bits_to_f32(typingctx, bits):
    """float32 with the low 32 bits of an integer as its bit pattern (a bitcast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def _f32_to_bits(typingctx, value):
    """The bit pattern of a float32, as a non-negative int64 (a bitcast)."""
    def codegen(context, builder, signature, args):
        single = builder.fptrunc(args[0], ir.FloatType()) if isinstance(signature.args[0], types.Float) and \
            signature.args[0].bitwidth == 64 else args[0]
        return builder.zext(builder.bitcast(single, ir.IntType(32)), ir.IntType(64))
    return types.int64(value), codegen


@numba.njit(cache=True, nogil=True)
def unpack_tile(row, at, fmt, out, to_dest=False):
    """Tile bytes at row[at:] in format `fmt` -> 1024 float32 values (face order) as the
    unpacker hands them to the Src registers (float32 -> tf32), or `to_dest` straight to
    an fp32 Dst (tt-metal's UnpackToDestFp32: float32 kept whole)."""
    bits = out.view(np.uint32)
    if fmt == FLOAT32 or fmt == INT32 or fmt == UINT32:
        words = row[at:at + 4096].view(np.uint32)
        if fmt == FLOAT32:
            mask = 0xFFFFFFFF if to_dest else 0xFFFFE000
            for k in range(1024):
                bits[k] = words[k] & mask
        else:
            for k in range(1024):
                out[k] = np.float32(np.int32(words[k])) if fmt == INT32 else np.float32(words[k])
    elif fmt == FLOAT16_B:
        halves = row[at:at + 2048].view(np.uint16)
        for k in range(1024):
            bits[k] = np.uint32(halves[k]) << 16
    elif fmt == UINT16:
        for k in range(1024):
            out[k] = np.float32(np.int64(row[at + 2 * k]) | (np.int64(row[at + 2 * k + 1]) << 8))
    elif fmt == UINT8:
        for k in range(1024):
            out[k] = np.float32(row[at + k])
    else:
        magnitude_bits = BFP8_MAGNITUDE_BITS if fmt == BFP8_B else BFP4_MAGNITUDE_BITS
        per_byte = 8 // (magnitude_bits + 1)
        for r in range(64):
            shared = np.int64(row[at + r])
            codes_at = at + 64 + r * FACE // per_byte
            for k in range(FACE):
                bits[r * FACE + k] = bfp_bits(bfp_decode_code(row, codes_at, k, magnitude_bits), shared, magnitude_bits)


@numba.njit(cache=True, nogil=True)
def pack_tile(values, row, at, fmt):
    """1024 float32 Dst values (face order) -> tile bytes in format `fmt` at row[at:],
    rounded as the packer does."""
    if fmt == FLOAT32 or fmt == INT32 or fmt == UINT32:
        words = row[at:at + 4096].view(np.uint32)
        if fmt == FLOAT32:
            words[:] = values.view(np.uint32)
        elif fmt == INT32:
            for k in range(1024):
                words[k] = np.uint32(np.int64(np.int32(values[k])) & 0xFFFFFFFF)
        else:
            for k in range(1024):
                words[k] = np.uint32(max(values[k], 0.0))
    elif fmt == FLOAT16_B or fmt == UINT16:
        halves = row[at:at + 2048].view(np.uint16)
        if fmt == FLOAT16_B:
            bits = values.view(np.uint32)
            for k in range(1024):
                halves[k] = bf16_from_f32_bits(np.int64(bits[k]), ROUND_NEAREST_AWAY)
        else:
            for k in range(1024):
                halves[k] = np.int64(min(max(values[k], 0.0), 65535.0))
    elif fmt == UINT8:
        for k in range(1024):
            row[at + k] = np.int64(min(max(values[k], 0.0), 255.0))
    else:
        run = np.empty(FACE, np.int64)
        for r in range(64):
            for k in range(FACE):  # Bfp8_b goes through bf16 first
                run[k] = bf16_from_f32_bits(_f32_to_bits(values[r * FACE + k]), ROUND_NEAREST_AWAY) << 16
            if fmt == BFP8_B:
                bfp_encode_row(run, row, at + r, at + 64 + r * FACE, BFP8_MAGNITUDE_BITS, ROUND_NEAREST_AWAY)
                continue
            shared = bfp_shared_exponent(run)  # Bfp4_b: the Bfp8_b code truncated to 3 magnitude bits
            row[at + r] = shared
            for k in range(FACE):
                code = bfp_code(run[k], shared, BFP8_MAGNITUDE_BITS, ROUND_NEAREST_AWAY)
                magnitude = (code & 0x7F) >> 4
                code4 = ((code >> 7) << 3) | magnitude if magnitude else 0
                slot = at + 64 + (r * FACE + k) // 2
                row[slot] = code4 if k % 2 == 0 else row[slot] | (code4 << 4)


# ---- Compute-engine numerics ----

@numba.njit(cache=True, nogil=True, inline="always")
def dst_store(value, fp32_dest):
    """A math result as Dst holds it: float32, or bf16 (nearest even)."""
    if fp32_dest:
        return value
    return _bits_to_f32(bf16_from_f32_bits(_f32_to_bits(value), ROUND_NEAREST_EVEN) << 16)


@numba.njit(cache=True, nogil=True, inline="always")
def _mantissa_split(value, high_bits):
    """(high, low): value's bf16 mantissa cut after `high_bits` explicit bits."""
    bits = _f32_to_bits(value) & 0xFFFF0000  # Src precision for the multiplier: bf16
    high = bits & ~((1 << (23 - high_bits)) - 1) & 0xFFFFFFFF
    return _bits_to_f32(high), _bits_to_f32(bits) - _bits_to_f32(high)


@numba.njit(cache=True, nogil=True, inline="always")
def _phases(a_high, a_low, b_high, b_low, fidelity):
    """The multiplier's phase sum: phase 0 is A's hidden bit + 4 MSBs times B's hidden
    bit + 6 MSBs; phase 1 adds A's 3 LSBs, phase 2 B's LSB, phase 3 both."""
    product = a_high * b_high
    if fidelity >= 2:
        product += a_low * b_high
    if fidelity >= 3:
        product += a_high * b_low
    if fidelity >= 4:
        product += a_low * b_low
    return product


@numba.njit(cache=True, nogil=True, inline="always")
def fidelity_product(src_a, src_b, fidelity):
    """src_a * src_b as the multiplier computes it in `fidelity` phases (0 = LoFi,
    2, 3, 4 = HiFi2..4). Infinities, NaN and zeros follow IEEE (signed zero included).
    Selects, not early returns, so that loops over a tile vectorize."""
    a_high, a_low = _mantissa_split(src_a, 4)
    b_high, b_low = _mantissa_split(src_b, 6)
    phases = _phases(a_high, a_low, b_high, b_low, fidelity)
    special = not (math.isfinite(src_a) and math.isfinite(src_b)) or src_a == 0 or src_b == 0
    return np.float32(src_a) * np.float32(src_b) if special else phases


@numba.njit(cache=True, nogil=True)
def sfpu_unary(op, x, parameter):
    """One SFPU op in float64 (stored as float32 afterwards): the reference results,
    not the hardware's polynomial approximations."""
    if op == 0:
        return math.exp(x)
    if op == 1:
        return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    if op == 2:
        return math.sqrt(x) if x >= 0 else math.nan
    if op == 3:
        return 1.0 / math.sqrt(x) if x > 0 else (math.copysign(math.inf, x) if x == 0 else math.nan)
    if op == 4:
        return 1.0 / x if x != 0 else math.copysign(math.inf, x)
    if op == 5:
        return max(x, 0.0)
    if op == 6:
        return 0.5 * x * math.erfc(-x / math.sqrt(2.0))  # erfc keeps the negative tail accurate
    if op == 7:
        return 1.0 / (1.0 + math.exp(-x))
    if op == 8:
        return math.tanh(x)
    if op == 9:
        return x / (1.0 + math.exp(-x))
    if op == 10:
        return -x
    if op == 11:
        return abs(x)
    if op == 12:
        return x * x
    if op == 13:
        return math.sin(x)
    if op == 14:
        return math.cos(x)
    if op == 15:
        return x + parameter
    if op == 16:
        return x * parameter
    if op == 17:
        if x < 0 and parameter != int(parameter):
            return math.nan
        if x == 0:
            return 0.0 if parameter > 0 else (1.0 if parameter == 0 else math.inf)
        return x ** parameter
    return x if x >= 0 else x * parameter  # 18: leaky relu


@numba.njit(cache=True, nogil=True)
def sfpu_binary(op, a, b):
    if op == 32:
        return a + b
    if op == 33:
        return a - b
    if op == 34:
        return a * b
    if op == 35:
        return a / b if b != 0 else (math.nan if a == 0 else math.copysign(math.inf, a) * math.copysign(1.0, b))
    if op == 36:
        return max(a, b)
    if op == 37:
        return min(a, b)
    if b != 0:  # 38, 39: masks
        return a
    return 0.0 if op == 38 else -math.inf


# ---- The interpreter ----

# Runtime-arg kinds: tt_hal.target.program.ArgKind's values.
ARG_LITERAL, ARG_BINDING_ADDRESS, ARG_BINDING_PAGE_OFFSET, ARG_BINDING_PAGES, ARG_CONSTANT, ARG_WORKGROUP_ID, \
    ARG_WORKGROUP_COUNT, ARG_BINDING_IS_DRAM = range(8)


@numba.njit(cache=True, nogil=True)
def run_round(codes, ct_args, arg_table, rt_counts, constants, binding_args, workgroup_count, first, lo, hi,
              l1, dram, l1_base, buffers, buffer_banks, page_rows, page_addresses, cb_config,
              fidelity, fp32_dest, dst_capacity, budget,
              workgroup_ids, rt_args, pcs, regs, done, waiting, cb_pushed, cb_popped, cb_reserved, addrgens, dst,
              instructions, fault):
    """Cores [lo, hi) of a round whose core 0 runs workgroup `first`: sets up their
    state (workgroup ids, runtime args from `arg_table` (3, n, 2) = (ArgKind, value)
    rows, everything else reset; Dst is clean between dispatches) and runs them."""
    count_x, count_y = workgroup_count[0], workgroup_count[1]
    for c in range(lo, hi):
        w = first + c
        workgroup_ids[c, 0], workgroup_ids[c, 1], workgroup_ids[c, 2] = \
            w % count_x, w // count_x % count_y, w // (count_x * count_y)
        for p in range(3):
            for k in range(rt_counts[p]):
                kind, value = arg_table[p, k, 0], arg_table[p, k, 1]
                if kind == ARG_LITERAL:
                    rt_args[c, p, k] = value
                elif kind == ARG_CONSTANT:
                    rt_args[c, p, k] = constants[value]
                elif kind == ARG_WORKGROUP_ID:
                    rt_args[c, p, k] = workgroup_ids[c, value]
                elif kind == ARG_WORKGROUP_COUNT:
                    rt_args[c, p, k] = workgroup_count[value]
                elif kind == ARG_BINDING_ADDRESS:
                    rt_args[c, p, k] = binding_args[value, 0]
                elif kind == ARG_BINDING_IS_DRAM:
                    rt_args[c, p, k] = binding_args[value, 1]
                elif kind == ARG_BINDING_PAGE_OFFSET:
                    rt_args[c, p, k] = binding_args[value, 2]
                else:
                    rt_args[c, p, k] = binding_args[value, 3]
    pcs[lo:hi] = 0
    regs[lo:hi] = 0
    done[lo:hi] = False
    waiting[lo:hi] = NO_WAIT
    cb_pushed[lo:hi] = 0
    cb_popped[lo:hi] = 0
    cb_reserved[lo:hi] = 0
    addrgens[lo:hi] = 0
    instructions[lo:hi] = 0
    return run_cores(codes, ct_args, rt_args[lo:hi], rt_counts, constants, workgroup_ids[lo:hi], workgroup_count,
                     np.arange(lo, hi), l1, dram, l1_base, cb_config, buffers, buffer_banks, page_rows,
                     page_addresses, fidelity, fp32_dest, dst_capacity, budget, pcs[lo:hi], regs[lo:hi],
                     done[lo:hi], waiting[lo:hi], cb_pushed[lo:hi], cb_popped[lo:hi], cb_reserved[lo:hi],
                     addrgens[lo:hi], dst[lo:hi], instructions[lo:hi], fault)


@numba.njit(cache=True, nogil=True)
def run_cores(codes, ct_args, rt_args, rt_counts, constants, workgroup_ids, workgroup_count, core_rows,
              l1, dram, l1_base, cb_config, buffers, buffer_banks, page_rows, page_addresses,
              fidelity, fp32_dest, dst_capacity, budget,
              pcs, regs, done, waiting, cb_pushed, cb_popped, cb_reserved, addrgens, dst, instructions, fault):
    """Runs the kernels of every core until all halt, or a fault. State arrays are
    the caller's, so that a fault can be reported from them:
    pcs/done (cores, 3); regs (cores, 3, 32); waiting (cores, 3, 2) = (cb, pages) a
    blocked kernel waits for; cb_pushed/popped/reserved (cores, 32); addrgens
    (cores, 3, SLOTS, 3) = (address, page size, is_dram); dst (cores, 16, 1024),
    all zero on entry and left so; instructions (cores, 3) counts what each kernel
    executed (for traces). fault: (code, core, processor, pc, a, b, c, d).
    Returns instructions executed."""
    dirty = np.zeros(core_rows.shape[0], np.int64)  # Dst tiles [0, dirty) written since the last release
    executed = _interpret(codes, ct_args, rt_args, rt_counts, constants, workgroup_ids, workgroup_count, core_rows,
                          l1, dram, l1_base, cb_config, buffers, buffer_banks, page_rows, page_addresses, fidelity,
                          fp32_dest, dst_capacity, budget, pcs, regs, done, waiting, cb_pushed, cb_popped,
                          cb_reserved, addrgens, dst, dirty, instructions, fault)
    for c in range(core_rows.shape[0]):
        dst[c, :dirty[c], :] = 0.0
    return executed


@numba.njit(cache=True, nogil=True)
def _interpret(codes, ct_args, rt_args, rt_counts, constants, workgroup_ids, workgroup_count, core_rows,
               l1, dram, l1_base, cb_config, buffers, buffer_banks, page_rows, page_addresses,
               fidelity, fp32_dest, dst_capacity, budget,
               pcs, regs, done, waiting, cb_pushed, cb_popped, cb_reserved, addrgens, dst, dirty, instructions,
               fault):
    cores = core_rows.shape[0]
    src_a = np.empty(1024, np.float32)
    src_b = np.empty(1024, np.float32)
    scratch = np.empty(1024, np.float32)
    executed = 0
    acquired = np.zeros(cores, np.bool_)
    while True:
        moved = False
        running = False
        for c in range(cores):
            row = core_rows[c]
            for p in (READER, COMPUTE, WRITER):
                if done[c, p]:
                    continue
                running = True
                code = codes[p]
                r = regs[c, p]
                pc = pcs[c, p]
                before = executed
                while True:
                    if executed >= budget:
                        fault[0], fault[1], fault[2], fault[3], fault[4] = BUDGET, c, p, pc, budget
                        pcs[c, p] = pc
                        return executed
                    op = code[pc, 0]
                    a, b, cc, d, e, f = code[pc, 1], code[pc, 2], code[pc, 3], code[pc, 4], code[pc, 5], code[pc, 6]
                    executed += 1
                    nxt = pc + 1
                    err = OK
                    if op == LI:
                        r[a] = b
                    elif op == MOV:
                        r[a] = r[b]
                    elif op == ADD:
                        r[a] = r[b] + r[cc]
                    elif op == SUB:
                        r[a] = r[b] - r[cc]
                    elif op == MUL:
                        r[a] = r[b] * r[cc]
                    elif op == DIV or op == MOD:
                        if r[cc] == 0:
                            err = DIVIDE_BY_ZERO
                        elif op == DIV:
                            r[a] = r[b] // r[cc]
                        else:
                            r[a] = r[b] % r[cc]
                    elif op == AND:
                        r[a] = r[b] & r[cc]
                    elif op == OR:
                        r[a] = r[b] | r[cc]
                    elif op == XOR:
                        r[a] = r[b] ^ r[cc]
                    elif op == SHL:
                        r[a] = r[b] << r[cc]
                    elif op == SHR:
                        r[a] = r[b] >> r[cc]
                    elif op == MIN:
                        r[a] = min(r[b], r[cc])
                    elif op == MAX:
                        r[a] = max(r[b], r[cc])
                    elif op == ADDI:
                        r[a] = r[b] + cc
                    elif op == MULI:
                        r[a] = r[b] * cc
                    elif op == JMP:
                        nxt = a
                    elif op == BEQ:
                        nxt = cc if r[a] == r[b] else nxt
                    elif op == BNE:
                        nxt = cc if r[a] != r[b] else nxt
                    elif op == BLT:
                        nxt = cc if r[a] < r[b] else nxt
                    elif op == BGE:
                        nxt = cc if r[a] >= r[b] else nxt
                    elif op == HALT:
                        done[c, p] = True
                        moved = True
                        break
                    elif op == ARG:
                        if not 0 <= b < rt_counts[p]:
                            err = ARG_INDEX
                        else:
                            r[a] = rt_args[c, p, b]
                    elif op == CT_ARG:
                        if not 0 <= b < ct_args.shape[1]:
                            err = ARG_INDEX
                        else:
                            r[a] = ct_args[p, b]
                    elif op == CONSTANT:
                        if not 0 <= b < constants.shape[0]:
                            err = ARG_INDEX
                        else:
                            r[a] = constants[b]
                    elif op == WORKGROUP_ID:
                        r[a] = workgroup_ids[c, b]
                    elif op == WORKGROUP_COUNT:
                        r[a] = workgroup_count[b]
                    elif CB_RESERVE_BACK <= op <= GET_READ_PTR:
                        cb = a if op < GET_WRITE_PTR else b
                        pages = cb_config[cb, 2]
                        if pages == 0:
                            err = CB_UNCONFIGURED
                        elif op == GET_WRITE_PTR or op == GET_READ_PTR:
                            at = cb_pushed[c, cb] if op == GET_WRITE_PTR else cb_popped[c, cb]
                            r[a] = cb_config[cb, 3] + (at % pages) * cb_config[cb, 1]
                        else:
                            n = r[b]
                            held = cb_pushed[c, cb] - cb_popped[c, cb]
                            fault[4], fault[5], fault[6], fault[7] = cb, n, held, pages
                            if n < 0:
                                err = CB_NEGATIVE
                            elif (op == CB_RESERVE_BACK or op == CB_WAIT_FRONT) and n > pages:
                                err = CB_TOO_SMALL
                            elif op == CB_RESERVE_BACK:
                                if pages - held < n:
                                    waiting[c, p, 0], waiting[c, p, 1] = cb, n
                                    break
                                cb_reserved[c, cb] = max(cb_reserved[c, cb], n)
                            elif op == CB_WAIT_FRONT:
                                if held < n:
                                    waiting[c, p, 0], waiting[c, p, 1] = cb, n
                                    break
                            elif op == CB_PUSH_BACK:
                                if n > cb_reserved[c, cb]:
                                    err = CB_PUSH_UNRESERVED
                                else:
                                    cb_pushed[c, cb] += n
                                    cb_reserved[c, cb] -= n
                            else:  # CB_POP_FRONT
                                if n > held:
                                    err = CB_POP_UNAVAILABLE
                                else:
                                    cb_popped[c, cb] += n
                    elif op == ADDRGEN:
                        addrgens[c, p, a, 0], addrgens[c, p, a, 1], addrgens[c, p, a, 2] = r[b], r[cc], r[d] != 0
                    elif NOC_READ_PAGE <= op <= NOC_WRITE:
                        slot = a
                        if not 0 <= slot < SLOTS or addrgens[c, p, slot, 1] == 0:
                            err = ADDRGEN_UNSET
                        else:
                            page = r[b]
                            if op == NOC_READ_PAGE or op == NOC_WRITE_PAGE:
                                offset, l1_at, length = 0, r[cc], addrgens[c, p, slot, 1]
                            else:
                                offset, l1_at, length = r[cc], r[d], r[e]
                            err = noc_transfer(op == NOC_READ_PAGE or op == NOC_READ, addrgens[c, p, slot], page,
                                               offset, length, l1[row], l1_at, l1_base, l1, dram, buffers,
                                               buffer_banks, page_rows, page_addresses, fault)
                    elif op == NOC_READ_BARRIER or op == NOC_WRITE_BARRIER:
                        pass  # transfers complete at once in the simulator
                    elif op == TILE_REGS_ACQUIRE:
                        acquired[c] = True
                    elif op == TILE_REGS_COMMIT or op == TILE_REGS_WAIT:
                        if not acquired[c]:
                            err = DST_NOT_ACQUIRED
                    elif op == TILE_REGS_RELEASE:
                        acquired[c] = False
                        dst[c, :dirty[c], :] = 0.0  # the packer clears Dst as it releases it
                        dirty[c] = 0
                    else:  # compute on Dst
                        err = compute(op, a, b, cc, d, e, f, r, c, row, l1, cb_config, cb_pushed, cb_popped, dirty,
                                      dst, acquired[c], fidelity, fp32_dest, dst_capacity, src_a, src_b, scratch,
                                      fault)
                    if err != OK:
                        fault[0], fault[1], fault[2], fault[3] = err, c, p, pc
                        pcs[c, p] = pc
                        return executed
                    pc = nxt
                    moved = True
                    waiting[c, p, 0] = NO_WAIT
                pcs[c, p] = pc
                instructions[c, p] += executed - before
        if not running:
            return executed
        if not moved:
            fault[0] = DEADLOCK
            return executed


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
        return NOC_OUT_OF_BOUNDS
    page_size = buffers[k, 3]
    if page < 0 or page * page_size >= buffers[k, 2] or offset < 0 or length < 0 or offset + length > page_size:
        return NOC_OUT_OF_BOUNDS
    if l1_at < l1_base or l1_at + length > core_l1.shape[0]:
        fault[4] = l1_at
        return L1_OUT_OF_BOUNDS
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
    return OK


@numba.njit(cache=True, nogil=True)
def _read_cb_tile(l1_row, cb_config, cb_popped, c, cb, index, out, to_dest=False):
    """Unpacks tile `index` past the read pointer of circular buffer `cb`."""
    pages = cb_config[cb, 2]
    at = cb_config[cb, 3] + ((cb_popped[c, cb] + index) % pages) * cb_config[cb, 1]
    unpack_tile(l1_row, at, cb_config[cb, 0], out, to_dest)


@numba.njit(cache=True, nogil=True)
def _eltwise(op, src_a, src_b, out, fidelity, fp32_dest):
    """Dst = a + b, a - b or a * b element by element (no broadcast)."""
    if op == ADD_TILES:
        for k in range(1024):
            out[k] = dst_store(src_a[k] + src_b[k], fp32_dest)
    elif op == SUB_TILES:
        for k in range(1024):
            out[k] = dst_store(src_a[k] - src_b[k], fp32_dest)
    else:
        for k in range(1024):
            out[k] = dst_store(fidelity_product(src_a[k], src_b[k], fidelity), fp32_dest)


@numba.njit(cache=True, nogil=True)
def _products_exact(tile):
    """True if every value is 0 or a finite number of magnitude in [2^-62, 2^62): then
    no product of two such values, nor any phase of it, overflows or is denormal."""
    bits = tile.view(np.uint32)
    ok = True
    for k in range(tile.shape[0]):
        exponent = (bits[k] >> 23) & 0xFF
        ok &= (bits[k] & 0x7FFFFFFF) == 0 or (127 - 62 <= exponent < 127 + 62)
    return ok


@numba.njit(cache=True, nogil=True)
def _matmul_tile(in0, in1, transpose, out, fidelity, fp32_dest):
    """Dst += in0 @ in1 for tiles whose products are exact (_products_exact): the
    scalar path's float32 sums over k = 0..31, with each phase sum replaced by the
    single product it equals exactly there. The bf16 parts a = ah + al (SrcA: 4 + 3
    mantissa bits) and b = bh + bl (SrcB: 6 + 1) have few enough bits that
    ah*bh + al*bh = a*bh, + ah*bl stays exact, and + al*bl = a*b. A sum that starts at
    +0 cannot see the sign of a zero product."""
    a1 = np.empty(TILE * TILE, np.float32)  # in1 (SrcA), row k, column j
    a2 = np.empty(TILE * TILE, np.float32)
    b1 = np.empty(TILE * TILE, np.float32)  # in0 (SrcB), row i, column k
    b2 = np.empty(TILE * TILE, np.float32)
    for i in range(TILE):
        for j in range(TILE):
            a_high, a_low = _mantissa_split(in1[FACE_INDEX[j, i] if transpose else FACE_INDEX[i, j]], 4)
            b_high, b_low = _mantissa_split(in0[FACE_INDEX[i, j]], 6)
            a1[i * TILE + j] = a_high if fidelity == 0 else a_high + a_low
            a2[i * TILE + j] = a_high
            b1[i * TILE + j] = b_high + b_low if fidelity == 4 else b_high
            b2[i * TILE + j] = b_low
    width = out.shape[0] // TILE  # a run-time trip count: numba vectorizes the j loops then
    total = np.empty(width, np.float32)
    for i in range(width):
        total[:] = 0.0
        for k in range(width):
            row1 = a1[k * width:(k + 1) * width]
            scale1 = b1[i * width + k]
            if fidelity == 3:
                row2, scale2 = a2[k * width:(k + 1) * width], b2[i * width + k]
                for j in range(width):
                    total[j] += row1[j] * scale1 + row2[j] * scale2
            else:
                for j in range(width):
                    total[j] += row1[j] * scale1
        for j in range(width):
            at = FACE_INDEX[i, j]
            out[at] = dst_store(out[at] + total[j], fp32_dest)


@numba.njit(cache=True, nogil=True)
def compute(op, a, b, cc, d, e, f, r, c, row, l1, cb_config, cb_pushed, cb_popped, dirty, dst, acquired, fidelity,
            fp32_dest, dst_capacity, src_a, src_b, scratch, fault):
    """One compute instruction on Dst; returns a fault code."""
    l1_row = l1[row]
    if not acquired:
        return DST_NOT_ACQUIRED
    # (Dst tile, circular buffers read or written; -1 for none)
    if op == COPY_TILE or op == TRANSPOSE_WH_TILE:
        target, cb0, cb1 = r[cc], a, -1
    elif op == ADD_TILES or op == SUB_TILES or op == MUL_TILES or op == MATMUL_TILES:
        target, cb0, cb1 = r[e], a, b
    elif op == REDUCE_TILE:
        target, cb0, cb1 = r[f], b, cc
    elif op == SFPU_UNARY or op == SFPU_BINARY:
        target, cb0, cb1 = r[b], -1, -1
    elif op == FILL_TILE:
        target, cb0, cb1 = r[a], -1, -1
    else:  # PACK_TILE
        target, cb0, cb1 = r[a], b, -1
    fault[4], fault[5], fault[6], fault[7] = target, 0, 0, 0
    if not 0 <= target < dst_capacity:
        fault[5] = dst_capacity
        return DST_INDEX
    for cb in (cb0, cb1):
        if cb >= 0 and cb_config[cb, 2] == 0:
            fault[4] = cb
            return CB_UNCONFIGURED
    out = dst[c, target]
    if op != PACK_TILE:
        dirty[c] = max(dirty[c], target + 1)
    if op == COPY_TILE:  # data copies unpack to an fp32 Dst directly
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[b], src_a, fp32_dest)
        for k in range(1024):
            out[k] = dst_store(src_a[k], fp32_dest)
    elif op == ADD_TILES or op == SUB_TILES or op == MUL_TILES:
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[cc], src_a)
        _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d], src_b)
        if f == 0:  # no broadcast: element k with element k
            _eltwise(op, src_a, src_b, out, fidelity, fp32_dest)
            return OK
        for i in range(TILE):
            for j in range(TILE):
                k = FACE_INDEX[i, j]
                if f == 1:  # row broadcast: B's first row
                    kb = FACE_INDEX[0, j]
                elif f == 2:  # column broadcast: B's first column
                    kb = FACE_INDEX[i, 0]
                elif f == 3:
                    kb = 0
                else:
                    kb = k
                if op == ADD_TILES:
                    value = src_a[k] + src_b[kb]
                elif op == SUB_TILES:
                    value = src_a[k] - src_b[kb]
                else:
                    value = fidelity_product(src_a[k], src_b[kb], fidelity)
                out[k] = dst_store(value, fp32_dest)
    elif op == MATMUL_TILES:
        # Dst += in0 @ in1 (in1 transposed when f); in0 feeds SrcB, in1 SrcA.
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[cc], src_b)
        _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d], src_a)
        if _products_exact(src_a) and _products_exact(src_b):
            _matmul_tile(src_b, src_a, f != 0, out, fidelity, fp32_dest)
            return OK
        for i in range(TILE):
            for j in range(TILE):
                total = np.float32(0.0)
                for k in range(TILE):
                    in1 = src_a[FACE_INDEX[j, k]] if f else src_a[FACE_INDEX[k, j]]
                    total += fidelity_product(in1, src_b[FACE_INDEX[i, k]], fidelity)
                at = FACE_INDEX[i, j]
                out[at] = dst_store(out[at] + total, fp32_dest)
    elif op == REDUCE_TILE:
        # ROW: each row -> column 0; COL: each column -> row 0; SCALAR: all -> (0, 0),
        # every value times the scaler tile's first element. MAX combines with Dst by
        # max (fill Dst with -inf first), SUM accumulates into it; the rest of the Dst
        # tile becomes 0.
        _read_cb_tile(l1_row, cb_config, cb_popped, c, b, r[d], src_a)
        _read_cb_tile(l1_row, cb_config, cb_popped, c, cc, r[e], src_b)
        is_max, dim = a >= 4, a & 3
        for k in range(1024):
            scratch[k] = -math.inf if is_max else 0.0
        for i in range(TILE):
            for j in range(TILE):
                value = fidelity_product(src_a[FACE_INDEX[i, j]], src_b[0], fidelity)
                at = FACE_INDEX[i, 0] if dim == 0 else (FACE_INDEX[0, j] if dim == 1 else 0)
                scratch[at] = max(scratch[at], value) if is_max else scratch[at] + value
        for i in range(TILE):
            for j in range(TILE):
                at = FACE_INDEX[i, j]
                if (dim == 0 and j == 0) or (dim == 1 and i == 0) or (i == 0 and j == 0):
                    combined = max(out[at], scratch[at]) if is_max else out[at] + scratch[at]
                    out[at] = dst_store(combined, fp32_dest)
                else:
                    out[at] = 0.0
    elif op == TRANSPOSE_WH_TILE:
        _read_cb_tile(l1_row, cb_config, cb_popped, c, a, r[b], src_a, fp32_dest)
        for i in range(TILE):
            for j in range(TILE):
                out[FACE_INDEX[i, j]] = dst_store(src_a[FACE_INDEX[j, i]], fp32_dest)
    elif op == SFPU_UNARY:
        parameter = _bits_to_f32(cc)
        for k in range(1024):
            out[k] = dst_store(np.float32(sfpu_unary(a, out[k], parameter)), fp32_dest)
    elif op == SFPU_BINARY:
        other = r[cc]
        if not 0 <= other < dst_capacity:
            fault[4] = other
            return DST_INDEX
        for k in range(1024):
            out[k] = dst_store(np.float32(sfpu_binary(a, out[k], dst[c, other, k])), fp32_dest)
    elif op == FILL_TILE:
        value = dst_store(_bits_to_f32(b), fp32_dest)
        for k in range(1024):
            out[k] = value
    else:  # PACK_TILE into tile r[cc] past the write pointer
        pages = cb_config[b, 2]
        at = cb_config[b, 3] + ((cb_pushed[c, b] + r[cc]) % pages) * cb_config[b, 1]
        pack_tile(out, l1_row, at, cb_config[b, 0])
    return OK
