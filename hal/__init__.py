"""tt-hal: an IREE-style HAL for Tenstorrent chips.

Mirrors `iree.runtime`'s HAL objects, so `import hal as rt` runs scripts written
for iree.runtime on the device "tenstorrent" (a simulated chip unless TT-Metal
hardware and the native layer are present). See docs/hal-api.md.
"""

from hal import log as _log
from hal.allocator import HalAllocator
from hal.buffer import HalBuffer, HalBufferView, MappedMemory
from hal.command_buffer import BindingRef, HalCommandBuffer, HalEvent
from hal import ops
from hal.device import HalDevice
from hal.executable import HalExecutable, HalExecutableCache
from hal.driver import (
    HalDriver, create_device, get_device, get_driver, query_available_drivers, register_driver,
)
from hal.layout import DataFormat, Layout, TensorSpec
from hal.module import HalModule, HalModuleFunction, load_module
from hal.placement import (
    DRAM_MEMORY_CONFIG, L1_MEMORY_CONFIG, BufferType, CoreCoord, CoreRange, CoreRangeSet, MemoryConfig,
    ShardOrientation, ShardSpec, TensorMemoryLayout,
)
from hal.semaphore import HalFence, HalSemaphore
from hal.status import HalError, InvalidArgumentError, OutOfRangeError, StatusCode
from hal.types import (
    BufferCompatibility, BufferUsage, CommandBufferMode, CommandCategory, HalElementType, MemoryAccess,
    MemoryType, WaitMode,
)

_log.configure()  # TT_HAL_LOG=debug|info|... logs the library to stderr

__all__ = [
    "DRAM_MEMORY_CONFIG", "L1_MEMORY_CONFIG", "BufferType", "CoreCoord", "CoreRange", "CoreRangeSet", "DataFormat",
    "Layout", "MemoryConfig", "ShardOrientation", "ShardSpec", "TensorMemoryLayout", "TensorSpec",
    "BindingRef", "BufferCompatibility", "BufferUsage", "CommandBufferMode", "CommandCategory", "HalAllocator",
    "HalBuffer", "HalBufferView", "HalExecutable", "HalExecutableCache", "HalCommandBuffer", "HalDevice", "HalDriver", "HalElementType", "HalError",
    "HalEvent", "HalFence", "HalModule", "HalModuleFunction", "HalSemaphore", "InvalidArgumentError", "MappedMemory", "MemoryAccess", "MemoryType",
    "OutOfRangeError", "StatusCode", "WaitMode", "create_device", "get_device", "get_driver",
    "load_module", "ops", "query_available_drivers", "register_driver",
]
