"""A .vmfb running in iree.runtime (local-task) calls a matmul on the tenstorrent
device through the VM module `tt`: compiles tt_import.mlir, runs its sync and
coarse-fences functions, then calls tt.matmul$async from Python with fences.

    PYTHONPATH=. python examples/iree_interop/run_tt_import.py [--uri tenstorrent://mock?arch=wormhole_b0]
"""

import argparse
import gc
import threading
import time
from pathlib import Path

import iree.runtime as rt
import numpy as np

import hal
from tt_hal.compiler.frontend import compile_vmfb
from tt_hal.runtime.vm_module import create_tt_module

M, K, N = 64, 128, 32


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="tenstorrent", help="tenstorrent device URI (default: tenstorrent)")
    args = parser.parse_args()

    vmfb = compile_vmfb((Path(__file__).parent / "tt_import.mlir").read_text())
    config = rt.Config("local-task")
    tt = create_tt_module(config.vm_instance, hal.create_device(args.uri), iree_device=config.device)
    program = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
    # The hal module comes first (SystemContext adds it), then the imported module, then the program.
    context = rt.SystemContext(vm_modules=[tt, program], config=config)

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    w = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    bias = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    reference = np.maximum(2 * x.astype(np.float64) @ w + bias, 0)
    scale = np.abs(reference).max()
    ok = True
    for name in ("linear", "linear_async"):
        result = context.modules.module[name](x, w, bias).to_host()
        error = np.abs(result - reference).max()
        print(f"{name}: relu(2x @ w + bias), ({M}x{K}) @ ({K}x{N}) in bfloat16 on tenstorrent: "
              f"max abs error {error:.4f} (max |ref| {scale:.2f})")
        ok &= error <= 0.03 * scale

    ok &= call_async_from_python(tt, context, config.device, x, w)
    return 0 if ok else 1


def call_async_from_python(tt: rt.VmModule, context: rt.SystemContext, device: rt.HalDevice, a, b) -> bool:
    """tt.matmul$async with a wait fence that a thread signals 0.2 s after the call."""
    semaphore = device.create_semaphore(0)
    wait, signal = rt.HalFence.create_at(semaphore, 1), rt.HalFence.create_at(semaphore, 2)
    arguments = rt.VmVariantList(4)
    for array in (a, b):
        view = device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
            device=device, buffer=array, element_type=rt.HalElementType.FLOAT_32)
        arguments.push_ref(view.ref)
    arguments.push_ref(wait.ref)
    arguments.push_ref(signal.ref)
    results = rt.VmVariantList(1)
    start = time.perf_counter()
    threading.Timer(0.2, semaphore.signal, (1,)).start()
    context.vm_context.invoke(tt.lookup_function("matmul$async"), arguments, results)
    elapsed = time.perf_counter() - start
    view = results.get_as_object(0, rt.HalBufferView)
    result = view.map().asarray(view.shape, np.dtype(np.float32))
    error = np.abs(result - a.astype(np.float64) @ b).max()
    print(f"tt.matmul$async from Python: returned after {elapsed:.2f} s (wait fence signalled at 0.2 s), "
          f"signal fence reached: {semaphore.query() == 2}, max abs error {error:.4f}")
    return elapsed >= 0.2 and semaphore.query() == 2


if __name__ == "__main__":
    status = main()
    gc.collect()  # frees the iree objects before interpreter exit (nanobind reports leaks otherwise)
    raise SystemExit(status)
