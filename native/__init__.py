"""tt-hal's native layer (imported as `tt_hal.native`): the hardware-mode backend
behind `hal/backend.py`, on TT-Metal.

- `_tt_metal`: the TT-Metal host API binding (pybind11, native/src/tt_metal.cpp)
  behind `device`, the hardware backend. Built by `pip install` (setup.py) only
  against a TT-Metal install (docs/hardware.md).
- `codegen`: TT-Metal C++ kernel source from tt_hal.target.isa programs; pure
  Python, so kernels can be generated and checked on any machine.

The HAL finds this package by name (`hal.backend.BACKENDS`) and calls
`open_device`, `unavailable_reason` and `query_devices`. What was not built, and
why, is in `_build_status.json` (written by setup.py), so that errors can name what
is missing; off hardware that is the normal case, said only where hardware is asked for.
"""

from __future__ import annotations

import logging

from tt_hal.target import extensions

BINDING = "tt_hal.native._tt_metal"


def _load():
    """The TT-Metal binding module, or the reason it cannot be used (said once, at INFO:
    off hardware this is the normal case)."""
    return extensions.load(BINDING, "the simulator", logging.INFO)


def tt_metal():
    """The TT-Metal host API binding (module tt_hal.native._tt_metal), or None."""
    return _load()[0]


def unavailable_reason() -> str | None:
    """None when hardware mode can run: the TT-Metal binding is built and sees at
    least one Tenstorrent device; otherwise what is missing, for a person to act on."""
    binding, reason = _load()
    if binding is None:
        return reason
    count = binding.get_num_available_devices()
    if count == 0:
        return f"{BINDING} is built, but TT-Metal sees no Tenstorrent device (GetNumAvailableDevices() = 0)"
    return None


def query_devices() -> list[dict]:
    from tt_hal.native.device import query_devices

    return query_devices()


def open_device(device_ordinal: int = 0, arch: str | None = None, **options):
    from tt_hal.native.device import HardwareDevice

    return HardwareDevice(device_ordinal, arch=arch, **options)
