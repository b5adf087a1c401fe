"""Drivers and the driver registry (`iree/hal/driver.h`, `driver_registry.h`).

The `tenstorrent` driver opens the simulated chip (mock mode) or, where the native
layer is built, TT-Metal hardware. URIs: `tenstorrent`, `tenstorrent://`,
`tenstorrent://N`, `tenstorrent://mock?arch=blackhole_p150&num_hw_cqs=1&grid_x=2&grid_y=2`.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from typing import Callable

from hal.backend import (
    NUMERICS,
    NUMERICS_ENVIRONMENT,
    backend_package,
    hardware_unavailable_reason,
    open_backend,
    resolve_mode,
)
from hal.device import HalDevice
from hal.log import get_logger
from hal.status import HalError, StatusCode

log = get_logger(__name__)

DRIVER_NAME = "tenstorrent"


def positive_int(value: str) -> int:
    """A count that must be at least 1: a zero or negative grid would reach the
    simulator's memory model as an impossible chip."""
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def numerics(value: str) -> str:
    """How a simulated chip computes FPU ops: one of hal.backend.NUMERICS."""
    if value not in NUMERICS:
        raise ValueError(value)
    return value


# URI query options a device accepts, and how to parse each. grid_x / grid_y shrink the
# simulated chip's worker grid (columns / rows), e.g. for tests of small core counts.
# dispatch_timeout: seconds a simulated dispatch may run (inf: no deadline; SimDevice checks it).
_DEVICE_OPTIONS = {"arch": str, "num_hw_cqs": int, "l1_unreserved_base": int, "l1_small_size": int,
                   "grid_x": positive_int, "grid_y": positive_int, "numerics": numerics, "dispatch_timeout": float}


class HalDriver:
    """The `tenstorrent` driver."""

    def __init__(self, name: str = DRIVER_NAME, mode: str | None = None):
        self.name = name
        self._mode = mode

    def __repr__(self) -> str:
        return f"<HalDriver {self.name}>"

    @property
    def mode(self) -> str:
        """'mock' or 'hardware', from TT_HAL_MODE at the time of asking."""
        return resolve_mode(self._mode)

    @staticmethod
    def query() -> list[str]:
        return query_available_drivers()

    def query_available_devices(self) -> list[dict]:
        mode = self.mode
        arch = os.environ.get("TT_HAL_MOCK_ARCH", "wormhole_b0")
        requested = (self._mode or os.environ.get("TT_HAL_MODE") or "auto").lower()
        if mode == "mock":
            info = {"device_id": 0, "path": "0", "name": f"{arch} (mock: simulated chip)", "mode": "mock"}
            if requested == "auto":  # say why auto did not pick the hardware
                info["fallback_reason"] = hardware_unavailable_reason()
                info["name"] = f"{arch} (mock: simulated chip; auto mode fell back: {info['fallback_reason']})"
            return [info]
        return backend_package(mode).query_devices()

    def dump_device_info(self, device_id: int) -> str:
        info = self._info_for_id(device_id)
        return f"- tenstorrent://{info['path']}: {info['name']}"

    def _info_for_id(self, device_id: int) -> dict:
        devices = self.query_available_devices()
        for info in devices:
            if info["device_id"] == device_id:
                return info
        raise HalError(StatusCode.NOT_FOUND, f"Device id {device_id} not found. Available devices: {devices}")

    def create_default_device(self, allocators: list | None = None) -> HalDevice:
        return self.create_device(self.query_available_devices()[0]["device_id"], allocators=allocators)

    def create_device(self, device_id: "int | dict", params: dict | None = None,
                      allocators: list | None = None) -> HalDevice:
        """Opens a device by id or by an info dict from `query_available_devices()`.
        `allocators`: wrapper specs for its allocator ("debug", "caching"; see
        hal.allocator.ALLOCATOR_WRAPPERS)."""
        if isinstance(device_id, dict):
            device_id = device_id.get("device_id")
        info = self._info_for_id(int(device_id))
        options = _parse_options(params or {})
        return self._open(int(info["device_id"]), options, allocators=allocators)

    def create_device_by_uri(self, device_uri: str, allocators: list | None = None) -> HalDevice:
        scheme, path, options = parse_uri(device_uri)
        if scheme != self.name:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"URI {device_uri!r} is not for driver {self.name!r}")
        mode = None  # _open resolves the driver's mode, but not for `mock`: TT_HAL_MODE must not veto it
        if path == "mock":
            mode, ordinal = "mock", 0
        elif path == "":
            ordinal = self.query_available_devices()[0]["device_id"]
        else:
            try:
                ordinal = int(path)
            except ValueError:
                raise HalError(StatusCode.INVALID_ARGUMENT,
                               f"device path {path!r} in {device_uri!r}; expected an ordinal or 'mock'") from None
            count = len(self.query_available_devices())
            if not 0 <= ordinal < count:  # NOT_FOUND, as IREE's drivers: a ValueError in Python
                raise HalError(StatusCode.NOT_FOUND,
                               f"Device not found: {device_uri} (device ordinal {ordinal}; {count} available)")
        return self._open(ordinal, options, mode, allocators)

    def _open(self, ordinal: int, options: dict, mode: str | None = None, allocators: list | None = None) -> HalDevice:
        mode = mode or self.mode
        if mode == "mock" and "arch" not in options:
            options["arch"] = os.environ.get("TT_HAL_MOCK_ARCH", "wormhole_b0")
        if mode == "mock" and "numerics" not in options and os.environ.get(NUMERICS_ENVIRONMENT):
            options |= _parse_options({"numerics": os.environ[NUMERICS_ENVIRONMENT]})
        backend = open_backend(mode, ordinal, **options)
        query = urllib.parse.urlencode(options)
        device = HalDevice(self, backend, f"{self.name}://{ordinal}" + (f"?{query}" if query else ""), ordinal)
        device.allocator.configure(allocators)
        log.info("created %r: %dx%d worker grid, %d command queues", device, backend.arch.grid_x, backend.arch.grid_y,
                 backend.num_hw_cqs)
        return device


def _parse_options(raw: dict) -> dict:
    options = {}
    for key, value in raw.items():
        if key not in _DEVICE_OPTIONS:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"unknown device option {key!r}; known: {', '.join(_DEVICE_OPTIONS)}")
        try:
            if value == "":
                raise ValueError
            options[key] = _DEVICE_OPTIONS[key](value)
        except ValueError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"device option {key}={value!r} is not a valid "
                                                        f"{_DEVICE_OPTIONS[key].__name__}") from None
    return options


def parse_uri(uri: str) -> tuple[str, str, dict]:
    """'driver', 'driver://', 'driver://path?k=v' -> (driver, path, options)."""
    if "://" not in uri:
        if "?" in uri or "/" in uri:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"malformed device URI {uri!r}; expected driver://path?options")
        return uri, "", {}
    parsed = urllib.parse.urlsplit(uri)
    try:
        pairs = urllib.parse.parse_qsl(parsed.query, keep_blank_values=True, strict_parsing=bool(parsed.query))
    except ValueError:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"malformed query in device URI {uri!r}") from None
    raw = dict(pairs)
    if len(raw) != len(pairs):
        raise HalError(StatusCode.INVALID_ARGUMENT, f"device URI {uri!r} gives an option more than once")
    return parsed.scheme, parsed.netloc + parsed.path, _parse_options(raw)


# The registry.
_registry_lock = threading.Lock()
_factories: dict[str, Callable[[], HalDriver]] = {}
_drivers: dict[str, HalDriver] = {}
_devices: dict[str, HalDevice] = {}


def register_driver(name: str, factory: Callable[[], HalDriver]) -> None:
    """Registers `factory() -> HalDriver` under `name`; ALREADY_EXISTS if the name is taken."""
    with _registry_lock:
        if name in _factories:
            raise HalError(StatusCode.ALREADY_EXISTS, f"a driver named {name!r} is already registered")
        _factories[name] = factory


def query_available_drivers() -> list[str]:
    """Names of the registered drivers ("tenstorrent" and any added by register_driver)."""
    with _registry_lock:
        return list(_factories)


def create_hal_driver(name: str) -> HalDriver:
    """A new driver for a name or device URI, not cached (iree.runtime's `_binding.create_hal_driver`)."""
    name = parse_uri(name)[0]
    with _registry_lock:
        factory = _factories.get(name)
        if factory is None:
            raise HalError(StatusCode.NOT_FOUND, f"no driver {name!r} registered; available: {', '.join(_factories)}")
    return factory()


def get_driver(name: str) -> HalDriver:
    """The driver for a name or device URI (created once, then cached until clear_hal_driver_cache)."""
    name = parse_uri(name)[0]
    with _registry_lock:
        driver = _drivers.get(name)
    if driver is None:
        driver = create_hal_driver(name)
        with _registry_lock:
            driver = _drivers.setdefault(name, driver)
    return driver


def clear_hal_driver_cache() -> None:
    """Forgets the cached drivers: get_driver makes new ones (devices already open stay open)."""
    with _registry_lock:
        _drivers.clear()


def create_device(device_uri: str = DRIVER_NAME, allocators: list | None = None) -> HalDevice:
    """A new device for a URI such as 'tenstorrent' or 'tenstorrent://mock?arch=blackhole_p150'."""
    return get_driver(device_uri).create_device_by_uri(device_uri, allocators)


def get_device(device_uri: str = DRIVER_NAME, cache: bool = True) -> HalDevice:
    """The device for a URI, created once and then shared (as iree.runtime.get_device)."""
    if not cache:
        return create_device(device_uri)
    with _registry_lock:
        device = _devices.get(device_uri)
    if device is None:
        device = create_device(device_uri)
        with _registry_lock:
            device = _devices.setdefault(device_uri, device)
    return device


def get_first_device(device_uris=None, cache: bool = True) -> HalDevice:
    """The first device that can be had from a prioritized list of URIs (default: the
    comma-separated $IREE_DEFAULT_DEVICE, else "tenstorrent"), as
    iree.runtime.get_first_device: unknown drivers are skipped; if every URI fails,
    RuntimeError from the last failure, or ValueError when no driver was known."""
    if device_uris is None:
        device_uris = [uri.strip() for uri in os.environ.get("IREE_DEFAULT_DEVICE", DRIVER_NAME).split(",")]
    last_failure = None
    for uri in device_uris:
        try:
            return get_device(uri, cache=cache)
        except ValueError:  # a driver this process does not know
            continue
        except Exception as failure:  # noqa: BLE001 - kept and raised below, as iree.runtime does
            last_failure = failure
    if last_failure is not None:
        raise RuntimeError("Could not create device. Exception for last tried follows.") from last_failure
    raise ValueError(f"No device found from list {list(device_uris)}")


register_driver(DRIVER_NAME, HalDriver)
