"""Tensor layouts on the device: data formats, ROW_MAJOR or TILE layout, and the
TensorSpec a buffer view carries (`ttnn.TensorSpec`'s role).

Defined once here and used by every backend: what a device byte of a tensor
means. The conversions themselves are the backend's (`BackendDevice.encode_tensor`).
"""

from __future__ import annotations

import dataclasses
import enum
import math

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.placement import MemoryConfig, ShardedPages, TensorMemoryLayout
from tt_hal.target.sizes import TILE, TILE_ELEMENTS, ceil_div, round_up


class DataFormat(enum.IntEnum):
    """Device data formats: ttnn's dtype names, tt::DataFormat's codes."""

    float32 = 0  # Float32
    bfloat16 = 5  # Float16_b
    bfloat8_b = 6  # Bfp8_b
    bfloat4_b = 7  # Bfp4_b
    int32 = 8  # Int32
    uint16 = 9  # UInt16
    uint32 = 24  # UInt32
    uint8 = 30  # UInt8

    @classmethod
    def parse(cls, value) -> "DataFormat":
        """A member from a member, a ttnn name ("bfloat8_b") or a tt-metal name ("Bfp8_b")."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for member, tt_metal_name in _TT_METAL_NAMES.items():
                if value == tt_metal_name:
                    return member
            if value.lower() in cls.__members__:
                return cls[value.lower()]
        raise HalError(
            StatusCode.INVALID_ARGUMENT,
            f"unknown data format {value!r}; expected one of {', '.join(cls.__members__)} (or a hal.DataFormat)",
        )

    @classmethod
    def from_dtype(cls, dtype) -> "DataFormat":
        """The format that holds a numpy dtype's values exactly (float64 -> float32)."""
        dtype = np.dtype(dtype)
        name = {"float64": "float32", "float16": "float32", "int64": "int32", "int16": "int32", "int8": "int32",
                "bool": "uint8", "uint64": "uint32"}.get(dtype.name, dtype.name)
        if name in cls.__members__:
            return cls[name]
        raise HalError(StatusCode.INVALID_ARGUMENT,
                       f"no device data format for numpy dtype {dtype.name}; pass dtype= explicitly")

    @property
    def tt_metal_name(self) -> str:
        """tt::DataFormat's enumerator name ("Float16_b", "Bfp8_b", ...)."""
        return _TT_METAL_NAMES[self]

    @property
    def is_block_float(self) -> bool:
        return self in (DataFormat.bfloat8_b, DataFormat.bfloat4_b)

    @property
    def is_integer(self) -> bool:
        return self in (DataFormat.int32, DataFormat.uint16, DataFormat.uint32, DataFormat.uint8)

    @property
    def tile_size(self) -> int:
        """Bytes of one 32x32 tile (tt::tile_size)."""
        return _TILE_SIZES[self]

    @property
    def element_size(self) -> int:
        """Bytes per element in ROW_MAJOR layout; block floats have none."""
        if self.is_block_float:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{self.name} has no per-element size: it exists only in tiles")
        return self.tile_size // TILE_ELEMENTS

    @property
    def host_dtype(self) -> np.dtype:
        """The numpy dtype `to_host()` returns: exact for every value of the format."""
        if self is DataFormat.bfloat16:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(_HOST_DTYPES[self])


_TT_METAL_NAMES = {
    DataFormat.float32: "Float32", DataFormat.bfloat16: "Float16_b", DataFormat.bfloat8_b: "Bfp8_b",
    DataFormat.bfloat4_b: "Bfp4_b", DataFormat.int32: "Int32", DataFormat.uint16: "UInt16",
    DataFormat.uint32: "UInt32", DataFormat.uint8: "UInt8",
}
_TILE_SIZES = {
    DataFormat.float32: 4096, DataFormat.bfloat16: 2048, DataFormat.bfloat8_b: 1088, DataFormat.bfloat4_b: 576,
    DataFormat.int32: 4096, DataFormat.uint16: 2048, DataFormat.uint32: 4096, DataFormat.uint8: 1024,
}
_HOST_DTYPES = {
    DataFormat.float32: "float32", DataFormat.bfloat8_b: "float32", DataFormat.bfloat4_b: "float32",
    DataFormat.int32: "int32", DataFormat.uint16: "uint16", DataFormat.uint32: "uint32", DataFormat.uint8: "uint8",
}


class Layout(enum.IntEnum):
    """ttnn.Layout."""

    ROW_MAJOR = 0
    TILE = 1

    @classmethod
    def parse(cls, value) -> "Layout":
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        raise HalError(StatusCode.INVALID_ARGUMENT, f"unknown layout {value!r}; expected 'tile' or 'row_major'")


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """A tensor on the device: logical shape, data format, layout and placement.

    Device bytes are the tensor's pages in page order: in TILE layout a page is a
    tile (tiles row-major over the (outer dims x padded H, padded W) matrix); in
    ROW_MAJOR layout a page is a row, or the part of a row one shard holds.
    """

    shape: tuple[int, ...]
    dtype: DataFormat
    layout: Layout
    memory_config: MemoryConfig
    transpose_within_face: bool = False
    transpose_of_faces: bool = False
    # Derived, set once by __post_init__ (plain attributes: allocation and dispatch read them
    # on every op, and Python 3.11's cached_property takes a lock on each first read).
    page_shape: tuple[int, int] = dataclasses.field(init=False, repr=False, compare=False)  # elements of a page
    page_size: int = dataclasses.field(init=False, repr=False, compare=False)
    page_grid: tuple[int, int] = dataclasses.field(init=False, repr=False, compare=False)  # pages (rows, columns)
    num_pages: int = dataclasses.field(init=False, repr=False, compare=False)
    size: int = dataclasses.field(init=False, repr=False, compare=False)  # bytes on the device
    # a sharded placement's pages (MemoryConfig.sharded_pages), else None
    sharded_pages: ShardedPages | None = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple([int(d) for d in self.shape]))
        if self.shape and min(self.shape) < 0:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"negative dimension in shape {self.shape}")
        if self.layout is Layout.ROW_MAJOR:
            if self.dtype.is_block_float:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"{self.dtype.name} exists only in TILE layout (a block float shares one exponent "
                               f"per 16 values of a face row); use layout='tile'")
            if self.transpose_within_face or self.transpose_of_faces:
                raise HalError(StatusCode.INVALID_ARGUMENT, "face transposes apply to TILE layout only")
        rows, columns = self._page_shape()
        page_grid = ceil_div(self.height_2d, rows), ceil_div(self.padded_width, columns) if columns else 0
        page_size = self.dtype.tile_size if self.layout is Layout.TILE else max(columns * self.dtype.element_size, 1)
        num_pages = page_grid[0] * page_grid[1]
        self.__dict__.update(page_shape=(rows, columns), page_size=page_size, page_grid=page_grid,  # frozen: not
                             num_pages=num_pages, size=num_pages * page_size)  # through __setattr__
        self.__dict__["sharded_pages"] = self.memory_config.validate_for(self)

    # The 2D view every placement works on.
    @property
    def height(self) -> int:
        """Rows of the last-but-one dimension (1 for rank < 2)."""
        return self.shape[-2] if len(self.shape) >= 2 else 1

    @property
    def width(self) -> int:
        return self.shape[-1] if self.shape else 1

    @property
    def batch(self) -> int:
        """Product of the outer dimensions, folded into the height."""
        return math.prod(self.shape[:-2])

    @property
    def padded_height(self) -> int:
        return round_up(self.height, TILE) if self.layout is Layout.TILE else self.height

    @property
    def padded_width(self) -> int:
        return round_up(self.width, TILE) if self.layout is Layout.TILE else self.width

    @property
    def height_2d(self) -> int:
        """Rows of the folded (outer dims x padded H, padded W) matrix."""
        return self.batch * self.padded_height

    def _page_shape(self) -> tuple[int, int]:
        """Elements (rows, columns) of one page."""
        if self.layout is Layout.TILE:
            return TILE, TILE
        shard = self.memory_config.shard_spec
        if shard is not None and self.memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
            return 1, shard.shape[1]
        return 1, self.width

    def with_memory_config(self, memory_config: MemoryConfig) -> "TensorSpec":
        return dataclasses.replace(self, memory_config=memory_config)

    def describe(self) -> str:
        variants = "".join(
            f", {name}" for name in ("transpose_within_face", "transpose_of_faces") if getattr(self, name)
        )
        return (f"{list(self.shape)} {self.dtype.name} {self.layout.name}{variants}, "
                f"{self.memory_config.describe()}, {self.num_pages} pages of {self.page_size} B")


def host_values(array, dtype: DataFormat, what: str = "tensor") -> np.ndarray:
    """`array` as the values a backend encodes into `dtype`: float32 for the float
    formats, the format's own integer dtype for the integer ones. Integers must fit;
    float data is not silently truncated into an integer format."""
    array = np.asarray(array)
    kind = array.dtype.kind
    if dtype.is_integer:
        target = np.dtype(_HOST_DTYPES[dtype])
        if kind not in "biu":
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"{what} of dtype {array.dtype} cannot go to integer format {dtype.name} without "
                           f"rounding; cast it first (e.g. .astype(np.{target.name}))")
        if array.size and kind != "b":
            info = np.iinfo(target)
            low, high = array.min(), array.max()
            if low < info.min or high > info.max:
                bad = low if low < info.min else high
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"{what} value {bad} does not fit {dtype.name} [{info.min}, {info.max}]")
        return np.ascontiguousarray(array, target)
    if kind not in "biuf" and array.dtype.name != "bfloat16":
        raise HalError(StatusCode.INVALID_ARGUMENT, f"{what} of dtype {array.dtype} cannot go to {dtype.name}")
    return np.ascontiguousarray(array, np.float32)

