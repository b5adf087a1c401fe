"""TT-Metal C++ kernel source from tt_hal.target.isa programs: what the hardware backend hands
to CreateKernelFromString. Pure Python, so that kernels are generated, diffed and
syntax-checked on any machine (tests/test_native_codegen.py).

The translation is one statement per ISA row, so a hang or a fault on hardware can
be traced back to the same pc the simulator reports:
- the 32 registers are `int64_t r[32]` (the simulator's width; DIV and MOD floor as
  it does), branches are `goto pc_N`, HALT returns;
- runtime args: the kernel's own template args first (get_arg_val), then the
  workgroup id (x, y, z), the workgroup count (x, y, z) and the push constants, all
  appended per core by the hardware backend (`runtime_args`);
- an address generator slot is a pair InterleavedAddrGen<true>/<false> chosen by its
  is_dram flag, because the ISA takes the flag at run time;
- every compute instruction is preceded by its own init (and the unpacker or packer
  data-format reconfig), because the ISA has no init instructions: correct in any
  order, at the cost of re-initialising in loops.

The names and signatures are TT-Metal v0.81.1's kernel API as
docs/dev/tt-metal-api.md records them; native/api_stubs/kernel declares them for the
syntax check. Both kinds of kernel define `void kernel_main()`.
"""

from __future__ import annotations

from hal.status import HalError, StatusCode
from tt_hal.target.isa import DATA_MOVEMENT_OPS, OPERANDS, Broadcast, Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.program import Kernel, Program

TT_METAL_VERSION = "v0.81.1"  # the kernel API the generated code is written for (docs/dev/tt-metal-api.md)
WORKGROUP_ARGS = 6  # workgroup id x, y, z and count x, y, z, after the kernel's own args

_SCALAR_BINARY = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.AND: "&", Op.OR: "|", Op.XOR: "^", Op.SHL: "<<",
                  Op.SHR: ">>"}
_BRANCHES = {Op.BEQ: "==", Op.BNE: "!=", Op.BLT: "<", Op.BGE: ">="}
_CB_CALLS = {Op.CB_RESERVE_BACK: "cb_reserve_back", Op.CB_PUSH_BACK: "cb_push_back",
             Op.CB_WAIT_FRONT: "cb_wait_front", Op.CB_POP_FRONT: "cb_pop_front"}
_TILE_REGS = {Op.TILE_REGS_ACQUIRE: "tile_regs_acquire", Op.TILE_REGS_COMMIT: "tile_regs_commit",
              Op.TILE_REGS_WAIT: "tile_regs_wait", Op.TILE_REGS_RELEASE: "tile_regs_release"}
_ELTWISE = {Op.ADD_TILES: "ELWADD", Op.SUB_TILES: "ELWSUB", Op.MUL_TILES: "ELWMUL"}
_ELTWISE_PLAIN = {Op.ADD_TILES: "add", Op.SUB_TILES: "sub", Op.MUL_TILES: "mul"}
_ELTWISE_BLOCK = {Op.ADD_BLOCK: "add", Op.SUB_BLOCK: "sub", Op.MUL_BLOCK: "mul"}
_BROADCAST = {Broadcast.ROW: "ROW", Broadcast.COL: "COL", Broadcast.SCALAR: "SCALAR"}
_REDUCE = {ReduceKind.SUM_ROW: ("SUM", "REDUCE_ROW"), ReduceKind.SUM_COL: ("SUM", "REDUCE_COL"),
           ReduceKind.SUM_SCALAR: ("SUM", "REDUCE_SCALAR"), ReduceKind.MAX_ROW: ("MAX", "REDUCE_ROW"),
           ReduceKind.MAX_COL: ("MAX", "REDUCE_COL"), ReduceKind.MAX_SCALAR: ("MAX", "REDUCE_SCALAR")}

# SFPU unary op -> (header under api/compute/, init call, tile call with {dst} and {param}).
_SFPU_UNARY = {
    SfpuOp.EXP: ("eltwise_unary/exp.h", "exp_tile_init()", "exp_tile({dst})"),
    SfpuOp.LOG: ("compute_kernel_api.h", "log_tile_init()", "log_tile({dst})"),
    SfpuOp.SQRT: ("eltwise_unary/sqrt.h", "sqrt_tile_init()", "sqrt_tile({dst})"),
    SfpuOp.RSQRT: ("eltwise_unary/rsqrt.h", "rsqrt_tile_init()", "rsqrt_tile({dst})"),
    SfpuOp.RECIP: ("eltwise_unary/recip.h", "recip_tile_init()", "recip_tile({dst})"),
    SfpuOp.RELU: ("eltwise_unary/relu.h", "relu_tile_init()", "relu_tile({dst})"),
    SfpuOp.GELU: ("eltwise_unary/gelu.h", "gelu_tile_init<false>()", "gelu_tile<false>({dst})"),
    SfpuOp.SIGMOID: ("compute_kernel_api.h", "sigmoid_tile_init()", "sigmoid_tile({dst})"),
    SfpuOp.TANH: ("compute_kernel_api.h", "tanh_tile_init()", "tanh_tile({dst})"),
    SfpuOp.SILU: ("compute_kernel_api.h", "silu_tile_init()", "silu_tile({dst})"),
    SfpuOp.NEG: ("eltwise_unary/negative.h", "negative_tile_init()", "negative_tile({dst})"),
    SfpuOp.ABS: ("compute_kernel_api.h", "abs_tile_init()", "abs_tile({dst})"),
    SfpuOp.SQUARE: ("compute_kernel_api.h", "square_tile_init()", "square_tile({dst})"),
    SfpuOp.SIN: ("eltwise_unary/trigonometry.h", "sin_tile_init()", "sin_tile({dst})"),
    SfpuOp.COS: ("eltwise_unary/trigonometry.h", "cos_tile_init()", "cos_tile({dst})"),
    SfpuOp.ADD_SCALAR: ("eltwise_unary/binop_with_scalar.h", "binop_with_scalar_tile_init()",
                        "add_unary_tile({dst}, {param})"),
    SfpuOp.MUL_SCALAR: ("eltwise_unary/binop_with_scalar.h", "binop_with_scalar_tile_init()",
                        "mul_unary_tile({dst}, {param})"),
    SfpuOp.POWER: ("compute_kernel_api.h", "power_tile_init()", "power_tile({dst}, {param})"),
    SfpuOp.LEAKY_RELU: ("eltwise_unary/relu.h", "leaky_relu_tile_init()", "leaky_relu_tile({dst}, {param})"),
    **{op: ("eltwise_unary/comp.h", f"{op.name.lower()}_tile_init()", f"{op.name.lower()}_tile({{dst}})")
       for op in (SfpuOp.GTZ, SfpuOp.GEZ, SfpuOp.LTZ, SfpuOp.LEZ, SfpuOp.EQZ, SfpuOp.NEZ)},
    **{op: ("eltwise_unary/rounding.h", "rounding_op_tile_init()", f"{op.name.lower()}_tile({{dst}})")
       for op in (SfpuOp.FLOOR, SfpuOp.CEIL, SfpuOp.TRUNC)},
    SfpuOp.ROUND_EVEN: ("eltwise_unary/rounding.h", "rounding_op_tile_init()", "round_tile({dst}, 0)"),
    SfpuOp.EXPM1: ("compute_kernel_api.h", "expm1_tile_init()", "expm1_tile({dst})"),
    SfpuOp.LOG1P: ("eltwise_unary/log1p.h", "log1p_tile_init()", "log1p_tile({dst})"),
    SfpuOp.ERF: ("eltwise_unary/erf_erfc.h", "erf_tile_init<false>()", "erf_tile<false>({dst})"),
    SfpuOp.ERFC: ("eltwise_unary/erf_erfc.h", "erfc_tile_init()", "erfc_tile({dst})"),
    **{op: ("eltwise_unary/trigonometry.h", f"{op.name.lower()}_tile_init()", f"{op.name.lower()}_tile({{dst}})")
       for op in (SfpuOp.TAN, SfpuOp.ATAN, SfpuOp.ASIN, SfpuOp.ACOS, SfpuOp.SINH, SfpuOp.COSH, SfpuOp.ASINH,
                  SfpuOp.ACOSH, SfpuOp.ATANH)},
    SfpuOp.EXP2: ("compute_kernel_api.h", "exp2_tile_init()", "exp2_tile({dst})"),
    SfpuOp.SIGN: ("compute_kernel_api.h", "sign_tile_init()", "sign_tile({dst})"),
    SfpuOp.CBRT: ("eltwise_unary/cbrt.h", "cbrt_tile_init()", "cbrt_tile({dst})"),
    SfpuOp.NEG_INT: ("eltwise_unary/negative.h", "negative_tile_init()", "negative_tile_int32({dst})"),
    SfpuOp.ABS_INT: ("compute_kernel_api.h", "abs_tile_init()", "abs_tile_int32({dst})"),
    SfpuOp.NOT: ("eltwise_unary/bitwise_not.h", "bitwise_not_tile_init()", "bitwise_not_tile({dst})"),
    **{op: ("eltwise_unary/typecast.h", f"typecast_tile_init<{formats}>()", f"typecast_tile<{formats}>({{dst}})")
       for op, formats in (
           (op, f"(uint32_t)DataFormat::{source}, (uint32_t)DataFormat::{target}") for op, source, target in (
               (SfpuOp.I32_TO_F32, "Int32", "Float32"), (SfpuOp.U32_TO_F32, "UInt32", "Float32"),
               (SfpuOp.F32_TO_I32, "Float32", "Int32"), (SfpuOp.F32_TO_U32, "Float32", "UInt32")))},
}
# SFPU binary op on two Dst tiles, result in the first -> (header, init, call with {a}, {b}).
_SFPU_BINARY = {
    SfpuOp.ADD: ("eltwise_binary_sfpu.h", "add_binary_tile_init()", "add_binary_tile({a}, {b}, {a})"),
    SfpuOp.SUB: ("eltwise_binary_sfpu.h", "sub_binary_tile_init()", "sub_binary_tile({a}, {b}, {a})"),
    SfpuOp.MUL: ("eltwise_binary_sfpu.h", "mul_binary_tile_init()", "mul_binary_tile({a}, {b}, {a})"),
    SfpuOp.DIV: ("eltwise_binary_sfpu.h", "div_binary_tile_init()", "div_binary_tile({a}, {b}, {a})"),
    SfpuOp.MAXIMUM: ("binary_max_min.h", "binary_max_tile_init()", "binary_max_tile({a}, {b}, {a})"),
    SfpuOp.MINIMUM: ("binary_max_min.h", "binary_min_tile_init()", "binary_min_tile({a}, {b}, {a})"),
    **{op: ("eltwise_binary_sfpu.h", f"{op.name.lower()}_binary_tile_init()",
            f"{op.name.lower()}_binary_tile({{a}}, {{b}}, {{a}})")
       for op in (SfpuOp.EQ, SfpuOp.NE, SfpuOp.LT, SfpuOp.GT, SfpuOp.LE, SfpuOp.GE)},
    SfpuOp.FMOD: ("binary_fmod.h", "fmod_binary_tile_init()", "fmod_binary_tile({a}, {b}, {a})"),
    SfpuOp.ATAN2: ("atan2.h", "atan2_binary_tile_init()", "atan2_binary_tile({a}, {b}, {a})"),
    SfpuOp.POW: ("eltwise_binary_sfpu.h", "power_binary_tile_init()", "power_binary_tile({a}, {b}, {a})"),
    SfpuOp.ADD_INT: ("add_int_sfpu.h", "add_int_tile_init()", "add_int_tile<DataFormat::Int32>({a}, {b}, {a})"),
    SfpuOp.SUB_INT: ("sub_int_sfpu.h", "sub_int_tile_init()", "sub_int_tile<DataFormat::Int32>({a}, {b}, {a})"),
    SfpuOp.MUL_INT: ("mul_int_sfpu.h", "mul_int_tile_init<DataFormat::Int32>()",
                     "mul_int_tile<DataFormat::Int32>({a}, {b}, {a})"),
    SfpuOp.DIV_INT: ("div_int32_floor.h", "div_int32_trunc_tile_init()", "div_int32_trunc_tile({a}, {b}, {a})"),
    SfpuOp.FLOORDIV_INT: ("div_int32_floor.h", "div_int32_floor_tile_init()", "div_int32_floor_tile({a}, {b}, {a})"),
    SfpuOp.REM_INT: ("binary_fmod.h", "fmod_int32_tile_init()", "fmod_int32_tile({a}, {b}, {a})"),
    SfpuOp.REM_UINT: ("binary_remainder.h", "remainder_uint32_tile_init()", "remainder_uint32_tile({a}, {b}, {a})"),
    **{op: ("binary_max_min.h", f"binary_{name}_tile_init()", f"binary_{name}_tile({{a}}, {{b}}, {{a}})")
       for op, name in ((SfpuOp.MAX_INT, "max_int32"), (SfpuOp.MIN_INT, "min_int32"), (SfpuOp.MAX_UINT, "max_uint32"),
                        (SfpuOp.MIN_UINT, "min_uint32"))},
    **{op: ("binary_bitwise_sfpu.h", "binary_bitwise_tile_init()",
            f"bitwise_{op.name.lower()}_binary_tile<DataFormat::Int32>({{a}}, {{b}}, {{a}})")
       for op in (SfpuOp.AND, SfpuOp.OR, SfpuOp.XOR)},
    **{op: ("binary_shift.h", "binary_shift_tile_init()", f"binary_{name}_tile<DataFormat::Int32>({{a}}, {{b}}, {{a}})")
       for op, name in ((SfpuOp.SHL, "left_shift"), (SfpuOp.SHR, "right_shift"),
                        (SfpuOp.SHRU, "logical_right_shift"))},
    **{op: ("binary_comp.h", f"{name}_int_tile_init<DataFormat::{fmt}>()",
            f"{name}_int_tile<DataFormat::{fmt}>({{a}}, {{b}}, {{a}})")
       for op, name, fmt in ((SfpuOp.EQ_INT, "eq", "Int32"), (SfpuOp.NE_INT, "ne", "Int32"),
                             (SfpuOp.LT_INT, "lt", "Int32"), (SfpuOp.GT_INT, "gt", "Int32"),
                             (SfpuOp.LE_INT, "le", "Int32"), (SfpuOp.GE_INT, "ge", "Int32"),
                             (SfpuOp.LT_UINT, "lt", "UInt32"), (SfpuOp.GT_UINT, "gt", "UInt32"),
                             (SfpuOp.LE_UINT, "le", "UInt32"), (SfpuOp.GE_UINT, "ge", "UInt32"))},
}
# Headers every compute kernel includes: startup, CBs, Dst, reconfig, pack.
_COMPUTE_HEADERS = ("common.h", "compute_kernel_hw_startup.h", "cb_api.h", "reg_api.h", "reconfig_data_format.h",
                    "pack.h")

_PRELUDE = """\
// Floor division and modulo, as the ISA (and the simulator) define them.
static inline int64_t tt_hal_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t tt_hal_floormod(int64_t a, int64_t b) { return a - tt_hal_floordiv(a, b) * b; }
"""


def _unimplemented(kernel: Kernel, pc: int, what: str) -> HalError:
    return HalError(StatusCode.UNIMPLEMENTED, f"kernel {kernel.name} pc {pc}: {what} has no TT-Metal translation")



def _page_transfers(slot: int, address: str, l1: str, length: str, read: bool) -> list[str]:
    """`length` bytes from byte `address` of slot's buffer to L1 `l1` (or back): one
    noc_async_read (noc_async_write) per page they touch."""
    noc = f"noc_addr_{slot}(address / page_size_{slot}, offset)"
    transfer = f"noc_async_read({noc}, at, chunk);" if read else f"noc_async_write(at, {noc}, chunk);"
    return [f"for (uint32_t address = {address}, at = {l1}, left = {length}; left;) {{",
            f"  uint32_t offset = address % page_size_{slot}, chunk = page_size_{slot} - offset;",
            "  if (chunk > left) chunk = left;",
            f"  {transfer}",
            "  address += chunk; at += chunk; left -= chunk;",
            "}"]

class _Emitter:
    """Writes one kernel's C++: headers as needed, then the body."""

    def __init__(self, kernel: Kernel, arg_count: int, program: Program):
        self.kernel, self.arg_count, self.program = kernel, arg_count, program
        self.headers: list[str] = []
        self.slots: set[int] = set()
        self.lines: list[str] = []

    def header(self, path: str) -> None:
        if path not in self.headers:
            self.headers.append(path)

    def reg(self, index: int) -> str:
        return f"r[{index}]"

    def u32(self, index: int) -> str:
        return f"(uint32_t){self.reg(index)}"

    def extra_arg(self, offset: int) -> str:
        return f"get_arg_val<uint32_t>({self.arg_count + offset})"

    def body(self) -> list[str]:
        code = self.kernel.code
        targets = {int(row[k + 1]) for row in code for k, kind in enumerate(OPERANDS[Op(int(row[0]))]) if kind == "t"}
        for pc, row in enumerate(code):
            op = Op(int(row[0]))
            if pc in targets:
                self.lines.append(f"pc_{pc}:;")
            for statement in self.statements(pc, op, [int(v) for v in row[1:]]):
                self.lines.append(f"    {statement}")
        return self.lines

    def statements(self, pc: int, op: Op, v: list[int]) -> list[str]:
        r, u32 = self.reg, self.u32
        if op == Op.LI:
            return [f"{r(v[0])} = {v[1]}LL;"]
        if op == Op.MOV:
            return [f"{r(v[0])} = {r(v[1])};"]
        if op in _SCALAR_BINARY:
            return [f"{r(v[0])} = {r(v[1])} {_SCALAR_BINARY[op]} {r(v[2])};"]
        if op in (Op.DIV, Op.MOD):
            helper = "tt_hal_floordiv" if op == Op.DIV else "tt_hal_floormod"
            return [f"{r(v[0])} = {helper}({r(v[1])}, {r(v[2])});"]
        if op in (Op.MIN, Op.MAX):
            compare = "<" if op == Op.MIN else ">"
            return [f"{r(v[0])} = {r(v[1])} {compare} {r(v[2])} ? {r(v[1])} : {r(v[2])};"]
        if op in (Op.ADDI, Op.MULI):
            return [f"{r(v[0])} = {r(v[1])} {'+' if op == Op.ADDI else '*'} {v[2]}LL;"]
        if op == Op.JMP:
            return [f"goto pc_{v[0]};"]
        if op in _BRANCHES:
            return [f"if ({r(v[0])} {_BRANCHES[op]} {r(v[1])}) goto pc_{v[2]};"]
        if op == Op.HALT:
            return ["return;"]
        if op == Op.ARG:
            return [f"{r(v[0])} = get_arg_val<uint32_t>({v[1]});"]
        if op == Op.CT_ARG:
            return [f"{r(v[0])} = get_compile_time_arg_val({v[1]});"]
        if op == Op.WORKGROUP_ID:
            return [f"{r(v[0])} = {self.extra_arg(v[1])};"]
        if op == Op.WORKGROUP_COUNT:
            return [f"{r(v[0])} = {self.extra_arg(3 + v[1])};"]
        if op == Op.WORKGROUP_RANGE:
            ids, counts = ([f"(int64_t){self.extra_arg(base + d)}" for d in range(3)] for base in (0, 3))
            return [f"{{ int64_t total = {r(v[2])}, w = ({ids[2]} * {counts[1]} + {ids[1]}) * {counts[0]} + {ids[0]}, "
                    f"n = {counts[0]} * {counts[1]} * {counts[2]};",
                    f"  {r(v[0])} = tt_hal_floordiv(w * total, n); {r(v[1])} = tt_hal_floordiv((w + 1) * total, n); }}"]
        if op == Op.CONSTANT:
            return [f"{r(v[0])} = {self.extra_arg(WORKGROUP_ARGS + v[1])};"]
        if op in _CB_CALLS:
            return [f"{_CB_CALLS[op]}({v[0]}, {u32(v[1])});"]
        if op in (Op.GET_WRITE_PTR, Op.GET_READ_PTR):
            return [f"{r(v[0])} = {'get_write_ptr' if op == Op.GET_WRITE_PTR else 'get_read_ptr'}({v[1]});"]
        if op in DATA_MOVEMENT_OPS:  # the rest of them: NoC and L1 (only in data-movement kernels: Program)
            if op == Op.L1_LOAD:
                return [f"{r(v[0])} = (int32_t)*reinterpret_cast<volatile tt_l1_ptr uint32_t *>({self.u32(v[1])});"]
            return self.l1_fill(v) if op == Op.L1_FILL else self.noc(pc, op, v)
        if op in _TILE_REGS:
            return [f"{_TILE_REGS[op]}();"]
        return self.compute(pc, op, v)

    def l1_fill(self, v: list[int]) -> list[str]:
        """L1_FILL: uint32_t stores through an L1 pointer, as TT-Metal kernels write L1."""
        pointer = "volatile tt_l1_ptr uint32_t *"
        return [f"for ({pointer}p = reinterpret_cast<{pointer}>({self.u32(v[0])}), *end = p + {self.u32(v[1])} / 4; "
                f"p != end; ++p) *p = {v[2]:#x}u;"]

    def noc(self, pc: int, op: Op, v: list[int]) -> list[str]:
        r, u32 = self.reg, self.u32
        if op == Op.NOC_READ_BARRIER:
            return ["noc_async_read_barrier();"]
        if op == Op.NOC_WRITE_BARRIER:
            return ["noc_async_write_barrier();"]
        slot = v[0]
        if op == Op.ADDRGEN:
            self.slots.add(slot)
            return [f"base_{slot} = {u32(v[1])}; page_size_{slot} = {u32(v[2])}; is_dram_{slot} = {r(v[3])} != 0;"]
        if slot not in self.slots:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"kernel {self.kernel.name} pc {pc}: {op.name} uses address generator {slot} before "
                           f"ADDRGEN sets it")
        if op == Op.NOC_GATHER:
            return self.noc_gather(slot, v)
        if op in (Op.NOC_READ_SPAN, Op.NOC_WRITE_SPAN):  # the loop the simulator runs as one instruction
            return _page_transfers(slot, u32(v[1]), u32(v[2]), u32(v[3]), op == Op.NOC_READ_SPAN)
        if op in (Op.NOC_READ_ROWS, Op.NOC_WRITE_ROWS):  # a loop of those over the rows
            return [f"for (uint32_t row = 0, rows = {u32(v[4])}; row < rows; ++row) {{",
                    *("  " + line for line in _page_transfers(slot, f"{u32(v[1])} + row * {u32(v[5])}",
                                                              f"{u32(v[2])} + row * {u32(v[6])}", u32(v[3]),
                                                              op == Op.NOC_READ_ROWS)),
                    "}"]
        if op in (Op.NOC_READ_PAGE, Op.NOC_WRITE_PAGE):
            page, offset, l1, length = v[1], None, v[2], None
        else:
            page, offset, l1, length = v[1], v[2], v[3], v[4]
        address = f"noc_addr_{slot}({u32(page)}, {u32(offset) if offset is not None else '0'})"
        size = u32(length) if length is not None else f"page_size_{slot}"
        if op in (Op.NOC_READ_PAGE, Op.NOC_READ):
            return [f"noc_async_read({address}, {u32(l1)}, {size});"]
        return [f"noc_async_write({u32(l1)}, {address}, {size});"]

    def noc_gather(self, slot: int, v: list[int]) -> list[str]:
        """NOC_GATHER: the loops the simulator runs as one instruction, over the rows and
        each row's index entries in L1: a run of consecutive indices is one noc_async_read
        per page it touches, a negative index a store of the fill pattern."""
        u32 = self.u32
        entry = "volatile tt_l1_ptr int32_t *"
        return [
            f"for (uint32_t row = 0, rows = {u32(v[6])}; row < rows; ++row) {{",
            f"  {entry}entry = reinterpret_cast<{entry}>({u32(v[1])} + row * {u32(v[7])});",
            f"  uint32_t to = {u32(v[2])} + row * {u32(v[7])}, count = {u32(v[3])}, base = {u32(v[4])};",
            "  for (uint32_t i = 0, j; i < count; i = j) {",
            "    j = i + 1;",
            "    if (entry[i] < 0) {",
            f"      *reinterpret_cast<volatile tt_l1_ptr uint32_t *>(to + 4 * i) = {v[5]:#x}u; continue;",
            "    }",
            "    while (j < count && entry[j] == entry[i] + (int32_t)(j - i)) ++j;",
            *("    " + line for line in _page_transfers(slot, "base + 4 * (uint32_t)entry[i]", "to + 4 * i",
                                                     "4 * (j - i)", True)),
            "  }",
            "}"]

    def compute(self, pc: int, op: Op, v: list[int]) -> list[str]:
        u32 = self.u32
        if op == Op.COPY_TILE:
            self.header("tile_move_copy.h")
            return [f"reconfig_data_format_srca({v[0]});", f"copy_init({v[0]});",
                    f"copy_tile({v[0]}, {u32(v[1])}, {u32(v[2])});"]
        if op in _ELTWISE:
            a, b, ia, ib, dst, broadcast = v[0], v[1], u32(v[2]), u32(v[3]), u32(v[4]), Broadcast(v[5])
            if broadcast == Broadcast.NONE:
                self.header("eltwise_binary.h")
                name = _ELTWISE_PLAIN[op]
                return [f"reconfig_data_format({a}, {b});", f"{name}_init({a}, {b});",
                        f"{name}_tiles({a}, {b}, {ia}, {ib}, {dst});"]
            self.header("bcast.h")
            kind, dim = _ELTWISE[op], _BROADCAST[broadcast]
            return [f"reconfig_data_format({a}, {b});",
                    f"bcast_init<EltwiseBinaryType::{kind}, BroadcastType::{dim}>({a}, {b});",
                    f"any_tiles_bcast<EltwiseBinaryType::{kind}, BroadcastType::{dim}>({a}, {b}, {ia}, {ib}, {dst});"]
        if op in _ELTWISE_BLOCK:
            self.header("eltwise_binary.h")
            a, b, name = v[0], v[1], _ELTWISE_BLOCK[op]
            return [f"reconfig_data_format({a}, {b});", f"{name}_init({a}, {b});",
                    f"{name}_block({a}, {b}, {u32(v[2])}, {u32(v[3])}, {u32(v[4])}, {u32(v[5])});"]
        if op == Op.MATMUL_TILES:
            self.header("matmul.h")
            a, b = v[0], v[1]
            # matmul feeds in0 to SrcB and in1 to SrcA, hence the swapped reconfig; the
            # transpose of in1 is matmul_init's argument.
            return [f"reconfig_data_format({b}, {a});", f"matmul_init({a}, {b}, {v[5]});",
                    f"matmul_tiles({a}, {b}, {u32(v[2])}, {u32(v[3])}, {u32(v[4])});"]
        if op == Op.MATMUL_BLOCK:
            self.header("matmul.h")
            a, b, dims = v[0], v[1], ", ".join(u32(x) for x in v[6:9])
            return [f"reconfig_data_format({b}, {a});", f"matmul_block_init({a}, {b}, {v[5]}, {dims});",
                    f"matmul_block({a}, {b}, {u32(v[2])}, {u32(v[3])}, {u32(v[4])}, {v[5]}, {dims});"]
        if op == Op.REDUCE_TILE:
            self.header("reduce.h")
            pool, dim = _REDUCE[ReduceKind(v[0])]
            template = f"<PoolType::{pool}, ReduceDim::{dim}>"
            cb, scaler = v[1], v[2]
            return [f"reconfig_data_format({cb}, {scaler});",
                    f"reduce_init{template}({cb}, {scaler}, {self.output_cb()});",
                    f"reduce_tile{template}({cb}, {scaler}, {u32(v[3])}, {u32(v[4])}, {u32(v[5])});",
                    "reduce_uninit();"]
        if op == Op.TRANSPOSE_WH_TILE:
            self.header("transpose.h")
            return [f"reconfig_data_format_srca({v[0]});", f"transpose_init({v[0]});",
                    f"transpose_tile({v[0]}, {u32(v[1])}, {u32(v[2])});"]
        if op == Op.SFPU_UNARY:
            sfpu, dst = SfpuOp(v[0]), u32(v[1])
            header, init, call = _SFPU_UNARY[sfpu]
            self.header(header)
            return [f"{init};", f"{call.format(dst=dst, param=f'{v[2]:#x}u')};"]
        if op == Op.SFPU_BINARY:
            return self.sfpu_binary(SfpuOp(v[0]), v[1], v[2])
        if op == Op.SFPU_TERNARY:  # WHERE (a float condition in Dst's format) or WHERE_INT
            self.header("eltwise_unary/where.h")
            fmt = "Int32" if v[0] == SfpuOp.WHERE_INT else "Float32" if self.kernel.config.fp32_dest_acc_en \
                else "Float16_b"
            c, a, b = (u32(x) for x in v[1:4])
            return ["where_tile_init();", f"where_tile<DataFormat::{fmt}>({c}, {a}, {b}, {c});"]
        if op == Op.UNARY_BCAST:
            self.header("bcast.h")
            template = f"<BroadcastType::{_BROADCAST.get(Broadcast(v[3]), 'NONE')}>"
            return [f"reconfig_data_format_srca({v[0]});", f"unary_bcast_init{template}({v[0]});",
                    f"unary_bcast{template}({v[0]}, {u32(v[1])}, {u32(v[2])});"]
        if op in (Op.FILL_TILE, Op.FILL_TILE_BITS):
            self.header("eltwise_unary/fill.h")
            value = f"{v[1]:#x}u" if op == Op.FILL_TILE else u32(v[1])
            return ["fill_tile_init();", f"fill_tile_bitcast({u32(v[0])}, {value});"]
        if op == Op.PACK_TILE:
            return [f"pack_reconfig_data_format({v[1]});", f"pack_tile<true>({u32(v[0])}, {v[1]}, {u32(v[2])});"]
        if op == Op.PACK_TILES:  # not pack_block: that one packs from an offset of its own (docs/tensix.md)
            return [f"pack_reconfig_data_format({v[1]});",
                    f"for (uint32_t j = 0; j < {u32(v[3])}; ++j) pack_tile<true>({u32(v[0])} + j, {v[1]}, "
                    f"{u32(v[2])} + j);"]
        if op == Op.TILIZE_BLOCK:
            self.header("tilize.h")
            icb, ocb, block = v[0], v[1], u32(v[2])
            return [f"reconfig_data_format_srca({icb});", f"pack_reconfig_data_format({ocb});",
                    f"tilize_init({icb}, {block}, {ocb});", f"tilize_block({icb}, {block}, {ocb});",
                    f"tilize_uninit({icb}, {ocb});"]
        if op == Op.UNTILIZE_BLOCK:
            return self.untilize_block(v[0], v[1], v[2])
        raise _unimplemented(self.kernel, pc, op.name)

    def untilize_block(self, icb: int, ocb: int, block: int) -> list[str]:
        """pack_untilize_block of a block of `block` tiles (a register): the block's width
        is the template's, so each count up to the kernel's Dst capacity (the most the
        block may hold, as the simulator checks) has its case."""
        self.header("pack_untilize.h")
        cases = [f"case {n}: pack_untilize_init<{n}>({icb}, {ocb}); pack_untilize_block<{n}>({icb}, 1, {ocb}); "
                 f"pack_untilize_uninit({ocb}); break;" for n in range(1, self.kernel.config.dst_capacity() + 1)]
        return [f"reconfig_data_format_srca({icb});", f"pack_reconfig_data_format({ocb});",
                f"switch ({self.u32(block)}) {{", *(f"    {case}" for case in cases), "    default: break;", "}"]

    def sfpu_binary(self, sfpu: SfpuOp, a: int, b: int) -> list[str]:
        u32 = self.u32
        if sfpu in _SFPU_BINARY:
            header, init, call = _SFPU_BINARY[sfpu]
            self.header(header)
            return [f"{init};", f"{call.format(a=u32(a), b=u32(b))};"]
        # mask_tile reads its mask from Dst[a + 1], whatever index it is given (the kernel
        # library keeps it there; see docs/hardware.md); there is no -inf mask, but
        # -mask_posinf(-x) is one.
        self.header("mask.h")
        if sfpu == SfpuOp.MASK:
            return ["mask_tile_init();", f"mask_tile({u32(a)}, {u32(b)});"]
        self.header("eltwise_unary/negative.h")
        return ["negative_tile_init();", f"negative_tile({u32(a)});", "mask_tile_init();",
                f"mask_posinf_tile({u32(a)}, {u32(b)});", "negative_tile_init();", f"negative_tile({u32(a)});"]

    def output_cb(self) -> int:
        """The CB a reduce or broadcast init configures the packer for: the program's
        first output CB (index 16 and up, tt-metal's convention), else its last CB."""
        indices = sorted(cb.index for cb in self.program.circular_buffers)
        outputs = [i for i in indices if i >= 16]
        return outputs[0] if outputs else indices[-1]


def kernel_source(kernel: Kernel, program: Program) -> str:
    """The TT-Metal C++ source of `kernel`, one of `program`'s kernels."""
    index = next((i for i, k in enumerate(program.kernels) if k is kernel), None)
    if index is None:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"kernel {kernel.name} is not part of the program")
    emitter = _Emitter(kernel, len(program.runtime_args[index]), program)
    body = emitter.body()
    compute = kernel.processor == Processor.COMPUTE
    title = (f"// {kernel.name} ({kernel.processor.name}): generated by tt-hal native/codegen.py "
             "from tt_hal.target.isa code\n"
             f"// for tt-metal {TT_METAL_VERSION}.\n")
    if compute:
        includes = [f'#include "api/compute/{h}"' for h in (*_COMPUTE_HEADERS, *sorted(emitter.headers))]
    else:
        includes = ['#include "api/dataflow/dataflow_api.h"']
    declarations = ["    int64_t r[32] = {0};"]
    for slot in sorted(emitter.slots):
        declarations += [f"    uint32_t base_{slot} = 0, page_size_{slot} = 0;",
                         f"    bool is_dram_{slot} = true;",
                         f"    auto noc_addr_{slot} = [&](uint32_t page, uint32_t offset) -> uint64_t {{",
                         f"        if (is_dram_{slot}) return InterleavedAddrGen<true>{{base_{slot}, page_size_{slot}}}"
                         f".get_noc_addr(page, offset);",
                         f"        return InterleavedAddrGen<false>{{base_{slot}, page_size_{slot}}}"
                         f".get_noc_addr(page, offset);",
                         "    };"]
    if compute:
        cbs = sorted(cb.index for cb in program.circular_buffers)
        inputs = [i for i in cbs if i < 16] or cbs
        # matmul unpacks in0 to SrcB and in1 to SrcA: the hardware starts up in that order.
        order = "<SrcOrder::Reverse>" if any(int(row[0]) in (Op.MATMUL_TILES, Op.MATMUL_BLOCK) for row in kernel.code) \
            else ""
        declarations.append(f"    compute_kernel_hw_startup{order}({inputs[0]}, {inputs[min(1, len(inputs) - 1)]}, "
                            f"{emitter.output_cb()});")
    return (title + "#include <stdint.h>\n" + "\n".join(includes) + "\n\n" + _PRELUDE + "\nvoid kernel_main() {\n"
            + "\n".join(declarations + body) + "\n}\n")


def program_sources(program: Program) -> dict[Processor, str]:
    """{processor: C++ source} of every kernel of `program`."""
    return {kernel.processor: kernel_source(kernel, program) for kernel in program.kernels}


def runtime_args(template_values: list[int], workgroup_id, workgroup_count, constants) -> list[int]:
    """A kernel's runtime args on one core, in the layout the generated code reads:
    its own args, then workgroup id and count (x, y, z), then the push constants."""
    return [int(v) & 0xFFFFFFFF for v in (*template_values, *workgroup_id, *workgroup_count, *constants)]
