"""tt_hal.native.codegen: TT-Metal C++ kernel source from tt_hal.target.isa programs.

- Golden files (tests/golden/codegen/) pin the reader, compute and writer source of
  eltwise, matmul, reduce and the row-major tilize and untilize (as the compiler's
  stages run them); regenerate them with TT_HAL_UPDATE_GOLDEN=1 after a
  deliberate change, and review the diff.
- Every kernel of the kernel library is compiled with the system C++ compiler
  (-fsyntax-only -Werror) against native/api_stubs/kernel, the declarations of
  tt-metal v0.81.1's kernel API; compute kernels once per TRISC, as the JIT does.
- The generated runtime-arg layout is checked against the simulator's semantics.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from hal.status import HalError, StatusCode
from tt_hal.kernels import eltwise, fused, gather, matmul, normalization, reduce, rowmajor, transpose
from tt_hal.kernels.fused import Binary, Input, Scalar, Ternary
from tt_hal.native import codegen
from tt_hal.target.isa import INTEGER_OPERANDS, Broadcast, Op, Processor, ReduceKind, SfpuOp
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, Program, RuntimeArg

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "codegen"
STUBS = ROOT / "native" / "api_stubs" / "kernel"
BF16 = DataFormat.bfloat16

GOLDEN_EXPORTS = {
    "eltwise_add": lambda: eltwise.eltwise_binary("add", BF16, BF16, BF16),
    "matmul": lambda: matmul.matmul(BF16, BF16, BF16),
    "reduce_sum_row": lambda: reduce.reduce(ReduceKind.SUM_ROW, BF16, BF16),
    "rowmajor_tilize": lambda: rowmajor.tilize(DataFormat.float32, offsets=True),
    "rowmajor_untilize": lambda: rowmajor.untilize(DataFormat.float32, offsets=True),
}


def library_exports():
    """Every program shape of the kernel library, named."""
    yield "eltwise_add", eltwise.eltwise_binary("add", BF16, BF16, BF16)
    for op in ("sub", "mul"):
        for broadcast in Broadcast:
            yield f"eltwise_{op}_{broadcast.name.lower()}", eltwise.eltwise_binary(op, BF16, BF16, BF16, broadcast)
    for op in (op for op in SfpuOp if op < SfpuOp.ADD):
        yield f"unary_{op.name.lower()}", eltwise.eltwise_unary(op, BF16, BF16, 0.5)
    for op in (op for op in SfpuOp if SfpuOp.ADD <= op):  # binary and ternary, integer ones on int32 tiles
        fmt = DataFormat.int32 if op in INTEGER_OPERANDS else DataFormat.float32
        code = (Input(0), Input(1), Binary(op, 0, 1)) if op < SfpuOp.WHERE else \
            (Input(0), Input(1), Input(1), Ternary(op, 0, 1, 2))
        inputs = (fused.FusedInput(fmt), fused.FusedInput(fmt, Broadcast.ROW))  # an integer row: unary_bcast
        yield f"fused_{op.name.lower()}", fused.eltwise_fused("fused", inputs, code, fmt, fp32_dest_acc_en=True)
    yield "fused_scalar", fused.eltwise_fused("fused", (fused.FusedInput(DataFormat.int32),),  # fill_tile_bitcast
                                              (Input(0), Scalar(0), Binary(SfpuOp.ADD_INT, 0, 1)), DataFormat.int32,
                                              fp32_dest_acc_en=True)
    yield "matmul", matmul.matmul(BF16, DataFormat.bfloat8_b, DataFormat.float32)
    yield "matmul_row_major", matmul.matmul(DataFormat.float32, BF16, DataFormat.float32, rows=(True, True),
                                            row_output=True)
    yield "fused_row_major", fused.eltwise_fused(  # a row-major input and output, a tile input broadcast
        "fused", (fused.FusedInput(BF16), fused.FusedInput(BF16, Broadcast.ROW)),
        (Input(0), Input(1), Binary(SfpuOp.ADD, 0, 1)), BF16, rows=(True, False), row_output=True)
    for kind in ReduceKind:
        yield f"reduce_{kind.name.lower()}", reduce.reduce(kind, BF16, BF16)
        yield f"reduce_{kind.name.lower()}_masked", reduce.reduce(kind, BF16, BF16, masked=True, mask_columns=True)
    yield "transpose", transpose.transpose(BF16, BF16)
    yield "softmax", normalization.softmax(BF16, BF16, 70, masked=True)
    yield "layernorm", normalization.layernorm(BF16, BF16, 70, 1e-5, gamma=BF16, beta=BF16)
    yield "rowmajor_tilize", rowmajor.tilize(DataFormat.float32, offsets=True)
    yield "rowmajor_untilize", rowmajor.untilize(BF16)
    yield "rowmajor_add", rowmajor.eltwise_binary("add", BF16, offsets=True)
    yield "rowmajor_copy", rowmajor.copy(DataFormat.float32)
    yield "eltwise_fused_untilized", fused.eltwise_fused_untilized(  # rows, tiles with a row broadcast, a scalar
        (fused.FusedInput(BF16), fused.FusedInput(DataFormat.float32, Broadcast.ROW)), (True, False),
        (Input(0), Input(1), Scalar(0, False), Binary(SfpuOp.MUL, 1, 2), Binary(SfpuOp.ADD, 0, 3)), BF16, True)
    yield "gather", gather.gather(DataFormat.float32, 0x7FC00000)


@pytest.mark.parametrize("name", sorted(GOLDEN_EXPORTS))
def test_golden_sources(name):
    sources = codegen.program_sources(GOLDEN_EXPORTS[name]().program)
    assert set(sources) == {Processor.RISCV_0, Processor.RISCV_1, Processor.COMPUTE}
    for processor, source in sources.items():
        path = GOLDEN / f"{name}.{processor.name.lower()}.cpp"
        if os.environ.get("TT_HAL_UPDATE_GOLDEN"):
            path.write_text(source)
        assert path.exists(), f"{path} is missing; run with TT_HAL_UPDATE_GOLDEN=1 to create it"
        assert source == path.read_text(), f"{path.name} differs from the generated source"


CXX = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
TRISCS = ("UNPACK", "MATH", "PACK")


def _syntax_check(source: str, compute: bool, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "kernel.cpp"
    path.write_text(source)
    variants = [[f"-DTRISC_{t}", f"-DUCK_CHLKC_{t}"] for t in TRISCS] if compute else [[]]
    for defines in variants:
        result = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", "-Werror", "-Wall", f"-I{STUBS}",
                                 "-DKERNEL_COMPILE_TIME_ARGS=0", *defines, "-x", "c++", str(path)],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{' '.join(defines)}:\n{result.stderr[:3000]}"


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")
@pytest.mark.parametrize("name,export", list(library_exports()), ids=lambda v: v if isinstance(v, str) else "")
def test_library_kernels_compile_against_kernel_api(name, export, tmp_path):
    for processor, source in codegen.program_sources(export.program).items():
        _syntax_check(source, processor == Processor.COMPUTE, tmp_path)


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")
def test_syntax_check_rejects_an_unknown_api_call(tmp_path):
    """The check can fail: a call the kernel API does not declare is an error."""
    source = codegen.program_sources(GOLDEN_EXPORTS["eltwise_add"]().program)[Processor.COMPUTE]
    with pytest.raises(AssertionError, match="add_tiles_init"):
        _syntax_check(source.replace("add_init(", "add_tiles_init("), True, tmp_path)


def _single_kernel_program(kernel, args=()):
    cbs = (CircularBufferConfig(0, BF16, 2048, 2), CircularBufferConfig(16, BF16, 2048, 2))
    return Program(cbs, (kernel,), (tuple(args),))


def test_runtime_arg_layout_matches_the_generated_reads():
    """Own args first, then workgroup id, count and push constants (codegen.runtime_args)."""
    k = KernelBuilder("args")
    a, wg, count, constant = k.reg("a"), k.reg("wg"), k.reg("n"), k.reg("c")
    k.emit(Op.ARG, a, 1)
    k.emit(Op.WORKGROUP_ID, wg, 2)
    k.emit(Op.WORKGROUP_COUNT, count, 0)
    k.emit(Op.CONSTANT, constant, 3)
    program = _single_kernel_program(k.build(Processor.RISCV_1), [RuntimeArg(ArgKind.LITERAL, 7)] * 2)
    source = codegen.program_sources(program)[Processor.RISCV_1]
    values = codegen.runtime_args([7, 8], (4, 5, 6), (10, 11, 12), [20, 21, 22, 23])
    # Each generated get_arg_val index must read the value the ISA instruction means.
    assert f"r[{a.index}] = get_arg_val<uint32_t>(1);" in source and values[1] == 8
    assert f"r[{wg.index}] = get_arg_val<uint32_t>(4);" in source and values[4] == 6
    assert f"r[{count.index}] = get_arg_val<uint32_t>(5);" in source and values[5] == 10
    assert f"r[{constant.index}] = get_arg_val<uint32_t>(11);" in source and values[11] == 23


def test_floor_division_prelude_matches_the_simulator(tmp_path):
    """DIV and MOD floor, as the simulator's registers do, also for negative operands."""
    if CXX is None:
        pytest.skip("no C++ compiler")
    prelude = codegen._PRELUDE
    program = tmp_path / "div.cpp"
    pairs = [(a, b) for a in (-7, -6, -1, 0, 1, 6, 7) for b in (-3, -2, 2, 3)]
    lines = [f'printf("%lld %lld\\n", (long long)tt_hal_floordiv({a}, {b}), (long long)tt_hal_floormod({a}, {b}));'
             for a, b in pairs]
    program.write_text("#include <stdint.h>\n#include <stdio.h>\n" + prelude + "int main() {\n" + "\n".join(lines)
                       + "\nreturn 0;\n}\n")
    subprocess.run([CXX, "-std=c++17", "-o", str(tmp_path / "div"), str(program)], check=True)
    output = subprocess.run([str(tmp_path / "div")], capture_output=True, text=True, check=True).stdout.split("\n")
    for (a, b), line in zip(pairs, output):
        assert line == f"{a // b} {a % b}", (a, b)


def test_l1_load_is_a_sign_extended_word_load():
    k = KernelBuilder("load")
    ptr, value = k.reg("ptr"), k.reg("value")
    k.get_write_ptr(ptr, 0)
    k.l1_load(value, ptr)
    source = codegen.program_sources(_single_kernel_program(k.build(Processor.RISCV_1)))[Processor.RISCV_1]
    assert "r[1] = (int32_t)*reinterpret_cast<volatile tt_l1_ptr uint32_t *>((uint32_t)r[0]);" in source


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")
def test_l1_fill_is_a_loop_of_word_stores(tmp_path):
    k = KernelBuilder("zero")
    ptr = k.reg("ptr")
    k.get_write_ptr(ptr, 0)
    k.l1_fill(ptr, 2048, 0xDEADBEEF)
    source = codegen.program_sources(_single_kernel_program(k.build(Processor.RISCV_1)))[Processor.RISCV_1]
    assert "*end = p + (uint32_t)r[1] / 4; p != end; ++p) *p = 0xdeadbeefu;" in source
    _syntax_check(source, False, tmp_path)


@pytest.mark.parametrize("config, cases", [
    ({}, 8), ({"fp32_dest_acc_en": True, "dst_full_sync_en": True}, 8), ({"fp32_dest_acc_en": True}, 4),
], ids=["bf16-half", "fp32-full", "fp32-half"])
def test_tilize_and_untilize_block_calls(config, cases, tmp_path):
    """tilize_block takes the block's tiles at run time; pack_untilize_block takes them as
    a template argument, so each count up to the Dst capacity gets its case (the
    simulator faults beyond it)."""
    k = KernelBuilder("convert")
    block = k.reg("w")
    k.tilize_block(0, 16, block)
    k.untilize_block(16, 0, block)
    source = codegen.program_sources(_single_kernel_program(k.build(Processor.COMPUTE, **config)))[Processor.COMPUTE]
    assert '#include "api/compute/tilize.h"' in source and '#include "api/compute/pack_untilize.h"' in source
    assert (f"tilize_init(0, (uint32_t)r[{block.index}], 16);\n    tilize_block(0, (uint32_t)r[{block.index}], 16);"
            "\n    tilize_uninit(0, 16);") in source
    assert f"switch ((uint32_t)r[{block.index}]) {{" in source
    for n in range(1, cases + 1):
        assert (f"case {n}: pack_untilize_init<{n}>(16, 0); pack_untilize_block<{n}>(16, 1, 0); "
                "pack_untilize_uninit(0); break;") in source
    assert f"case {cases + 1}:" not in source
    if CXX is not None:
        _syntax_check(source, True, tmp_path)


def test_noc_use_before_addrgen_is_invalid():
    k = KernelBuilder("reader")
    page = k.const(0)
    k.noc_read_page(3, page, page)
    program = _single_kernel_program(k.build(Processor.RISCV_1))
    with pytest.raises(HalError) as error:
        codegen.program_sources(program)
    assert error.value.code == StatusCode.INVALID_ARGUMENT and "address generator 3" in str(error.value)


def test_generated_source_is_deterministic():
    export = GOLDEN_EXPORTS["matmul"]
    assert codegen.program_sources(export().program) == codegen.program_sources(export().program)
    assert np.array_equal(export().program.kernels[0].code, export().program.kernels[0].code)
