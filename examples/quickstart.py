"""The main job on the simulated chip: an iree.runtime-style HAL program on the
`tenstorrent` device, with asynchronous queues, semaphores and a check of the bytes,
then device tensors in TILE layout and Tenstorrent data formats.

    python examples/quickstart.py [--uri tenstorrent://mock?arch=blackhole_p150]
"""

import argparse
import time

import numpy as np

import hal as rt
from tt_hal import ops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="tenstorrent", help="device URI (default: tenstorrent)")
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes per buffer")
    args = parser.parse_args()

    device = rt.create_device(args.uri)
    arch = device.arch
    print(f"device: {device!r}")
    print(f"  grid {arch.grid_x}x{arch.grid_y}, L1 {arch.l1_size} B/core, "
          f"DRAM {arch.dram_bank_count} banks x {arch.dram_bank_size} B")

    allocator = device.allocator
    data = np.random.default_rng(0).integers(0, 1 << 31, args.size // 4, dtype=np.int32)
    source = allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT, device=device, buffer=data)
    target = allocator.allocate_buffer(rt.MemoryType.DEVICE_LOCAL, rt.BufferUsage.DEFAULT, args.size)

    # Record: fill the target's first half with a pattern, copy the source's second half over its second half.
    half = args.size // 2
    command_buffer = rt.HalCommandBuffer(device)
    command_buffer.fill(target, np.uint32(0xAB23CD45), 0, half)
    command_buffer.copy(source, target, half, half, half, end=True)

    # Submit before the input is ready (wait-before-signal), then release it from the host.
    semaphore = device.create_semaphore(0)
    start = time.perf_counter()
    device.queue_execute(command_buffer, [(semaphore, 1)], [(semaphore, 2)])
    readback = allocator.allocate_buffer(rt.MemoryType.HOST_LOCAL, rt.BufferUsage.DEFAULT, args.size)
    device.queue_copy(target, readback, rt.HalFence.create_at(semaphore, 2), rt.HalFence.create_at(semaphore, 3))
    semaphore.signal(1)
    if not semaphore.wait(3, timeout=30 * 10**9):
        print("timed out waiting for the device")
        return 1
    elapsed = time.perf_counter() - start

    result = readback.map().asarray((args.size // 4,), np.dtype(np.int32))
    expected = data.copy()
    expected[: half // 4] = np.int32(np.uint32(0xAB23CD45).view(np.int32))
    ok = np.array_equal(result, expected)
    print(f"fill + copy + readback of {args.size} B through the queues: {elapsed * 1e3:.2f} ms, "
          f"bytes {'match' if ok else 'DIFFER'}")
    return 0 if ok and tensors(device) and kernels(device) else 1


def tensors(device) -> bool:
    """Tensors through tiles and formats: exact where the format holds the values,
    within the format's error bound otherwise (docs/layouts.md)."""
    x = np.random.default_rng(1).standard_normal((2, 100, 300)).astype(np.float32)
    ok = True
    for dtype in ("float32", "bfloat16", "bfloat8_b", "bfloat4_b"):
        view = device.to_device(x, dtype=dtype, layout="tile")
        error = np.max(np.abs(view.to_host(np.float32) - x))
        # One code step of the row's shared exponent bounds a block float's error.
        bound = {"float32": 0.0, "bfloat16": np.max(np.abs(x)) * 2.0 ** -8,
                 "bfloat8_b": 2.0 ** (np.floor(np.log2(np.max(np.abs(x)))) - 6),
                 "bfloat4_b": 2.0 ** (np.floor(np.log2(np.max(np.abs(x)))) - 2)}[dtype]
        ok &= bool(error <= bound)
        print(f"  {view.spec.describe()}: max error {error:.3g} (bound {bound:.3g})")
    print(device.allocator.formatted_statistics, end="")
    return ok


def kernels(device) -> bool:
    """Eager ops as Tensix dispatches (tt_hal.ops): y = layernorm(softmax(x @ w) + x),
    checked against float64 numpy on the bf16 inputs (docs/tensix.md states the bounds)."""
    rng = np.random.default_rng(2)
    x = device.to_device(rng.standard_normal((64, 96)).astype(np.float32), "bfloat16", "tile")
    w = device.to_device((rng.standard_normal((96, 96)) / 10).astype(np.float32), "bfloat16", "tile")
    start = time.perf_counter()
    y = ops.layernorm(ops.add(ops.softmax(ops.matmul(x, w)), x))
    elapsed = time.perf_counter() - start
    xh, wh = x.to_host(np.float32).astype(np.float64), w.to_host(np.float32).astype(np.float64)
    scores = xh @ wh
    p = np.exp(scores - scores.max(-1, keepdims=True))
    h = p / p.sum(-1, keepdims=True) + xh
    expected = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    error = float(np.max(np.abs(y.to_host(np.float32) - expected)))
    print(f"layernorm(softmax(x @ w) + x) on the device: {elapsed * 1e3:.1f} ms, max error {error:.3g} "
          f"(bf16 budget 0.1)")
    return error <= 0.1


if __name__ == "__main__":
    raise SystemExit(main())
