"""The simulator's instruction loop (sim/interpreter.py) against the ISA it runs
(tt_hal.target.isa): every opcode the target defines is implemented."""

from __future__ import annotations

import numpy as np
import pytest
from tt_hal.sim import interpreter
from tt_hal.sim.compute import DST_TILES
from tt_hal.sim.faults import Fault

from tt_hal.target.isa import (
    ADDRGEN_SLOTS,
    NUM_CIRCULAR_BUFFERS,
    NUM_REGISTERS,
    WIDTH,
    Op,
    Processor,
)
from tt_hal.target.tiles import TILE_ELEMENTS


def run_compute_instruction(opcode: int) -> Fault:
    """Runs tile_regs_acquire, then `opcode` with all operands 0, as one core's compute
    kernel (the other kernels halt at once; no circular buffer or binding exists), and
    returns the fault it stops with."""
    codes = np.zeros((len(Processor), 3, WIDTH), np.int64)
    codes[:, :, 0] = Op.HALT
    codes[interpreter.COMPUTE, 0, 0] = Op.TILE_REGS_ACQUIRE
    codes[interpreter.COMPUTE, 1, 0] = opcode
    cores, processors = 1, len(Processor)
    fault = np.zeros(8, np.int64)
    interpreter.run_cores(
        codes, np.zeros((processors, 1), np.int64), np.zeros((cores, processors, 1), np.int64),
        np.zeros(processors, np.int64), np.zeros(1, np.int64), np.zeros((cores, 3), np.int64), np.ones(3, np.int64),
        np.arange(cores), np.zeros((cores, 4096), np.uint8), np.zeros((1, 4096), np.uint8), 0,
        np.zeros((NUM_CIRCULAR_BUFFERS, 4), np.int64), np.zeros((0, 8), np.int64), np.zeros(0, np.int64),
        np.zeros(0, np.int64), np.zeros(0, np.int64), 4, False, 8, 1000,
        np.zeros((cores, processors), np.int64), np.zeros((cores, processors, NUM_REGISTERS), np.int64),
        np.zeros((cores, processors), np.bool_), np.full((cores, processors, 2), interpreter.NO_WAIT, np.int64),
        *(np.zeros((cores, NUM_CIRCULAR_BUFFERS), np.int64) for _ in range(3)),
        np.zeros((cores, processors, ADDRGEN_SLOTS, 3), np.int64),
        np.zeros((cores, DST_TILES, TILE_ELEMENTS), np.float32), np.zeros((cores, processors), np.int64), fault)
    return Fault(int(fault[0]))


@pytest.mark.parametrize("op", list(Op), ids=lambda op: op.name)
def test_every_opcode_of_the_target_is_implemented(op):
    """Operands 0 may fault (circular buffer 0 is not configured, JMP 0 loops until
    the budget runs out), but never as an opcode the simulator does not know."""
    assert run_compute_instruction(op) != Fault.UNKNOWN_OPCODE


def test_an_opcode_outside_the_target_is_a_fault():
    assert run_compute_instruction(max(Op) + 1) == Fault.UNKNOWN_OPCODE
