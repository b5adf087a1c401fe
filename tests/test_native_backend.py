"""Hardware mode without hardware: how the mode is chosen and said, and the hardware
backend (native/device.py) against tests/fake_tt_metal.py, a fake of the
tt_hal.native._tt_metal binding that places buffers and runs programs on the
simulator. These tests check what the backend asks of TT-Metal (kernel sources,
circular buffers, per-core runtime args, waves, queue errors); tests/cts runs the
HAL's conformance suite, dispatches included, on the backend over the same fake.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import hal
from hal.backend import Binding, LaunchProgram
from hal.status import HalError, StatusCode
from tests import fake_tt_metal
from tt_hal import native
from tt_hal.kernels import eltwise, rowmajor
from tt_hal.native import codegen
from tt_hal.native.device import HardwareDevice
from tt_hal.target import extensions
from tt_hal.target.isa import Processor
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.placement import BufferType
from tt_hal.target.program import ArgKind, Program, RuntimeArg

BF16 = DataFormat.bfloat16


def test_hardware_mode_without_tt_metal_is_unavailable_and_names_what_is_missing(monkeypatch):
    if native.tt_metal() is not None:
        pytest.skip("this install has the TT-Metal binding")
    monkeypatch.setenv("TT_HAL_MODE", "hardware")
    with pytest.raises(HalError) as error:
        hal.create_device("tenstorrent")
    assert error.value.code == StatusCode.UNAVAILABLE
    message = str(error.value)
    assert "TT_HAL_MODE=hardware" in message and "tt_hal.native._tt_metal" in message and "docs/hardware.md" in message
    recorded = extensions.build_status("tt_hal.native").get("_tt_metal")
    if recorded:  # setup.py recorded why: the message carries it
        assert recorded in message


def test_auto_mode_falls_back_to_mock_and_says_why(monkeypatch):
    if native.unavailable_reason() is None:
        pytest.skip("this machine has Tenstorrent hardware")
    monkeypatch.setenv("TT_HAL_MODE", "auto")
    driver = hal.get_driver("tenstorrent")
    [info] = driver.query_available_devices()
    assert info["mode"] == "mock"
    assert info["fallback_reason"] == native.unavailable_reason()
    assert "auto mode fell back" in info["name"] and "tt_hal.native._tt_metal" in info["name"]
    device = driver.create_default_device()
    assert device.backend.mode == "mock"


def test_mock_mode_does_not_report_a_fallback(monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "mock")
    [info] = hal.get_driver("tenstorrent").query_available_devices()
    assert "fallback_reason" not in info and info["mode"] == "mock"


# ---- the hardware backend against a fake binding ----


def launch(export, workgroup_count, constants, bindings) -> LaunchProgram:
    return LaunchProgram(export.program, export.name, workgroup_count, np.array(constants, np.int64),
                         tuple(Binding(*b) for b in bindings))


@pytest.fixture
def hardware(monkeypatch):
    """The hardware backend on a 2x2 chip of tests/fake_tt_metal.py, which runs its programs."""
    fake_tt_metal.install(monkeypatch, grid=(2, 2))
    device = HardwareDevice(0)
    yield device
    device.close()


def test_device_reports_the_chip_tt_metal_sees(hardware):
    assert hardware.arch.name == "wormhole_b0" and hardware.arch.worker_cores == 4
    with pytest.raises(HalError) as error:
        HardwareDevice(3)
    assert error.value.code == StatusCode.NOT_FOUND


def test_device_queries_work_on_the_hardware_arch(hardware):
    """hal's tt.device queries read every field tt_hal.target.arch.ArchSpec has."""
    from hal.device import HalDevice
    device = HalDevice(None, hardware, "tenstorrent://0")
    assert device.query_i64("tt.device", "worker_cores") == 4
    assert device.query_i64("tt.device", "dram_alignment") == 32
    assert device.query_i64("tt.device", "dram_size") == hardware.arch.dram_bank_count * hardware.arch.dram_bank_size
    assert device.query_i64("tt.device", "mock") == 0


def test_partial_writes_and_reads_go_through_byte_regions(hardware):
    buffer = hardware.create_buffer(4096, 2048, BufferType.DRAM)
    hardware.write_buffer(buffer, 100, np.arange(50, dtype=np.uint8))
    assert np.array_equal(hardware.read_buffer(buffer, 90, 70)[10:60], np.arange(50, dtype=np.uint8))
    assert not hardware.read_buffer(buffer, 0, 100).any()


def test_dispatch_runs_in_waves_with_generated_kernels_and_per_core_args(hardware):
    export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
    a, b, out = (hardware.create_buffer(6 * 2048, 2048, BufferType.DRAM) for _ in range(3))
    bindings = [(a, 0, a.size), (b, 0, b.size), (out, 0, out.size)]
    hardware.enqueue_program(0, launch(export, (3, 2, 1), [6, 1], bindings))
    hardware.finish(0)
    programs = hardware.handle.programs
    assert len(programs) == 2  # 6 workgroups on 4 cores
    sources = codegen.program_sources(export.program)
    first = programs[0]
    assert [k[0] for k in first.kernels] == [sources[k.processor] for k in export.program.kernels]
    assert ({config.index for _, config in first.circular_buffers}
            == {cb.index for cb in export.program.circular_buffers})
    assert first.kernels[0][2] == ((0, 0), (1, 0), (0, 1), (1, 1)) and programs[1].kernels[0][2] == ((0, 0), (1, 0))
    # Workgroup 5 = (2, 1, 0) runs on core (1, 0) of the second wave; the reader's args:
    # a's address, is_dram and first page, b's, then workgroup id, count and the push constants.
    reader = [k.processor for k in export.program.kernels].index(1)
    assert programs[1].args[(reader, (1, 0))] == [a.address, 1, 0, b.address, 1, 0, 2, 1, 0, 3, 2, 1, 6, 1]


def test_compute_kernels_get_their_config(hardware):
    """ComputeConfig: fidelity, fp32 Dst, approximation and full-sync Dst (the row-major
    untilize holds a block of 8 float32 tiles, which only a full-sync Dst has room for)."""
    export = rowmajor.untilize(DataFormat.float32)
    pages, rows = hardware.create_buffer(4096, 4096, BufferType.DRAM), hardware.create_buffer(4096, 4096,
                                                                                             BufferType.DRAM)
    hardware.enqueue_program(0, launch(export, (1, 1, 1), rowmajor.push_constants(32, 32),
                                       [(pages, 0, pages.size), (rows, 0, rows.size)]))
    hardware.finish(0)
    [compute] = [k for k in hardware.handle.programs[-1].kernels if k[1] == Processor.COMPUTE]
    assert compute[4:] == ("HiFi4", True, False, True)


def test_waves_give_kernels_a_bindings_byte_offset_and_page_size(hardware):
    """IREE binds byte ranges: a kernel may ask for a binding's byte offset and its
    buffer's page size (raw buffers: 4096-byte pages, or the whole buffer when smaller)."""
    k = KernelBuilder("args")
    k.arg(0)
    template = tuple(RuntimeArg(kind, b) for b in (0, 1) for kind in (ArgKind.BINDING_BYTE_OFFSET,
                                                                        ArgKind.BINDING_PAGE_SIZE))
    program = Program((), (k.build(Processor.RISCV_1),), (template,))
    big, small = hardware.create_buffer(3 * 4096, 4096, BufferType.DRAM), hardware.create_buffer(96, 96, BufferType.L1)
    [[(core, [args])]] = list(hardware.waves(program, (1, 1, 1), [], [(big, 4176, 600), (small, 16, 64)]))
    assert core == (0, 0) and args[:4] == [4176, 4096, 16, 96]


def test_an_enqueue_failure_fails_the_queue_until_the_next_event(hardware):
    export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
    bufs = [hardware.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(3)]
    bindings = [(x, 0, 2048) for x in bufs]
    hardware.handle.fail_next_program = True
    hardware.enqueue_program(0, launch(export, (1, 1, 1), [1, 1], bindings))
    hardware.enqueue_program(0, launch(export, (1, 1, 1), [1, 1], bindings))  # skipped
    seen = []
    done = threading.Event()
    failed = hardware.enqueue_record_event(0, lambda error: (seen.append(error), done.set()))
    assert failed.synchronize(5) and done.wait(5)
    assert (failed.error is not None and failed.error.code == StatusCode.INTERNAL
            and "kernel build failed" in str(failed.error))
    assert seen == [failed.error] and hardware.handle.programs == []
    hardware.enqueue_program(0, launch(export, (1, 1, 1), [1, 1], bindings))
    clean = hardware.enqueue_record_event(0)
    assert clean.synchronize(5) and clean.error is None and len(hardware.handle.programs) == 1


def test_a_queue_waiting_on_a_failed_event_takes_its_error(hardware):
    hardware.handle.fail_next_program = True
    export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
    bufs = [hardware.create_buffer(2048, 2048, BufferType.DRAM) for _ in range(3)]
    hardware.enqueue_program(0, launch(export, (1, 1, 1), [1, 1], [(x, 0, 2048) for x in bufs]))
    failed = hardware.enqueue_record_event(0)
    failed.synchronize(5)
    hardware.enqueue_wait_for_event(1, failed)
    after = hardware.enqueue_record_event(1)
    assert after.synchronize(5) and after.error is failed.error


def test_sharded_bindings_are_unimplemented_on_hardware(hardware):
    export = eltwise.eltwise_binary("add", BF16, BF16, BF16)
    host = hardware.import_host_buffer(np.zeros(2048, np.uint8))
    with pytest.raises(HalError) as error:
        hardware.enqueue_program(0, launch(export, (1, 1, 1), [1, 1], [(host, 0, 2048)] * 3))
    assert error.value.code == StatusCode.UNIMPLEMENTED and "binding 0" in str(error.value)


def test_tt_metal_binding_compiles_against_the_host_api_stubs(tmp_path):
    """native/src/tt_metal.cpp against tt-metalium v0.81.1's declarations (C++20, as
    its headers need); the real build happens only where TT-Metal is installed."""
    import pathlib
    import shutil
    import subprocess
    import sysconfig

    import pybind11

    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    root = pathlib.Path(__file__).resolve().parents[1]
    result = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", "-Wall", "-Werror",
                             f"-I{root / 'native' / 'api_stubs' / 'host'}", f"-I{pybind11.get_include()}",
                             f"-I{sysconfig.get_paths()['include']}", str(root / "native" / "src" / "tt_metal.cpp")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[:3000]
