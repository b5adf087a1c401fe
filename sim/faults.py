"""What can stop a simulated kernel: the fault codes the numba interpreter returns
and the status code and message each becomes (sim/dispatch.py adds where it
happened: core, kernel, pc, instruction)."""

from __future__ import annotations

import enum

from hal.status import StatusCode


class Fault(enum.IntEnum):
    OK = 0
    DEADLOCK = 1
    CB_PUSH_UNRESERVED = 2
    CB_POP_UNAVAILABLE = 3
    CB_TOO_SMALL = 4
    NOC_OUT_OF_BOUNDS = 5
    DST_INDEX = 6
    BUDGET = 7
    DIVIDE_BY_ZERO = 8
    CB_UNCONFIGURED = 9
    L1_OUT_OF_BOUNDS = 10
    ARG_INDEX = 11
    ADDRGEN_UNSET = 12
    DST_NOT_ACQUIRED = 13
    CB_NEGATIVE = 14
    UNKNOWN_OPCODE = 15  # an Op of tt_hal.target.isa the simulator does not implement
    L1_MISALIGNED = 16
    DST_HELD = 17  # tilize_block / untilize_block inside tile_regs_acquire .. release
    CB_BLOCK_WRAPS = 18  # a block of pages past the end of its circular buffer
    BLOCK_FORMAT = 19  # tilize_block / untilize_block of formats the simulator does not convert
    CB_PAGE_TOO_SMALL = 20  # a tile op on a circular buffer whose pages cannot hold a tile of its format
    INTEGER_NEEDS_32BIT_DST = 21  # an integer SFPU op in a kernel whose Dst holds bf16
    DEADLINE = 22  # the dispatch ran past its wall-clock deadline (SimDevice.dispatch_timeout)
    L1_OVERLAP = 23  # NOC_GATHER's entries and the elements it writes share L1 bytes
    BLOCK_SHAPE = 24  # matmul_block of a ct, rt or kt below 1; a block of tiles of a negative count


# Every fault but OK. A deadlock's report lists each blocked kernel after the message.
FAULTS: dict[Fault, tuple[StatusCode, str]] = {
    Fault.DEADLOCK: (StatusCode.DEADLINE_EXCEEDED, "circular-buffer deadlock: every unfinished kernel is blocked"),
    Fault.CB_PUSH_UNRESERVED: (StatusCode.ABORTED, ("circular buffer overflow: cb_push_back of more pages than "
                                                    "cb_reserve_back reserved")),
    Fault.CB_POP_UNAVAILABLE: (StatusCode.ABORTED, "cb_pop_front of more pages than the circular buffer holds"),
    Fault.CB_TOO_SMALL: (StatusCode.ABORTED, "waits for more pages than the circular buffer has: it would hang"),
    Fault.NOC_OUT_OF_BOUNDS: (StatusCode.ABORTED, "NoC access outside any bound buffer"),
    Fault.L1_OUT_OF_BOUNDS: (StatusCode.ABORTED, "NoC transfer to or from L1 outside the core's usable L1"),
    Fault.DST_INDEX: (StatusCode.ABORTED, "Dst tile index beyond the Dst capacity"),
    Fault.BLOCK_SHAPE: (StatusCode.ABORTED, ("matmul_block with ct_dim, rt_dim or kt_dim below 1, or a block of tiles "
                                             "(add/sub/mul_block, a pack of tiles) of a negative count")),
    Fault.BUDGET: (StatusCode.DEADLINE_EXCEEDED, "instruction budget exhausted: a runaway kernel"),
    Fault.DEADLINE: (StatusCode.DEADLINE_EXCEEDED, ("wall-clock deadline passed: a runaway kernel, or a dispatch "
                                                   "longer than the device allows (its backend's dispatch_timeout, "
                                                   "$TT_HAL_DISPATCH_TIMEOUT)")),
    Fault.DIVIDE_BY_ZERO: (StatusCode.ABORTED, "integer division by zero"),
    Fault.CB_UNCONFIGURED: (StatusCode.ABORTED, "circular buffer not configured by the program"),
    Fault.ARG_INDEX: (StatusCode.ABORTED, "argument index beyond the arguments given"),
    Fault.ADDRGEN_UNSET: (StatusCode.ABORTED, "NoC access through an address generator slot never set"),
    Fault.DST_NOT_ACQUIRED: (StatusCode.ABORTED, "Dst used outside tile_regs_acquire / tile_regs_release"),
    Fault.CB_NEGATIVE: (StatusCode.ABORTED, "negative page count for a circular buffer"),
    Fault.UNKNOWN_OPCODE: (StatusCode.UNIMPLEMENTED, "instruction the simulator does not implement"),
    Fault.L1_MISALIGNED: (StatusCode.ABORTED, "L1 store or load at an address or of a byte count that is not a "
                                              "multiple of 4"),
    Fault.L1_OVERLAP: (StatusCode.ABORTED, "noc_gather's index entries and the elements it writes overlap in L1"),
    Fault.DST_HELD: (StatusCode.ABORTED, ("tilize_block / untilize_block while the kernel holds Dst "
                                          "(tile_regs_acquire): they acquire and release it themselves")),
    Fault.CB_BLOCK_WRAPS: (StatusCode.ABORTED, ("block of pages runs past the end of the circular buffer: on a card "
                                                "it would reach beyond it (size the buffer in whole blocks)")),
    Fault.CB_PAGE_TOO_SMALL: (StatusCode.ABORTED, ("a tile op on a circular buffer whose pages are smaller than a "
                                                   "tile of its data format: it would write past the page")),
    Fault.INTEGER_NEEDS_32BIT_DST: (StatusCode.ABORTED, ("an integer SFPU op (int32 in Dst) in a kernel without "
                                                         "fp32_dest_acc_en: its Dst holds 16-bit values")),
    Fault.BLOCK_FORMAT: (StatusCode.UNIMPLEMENTED, ("tilize_block / untilize_block between circular buffers of "
                                                    "different formats, of elements other than 2 or 4 bytes, or "
                                                    "with pages that are not one tile")),
}
