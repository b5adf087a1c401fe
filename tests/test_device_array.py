"""DeviceArray and asdevicearray (hal/device_array.py) side by side with iree.runtime's
on local-task: the same script against both, compared with numpy and with each other."""

from __future__ import annotations

import copy
import pickle

import iree.runtime as iree_rt
import ml_dtypes
import numpy as np
import pytest

import hal


@pytest.fixture(scope="module", params=["iree", "hal"])
def runtime(request):
    if request.param == "iree":
        return iree_rt, iree_rt.get_device("local-task")
    return hal, hal.get_device("tenstorrent")


def observe(rt, device) -> dict:
    """What a script sees of device arrays: metadata, transfers, errors, numpy interop."""
    values = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    array = rt.asdevicearray(device, values)
    seen = {"repr": repr(array), "shape": array.shape, "dtype": str(array.dtype),
            "host_before": array.is_host_accessible}
    for name, use in (("asarray", lambda: np.asarray(array)), ("add", lambda: array + 1),
                      ("ufunc", lambda: np.add(array, 1)), ("length", lambda: len(array))):
        try:
            use()
            seen[name] = "no error"
        except (ValueError, TypeError) as error:
            seen[name] = type(error).__name__
    seen["first_row"] = array[0].tolist()  # indexing asks for the values: a transfer
    seen["to_host"] = array.to_host().tolist()
    seen["host_after"] = array.is_host_accessible
    implicit = rt.asdevicearray(device, values, implicit_host_transfer=True)
    seen["sum"] = (implicit + values).tolist()
    seen["isfinite"] = bool(np.isfinite(implicit.astype(np.float32)).all())
    seen["iterate"] = [row.tolist() for row in implicit]
    seen["reshape"] = list(np.reshape(implicit, (2, 6)).shape)
    seen["astype_same"] = implicit.astype(np.int32, copy=False) is implicit
    seen["astype_float"] = str(implicit.astype(np.float32).dtype)
    seen["deepcopy"] = np.asarray(copy.deepcopy(implicit)).tolist()
    seen["pickle"] = np.asarray(pickle.loads(pickle.dumps(implicit))).tolist()
    view = device.allocator.allocate_buffer_copy(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                                 allowed_usage=rt.BufferUsage.DEFAULT, device=device, buffer=values,
                                                 element_type=rt.HalElementType.SINT_32)
    overridden = rt.DeviceArray(device, view, override_dtype=np.float32).to_host()
    seen["override"] = (str(overridden.dtype), overridden.tolist())
    bf16 = rt.asdevicearray(device, np.arange(6, dtype=ml_dtypes.bfloat16))
    seen["bfloat16"] = (str(bf16.dtype), bf16.to_host().astype(np.float32).tolist())
    flags = rt.asdevicearray(device, np.array([True, False, True]))
    seen["bool"] = (repr(flags), flags.to_host().tolist())
    return seen


def test_device_arrays_behave_as_iree_runtime_s(runtime):
    rt, device = runtime
    seen = observe(rt, device)
    values = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    assert seen["repr"] == "<IREE DeviceArray: shape=[3, 4], dtype=int32>"
    assert seen["shape"] == [3, 4] and seen["dtype"] == "int32" and not seen["host_before"]
    assert [seen[k] for k in ("asarray", "add", "ufunc", "length")] == ["ValueError"] * 3 + ["TypeError"]
    assert seen["first_row"] == values[0].tolist()
    assert seen["to_host"] == values.tolist() and seen["host_after"]
    assert seen["sum"] == (2 * values).tolist() and seen["isfinite"]
    assert seen["override"] == ("float32", values.astype(np.float32).tolist())
    assert seen["bool"] == ("<IREE DeviceArray: shape=[3], dtype=bool>", [True, False, True])
    if rt is hal:
        assert seen == observe(iree_rt, iree_rt.get_device("local-task"))


def aligned(values: np.ndarray) -> np.ndarray:
    """A copy at a 64-byte aligned address (local-task imports only such data)."""
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    copy[...] = values
    return copy


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "uint16", "int64", "bool", "complex64"])
def test_dlpack_round_trip(runtime, dtype):
    """device.from_dlpack_capsule of numpy's capsule, then create_dlpack_capsule read by
    numpy.from_dlpack: the values come back (a copy each way here; zero-copy views on
    local-task, whose memory is the host's)."""
    rt, device = runtime
    values = (np.random.default_rng(0).standard_normal((3, 4, 5)) * 50).astype(dtype)
    view = device.from_dlpack_capsule(aligned(values).__dlpack__())
    assert list(view.shape) == [3, 4, 5]

    class Producer:
        def __dlpack__(self, stream=None):
            return device.create_dlpack_capsule(view, 1, 0)

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.from_dlpack(Producer()), values)
