"""The simulated Tenstorrent chip: the mock-mode implementation of `hal/backend.py`."""

from sim.arch import ARCHS, ArchSpec, get_arch
from sim.device import SimDevice

__all__ = ["ARCHS", "ArchSpec", "SimDevice", "get_arch"]
