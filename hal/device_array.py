"""DeviceArray: a buffer view on a device seen as a numpy-like array, as
iree.runtime's `DeviceArray` and `asdevicearray` are.

Its shape and dtype are known without a transfer; its values come to the host once and
are kept: on `to_host()`, indexing, iteration, `reshape` and `astype`, and implicitly
(numpy conversion, operators, ufuncs) only when made with
`implicit_host_transfer=True`: otherwise those raise ValueError, so that no transfer
happens unseen.
"""

from __future__ import annotations

import numpy as np

from hal.types import BufferUsage, HalElementType, MemoryType

_IMPLICIT = ("DeviceArray cannot be implicitly transferred to the host: if necessary, do an explicit transfer "
             "via .to_host(), or make it with implicit_host_transfer=True")


class DeviceArray(np.lib.mixins.NDArrayOperatorsMixin):
    """A HalBufferView of `device` as an array; `override_dtype` reads its bytes as
    another dtype's values (converted, as iree.runtime does)."""

    def __init__(self, device, buffer_view, implicit_host_transfer: bool = False, override_dtype=None):
        self._device = device
        self._buffer_view = buffer_view
        self._implicit_host_transfer = implicit_host_transfer
        self._override_dtype = override_dtype
        self._host_array: np.ndarray | None = None

    @property
    def shape(self) -> list[int]:
        return list(self._buffer_view.shape)

    @property
    def dtype(self) -> np.dtype:
        if self._override_dtype is not None:
            return np.dtype(self._override_dtype)
        return HalElementType.map_to_dtype(self._buffer_view.element_type)

    @property
    def is_host_accessible(self) -> bool:
        """Are the values on the host already (no transfer for them)?"""
        return self._host_array is not None

    def to_host(self) -> np.ndarray:
        """The values as a numpy array: transferred the first time, then kept."""
        if self._host_array is None:
            self._host_array = self._copy_to_host()
        return self._host_array

    def _copy_to_host(self) -> np.ndarray:
        stored = HalElementType.map_to_dtype(self._buffer_view.element_type)
        values = self._buffer_view.map().asarray(self.shape, stored).copy()
        return values if self._override_dtype is None else values.astype(self._override_dtype)

    def _implicit(self) -> np.ndarray:
        if not self._implicit_host_transfer and self._host_array is None:
            raise ValueError(_IMPLICIT)
        return self.to_host()

    # numpy interop: every use reads the host values (implicitly).
    def __array__(self, dtype=None, copy=None):
        values = self._implicit()
        return values if dtype is None else values.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(x._implicit() if isinstance(x, DeviceArray) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    # Asked for by name, these transfer (as iree.runtime's do).
    def __iter__(self):
        return iter(self.to_host())

    def __getitem__(self, index):
        return self.to_host()[index]

    def reshape(self, *shape):
        return self.to_host().reshape(*shape)

    def astype(self, dtype, copy: bool = True):
        """This array (same dtype, `copy=False`), else a new device array of the values
        converted."""
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return asdevicearray(self._device, self.to_host().astype(dtype),
                             implicit_host_transfer=self._implicit_host_transfer)

    def __deepcopy__(self, memo):
        return asdevicearray(self._device, self.to_host(), implicit_host_transfer=self._implicit_host_transfer)

    def __reduce__(self):
        return np.array, (self.to_host(),)  # a pickle holds the values; a device does not pickle

    def __repr__(self) -> str:
        return f"<IREE DeviceArray: shape={self.shape}, dtype={self.dtype}>"


def asdevicearray(device, array, dtype=None, implicit_host_transfer: bool = False,
                  memory_type=MemoryType.DEVICE_LOCAL, allowed_usage=BufferUsage.DEFAULT | BufferUsage.MAPPING,
                  element_type=None) -> DeviceArray:
    """`array` (a DeviceArray as it is, or anything numpy takes, as `dtype`) copied into a
    new buffer of `device`."""
    if isinstance(array, DeviceArray) and (dtype is None or np.dtype(dtype) == array.dtype):
        return array
    array = np.ascontiguousarray(array, dtype)
    element_type = HalElementType.from_dtype(array.dtype) if element_type is None else element_type
    view = device.allocator.allocate_buffer_copy(memory_type=memory_type, allowed_usage=allowed_usage, device=device,
                                                 buffer=array, element_type=element_type)
    return DeviceArray(device, view, implicit_host_transfer=implicit_host_transfer)
