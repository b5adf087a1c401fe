"""tt_hal/tools/inspection.py: the reports behind `tt-hal devices` and `tt-hal info`.

Each report is checked against facts computed here from what it summarizes (the
tt_hal.target.arch presets, the program's functions, the executable's exports, the layout rule
of DESIGN.md section 4: circular buffers from the unreserved L1 base upwards, each
start aligned), never against the report itself. One small model is compiled once.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import hal
from hal.backend import hardware_unavailable_reason
from hal.status import StatusCode
from tt_hal import compiler
from tt_hal.compiler import reference
from tt_hal.kernels import eltwise, matmul
from tt_hal.target.arch import ARCHS, DEFAULT_ARCH, get_arch
from tt_hal.target.isa import MathFidelity, Processor
from tt_hal.target.layout import DataFormat as DF
from tt_hal.target.program import CircularBufferConfig, ExportTensor, Stage
from tt_hal.target.ttx import read_executable, write_executable
from tt_hal.tools.inspection import (
    describe_file,
    devices_report,
    embedded_executable,
    format_devices,
    format_info,
)

MODEL = Path(__file__).resolve().parents[1] / "examples" / "models" / "mlp.mlir"


@pytest.fixture(scope="module")
def vmfb() -> bytes:
    return compiler.compile_vmfb(MODEL)


def library_exports():
    return [eltwise.eltwise_binary("add", DF.bfloat16, DF.bfloat16, DF.bfloat16),
            matmul.matmul(DF.bfloat8_b, DF.bfloat16, DF.float32, MathFidelity.LoFi, fp32_dest_acc_en=True)]


@pytest.fixture(scope="module")
def ttx() -> bytes:
    return write_executable(library_exports())


def round_trips(report: dict) -> bool:
    return json.loads(json.dumps(report)) == report


def tenstorrent(report: dict) -> dict:
    (driver,) = [d for d in report["drivers"] if d["name"] == "tenstorrent"]
    return driver


def invalid(data, *words) -> str:
    """The message of the INVALID_ARGUMENT error describe_file raises, which must name `words`."""
    with pytest.raises(hal.HalError) as info:
        describe_file(data)
    assert info.value.code == StatusCode.INVALID_ARGUMENT, info.value
    for word in words:
        assert word in info.value.message
    return info.value.message


# ---- devices ----

def test_devices_report_gives_the_mock_devices_arch(monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "mock")
    monkeypatch.setenv("TT_HAL_MOCK_ARCH", "blackhole_p150")
    report = devices_report()
    assert round_trips(report)
    driver = tenstorrent(report)
    assert driver["mode"] == "mock" and driver["error"] is None
    (device,) = driver["devices"]
    assert (device["uri"], device["mode"], device["fallback_reason"]) == ("tenstorrent://0", "mock", None)
    arch = device["arch"]
    assert (arch["name"], arch["grid_x"], arch["grid_y"], arch["worker_cores"]) == ("blackhole_p150", 13, 10, 130)
    assert (arch["l1_size"], arch["l1_alignment"]) == (1_572_864, 16)
    spec = ARCHS["blackhole_p150"]
    assert arch["l1_unreserved_base"] == spec.l1_unreserved_base
    assert arch["l1_bank_size"] == 1_572_864 - spec.l1_unreserved_base - spec.l1_small_size
    assert (arch["dram_bank_count"], arch["dram_bank_size"], arch["dram_alignment"]) == (8, 4_278_190_080, 64)
    assert device["num_hw_cqs"] == 2


def test_devices_report_says_why_auto_mode_chose_mock(monkeypatch):
    reason = hardware_unavailable_reason()
    if reason is None:
        pytest.skip("hardware present: auto mode opens it")
    monkeypatch.setenv("TT_HAL_MODE", "auto")
    report = devices_report()
    (device,) = tenstorrent(report)["devices"]
    assert device["mode"] == "mock" and device["fallback_reason"] == reason
    assert reason in format_devices(report)


def test_devices_report_keeps_a_driver_error_and_still_lists_presets(monkeypatch):
    if hardware_unavailable_reason() is None:
        pytest.skip("hardware present: TT_HAL_MODE=hardware works")
    monkeypatch.setenv("TT_HAL_MODE", "hardware")
    report = devices_report()
    driver = tenstorrent(report)
    assert driver["devices"] == [] and driver["error"].startswith("UNAVAILABLE")
    assert len(report["mock_archs"]) == len({spec.name for spec in ARCHS.values()})
    text = format_devices(report)
    assert "no devices" in text and driver["error"] in text


def test_mock_presets_cover_every_arch_name_and_open_by_their_uri():
    presets = devices_report()["mock_archs"]
    assert {alias: p["name"] for p in presets for alias in [p["name"], *p["aliases"]]} == \
        {key: spec.name for key, spec in ARCHS.items()}
    assert [p["name"] for p in presets if p["default"]] == [DEFAULT_ARCH]
    for preset in presets:
        spec = ARCHS[preset["name"]]
        assert (preset["l1_size"], preset["dram_bank_count"], preset["dram_bank_size"], preset["max_hw_cqs"]) == \
            (spec.l1_size, spec.dram_bank_count, spec.dram_bank_size, spec.max_hw_cqs)
        device = hal.create_device(preset["uri"])
        try:
            assert device.arch.name == spec.name
        finally:
            device.close()


def test_format_devices_aligns_rows_under_their_headers(monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "mock")
    monkeypatch.delenv("TT_HAL_MOCK_ARCH", raising=False)
    lines = format_devices(devices_report()).splitlines()
    header = next(line for line in lines if line.startswith("DEVICE"))
    row = next(line for line in lines if line.startswith("tenstorrent://0 "))
    for title, cell in (("MODE", "mock"), ("ARCH", "wormhole_b0"), ("GRID", "8x8"), ("L1/CORE", "1,499,136 B"),
                        ("DRAM", "12 x 1 GiB"), ("CQS", "2 of 2")):
        assert header.index(title) == row.index(cell), (title, header, row)
    assert header.index("CORES") + len("CORES") == row.index(" 64 ") + len(" 64")  # numbers right-aligned
    for spec in {spec.name: spec for spec in ARCHS.values()}.values():
        (preset,) = [line for line in lines if line.startswith(spec.name + " ")]
        assert f"{spec.l1_size:,} B" in preset and f"{spec.grid_x}x{spec.grid_y}" in preset


# ---- info: executables ----

def test_executable_report_matches_its_exports(ttx):
    report = describe_file(ttx)
    assert round_trips(report)
    assert (report["kind"], report["file"], report["bytes"], report["arch"]) == \
        ("executable", None, len(ttx), DEFAULT_ARCH)
    exports = library_exports()
    assert [e["name"] for e in report["executable"]["exports"]] == [e.name for e in exports]
    for got, export in zip(report["executable"]["exports"], exports):
        assert (got["constant_count"], got["binding_count"], got["workgroup_size"]) == \
            (export.constant_count, export.binding_count, list(export.workgroup_size))
        (stage,) = got["stages"]
        assert (stage["workgroup_count"], stage["constants"], stage["bindings"]) == (None, None, None)
        assert got["tensors"] == []
        assert [(cb["index"], cb["data_format"], cb["page_size"], cb["num_pages"], cb["total_size"])
                for cb in stage["circular_buffers"]] == \
            sorted((cb.index, cb.data_format.name, cb.page_size, cb.num_pages, cb.page_size * cb.num_pages)
                   for cb in export.program.circular_buffers)
        for kernel, args, k in zip(export.program.kernels, export.program.runtime_args, stage["kernels"]):
            assert (k["name"], k["processor"], k["instructions"], k["compile_args"]) == \
                (kernel.name, kernel.processor.name, len(kernel.code), list(kernel.compile_args))
            assert k["runtime_args"] == [{"kind": a.kind.name, "value": a.value} for a in args]
            assert (k["config"] is None) == (kernel.processor != Processor.COMPUTE)
    matmul = report["executable"]["exports"][1]["stages"][0]["kernels"][1]
    # fp32 accumulation halves Dst: 8 tiles become 4 (DESIGN.md section 4).
    assert matmul["config"] == {"math_fidelity": "LoFi", "fp32_dest_acc_en": True, "math_approx_mode": False,
                                "dst_full_sync_en": False, "dst_capacity": 4}


def padded_export(page_sizes):
    """The library's add with circular buffers of odd page sizes, so alignment shows."""
    export = library_exports()[0]
    cbs = tuple(CircularBufferConfig(cb.index, cb.data_format, size, 3)
                for cb, size in zip(export.program.circular_buffers, page_sizes))
    return dataclasses.replace(export, stages=(Stage(dataclasses.replace(export.program, circular_buffers=cbs)),))


def test_l1_layout_starts_at_the_unreserved_base_with_aligned_starts():
    arch = get_arch("blackhole_p150").with_options(l1_unreserved_base=200_000)
    export = padded_export([100, 2048, 33])
    report = describe_file(write_executable([export]), arch=arch)
    assert report["arch"] == "blackhole_p150"
    (got,) = report["executable"]["exports"]
    address, expected = 200_000, []
    for cb in sorted(export.program.circular_buffers, key=lambda cb: cb.index):
        expected.append(address)
        address += cb.page_size * cb.num_pages
        address += -address % 16
    (stage,) = got["stages"]
    assert [cb["address"] for cb in stage["circular_buffers"]] == expected
    cb_bytes = (100 + 2048 + 33) * 3
    assert stage["l1"] == {"circular_buffer_bytes": cb_bytes, "start": 200_000, "end": address,
                         "used": address - 200_000, "free": 1_572_864 - 200_000 - (address - 200_000)}
    assert address - 200_000 > cb_bytes  # the alignment gaps are counted
    assert f"{cb_bytes:,} B of circular buffers in [0x30d40, {address:#x}), {address - 200_000:,} B with " \
           f"alignment" in format_info(report)


def test_l1_overflow_is_reported_not_hidden():
    report = describe_file(write_executable([padded_export([1 << 20, 1 << 20, 1 << 20])]))
    (got,) = report["executable"]["exports"]
    l1 = got["stages"][0]["l1"]
    assert l1["free"] == ARCHS[DEFAULT_ARCH].l1_bank_size - l1["used"] < 0
    assert "more than the core has" in format_info(report)


def test_arch_is_a_preset_name_or_alias(ttx):
    assert describe_file(ttx, arch="p150")["arch"] == "blackhole_p150"
    with pytest.raises(hal.HalError, match="unknown arch 'nope'") as info:
        describe_file(ttx, arch="nope")
    assert info.value.code == StatusCode.INVALID_ARGUMENT


def test_format_info_tables_and_disassembly(ttx):
    report = describe_file(ttx)
    text = format_info(report)
    assert re.search(r"\n    c_0 +bfloat8_b +1,088 +2 +2,176 +0x19000\n", text), text
    assert re.search(r"\n    COMPUTE +matmul +\d+ +- +LoFi, fp32 Dst \(4 tiles\) +-\n", text), text
    assert "binding_address(2), binding_is_dram(2)" in text  # the writer's runtime-arg template
    assert "cb_wait_front" not in text
    full = format_info(report, disassemble=True)
    for export in read_executable(ttx):
        for kernel in export.program.kernels:
            assert "\n".join("    " + line for line in kernel.disassemble().splitlines()) in full
    assert "cb_wait_front" in full and "matmul_block" in full
    brief = format_info(report, kernels=False)
    assert "PROCESSOR" in text and "PROCESSOR" not in brief and "circular buffers:" in brief


# ---- info: programs ----

def test_program_report_lists_functions_and_the_staged_exports(vmfb):
    report = describe_file(vmfb)
    assert round_trips(report)
    assert (report["kind"], report["module"], report["bytes"]) == ("program", "module", len(vmfb))
    (function,) = report["functions"]
    assert function == {"name": "main", "abi": "sync",
                        "inputs": ["float32[64, 512]", "float32[512, 512]", "float32[512]", "float32[512, 512]",
                                   "float32[512]"],
                        "results": ["float32[64, 512]"]}
    ttx = embedded_executable(vmfb)
    assert report["executable"] == describe_file(ttx)["executable"]
    exports = read_executable(ttx)
    assert len(exports) == 1  # the two layers are the same matmul + bias + relu: IREE keeps one dispatch
    for got, export in zip(report["executable"]["exports"], exports):
        assert got["tensors"] == [{"shape": list(t.shape), "data_format": t.data_format.name,
                                   "values": t.values is not None, "view_of": None} for t in export.tensors]
        assert [[(b["source"], b["index"]) for b in stage["bindings"]] for stage in got["stages"]] == \
            [[(source.name, index) for source, index in stage.bindings] for stage in export.stages]
        assert [stage["workgroup_count"] for stage in got["stages"]] == \
            [list(stage.workgroup_count) for stage in export.stages]
    text = format_info(report)
    assert ("function main(float32[64, 512], float32[512, 512], float32[512], float32[512, 512], float32[512]) "
            "-> (float32[64, 512])") in text
    assert re.search(r"\n  stage 4: reader \+ matmul \+ writer; grid \d+x1x1; constants \[[^]]*\]; "
                     r"bindings \[tensor 0, tensor 1, tensor \d\]", text), text


def test_a_view_tensor_is_reported_with_its_base():
    """An export tensor that views another's pages (ExportTensor.base): the report names
    the base and first page, and the text says it."""
    export = library_exports()[0]
    tensors = (ExportTensor((2, 32, 64), DF.float32), ExportTensor((32, 64), DF.float32, base=0, first_page=2))
    report = describe_file(write_executable([dataclasses.replace(export, tensors=tensors)]))
    assert round_trips(report)
    assert [t["view_of"] for t in report["executable"]["exports"][0]["tensors"]] == \
        [None, {"tensor": 0, "first_page": 2}]
    text = format_info(report)
    assert "tensor 0: float32[2, 32, 64] (scratch)" in text
    assert "tensor 1: float32[32, 64] (a view of tensor 0 from page 2)" in text, text


def test_a_program_for_another_device_has_no_executable():
    report = describe_file(reference.compiled(MODEL.read_text()))  # IREE's llvm-cpu .vmfb
    assert report["kind"] == "program" and report["executable"] is None
    assert "no .ttx executable" in format_info(report)


def test_kind_comes_from_content_not_extension(tmp_path, vmfb, ttx):
    program, executable = tmp_path / "model.ttx", tmp_path / "kernels.vmfb"
    program.write_bytes(vmfb)
    executable.write_bytes(ttx)
    from_path = describe_file(program)
    assert from_path["kind"] == "program" and from_path["file"] == str(program)
    assert from_path == {**describe_file(vmfb), "file": str(program)}  # a path and its bytes agree
    assert describe_file(str(executable))["kind"] == "executable"
    assert format_info(from_path).startswith(f"{program}: IREE program (.vmfb)")


# ---- info: bad input ----

@pytest.mark.parametrize("data, words", [
    (b"", ["0 bytes", "TTX0", ".vmfb"]),
    (bytes(range(64)), ["64 bytes", "00 01 02", "TTX0 at bytes 8..12", "zip"]),
    (MODEL.read_bytes(), ["MLIR source", "tt-hal compile"]),
], ids=["empty", "binary", "mlir"])
def test_unknown_content_says_what_a_file_must_be(data, words):
    invalid(data, *words)


def test_mlir_path_is_told_to_compile_first():
    invalid(str(MODEL), str(MODEL), "MLIR source")


def test_damaged_executable(ttx):
    invalid(ttx[:-8], "malformed .ttx", "truncated")
    invalid(ttx[:8] + b"TTX1" + ttx[12:], "TTX0")


def test_damaged_program(vmfb):
    invalid(b"PK\x03\x04" + bytes(60), "not a .vmfb")


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(hal.HalError, match="no file") as info:
        describe_file(tmp_path / "absent.vmfb")
    assert info.value.code == StatusCode.NOT_FOUND
