"""The hardware backend: hal/backend.py's BackendDevice on TT-Metal, through the
pybind11 binding tt_hal.native._tt_metal (native/src/tt_metal.cpp).

The binding is thin (one call per tt-metalium host API function); what the HAL's
protocol asks beyond TT-Metal lives here:
- a dispatch of W workgroups runs as ceil(W / cores) programs ("waves"), one
  workgroup per core, placed as the simulator places its rounds
  (tt_hal.target.workgroups); each kernel's runtime args are its template args filled
  from the bindings, then the workgroup id and count and the push constants
  (tt_hal.native.codegen.runtime_args);
- kernel sources come from tt_hal.native.codegen, generated once per tt_hal.target.program.Program;
- events: one completion thread per command queue synchronizes each TT-Metal event
  in order, finishes the host-side work queued before it (copies out of staging
  buffers), then completes the HAL event and runs its callback;
- a command that fails at enqueue time fails its queue until the next recorded
  event, which completes with that error (the protocol's rule).

Not supported yet (UNIMPLEMENTED): dispatches whose bindings are sharded buffers
(the generated kernels address interleaved pages), and indirect dispatch.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable

import numpy as np

from hal.backend import BackendDevice, LaunchProgram
from hal.log import get_logger
from hal.status import HalError, StatusCode
from tt_hal.native import codegen
from tt_hal.target import conversions
from tt_hal.target.arch import ArchSpec, get_arch
from tt_hal.target.placement import BufferType
from tt_hal.target.program import Program
from tt_hal.target.workgroups import (
    arg_template,
    binding_table,
    core_coord,
    fill_runtime_args,
    workgroup_id,
)

log = get_logger("native")

_ARCHS = {"wormhole_b0": "wormhole_b0", "blackhole": "blackhole_p150"}  # TT-Metal arch name -> preset name


def _binding():
    from tt_hal import native

    binding = native.tt_metal()
    if binding is None:
        raise HalError(StatusCode.UNAVAILABLE, native.unavailable_reason() or "tt_hal.native._tt_metal is missing")
    return binding


def query_devices() -> list[dict]:
    binding = _binding()
    return [{"device_id": i, "path": str(i), "name": f"Tenstorrent device {i} (hardware)", "mode": "hardware"}
            for i in range(binding.get_num_available_devices())]


def opened_arch(handle) -> ArchSpec:
    """The opened chip as TT-Metal reports it: its preset (alignments, queues) with the
    sizes the device reports. TT-Metal's allocator keeps the firmware's part of L1
    itself and the binding does not report where it ends, so the HAL sees all of L1."""
    name = _ARCHS.get(handle.arch_name, handle.arch_name)
    grid_x, grid_y = handle.grid_size
    return get_arch(name).with_options(grid_x=grid_x, grid_y=grid_y, l1_size=handle.l1_size_per_core,
                                       dram_bank_count=handle.num_dram_channels,
                                       dram_bank_size=handle.dram_size_per_channel, l1_unreserved_base=0,
                                       l1_small_size=0)


@dataclasses.dataclass
class HardwareBuffer:
    handle: object  # the binding's Buffer, or the host array of a SYSTEM_MEMORY buffer
    size: int
    page_size: int
    buffer_type: BufferType
    sharded: bool

    @property
    def address(self) -> int:
        return 0 if self.buffer_type is BufferType.SYSTEM_MEMORY else self.handle.address


class HardwareEvent:
    """Done once the completion thread has seen the TT-Metal event and finished the
    host work queued before it."""

    def __init__(self, on_complete: Callable[[HalError | None], None] | None):
        self.error: HalError | None = None
        self._done = threading.Event()
        self._on_complete = on_complete
        self.tt_event = None

    def query(self) -> bool:
        return self._done.is_set()

    def synchronize(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)

    def _complete(self, error: HalError | None) -> None:
        """The callback (the HAL signals the submission's semaphores) runs before host
        waiters of the event go, as in the simulator (sim/device.py, SimEvent)."""
        self.error = error
        if self._on_complete is not None:
            try:
                self._on_complete(error)
            except Exception:  # a callback bug must not stop the completion thread
                log.exception("event completion callback failed")
        self._done.set()


class _Queue:
    """One hardware command queue's host side: its error state and its completion thread."""

    def __init__(self, device: HardwareDevice, index: int):
        self.device, self.index = device, index
        self.error: HalError | None = None
        self._pending: collections.deque = collections.deque()
        self.in_flight: list = []  # host arrays non-blocking transfers read, held until the next event
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"tt-hal-hw-cq{index}", daemon=True)
        self._thread.start()

    def after(self, action: Callable[[], None] | None, event: HardwareEvent | None) -> None:
        """Runs `action` (host work) and completes `event` once everything enqueued so
        far on this queue has run on the device."""
        tt_event = self.device.handle.record_event(self.index)
        if event is not None:
            event.tt_event = tt_event
        held, self.in_flight = self.in_flight, []
        with self._ready:
            self._pending.append((tt_event, action, event, held))
            self._ready.notify()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._pending or self._closed)
                if not self._pending:
                    return
                tt_event, action, event, _held = self._pending.popleft()
            error = None
            try:
                self.device.handle.event_synchronize(tt_event)
                if action is not None:
                    action()
            except Exception as exc:  # noqa: BLE001 - reported through the event
                error = HalError(StatusCode.INTERNAL, f"command queue {self.index}: {exc}")
            if event is not None:
                event._complete(event.error or error)


class HardwareDevice(BackendDevice):
    """A Tenstorrent chip driven through TT-Metal (`hal/backend.py`'s BackendDevice)."""

    mode = "hardware"

    def __init__(self, device_ordinal: int = 0, arch: str | None = None, num_hw_cqs: int = 2, **options):
        binding = _binding()
        count = binding.get_num_available_devices()
        if not 0 <= device_ordinal < count:
            raise HalError(StatusCode.NOT_FOUND, f"device {device_ordinal} not found: TT-Metal sees {count} device(s)")
        if options:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"options {sorted(options)} apply to the simulated chip only")
        self.handle = binding.Device(device_ordinal, num_hw_cqs)
        self.arch = opened_arch(self.handle)
        if arch is not None and arch != self.arch.name:
            self.handle.close()
            raise HalError(StatusCode.INVALID_ARGUMENT, f"arch={arch!r} requested, but device {device_ordinal} is "
                                                        f"{self.arch.name}")
        self.num_hw_cqs = num_hw_cqs
        self._queues = [_Queue(self, i) for i in range(num_hw_cqs)]
        self._sources: dict[int, tuple[Program, dict]] = {}

    # Buffers.
    def create_buffer(self, size: int, page_size: int, buffer_type: BufferType, shard=None) -> HardwareBuffer:
        if buffer_type is BufferType.SYSTEM_MEMORY:
            return self.import_host_buffer(np.zeros(size, np.uint8))
        is_dram = buffer_type is BufferType.DRAM
        try:
            if shard is None:
                handle = self.handle.create_buffer(size, page_size, is_dram)
            else:
                cores = [(core.x, core.y) for core in shard.cores]
                handle = self.handle.create_sharded_buffer(size, page_size, is_dram, cores, shard.shard_shape,
                                                           shard.page_grid)
        except RuntimeError as error:  # TT-Metal's allocator throws when a bank is full
            raise HalError(StatusCode.RESOURCE_EXHAUSTED,
                           f"{buffer_type.name} buffer of {size} bytes: {error}") from None
        return HardwareBuffer(handle, size, page_size, buffer_type, shard is not None)

    def import_host_buffer(self, array: np.ndarray) -> HardwareBuffer:
        return HardwareBuffer(array, array.nbytes, max(array.nbytes, 1), BufferType.SYSTEM_MEMORY, False)

    def free_buffer(self, buffer: HardwareBuffer) -> None:
        if buffer.buffer_type is not BufferType.SYSTEM_MEMORY:
            buffer.handle.deallocate()

    def host_view(self, buffer: HardwareBuffer) -> np.ndarray | None:
        """Host memory is the host array itself; device memory is reached through the queues."""
        if buffer.buffer_type is BufferType.SYSTEM_MEMORY:
            return buffer.handle.reshape(-1).view(np.uint8)
        return None

    def read_buffer(self, buffer: HardwareBuffer, offset: int, length: int) -> np.ndarray:
        out = np.empty(length, np.uint8)
        self.enqueue_read_buffer(0, buffer, offset, out)
        self.finish(0)
        return out

    def write_buffer(self, buffer: HardwareBuffer, offset: int, data: np.ndarray) -> None:
        self.enqueue_write_buffer(0, buffer, offset, data)
        self.finish(0)

    # Host conversions: the fastest implementation the machine has.
    encode_tensor = staticmethod(conversions.encode_tensor)
    decode_tensor = staticmethod(conversions.decode_tensor)

    # Queue commands.
    def _run(self, cq: int, what: str, call: Callable[[], None]) -> None:
        """Issues one command; an enqueue-time failure fails the queue until the next event."""
        queue = self._queue(cq)
        if queue.error is not None:
            return
        try:
            call()
        except HalError as error:
            queue.error = error
        except RuntimeError as error:
            queue.error = HalError(StatusCode.INTERNAL, f"{what} on command queue {cq}: {error}")

    def _queue(self, cq: int) -> _Queue:
        if not 0 <= cq < self.num_hw_cqs:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"command queue {cq}; the device has {self.num_hw_cqs}")
        return self._queues[cq]

    def enqueue_write_buffer(self, cq: int, buffer: HardwareBuffer, offset: int, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data, np.uint8)
        if buffer.buffer_type is BufferType.SYSTEM_MEMORY:
            self._run(cq, "host write", lambda: self._queue(cq).after(
                lambda: buffer.handle.reshape(-1).view(np.uint8).__setitem__(slice(offset, offset + data.size), data),
                None))
            return
        self._queue(cq).in_flight.append(data)  # the non-blocking write reads it until the next event
        self._run(cq, "EnqueueWriteBuffer", lambda: self.handle.write_buffer(cq, buffer.handle, data, offset, False))

    def enqueue_read_buffer(self, cq: int, buffer: HardwareBuffer, offset: int, out: np.ndarray) -> None:
        if buffer.buffer_type is BufferType.SYSTEM_MEMORY:
            source = buffer.handle.reshape(-1).view(np.uint8)
            self._run(cq, "host read", lambda: self._queue(cq).after(
                lambda: out.__setitem__(slice(None), source[offset:offset + out.size]), None))
            return
        staging = np.empty(out.size, np.uint8)
        self._run(cq, "EnqueueReadBuffer", lambda: (self.handle.read_buffer(cq, buffer.handle, staging, offset, False),
                                                    self._queue(cq).after(lambda: out.__setitem__(slice(None), staging),
                                                                          None)))

    def enqueue_copy_buffer(self, cq, source, source_offset, target, target_offset, length) -> None:
        staging = np.empty(length, np.uint8)  # device -> host -> device: TT-Metal has no buffer-to-buffer copy
        self.enqueue_read_buffer(cq, source, source_offset, staging)
        self.finish(cq)
        self.enqueue_write_buffer(cq, target, target_offset, staging)

    def enqueue_fill_buffer(self, cq: int, buffer, offset: int, length: int, pattern: bytes) -> None:
        data = np.frombuffer(bytes(pattern) * (length // len(pattern)), np.uint8)
        self.enqueue_write_buffer(cq, buffer, offset, data)

    def enqueue_program(self, cq: int, launch: LaunchProgram) -> None:
        program, name = launch.program, launch.name
        if launch.indirect is not None:
            raise HalError(StatusCode.UNIMPLEMENTED, f"{name}: indirect dispatch on hardware")
        bindings = [(b.buffer, b.offset, b.length) for b in launch.bindings]
        for k, (buffer, _, _) in enumerate(bindings):
            if buffer.sharded or buffer.buffer_type is BufferType.SYSTEM_MEMORY:
                raise HalError(StatusCode.UNIMPLEMENTED, f"{name}: binding {k} is a sharded or host buffer; kernels on "
                                                         f"hardware address interleaved DRAM or L1 buffers")
        sources = self._kernel_sources(program)
        for wave in self.waves(program, launch.workgroup_count, launch.constants, bindings):
            self._run(cq, f"EnqueueProgram {name}", lambda wave=wave: self._enqueue_wave(cq, program, sources, wave))

    def waves(self, program: Program, workgroup_count, constants, bindings):
        """[(core (x, y), [runtime args of each kernel])] per wave: a wave is a round of
        tt_hal.target.workgroups (workgroup first + k, x fastest, on the k-th core of
        the worker grid, row-major)."""
        count = np.array([int(v) for v in workgroup_count], np.int64)
        total, cores = int(count.prod()), self.arch.worker_cores
        constants = np.asarray(constants, np.int64)
        templates = [arg_template(template) for template in program.runtime_args]
        table = binding_table([(buffer.address, buffer.buffer_type is BufferType.DRAM, buffer.page_size, offset, length)
                               for buffer, offset, length in bindings])
        for first in range(0, total, cores):
            wave = []
            for k in range(min(cores, total - first)):
                ids = np.array(workgroup_id(first, k, count), np.int64)
                args = []
                for template in templates:
                    values = np.empty(len(template), np.int64)
                    fill_runtime_args(template, constants, ids, count, table, values)
                    args.append(codegen.runtime_args(values, ids, count, constants))
                wave.append((core_coord(k, self.arch.grid_x), args))
            yield wave

    def _kernel_sources(self, program: Program) -> dict:
        cached = self._sources.get(id(program))
        if cached is None or cached[0] is not program:
            cached = self._sources[id(program)] = (program, codegen.program_sources(program))
        return cached[1]

    def _enqueue_wave(self, cq: int, program: Program, sources: dict, wave) -> None:
        cores = [core for core, _ in wave]
        tt_program = self.handle.create_program()
        for cb in program.circular_buffers:
            tt_program.add_circular_buffer(cores, cb.index, cb.data_format.tt_metal_name, cb.page_size,
                                           cb.num_pages)
        handles = []
        for kernel in program.kernels:
            config = kernel.config
            handles.append(tt_program.add_kernel(sources[kernel.processor], int(kernel.processor), cores,
                                                 list(kernel.compile_args), config.math_fidelity.name,
                                                 config.fp32_dest_acc_en, config.math_approx_mode,
                                                 config.dst_full_sync_en))
        for core, args in wave:
            for handle, kernel_args in zip(handles, args):
                tt_program.set_runtime_args(handle, core, kernel_args)
        self.handle.enqueue_program(cq, tt_program, False)

    def enqueue_record_event(self, cq: int, on_complete=None) -> HardwareEvent:
        queue = self._queue(cq)
        event = HardwareEvent(on_complete)
        event.error, queue.error = queue.error, None
        queue.after(None, event)
        return event

    def enqueue_wait_for_event(self, cq: int, event: HardwareEvent) -> None:
        """A device-side wait: queue `cq` stalls until `event`'s queue reaches it."""
        queue = self._queue(cq)
        if event.error is not None and queue.error is None:
            queue.error = event.error
        tt_event = event.tt_event
        if tt_event is not None:
            self._run(cq, "EnqueueWaitForEvent", lambda: self.handle.wait_for_event(cq, tt_event))

    def finish(self, cq: int) -> None:
        done = HardwareEvent(None)
        self._queue(cq).after(None, done)
        done.synchronize()

    def close(self) -> None:
        for queue in self._queues:
            queue.close()
        self.handle.close()
