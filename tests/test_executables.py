"""Executables end to end: the Tensix kernel ISA (tt_hal/target/isa.py), the .ttx format
(hal/ttx), the executable cache (hal/executable.py), dispatch validation
(hal/device.py, hal/command_buffer.py) and the simulator's fault reports
(sim/dispatch.py, sim/interpreter.py).

Scalar results are read back through a "probe": a writer kernel that cannot store
a register to memory directly (the ISA has no store), so it copies page `value`
of a table whose page p holds p into the next row of an output tensor. Every
recorded register therefore lands, exactly, in the output on the host.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import subprocess
import sys
import textwrap
import time

import flatbuffers
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hal
import tt_hal.sim.device
import tt_hal.sim.dispatch
from hal.executable import EXECUTABLE_FORMAT, ExportInfo
from tests.cts.ctsutil import raises_status
from tt_hal.kernels import eltwise, rowmajor
from tt_hal.target import ttx_generated as fb
from tt_hal.target.isa import (
    ADDRGEN_SLOTS,
    COMPUTE_OPS,
    MAX_RUNTIME_ARGS,
    NUM_REGISTERS,
    WIDTH,
    Broadcast,
    MathFidelity,
    Op,
    Processor,
    ReduceKind,
    SfpuOp,
    disassemble,
    float_bits,
    validate_code,
)
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.program import (
    ArgKind,
    BindingSource,
    CircularBufferConfig,
    Export,
    ExportTensor,
    Kernel,
    KernelConfig,
    Program,
    RuntimeArg,
    Stage,
)
from tt_hal.target.ttx import FILE_IDENTIFIER, VERSION, read_executable, write_executable

SC = hal.StatusCode
DF = hal.DataFormat
TIMEOUT_NS = 60_000_000_000
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------
# Helpers: programs, executables, dispatches.
# ---------------------------------------------------------------------------

def make_export(*kernels, cbs=(), constants=0, bindings=0, name="test", workgroup_size=(1, 1, 1)) -> Export:
    """kernels: (Kernel, runtime-arg template) pairs."""
    program = Program(tuple(cbs), tuple(k for k, _ in kernels), tuple(tuple(a) for _, a in kernels))
    return Export(name, constants, bindings, workgroup_size, (Stage(program),))


def prepare(device, *exports):
    return device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable(list(exports)))


def record(device, executable, workgroup_count=(1, 1, 1), constants=(), bindings=(), ordinal=0):
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, ordinal, workgroup_count, np.asarray(constants, np.uint32).tobytes(), list(bindings))
    cb.end()
    return cb


def run(device, executable, workgroup_count=(1, 1, 1), constants=(), bindings=(), ordinal=0):
    """Dispatches and waits; raises the dispatch's failure."""
    sem = device.create_semaphore(0)
    device.queue_execute(record(device, executable, workgroup_count, constants, bindings, ordinal), [], [(sem, 1)])
    assert sem.wait(1, timeout=TIMEOUT_NS), "dispatch did not complete in time"


def dram_tensor(device, array, dtype, layout="row_major"):
    return device.to_device(array, dtype, layout, hal.DRAM_MEMORY_CONFIG)


# ---- The probe: a writer kernel recording register values into an output tensor ----

TABLE_PAGES = 1024
BIAS = 512  # values in [-BIAS, TABLE_PAGES - BIAS) can be recorded
ROW_BYTES = 32  # one page of the table / output: 8 x uint32
SENTINEL = 0xDEAD
PROBE_ARGS = (RuntimeArg(ArgKind.BINDING_ADDRESS, 0), RuntimeArg(ArgKind.BINDING_IS_DRAM, 0),
              RuntimeArg(ArgKind.BINDING_ADDRESS, 1), RuntimeArg(ArgKind.BINDING_IS_DRAM, 1))
PROBE_CB = CircularBufferConfig(0, DF.uint32, ROW_BYTES, 1)


class Probe:
    """A writer kernel. `record(reg)` stores the register's value in the next output
    row (or row `row`, a register or int): it reads page reg + BIAS of the table into
    c_0 and writes that page to the output. Runtime args 0..3 address the table
    (binding 0) and the output (binding 1); extra args follow from index 4."""

    def __init__(self, name: str = "probe"):
        self.k = k = KernelBuilder(name)
        taddr, tdram, oaddr, odram = k.arg(0, "taddr"), k.arg(1, "tdram"), k.arg(2, "oaddr"), k.arg(3, "odram")
        size = k.const(ROW_BYTES, "row_bytes")
        k.addrgen(0, taddr, size, tdram)
        k.addrgen(1, oaddr, size, odram)
        k.release(taddr, tdram, oaddr, odram, size)
        self.ptr = k.reg("ptr")
        k.cb_reserve_back(0, 1)
        k.get_write_ptr(self.ptr, 0)
        self.rows = 0

    def record(self, reg, row=None) -> None:
        k = self.k
        biased = k.reg("biased")
        k.addi(biased, reg, BIAS)
        k.noc_read_page(0, biased, self.ptr)
        k.noc_read_barrier()
        k.release(biased)
        if row is None:
            row, self.rows = self.rows, self.rows + 1
        k.noc_write_page(1, row, self.ptr)
        k.noc_write_barrier()

    def export(self, extra_args=(), compile_args=(), constants=0, name="probe", bindings=2) -> Export:
        kernel = self.k.build(Processor.RISCV_0, compile_args)
        return make_export((kernel, PROBE_ARGS + tuple(extra_args)), cbs=(PROBE_CB,), constants=constants,
                           bindings=bindings, name=name)


@pytest.fixture(scope="module")
def table(device):
    values = np.repeat(np.arange(TABLE_PAGES, dtype=np.uint32)[:, None], ROW_BYTES // 4, 1)
    view = dram_tensor(device, values, "uint32")
    assert view.spec.page_size == ROW_BYTES
    return view


def output(device, rows):
    return dram_tensor(device, np.full((rows, ROW_BYTES // 4), SENTINEL, np.uint32), "uint32")


def recorded(out) -> np.ndarray:
    """Row values as recorded (SENTINEL - BIAS where a row was never written)."""
    host = out.to_host()
    assert (host == host[:, :1]).all(), "a probe row is not one table page"
    return host[:, 0].astype(np.int64) - BIAS


UNWRITTEN = SENTINEL - BIAS


def run_probe(device, table, export, rows, workgroup_count=(1, 1, 1), constants=()):
    out = output(device, rows)
    run(device, prepare(device, export), workgroup_count, constants, [table.get_buffer(), out.get_buffer()])
    return recorded(out)


# ---- A known-good dispatch: eltwise add through the kernel library ----

def eltwise_constants(executable, out) -> list[int]:
    """Push constants of the library's eltwise programs: tiles of `out`, then (in newer
    versions of the library) tiles per row. Sized by the export's constant count."""
    spec = out.spec
    values = [spec.num_pages, spec.padded_width // 32]
    count = executable.export_info(0).constant_count
    assert 1 <= count <= len(values), f"unexpected eltwise export with {count} push constants"
    return values[:count]


def check_device_works(device) -> None:
    """A good dispatch after a failure still runs and computes the right thing."""
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64) % 97
    b = np.full((32, 64), 3.0, np.float32)
    va, vb = dram_tensor(device, a, "bfloat16", "tile"), dram_tensor(device, b, "bfloat16", "tile")
    vc = dram_tensor(device, np.zeros((32, 64), np.float32), "bfloat16", "tile")
    exe = prepare(device, eltwise.eltwise_binary("add", DF.bfloat16, DF.bfloat16, DF.bfloat16))
    run(device, exe, (2, 1, 1), eltwise_constants(exe, vc), [va.get_buffer(), vb.get_buffer(), vc.get_buffer()])
    np.testing.assert_array_equal(vc.to_host(np.float32), a + b)


def expect_fault(device, executable, code, words, workgroup_count=(1, 1, 1), constants=(), bindings=()) -> str:
    """Runs a dispatch that must fail with `code`; checks the report names `words`,
    that its signal semaphore fails, that a submission waiting on it fails too
    (without running), and that the device then runs a good dispatch. Returns the report."""
    gate, sem, dependent = device.create_semaphore(0), device.create_semaphore(0), device.create_semaphore(0)
    device.queue_execute(record(device, executable, workgroup_count, constants, bindings), [(gate, 1)], [(sem, 1)])
    # The dependent submission would write 7s over `marker`; it must never run.
    marker = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT
                                              | hal.BufferUsage.MAPPING, 64)
    marker.map_write(0, bytes(64))
    follow = hal.HalCommandBuffer(device)
    follow.fill(marker, np.uint8(7))
    follow.end()
    device.queue_execute(follow, [(sem, 1)], [(dependent, 1)])
    gate.signal(1)
    with raises_status(code) as info:
        sem.wait(1, timeout=TIMEOUT_NS)
    report = info.value.message
    for word in words:
        assert word in report, f"{word!r} missing from the fault report:\n{report}"
    with raises_status(code):
        dependent.wait(1, timeout=TIMEOUT_NS)
    assert bytes(marker.map_read()) == bytes(64), "a submission waiting on a failed dispatch ran"
    check_device_works(device)
    return report


# ---------------------------------------------------------------------------
# 1. The ISA: KernelBuilder, execution of scalar code, disassembly, validation.
# ---------------------------------------------------------------------------

def row(op, *operands):
    return [int(op), *operands] + [0] * (WIDTH - 1 - len(operands))


def test_builder_emits_rows():
    k = KernelBuilder("rows")
    a = k.const(5, "a")
    b = k.reg("b")
    k.emit(Op.ADDI, b, a, -3)
    k.cb_wait_front(16, a)
    k.sfpu_unary(SfpuOp.MUL_SCALAR, b, 2.5)
    k.fill_tile(a, -1.0)
    k.add_tiles(0, 1, a, b, a, Broadcast.COL)
    kernel = k.build(Processor.COMPUTE, compile_args=(4, 5), math_fidelity=MathFidelity.LoFi, fp32_dest_acc_en=True)
    expected = [
        row(Op.LI, 0, 5),
        row(Op.ADDI, 1, 0, -3),
        row(Op.CB_WAIT_FRONT, 16, 0),
        row(Op.SFPU_UNARY, int(SfpuOp.MUL_SCALAR), 1, float_bits(2.5)),
        row(Op.FILL_TILE, 0, float_bits(-1.0)),
        row(Op.ADD_TILES, 0, 1, 0, 1, 0, int(Broadcast.COL)),
        row(Op.HALT),
    ]
    assert kernel.code.dtype == np.int64 and kernel.code.shape == (7, WIDTH)
    assert kernel.code.tolist() == expected
    assert kernel.name == "rows" and kernel.processor == Processor.COMPUTE
    assert kernel.compile_args == (4, 5)
    assert kernel.config == KernelConfig(MathFidelity.LoFi, fp32_dest_acc_en=True)
    assert {r: n for names in kernel.register_names for r, n in names.items()} == {0: "a", 1: "b"}
    assert len(kernel.register_names) == kernel.code.shape[0]  # one {register: name} per row


def test_builder_int_operand_uses_a_scratch_register_and_releases_it():
    k = KernelBuilder("scratch")
    keep = k.reg("keep")  # r0
    k.cb_reserve_back(3, 2)  # 2 goes to scratch r1 first
    k.cb_push_back(3, 2)  # r1 free again: reused
    k.emit(Op.MOV, keep, keep)
    assert k.build().code.tolist() == [
        row(Op.LI, 1, 2), row(Op.CB_RESERVE_BACK, 3, 1),
        row(Op.LI, 1, 2), row(Op.CB_PUSH_BACK, 3, 1),
        row(Op.MOV, 0, 0), row(Op.HALT),
    ]


def test_builder_loop_and_labels_resolve():
    k = KernelBuilder("loop")
    n = k.arg(0, "n")  # r0
    acc = k.const(0, "acc")  # r1
    with k.loop(n) as i:  # r2
        k.add(acc, acc, i)
    with k.loop(3, "j"):  # j = r2 again, end = r3
        k.addi(acc, acc, 1)
    code = k.build(Processor.RISCV_0).code.tolist()
    assert code == [
        row(Op.ARG, 0, 0),
        row(Op.LI, 1, 0),
        row(Op.LI, 2, 0),
        row(Op.BGE, 2, 0, 7),  # top of loop 1 (pc 3), exits to pc 7
        row(Op.ADD, 1, 1, 2),
        row(Op.ADDI, 2, 2, 1),
        row(Op.JMP, 3),
        row(Op.LI, 2, 0),
        row(Op.LI, 3, 3),
        row(Op.BGE, 2, 3, 13),  # top of loop 2 (pc 9), exits to pc 13
        row(Op.ADDI, 1, 1, 1),
        row(Op.ADDI, 2, 2, 1),
        row(Op.JMP, 9),
        row(Op.HALT),
    ]


def test_builder_errors():
    k = KernelBuilder("bad")
    r = k.reg()
    with raises_status(SC.INVALID_ARGUMENT):
        k.emit(Op.ADD, r, r)  # three operands needed
    with raises_status(SC.INVALID_ARGUMENT):
        k.emit(Op.MOV, r, 3)  # a register expected
    with pytest.raises(AttributeError):
        k.no_such_instruction()
    lost = k.label("lost")
    k.jmp(lost)
    with raises_status(SC.INVALID_ARGUMENT) as info:
        k.build()
    assert "lost" in info.value.message
    full = KernelBuilder("full")
    for _ in range(NUM_REGISTERS):
        full.reg()
    with raises_status(SC.RESOURCE_EXHAUSTED):
        full.reg()


SCALAR_CASES = [  # (op, a, b, expected): DIV floors, MOD takes the divisor's sign, SHR is arithmetic
    (Op.ADD, 200, 77, 277), (Op.SUB, 5, 12, -7), (Op.MUL, -13, 11, -143),
    (Op.DIV, 17, 5, 3), (Op.DIV, -7, 2, -4), (Op.DIV, 7, -2, -4),
    (Op.MOD, 17, 5, 2), (Op.MOD, -7, 2, 1), (Op.MOD, 7, -2, -1),
    (Op.AND, 0b1101, 0b0111, 0b0101), (Op.OR, 0b1001, 0b0110, 0b1111), (Op.XOR, 0b1100, 0b1010, 0b0110),
    (Op.SHL, 3, 6, 192), (Op.SHR, 200, 3, 25), (Op.SHR, -64, 2, -16),
    (Op.MIN, -5, 3, -5), (Op.MAX, -5, 3, 3), (Op.MIN, 400, 400, 400),
]


def test_scalar_arithmetic_executes(device, table):
    p = Probe("arith")
    k = p.k
    for op, a, b, _ in SCALAR_CASES:
        ra, rb, rd = k.const(a), k.const(b), k.reg("d")
        k.emit(op, rd, ra, rb)
        p.record(rd)
        k.release(ra, rb, rd)
    x, y = k.const(-20, "x"), k.reg("y")
    k.emit(Op.ADDI, y, x, 7)
    p.record(y)  # -13
    k.emit(Op.MULI, y, x, -9)
    p.record(y)  # 180
    k.emit(Op.MOV, y, x)
    p.record(y)  # -20
    k.emit(Op.LI, y, 499)
    p.record(y)
    got = run_probe(device, table, p.export(), p.rows)
    expected = [e for *_, e in SCALAR_CASES] + [-13, 180, -20, 499]
    assert got.tolist() == expected


@pytest.mark.parametrize("op, a, b, taken", [
    (Op.BEQ, 4, 4, 1), (Op.BEQ, 4, 5, 0), (Op.BNE, 4, 5, 1), (Op.BNE, 4, 4, 0),
    (Op.BLT, -1, 0, 1), (Op.BLT, 0, 0, 0), (Op.BGE, 0, 0, 1), (Op.BGE, -1, 0, 0),
])
def test_branches(device, table, op, a, b, taken):
    p = Probe("branch")
    k = p.k
    ra, rb, result = k.const(a), k.const(b), k.reg("result")
    yes, end = k.label("yes"), k.label("end")
    k.emit(op, ra, rb, yes)
    k.emit(Op.LI, result, 0)
    k.jmp(end)
    k.place(yes)
    k.emit(Op.LI, result, 1)
    k.place(end)
    p.record(result)
    assert run_probe(device, table, p.export(), 1).tolist() == [taken]


def test_loops_run_the_right_number_of_times(device, table):
    p = Probe("loops")
    k = p.k
    count = k.const(0, "count")
    with k.loop(5):
        k.addi(count, count, 1)
    p.record(count)  # row 0: 5
    k.emit(Op.LI, count, 0)
    with k.loop(3, "i"), k.loop(4, "j"):
        k.addi(count, count, 1)
    p.record(count)  # row 1: 12
    k.emit(Op.LI, count, 0)
    with k.loop(0):
        k.addi(count, count, 1)
    p.record(count)  # row 2: 0 (count 0)
    negative = k.const(-3, "negative")
    with k.loop(negative):
        k.addi(count, count, 1)
    p.record(count)  # row 3: 0 (negative count)
    n = k.arg(4, "n")  # runtime arg: 6
    total = k.const(0, "total")
    with k.loop(n) as i:  # rows 4..9: the index of each iteration, in order
        k.add(total, total, i)
        row_reg = k.reg("row")
        k.addi(row_reg, i, 4)
        p.record(i, row_reg)
        k.release(row_reg)
    p.rows = 10
    p.record(total)  # row 10: 0+1+...+5 = 15
    export = p.export(extra_args=(RuntimeArg(ArgKind.LITERAL, 6),))
    got = run_probe(device, table, export, 12)
    assert got.tolist() == [5, 12, 0, 0, 0, 1, 2, 3, 4, 5, 15, UNWRITTEN]


def test_arguments_constants_and_runtime_arg_kinds(device, table):
    p = Probe("args")
    k = p.k
    for index in range(2):
        r = k.ct_arg(index)
        p.record(r)  # rows 0, 1: compile args 11, 22
        k.release(r)
    r = k.reg()
    for index in range(2):
        k.emit(Op.CONSTANT, r, index)
        p.record(r)  # rows 2, 3: push constants 44, 55
    for index in range(4, 4 + 6):
        k.emit(Op.ARG, r, index)
        p.record(r)  # rows 4..9: the runtime args below
    export = p.export(compile_args=(11, 22), constants=2, extra_args=(
        RuntimeArg(ArgKind.LITERAL, -33), RuntimeArg(ArgKind.CONSTANT, 1),
        RuntimeArg(ArgKind.BINDING_PAGE_OFFSET, 2), RuntimeArg(ArgKind.BINDING_PAGES, 2),
        RuntimeArg(ArgKind.BINDING_IS_DRAM, 2), RuntimeArg(ArgKind.WORKGROUP_COUNT, 0)), bindings=3)
    out = output(device, 10)
    # Binding 2: the table's pages [3, 3 + 5) -- 150 bytes round up to 5 pages.
    binding = (table.get_buffer(), 3 * ROW_BYTES, 150)
    run(device, prepare(device, export), (1, 1, 1), [44, 55], [table.get_buffer(), out.get_buffer(), binding])
    assert recorded(out).tolist() == [11, 22, 44, 55, -33, 55, 3, 5, 1, 1]


def test_workgroup_ids_over_several_rounds(device, table):
    """75 workgroups on 64 cores: two rounds; x runs fastest."""
    p = Probe("ids")
    k = p.k
    x, y, z, cx, cy, cz = (k.reg(n) for n in ("x", "y", "z", "cx", "cy", "cz"))
    for dim, (reg, count) in enumerate(((x, cx), (y, cy), (z, cz))):
        k.emit(Op.WORKGROUP_ID, reg, dim)
        k.emit(Op.WORKGROUP_COUNT, count, dim)
    linear, base = k.reg("linear"), k.reg("base")
    k.emit(Op.MUL, linear, z, cy)  # (z * cy + y) * cx + x
    k.emit(Op.ADD, linear, linear, y)
    k.emit(Op.MUL, linear, linear, cx)
    k.emit(Op.ADD, linear, linear, x)
    k.emit(Op.MULI, base, linear, 4)
    for value in (x, y, z, cx):
        p.record(value, base)
        k.emit(Op.ADDI, base, base, 1)
    grid = (5, 3, 5)
    got = run_probe(device, table, p.export(), 4 * 75 + 1, grid).tolist()
    expected = [v for w in range(75) for v in (w % 5, (w // 5) % 3, w // 15, 5)]
    assert got == expected + [UNWRITTEN]


@pytest.mark.parametrize("grid, total", [((5, 3, 5), 500), ((75, 1, 1), 7), ((2, 2, 2), 0), ((3, 1, 1), 37)])
def test_workgroup_range_is_the_workgroups_share(device, table, grid, total):
    """WORKGROUP_RANGE: [w * T // n, (w + 1) * T // n) of T = push constant 0, w the
    linear workgroup id (x fastest) and n the count: shares that tile [0, T) in order,
    over several rounds of cores, fewer items than workgroups, none."""
    p = Probe("range")
    k = p.k
    count, first, end, base = k.reg("total"), k.reg("first"), k.reg("end"), k.reg("base")
    k.emit(Op.CONSTANT, count, 0)
    k.emit(Op.WORKGROUP_RANGE, first, end, count)
    x, y, z, cx, cy = (k.reg(n) for n in ("x", "y", "z", "cx", "cy"))
    for dim, reg in enumerate((x, y, z)):
        k.emit(Op.WORKGROUP_ID, reg, dim)
    k.emit(Op.WORKGROUP_COUNT, cx, 0)
    k.emit(Op.WORKGROUP_COUNT, cy, 1)
    k.emit(Op.MUL, base, z, cy)  # row 2 * ((z * cy + y) * cx + x)
    k.emit(Op.ADD, base, base, y)
    k.emit(Op.MUL, base, base, cx)
    k.emit(Op.ADD, base, base, x)
    k.emit(Op.MULI, base, base, 2)
    p.record(first, base)
    k.emit(Op.ADDI, base, base, 1)
    p.record(end, base)
    n = math.prod(grid)
    got = run_probe(device, table, p.export(constants=1), 2 * n, grid, [total]).reshape(n, 2)
    assert got.tolist() == [[w * total // n, (w + 1) * total // n] for w in range(n)]
    assert got[0, 0] == 0 and got[-1, 1] == total and (got[1:, 0] == got[:-1, 1]).all()


def test_probe_through_sharded_l1_tensors(device):
    """The same probe with the table and the output placed by the allocator's policy
    (height-sharded in L1): the NoC finds each page through the shard page table."""
    values = np.repeat(np.arange(TABLE_PAGES, dtype=np.uint32)[:, None], ROW_BYTES // 4, 1)
    l1_table = device.to_device(values, "uint32", "row_major")
    out = device.to_device(np.full((70, ROW_BYTES // 4), SENTINEL, np.uint32), "uint32", "row_major")
    for view in (l1_table, out):
        assert view.spec.memory_config.is_sharded and view.spec.memory_config.buffer_type == hal.BufferType.L1
    p = Probe("sharded")
    k = p.k
    w, value = k.reg("w"), k.reg("value")
    k.emit(Op.WORKGROUP_ID, w, 0)
    k.emit(Op.MULI, value, w, 7)
    k.emit(Op.ADDI, value, value, -200)
    p.record(value, w)  # row w: 7w - 200
    run(device, prepare(device, p.export()), (70, 1, 1), (), [l1_table.get_buffer(), out.get_buffer()])
    assert recorded(out).tolist() == [7 * w - 200 for w in range(70)]


def test_binding_errors(device, table):
    """Runtime args naming a binding the export does not declare: INVALID_ARGUMENT when
    the export is built. Fewer bindings than the export declares, or a binding not
    starting at a page boundary: INVALID_ARGUMENT at the call that knows the buffers
    (dispatch for direct buffers, queue_execute for binding-table slots), before
    anything is submitted."""
    p = Probe("bindings")
    r = p.k.arg(4)
    p.record(r)
    out = output(device, 1)
    kernel_and_args = (p.k.build(Processor.RISCV_0), PROBE_ARGS + (RuntimeArg(ArgKind.BINDING_PAGES, 2),))
    with raises_status(SC.INVALID_ARGUMENT) as info:
        make_export(kernel_and_args, cbs=(PROBE_CB,), bindings=2)
    assert "BINDING_PAGES 2" in info.value.message
    uses_binding_2 = prepare(device, make_export(kernel_and_args, cbs=(PROBE_CB,), bindings=3))
    with raises_status(SC.INVALID_ARGUMENT) as info:
        record(device, uses_binding_2, (1, 1, 1), (), [table.get_buffer(), out.get_buffer()])
    assert "2 bindings; the export takes 3" in info.value.message
    misaligned = [table.get_buffer(), out.get_buffer(), (table.get_buffer(), 16, 64)]
    with raises_status(SC.INVALID_ARGUMENT) as info:
        record(device, uses_binding_2, (1, 1, 1), (), misaligned)
    assert "binding 2 starts at byte 16, not at a page boundary" in info.value.message
    cb = hal.HalCommandBuffer(device, binding_capacity=3)  # the same binding through the binding table
    cb.dispatch(uses_binding_2, 0, (1, 1, 1), b"", [hal.BindingRef(k) for k in range(3)])
    cb.end()
    sem = device.create_semaphore(0)
    with raises_status(SC.INVALID_ARGUMENT) as info:
        device.queue_execute(cb, [], [(sem, 1)], binding_table=misaligned)
    assert "binding 2 starts at byte 16, not at a page boundary" in info.value.message
    assert sem.query() == 0 and recorded(out).tolist() == [UNWRITTEN]  # nothing was submitted
    run(device, uses_binding_2, (1, 1, 1), (), [table.get_buffer(), out.get_buffer(), (table.get_buffer(), 64, 64)])
    assert recorded(out).tolist() == [2]


def test_page_aligned_bindings_follow_from_the_runtime_args():
    """A binding must start on a page boundary when a kernel addresses it by pages: its
    page offset or page count, or its address without its byte offset. A binding
    addressed through its byte offset, or not addressed, may start anywhere."""
    def export(*templates):
        kernels = [(KernelBuilder(f"k{p}").build(p), template) for p, template in zip(Processor, templates)]
        return make_export(*kernels, bindings=6)

    a = ArgKind
    args = [RuntimeArg(a.BINDING_ADDRESS, 0), RuntimeArg(a.BINDING_IS_DRAM, 0),  # pages from the buffer's start
            RuntimeArg(a.BINDING_ADDRESS, 1), RuntimeArg(a.BINDING_BYTE_OFFSET, 1),  # bytes
            RuntimeArg(a.BINDING_PAGE_SIZE, 1), RuntimeArg(a.BINDING_PAGES, 2),  # a page count
            RuntimeArg(a.BINDING_ADDRESS, 3), RuntimeArg(a.BINDING_PAGE_OFFSET, 3),  # pages from its first page
            RuntimeArg(a.BINDING_IS_DRAM, 4), RuntimeArg(a.LITERAL, 5)]  # 4 and 5: never addressed
    assert export(args).page_aligned_bindings == {0, 2, 3}
    # Across kernels: the byte offset in one kernel, pages of the same binding in another.
    assert export(args[2:5], [RuntimeArg(a.BINDING_PAGE_OFFSET, 1)]).page_aligned_bindings == {1}
    assert export([RuntimeArg(a.BINDING_ADDRESS, 1)], args[3:5]).page_aligned_bindings == set()


def test_byte_addressed_bindings_start_at_any_byte(device, table):
    """A program that takes a binding's byte offset (and its buffer's page size) may be
    bound at any byte of the buffer, directly or through a binding table; the kernel
    sees the offset and the page size."""
    p = Probe("bytes")
    p.record(p.k.arg(4))
    p.record(p.k.arg(5))
    executable = prepare(device, p.export([RuntimeArg(ArgKind.BINDING_BYTE_OFFSET, 2),
                                           RuntimeArg(ArgKind.BINDING_PAGE_SIZE, 2)], bindings=3))
    out = output(device, 2)
    bindings = [table.get_buffer(), out.get_buffer(), (table.get_buffer(), 84, 40)]
    run(device, executable, (1, 1, 1), (), bindings)
    assert recorded(out).tolist() == [84, ROW_BYTES]
    cb = hal.HalCommandBuffer(device, binding_capacity=3)
    cb.dispatch(executable, 0, (1, 1, 1), b"", [hal.BindingRef(k) for k in range(3)])
    cb.end()
    sem = device.create_semaphore(0)
    device.queue_execute(cb, [], [(sem, 1)], binding_table=bindings[:2] + [(table.get_buffer(), 100, 40)])
    assert sem.wait(1, timeout=TIMEOUT_NS) and recorded(out).tolist() == [100, ROW_BYTES]


def test_core_starts_each_round_with_fresh_circular_buffers(device):
    """Each workgroup fills its 2-page CB without a consumer: with 130 workgroups a core
    runs three, which only works if every round starts with empty circular buffers
    (and fresh registers: the loop counter restarts)."""
    k = KernelBuilder("fill")
    with k.loop(2):
        k.cb_reserve_back(0, 1)
        k.cb_push_back(0, 1)
    export = make_export((k.build(Processor.RISCV_1), ()), cbs=(CircularBufferConfig(0, DF.uint8, 64, 2),))
    run(device, prepare(device, export), (130, 1, 1))


# ---- Disassembly ----

def golden_kernel() -> Kernel:
    k = KernelBuilder("golden")
    n = k.arg(0, "n")
    zero = k.const(0, "zero")
    acc = k.const(0, "acc")
    with k.loop(n) as i:
        k.add(acc, acc, i)
    k.cb_wait_front(16, acc)
    k.tile_regs_acquire()
    k.add_tiles(0, 1, zero, zero, zero, Broadcast.ROW)
    k.sfpu_unary(SfpuOp.ADD_SCALAR, zero, 1.5)
    k.reduce_tile(ReduceKind.MAX_COL, 2, 3, zero, zero, zero)
    k.fill_tile(zero, -0.25)
    k.tile_regs_release()
    return k.build(Processor.COMPUTE)


GOLDEN = """\
; golden (COMPUTE)
   0  arg                r0:n, 0
   1  li                 r1:zero, 0
   2  li                 r2:acc, 0
   3  li                 r3:i, 0
   4> bge                r3:i, r0:n, @8
   5  add                r2:acc, r2:acc, r3:i
   6  addi               r3:i, r3:i, 1
   7  jmp                @4
   8> cb_wait_front      c_16, r2:acc
   9  tile_regs_acquire
  10  add_tiles          c_0, c_1, r1:zero, r1:zero, r1:zero, ROW
  11  sfpu_unary         ADD_SCALAR, r1:zero, 1.5
  12  reduce_tile        MAX_COL, c_2, c_3, r1:zero, r1:zero, r1:zero
  13  fill_tile          r1:zero, -0.25
  14  tile_regs_release
  15  halt"""


def test_disassemble_golden():
    kernel = golden_kernel()
    assert kernel.disassemble() == GOLDEN
    # Without names: bare registers, no title.
    bare = disassemble(kernel.code)
    assert bare.splitlines()[0] == "   0  arg                r0, 0"
    assert "   5  add                r2, r2, r3" in bare.splitlines()
    assert len(bare.splitlines()) == kernel.code.shape[0]


def test_disassemble_names_registers_as_they_were_when_emitted():
    """A register reused under another name: the loop's end register r1 ("n_end") is
    later reused as "later". The loop's instructions should still show n_end."""
    k = KernelBuilder("reuse")
    count = k.const(0, "count")  # r0
    with k.loop(4, "n"):  # i = r1, end = r2
        k.addi(count, count, 1)
    later = k.reg("later")  # reuses a released register
    k.emit(Op.LI, later, 9)
    text = k.build().disassemble()
    assert "li                 r2:n_end, 4" in text, text


# ---- validate_code ----

def valid_code():
    return golden_kernel().code.copy()


def _set(code, pc, column, value):
    code = code.copy()
    code[pc, column] = value
    return code


@pytest.mark.parametrize("code, words", [
    (_set(valid_code(), 2, 0, 0), "unknown opcode 0 at 2"),
    (_set(valid_code(), 2, 0, 99), "unknown opcode 99"),
    (_set(valid_code(), 5, 1, NUM_REGISTERS), "register 32 out of range"),
    (_set(valid_code(), 5, 3, -1), "register -1 out of range"),
    (_set(valid_code(), 8, 1, 32), "circular buffer 32 out of range"),
    (_set(valid_code(), 12, 3, -1), "circular buffer -1 out of range"),
    (_set(valid_code(), 7, 1, 16), "branch target 16 outside the code"),
    (_set(valid_code(), 4, 3, -1), "branch target -1 outside the code"),
    (_set(valid_code(), 10, 6, 4), "bad Broadcast 4"),
    (_set(valid_code(), 12, 1, 3), "bad ReduceKind 3"),
    (_set(valid_code(), 11, 1, 60), "bad SfpuOp 60"),
    (valid_code()[:-1], "end with HALT"),
    (_set(valid_code(), 15, 0, int(Op.JMP)), "end with HALT"),
    (valid_code()[:, :6], "non-empty"),
    (valid_code().reshape(-1), "non-empty"),
    (np.zeros((0, WIDTH), np.int64), "non-empty"),
])
def test_validate_code_rejects(code, words):
    with raises_status(SC.INVALID_ARGUMENT) as info:
        validate_code(code, "kernel k")
    assert words in info.value.message and "kernel k" in info.value.message


def test_validate_code_accepts_and_program_validates():
    validate_code(valid_code(), "k")
    kernel = golden_kernel()
    bad = Kernel("bad", Processor.COMPUTE, _set(kernel.code, 3, 1, 40))
    with raises_status(SC.INVALID_ARGUMENT) as info:
        Program((), (bad,), ((),))
    assert "kernel bad" in info.value.message


def test_validate_code_rejects_binary_sfpu_op_in_sfpu_unary():
    """SFPU_UNARY takes a unary SfpuOp (0..18); SfpuOp.ADD (32) is a binary op.
    validate_code accepts it and the interpreter then silently runs leaky relu
    (sim/numerics.py sfpu_unary's fall-through), so x + 1.0 gives x."""
    k = KernelBuilder("mixed")
    zero = k.const(0)
    k.tile_regs_acquire()
    k.sfpu_unary(SfpuOp.ADD, zero, 1.0)
    with raises_status(SC.INVALID_ARGUMENT):
        validate_code(k.build().code, "kernel mixed")
    k = KernelBuilder("mixed2")
    zero = k.const(0)
    k.tile_regs_acquire()
    k.sfpu_binary(SfpuOp.EXP, zero, zero)
    with raises_status(SC.INVALID_ARGUMENT):
        validate_code(k.build().code, "kernel mixed2")


@pytest.mark.parametrize("op, processor", [
    (Op.NOC_READ_BARRIER, Processor.COMPUTE), (Op.L1_FILL, Processor.COMPUTE), (Op.L1_LOAD, Processor.COMPUTE),
    (Op.GET_WRITE_PTR, Processor.COMPUTE), (Op.ADDRGEN, Processor.COMPUTE),
    (Op.SFPU_UNARY, Processor.RISCV_0), (Op.TILE_REGS_ACQUIRE, Processor.RISCV_1), (Op.PACK_TILE, Processor.RISCV_1),
    (Op.TILIZE_BLOCK, Processor.RISCV_0),
], ids=lambda value: value.name)
def test_a_program_runs_each_instruction_only_on_its_kind_of_processor(op, processor):
    """TT-Metal's compute API exists only in compute kernels and its dataflow API (NoC,
    address generators, CB pointers, raw L1) only in data-movement kernels: a program
    with one on the other kind of processor is INVALID_ARGUMENT, naming the instruction,
    the processor and the kind, before the simulator could run it or codegen emit it."""
    code = np.zeros((2, WIDTH), np.int64)
    code[:, 0] = (int(op), int(Op.HALT))
    with raises_status(SC.INVALID_ARGUMENT) as info:
        Program((), (Kernel("bad", processor, code),), ((),))
    kind = "compute" if op in COMPUTE_OPS else "data-movement"
    assert f"kernel bad: {op.name} at 0 is a {kind} instruction" in info.value.message
    assert processor.name in info.value.message
    validate_code(code, "the same code without a processor")  # well formed: only its processor is wrong


# ---------------------------------------------------------------------------
# 2. The .ttx format.
# ---------------------------------------------------------------------------

def rich_export() -> Export:
    """Every field away from its default: configs, compile args, all ArgKinds, CB formats."""
    reader = KernelBuilder("rd")
    r = reader.arg(0)
    reader.cb_reserve_back(7, r)
    compute = KernelBuilder("cmp")
    z = compute.const(0)
    compute.tile_regs_acquire()
    compute.sfpu_unary(SfpuOp.POWER, z, 0.5)
    compute.tile_regs_release()
    writer = KernelBuilder("wr")
    writer.emit(Op.LI, writer.reg(), -(1 << 40))  # a wide immediate
    kernels = (
        (reader.build(Processor.RISCV_1, compile_args=(1, -2, 1 << 35)),
         tuple(RuntimeArg(kind, v % 3) for v, kind in enumerate(ArgKind))),
        (compute.build(Processor.COMPUTE, math_fidelity=MathFidelity.HiFi2, fp32_dest_acc_en=True,
                       math_approx_mode=True, dst_full_sync_en=True), ()),
        (writer.build(Processor.RISCV_0), (RuntimeArg(ArgKind.LITERAL, -(1 << 50)),)),
    )
    cbs = (CircularBufferConfig(7, DF.bfloat8_b, 1088, 3), CircularBufferConfig(0, DF.float32, 4096, 1),
           CircularBufferConfig(31, DF.uint8, 1 << 20, 2))
    return make_export(*kernels, cbs=cbs, constants=5, bindings=9, name="rich \u00e9xport",
                       workgroup_size=(32, 4, 2))


def assert_exports_equal(got: list[Export], want: list[Export]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.name, g.constant_count, g.binding_count, g.workgroup_size, g.source) == \
               (w.name, w.constant_count, w.binding_count, w.workgroup_size, w.source)
        assert len(g.stages) == len(w.stages)
        for gs, ws in zip(g.stages, w.stages):
            assert (gs.workgroup_count, gs.constants, gs.bindings) == (ws.workgroup_count, ws.constants, ws.bindings)
            assert gs.program.circular_buffers == ws.program.circular_buffers
            assert gs.program.runtime_args == ws.program.runtime_args
            assert len(gs.program.kernels) == len(ws.program.kernels)
            for gk, wk in zip(gs.program.kernels, ws.program.kernels):
                assert (gk.name, gk.processor, gk.compile_args, gk.config) == \
                       (wk.name, wk.processor, wk.compile_args, wk.config)
                assert gk.code.dtype == np.int64 and gk.code.shape == wk.code.shape
                np.testing.assert_array_equal(gk.code, wk.code)
        assert g.tensors == w.tensors  # shapes and formats (values do not compare)
        for gt, wt in zip(g.tensors, w.tensors):
            assert (gt.values is None) == (wt.values is None)
            if wt.values is not None:
                assert gt.values.dtype == np.float32
                np.testing.assert_array_equal(gt.values, wt.values.astype(np.float32))


def staged_export(name="staged", tensors=None) -> Export:
    """Three stages over the library's programs, stage fields absent, given and empty,
    and tensors with and without values: tilize dispatch binding 0 into scratch tensor
    0; add it to tensor 1 (values) into dispatch binding 1 on its own grid with its own
    push constants; untilize binding 1 into binding 2."""
    if tensors is None:
        tensors = (ExportTensor((40, 50), DF.float32),
                   ExportTensor((40, 50), DF.bfloat16, np.arange(2000, dtype=np.float32).reshape(40, 50) % 61 - 30))
    d, t = BindingSource.DISPATCH, BindingSource.TENSOR
    return Export(name, 3, 3, (1, 1, 1), (
        Stage(rowmajor.tilize(DF.float32).program, bindings=((d, 0), (t, 0))),
        Stage(eltwise.eltwise_binary("add", DF.float32, DF.bfloat16, DF.float32).program, (2, 1, 1),
              (RuntimeArg(ArgKind.CONSTANT, 0), RuntimeArg(ArgKind.LITERAL, (1 << 32) - 1)), ((t, 0), (t, 1), (d, 1))),
        Stage(rowmajor.untilize(DF.float32).program, bindings=((d, 1), (d, 2)))), tensors)


def empty_fields_export() -> Export:
    """A stage whose push constants and bindings are given and empty: none, not the dispatch's."""
    program = Program((), (KernelBuilder("w").build(Processor.RISCV_0),), ((),))
    return Export("empty fields", 2, 1, (1, 1, 1), (Stage(program, (1, 1, 1), (), ()), Stage(program)),
                  (ExportTensor((1, 1, 3), DF.uint32), ExportTensor((64, 32), DF.bfloat8_b, np.ones((64, 32)))))


def library_exports() -> list[Export]:
    return [eltwise.eltwise_binary("add", DF.bfloat16, DF.bfloat16, DF.bfloat16),
            eltwise.eltwise_binary("mul", DF.float32, DF.bfloat8_b, DF.bfloat16, Broadcast.SCALAR,
                                   MathFidelity.LoFi, fp32_dest_acc_en=True),
            eltwise.eltwise_unary(SfpuOp.LEAKY_RELU, DF.bfloat16, DF.float32, parameter=0.125)]


@pytest.mark.parametrize("exports", [
    pytest.param(library_exports(), id="library"),
    pytest.param([rich_export()], id="rich"),
    pytest.param([staged_export(), rich_export(), staged_export("scratch only", (ExportTensor((3, 2), DF.uint8),
                                                                      ExportTensor((64, 64), DF.bfloat16)))],
                 id="stages"),
    pytest.param([staged_export("with a view", (*staged_export().tensors,
                                                ExportTensor((32, 50), DF.float32, base=0, first_page=2)))],
                 id="view"),
    pytest.param([empty_fields_export()], id="empty-stage-fields"),
    pytest.param([make_export(name="empty")], id="no-kernels"),
    pytest.param([], id="no-exports"),
    pytest.param([Export("dynamic", 2, 3, (1, 1, 1), (), (), "func.func @f() {\n  return\n} \u00e9"), make_export()],
                 id="dynamic"),
])
def test_ttx_round_trip(exports):
    data = write_executable(exports)
    assert isinstance(data, bytes)
    assert data[8:12] == FILE_IDENTIFIER == b"TTX0"
    assert_exports_equal(read_executable(data), exports)
    assert_exports_equal(read_executable(bytearray(data)), exports)
    assert_exports_equal(read_executable(memoryview(data)), exports)


def test_ttx_rich_fields_survive():
    (got,) = read_executable(write_executable([rich_export()]))
    assert got.name == "rich \u00e9xport" and got.workgroup_size == (32, 4, 2)
    reader, compute, writer = got.program.kernels
    assert reader.compile_args == (1, -2, 1 << 35)
    assert [a.kind for a in got.program.runtime_args[0]] == list(ArgKind)
    assert compute.config == KernelConfig(MathFidelity.HiFi2, True, True, True)
    assert writer.config == KernelConfig() and writer.code[0, 2] == -(1 << 40)
    assert got.program.runtime_args[2] == (RuntimeArg(ArgKind.LITERAL, -(1 << 50)),)


def test_ttx_stage_fields_absent_given_and_empty_stay_apart():
    """An absent stage field is the dispatch's (None); an empty one is none (())."""
    (got,) = read_executable(write_executable([empty_fields_export()]))
    assert [(s.workgroup_count, s.constants, s.bindings) for s in got.stages] == [((1, 1, 1), (), ()),
                                                                                 (None, None, None)]
    (got,) = read_executable(write_executable([staged_export()]))
    assert got.stages[1].constants[1] == RuntimeArg(ArgKind.LITERAL, (1 << 32) - 1)  # a whole uint32
    assert got.tensors[0].values is None and got.tensors[1].values.shape == (40, 50)


def test_ttx_rejects_wrong_identifier_and_version(monkeypatch):
    data = write_executable(library_exports()[:1])
    for bad in (b"", b"TTX0", data[:7], data[:8] + b"TTX1" + data[12:], data[:8] + b"XTX0" + data[12:]):
        with raises_status(SC.INVALID_ARGUMENT) as info:
            read_executable(bad)
        assert "TTX0" in info.value.message
    import tt_hal.target.ttx
    for version in (VERSION - 1, VERSION + 1):
        monkeypatch.setattr(tt_hal.target.ttx, "VERSION", version)
        other = write_executable(library_exports()[:1])
        monkeypatch.undo()
        with raises_status(SC.INVALID_ARGUMENT) as info:
            read_executable(other)
        assert f".ttx version {version}; this reader knows {VERSION}" in info.value.message


def version_1_ttx() -> bytes:
    """A .ttx as version 1 wrote it, seen through today's schema: no version field (1
    was its default) and an export without stages (its program's fields are deprecated)."""
    builder = flatbuffers.Builder(64)
    name = builder.CreateString("old")
    workgroup = builder.CreateNumpyVector(np.ones(3, np.uint32))
    fb.ExportStart(builder)
    fb.ExportAddName(builder, name)
    fb.ExportAddWorkgroupSize(builder, workgroup)
    export = fb.ExportEnd(builder)
    fb.ExecutableStartExportsVector(builder, 1)
    builder.PrependUOffsetTRelative(export)
    exports = builder.EndVector()
    fb.ExecutableStart(builder)
    fb.ExecutableAddExports(builder, exports)
    builder.FinishSizePrefixed(fb.ExecutableEnd(builder), FILE_IDENTIFIER)
    return bytes(builder.Output())


def test_ttx_of_version_1_is_invalid_and_says_so():
    """Version 1 wrote no version field: it reads as the schema's default, 2, which this
    reader names and refuses."""
    with raises_status(SC.INVALID_ARGUMENT) as info:
        read_executable(version_1_ttx())
    assert f".ttx version 2; this reader knows {VERSION}" in info.value.message


def unchecked(cls, **fields):
    """A program dataclass built around its validation, as a foreign writer could."""
    value = object.__new__(cls)
    for field in dataclasses.fields(cls):
        object.__setattr__(value, field.name, fields.get(field.name, field.default))
    return value


@pytest.mark.parametrize("change, words", [
    (lambda e: {"stages": ()}, "runs no program"),
    (lambda e: {"stages": (unchecked(Stage, program=e.stages[0].program, workgroup_count=(1, 1)),)},
     "workgroup count has 2 dimensions, not 3"),
    (lambda e: {"stages": (Stage(e.stages[0].program, (0, 1, 1)),)}, "is not three positive counts"),
    (lambda e: {"stages": (Stage(e.stages[0].program, constants=(RuntimeArg(ArgKind.BINDING_ADDRESS, 0),)),)},
     "push constant 0 is BINDING_ADDRESS 0"),
    (lambda e: {"stages": (Stage(e.stages[0].program, constants=(RuntimeArg(ArgKind.CONSTANT, 3),)),)},
     "push constant 0 is CONSTANT 3"),
    (lambda e: {"stages": (Stage(e.stages[0].program, constants=(RuntimeArg(99, 0),)),)}, "99"),
    (lambda e: {"stages": (Stage(e.stages[0].program, bindings=((BindingSource.TENSOR, 2),)),)},
     "binding 0 is TENSOR 2, but the export has 2"),
    (lambda e: {"stages": (Stage(e.stages[0].program, bindings=((7, 0),)),)}, "7"),
    (lambda e: {"tensors": (unchecked(ExportTensor, shape=(4, 5), data_format=DF.float32, values=np.ones(19)),)},
     "a tensor of shape (4, 5) with 19 values"),
    (lambda e: {"tensors": (unchecked(ExportTensor, shape=(4, 0), data_format=DF.float32),)}, "no empty dimension"),
    (lambda e: {"tensors": (unchecked(ExportTensor, shape=(4,), data_format=DF.float32),)}, "rank 2 or more"),
    (lambda e: {"tensors": (ExportTensor((4, 5), 77),)}, "77"),
    (lambda e: {"source": "func.func @f()"}, "both stages and the source of a dynamic export"),
    (lambda e: {"tensors": (*e.tensors, ExportTensor((40, 50), DF.float32, base=2))},
     "tensor 2 views tiles [0, 4) of tensor 2"),
    (lambda e: {"tensors": (*e.tensors, ExportTensor((40, 50), DF.float32, base=0, first_page=1))},
     "tensor 2 views tiles [1, 5) of tensor 0"),
    (lambda e: {"tensors": (*e.tensors, ExportTensor((40, 50), DF.bfloat16, base=0))},
     "earlier bfloat16 tile tensor"),
    (lambda e: {"tensors": (*e.tensors, ExportTensor((32, 32), DF.float32, base=0),
                            ExportTensor((32, 32), DF.float32, base=2))}, "not a view"),
    (lambda e: {"tensors": (*e.tensors, unchecked(ExportTensor, shape=(32, 32), data_format=DF.float32,
                                                  layout=hal.Layout.ROW_MAJOR, base=0, first_page=0))},
     "a view is of tiles"),
], ids=["no-stages", "2d-grid", "zero-grid", "binding-constant", "constant-3", "kind-99", "tensor-2",
        "source-7", "values-19", "empty-dim", "rank-1", "format-77", "stages-and-source", "view-of-itself",
        "view-past-its-base", "view-of-another-format", "view-of-a-view", "row-major-view"])
def test_ttx_rejects_invalid_stages_and_tensors(change, words):
    """Well-formed FlatBuffers holding a bad stage or tensor: INVALID_ARGUMENT naming
    what is wrong, as a foreign writer's file could hold."""
    good = staged_export()
    fields = {f.name: getattr(good, f.name) for f in dataclasses.fields(Export)}
    data = write_executable([unchecked(Export, **{**fields, **change(good)})])
    with raises_status(SC.INVALID_ARGUMENT) as info:
        read_executable(data)
    assert "malformed .ttx executable" in info.value.message and words in info.value.message, info.value.message


def test_ttx_rejects_invalid_programs():
    """Well-formed FlatBuffers holding a bad program: bad code, two kernels on one
    processor, a code array that is not (n, WIDTH)."""
    good = rich_export()
    bad_code = Kernel("k", Processor.RISCV_0, np.array([row(Op.LI, 99, 0), row(Op.HALT)], np.int64))
    twice = Kernel("k2", Processor.RISCV_0, np.array([row(Op.HALT)], np.int64))
    ragged = Kernel("k3", Processor.RISCV_0, np.zeros((1, 6), np.int64))
    for kernels, words in (((bad_code,), "register 99"), ((bad_code, twice), "two kernels"),
                           ((ragged,), f"multiple of {WIDTH}")):
        # Build the Export around Program's validation, as a foreign writer could.
        program = object.__new__(Program)
        object.__setattr__(program, "circular_buffers", good.program.circular_buffers)
        object.__setattr__(program, "kernels", kernels)
        object.__setattr__(program, "runtime_args", tuple(() for _ in kernels))
        data = write_executable([Export("bad", 0, 0, (1, 1, 1), (Stage(program),))])
        with raises_status(SC.INVALID_ARGUMENT) as info:
            read_executable(data)
        assert words in info.value.message


SMALL_TTX = write_executable([make_export(
    (KernelBuilder("w").build(Processor.RISCV_0), (RuntimeArg(ArgKind.LITERAL, 3),)),
    cbs=(CircularBufferConfig(2, DF.uint16, 2048, 2),), constants=1, bindings=1, name="small")])


STAGED_TTX = write_executable([Export(
    "staged", 2, 2, (1, 1, 1),
    (Stage(Program((), (KernelBuilder("r").build(Processor.RISCV_1),), ((RuntimeArg(ArgKind.BINDING_ADDRESS, 1),),)),
           bindings=((BindingSource.DISPATCH, 1), (BindingSource.TENSOR, 1))),
     Stage(Program((CircularBufferConfig(0, DF.bfloat16, 2048, 1),), (KernelBuilder("w").build(Processor.RISCV_0),),
                   ((RuntimeArg(ArgKind.CONSTANT, 1),),)),
           (2, 1, 1), (RuntimeArg(ArgKind.LITERAL, 9), RuntimeArg(ArgKind.CONSTANT, 1)))),
    (ExportTensor((2, 3), DF.float32, np.arange(6, dtype=np.float32).reshape(2, 3)),
     ExportTensor((32, 32), DF.bfloat16)))])


def _reads_or_invalid(data) -> list | None:
    """read_executable's result, or None for INVALID_ARGUMENT; anything else fails."""
    start = time.perf_counter()
    try:
        return read_executable(data)
    except hal.HalError as error:
        assert error.code == SC.INVALID_ARGUMENT, f"{error.code.name}: {error}"
        return None
    finally:
        assert time.perf_counter() - start < 5, "read_executable took too long"


@pytest.mark.parametrize("data", [pytest.param(SMALL_TTX, id="small"), pytest.param(STAGED_TTX, id="staged"),
                                  pytest.param(write_executable(library_exports()), id="library")])
def test_ttx_every_truncation_is_invalid(data):
    """Every proper prefix of a .ttx file is malformed. read_executable accepts some
    prefixes: the tail of a FlatBuffer is the first string written (the first export's
    name), read by slicing, so a cut there silently shortens the name."""
    accepted = {}
    for length in range(len(data)):
        exports = _reads_or_invalid(data[:length])
        if exports is not None:
            accepted[length] = [e.name for e in exports]
    assert not accepted, (f"{len(accepted)} of {len(data)} truncations of a {len(data)}-byte file were accepted, "
                          f"e.g. {dict(list(accepted.items())[-3:])}")


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@pytest.mark.parametrize("ttx", [pytest.param(SMALL_TTX, id="small"), pytest.param(STAGED_TTX, id="staged")])
@given(flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=8))
def test_ttx_fuzz_byte_flips(ttx, flips):
    data = bytearray(ttx)
    for position, mask in flips:
        data[position % len(data)] ^= mask
    exports = _reads_or_invalid(bytes(data))
    if data[8:12] != FILE_IDENTIFIER:
        assert exports is None
    if exports is not None:  # whatever parses is a valid program
        for export in exports:
            assert len(export.workgroup_size) == 3
            for stage in export.stages:
                for kernel in stage.program.kernels:
                    validate_code(kernel.code, "fuzzed")
            for tensor in export.tensors:
                assert tensor.values is None or tensor.values.shape == tensor.shape


@FUZZ
@given(data=st.binary(max_size=600), identifier=st.booleans())
def test_ttx_fuzz_random_bytes(data, identifier):
    if identifier:
        data = data[:4].ljust(4, b"\0") + FILE_IDENTIFIER + data[8:]
    exports = _reads_or_invalid(data)
    if data[8:12] != FILE_IDENTIFIER:
        assert exports is None


# ---------------------------------------------------------------------------
# 3. The executable cache and executables.
# ---------------------------------------------------------------------------

def test_cache_formats(device):
    cache = device.create_executable_cache("mine")
    assert cache.identifier == "mine"
    assert cache.can_prepare_format("tenstorrent-ttx-fb") is True
    for other in ("embedded-elf-x86_64", "vmvx-bytecode-fb", "tenstorrent-ttx", "", "TENSTORRENT-TTX-FB"):
        assert cache.can_prepare_format(other) is False
        with raises_status(SC.NOT_FOUND):
            cache.prepare_executable(other, SMALL_TTX)
    with raises_status(SC.INVALID_ARGUMENT):
        cache.prepare_executable("tenstorrent-ttx-fb", b"garbage!")
    assert device.query_i64("hal.executable.format", "tenstorrent-ttx-fb") == 1
    assert device.query_i64("hal.executable.format", "tenstorrent-*") == 1
    assert device.query_i64("hal.executable.format", "vmvx-bytecode-fb") == 0


def test_executable_exports(device):
    exports = library_exports() + [rich_export()]
    exe = device.create_executable_cache().prepare_executable("tenstorrent-ttx-fb", write_executable(exports))
    assert exe.export_count == 4
    for ordinal, export in enumerate(exports):
        assert exe.export_info(ordinal) == ExportInfo(export.name, export.constant_count, export.binding_count,
                                                      export.workgroup_size)
        assert exe.lookup_export_by_name(export.name) == ordinal
        assert exe.export(ordinal).program.circular_buffers == export.program.circular_buffers
    assert exe.export_info(0).name == "eltwise_add" and exe.export_info(0).binding_count == 3
    assert exe.export_info(2).name == "eltwise_leaky_relu" and exe.export_info(2).binding_count == 2
    assert exe.export_info(3) == ExportInfo("rich \u00e9xport", 5, 9, (32, 4, 2))
    with raises_status(SC.NOT_FOUND) as info:
        exe.lookup_export_by_name("eltwise_div")
    assert "eltwise_add" in info.value.message
    with raises_status(SC.NOT_FOUND):
        exe.lookup_export_by_name("")
    for ordinal in (4, -1, 100):
        with raises_status(SC.OUT_OF_RANGE):
            exe.export(ordinal)
        with raises_status(SC.OUT_OF_RANGE):
            exe.export_info(ordinal)


# ---------------------------------------------------------------------------
# 4. Dispatch.
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def add_exe(device):
    return prepare(device, eltwise.eltwise_binary("add", DF.bfloat16, DF.bfloat16, DF.bfloat16))


def test_executions_over_memory_where_the_last_ones_was_launch_the_same_programs(device, add_exe):
    """A .vmfb's calls bind transient buffers that the allocator places where the last
    call's were: the simulator gives such bindings as the same objects (SimDevice.binding)
    and a reusable command buffer launches its last LaunchPrograms again, which the
    simulator prepared once. Each execution still computes from and into its own
    buffers: an output at the freed output's place, new input values, and an output
    at another place (new launches)."""
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64) % 97
    b = np.full((32, 64), 3.0, np.float32)
    va, vb = dram_tensor(device, a, "bfloat16", "tile"), dram_tensor(device, b, "bfloat16", "tile")
    new_a = dram_tensor(device, a * 2, "bfloat16", "tile")
    first = dram_tensor(device, np.zeros((32, 64), np.float32), "bfloat16", "tile")
    cb = hal.HalCommandBuffer(device, binding_capacity=3)
    constants = np.array(eltwise_constants(add_exe, first), np.uint32)
    cb.dispatch(add_exe, 0, (2, 1, 1), constants, [hal.BindingRef(k) for k in range(3)])
    cb.end()

    def execute(out):
        table = [va.get_buffer(), vb.get_buffer(), out.get_buffer()]
        sem = device.create_semaphore(0)
        device.queue_execute(cb, [], [(sem, 1)], binding_table=table)
        assert sem.wait(1, timeout=TIMEOUT_NS)
        return cb.prepare(table)[0]  # the launches of an execution over this table

    def place(view):
        return view.get_buffer().allocation.backend_buffer.address

    launches = execute(first)
    np.testing.assert_array_equal(first.to_host(np.float32), a + b)
    address = place(first)
    first.get_buffer().release()
    again = dram_tensor(device, np.zeros((32, 64), np.float32), "bfloat16", "tile")
    assert place(again) == address  # the allocator's first fit: the premise of the test
    assert all(x is y for x, y in zip(execute(again), launches, strict=True))
    np.testing.assert_array_equal(again.to_host(np.float32), a + b)
    sem = device.create_semaphore(0)
    device.queue_copy(new_a.get_buffer(), va.get_buffer(), [], [(sem, 1)])
    assert sem.wait(1, timeout=TIMEOUT_NS)
    assert all(x is y for x, y in zip(execute(again), launches, strict=True))
    np.testing.assert_array_equal(again.to_host(np.float32), a * 2 + b)
    elsewhere = dram_tensor(device, np.zeros((32, 64), np.float32), "bfloat16", "tile")
    assert place(elsewhere) != address
    assert not any(x is y for x, y in zip(execute(elsewhere), launches, strict=True))
    np.testing.assert_array_equal(elsewhere.to_host(np.float32), a * 2 + b)
    np.testing.assert_array_equal(again.to_host(np.float32), a * 2 + b)


def test_dispatch_of_a_dynamic_export_is_unimplemented(device, table):
    """A dynamic export (MLIR to be lowered per dispatch) has no program to run: the HAL
    says who lowers it, and nothing is recorded."""
    exe = device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([Export("dyn", 1, 1, (1, 1, 1), (), (), "func.func @f() {\n}")]))
    assert exe.export(0).dynamic
    with raises_status(SC.UNIMPLEMENTED) as info:
        record(device, exe, constants=[5], bindings=[table.get_buffer()])
    assert "dyn" in info.value.message and "tt_hal.compiler.specialize" in info.value.message


def test_dispatch_validation(device, table):
    """Counts are checked against the export when the dispatch is recorded, and again
    when the command buffer is executed (UNVALIDATED recording skips the first);
    nothing is submitted then."""
    p = Probe("valid")
    r = p.k.reg()
    p.k.emit(Op.CONSTANT, r, 1)
    p.record(r)
    exe = prepare(device, p.export(constants=2))  # 2 push constants, 2 bindings
    out = output(device, 1)
    buffers = [table.get_buffer(), out.get_buffer()]
    cases = [
        (SC.INVALID_ARGUMENT, "1 push constants; the export takes 2", {"constants": [1], "bindings": buffers}),
        (SC.INVALID_ARGUMENT, "3 push constants", {"constants": [1, 2, 3], "bindings": buffers}),
        (SC.INVALID_ARGUMENT, "0 push constants", {"constants": [], "bindings": buffers}),
        (SC.INVALID_ARGUMENT, "1 bindings; the export takes 2", {"constants": [1, 2], "bindings": buffers[:1]}),
        (SC.INVALID_ARGUMENT, "0 bindings", {"constants": [1, 2], "bindings": []}),
        (SC.OUT_OF_RANGE, "ordinal", {"constants": [1, 2], "bindings": buffers, "ordinal": 1}),
    ]
    for code, words, kwargs in cases:
        with raises_status(code) as info:
            record(device, exe, **kwargs)
        assert words in info.value.message
        unvalidated = hal.HalCommandBuffer(device, mode=hal.CommandBufferMode.UNVALIDATED)
        unvalidated.dispatch(exe, kwargs.get("ordinal", 0), (1, 1, 1),
                             np.asarray(kwargs["constants"], np.uint32).tobytes(), kwargs["bindings"])
        unvalidated.end()
        sem = device.create_semaphore(0)
        with raises_status(code) as info:
            device.queue_execute(unvalidated, [], [(sem, 1)])
        assert words in info.value.message
        assert sem.query() == 0  # nothing was submitted
    cb = hal.HalCommandBuffer(device)
    with raises_status(SC.INVALID_ARGUMENT):
        cb.dispatch("not an executable", 0, (1, 1, 1), b"", [])
    assert recorded(out).tolist() == [UNWRITTEN]
    run(device, exe, (1, 1, 1), [1, 2], buffers)  # the right counts work
    assert recorded(out).tolist() == [2]
    out2 = output(device, 1)
    run(device, exe, (1, 1, 1), [1, 3], buffers[:1] + [out2.get_buffer(), out.get_buffer()])  # extra bindings: fine
    assert recorded(out2).tolist() == [3]


@pytest.mark.parametrize("grid", [(0, 1, 1), (4, 0, 2), (0, 0, 0)])
def test_empty_dispatch_does_nothing_and_signals(device, table, grid):
    p = Probe("never")
    p.record(p.k.const(1))
    assert run_probe(device, table, p.export(), 2, grid).tolist() == [UNWRITTEN, UNWRITTEN]


def counts_probe() -> Export:
    """Each workgroup records its id (x) and the counts (x, y, z) in rows 4*w..4*w+3."""
    p = Probe("counts")
    k = p.k
    x, y, z, base = k.reg("x"), k.reg("y"), k.reg("z"), k.reg("base")
    k.emit(Op.WORKGROUP_ID, x, 0)
    k.emit(Op.MULI, base, x, 4)
    p.record(x, base)
    for dim, reg in enumerate((x, y, z)):
        k.emit(Op.WORKGROUP_COUNT, reg, dim)
        k.emit(Op.ADDI, base, base, 1)
        p.record(reg, base)
    return p.export()


INDIRECT_USAGE = (hal.BufferUsage.DISPATCH_INDIRECT_PARAMETERS | hal.BufferUsage.TRANSFER
                  | hal.BufferUsage.DISPATCH_STORAGE)


@pytest.mark.parametrize("via_binding_table", [False, True])
def test_indirect_workgroup_count(device, table, via_binding_table):
    """The count is read when the dispatch runs: an update recorded before it in the
    same command buffer decides it."""
    exe = prepare(device, counts_probe())
    counts = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, INDIRECT_USAGE, 12)
    out = output(device, 4 * 6)
    cb = hal.HalCommandBuffer(device, binding_capacity=1 if via_binding_table else 0)
    target = hal.BindingRef(0) if via_binding_table else counts
    cb.update(np.array([5, 1, 1], np.uint32), target)
    cb.dispatch(exe, 0, target, b"", [table.get_buffer(), out.get_buffer()])
    cb.end()
    sem = device.create_semaphore(0)
    device.queue_execute(cb, [], [(sem, 1)], binding_table=[counts] if via_binding_table else None)
    assert sem.wait(1, timeout=TIMEOUT_NS)
    expected = [v for w in range(5) for v in (w, 5, 1, 1)] + [UNWRITTEN] * 4
    assert recorded(out).tolist() == expected


def test_indirect_workgroup_count_zero_and_usage(device, table):
    exe = prepare(device, counts_probe())
    counts = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, INDIRECT_USAGE | hal.BufferUsage.MAPPING,
                                              12)
    counts.map_write(0, np.zeros(3, np.uint32).tobytes())
    out = output(device, 4)
    run(device, exe, counts, (), [table.get_buffer(), out.get_buffer()])  # zeros: nothing runs
    assert recorded(out).tolist() == [UNWRITTEN] * 4
    plain = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 12)
    cb = hal.HalCommandBuffer(device)
    with raises_status(SC.PERMISSION_DENIED):
        cb.dispatch(exe, 0, plain, b"", [table.get_buffer(), out.get_buffer()])
    short = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, INDIRECT_USAGE, 8)
    with raises_status(SC.OUT_OF_RANGE):
        cb.dispatch(exe, 0, short, b"", [table.get_buffer(), out.get_buffer()])


def test_more_workgroups_than_cores(device, add_exe):
    """200 workgroups on the 64-core grid: four rounds, one tile each; and 200
    workgroups over 7 tiles (most have nothing to do)."""
    rng = np.random.default_rng(5)
    for shape in ((320, 640), (32, 224)):
        a = rng.integers(-100, 100, shape).astype(np.float32)
        b = rng.integers(-100, 100, shape).astype(np.float32)
        va, vb = dram_tensor(device, a, "bfloat16", "tile"), dram_tensor(device, b, "bfloat16", "tile")
        out = dram_tensor(device, np.zeros(shape, np.float32), "bfloat16", "tile")
        assert out.spec.num_pages == shape[0] * shape[1] // 1024
        run(device, add_exe, (200, 1, 1), eltwise_constants(add_exe, out),
            [va.get_buffer(), vb.get_buffer(), out.get_buffer()])
        np.testing.assert_array_equal(out.to_host(np.float32), a + b)  # small integers: exact in bf16


# ---------------------------------------------------------------------------
# 5. Faults.
# ---------------------------------------------------------------------------

def kernel(name, processor, body, **config) -> Kernel:
    k = KernelBuilder(name)
    body(k)
    return k.build(processor, **config)


C0_2 = CircularBufferConfig(0, DF.bfloat16, 2048, 2)
C16_2 = CircularBufferConfig(16, DF.bfloat16, 2048, 2)


def test_fault_deadlock_reports_every_blocked_kernel(device):
    def reader(k):
        k.cb_reserve_back(0, 1)
        k.cb_push_back(0, 1)  # c_0 holds 1 page
        k.cb_reserve_back(1, 1)
        k.cb_push_back(1, 1)  # c_1 (1 page) is full
        k.cb_reserve_back(1, 1)  # blocks: c_1 holds 1 of 1

    def compute(k):
        k.cb_wait_front(0, 2)  # blocks: c_0 holds 1 of 2

    def writer(k):
        k.cb_wait_front(16, 1)  # blocks: c_16 holds 0 of 2

    export = make_export((kernel("rdr", Processor.RISCV_1, reader), ()),
                         (kernel("cmp", Processor.COMPUTE, compute), ()),
                         (kernel("wtr", Processor.RISCV_0, writer), ()),
                         cbs=(C0_2, CircularBufferConfig(1, DF.bfloat16, 2048, 1), C16_2), name="stuck")
    report = expect_fault(device, prepare(device, export), SC.DEADLINE_EXCEEDED, [
        "stuck", "deadlock",
        "core (0,0) rdr (RISCV_1) at pc 9: cb_reserve_back(c_1, 1) but c_1 holds 1 of 1 pages",
        "core (0,0) cmp (COMPUTE) at pc 1: cb_wait_front(c_0, 2) but c_0 holds 1 of 2 pages",
        "core (0,0) wtr (RISCV_0) at pc 1: cb_wait_front(c_16, 1) but c_16 holds 0 of 2 pages",
        "core (1,0) cmp (COMPUTE)", "core (1,0) wtr (RISCV_0)", "core (2,0) rdr (RISCV_1)",
    ], workgroup_count=(3, 1, 1))
    assert report.count("core (") == 9  # 3 cores x 3 kernels


def test_fault_deadlock_report_is_bounded(device):
    export = make_export((kernel("waiter", Processor.COMPUTE, lambda k: k.cb_wait_front(0, 1)), ()), cbs=(C0_2,))
    report = expect_fault(device, prepare(device, export), SC.DEADLINE_EXCEEDED,
                          ["core (0,0) waiter (COMPUTE) at pc 1: cb_wait_front(c_0, 1) but c_0 holds 0 of 2 pages",
                           "  ... and 52 more"], workgroup_count=(64, 1, 1))
    assert report.count("cb_wait_front(c_0, 1)") == 12  # 64 blocked kernels, 12 shown


@pytest.mark.parametrize("body, pc, words", [
    # details: the circular buffer, the pages asked for, the pages it holds, its pages
    (lambda k: k.cb_push_back(0, 1), 1, ["circular buffer overflow", "`cb_push_back", "details 0, 1, 0, 2"]),
    (lambda k: (k.cb_reserve_back(0, 1), k.cb_push_back(0, 2)), 3, ["circular buffer overflow", "details 0, 2, 0, 2"]),
    (lambda k: (k.cb_reserve_back(0, 1), k.cb_push_back(0, 1), k.cb_pop_front(0, 2)), 5,
     ["cb_pop_front of more pages than the circular buffer holds", "`cb_pop_front", "details 0, 2, 1, 2"]),
    (lambda k: k.cb_pop_front(0, 1), 1, ["cb_pop_front of more pages", "details 0, 1, 0, 2"]),
    (lambda k: k.cb_wait_front(0, 3), 1, ["waits for more pages than the circular buffer has", "`cb_wait_front",
                                          "details 0, 3, 0, 2"]),
    (lambda k: k.cb_reserve_back(0, 3), 1, ["waits for more pages than the circular buffer has",
                                            "`cb_reserve_back", "details 0, 3, 0, 2"]),
    (lambda k: k.cb_wait_front(5, 1), 1, ["circular buffer not configured", "c_5"]),
], ids=["push-unreserved", "push-beyond-reserve", "pop-beyond-pushed", "pop-empty", "wait-too-many",
        "reserve-too-many", "unconfigured"])
def test_fault_circular_buffer_misuse(device, body, pc, words):
    export = make_export((kernel("cbk", Processor.RISCV_1, body), ()), cbs=(C0_2,), name="cbmisuse")
    expect_fault(device, prepare(device, export), SC.ABORTED,
                 ["cbmisuse", "core (0,0)", "cbk (RISCV_1)", f"at pc {pc}:", "c_0" if "c_5" not in words else "c_5",
                  *words])


def test_fault_negative_page_counts_are_rejected(device):
    """cb_pop_front(c_0, -1) on an empty CB 'un-pops' a page, after which
    cb_wait_front(c_0, 1) succeeds on a CB nobody ever pushed to. tt-metal takes page
    counts as uint32, so a negative count is a fault (ABORTED), not a silent success."""
    def body(k):
        k.cb_pop_front(0, -1)
        k.cb_wait_front(0, 1)
    export = make_export((kernel("neg", Processor.COMPUTE, body), ()), cbs=(C0_2,))
    exe = prepare(device, export)
    with raises_status(SC.ABORTED):
        run(device, exe)


def reader_export(body, extra_args=(), bindings=1) -> Export:
    """A reader with generator slot 0 over binding 0 (page size: the tile) and c_0."""
    def build(k):
        address, is_dram = k.arg(0, "addr"), k.arg(1, "is_dram")
        k.addrgen(0, address, k.const(2048, "page"), is_dram)
        ptr = k.reg("ptr")
        k.cb_reserve_back(0, 1)
        k.get_write_ptr(ptr, 0)
        body(k, ptr)
    args = (RuntimeArg(ArgKind.BINDING_ADDRESS, 0), RuntimeArg(ArgKind.BINDING_IS_DRAM, 0),
            RuntimeArg(ArgKind.BINDING_PAGES, 0)) + tuple(extra_args)
    return make_export((kernel("nocker", Processor.RISCV_1, build), args), cbs=(C0_2,), bindings=bindings,
                       name="noc")


@pytest.mark.parametrize("body, code, words", [
    (lambda k, ptr: k.noc_read_page(0, k.arg(2), ptr), SC.ABORTED,  # page 2 of a 2-page tensor
     ["NoC access outside any bound buffer", "`noc_read_page", "details {address}, 2, 0, 2048"]),
    (lambda k, ptr: k.noc_write_page(0, -1, ptr), SC.ABORTED, ["NoC access outside", "`noc_write_page"]),
    (lambda k, ptr: k.noc_read(0, 1, 2000, ptr, 100), SC.ABORTED,  # bytes [2000, 2100) of a 2048-byte page
     ["NoC access outside", "`noc_read", "details {address}, 1, 2000, 100"]),
    (lambda k, ptr: (k.addrgen(1, k.const(0x12340), k.const(2048), k.const(1)), k.noc_read_page(1, 0, ptr)),
     SC.ABORTED, ["NoC access outside any bound buffer", f"details {0x12340}, 0"]),
    (lambda k, ptr: (k.addrgen(1, k.arg(0), k.const(1024), k.const(1)), k.noc_read_page(1, 0, ptr)),
     SC.ABORTED, ["NoC access outside any bound buffer"]),  # page size mismatch
    (lambda k, ptr: k.noc_read_page(3, 0, ptr), SC.ABORTED, ["address generator slot never set"]),
    (lambda k, ptr: k.noc_read_page(0, 0, k.const(64)), SC.ABORTED,
     ["NoC transfer to or from L1 outside the core's usable L1", "details 64"]),
    (lambda k, ptr: k.arg(7), SC.ABORTED, ["argument index beyond the arguments given", "`arg"]),
    (lambda k, ptr: k.l1_fill(k.const(64), 64, 0), SC.ABORTED,
     ["outside the core's usable L1", "`l1_fill", "details 64, 64, 0"]),
    (lambda k, ptr: (k.addi(ptr, ptr, 2), k.l1_fill(ptr, 8, 0)), SC.ABORTED,
     ["L1 store or load at an address or of a byte count that is not a multiple of 4", "`l1_fill"]),
    (lambda k, ptr: k.l1_fill(ptr, 6, 0), SC.ABORTED, ["not a multiple of 4", "`l1_fill"]),
    # Values whose sums or products wrap in int64: each once passed its bounds check (a
    # host segfault, or another buffer's bytes).
    (lambda k, ptr: k.noc_read(0, 1, k.const(2**63 - 8), ptr, 16), SC.ABORTED, ["NoC access outside", "`noc_read"]),
    (lambda k, ptr: k.noc_read_page(0, k.const(2**52 + 1), ptr), SC.ABORTED, ["NoC access outside", "`noc_read_page"]),
    (lambda k, ptr: k.noc_read_page(0, 0, k.const(2**63 - 1024)), SC.ABORTED,
     ["NoC transfer to or from L1 outside the core's usable L1"]),
    (lambda k, ptr: k.l1_fill(k.const(2**63 - 4), 8, 0), SC.ABORTED, ["outside the core's usable L1", "`l1_fill"]),
], ids=["page-beyond", "negative-page", "range-beyond-page", "not-a-binding", "page-size-mismatch",
        "slot-unset", "l1-reserved", "arg-index", "fill-l1-reserved", "fill-misaligned", "fill-odd-length",
        "offset-wraps", "page-wraps", "l1-address-wraps", "fill-address-wraps"])
def test_fault_noc_and_arguments(device, body, code, words):
    source = dram_tensor(device, np.ones((32, 64), np.float32), "bfloat16", "tile")
    address = source.get_buffer().allocation.backend_buffer.address
    assert source.spec.num_pages == 2
    expect_fault(device, prepare(device, reader_export(body)), code,
                 ["noc: ", "on core (0,0) in nocker (RISCV_1)"] + [w.format(address=address) for w in words],
                 bindings=[source.get_buffer()])


def test_noc_reads_inside_the_buffer_succeed(device, table):
    """The control for the NoC faults: the last page and a byte range inside a page."""
    p = Probe("inside")
    k = p.k
    last = k.const(TABLE_PAGES - 1 - BIAS)
    p.record(last)  # page 1023
    k.noc_read(0, 700, 4, p.ptr, 28)  # bytes 4..32 of page 700 -> the row's first 28 bytes
    k.noc_write_page(1, 1, p.ptr)
    host_out = output(device, 2)
    run(device, prepare(device, p.export()), (1, 1, 1), (), [table.get_buffer(), host_out.get_buffer()])
    host = host_out.to_host()
    assert host[0].tolist() == [1023] * 8
    assert host[1].tolist() == [700] * 7 + [1023]


def test_l1_fill_stores_its_pattern_little_endian(device, table):
    """L1_FILL sets a word-aligned byte range of L1 to a repeated 32-bit pattern and
    nothing around it: bytes 4..28 of a table row read into L1."""
    p = Probe("fill")
    k = p.k
    row = k.const(9 - BIAS)
    p.record(row)  # row 0: page 9, and page 9 stays in L1
    at = k.reg("at")
    k.addi(at, p.ptr, 4)
    k.l1_fill(at, 24, 0x12345678)
    k.noc_write_page(1, 1, p.ptr)
    out = output(device, 2)
    run(device, prepare(device, p.export()), (1, 1, 1), (), [table.get_buffer(), out.get_buffer()])
    assert out.to_host()[1].tolist() == [9] + [0x12345678] * 6 + [9]


def test_l1_load_reads_a_word_sign_extended(device, table):
    """L1_LOAD reads the little-endian int32 at an L1 address into a register, sign-
    extended: page 9's first word (9), then a word set to -7."""
    p = Probe("load")
    k = p.k
    row = k.const(9 - BIAS)
    p.record(row)  # row 0: page 9, and page 9 stays in L1
    first, second, at = k.reg("first"), k.reg("second"), k.reg("at")
    k.l1_load(first, p.ptr)
    k.addi(at, p.ptr, 4)
    k.l1_fill(at, 4, 0xFFFFFFF9)
    k.l1_load(second, at)
    p.record(first)  # row 1: page 9 + BIAS
    p.record(second)  # row 2: page -7 + BIAS
    out = output(device, 3)
    run(device, prepare(device, p.export()), (1, 1, 1), (), [table.get_buffer(), out.get_buffer()])
    assert [r[0] for r in out.to_host().tolist()] == [9, 9 + BIAS, BIAS - 7]


GATHER_FILL = 0x7FC00000


def gather_export(entries, count=8, to=32, slot=0, base=0, rows=1, stride=0) -> Export:
    """A writer: the int32 `entries` stored at L1 ptr (c_0, two 32-byte pages), then
    NOC_GATHER of `rows` rows (`stride` bytes apart) of `count` elements from the table
    (generator slot 0, 32-byte pages: word e holds e // 8) at byte `base` into L1 ptr +
    `to`, and the page at ptr + 32 written to output row 0."""
    def body(k):
        taddr, tdram, oaddr, odram = k.arg(0, "taddr"), k.arg(1, "tdram"), k.arg(2, "oaddr"), k.arg(3, "odram")
        size = k.const(ROW_BYTES, "row_bytes")
        k.addrgen(0, taddr, size, tdram)
        k.addrgen(1, oaddr, size, odram)
        ptr, at, dst = k.reg("ptr"), k.reg("at"), k.reg("dst")
        k.cb_reserve_back(0, 2)
        k.get_write_ptr(ptr, 0)
        for i, entry in enumerate(entries):
            k.addi(at, ptr, 4 * i)
            k.l1_fill(at, 4, entry & 0xFFFFFFFF)
        k.addi(dst, ptr, to)
        k.noc_gather(slot, ptr, dst, count, base, GATHER_FILL, rows, stride)
        k.addi(at, ptr, 32)
        k.noc_write_page(1, 0, at)
        k.noc_write_barrier()
    return make_export((kernel("gatherer", Processor.RISCV_0, body), PROBE_ARGS),
                       cbs=(CircularBufferConfig(0, DF.uint32, ROW_BYTES, 2),), bindings=2, name="gather")


def test_noc_gather_reads_runs_across_pages_and_fills(device, table):
    """Each element from its entry's word of the table (word e holds e // 8), a run
    crossing a page boundary (6..9), the fill pattern for -1, the last word of the table."""
    out = output(device, 1)
    run(device, prepare(device, gather_export([6, 7, 8, 9, -1, 100, 101, 8191])), bindings=[table.get_buffer(),
                                                                                           out.get_buffer()])
    assert out.to_host()[0].tolist() == [0, 0, 1, 1, GATHER_FILL, 12, 12, 1023]


def test_noc_gather_of_rows_moves_each_row(device, table):
    """Two rows of four: each row's entries and elements 16 bytes after the last row's,
    as two NOC_GATHERs would move them."""
    out = output(device, 1)
    run(device, prepare(device, gather_export([6, 7, 8, 9, -1, 100, 8191, 8], count=4, rows=2, stride=16)),
        bindings=[table.get_buffer(), out.get_buffer()])
    assert out.to_host()[0].tolist() == [0, 0, 1, 1, GATHER_FILL, 12, 1023, 1]


@pytest.mark.parametrize("export, words", [
    (gather_export([8192] * 8), ["NoC access outside any bound buffer", "`noc_gather"]),  # one word past the end
    (gather_export([8190, 8191, 8192, -1, -1, -1, -1, -1]), ["NoC access outside", "details {address}, 0, 8190, 12"]),
    (gather_export([8191] * 8, base=4), ["NoC access outside any bound buffer"]),
    (gather_export([0] * 8, base=-4), ["NoC access outside any bound buffer"]),
    (gather_export([0] * 8, slot=3), ["address generator slot never set"]),
    (gather_export([0] * 8, to=34), ["not a multiple of 4", "`noc_gather"]),
    (gather_export([0] * 8, to=16), ["index entries and the elements it writes overlap"]),
    (gather_export([0] * 8, count=-1), ["outside the core's usable L1"]),
    (gather_export([0] * 8, rows=-1), ["outside the core's usable L1"]),
    (gather_export([0] * 8, count=4, rows=2, stride=2), ["not a multiple of 4"]),  # the second row's entries
], ids=["entry-beyond", "run-beyond", "base-beyond", "base-negative", "slot-unset", "misaligned", "overlap",
        "negative-count", "negative-rows", "row-misaligned"])
def test_fault_noc_gather(device, table, export, words):
    address = table.get_buffer().allocation.backend_buffer.address
    expect_fault(device, prepare(device, export), SC.ABORTED, [w.format(address=address) for w in words],
                 bindings=[table.get_buffer(), output(device, 1).get_buffer()])


def test_fault_l1_load_misaligned(device):
    k = KernelBuilder("load")
    ptr, value = k.reg("ptr"), k.reg("value")
    k.cb_reserve_back(0, 1)
    k.get_write_ptr(ptr, 0)
    k.addi(ptr, ptr, 2)
    k.l1_load(value, ptr)
    export = make_export((k.build(Processor.RISCV_0), ()), cbs=(PROBE_CB,), name="load")
    expect_fault(device, prepare(device, export), SC.ABORTED, ["l1_load", "load at an address", "not a multiple of 4"])


def test_fault_l1_overflow():
    """Circular buffers are laid out from the unreserved L1 base upwards; L1 buffers
    come down from the top. A CB reaching an L1 buffer is RESOURCE_EXHAUSTED."""
    dev = hal.create_device("tenstorrent")  # an L1 holding only this test's buffer
    try:
        base = dev.arch.l1_unreserved_base
        l1 = dev.to_device(np.ones((64, 64), np.float32), "bfloat16", "tile", hal.L1_MEMORY_CONFIG)
        top = l1.get_buffer().allocation.backend_buffer.address
        assert base < top < dev.arch.l1_size

        def export(size):
            writer = kernel("w", Processor.RISCV_0, lambda k: (k.cb_reserve_back(3, 1), k.cb_push_back(3, 1)))
            return make_export((writer, ()), cbs=(CircularBufferConfig(0, DF.uint8, 1024, 2),
                                                  CircularBufferConfig(3, DF.uint8, size, 1)), name="big")

        run(dev, prepare(dev, export(top - base - 2048)))  # exactly up to the buffer: fits
        expect_fault(dev, prepare(dev, export(top - base - 2048 + 16)), SC.RESOURCE_EXHAUSTED,
                     ["L1 overflow", f"{base:#x}", f"{top + 16:#x}", f"L1 buffers start at {top:#x}"])
        del l1  # with the L1 buffer gone the same program fits
        gc.collect()
        run(dev, prepare(dev, export(top - base - 2048 + 16)))
        expect_fault(dev, prepare(dev, export(dev.arch.l1_size)), SC.RESOURCE_EXHAUSTED, ["L1 overflow"])
    finally:
        dev.close()


def _dst_kernel(index, **config):
    def body(k):
        k.tile_regs_acquire()
        k.fill_tile(index, 2.0)
        k.sfpu_unary(SfpuOp.EXP, index, 0.0)
        k.tile_regs_commit()
        k.tile_regs_wait()
        k.tile_regs_release()
    return kernel("dst", Processor.COMPUTE, body, **config)


@pytest.mark.parametrize("config, capacity", [
    ({}, 8), ({"fp32_dest_acc_en": True}, 4), ({"dst_full_sync_en": True}, 16),
    ({"dst_full_sync_en": True, "fp32_dest_acc_en": True}, 8),
])
def test_fault_dst_index_beyond_capacity(device, config, capacity):
    run(device, prepare(device, make_export((_dst_kernel(capacity - 1, **config), ()))))  # the last tile is fine
    for index in (capacity, -1):
        expect_fault(device, prepare(device, make_export((_dst_kernel(index, **config), ()), name="dsttest")),
                     SC.ABORTED, ["dsttest", "Dst tile index beyond the Dst capacity", "dst (COMPUTE)",
                                  "at pc 2:", "`fill_tile", f"details {index}, {capacity}"])


def test_fault_dst_binary_operand_beyond_capacity(device):
    def body(k):
        k.tile_regs_acquire()
        k.sfpu_binary(SfpuOp.ADD, 0, 8)
    expect_fault(device, prepare(device, make_export((kernel("bin", Processor.COMPUTE, body), ()))), SC.ABORTED,
                 ["Dst tile index beyond the Dst capacity", "`sfpu_binary", "details 8"])


@pytest.mark.parametrize("operands", [(0, 8, 1), (0, 1, 8)], ids=["a", "b"])
def test_fault_dst_ternary_operand_beyond_capacity(device, operands):
    def body(k):
        k.tile_regs_acquire()
        k.sfpu_ternary(SfpuOp.WHERE, *operands)
    expect_fault(device, prepare(device, make_export((kernel("where", Processor.COMPUTE, body), ()))), SC.ABORTED,
                 ["Dst tile index beyond the Dst capacity", "`sfpu_ternary", "details 8"])


@pytest.mark.parametrize("dst, dims, words", [
    (0, (0, 1, 1), ["matmul_block with ct_dim, rt_dim or kt_dim below 1", "details 0, 1, 1"]),
    (0, (2, -1, 1), ["matmul_block with ct_dim, rt_dim or kt_dim below 1", "details 2, -1, 1"]),
    (0, (4, 2, 0), ["matmul_block with ct_dim, rt_dim or kt_dim below 1", "details 4, 2, 0"]),
    (0, (3, 3, 1), ["Dst tile index beyond the Dst capacity", "details 8, 8"]),  # tiles 0 .. 8 of 8
    (5, (1, 4, 1), ["Dst tile index beyond the Dst capacity", "details 8, 8"]),
    (0, (1 << 32, 1 << 32, 1), ["Dst tile index beyond the Dst capacity", "details 8, 8"]),  # ct * rt wraps to 0
], ids=["ct", "rt", "kt", "block", "from-dst", "product-wraps"])
def test_fault_matmul_block_shape(device, dst, dims, words):
    """matmul_block checks its block: every dimension at least 1 and its ct * rt output
    tiles inside Dst, before it reads a circular buffer."""
    def body(k):
        k.tile_regs_acquire()
        k.matmul_block(0, 1, 0, 0, dst, 0, *dims)
    expect_fault(device, prepare(device, make_export((kernel("mmb", Processor.COMPUTE, body), ()))), SC.ABORTED,
                 ["`matmul_block", *words])


@pytest.mark.parametrize("instruction, dst, count, words", [
    ("add_block", 0, -1, ["of a negative count", "details -1"]),
    ("pack_tiles", 0, -1, ["of a negative count", "details -1"]),
    ("sub_block", 5, 4, ["Dst tile index beyond the Dst capacity", "details 8, 8"]),  # tiles 5 .. 8 of 8
    ("mul_block", 0, 9, ["Dst tile index beyond the Dst capacity", "details 8, 8"]),
    ("pack_tiles", 3, 1 << 62, ["Dst tile index beyond the Dst capacity", "details 11, 8"]),  # 3 + 2^62: no wrap
], ids=["add-negative", "pack-negative", "from-dst", "count", "count-wraps"])
def test_fault_block_of_tiles(device, instruction, dst, count, words):
    """add/sub/mul_block and pack_tiles check their count: not negative, and the tiles
    inside Dst (the first past it named), before they read or write a circular buffer."""
    def body(k):
        k.tile_regs_acquire()
        if instruction == "pack_tiles":
            k.pack_tiles(dst, 16, 0, count)
        else:
            getattr(k, instruction)(0, 1, 0, 0, dst, count)
    expect_fault(device, prepare(device, make_export((kernel("blk", Processor.COMPUTE, body), ()))), SC.ABORTED,
                 [f"`{instruction}", *words])


@pytest.mark.parametrize("body, pc, instruction", [
    (lambda k: k.fill_tile(0, 1.0), 1, "`fill_tile"),
    (lambda k: k.tile_regs_commit(), 0, "`tile_regs_commit"),
    (lambda k: (k.tile_regs_acquire(), k.tile_regs_release(), k.tile_regs_wait()), 2, "`tile_regs_wait"),
    (lambda k: (k.tile_regs_acquire(), k.fill_tile(0, 1.0), k.tile_regs_release(), k.pack_tile(0, 0, 0)), 6,
     "`pack_tile"),
], ids=["fill", "commit", "wait-after-release", "pack-after-release"])
def test_fault_dst_without_acquire(device, body, pc, instruction):
    export = make_export((kernel("noacq", Processor.COMPUTE, body), ()), cbs=(C0_2,))
    expect_fault(device, prepare(device, export), SC.ABORTED,
                 ["Dst used outside tile_regs_acquire / tile_regs_release", "noacq (COMPUTE)", f"at pc {pc}:",
                  instruction])


@pytest.mark.parametrize("body, instruction", [
    (lambda k: (k.tile_regs_acquire(), k.fill_tile(0, 1.0), k.pack_tile(0, 0, 0)), "`pack_tile"),
    (lambda k: (k.tile_regs_acquire(), k.copy_tile(0, 0, 0)), "`copy_tile"),
], ids=["pack", "unpack"])
def test_fault_tile_ops_on_pages_smaller_than_a_tile(device, body, instruction):
    """Issue 21: pack_tile and unpack_tile moved a whole tile whatever the page size: a
    16-byte page let a kernel rewrite L1 it never bound (and, on the last core, DRAM)."""
    tiny = CircularBufferConfig(0, DF.bfloat16, 16, 2)
    export = make_export((kernel("tiny", Processor.COMPUTE, body), ()), cbs=(tiny,))
    expect_fault(device, prepare(device, export), SC.ABORTED,
                 ["smaller than a tile of its data format", instruction, "details 0, 16"])


def _block_fault(body, cbs=(DF.bfloat16, DF.bfloat16), pages=8, **config):
    """A compute kernel `body(k)` over c_0 and c_16 of `pages` tile-sized pages each."""
    buffers = tuple(CircularBufferConfig(cb, fmt, fmt.tile_size, pages) for cb, fmt in zip((0, 16), cbs))
    return make_export((kernel("blocks", Processor.COMPUTE, body, **config), ()), cbs=buffers, name="blocks")


@pytest.mark.parametrize("body, cbs, config, code, words", [  # c_0 and c_16 of 8 pages
    (lambda k: (k.tile_regs_acquire(), k.tilize_block(0, 16, 1)), (DF.bfloat16, DF.bfloat16), {}, SC.ABORTED,
     ["while the kernel holds Dst", "at pc 2:", "`tilize_block", "details 0, 16, 1"]),
    # Pages 0-5 pushed and popped: the next block of 4 starts at page 6 of 8 and would run past the end.
    (lambda k: (k.cb_reserve_back(0, 6), k.cb_push_back(0, 6), k.cb_pop_front(0, 6), k.cb_reserve_back(0, 4),
                k.cb_push_back(0, 4), k.cb_wait_front(0, 4), k.untilize_block(0, 16, 4)),
     (DF.float32, DF.float32), {}, SC.ABORTED,
     ["block of pages runs past the end of the circular buffer", "`untilize_block", "details 0, 16, 4, 6"]),
    (lambda k: k.tilize_block(0, 16, 1), (DF.bfloat16, DF.float32), {}, SC.UNIMPLEMENTED,
     ["between circular buffers of different formats", "`tilize_block"]),
    (lambda k: k.tilize_block(0, 16, 1), (DF.bfloat8_b, DF.bfloat8_b), {}, SC.UNIMPLEMENTED,
     ["elements other than 2 or 4 bytes"]),
    (lambda k: k.untilize_block(0, 16, 5), (DF.float32, DF.float32), {"fp32_dest_acc_en": True}, SC.ABORTED,
     ["Dst tile index beyond the Dst capacity", "`untilize_block", "details 5, 4"]),
], ids=["dst-held", "wraps", "two-formats", "block-float", "beyond-dst"])
def test_fault_tilize_and_untilize_block(device, body, cbs, config, code, words):
    """tilize_block and untilize_block take Dst themselves, move whole blocks of
    contiguous pages in one 2- or 4-byte format, and untilize holds a block in Dst."""
    expect_fault(device, prepare(device, _block_fault(body, cbs, **config)), code, ["blocks (COMPUTE)"] + words)


def test_tilize_and_untilize_block_fill_a_buffer_exactly(device):
    """The control: blocks that end at the last page of their buffers, the largest
    block untilize may hold (Dst's capacity), and neither holds Dst."""
    def body(k):
        k.tilize_block(0, 16, 8)
        k.untilize_block(0, 16, 8)
        k.tile_regs_acquire()
        k.tile_regs_release()
        k.tilize_block(0, 16, 8)
    run(device, prepare(device, _block_fault(body, (DF.float32, DF.float32))))


def test_runtime_arg_limit():
    k = kernel("many", Processor.RISCV_0, lambda k: None)
    Program((), (k,), ((RuntimeArg(ArgKind.LITERAL, 1),) * MAX_RUNTIME_ARGS,))
    assert MAX_RUNTIME_ARGS == 341
    with raises_status(SC.INVALID_ARGUMENT) as info:
        Program((), (k,), ((RuntimeArg(ArgKind.LITERAL, 1),) * (MAX_RUNTIME_ARGS + 1),))
    assert "342 runtime args" in info.value.message and "341" in info.value.message


def test_runtime_arg_limit_is_usable(device, table):
    """All 341 args reach the kernel: the probe reads the last one."""
    p = Probe("lastarg")
    p.record(p.k.arg(MAX_RUNTIME_ARGS - 1))
    extra = tuple(RuntimeArg(ArgKind.LITERAL, i) for i in range(MAX_RUNTIME_ARGS - len(PROBE_ARGS)))
    assert run_probe(device, table, p.export(extra_args=extra), 1).tolist() == [MAX_RUNTIME_ARGS - 1 - 4]


def _spin():
    def body(k):
        top = k.label("top")
        k.place(top)
        k.emit(Op.ADDI, k.reg("spins"), k.reg("x"), 1)
        k.jmp(top)
    return kernel("spin", Processor.RISCV_0, body)


@pytest.fixture
def small_budget(device):
    """Dispatches with a budget of 10_000 instructions."""
    device.backend.instruction_budget = 10_000
    yield 10_000
    device.backend.instruction_budget = tt_hal.sim.dispatch.DEFAULT_INSTRUCTION_BUDGET


def test_fault_runaway_kernel(device, small_budget):
    report = expect_fault(device, prepare(device, make_export((_spin(), ()), name="runaway")),
                          SC.DEADLINE_EXCEEDED, ["runaway", "instruction budget exhausted", "core (0,0)",
                                                 "spin (RISCV_0)", f"details {small_budget}"])
    assert "`jmp" in report or "`addi" in report


def test_instruction_budget_is_per_dispatch(device, small_budget):
    """64 workgroups of 94 instructions fit in 10_000; 128 (two rounds) do not, though
    each round alone would."""
    k = KernelBuilder("short")
    with k.loop(30):
        pass
    exe = prepare(device, make_export((k.build(Processor.RISCV_0), ()), name="rounds"))
    run(device, exe, (64, 1, 1))
    expect_fault(device, exe, SC.DEADLINE_EXCEEDED, ["instruction budget exhausted"], workgroup_count=(128, 1, 1))


def test_tile_ops_weigh_more_in_the_budget(device, small_budget):
    """Issue 21: a loop of tile ops ran ten minutes before its budget of instructions
    ran out. 200 fill_tile (about 4 instructions an iteration, 800 in all) exceed
    10_000 units at 64 a tile op; 200 scalar iterations do not."""
    from tt_hal.sim.interpreter import TILE_OP_COST

    assert 200 * TILE_OP_COST > small_budget > 200 * 4
    scalar = KernelBuilder("scalar")
    with scalar.loop(200):
        pass
    tiles = KernelBuilder("tiles")
    tiles.tile_regs_acquire()
    with tiles.loop(200):
        tiles.fill_tile(0, 1.0)
    run(device, prepare(device, make_export((scalar.build(Processor.COMPUTE), ()), name="scalar")))
    expect_fault(device, prepare(device, make_export((tiles.build(Processor.COMPUTE), ()), name="tiles")),
                 SC.DEADLINE_EXCEEDED, ["instruction budget exhausted", "tiles (COMPUTE)"])


def test_a_block_of_tiles_weighs_its_tiles_in_the_budget(device, small_budget):
    """pack_tiles (as add/sub/mul_block) of n tiles costs n tile ops: 25 of 8 tiles
    (12_800 units) exceed 10_000; 25 of one tile do not."""
    def packs(count):
        k = KernelBuilder(f"packs{count}")
        k.tile_regs_acquire()
        with k.loop(25):
            k.pack_tiles(0, 16, 0, count)
        return make_export((k.build(Processor.COMPUTE), ()), cbs=(CircularBufferConfig.of_tiles(16, DF.bfloat16, 8),),
                           name=f"packs{count}")
    run(device, prepare(device, packs(1)))
    expect_fault(device, prepare(device, packs(8)), SC.DEADLINE_EXCEEDED,
                 ["instruction budget exhausted", "packs8 (COMPUTE)"])


def _rows_forever():
    """A reader of 10^15 rows of 4 bytes of the table, all the same (stride and pitch 0)."""
    def body(k):
        k.addrgen(0, k.arg(0, "taddr"), k.const(ROW_BYTES), k.arg(1, "tdram"))
        ptr = k.reg("ptr")
        k.cb_reserve_back(0, 1)
        k.get_write_ptr(ptr, 0)
        k.noc_read_rows(0, 0, ptr, 4, 10**15, 0, 0)
    return make_export((kernel("rows", Processor.RISCV_1, body), PROBE_ARGS),
                       cbs=(CircularBufferConfig(0, DF.uint32, ROW_BYTES, 2),), bindings=2, name="rows")


@pytest.mark.parametrize("export", [_rows_forever, lambda: gather_export([0] * 8, count=4, rows=10**15)],
                         ids=["rows-of-spans", "gather-rows"])
def test_a_runaway_row_count_meets_the_budget_before_it_runs(device, table, export):
    """A row (of spans) or an element (of a gather) costs what an instruction does, charged
    before the instruction runs: 10^15 rows stop at once with the budget's fault."""
    expect_fault(device, prepare(device, export()), SC.DEADLINE_EXCEEDED, ["instruction budget exhausted"],
                 bindings=[table.get_buffer(), output(device, 1).get_buffer()])


def test_runaway_kernel_default_budget(device):
    """The documented budget: 2e8 instructions per dispatch (about a second here)."""
    assert tt_hal.sim.dispatch.DEFAULT_INSTRUCTION_BUDGET == 200_000_000
    expect_fault(device, prepare(device, make_export((_spin(), ()))), SC.DEADLINE_EXCEEDED,
                 ["instruction budget exhausted", "details 200000000"])


@pytest.mark.parametrize("op", [Op.DIV, Op.MOD])
def test_fault_division_by_zero(device, op):
    def body(k):
        a, zero, q = k.const(7, "a"), k.const(0, "zero"), k.reg("q")
        k.emit(op, q, a, zero)
    report = expect_fault(device, prepare(device, make_export((kernel("divider", Processor.RISCV_0, body), ()))),
                          SC.ABORTED, ["integer division by zero", "divider (RISCV_0)", "at pc 2:",
                                       f"`{op.name.lower()}"])
    assert "r2, r0, r1" in report


def test_fault_on_a_later_core_names_that_core(device):
    """Workgroup 11 of 12 divides by zero: the report names core 11 = (3,1)."""
    def body(k):
        w, last, d = k.reg("w"), k.const(11, "last"), k.reg("d")
        k.emit(Op.WORKGROUP_ID, w, 0)
        k.emit(Op.SUB, d, w, last)  # zero only on workgroup 11
        k.emit(Op.DIV, d, w, d)
    expect_fault(device, prepare(device, make_export((kernel("late", Processor.RISCV_0, body), ()))), SC.ABORTED,
                 ["integer division by zero", "on core (3,1) in late (RISCV_0) at pc 3", "`div"],
                 workgroup_count=(12, 1, 1))


# ---------------------------------------------------------------------------
# Unchecked operands that reach past the interpreter's arrays (bugs). Run in a
# subprocess: they corrupt memory or crash the interpreter.
# ---------------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys, numpy as np, hal
    from tt_hal.target.isa import Op, Processor
    from tt_hal.target.kernel_builder import KernelBuilder
    from tt_hal.target.program import Export, Program, Stage
    from tt_hal.target.ttx import write_executable
    op, immediate = Op[sys.argv[1]], int(sys.argv[2])
    try:
        k = KernelBuilder("oob")
        r = k.const(4096)
        k.emit(op, immediate, r, r, r) if op == Op.ADDRGEN else k.emit(op, r, immediate)
        export = Export("oob", 0, 0, (1, 1, 1), (Stage(Program((), (k.build(Processor.RISCV_0),), ((),))),))
        d = hal.create_device("tenstorrent")
        exe = d.create_executable_cache().prepare_executable("tenstorrent-ttx-fb", write_executable([export]))
        cb = hal.HalCommandBuffer(d)
        cb.dispatch(exe, 0, (1, 1, 1), b"", [])
        cb.end()
        sem = d.create_semaphore(0)
        d.queue_execute(cb, [], [(sem, 1)])
        sem.wait(1, timeout=60 * 10**9)
        print("STATUS OK")
    except hal.HalError as error:
        print("STATUS", error.code.name)
""")


@pytest.mark.parametrize("op, immediate", [
    ("ADDRGEN", ADDRGEN_SLOTS), ("ADDRGEN", -1), ("ADDRGEN", 1_000_000),
    ("WORKGROUP_ID", 3), ("WORKGROUP_ID", 100_000_000), ("WORKGROUP_COUNT", -5),
])
def test_out_of_range_immediates_are_rejected(op, immediate):
    """ADDRGEN's slot (ADDRGEN_SLOTS per kernel) and the workgroup dimension (0..2) are never
    checked: validate_code accepts any immediate, and sim/interpreter.py run_round indexes
    addrgens[c, p, slot] / workgroup_ids[c, dim] / workgroup_count[dim] without bounds
    checks (numba), so slot ADDRGEN_SLOTS overwrites the next kernel's generator and slot 1e6
    crashes the process. Expected: INVALID_ARGUMENT when the program is built or
    ABORTED at dispatch."""
    child = subprocess.run([sys.executable, "-c", _CHILD, op, str(immediate)], cwd=REPO, capture_output=True,
                           text=True, timeout=300, check=False, env={**os.environ, "PYTHONPATH": REPO})
    assert child.returncode == 0, f"the interpreter crashed (exit {child.returncode}): {child.stderr[-500:]}"
    assert child.stdout.split()[-1] in ("INVALID_ARGUMENT", "ABORTED"), child.stdout + child.stderr[-500:]


@pytest.mark.parametrize("arg", [RuntimeArg(ArgKind.CONSTANT, 1), RuntimeArg(ArgKind.WORKGROUP_ID, 3),
                                 RuntimeArg(ArgKind.WORKGROUP_COUNT, 5)], ids=["constant", "wg-id", "wg-count"])
def test_runtime_arg_template_out_of_range(device, arg):
    """A runtime-arg template naming push constant 1 of an export with one constant,
    or workgroup dimension 3+: sim/dispatch.py _runtime_arg indexes past the arrays
    and the dispatch fails with INTERNAL (an IndexError). Expected: INVALID_ARGUMENT
    (or ABORTED), a reported misuse like every other."""
    with raises_status(SC.INVALID_ARGUMENT, SC.ABORTED):
        export = make_export((kernel("w", Processor.RISCV_0, lambda k: k.arg(0)), (arg,)), constants=1)
        run(device, prepare(device, export), (1, 1, 1), [7])


def test_a_view_binds_its_pages_of_its_base(device):
    """An export tensor that views another (ExportTensor.base) is the base's pages from
    its first page on: one stage tilizes a batch of two (40, 50) matrices into tensor 0,
    the next untilizes tensor 1, a view of the second (its 4 tiles from page 4), into
    binding 1, which then holds that matrix, exactly."""
    d, t = BindingSource.DISPATCH, BindingSource.TENSOR
    x = np.random.default_rng(0).standard_normal((2, 40, 50)).astype(np.float32)

    def literals(batches):
        return tuple(RuntimeArg(ArgKind.LITERAL, v) for v in rowmajor.push_constants(40, 50, (), batches))
    export = Export("view", 0, 2, (1, 1, 1), (
        Stage(rowmajor.tilize(DF.float32).program, (3, 1, 1), literals(2), ((d, 0), (t, 0))),
        Stage(rowmajor.untilize(DF.float32).program, (2, 1, 1), literals(1), ((t, 1), (d, 1)))),
        (ExportTensor((2, 40, 50), DF.float32), ExportTensor((40, 50), DF.float32, base=0, first_page=4)))
    source, out = dram_tensor(device, x, "float32"), dram_tensor(device, np.zeros((40, 50), np.float32), "float32")
    run(device, prepare(device, export), bindings=[source.get_buffer(), out.get_buffer()])
    np.testing.assert_array_equal(out.to_host(), x[1])


def test_an_executables_tensors_are_its_own(device):
    """An export's tensors are the executable's (Allocation.owner): freed with it, never
    alone, so a submission holds the executable, not each tensor. Releasing or mapping
    one is FAILED_PRECONDITION and leaves it usable (map_read reads it); a dispatch of
    the executable on another device is INVALID_ARGUMENT, its tensors' addresses being
    this device's."""
    executable = prepare(device, staged_export())
    scratch, values = executable.tensors(0)
    for call in (scratch.get_buffer().release, lambda: values.get_buffer().map()):
        with raises_status(SC.FAILED_PRECONDITION) as info:
            call()
        assert "tensor " in info.value.message and "of export staged, an executable's" in info.value.message
    scratch.get_buffer().check_alive()
    written = values.get_buffer().map_read()
    assert len(written) == values.byte_length and any(written)  # the values written at preparation
    other = hal.create_device("tenstorrent://mock?arch=wormhole_b0")
    try:
        usage, memory = hal.BufferUsage.DEFAULT, hal.MemoryType.DEVICE_LOCAL
        bindings = [other.allocator.allocate_buffer(memory, usage, 1 << 16) for _ in range(3)]
        with raises_status(SC.INVALID_ARGUMENT) as info:
            other.queue_execute(record(other, executable, constants=(1, 2, 3), bindings=bindings), [], [])
        assert "the tensors of <HalExecutable" in info.value.message and "another device" in info.value.message
    finally:
        other.close()


def test_a_fault_before_the_first_launch_starts_is_reported_as_itself():
    """A launch that faults before its deadline is armed (an L1 overflow, checked first),
    as the first dispatch of a device: its own error, not one of the watchdog ending a
    deadline that never started."""
    dev = hal.create_device("tenstorrent")  # a new watchdog: no thread has a deadline slot yet
    try:
        l1 = dev.to_device(np.ones((64, 64), np.float32), "bfloat16", "tile", hal.L1_MEMORY_CONFIG)
        size = l1.get_buffer().allocation.backend_buffer.address - dev.arch.l1_unreserved_base
        writer = kernel("w", Processor.RISCV_0, lambda k: (k.cb_reserve_back(0, 1), k.cb_push_back(0, 1)))
        export = make_export((writer, ()), cbs=(CircularBufferConfig(0, DF.uint8, size + 16, 1),), name="big")
        expect_fault(dev, prepare(dev, export), SC.RESOURCE_EXHAUSTED, ["L1 overflow"])
    finally:
        dev.close()
