"""The cost of one tile op on a simulated core, against copy_tile's, side by side.

    python bench/bench_tileops.py [--runs N] [--quick] [--json out.json]

Each case is a compute kernel on one core that runs its op ITERATIONS times, as a fused
kernel runs a tile's ops: it pushes a tile to its own input buffer and waits for it,
acquires Dst, runs the op, releases Dst, pops the tile. The empty loop's row is that
handshake alone; every row is a whole iteration (its handshake included) against
copy_tile's, the commonest tile op, timed in the same run. fp32 tiles and a 32-bit Dst
(as the exported models' fused kernels) unless the case names bf16. Runs alternate over
the cases (bench/timing.py). The figures move with the machine more than the ratios:
compare two checkouts on one host thread (`taskset -c 1`) in alternating processes
(docs/tensix.md, "Developer note: comparing two checkouts").
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import Row, suite_main  # noqa: E402  (bench/report.py)
from timing import fmt, measure  # noqa: E402  (bench/timing.py)

import hal  # noqa: E402
from hal.executable import EXECUTABLE_FORMAT  # noqa: E402
from tt_hal.ops import HANG_TIMEOUT_NS  # noqa: E402
from tt_hal.target.isa import Broadcast, Processor, SfpuOp  # noqa: E402
from tt_hal.target.kernel_builder import KernelBuilder  # noqa: E402
from tt_hal.target.layout import DataFormat  # noqa: E402
from tt_hal.target.program import CircularBufferConfig, Export, Program, Stage  # noqa: E402
from tt_hal.target.ttx import write_executable  # noqa: E402

ITERATIONS, QUICK_ITERATIONS = 4000, 400
IN, OUT = 0, 16  # the circular buffers: the tile the ops read, and pack_tile's target
BASELINE = "copy_tile"


def _copy(k, dst=0):
    k.copy_tile(IN, 0, dst)


def _pack(k):
    _copy(k)
    k.cb_reserve_back(OUT, 1)
    k.pack_tile(0, OUT, 0)
    k.cb_push_back(OUT, 1)
    k.cb_wait_front(OUT, 1)  # the kernel takes its own output back, so the buffer never fills
    k.cb_pop_front(OUT, 1)


def _exp(k):
    _copy(k)
    k.sfpu_unary(SfpuOp.EXP, 0, 0)


def _sfpu_binary(op):
    def body(k):
        _copy(k, 0)
        _copy(k, 1)
        k.sfpu_binary(op, 0, 1)
    return body


# case -> (the op's body, the input tile's format)
CASES = {
    "empty loop (CB and Dst handshakes)": (lambda k: None, DataFormat.float32),
    "copy_tile": (_copy, DataFormat.float32),
    "copy_tile bf16": (_copy, DataFormat.bfloat16),
    "unary_bcast row": (lambda k: k.unary_bcast(IN, 0, 0, Broadcast.ROW), DataFormat.float32),
    "unary_bcast col": (lambda k: k.unary_bcast(IN, 0, 0, Broadcast.COL), DataFormat.float32),
    "unary_bcast scalar": (lambda k: k.unary_bcast(IN, 0, 0, Broadcast.SCALAR), DataFormat.float32),
    "transpose_wh_tile": (lambda k: k.transpose_wh_tile(IN, 0, 0), DataFormat.float32),
    "add_tiles (FPU)": (lambda k: k.add_tiles(IN, IN, 0, 0, 0, Broadcast.NONE), DataFormat.float32),
    "mul_tiles, b a row (FPU)": (lambda k: k.mul_tiles(IN, IN, 0, 0, 0, Broadcast.ROW), DataFormat.float32),
    "matmul_tiles (FPU, HiFi4)": (lambda k: k.matmul_tiles(IN, IN, 0, 0, 0, 0), DataFormat.float32),
    "copy_tile, exp (SFPU)": (_exp, DataFormat.float32),
    "2 copy_tile, add (SFPU)": (_sfpu_binary(SfpuOp.ADD), DataFormat.float32),
    "2 copy_tile, mul (SFPU)": (_sfpu_binary(SfpuOp.MUL), DataFormat.float32),
    "copy_tile, pack_tile": (_pack, DataFormat.float32),
}


def loop_kernel(body, iterations: int):
    k = KernelBuilder("tile_op_loop")
    with k.loop(iterations):
        k.cb_reserve_back(IN, 1)
        k.cb_push_back(IN, 1)
        k.cb_wait_front(IN, 1)
        k.tile_regs_acquire()
        body(k)
        k.tile_regs_commit()
        k.tile_regs_wait()
        k.tile_regs_release()
        k.cb_pop_front(IN, 1)
    return k.build(Processor.COMPUTE, fp32_dest_acc_en=True)


def case(device, body, data_format: DataFormat, iterations: int):
    """The case's call: one dispatch of its loop on one core, recorded once, executed and waited."""
    cbs = (CircularBufferConfig.of_tiles(IN, data_format, 2), CircularBufferConfig.of_tiles(OUT, DataFormat.float32, 2))
    program = Program(cbs, (loop_kernel(body, iterations),), ((),))
    executable = device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([Export("tile_op_loop", 0, 0, (1, 1, 1), (Stage(program),))]))
    command_buffer = hal.HalCommandBuffer(device)
    command_buffer.dispatch(executable, 0, (1, 1, 1), b"", [])
    command_buffer.end()
    return lambda: device.execute_now(command_buffer, timeout=HANG_TIMEOUT_NS)


def collect(runs: int, quick: bool) -> list[Row]:
    iterations = QUICK_ITERATIONS if quick else ITERATIONS
    device = hal.create_device("tenstorrent")
    work = {name: case(device, body, data_format, iterations) for name, (body, data_format) in CASES.items()}
    for function in work.values():
        function()  # warm-up: numba compiles; a fault raises here
    times = measure(work, runs)
    device.close()
    return [Row(case=name, size="1 tile", time=times[name], baseline=BASELINE, baseline_time=times[BASELINE],
                per=iterations, unit="iteration", note=f"one core, {iterations} iterations a call")
            for name in CASES]


def main(argv=None) -> int:
    return suite_main(__doc__, collect, ["case", "an iteration", f"/ {BASELINE}"],
                      lambda row: [row.case, fmt(row.per_unit), f"{row.ratio:.2f}x"], argv)


if __name__ == "__main__":
    raise SystemExit(main())
