"""The IREE VM module `hal` over tt-hal's HAL: a `.vmfb` compiled by tt_hal.compiler
runs in iree.runtime's own VM, and every `hal.*` call of its host code is served by
`hal`'s objects on a tenstorrent device, asynchronously on its queues.

The program's imports are the fixed-arity forms tt_hal/compiler/vm_rewrite.py
declares (variadic segments as `!vm.list<?>`, i32 widened to i64, HAL objects as
`!vm.list<?>` handles); `EXPORTS` gives each one's calling convention. The semantics
are those of IREE's native module (runtime/src/iree/modules/hal/module.c):

- device: `devices.count/get`, `device.query.i64`, the queue operations (alloca,
  dealloca, fill, update, copy, read, write, barrier, execute, execute.indirect,
  flush) on `hal.HalDevice`; a null wait fence waits on nothing, a null signal fence
  signals nothing;
- fences are `hal.HalFence`s: `fence.create` makes a fence at value 1 of a new
  semaphore, `fence.await` blocks (PyModuleInterface cannot yield) until its
  timeout and returns 0 or DEADLINE_EXCEEDED, and raises a failed fence's error;
- allocator, buffers, buffer views, command buffers (dispatch, copy, fill, update,
  barriers, binding tables) and executables map to the classes of the same names.

Not served: channels and collectives (one device, no peers), and
`allocator.select` across several devices (there is one). A call of those, or of
any import the module does not export, fails when the program is loaded.

Handles: a HAL object reaches the VM as a one-element list holding an id into the
module's table. The VM drops such lists without telling Python, so the table is
swept: an entry whose list only the table still holds (its reference count, read
from the list's native object) is released. Long-lived objects (the device, its
allocator) keep one handle each.
"""

from __future__ import annotations

import collections
import ctypes
import importlib
import threading

import iree.runtime as rt
import numpy as np

from hal.buffer import HalBuffer, HalBufferView
from hal.command_buffer import BindingRef, HalCommandBuffer
from hal.device import HalDevice
from hal.executable import HalExecutable
from hal.log import get_logger
from hal.semaphore import HalFence
from hal.status import HalError, StatusCode
from hal.types import CommandBufferMode, CommandCategory, HalElementType, MemoryType, NumericalType
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

log = get_logger(__name__)

MODULE_NAME = "hal"
DENSE_ROW_MAJOR = 1  # iree_hal_encoding_type_t of dense row-major bytes
INFINITE_TIMEOUT_MS = (1 << 32) - 1  # fence.await's "wait forever" (UINT32_MAX)
# The compiler's lowering of a dynamic export for a dispatch's push constants, looked up
# by name as hal looks up its backends: the runtime sits below the compiler.
SPECIALIZER = "tt_hal.compiler.specialize"
MAX_SPECIALIZATIONS = 16  # programs of recent (export, push constants) kept prepared per module

# Each export's arguments and results in VM calling-convention letters: I = i64
# (every integer, widened), r = ref (a handle list, a !vm.buffer, or a variadic segment
# packed in a list), v = none. Derived from exports.inl with i -> I and C..D -> r.
EXPORTS = {
    "allocator.allocate": ("rIIII", "r"),
    "allocator.import": ("rIIIIrII", "r"),
    "buffer.allocation.discard": ("r", "I"),
    "buffer.allocation.is_terminal": ("r", "I"),
    "buffer.allocation.preserve": ("r", "v"),
    "buffer.assert": ("rrrIII", "v"),
    "buffer.length": ("r", "I"),
    "buffer.load": ("rII", "I"),
    "buffer.store": ("IrII", "v"),
    "buffer.subspan": ("rII", "r"),
    "buffer_view.assert": ("rrIIr", "v"),
    "buffer_view.buffer": ("r", "r"),
    "buffer_view.create": ("rIIIIr", "r"),
    "buffer_view.dim": ("rI", "I"),
    "buffer_view.element_type": ("r", "I"),
    "buffer_view.encoding_type": ("r", "I"),
    "buffer_view.rank": ("r", "I"),
    "buffer_view.trace": ("rr", "v"),
    "command_buffer.advise_buffer": ("rrIIII", "v"),
    "command_buffer.begin_debug_group": ("rr", "v"),
    "command_buffer.copy_buffer": ("rIIrIrIII", "v"),
    "command_buffer.create": ("rIIII", "r"),
    "command_buffer.dispatch": ("rrIIIIIrr", "v"),
    "command_buffer.dispatch.indirect": ("rrIIrIIrr", "v"),
    "command_buffer.end_debug_group": ("r", "v"),
    "command_buffer.execution_barrier": ("rIII", "v"),
    "command_buffer.fill_buffer": ("rrIIIIII", "v"),
    "command_buffer.finalize": ("r", "v"),
    "command_buffer.update_buffer": ("rrIrIIII", "v"),
    "device.allocator": ("r", "r"),
    "device.query.i64": ("rrr", "II"),
    "device.queue.alloca": ("rIrrIIIII", "r"),
    "device.queue.barrier": ("rIrrI", "v"),
    "device.queue.copy": ("rIrrrIrIII", "v"),
    "device.queue.dealloca": ("rIrrrI", "v"),
    "device.queue.execute": ("rIrrrI", "v"),
    "device.queue.execute.indirect": ("rIrrrIr", "v"),
    "device.queue.fill": ("rIrrrIIIII", "v"),
    "device.queue.flush": ("rI", "v"),
    "device.queue.read": ("rIrrrIrIII", "v"),
    "device.queue.update": ("rIrrrIrIII", "v"),
    "device.queue.write": ("rIrrrIrIII", "v"),
    "devices.count": ("", "I"),
    "devices.get": ("I", "r"),
    "ex.file.from_memory": ("rIIrIII", "r"),
    "executable.create": ("rIrrr", "r"),
    "executable.lookup.function": ("rr", "I"),
    "fence.await": ("IIr", "I"),
    "fence.create": ("rI", "r"),
    "fence.fail": ("rI", "v"),
    "fence.join": ("Ir", "r"),
    "fence.query": ("r", "I"),
    "fence.signal": ("r", "v"),
}


def cconv(name: str) -> str:
    """The VM calling convention string of export `name` ("0rII_r")."""
    arguments, results = EXPORTS[name]
    return f"0{arguments or 'v'}_{results}"


class MemoryFile:
    """`ex.file.from_memory`: a byte range of a !vm.buffer the program reads from or writes to."""

    def __init__(self, data: memoryview):
        self.data = data


class Handles:
    """HAL objects as the VM holds them: one-element lists of an id into this table."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[object, rt.VmVariantList]] = {}
        self._pinned: dict[int, rt.VmVariantList] = {}  # id(object) -> its one handle, for long-lived objects
        self.next_id = 1  # the key the next handle gets
        self._sweep_at = 256
        self.sweeping = _reference_counts_readable()

    def __len__(self) -> int:
        return len(self._entries)

    def wrap(self, obj, pinned: bool = False) -> rt.VmRef:
        with self._lock:
            if pinned and id(obj) in self._pinned:
                return self._pinned[id(obj)].ref
            if self.sweeping and len(self._entries) >= self._sweep_at:
                self._sweep()  # before the new handle joins: nothing holds it yet but the table
            handle = rt.VmVariantList(1)
            key = self.next_id
            self.next_id += 1
            handle.push_int(key)
            self._entries[key] = (obj, handle)
            if pinned:
                self._pinned[id(obj)] = handle
            return handle.ref

    def get(self, ref, kind, what: str, optional: bool = False):
        """The object a handle argument names; None for a null ref when `optional`."""
        handle = ref.deref(rt.VmVariantList, True) if ref is not None else None
        if handle is None:
            if optional:
                return None
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: a null {kind.__name__} handle")
        entry = self._entries.get(handle.get_variant(0))
        if entry is None or not isinstance(entry[0], kind):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: expected a {kind.__name__} handle, got "
                                                        f"{type(entry[0]).__name__ if entry else 'an unknown one'}")
        return entry[0]

    def sweep(self, since: int = 0) -> int:
        """Drops the entries the VM no longer refers to now (it also happens as the table
        grows), of those made from key `since` on (a call's: `next_id` before it); the
        number left."""
        if self.sweeping:
            with self._lock:
                self._sweep(since)
        return len(self._entries)

    def _sweep(self, since: int = 0) -> None:
        """Drops the entries from key `since` on that the VM no longer refers to (under the lock)."""
        pinned = {id(handle) for handle in self._pinned.values()}
        gone = []
        for key, (_, handle) in reversed(self._entries.items()):  # keys increase: the newest first
            if key < since:
                break
            if id(handle) not in pinned and _reference_count(handle) == 1:
                gone.append(key)
        for key in gone:
            del self._entries[key]
        self._sweep_at = max(256, 2 * len(self._entries))


def _reference_count(handle: rt.VmVariantList) -> int:
    """The native reference count of a VmVariantList: its iree_vm_list_t begins with
    the ref object's counter; nanobind stores the C++ wrapper (whose one member is the
    list pointer) at the offset its instance header records after the PyObject head."""
    offset = ctypes.c_int32.from_address(id(handle) + 16).value
    native = ctypes.c_void_p.from_address(id(handle) + offset).value
    return ctypes.c_int32.from_address(native).value


def _reference_counts_readable() -> bool:
    """Whether _reference_count reads this build's layout right: 1, then 2 while a
    VmRef holds the list, then 1 again. If not, handles are never swept (a leak,
    said once) rather than read wrongly."""
    try:
        rt.VmInstance()  # list refs need the VM's types registered
        handle = rt.VmVariantList(1)
        alone = _reference_count(handle)
        ref = handle.ref
        held = _reference_count(handle)
        del ref
        ok = (alone, held, _reference_count(handle)) == (1, 2, 1)
    except (OSError, ValueError):
        ok = False
    if not ok:
        log.warning("cannot read VM list reference counts in this iree.runtime build: hal handles are never released")
    return ok


def _bytes(ref, what: str) -> memoryview:
    buffer = ref.deref(rt.VmBuffer, True) if ref is not None else None
    if buffer is None:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: expected a !vm.buffer")
    return memoryview(buffer)


def _text(ref, what: str) -> str:
    return bytes(_bytes(ref, what)).decode()


def _items(ref) -> list:
    """The values of a variadic segment packed in a !vm.list<?> (an empty list for null)."""
    packed = ref.deref(rt.VmVariantList, True) if ref is not None else None
    if packed is None:
        return []
    return [packed.get_variant(k) for k in range(packed.size)]  # ints, and VmRefs (None for null)


def _timepoints(fence: HalFence | None) -> list:
    return [] if fence is None else fence.timepoints()


class HalVmModule:
    """The module's state, shared by the contexts it is registered in: a device and
    the handle table. One method per export (dots become underscores)."""

    def __init__(self, device: HalDevice):
        self.device = device
        self.handles = Handles()
        self._specializations: collections.OrderedDict = collections.OrderedDict()

    # Helpers.
    def _device(self, ref) -> HalDevice:
        return self.handles.get(ref, HalDevice, "device")

    def _buffer(self, ref, what: str, optional: bool = False) -> HalBuffer | None:
        return self.handles.get(ref, HalBuffer, what, optional)

    def _fence(self, ref, what: str) -> HalFence | None:
        return self.handles.get(ref, HalFence, what, optional=True)

    def _queue(self, wait, signal, what: str):
        return _timepoints(self._fence(wait, f"{what} wait fence")), \
            _timepoints(self._fence(signal, f"{what} signal fence"))

    # Devices.
    def devices_count(self) -> int:
        return 1

    def devices_get(self, index: int):
        if index != 0:
            raise HalError(StatusCode.OUT_OF_RANGE, f"device {index}: the module has one device")
        return self.handles.wrap(self.device, pinned=True)

    def device_allocator(self, device):
        return self.handles.wrap(self._device(device).allocator, pinned=True)

    def device_query_i64(self, device, category, key):
        try:
            return 1, self._device(device).query_i64(_text(category, "query category"), _text(key, "query key"))
        except HalError as error:
            if error.code != StatusCode.NOT_FOUND:
                raise
            return 0, 0

    def device_queue_alloca(self, device, affinity, wait, signal, pool, memory_types, usage, size, flags):
        if pool:
            raise HalError(StatusCode.UNIMPLEMENTED, "device.queue.alloca: allocation pools are not supported")
        waits, signals = self._queue(wait, signal, "queue.alloca")
        return self.handles.wrap(self._device(device).queue_alloca(size, waits, signals, memory_types, usage))

    def device_queue_dealloca(self, device, affinity, wait, signal, buffer, flags):
        waits, signals = self._queue(wait, signal, "queue.dealloca")
        self._device(device).queue_dealloca(self._buffer(buffer, "queue.dealloca buffer"), waits, signals)

    def device_queue_barrier(self, device, affinity, wait, signal, flags):
        self._device(device).queue_barrier(*self._queue(wait, signal, "queue.barrier"))

    def device_queue_fill(self, device, affinity, wait, signal, target, offset, length, pattern, pattern_length,
                          flags):
        waits, signals = self._queue(wait, signal, "queue.fill")
        self._device(device).queue_fill(self._buffer(target, "queue.fill target"),
                                        _pattern(pattern, pattern_length, "queue.fill"), waits, signals, offset, length)

    def device_queue_update(self, device, affinity, wait, signal, source, source_offset, target, target_offset,
                            length, flags):
        waits, signals = self._queue(wait, signal, "queue.update")
        data = _bytes(source, "queue.update source")[source_offset:source_offset + length]
        self._device(device).queue_update(data, self._buffer(target, "queue.update target"), waits, signals,
                                          target_offset, length)

    def device_queue_copy(self, device, affinity, wait, signal, source, source_offset, target, target_offset,
                          length, flags):
        waits, signals = self._queue(wait, signal, "queue.copy")
        self._device(device).queue_copy(self._buffer(source, "queue.copy source"),
                                        self._buffer(target, "queue.copy target"), waits, signals,
                                        source_offset, target_offset, length)

    def device_queue_read(self, device, affinity, wait, signal, source, source_offset, target, target_offset,
                          length, flags):
        file = self.handles.get(source, MemoryFile, "queue.read source file")
        data = file.data[source_offset:source_offset + length]
        waits, signals = self._queue(wait, signal, "queue.read")
        self._device(device).queue_update(data, self._buffer(target, "queue.read target"), waits, signals,
                                          target_offset, length)

    def device_queue_write(self, device, affinity, wait, signal, source, source_offset, target, target_offset,
                           length, flags):
        raise HalError(StatusCode.UNIMPLEMENTED, "device.queue.write: writing files from the device is not "
                                                 "supported")

    def device_queue_execute(self, device, affinity, wait, signal, command_buffer, flags):
        self._execute(device, wait, signal, command_buffer, [])

    def device_queue_execute_indirect(self, device, affinity, wait, signal, command_buffer, flags, bindings):
        values = _items(bindings)
        table = [(self._buffer(values[k], f"queue.execute binding {k // 3}"), values[k + 1], values[k + 2])
                 for k in range(0, len(values), 3)]
        self._execute(device, wait, signal, command_buffer, table)

    def _execute(self, device, wait, signal, command_buffer, table) -> None:
        waits, signals = self._queue(wait, signal, "queue.execute")
        command_buffer = self.handles.get(command_buffer, HalCommandBuffer, "queue.execute command buffer")
        self._device(device).queue_execute(command_buffer, waits, signals, binding_table=table)

    def device_queue_flush(self, device, affinity):
        self._device(device).queue_flush()

    # Allocator and buffers.
    def allocator_allocate(self, allocator, affinity, memory_types, usage, size):
        return self.handles.wrap(self.device.allocator.allocate_buffer(memory_types, usage, size))

    def allocator_import(self, allocator, try_import, affinity, memory_types, usage, source, offset, length):
        data = np.frombuffer(_bytes(source, "allocator.import source"), np.uint8)[offset:offset + length]
        buffer = self.device.allocator.allocate_buffer_copy(memory_types, usage, self.device, data)
        return self.handles.wrap(buffer)

    def buffer_assert(self, buffer, message, allocator, minimum_length, memory_types, usage):
        what = _text(message, "message")
        target = self._buffer(buffer, what)
        if target.byte_length() < minimum_length:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: buffer of {target.byte_length()} bytes; at least "
                                                        f"{minimum_length} required")
        missing = memory_types & ~int(target.memory_type())
        if missing:
            raise HalError(StatusCode.PERMISSION_DENIED, f"{what}: buffer memory type lacks {MemoryType(missing)!s}")
        target.check_usage(usage, what)

    def buffer_allocation_preserve(self, buffer):
        self._buffer(buffer, "buffer.allocation.preserve")

    def buffer_allocation_discard(self, buffer):
        self._buffer(buffer, "buffer.allocation.discard")
        return 0  # other handles may still refer to it: never the last owner here

    def buffer_allocation_is_terminal(self, buffer):
        self._buffer(buffer, "buffer.allocation.is_terminal")
        return 0

    def buffer_length(self, buffer):
        return self._buffer(buffer, "buffer.length").byte_length()

    def buffer_subspan(self, buffer, offset, length):
        return self.handles.wrap(self._buffer(buffer, "buffer.subspan").subspan(offset, length))

    def buffer_load(self, buffer, offset, length):
        if not 1 <= length <= 4:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"buffer.load of {length} bytes; at most 4")
        data = self._buffer(buffer, "buffer.load").map_read(offset, length)
        return int.from_bytes(data, "little")

    def buffer_store(self, value, buffer, offset, length):
        if not 1 <= length <= 4:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"buffer.store of {length} bytes; at most 4")
        self._buffer(buffer, "buffer.store").map_write(offset, (value & 0xFFFFFFFF).to_bytes(4, "little")[:length])

    # Buffer views.
    def _view(self, ref, what: str) -> HalBufferView:
        return self.handles.get(ref, HalBufferView, what)

    def buffer_view_create(self, buffer, offset, length, element_type, encoding, shape):
        source = self._buffer(buffer, "buffer_view.create")
        if offset or length != source.byte_length():
            source = source.subspan(offset, length)
        _check_encoding(encoding, "buffer_view.create")
        return self.handles.wrap(HalBufferView(source, [int(d) for d in _items(shape)], element_type))

    def buffer_view_assert(self, view, message, element_type, encoding, shape):
        what = _text(message, "message")
        target = self._view(view, what)
        dims = [int(d) for d in _items(shape)]
        if not _compatible(target.element_type, element_type):
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: element type mismatch; expected "
                                                        f"{_type_name(element_type)} but have "
                                                        f"{_type_name(target.element_type)}")
        _check_encoding(encoding, what)
        if list(target.shape) != dims:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: shape {list(target.shape)}; the function takes "
                                                        f"{dims}")

    def buffer_view_buffer(self, view):
        return self.handles.wrap(self._view(view, "buffer_view.buffer").get_buffer())

    def buffer_view_dim(self, view, index):
        shape = self._view(view, "buffer_view.dim").shape
        if not 0 <= index < len(shape):
            raise HalError(StatusCode.OUT_OF_RANGE, f"buffer_view.dim {index} of a rank-{len(shape)} view")
        return shape[index]

    def buffer_view_element_type(self, view):
        return self._view(view, "buffer_view.element_type").element_type

    def buffer_view_encoding_type(self, view):
        self._view(view, "buffer_view.encoding_type")
        return DENSE_ROW_MAJOR

    def buffer_view_rank(self, view):
        return len(self._view(view, "buffer_view.rank").shape)

    def buffer_view_trace(self, key, views):
        log.info("buffer_view.trace %s: %s", _text(key, "trace key"),
                 [self._view(v, "buffer_view.trace") for v in _items(views)])

    # Command buffers.
    def _command_buffer(self, ref, what: str) -> HalCommandBuffer:
        return self.handles.get(ref, HalCommandBuffer, what)

    def command_buffer_create(self, device, modes, categories, affinity, binding_capacity):
        command_buffer = HalCommandBuffer(self._device(device), binding_capacity=binding_capacity, begin=True,
                                          mode=CommandBufferMode(modes), categories=CommandCategory(categories))
        return self.handles.wrap(command_buffer)

    def command_buffer_finalize(self, command_buffer):
        self._command_buffer(command_buffer, "command_buffer.finalize").end()

    def command_buffer_begin_debug_group(self, command_buffer, label):
        self._command_buffer(command_buffer, "command_buffer.begin_debug_group")

    def command_buffer_end_debug_group(self, command_buffer):
        self._command_buffer(command_buffer, "command_buffer.end_debug_group")

    def command_buffer_execution_barrier(self, command_buffer, source_stages, target_stages, flags):
        self._command_buffer(command_buffer, "command_buffer.execution_barrier").execution_barrier(
            source_stages, target_stages, flags)

    def command_buffer_advise_buffer(self, command_buffer, buffer, flags, arg0, arg1, slot):
        self._command_buffer(command_buffer, "command_buffer.advise_buffer")

    def _operand(self, ref, slot: int, what: str):
        buffer = self._buffer(ref, what, optional=True)
        return BindingRef(slot) if buffer is None else buffer

    def command_buffer_fill_buffer(self, command_buffer, target, offset, length, slot, pattern, pattern_length,
                                   flags):
        self._command_buffer(command_buffer, "command_buffer.fill_buffer").fill(
            self._operand(target, slot, "fill target"), _pattern(pattern, pattern_length, "command_buffer.fill_buffer"),
            offset, length)

    def command_buffer_update_buffer(self, command_buffer, source, source_offset, target, target_offset, length,
                                     slot, flags):
        data = _bytes(source, "command_buffer.update_buffer source")[source_offset:source_offset + length]
        self._command_buffer(command_buffer, "command_buffer.update_buffer").update(
            data, self._operand(target, slot, "update target"), target_offset, length)

    def command_buffer_copy_buffer(self, command_buffer, source_slot, target_slot, source, source_offset, target,
                                   target_offset, length, flags):
        self._command_buffer(command_buffer, "command_buffer.copy_buffer").copy(
            self._operand(source, source_slot, "copy source"), self._operand(target, target_slot, "copy target"),
            source_offset, target_offset, length)

    def command_buffer_dispatch(self, command_buffer, executable, ordinal, x, y, z, flags, constants, bindings):
        self._dispatch(command_buffer, executable, ordinal, (x, y, z), constants, bindings)

    def command_buffer_dispatch_indirect(self, command_buffer, executable, ordinal, counts_slot, counts, counts_offset,
                                         flags, constants, bindings):
        source = self._operand(counts, counts_slot, "dispatch workgroup count")
        if counts_offset:
            if isinstance(source, BindingRef):
                source = BindingRef(counts_slot, counts_offset)
            else:
                source = source.subspan(counts_offset)
        self._dispatch(command_buffer, executable, ordinal, source, constants, bindings)

    def _dispatch(self, command_buffer, executable, ordinal, workgroup_count, constants, bindings) -> None:
        executable = self.handles.get(executable, HalExecutable, "command_buffer.dispatch executable")
        words = np.array([int(v) & 0xFFFFFFFF for v in _items(constants)], np.uint32).tobytes()
        if 0 <= ordinal < executable.export_count and executable.export(ordinal).dynamic:
            executable, ordinal = self._specialized(executable, ordinal, words), 0
        values = _items(bindings)  # (reserved, slot, buffer or null, offset, length) per binding
        resolved = [(self._operand(values[k + 2], values[k + 1], f"dispatch binding {k // 5}"), values[k + 3],
                     values[k + 4]) for k in range(0, len(values), 5)]
        self._command_buffer(command_buffer, "command_buffer.dispatch").dispatch(
            executable, ordinal, workgroup_count, words, resolved)

    def _specialized(self, executable: HalExecutable, ordinal: int, words: bytes) -> HalExecutable:
        """The program of a dynamic export for these push constants, prepared once and
        kept while it is among the MAX_SPECIALIZATIONS most recently dispatched."""
        key = (executable, ordinal, words)
        if key in self._specializations:
            self._specializations.move_to_end(key)
            return self._specializations[key]
        specialize = importlib.import_module(SPECIALIZER).specialize
        export = specialize(executable.export(ordinal), np.frombuffer(words, np.uint32).tolist())
        prepared = self.device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT,
                                                                            write_executable([export]))
        self._specializations[key] = prepared
        if len(self._specializations) > MAX_SPECIALIZATIONS:
            self._specializations.popitem(last=False)
        return prepared

    # Executables.
    def executable_create(self, device, affinity, executable_format, data, constants):
        cache = self._device(device).create_executable_cache()
        if constants is not None and constants.deref(rt.VmBuffer, True) is not None and len(_bytes(constants, "")):
            raise HalError(StatusCode.UNIMPLEMENTED, "executable.create: executable constants are not supported")
        return self.handles.wrap(cache.prepare_executable(_text(executable_format, "executable format"),
                                                          bytes(_bytes(data, "executable data"))))

    def executable_lookup_function(self, executable, name):
        executable = self.handles.get(executable, HalExecutable, "executable.lookup.function")
        return executable.lookup_export_by_name(_text(name, "function name"))

    # Fences.
    def fence_create(self, device, flags):
        return self.handles.wrap(HalFence.create_at(self._device(device).create_semaphore(0), 1))

    def fence_join(self, flags, fences):
        joined = HalFence.join(self._fence(f, "fence.join") or HalFence(0) for f in _items(fences))
        return self.handles.wrap(joined)

    def fence_query(self, fence):
        try:
            return 0 if self.handles.get(fence, HalFence, "fence.query").wait(timeout=0) else \
                int(StatusCode.DEFERRED)
        except HalError as error:
            return int(error.code)

    def fence_signal(self, fence):
        self.handles.get(fence, HalFence, "fence.signal").signal()

    def fence_fail(self, fence, status):
        self.handles.get(fence, HalFence, "fence.fail").fail(StatusCode(status & 0x1F))

    def fence_await(self, timeout_ms, flags, fences):
        timeout = None if timeout_ms in (INFINITE_TIMEOUT_MS, -1) else timeout_ms * 1_000_000
        for ref in _items(fences):
            fence = self._fence(ref, "fence.await")
            if fence is not None and not fence.wait(timeout=timeout):
                return int(StatusCode.DEADLINE_EXCEEDED)
        return 0

    # Files.
    def ex_file_from_memory(self, device, affinity, access, buffer, offset, length, flags):
        return self.handles.wrap(MemoryFile(_bytes(buffer, "ex.file.from_memory")[offset:offset + length]))


def _pattern(value: int, length: int, what: str) -> bytes:
    if length not in (1, 2, 4):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what}: pattern length {length} is not 1, 2 or 4")
    return (value & ((1 << (8 * length)) - 1)).to_bytes(length, "little")


def _compatible(actual: int, expected: int) -> bool:
    """IREE's rule (buffer_diagnostics.c): an opaque type matches anything, integers of
    one width match whatever their signedness, anything else exactly."""
    numerical = actual >> 24
    if numerical == NumericalType.UNKNOWN:
        return True
    integers = (NumericalType.INTEGER, NumericalType.INTEGER_SIGNED, NumericalType.INTEGER_UNSIGNED,
                NumericalType.BOOLEAN)
    if numerical in integers and expected >> 24 in integers:
        return HalElementType.bit_count(actual) == HalElementType.bit_count(expected)
    return actual == expected


def _type_name(element_type: int) -> str:
    try:
        return f"{HalElementType(element_type).name} ({element_type:08X})"
    except ValueError:
        return f"{element_type:08X}"


def _check_encoding(encoding: int, what: str) -> None:
    if encoding != DENSE_ROW_MAJOR:
        raise HalError(StatusCode.UNIMPLEMENTED, f"{what}: encoding {encoding:#x}; tenstorrent buffer views are dense "
                                                 f"row-major")


def create_hal_module(device: HalDevice) -> tuple[rt.VmModule, HalVmModule]:
    """The `hal` VM module serving `device`, and its state (its handle table)."""
    state = HalVmModule(device)
    interface = rt.PyModuleInterface(MODULE_NAME, lambda _interface: state)
    for name in EXPORTS:
        interface.export(name, cconv(name), _entry(name))
    return interface.create(), state


def _entry(name: str):
    method_name = name.replace(".", "_")

    def call(state: HalVmModule, *args):
        try:
            return getattr(state, method_name)(*args)
        except HalError:
            raise
        except Exception as error:  # a bug or a bad argument: name the import
            raise HalError(StatusCode.INTERNAL, f"hal.{name}: {type(error).__name__}: {error}") from error

    return call
