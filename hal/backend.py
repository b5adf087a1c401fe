"""The one seam between the HAL and a chip: a TT-Metal-shaped device protocol.

`sim/` (mock mode) and `native/` (hardware mode) implement `BackendDevice`. The
HAL never imports either directly: `open_backend(mode, ...)` loads one lazily.

Shape of the protocol (tt-metalium names in brackets):
- a device opens with `num_hw_cqs` command queues: 0 = compute, 1 = transfer [CreateDevice]
- buffers are interleaved over DRAM or L1 banks, sharded over cores, or host memory
  [CreateBuffer, InterleavedBufferConfig / ShardedBufferConfig, BufferType]
- host tensors become device bytes by the backend's own (fastest) conversions:
  tilize and data formats [tilize_utils, blockfloat_common]
- `enqueue_*` commands run in order per queue, asynchronously to the host
  [EnqueueWriteBuffer, EnqueueReadBuffer, EnqueueProgram]
- queues order each other only through events [EnqueueRecordEvent, EnqueueWaitForEvent]
- a failed command fails the queue until the next recorded event, which completes
  with that error; a queue waiting on a failed event takes on its error.
"""

from __future__ import annotations

import importlib
import os
from typing import Callable, Protocol

import numpy as np

from hal.status import HalError, StatusCode

COMPUTE_QUEUE = 0
TRANSFER_QUEUE = 1


class BackendEvent(Protocol):
    """Recorded on one queue; done (with `error` None or a HalError) once every
    command before it on that queue has run."""

    error: HalError | None

    def query(self) -> bool: ...

    def synchronize(self, timeout_s: float | None = None) -> bool: ...


class BackendBuffer(Protocol):
    size: int
    page_size: int


class BackendDevice(Protocol):
    arch: object  # tt_hal.target.arch.ArchSpec-compatible: name, grid_x, grid_y, l1_size, ...
    num_hw_cqs: int
    mode: str  # "mock" or "hardware"

    # Buffers [CreateBuffer / DeallocateBuffer]; buffer_type: "dram" | "l1" | "system_memory";
    # `shard` (tt_hal.target.placement.ShardedPages) makes it sharded, else interleaved.
    def create_buffer(self, size: int, page_size: int, buffer_type: str, shard=None) -> BackendBuffer: ...
    def import_host_buffer(self, array: np.ndarray) -> BackendBuffer: ...
    def free_buffer(self, buffer: BackendBuffer) -> None: ...

    # Synchronous host access, bypassing the queues [detail::ReadFromBuffer / WriteToBuffer].
    def read_buffer(self, buffer: BackendBuffer, offset: int, length: int) -> np.ndarray: ...
    def write_buffer(self, buffer: BackendBuffer, offset: int, data: np.ndarray) -> None: ...

    # Host-side tensor conversions (spec: tt_hal.target.layout.TensorSpec). `values` are float32 for
    # float formats, else the format's integer dtype; device bytes are uint8, spec.size long.
    def encode_tensor(self, values: np.ndarray, spec, pad_value=0) -> np.ndarray: ...
    def decode_tensor(self, data: np.ndarray, spec, as_float32: bool = False) -> np.ndarray: ...

    # Queue commands; run asynchronously in order on queue `cq`.
    def enqueue_write_buffer(self, cq: int, buffer: BackendBuffer, offset: int, data: np.ndarray) -> None: ...
    def enqueue_read_buffer(self, cq: int, buffer: BackendBuffer, offset: int, out: np.ndarray) -> None: ...
    def enqueue_copy_buffer(self, cq: int, source: BackendBuffer, source_offset: int,
                            target: BackendBuffer, target_offset: int, length: int) -> None: ...
    def enqueue_fill_buffer(self, cq: int, buffer: BackendBuffer, offset: int, length: int, pattern: bytes) -> None: ...
    def enqueue_program(self, cq: int, program, name: str, workgroup_count, constants: np.ndarray, bindings,
                        indirect=None) -> None:
        """Runs a tt_hal.target.program.Program over a workgroup grid [EnqueueProgram]; bindings are
        (buffer, offset, length); `indirect` = (buffer, offset) of three uint32 counts."""
        ...
    def enqueue_record_event(self, cq: int,
                             on_complete: Callable[[HalError | None], None] | None = None) -> BackendEvent:
        """`on_complete(error)` runs once on a backend thread when the event is done; it
        must not block nor enqueue onto this device."""
        ...
    def enqueue_wait_for_event(self, cq: int, event: BackendEvent) -> None: ...
    def finish(self, cq: int) -> None: ...
    def close(self) -> None: ...


# Backends by mode: the package implementing each, found by name (as IREE finds driver
# modules), so the HAL never imports a backend. Each package defines
# open_device(device_ordinal, arch, **options), unavailable_reason() and query_devices().
BACKENDS = {"mock": "tt_hal.sim", "hardware": "tt_hal.native"}
MODES = (*BACKENDS, "auto")


def backend_package(mode: str):
    """The package of the backend for a resolved mode ('mock' or 'hardware')."""
    return importlib.import_module(BACKENDS[mode])


def hardware_unavailable_reason() -> str | None:
    """None when the native TT-Metal layer can open a device, else what is missing."""
    return backend_package("hardware").unavailable_reason()


def resolve_mode(mode: str | None = None) -> str:
    """'mock' or 'hardware' from an explicit mode or TT_HAL_MODE (default auto)."""
    mode = (mode or os.environ.get("TT_HAL_MODE") or "auto").lower()
    if mode not in MODES:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"TT_HAL_MODE={mode!r}; expected one of {', '.join(MODES)}")
    if mode == "mock":
        return mode
    reason = hardware_unavailable_reason()
    if mode == "auto":
        return "mock" if reason else "hardware"
    if reason:
        raise HalError(StatusCode.UNAVAILABLE,
                       f"TT_HAL_MODE=hardware, but the TT-Metal hardware layer cannot run: {reason}. "
                       f"See docs/hardware.md to build against TT-Metal; TT_HAL_MODE=mock uses the simulator")
    return mode


def open_backend(mode: str, device_ordinal: int = 0, arch: str | None = None, **options) -> BackendDevice:
    """Opens the backend device for a resolved mode."""
    return backend_package(mode).open_device(device_ordinal, arch=arch, **options)
