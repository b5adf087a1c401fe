"""The simulator's instruction loop (sim/interpreter.py) against the ISA it runs
(tt_hal.target.isa): every opcode the target defines is implemented."""

from __future__ import annotations

import numpy as np
import pytest

from tt_hal.sim import interpreter
from tt_hal.sim.compute import kernel_addresses
from tt_hal.sim.dispatch import NEVER_STOP, CoreState
from tt_hal.sim.faults import Fault
from tt_hal.sim.numerics import FpuModel
from tt_hal.target.isa import NUM_CIRCULAR_BUFFERS, WIDTH, Op, Processor


def run_compute_instruction(opcode: int) -> Fault:
    """Runs tile_regs_acquire, then `opcode` with all operands 0, as the compute kernel
    of a one-core round (the other kernels halt at once; no circular buffer, binding,
    argument or constant exists), and returns the fault it stops with."""
    codes = np.zeros((len(Processor), 3, WIDTH), np.int64)
    codes[:, :, 0] = Op.HALT
    codes[interpreter.COMPUTE, :2, 0] = Op.TILE_REGS_ACQUIRE, opcode
    none = np.zeros(0, np.int64)
    fault = np.zeros(8, np.int64)
    interpreter.run_round(
        codes, np.zeros((len(Processor), 1), np.int64), np.zeros((len(Processor), 1, 2), np.int64),
        np.zeros(len(Processor), np.int64), none, np.zeros((0, 4), np.int64), np.ones(3, np.int64), 0, 0, 1,
        np.zeros(1, np.int64), np.zeros((1, 4096), np.uint8), np.zeros((1, 4096), np.uint8), 0,
        np.zeros((0, 8), np.int64), none, none, none, np.zeros((NUM_CIRCULAR_BUFFERS, 4), np.int64), 4, False, 8,
        FpuModel.FAST.jit_argument(), kernel_addresses(FpuModel.FAST.jit_argument()), 1000,
        NEVER_STOP, *CoreState(1, 1).arrays, fault, CoreState(1, 1).work[0])
    return Fault(int(fault[0]))


@pytest.mark.parametrize("op", list(Op), ids=lambda op: op.name)
def test_every_opcode_of_the_target_is_implemented(op):
    """Operands 0 may fault (circular buffer 0 is not configured, JMP 0 loops until
    the budget runs out), but never as an opcode the simulator does not know."""
    assert run_compute_instruction(op) != Fault.UNKNOWN_OPCODE


def test_an_opcode_outside_the_target_is_a_fault():
    assert run_compute_instruction(max(Op) + 1) == Fault.UNKNOWN_OPCODE
