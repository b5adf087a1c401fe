"""A fake of the TT-Metal binding (tt_hal.native._tt_metal) that runs on the simulator,
so the hardware backend (native/device.py) is tested end to end without a card.

Buffers are placed in a simulated chip's DRAM banks and L1 (sim/memory.py), as
TT-Metal's allocator would. A program runs on the simulated cores with exactly the
circular buffers and per-core runtime args the backend set, read the way the
generated C++ reads them (codegen.runtime_args: the kernel's own args, then the
workgroup id and count, then the push constants, each a uint32): each generated
source maps back to the ISA kernel it was generated from (`sources`, filled by
`install`). Commands run when enqueued, so every queue is in order and every event
is done when recorded. What the backend asked for is recorded too (`programs`).
"""

from __future__ import annotations

import numpy as np

from tt_hal.native import codegen
from tt_hal.sim import dispatch
from tt_hal.sim.compute import kernel_addresses
from tt_hal.sim.faults import Fault
from tt_hal.sim.interpreter import run_round
from tt_hal.sim.memory import ChipMemory
from tt_hal.sim.numerics import FpuModel
from tt_hal.target.arch import get_arch
from tt_hal.target.layout import DataFormat
from tt_hal.target.placement import BufferType, CoreCoord, ShardedPages
from tt_hal.target.program import CircularBufferConfig, Program

ARCH = "wormhole_b0"
sources: dict[str, tuple] = {}  # generated source -> (Kernel, number of its own runtime args)


def install(monkeypatch, grid=(8, 8)) -> type:
    """Makes tt_hal.native load this fake as its TT-Metal binding, with a chip of `grid`
    worker cores; returns the binding."""
    import tt_hal.native as native

    generate = codegen.program_sources

    def program_sources(program: Program):
        generated = generate(program)
        for kernel, template in zip(program.kernels, program.runtime_args):
            sources[generated[kernel.processor]] = (kernel, len(template))
        return generated

    monkeypatch.setattr(codegen, "program_sources", program_sources)
    monkeypatch.setattr(FakeDevice, "grid_size", tuple(grid))
    monkeypatch.setattr(native, "tt_metal", lambda: FakeBinding)
    monkeypatch.setattr(native, "unavailable_reason", lambda: None)
    return FakeBinding


class FakeBuffer:
    def __init__(self, memory: ChipMemory, buffer):
        self.memory, self.buffer = memory, buffer

    @property
    def address(self) -> int:
        return self.buffer.address

    def deallocate(self) -> None:
        self.memory.free(self.buffer)


class FakeProgram:
    def __init__(self):
        self.circular_buffers: list[tuple] = []  # (cores, CircularBufferConfig)
        self.kernels: list[tuple] = []  # (source, processor, cores, compile args, fidelity, fp32, approx, full sync)
        self.args: dict[tuple, list[int]] = {}  # (kernel handle, core) -> runtime args

    def add_circular_buffer(self, cores, index, data_format, page_size, num_pages):
        config = CircularBufferConfig(index, DataFormat.parse(data_format), page_size, num_pages)
        self.circular_buffers.append((tuple(map(tuple, cores)), config))

    def add_kernel(self, source, processor, cores, compile_args, fidelity, fp32_dest_acc_en, math_approx_mode,
                   dst_full_sync_en):
        self.kernels.append((source, processor, tuple(map(tuple, cores)), list(compile_args), fidelity,
                             fp32_dest_acc_en, math_approx_mode, dst_full_sync_en))
        return len(self.kernels) - 1

    def set_runtime_args(self, kernel, core, args):
        self.args[(kernel, tuple(core))] = [int(a) for a in args]


class FakeDevice:
    arch_name = ARCH
    grid_size = (8, 8)

    def __init__(self, device_id: int, num_hw_cqs: int):
        grid_x, grid_y = self.grid_size
        self.memory = ChipMemory(get_arch(ARCH).with_options(grid_x=grid_x, grid_y=grid_y))
        self.l1_size_per_core = self.memory.arch.l1_size
        self.num_dram_channels = self.memory.arch.dram_bank_count
        self.dram_size_per_channel = self.memory.arch.dram_bank_size
        self.buffers: list[FakeBuffer] = []
        self.programs: list[FakeProgram] = []
        self.fail_next_program = False
        self.closed = False

    # Buffers.
    def create_buffer(self, size, page_size, is_dram):
        kind = BufferType.DRAM if is_dram else BufferType.L1
        return self._keep(self.memory.create_interleaved(size, page_size, kind))

    def create_sharded_buffer(self, size, page_size, is_dram, cores, shard_shape, page_grid):
        cores = tuple(CoreCoord(x, y) for x, y in cores)
        shard = ShardedPages(tuple(page_grid), tuple(shard_shape), cores, cores)
        kind = BufferType.DRAM if is_dram else BufferType.L1
        return self._keep(self.memory.create_sharded(size, page_size, kind, shard))

    def _keep(self, buffer) -> FakeBuffer:
        fake = FakeBuffer(self.memory, buffer)
        self.buffers.append(fake)
        return fake

    def write_buffer(self, cq, buffer, data, offset, blocking):
        buffer.buffer.write(offset, np.ascontiguousarray(data, np.uint8))

    def read_buffer(self, cq, buffer, out, offset, blocking):
        buffer.buffer.read(offset, out.shape[0], out)

    # Programs.
    def create_program(self):
        return FakeProgram()

    def enqueue_program(self, cq, program: FakeProgram, blocking):
        if self.fail_next_program:
            self.fail_next_program = False
            raise RuntimeError("TT_THROW: kernel build failed")
        self.programs.append(program)
        self._run(program)

    def _run(self, program: FakeProgram) -> None:
        kernels = [sources[source] for source, *_ in program.kernels]
        circular_buffers = {config.index: config for _, config in program.circular_buffers}
        prepared = dispatch.PreparedProgram(
            Program(tuple(circular_buffers.values()), tuple(k for k, _ in kernels), ((),) * len(kernels)),
            self.memory.arch)
        cores = list(dict.fromkeys(core for _, _, kernel_cores, *_ in program.kernels for core in kernel_cores))
        width = max(len(args) for args in program.args.values())
        state = dispatch.CoreState(len(cores), width)
        constants = workgroup_count = None
        for c, core in enumerate(cores):
            for handle, (kernel, own) in enumerate(kernels):
                args = np.array(program.args[(handle, core)], np.int64)  # uint32, as get_arg_val reads them
                state.rt_args[c, kernel.processor, :len(args)] = args
                state.workgroup_ids[c] = args[own:own + 3]
                workgroup_count, constants = (args[own + 3:own + codegen.WORKGROUP_ARGS],
                                              args[own + codegen.WORKGROUP_ARGS:])
        grid_x = self.memory.arch.grid_x
        rows = np.array([y * grid_x + x for x, y in cores], np.int64)
        tables = dispatch.buffer_tables([b.buffer for b in self.buffers if not b.buffer.freed])
        fault = np.zeros(8, np.int64)
        run_round(prepared.codes, prepared.ct_args, None, np.full(3, width, np.int64), constants,
                  np.zeros((0, 4), np.int64), workgroup_count, 0, 0, len(cores), rows, self.memory.l1, self.memory.dram,
                  self.memory.arch.l1_unreserved_base, *tables, *prepared.config, FpuModel.FAST.jit_argument(),
                  kernel_addresses(FpuModel.FAST.jit_argument()), dispatch.DEFAULT_INSTRUCTION_BUDGET,
                  dispatch.NEVER_STOP, *state.arrays, fault, state.work[0])
        if fault[0] != Fault.OK:
            raise RuntimeError(f"kernel fault on the fake chip: {Fault(int(fault[0])).name}, core "
                               f"{cores[int(fault[1])]}, processor {int(fault[2])}, pc {int(fault[3])}")

    # Events: commands ran when enqueued.
    def record_event(self, cq):
        return object()

    def wait_for_event(self, cq, event):
        pass

    def event_query(self, event):
        return True

    def event_synchronize(self, event):
        pass

    def finish(self, cq):
        pass

    def close(self):
        self.closed = True


class FakeBinding:
    Device = FakeDevice

    @staticmethod
    def get_num_available_devices():
        return 1
