"""HAL enums with IREE's bit values (`iree/hal/buffer.h`, `command_buffer.h`, ...)."""

from __future__ import annotations

import enum

import numpy as np


class _Named:
    """str and repr as iree.runtime's (pybind11) enums print: `BufferUsage.DEFAULT`."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __repr__ = __str__


class MemoryType(_Named, enum.IntFlag):
    """iree_hal_memory_type_t bits. DEVICE_LOCAL is the chip's memory (DRAM, or L1 for
    tensors); HOST_LOCAL is host memory the device reaches (tt-metal's SYSTEM_MEMORY)."""

    NONE = 0
    OPTIMAL = 1 << 0
    HOST_VISIBLE = 1 << 1
    HOST_COHERENT = 1 << 2
    HOST_CACHED = 1 << 3
    HOST_LOCAL = HOST_VISIBLE | HOST_COHERENT | (1 << 6)
    DEVICE_VISIBLE = 1 << 4
    DEVICE_LOCAL = DEVICE_VISIBLE | (1 << 5)


class BufferUsage(_Named, enum.IntFlag):
    """iree_hal_buffer_usage_t bits: what a buffer may be used for. Operations check
    them (PERMISSION_DENIED when a bit is missing)."""

    NONE = 0
    TRANSFER_SOURCE = 1 << 0
    TRANSFER_TARGET = 1 << 1
    TRANSFER = TRANSFER_SOURCE | TRANSFER_TARGET
    DISPATCH_INDIRECT_PARAMETERS = 1 << 8
    DISPATCH_UNIFORM_READ = 1 << 9
    DISPATCH_STORAGE_READ = 1 << 10
    DISPATCH_STORAGE_WRITE = 1 << 11
    DISPATCH_STORAGE = DISPATCH_STORAGE_READ | DISPATCH_STORAGE_WRITE
    DISPATCH_IMAGE_READ = 1 << 12
    DISPATCH_IMAGE_WRITE = 1 << 13
    DISPATCH_IMAGE = DISPATCH_IMAGE_READ | DISPATCH_IMAGE_WRITE
    SHARING_EXPORT = 1 << 16
    SHARING_REPLICATE = 1 << 17
    SHARING_CONCURRENT = 1 << 18
    SHARING_IMMUTABLE = 1 << 19
    MAPPING_SCOPED = 1 << 24
    MAPPING_PERSISTENT = 1 << 25
    MAPPING_OPTIONAL = 1 << 26
    MAPPING_ACCESS_RANDOM = 1 << 27
    MAPPING_ACCESS_SEQUENTIAL_WRITE = 1 << 28
    MAPPING = MAPPING_SCOPED | MAPPING_ACCESS_RANDOM
    DEFAULT = TRANSFER | DISPATCH_STORAGE


class MemoryAccess(_Named, enum.IntFlag):
    """iree_hal_memory_access_t bits: how a buffer or a mapping may be read or written."""

    NONE = 0
    READ = 1 << 0
    WRITE = 1 << 1
    DISCARD = 1 << 2
    DISCARD_WRITE = DISCARD | WRITE
    ALL = READ | WRITE | DISCARD


class BufferCompatibility(_Named, enum.IntFlag):
    """iree_hal_buffer_compatibility_t bits, as HalAllocator.query_buffer_compatibility
    returns them."""

    NONE = 0
    ALLOCATABLE = 1 << 0
    IMPORTABLE = 1 << 1
    EXPORTABLE = 1 << 2
    QUEUE_TRANSFER = 1 << 10
    QUEUE_DISPATCH = 1 << 11


class CommandBufferMode(_Named, enum.IntFlag):
    """iree_hal_command_buffer_mode_t bits. DEFAULT (0) is reusable; ONE_SHOT may be
    submitted once."""

    DEFAULT = 0  # reusable
    ONE_SHOT = 1 << 0
    ALLOW_INLINE_EXECUTION = 1 << 4
    UNVALIDATED = 1 << 5


class CommandCategory(_Named, enum.IntFlag):
    """iree_hal_command_category_t bits: the kinds of command a command buffer may record."""

    TRANSFER = 1 << 0
    DISPATCH = 1 << 1
    ANY = TRANSFER | DISPATCH


class WaitMode(_Named, enum.IntEnum):
    """iree_hal_wait_mode_t: a multi-semaphore wait needs all of its timepoints, or any one."""

    ALL = 0
    ANY = 1


class ExternalTimepointType(_Named, enum.IntEnum):
    """iree_hal_external_timepoint_type_t: what an exported semaphore timepoint is."""

    NONE = 0
    ASYNC_PRIMITIVE = 1
    CUDA_EVENT = 2
    HIP_EVENT = 3


class ExternalTimepointFlags(_Named, enum.IntFlag):
    """iree_hal_external_timepoint_flags_t: none defined yet."""

    NONE = 0


class SemaphoreCompatibility(_Named, enum.IntFlag):
    """iree_hal_semaphore_compatibility_t: who may wait on and signal a timepoint."""

    NONE = 0
    HOST_WAIT = 1 << 0
    DEVICE_WAIT = 1 << 1
    HOST_SIGNAL = 1 << 2
    DEVICE_SIGNAL = 1 << 3
    HOST_ONLY = HOST_WAIT | HOST_SIGNAL
    DEVICE_ONLY = DEVICE_WAIT | DEVICE_SIGNAL
    ALL = HOST_ONLY | DEVICE_ONLY


class Shape(tuple):
    """iree.runtime's Shape: the dimensions of a tensor, as ints."""

    def __new__(cls, indices):
        return super().__new__(cls, (int(i) for i in indices))


class NumericalType(_Named, enum.IntEnum):
    UNKNOWN = 0x00
    INTEGER = 0x10
    INTEGER_SIGNED = 0x11
    INTEGER_UNSIGNED = 0x12
    BOOLEAN = 0x13
    FLOAT_IEEE = 0x21
    FLOAT_BRAIN = 0x22
    FLOAT_COMPLEX = 0x23
    FLOAT_8_E5M2 = 0x24
    FLOAT_8_E4M3_FN = 0x25
    FLOAT_8_E5M2_FNUZ = 0x26
    FLOAT_8_E4M3_FNUZ = 0x27
    FLOAT_8_E8M0_FNU = 0x28


def _element_type(numerical_type: int, bits: int) -> int:
    return (numerical_type << 24) | bits


class HalElementType(_Named, enum.IntEnum):
    """IREE element types: `(numerical_type << 24) | bit_count`."""

    NONE = 0
    OPAQUE_8 = 8
    OPAQUE_16 = 16
    OPAQUE_32 = 32
    OPAQUE_64 = 64
    BOOL_8 = _element_type(NumericalType.BOOLEAN, 8)
    INT_4 = _element_type(NumericalType.INTEGER, 4)
    INT_8 = _element_type(NumericalType.INTEGER, 8)
    INT_16 = _element_type(NumericalType.INTEGER, 16)
    INT_32 = _element_type(NumericalType.INTEGER, 32)
    INT_64 = _element_type(NumericalType.INTEGER, 64)
    SINT_4 = _element_type(NumericalType.INTEGER_SIGNED, 4)
    SINT_8 = _element_type(NumericalType.INTEGER_SIGNED, 8)
    SINT_16 = _element_type(NumericalType.INTEGER_SIGNED, 16)
    SINT_32 = _element_type(NumericalType.INTEGER_SIGNED, 32)
    SINT_64 = _element_type(NumericalType.INTEGER_SIGNED, 64)
    UINT_4 = _element_type(NumericalType.INTEGER_UNSIGNED, 4)
    UINT_8 = _element_type(NumericalType.INTEGER_UNSIGNED, 8)
    UINT_16 = _element_type(NumericalType.INTEGER_UNSIGNED, 16)
    UINT_32 = _element_type(NumericalType.INTEGER_UNSIGNED, 32)
    UINT_64 = _element_type(NumericalType.INTEGER_UNSIGNED, 64)
    FLOAT_16 = _element_type(NumericalType.FLOAT_IEEE, 16)
    FLOAT_32 = _element_type(NumericalType.FLOAT_IEEE, 32)
    FLOAT_64 = _element_type(NumericalType.FLOAT_IEEE, 64)
    BFLOAT_16 = _element_type(NumericalType.FLOAT_BRAIN, 16)
    COMPLEX_64 = _element_type(NumericalType.FLOAT_COMPLEX, 64)
    COMPLEX_128 = _element_type(NumericalType.FLOAT_COMPLEX, 128)
    FLOAT_8_E5M2 = _element_type(NumericalType.FLOAT_8_E5M2, 8)
    FLOAT_8_E4M3_FN = _element_type(NumericalType.FLOAT_8_E4M3_FN, 8)
    FLOAT_8_E5M2_FNUZ = _element_type(NumericalType.FLOAT_8_E5M2_FNUZ, 8)
    FLOAT_8_E4M3_FNUZ = _element_type(NumericalType.FLOAT_8_E4M3_FNUZ, 8)
    FLOAT_8_E8M0_FNU = _element_type(NumericalType.FLOAT_8_E8M0_FNU, 8)

    @staticmethod
    def bit_count(element_type: int) -> int:
        return int(element_type) & 0xFF

    @staticmethod
    def is_byte_aligned(element_type: int) -> bool:
        return HalElementType.bit_count(element_type) % 8 == 0

    @staticmethod
    def dense_byte_count(element_type: int) -> int:
        return (HalElementType.bit_count(element_type) + 7) // 8

    @staticmethod
    def map_to_dtype(element_type: int) -> np.dtype:
        """The numpy dtype for an element type; ValueError where numpy has none."""
        try:
            name = _DTYPE_NAMES[HalElementType(int(element_type))]
        except (KeyError, ValueError):
            raise ValueError(f"element type {int(element_type):#x} has no numpy dtype") from None
        if name in np.sctypeDict or name in ("bool",):
            return np.dtype(name)
        import ml_dtypes  # bfloat16 and the float8 types

        return np.dtype(getattr(ml_dtypes, name))

    @staticmethod
    def from_dtype(dtype) -> "HalElementType":
        """The element type for a numpy dtype (INVALID_ARGUMENT style ValueError if none)."""
        dtype = np.dtype(dtype)
        element_type = _BY_DTYPE.get(dtype)  # dtype.name is a Python property: microseconds a call
        if element_type is None:
            try:
                element_type = _BY_DTYPE[dtype] = _ELEMENT_TYPES[dtype.name]
            except KeyError:
                raise ValueError(f"numpy dtype {dtype.name} has no HAL element type") from None
        return element_type


_DTYPE_NAMES = {
    HalElementType.BOOL_8: "bool",
    HalElementType.INT_8: "int8",
    HalElementType.INT_16: "int16",
    HalElementType.INT_32: "int32",
    HalElementType.INT_64: "int64",
    HalElementType.SINT_8: "int8",
    HalElementType.SINT_16: "int16",
    HalElementType.SINT_32: "int32",
    HalElementType.SINT_64: "int64",
    HalElementType.UINT_8: "uint8",
    HalElementType.UINT_16: "uint16",
    HalElementType.UINT_32: "uint32",
    HalElementType.UINT_64: "uint64",
    HalElementType.FLOAT_16: "float16",
    HalElementType.FLOAT_32: "float32",
    HalElementType.FLOAT_64: "float64",
    HalElementType.BFLOAT_16: "bfloat16",
    HalElementType.COMPLEX_64: "complex64",
    HalElementType.COMPLEX_128: "complex128",
    HalElementType.FLOAT_8_E5M2: "float8_e5m2",
    HalElementType.FLOAT_8_E4M3_FN: "float8_e4m3fn",
    HalElementType.FLOAT_8_E5M2_FNUZ: "float8_e5m2fnuz",
    HalElementType.FLOAT_8_E4M3_FNUZ: "float8_e4m3fnuz",
    HalElementType.FLOAT_8_E8M0_FNU: "float8_e8m0fnu",
}
# Signless INT_* map to the same numpy dtypes as SINT_*; from_dtype picks SINT_*.
_AMBIGUOUS = {HalElementType.INT_8, HalElementType.INT_16, HalElementType.INT_32, HalElementType.INT_64}
# numpy dtype name -> element type, for from_dtype (reversed: the first of _DTYPE_NAMES with a name wins)
_ELEMENT_TYPES = {name: t for t, name in reversed(_DTYPE_NAMES.items()) if t not in _AMBIGUOUS}
_BY_DTYPE: dict[np.dtype, HalElementType] = {}  # from_dtype's answers by dtype (a few dtypes)


# iree_hal_*_format's tables (runtime/src/iree/hal/buffer.c): combined names first.
_DISPATCH = (BufferUsage.DISPATCH_INDIRECT_PARAMETERS | BufferUsage.DISPATCH_UNIFORM_READ
             | BufferUsage.DISPATCH_STORAGE | BufferUsage.DISPATCH_IMAGE)
_FORMATS = {
    MemoryType: [(MemoryType.HOST_LOCAL, "HOST_LOCAL"), (MemoryType.DEVICE_LOCAL, "DEVICE_LOCAL"),
                 *((m, m.name) for m in (MemoryType.OPTIMAL, MemoryType.HOST_VISIBLE, MemoryType.HOST_COHERENT,
                                         MemoryType.HOST_CACHED, MemoryType.DEVICE_VISIBLE))],
    MemoryAccess: [(MemoryAccess.ALL, "ALL"), (MemoryAccess.DISCARD_WRITE, "DISCARD_WRITE"),
                   *((m, m.name) for m in (MemoryAccess.READ, MemoryAccess.WRITE, MemoryAccess.DISCARD))],
    BufferUsage: [(BufferUsage.TRANSFER, "TRANSFER"), (_DISPATCH, "DISPATCH"),
                  (BufferUsage.DISPATCH_STORAGE, "DISPATCH_STORAGE"), (BufferUsage.DISPATCH_IMAGE, "DISPATCH_IMAGE"),
                  (BufferUsage.MAPPING, "MAPPING"),
                  *((u, u.name) for u in BufferUsage if u.name in (
                      "TRANSFER_SOURCE", "TRANSFER_TARGET", "DISPATCH_INDIRECT_PARAMETERS", "DISPATCH_UNIFORM_READ",
                      "DISPATCH_STORAGE_READ", "DISPATCH_STORAGE_WRITE", "DISPATCH_IMAGE_READ",
                      "DISPATCH_IMAGE_WRITE", "SHARING_EXPORT", "SHARING_REPLICATE", "SHARING_CONCURRENT",
                      "SHARING_IMMUTABLE", "MAPPING_SCOPED", "MAPPING_PERSISTENT", "MAPPING_OPTIONAL",
                      "MAPPING_ACCESS_RANDOM", "MAPPING_ACCESS_SEQUENTIAL_WRITE"))],
}


def format_bits(flags: MemoryType | MemoryAccess | BufferUsage) -> str:
    """The bits as iree_bitfield_format writes them (iree.runtime's reprs): each name
    whose bits are all still set, combined names first, joined by |; leftover bits as
    hex with an h."""
    names, left = [], int(flags)
    for bits, name in _FORMATS[type(flags)]:
        if left & int(bits) == int(bits):
            names.append(name)
            left &= ~int(bits)
    if left:
        names.append(f"{left:X}h")
    return "|".join(names)
