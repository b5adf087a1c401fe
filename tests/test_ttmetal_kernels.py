"""Every kernel native/codegen.py emits, against the real TT-Metal 0.81.1 kernel API headers
(native/ttmetal_check.py: the ttnn==0.81.1 wheel's headers, compiled as the JIT compiles a
kernel, on every processor the kernel runs on), and negative controls that show the check
fails when a generated kernel calls the API wrongly.

Skipped when clang-19, newlib's headers or the wheel are missing, unless
TT_HAL_REQUIRE_TTMETAL_CHECK is set (.ci/run sets it and provides them): then it fails.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os

import pytest

from tests.test_native_codegen import library_exports
from tt_hal.native import ttmetal_check
from tt_hal.native.ttmetal_check import Processor

WORKERS = 2  # CI's cores


@pytest.fixture(scope="module")
def toolchain() -> ttmetal_check.Toolchain:
    found = ttmetal_check.find_toolchain()
    if isinstance(found, str):
        if os.environ.get(ttmetal_check.REQUIRE_ENV):
            pytest.fail(f"{ttmetal_check.REQUIRE_ENV} is set but {found}")
        pytest.skip(found)
    return found


def _check_all(toolchain, units) -> dict[ttmetal_check.Unit, list[str]]:
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:  # each check is a clang-19 process
        return dict(zip(units, pool.map(lambda unit: ttmetal_check.check(toolchain, unit), units)))


def checked_units() -> list[ttmetal_check.Unit]:
    """Each distinct translation unit of the kernel library once (its data-movement kernels
    repeat: one reader serves every unary op), every compute kernel on the math TRISC, and
    on the unpack and pack TRISCs all but the SFPU op families (unary_*, fused_*) beyond
    their first kernel: the kernels of a family differ only in their SFPU calls, whose
    bodies are compiled on the math TRISC alone (MATH(...)), and which the math TRISC
    resolves as the others do. This keeps the check within CI's minutes."""
    units, families = [], set()
    for name, export in library_exports():
        family = name.split("_")[0] if name.startswith(("unary_", "fused_")) else name
        for unit in ttmetal_check.program_units(name, export.program):
            if unit.processor in (Processor.TRISC0, Processor.TRISC2) and family in families:
                continue
            units.append(unit)
        families.add(family)
    return list(dict.fromkeys(units))


def test_every_generated_kernel_compiles_against_the_real_kernel_api(toolchain):
    units = checked_units()
    assert {u.processor for u in units} == set(Processor)
    every_compute_kernel = {u.source for name, export in library_exports()
                            for u in ttmetal_check.program_units(name, export.program) if u.processor.compute}
    assert {u.source for u in units if u.processor == Processor.TRISC1} == every_compute_kernel
    errors = {f"{u.name} on {u.processor.name}": e for u, e in _check_all(toolchain, units).items() if e}
    assert not errors, "\n".join(f"{unit}: {e[:5]}" for unit, e in errors.items())


def _golden_units(name: str, processor: str) -> list[ttmetal_check.Unit]:
    export = dict(library_exports())[name]
    return [u for u in ttmetal_check.program_units(name, export.program) if u.name.endswith(f".{processor}")]


# (kernel, processor, generated text, its wrong replacement, what the error must name)
NEGATIVE_CONTROLS = {
    "misspelt compute call": ("eltwise_add", "compute", "add_block(", "add_blok(", "add_blok"),
    "wrong arity": ("matmul", "compute", "matmul_block_init(0, 1, 0, ", "matmul_block_init(0, 1, 0, 1, 1, 1, 1, 1, ",
                    "matmul_block_init"),
    "swapped template arguments": ("reduce_sum_row", "compute", "reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>",
                                   "reduce_tile<ReduceDim::REDUCE_ROW, PoolType::SUM>", "reduce_tile"),
    "unsupported template argument": ("fused_and", "compute", "bitwise_and_binary_tile<DataFormat::Int32>",
                                      "bitwise_and_binary_tile<DataFormat::Float32>", "Unsupported data format"),
    "misspelt SFPU call": ("unary_sqrt", "compute", "sqrt_tile(", "sqrt_tiles(", "sqrt_tiles"),
    "missing API header": ("unary_exp", "compute", "eltwise_unary/exp.h", "eltwise_unary/expo.h", "expo.h"),
    "misspelt dataflow call": ("eltwise_add", "riscv_1", "noc_async_read(", "noc_async_reed(", "noc_async_reed"),
    "dataflow wrong arity": ("eltwise_add", "riscv_0", "cb_wait_front(16, ", "cb_wait_front(", "cb_wait_front"),
}


@pytest.mark.parametrize("control", sorted(NEGATIVE_CONTROLS))
def test_negative_controls_fail(toolchain, control):
    """The check can fail: one API error injected into a generated kernel is reported, on
    every processor the kernel runs on, at the kernel's own line."""
    name, processor, right, wrong, named = NEGATIVE_CONTROLS[control]
    units = _golden_units(name, processor)
    assert units and all(right in u.source for u in units), f"{name}.{processor} no longer contains {right!r}"
    broken = [dataclasses.replace(u, source=u.source.replace(right, wrong, 1)) for u in units]
    for unit, errors in _check_all(toolchain, units + broken).items():
        if unit in units:
            assert not errors, errors  # the same kernel without the error passes
        else:
            assert any(named in e for e in errors), f"{unit.processor.name}: {errors}"
