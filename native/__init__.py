"""tt-hal's native layer (pybind11), built by `pip install` (setup.py).

- `native._conversions`: C++ twins of the host conversions in sim/tiles.py and
  sim/formats.py (tilize/untilize, bf16, bfp8_b, bfp4_b), byte-identical to them.
  Built wherever a C++17 compiler works.
- `native._tt_metal`: the TT-Metal host API binding behind `native.device`, the
  hardware backend. Built only against a TT-Metal install (docs/hardware.md).
- `native.codegen`: TT-Metal C++ kernel source from hal.isa programs; pure Python,
  so kernels can be generated and checked on any machine.

What was not built, and why, is in `_build_status.json` (written by setup.py), so
that errors can name what is missing. Missing conversions are said once per process
(a warning on the `tt_hal.native` logger); a missing TT-Metal binding is the normal
case off hardware, and is said only where hardware is asked for.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import pathlib

from hal.log import get_logger

_log = get_logger("native")
_HERE = pathlib.Path(__file__).resolve().parent


@functools.cache
def build_status() -> dict[str, str]:
    """{extension: 'built' or why not} as setup.py recorded it at install time."""
    try:
        return json.loads((_HERE / "_build_status.json").read_text())
    except (OSError, ValueError):
        return {}


@functools.cache
def _load(name: str):
    """The extension module `name`, or the reason it cannot be used (said once)."""
    try:
        return importlib.import_module(f"native.{name}"), None
    except ImportError as error:
        recorded = build_status().get(name)
        if recorded and recorded != "built":
            reason = f"native.{name} was not built: {recorded}"
        elif recorded == "built":
            reason = f"native.{name} was built but does not load: {error}"
        else:
            reason = f"native.{name} is not built in this install (reinstall with `pip install -e .`): {error}"
        _log.log(logging.INFO if name == "_tt_metal" else logging.WARNING, "%s; using the %s", reason,
                 "simulator" if name == "_tt_metal" else "numba conversions")
        return None, reason


def conversions():
    """The C++ conversion kernels (module native._conversions), or None."""
    return _load("_conversions")[0]


def conversions_unavailable_reason() -> str | None:
    return _load("_conversions")[1]


def tt_metal():
    """The TT-Metal host API binding (module native._tt_metal), or None."""
    return _load("_tt_metal")[0]


def hardware_unavailable_reason() -> str | None:
    """None when hardware mode can run: the TT-Metal binding is built and sees at
    least one Tenstorrent device; otherwise what is missing, for a person to act on."""
    binding, reason = _load("_tt_metal")
    if binding is None:
        return reason
    count = binding.get_num_available_devices()
    if count == 0:
        return "native._tt_metal is built, but TT-Metal sees no Tenstorrent device (GetNumAvailableDevices() = 0)"
    return None


def query_devices() -> list[dict]:
    from native.device import query_devices

    return query_devices()


def open_device(device_ordinal: int = 0, arch: str | None = None, **options):
    from native.device import HardwareDevice

    return HardwareDevice(device_ordinal, arch=arch, **options)
