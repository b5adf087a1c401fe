"""The Tensix kernel ISA: TT-Metal's kernel API as instructions, plus scalar
registers, arithmetic and branches. Shared by every backend: the simulator runs it
(sim/interpreter.py), the native layer turns it into TT-Metal C++ kernel source.

A kernel's code is an int64 array of shape (n, 7): an opcode and six operands.
Each operand is a register number (R0..R31), an immediate, a circular-buffer index
(c_0..c_31) or a branch target, as OPERANDS says. `KernelBuilder` writes code with
named registers, labels and loops; `disassemble` prints it.
"""

from __future__ import annotations

import enum
import struct

import numpy as np

from hal.status import HalError, StatusCode

NUM_REGISTERS = 32
NUM_CIRCULAR_BUFFERS = 32
ADDRGEN_SLOTS = 16  # address generators per kernel
MAX_RUNTIME_ARGS = 341  # per core and kernel (tt-metal's limit)
WIDTH = 10  # opcode + 9 operands (matmul_block's)


class Op(enum.IntEnum):
    # Scalar.
    LI = 1  # rd, imm
    MOV = 2  # rd, ra
    ADD = 3  # rd, ra, rb
    SUB = 4
    MUL = 5
    DIV = 6  # floor division; by zero faults
    MOD = 7
    AND = 8
    OR = 9
    XOR = 10
    SHL = 11
    SHR = 12
    MIN = 13
    MAX = 14
    ADDI = 15  # rd, ra, imm
    MULI = 16  # rd, ra, imm
    # Control.
    JMP = 20  # target
    BEQ = 21  # ra, rb, target
    BNE = 22
    BLT = 23
    BGE = 24
    HALT = 25
    # Arguments: get_arg_val / get_compile_time_arg_val / push constants / workgroup.
    ARG = 30  # rd, index
    CT_ARG = 31  # rd, index
    CONSTANT = 32  # rd, index
    WORKGROUP_ID = 33  # rd, dimension
    WORKGROUP_COUNT = 34  # rd, dimension
    # This workgroup's share [w * T // n, (w + 1) * T // n) of T = rtotal items, w and n the
    # linear workgroup id and count (x fastest): the start and end a TT-Metal host
    # computes per core (split_work_to_cores), from the workgroup's own args
    WORKGROUP_RANGE = 35  # rd_first, rd_end, rtotal
    # Circular buffers.
    CB_RESERVE_BACK = 40  # cb, rn
    CB_PUSH_BACK = 41  # cb, rn
    CB_WAIT_FRONT = 42  # cb, rn
    CB_POP_FRONT = 43  # cb, rn
    GET_WRITE_PTR = 44  # rd, cb
    GET_READ_PTR = 45  # rd, cb
    # NoC, through address generators (InterleavedAddrGen / sharded): a generator slot
    # names a buffer by its base address; the page decides the bank or core.
    ADDRGEN = 50  # slot, raddr, rpage_size, ris_dram
    NOC_READ_PAGE = 51  # slot, rpage, rl1
    NOC_WRITE_PAGE = 52  # slot, rpage, rl1
    NOC_READ = 53  # slot, rpage, roffset, rl1, rlength
    NOC_WRITE = 54  # slot, rpage, roffset, rl1, rlength
    NOC_READ_BARRIER = 55
    NOC_WRITE_BARRIER = 56
    # L1 stores of a data movement kernel (a loop of uint32_t stores through a pointer).
    L1_FILL = 57  # rl1, rbytes, 32-bit pattern; address and byte count multiples of 4
    L1_LOAD = 58  # rd, rl1: the int32 word at L1 address rl1 (a uint32_t load through a pointer), sign-extended
    # A gather loop of a data movement kernel as one instruction: rcount 4-byte elements
    # into L1 from rl1, element i the one at byte rbase + 4 * entry i of the generator's
    # buffer (entries: int32 words in L1 from rentries), or the 32-bit pattern where an
    # entry is negative; one NOC_READ per run of consecutive entries (per page it
    # touches). Entries and elements must not overlap. rrows such rows in order, each
    # rstride bytes after the last (its entries and its elements alike).
    NOC_GATHER = 59  # slot, rentries, rl1, rcount, rbase, 32-bit pattern, rrows, rstride
    # rlength bytes from byte raddress of the buffer, one NOC_READ (NOC_WRITE) per page
    # they touch: a row of a row-major tensor in one instruction (TT-Metal's stick readers)
    NOC_READ_SPAN = 80  # slot, raddress, rl1, rlength
    NOC_WRITE_SPAN = 81  # slot, raddress, rl1, rlength
    # rrows spans, each rstride bytes after the last in the buffer and rpitch in L1: a
    # block of a row-major tensor's rows in one instruction
    NOC_READ_ROWS = 83  # slot, raddress, rl1, rlength, rrows, rstride, rpitch
    NOC_WRITE_ROWS = 84  # slot, raddress, rl1, rlength, rrows, rstride, rpitch
    # Compute: Dst register file.
    TILE_REGS_ACQUIRE = 60
    TILE_REGS_COMMIT = 61
    TILE_REGS_WAIT = 62
    TILE_REGS_RELEASE = 63
    COPY_TILE = 64  # cb, ri, rdst
    ADD_TILES = 65  # cb_a, cb_b, ria, rib, rdst, broadcast
    SUB_TILES = 66
    MUL_TILES = 67
    MATMUL_TILES = 68  # cb_a, cb_b, ria, rib, rdst, transpose
    REDUCE_TILE = 69  # reduce kind, cb, cb_scaler, ri, ri_scaler, rdst
    TRANSPOSE_WH_TILE = 70  # cb, ri, rdst
    SFPU_UNARY = 71  # sfpu op, rdst, float32 bits of the parameter
    SFPU_BINARY = 72  # sfpu op, rdst_a, rdst_b (result in a)
    FILL_TILE = 73  # rdst, float32 bits of the value
    PACK_TILE = 74  # rdst, cb, ri (tile index from the write pointer)
    # Compute: layout conversion of whole blocks (they take Dst themselves, between releases).
    TILIZE_BLOCK = 75  # icb, ocb, rblock: rblock pages of 32 row-major rows -> rblock tiles
    UNTILIZE_BLOCK = 76  # icb, ocb, rblock: rblock tiles -> rblock pages of 32 row-major rows
    SFPU_TERNARY = 77  # sfpu op, rdst_c, rdst_a, rdst_b (result in c)
    UNARY_BCAST = 78  # cb, ri, rdst, broadcast: copy_tile repeating a row, column or element (unary_bcast)
    FILL_TILE_BITS = 79  # rdst, rvalue: a tile of a register's 32 bits (fill_tile_bitcast of a runtime value)
    # matmul_block: Dst[rdst + r * ct + c] += in0 tile (ria + r * kt) @ in1 tile (rib + c) for r < rt, c < ct:
    # an output block of rt x ct tiles for one step of K, each input tile unpacked once
    MATMUL_BLOCK = 82  # cb_a, cb_b, ria, rib, rdst, transpose, rct, rrt, rkt
    # TT-Metal's add_block, sub_block and mul_block: add_tiles (...) of tiles ria + j and
    # rib + j into Dst tile rdst + j for j < rn, without broadcast
    ADD_BLOCK = 85  # cb_a, cb_b, ria, rib, rdst, rn
    SUB_BLOCK = 86
    MUL_BLOCK = 87
    # pack_tile<true> of Dst tiles rdst + j to tile ri + j past the write pointer, j < rn (a loop
    # of pack_tile: TT-Metal's pack_block packs from an offset of its own, reset by cb_push_back)
    PACK_TILES = 88  # rdst, cb, ri, rn


# Operand kinds: r = register, i = immediate, c = circular buffer, t = branch target,
# f = float32 bits (printed as a float), e = enum (printed by name), x = 32-bit
# pattern (printed in hex).
OPERANDS: dict[Op, str] = {
    Op.LI: "ri", Op.MOV: "rr", **{op: "rrr" for op in (
        Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.MIN, Op.MAX)},
    Op.ADDI: "rri", Op.MULI: "rri",
    Op.JMP: "t", Op.BEQ: "rrt", Op.BNE: "rrt", Op.BLT: "rrt", Op.BGE: "rrt", Op.HALT: "",
    Op.ARG: "ri", Op.CT_ARG: "ri", Op.CONSTANT: "ri", Op.WORKGROUP_ID: "ri", Op.WORKGROUP_COUNT: "ri",
    Op.WORKGROUP_RANGE: "rrr",
    Op.CB_RESERVE_BACK: "cr", Op.CB_PUSH_BACK: "cr", Op.CB_WAIT_FRONT: "cr", Op.CB_POP_FRONT: "cr",
    Op.GET_WRITE_PTR: "rc", Op.GET_READ_PTR: "rc",
    Op.ADDRGEN: "irrr", Op.NOC_READ_PAGE: "irr", Op.NOC_WRITE_PAGE: "irr", Op.NOC_READ: "irrrr",
    Op.NOC_WRITE: "irrrr", Op.NOC_READ_BARRIER: "", Op.NOC_WRITE_BARRIER: "", Op.L1_FILL: "rrx", Op.L1_LOAD: "rr",
    Op.NOC_GATHER: "irrrrxrr", Op.NOC_READ_SPAN: "irrr", Op.NOC_WRITE_SPAN: "irrr", Op.NOC_READ_ROWS: "irrrrrr",
    Op.NOC_WRITE_ROWS: "irrrrrr",
    Op.TILE_REGS_ACQUIRE: "", Op.TILE_REGS_COMMIT: "", Op.TILE_REGS_WAIT: "", Op.TILE_REGS_RELEASE: "",
    Op.COPY_TILE: "crr", Op.ADD_TILES: "ccrrre", Op.SUB_TILES: "ccrrre", Op.MUL_TILES: "ccrrre",
    Op.MATMUL_TILES: "ccrrri", Op.REDUCE_TILE: "eccrrr", Op.TRANSPOSE_WH_TILE: "crr",
    Op.SFPU_UNARY: "erf", Op.SFPU_BINARY: "err", Op.FILL_TILE: "rf", Op.PACK_TILE: "rcr",
    Op.TILIZE_BLOCK: "ccr", Op.UNTILIZE_BLOCK: "ccr", Op.SFPU_TERNARY: "errr", Op.UNARY_BCAST: "crre",
    Op.FILL_TILE_BITS: "rr", Op.MATMUL_BLOCK: "ccrrrirrr",
    Op.ADD_BLOCK: "ccrrrr", Op.SUB_BLOCK: "ccrrrr", Op.MUL_BLOCK: "ccrrrr", Op.PACK_TILES: "rcrr",
}


class Broadcast(enum.IntEnum):
    """BroadcastType of add/sub/mul_tiles_bcast: which of operand B is repeated."""

    NONE = 0
    ROW = 1  # B's first row, for every row
    COL = 2  # B's first column, for every column
    SCALAR = 3  # B's element (0, 0)


class ReduceKind(enum.IntEnum):
    """reduce_tile<PoolType, ReduceDim>: (pool << 2) | dim."""

    SUM_ROW = 0  # REDUCE_ROW: sum along each row -> column 0
    SUM_COL = 1  # REDUCE_COL: sum along each column -> row 0
    SUM_SCALAR = 2  # both -> element (0, 0)
    MAX_ROW = 4
    MAX_COL = 5
    MAX_SCALAR = 6


class SfpuOp(enum.IntEnum):
    """SFPU ops: unary below ADD (on one Dst tile, with a float parameter), binary from
    ADD (two tiles, result in the first), ternary from WHERE (three, result in the first).
    The float ops read and write float32 values; the integer ops (INTEGER_OPS) read and
    write Dst's 32 bits as two's-complement int32, which needs a 32-bit Dst
    (fp32_dest_acc_en), as TT-Metal's int32 ops do."""

    EXP = 0
    LOG = 1
    SQRT = 2
    RSQRT = 3
    RECIP = 4
    RELU = 5
    GELU = 6
    SIGMOID = 7
    TANH = 8
    SILU = 9
    NEG = 10
    ABS = 11
    SQUARE = 12
    SIN = 13
    COS = 14
    ADD_SCALAR = 15  # x + parameter
    MUL_SCALAR = 16  # x * parameter
    POWER = 17  # x ** parameter
    LEAKY_RELU = 18  # parameter = slope
    # Comparisons with zero: 1.0 where x > 0 (>= 0, < 0, <= 0, == 0, != 0), else 0.0, as
    # TT-Metal's gtz_tile and friends; a NaN compares false but for NEZ.
    GTZ = 19
    GEZ = 20
    LTZ = 21
    LEZ = 22
    EQZ = 23
    NEZ = 24
    FLOOR = 25
    CEIL = 26
    TRUNC = 27
    ROUND_EVEN = 28  # to the nearest integer, ties to even (round_tile with 0 decimals)
    EXPM1 = 29
    LOG1P = 30
    ERF = 31
    ERFC = 32
    TAN = 33
    ATAN = 34
    ASIN = 35
    ACOS = 36
    SINH = 37
    COSH = 38
    ASINH = 39
    ACOSH = 40
    ATANH = 41
    EXP2 = 42
    SIGN = 43  # -1, 0 or 1 (NaN stays NaN)
    CBRT = 44
    # Integers (int32 in Dst), and conversions between them and float32.
    NEG_INT = 45  # negative_tile_int32 (wraps at -2^31)
    ABS_INT = 46  # abs_tile_int32 (wraps at -2^31)
    NOT = 47  # bitwise_not_tile
    I32_TO_F32 = 48  # typecast_tile<Int32, Float32>: to the nearest float32, ties to even
    U32_TO_F32 = 49  # typecast_tile<UInt32, Float32>: the bits read as unsigned
    F32_TO_I32 = 50  # typecast_tile<Float32, Int32>: toward zero, saturating; NaN -> 0
    F32_TO_U32 = 51  # typecast_tile<Float32, UInt32>: toward zero, saturating at 0 and 2^32 - 1; NaN -> 0
    # SFPU binary, on two Dst tiles.
    ADD = 64
    SUB = 65
    MUL = 66
    DIV = 67
    MAXIMUM = 68
    MINIMUM = 69
    MASK = 70  # a where b != 0, else 0 (mask_tile)
    MASK_NEG_INF = 71  # a where b != 0, else -inf (masking before a max)
    # Comparisons: 1.0 where a == b (!=, <, >, <=, >=), else 0.0 (eq_binary_tile & co.);
    # a NaN compares false but for NE.
    EQ = 72
    NE = 73
    LT = 74
    GT = 75
    LE = 76
    GE = 77
    FMOD = 78  # a - b * trunc(a / b): the remainder with a's sign (fmod_binary_tile, arith.remf)
    ATAN2 = 79  # atan2(a, b)
    POW = 80  # a ** b
    # Integer binary ops (int32 in Dst): wrapping arithmetic; a division by zero gives
    # quotient -1 and remainder a (RISC-V's convention: the Tensix's is not documented).
    ADD_INT = 81  # add_int_tile<Int32>
    SUB_INT = 82  # sub_int_tile<Int32>
    MUL_INT = 83  # mul_int_tile<Int32>: the low 32 bits
    DIV_INT = 84  # div_int32_trunc_tile: toward zero (-2^31 / -1 wraps)
    FLOORDIV_INT = 85  # div_int32_floor_tile: toward -inf
    REM_INT = 86  # fmod_int32_tile: the remainder with a's sign
    REM_UINT = 87  # remainder_uint32_tile: a and b unsigned
    MAX_INT = 88  # binary_max_int32_tile
    MIN_INT = 89  # binary_min_int32_tile
    MAX_UINT = 90  # binary_max_uint32_tile
    MIN_UINT = 91  # binary_min_uint32_tile
    AND = 92  # bitwise_and_binary_tile
    OR = 93  # bitwise_or_binary_tile
    XOR = 94  # bitwise_xor_binary_tile
    # Shifts by b (a shift by b outside [0, 32) gives 0, or the sign for SHR).
    SHL = 95  # binary_left_shift_tile
    SHR = 96  # binary_right_shift_tile: arithmetic
    SHRU = 97  # binary_logical_right_shift_tile
    # Integer compares: 1 where a == b (...), else 0, as int32 (eq_int_tile<Int32> & co.;
    # the unsigned ones lt_int_tile<UInt32> & co.).
    EQ_INT = 98
    NE_INT = 99
    LT_INT = 100
    GT_INT = 101
    LE_INT = 102
    GE_INT = 103
    LT_UINT = 104
    GT_UINT = 105
    LE_UINT = 106
    GE_UINT = 107
    # SFPU ternary, on three Dst tiles; the values are moved whole, bit for bit.
    WHERE = 128  # a where c != 0 (c a float), else b (where_tile<Float32>)
    WHERE_INT = 129  # a where c != 0 (c an int32), else b (where_tile<Int32>)


# Integer ops by the kinds of value they read and write in Dst.
INTEGER_OPERANDS = frozenset({SfpuOp.NEG_INT, SfpuOp.ABS_INT, SfpuOp.NOT, SfpuOp.I32_TO_F32, SfpuOp.U32_TO_F32,
                              *(op for op in SfpuOp if SfpuOp.ADD_INT <= op <= SfpuOp.GE_UINT), SfpuOp.WHERE_INT})
INTEGER_RESULTS = frozenset((INTEGER_OPERANDS - {SfpuOp.I32_TO_F32, SfpuOp.U32_TO_F32, SfpuOp.WHERE_INT})
                            | {SfpuOp.F32_TO_I32, SfpuOp.F32_TO_U32})


class MathFidelity(enum.IntEnum):
    """How many multiplier phases a matmul runs (../shared/FACTS.md)."""

    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4


class Processor(enum.IntEnum):
    """Where a kernel runs: the data movement RISC-Vs or the compute TRISCs."""

    RISCV_0 = 0  # BRISC: the writer by convention
    RISCV_1 = 1  # NCRISC: the reader
    COMPUTE = 2


_ENUMS = {Op.ADD_TILES: Broadcast, Op.SUB_TILES: Broadcast, Op.MUL_TILES: Broadcast, Op.UNARY_BCAST: Broadcast,
          Op.REDUCE_TILE: ReduceKind,
          Op.SFPU_UNARY: SfpuOp, Op.SFPU_BINARY: SfpuOp, Op.SFPU_TERNARY: SfpuOp}
# Instructions of one kind of processor, as TT-Metal's APIs exist for one kind of kernel:
# the compute API (Dst, unpack, math, pack) only in compute kernels, the dataflow API
# (address generators, NoC transfers, get_read_ptr / get_write_ptr, raw L1 access) only in
# data-movement kernels. The others (scalars, control, arguments, CB sync) run anywhere.
COMPUTE_OPS = frozenset({
    Op.TILE_REGS_ACQUIRE, Op.TILE_REGS_COMMIT, Op.TILE_REGS_WAIT, Op.TILE_REGS_RELEASE, Op.COPY_TILE, Op.ADD_TILES,
    Op.SUB_TILES, Op.MUL_TILES, Op.MATMUL_TILES, Op.REDUCE_TILE, Op.TRANSPOSE_WH_TILE, Op.SFPU_UNARY, Op.SFPU_BINARY,
    Op.FILL_TILE, Op.PACK_TILE, Op.TILIZE_BLOCK, Op.UNTILIZE_BLOCK, Op.SFPU_TERNARY, Op.UNARY_BCAST,
    Op.FILL_TILE_BITS, Op.MATMUL_BLOCK, Op.ADD_BLOCK, Op.SUB_BLOCK, Op.MUL_BLOCK, Op.PACK_TILES})
DATA_MOVEMENT_OPS = frozenset({
    Op.GET_WRITE_PTR, Op.GET_READ_PTR, Op.ADDRGEN, Op.NOC_READ_PAGE, Op.NOC_WRITE_PAGE, Op.NOC_READ, Op.NOC_WRITE,
    Op.NOC_READ_BARRIER, Op.NOC_WRITE_BARRIER, Op.L1_FILL, Op.L1_LOAD, Op.NOC_GATHER, Op.NOC_READ_SPAN,
    Op.NOC_WRITE_SPAN, Op.NOC_READ_ROWS, Op.NOC_WRITE_ROWS})
# Immediates with a fixed range: (op, operand position) -> allowed values.
_IMMEDIATE_RANGES = {
    (Op.ADDRGEN, 0): range(ADDRGEN_SLOTS), (Op.NOC_READ_PAGE, 0): range(ADDRGEN_SLOTS),
    (Op.NOC_WRITE_PAGE, 0): range(ADDRGEN_SLOTS), (Op.NOC_READ, 0): range(ADDRGEN_SLOTS),
    (Op.NOC_WRITE, 0): range(ADDRGEN_SLOTS), (Op.WORKGROUP_ID, 1): range(3), (Op.WORKGROUP_COUNT, 1): range(3),
    (Op.ARG, 1): range(MAX_RUNTIME_ARGS), (Op.SFPU_UNARY, 0): range(SfpuOp.ADD),
    (Op.SFPU_BINARY, 0): range(SfpuOp.ADD, SfpuOp.WHERE),
    (Op.SFPU_TERNARY, 0): range(SfpuOp.WHERE, SfpuOp.WHERE_INT + 1),
    (Op.MATMUL_TILES, 5): range(2), (Op.MATMUL_BLOCK, 5): range(2),
    (Op.L1_FILL, 2): range(1 << 32), (Op.NOC_GATHER, 0): range(ADDRGEN_SLOTS), (Op.NOC_GATHER, 5): range(1 << 32),
    (Op.NOC_READ_SPAN, 0): range(ADDRGEN_SLOTS), (Op.NOC_WRITE_SPAN, 0): range(ADDRGEN_SLOTS),
    (Op.NOC_READ_ROWS, 0): range(ADDRGEN_SLOTS), (Op.NOC_WRITE_ROWS, 0): range(ADDRGEN_SLOTS),
}


class Bits(int):
    """A 32-bit pattern given where a float32 operand is expected: an integer's, for a
    fill of int32 values in Dst."""


def float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bits_float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def validate_code(code: np.ndarray, where: str, processor: Processor | None = None) -> None:
    """INVALID_ARGUMENT unless `code` is well formed: known opcodes, registers,
    circular buffers and branch targets in range, ending in HALT reachable; with
    `processor`, only instructions that processor runs (COMPUTE_OPS, DATA_MOVEMENT_OPS)."""
    if code.ndim != 2 or code.shape[1] != WIDTH or code.shape[0] == 0:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: code must be a non-empty (n, {WIDTH}) array")
    foreign, foreign_kind = (DATA_MOVEMENT_OPS, "data-movement") if processor is Processor.COMPUTE else \
        (COMPUTE_OPS, "compute") if processor is not None else ((), "")
    for pc, row in enumerate(code):
        try:
            op = Op(int(row[0]))
        except ValueError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: unknown opcode {int(row[0])} at {pc}") from None
        if op in foreign:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc} is a {foreign_kind} instruction, "
                                                        f"and the kernel runs on {processor.name}: TT-Metal offers "
                                                        f"that API only to {foreign_kind} kernels")
        for k, kind in enumerate(OPERANDS[op]):
            value = int(row[k + 1])
            if kind == "r" and not 0 <= value < NUM_REGISTERS:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc}: register {value} "
                                                            f"out of range")
            if kind == "c" and not 0 <= value < NUM_CIRCULAR_BUFFERS:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc}: circular buffer {value} "
                                                            f"out of range")
            if kind == "t" and not 0 <= value < code.shape[0]:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc}: branch target {value} "
                                                            f"outside the code")
            if kind == "e" and op in _ENUMS and value not in _ENUMS[op]._value2member_map_:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc}: bad {_ENUMS[op].__name__} "
                                                            f"{value}")
            allowed = _IMMEDIATE_RANGES.get((op, k))
            if allowed is not None and value not in allowed:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: {op.name} at {pc}: operand {k} is {value}, "
                                                            f"outside [{allowed.start}, {allowed.stop})")
    if int(code[-1, 0]) != Op.HALT:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{where}: code must end with HALT")


def disassemble(code: np.ndarray, register_names=(), title: str | None = None, first_pc: int = 0) -> str:
    """Readable text of `code`; `register_names` gives each row's register names (as
    Kernel.register_names does; .ttx files do not carry them)."""
    targets = {int(row[k + 1]) for row in code for k, kind in enumerate(OPERANDS.get(Op(int(row[0])), ""))
               if kind == "t"}
    lines = [f"; {title}"] if title else []
    for pc, row in enumerate(code, first_pc):
        op = Op(int(row[0]))
        names = register_names[pc] if pc < len(register_names) else {}
        parts = []
        for k, kind in enumerate(OPERANDS[op]):
            value = int(row[k + 1])
            if kind == "r":
                parts.append(f"r{value}" + (f":{names[value]}" if value in names else ""))
            elif kind == "c":
                parts.append(f"c_{value}")
            elif kind == "t":
                parts.append(f"@{value}")
            elif kind == "f":
                parts.append(repr(bits_float(value)))
            elif kind == "e" and op in _ENUMS:
                parts.append(_ENUMS[op](value).name)
            elif kind == "x":
                parts.append(f"{value:#x}")
            else:
                parts.append(str(value))
        marker = f"{pc:4d}{'>' if pc in targets else ' '} "
        lines.append(f"{marker}{op.name.lower():<18} {', '.join(parts)}".rstrip())
    return "\n".join(lines)
