"""The simulated Tenstorrent chip (imported as `tt_hal.sim`): the mock-mode backend
behind `hal/backend.py`. Memory (memory), command queues and the device (device),
running programs on the cores (dispatch) and the Tensix core model: the instruction
loop (interpreter), circular buffers and the NoC (dataflow), compute on Dst
(compute), the compute engine's numerics (numerics) and fault codes (faults); the
interpreter calls the tile ops by address so that each compiles once (indirect).

The HAL finds this package by name (`hal.backend.BACKENDS`) and calls the three
functions below; nothing is imported until a device opens."""

from __future__ import annotations

if __name__ != "tt_hal.sim":  # e.g. `from sim import numerics` run from the repository's root
    raise ImportError(f"the simulator is the package tt_hal.sim (pyproject's package-dir), imported here as "
                      f"{__name__!r}: import it as tt_hal.sim. Under another name its numba cache entries would "
                      f"name a module that other processes cannot import (they then fail with \"No module named "
                      f"'sim'\" until sim/__pycache__'s .nbi/.nbc files are deleted)")


def open_device(device_ordinal: int = 0, arch=None, **options):
    """A simulated chip (`arch` preset name, default wormhole_b0; options as SimDevice takes them)."""
    from tt_hal.sim.device import SimDevice

    return SimDevice(arch=arch, **options)


def unavailable_reason() -> str | None:
    """The simulator runs wherever the package imports."""
    return None
