"""tt-hal's HAL: IREE's HAL for Tenstorrent chips.

Mirrors `iree.runtime`'s HAL objects, so `import hal as rt` runs scripts written
for iree.runtime on the device "tenstorrent" (a simulated chip unless TT-Metal
hardware and the native layer are present). See docs/hal-api.md.

Names load on first use (PEP 562), so `import hal.status` loads only the status
codes. The tensor descriptions a device tensor takes (DataFormat, Layout,
MemoryConfig, ...) are the target's (`tt_hal.target`), re-exported here.
"""

from __future__ import annotations

import importlib

import ml_dtypes  # noqa: F401 - as `import iree.runtime` does: numpy then knows bfloat16, float8_* by name

# name -> module that defines it
_EXPORTS = {
    **dict.fromkeys(("HalAllocator",), "hal.allocator"),
    **dict.fromkeys(("HalBuffer", "HalBufferView", "MappedMemory"), "hal.buffer"),
    **dict.fromkeys(("BindingRef", "HalCommandBuffer", "HalEvent"), "hal.command_buffer"),
    **dict.fromkeys(("HalDevice",), "hal.device"),
    **dict.fromkeys(("DeviceArray", "asdevicearray"), "hal.device_array"),
    **dict.fromkeys(("HalExecutable", "HalExecutableCache"), "hal.executable"),
    **dict.fromkeys(("HalDriver", "clear_hal_driver_cache", "create_device", "create_hal_driver", "get_device",
                     "get_driver", "get_first_device", "query_available_drivers", "register_driver"), "hal.driver"),
    **dict.fromkeys(("HalDeviceLoopBridge",), "hal.loop_bridge"),
    **dict.fromkeys(("HalExternalTimepoint", "HalFence", "HalSemaphore"), "hal.semaphore"),
    **dict.fromkeys(("HalError", "InvalidArgumentError", "NotFoundError", "OutOfRangeError", "StatusCode",
                     "UnimplementedError"), "hal.status"),
    **dict.fromkeys(("BufferCompatibility", "BufferUsage", "CommandBufferMode", "CommandCategory",
                     "ExternalTimepointFlags", "ExternalTimepointType", "HalElementType", "MemoryAccess", "MemoryType",
                     "SemaphoreCompatibility", "Shape", "WaitMode"), "hal.types"),
    **dict.fromkeys(("DataFormat", "Layout", "TensorSpec"), "tt_hal.target.layout"),
    **dict.fromkeys(("DRAM_MEMORY_CONFIG", "L1_MEMORY_CONFIG", "BufferType", "CoreCoord", "CoreRange", "CoreRangeSet",
                     "MemoryConfig", "ShardOrientation", "ShardSpec", "TensorMemoryLayout"), "tt_hal.target.placement"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hal' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
