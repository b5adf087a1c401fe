"""Running a program on the simulated cores (EnqueueProgram): circular buffers laid
out in L1, runtime args from the dispatch, workgroups dealt to cores in rounds, and
faults turned into readable reports.

A fault fails the dispatch with a HalError whose message says what a person
debugging the kernel needs: which core, which kernel, which instruction, and for a
deadlock what every blocked kernel waits for.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from hal.isa import NUM_CIRCULAR_BUFFERS, NUM_REGISTERS, WIDTH, Op, Processor, disassemble
from hal.program import ArgKind, Program
from hal.status import HalError, StatusCode
from sim import tensix
from sim.memory import BufferType, ChipMemory, SimBuffer, round_up

# Instructions one dispatch may execute before it counts as a runaway kernel.
DEFAULT_INSTRUCTION_BUDGET = 200_000_000
_PROCESSOR_ORDER = (Processor.RISCV_0, Processor.RISCV_1, Processor.COMPUTE)  # tensix.WRITER, READER, COMPUTE


@dataclasses.dataclass
class Dispatch:
    """One dispatch of a program: workgroup grid, push constants (uint32) and the bound
    buffers as (buffer, byte offset, byte length)."""

    name: str
    workgroup_count: tuple[int, int, int] | None
    constants: np.ndarray
    bindings: list[tuple[SimBuffer, int, int]]
    instruction_budget: int | None = None  # None: DEFAULT_INSTRUCTION_BUDGET when the program runs
    indirect: tuple[SimBuffer, int] | None = None  # workgroup count read from (buffer, offset) at run time


def _circular_buffer_table(program: Program, memory: ChipMemory, name: str) -> np.ndarray:
    """(32, 4) rows (format, page size, pages, L1 address), from the bottom of the
    unreserved L1 upwards; RESOURCE_EXHAUSTED where they reach the L1 buffers."""
    table = np.zeros((NUM_CIRCULAR_BUFFERS, 4), np.int64)
    arch = memory.arch
    address = arch.l1_unreserved_base
    for cb in sorted(program.circular_buffers, key=lambda cb: cb.index):
        table[cb.index] = (int(cb.data_format), cb.page_size, cb.num_pages, address)
        address = round_up(address + cb.total_size, arch.l1_alignment)
    lowest_buffer = memory.l1_allocator.lowest_allocated()
    if address > lowest_buffer:
        raise HalError(
            StatusCode.RESOURCE_EXHAUSTED,
            f"{name}: L1 overflow: the program's circular buffers need L1 [{arch.l1_unreserved_base:#x}, {address:#x}) "
            f"({address - arch.l1_unreserved_base} B) but L1 buffers start at {lowest_buffer:#x}; shrink the "
            f"circular buffers or move tensors to DRAM")
    return table


def _buffer_table(bindings):
    """The bound buffers as the NoC sees them (see tensix.noc_transfer)."""
    rows, banks, page_rows, page_addresses = [], [], [], []
    for buffer, _, _ in bindings:
        table = -1
        if buffer.shard is not None:
            table = sum(len(p) for p in page_rows)
            page_rows.append(buffer.page_rows)
            page_addresses.append(buffer.page_addresses)
        rows.append((int(buffer.buffer_type is BufferType.DRAM), buffer.address, buffer.size, buffer.page_size,
                     buffer.aligned_page_size, sum(len(b) for b in banks), len(buffer.banks), table))
        banks.append(buffer.banks)

    def joined(parts):
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    table = np.array(rows, np.int64).reshape(-1, 8)
    return table, joined(banks), joined(page_rows), joined(page_addresses)


def _runtime_arg(arg, dispatch: Dispatch, workgroup: tuple[int, int, int]) -> int:
    kind, value = arg.kind, arg.value
    if kind == ArgKind.LITERAL:
        return value
    if kind == ArgKind.CONSTANT:
        return int(dispatch.constants[value])
    if kind == ArgKind.WORKGROUP_ID:
        return workgroup[value]
    if kind == ArgKind.WORKGROUP_COUNT:
        return dispatch.workgroup_count[value]
    buffer, offset, length = dispatch.bindings[value]
    if kind == ArgKind.BINDING_ADDRESS:
        return buffer.address
    if kind == ArgKind.BINDING_IS_DRAM:
        return int(buffer.buffer_type is BufferType.DRAM)
    if offset % buffer.page_size:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"{dispatch.name}: binding {value} starts at byte {offset}, not at a page boundary of its "
                       f"buffer ({buffer.page_size}-byte pages); kernels address whole pages")
    if kind == ArgKind.BINDING_PAGE_OFFSET:
        return offset // buffer.page_size
    return -(-length // buffer.page_size)  # BINDING_PAGES


def run_program(program: Program, dispatch: Dispatch, memory: ChipMemory) -> None:
    """Runs every workgroup of `dispatch`; raises a HalError on a fault."""
    missing = [i for i, arg in _binding_args(program) if i >= len(dispatch.bindings)]
    if missing:
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"{dispatch.name}: the program uses binding {missing[0]} but the dispatch has "
                       f"{len(dispatch.bindings)} bindings")
    if dispatch.indirect is not None:
        buffer, offset = dispatch.indirect
        dispatch.workgroup_count = tuple(int(v) for v in buffer.read(offset, 12).view(np.uint32))
    total = int(np.prod(dispatch.workgroup_count))
    if total == 0:
        return
    arch = memory.arch
    cb_config = _circular_buffer_table(program, memory, dispatch.name)
    kernels = [program.kernel(p) for p in _PROCESSOR_ORDER]
    length = max(k.code.shape[0] for k in kernels if k is not None) if any(kernels) else 1
    codes = np.zeros((3, length, WIDTH), np.int64)
    codes[:, :, 0] = int(Op.HALT)
    templates = [(), (), ()]
    ct_width = max([len(k.compile_args) for k in kernels if k is not None] + [1])
    ct_args = np.zeros((3, ct_width), np.int64)
    for p, kernel in enumerate(kernels):
        if kernel is not None:
            codes[p, :kernel.code.shape[0]] = kernel.code
            ct_args[p, :len(kernel.compile_args)] = kernel.compile_args
            templates[p] = program.runtime_args[program.kernels.index(kernel)]
    compute_kernel = kernels[2]
    config = compute_kernel.config if compute_kernel is not None else None
    buffers, banks, page_rows, page_addresses = _buffer_table(dispatch.bindings)
    rt_counts = np.array([len(t) for t in templates], np.int64)
    cores = arch.worker_cores
    count_x, count_y, _ = dispatch.workgroup_count
    budget = dispatch.instruction_budget if dispatch.instruction_budget is not None else DEFAULT_INSTRUCTION_BUDGET
    for first in range(0, total, cores):
        active = min(cores, total - first)
        ids = [(w % count_x, (w // count_x) % count_y, w // (count_x * count_y)) for w in range(first, first + active)]
        rt_args = np.zeros((active, 3, max(int(rt_counts.max()), 1)), np.int64)
        for c, workgroup in enumerate(ids):
            for p, template in enumerate(templates):
                for k, arg in enumerate(template):
                    rt_args[c, p, k] = _runtime_arg(arg, dispatch, workgroup)
        state = _CoreState(active)
        fault = np.zeros(8, np.int64)
        executed = tensix.run_cores(
            codes, ct_args, rt_args, rt_counts, dispatch.constants.astype(np.int64),
            np.array(ids, np.int64).reshape(-1, 3), np.array(dispatch.workgroup_count, np.int64),
            np.arange(active, dtype=np.int64), memory.l1, memory.dram, arch.l1_unreserved_base, cb_config,
            buffers, banks, page_rows, page_addresses,
            int(config.math_fidelity) if config else 4, bool(config.fp32_dest_acc_en) if config else False,
            config.dst_capacity() if config else 8, budget,
            state.pcs, state.regs, state.done, state.waiting, state.cb_pushed, state.cb_popped, state.cb_reserved,
            state.addrgens, state.dst, fault)
        budget -= executed
        if fault[0] != tensix.OK:
            raise _fault_error(program, dispatch, kernels, cb_config, state, fault, arch)


def _binding_args(program: Program):
    for template in program.runtime_args:
        for arg in template:
            if arg.kind in (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_PAGE_OFFSET, ArgKind.BINDING_PAGES,
                            ArgKind.BINDING_IS_DRAM):
                yield arg.value, arg


class _CoreState:
    def __init__(self, cores: int):
        self.pcs = np.zeros((cores, 3), np.int64)
        self.regs = np.zeros((cores, 3, NUM_REGISTERS), np.int64)
        self.done = np.zeros((cores, 3), np.bool_)
        self.waiting = np.full((cores, 3, 2), tensix.NO_WAIT, np.int64)
        self.cb_pushed = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.cb_popped = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.cb_reserved = np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64)
        self.addrgens = np.zeros((cores, 3, tensix.SLOTS, 3), np.int64)
        self.dst = np.zeros((cores, tensix.DST_TILES, 1024), np.float32)


_FAULTS = {
    tensix.CB_PUSH_UNRESERVED: (StatusCode.ABORTED, "circular buffer overflow: cb_push_back of more pages than "
                                                    "cb_reserve_back reserved"),
    tensix.CB_POP_UNAVAILABLE: (StatusCode.ABORTED, "cb_pop_front of more pages than the circular buffer holds"),
    tensix.CB_TOO_SMALL: (StatusCode.ABORTED, "waits for more pages than the circular buffer has: it would hang"),
    tensix.NOC_OUT_OF_BOUNDS: (StatusCode.ABORTED, "NoC access outside any bound buffer"),
    tensix.L1_OUT_OF_BOUNDS: (StatusCode.ABORTED, "NoC transfer to or from L1 outside the core's usable L1"),
    tensix.DST_INDEX: (StatusCode.ABORTED, "Dst tile index beyond the Dst capacity"),
    tensix.BUDGET: (StatusCode.DEADLINE_EXCEEDED, "instruction budget exhausted: a runaway kernel"),
    tensix.DIVIDE_BY_ZERO: (StatusCode.ABORTED, "integer division by zero"),
    tensix.CB_UNCONFIGURED: (StatusCode.ABORTED, "circular buffer not configured by the program"),
    tensix.ARG_INDEX: (StatusCode.ABORTED, "argument index beyond the arguments given"),
    tensix.ADDRGEN_UNSET: (StatusCode.ABORTED, "NoC access through an address generator slot never set"),
    tensix.DST_NOT_ACQUIRED: (StatusCode.ABORTED, "Dst used outside tile_regs_acquire / tile_regs_release"),
    tensix.CB_NEGATIVE: (StatusCode.ABORTED, "negative page count for a circular buffer"),
}


def _core_name(index: int, arch) -> str:
    return f"core ({index % arch.grid_x},{index // arch.grid_x})"


def _fault_error(program, dispatch, kernels, cb_config, state, fault, arch) -> HalError:
    code = int(fault[0])
    if code == tensix.DEADLOCK:
        lines = []
        for c in range(state.pcs.shape[0]):
            for p, kernel in enumerate(kernels):
                if kernel is None or state.done[c, p]:
                    continue
                cb, wanted = (int(v) for v in state.waiting[c, p])
                held = int(state.cb_pushed[c, cb] - state.cb_popped[c, cb])
                op = Op(int(kernel.code[state.pcs[c, p], 0])).name.lower()
                lines.append(f"  {_core_name(c, arch)} {kernel.name} ({kernel.processor.name}) at pc "
                             f"{state.pcs[c, p]}: {op}(c_{cb}, {wanted}) but c_{cb} holds {held} of "
                             f"{cb_config[cb, 2]} pages")
        shown = lines[:12] + ([f"  ... and {len(lines) - 12} more"] if len(lines) > 12 else [])
        return HalError(StatusCode.DEADLINE_EXCEEDED,
                        f"{dispatch.name}: circular-buffer deadlock: every unfinished kernel is blocked\n"
                        + "\n".join(shown))
    status, what = _FAULTS[code]
    c, p, pc = int(fault[1]), int(fault[2]), int(fault[3])
    kernel = kernels[p]
    instruction = disassemble(kernel.code[pc:pc + 1], kernel.register_names, first_pc=pc).split(None, 1)[-1]
    details = ", ".join(f"{v}" for v in fault[4:8])
    return HalError(status, f"{dispatch.name}: {what}, on {_core_name(c, arch)} in {kernel.name} "
                            f"({kernel.processor.name}) at pc {pc}: `{instruction.strip()}` (details {details})")
