"""Finding drivers and devices, as `iree.runtime.system_setup`: the same functions under
the same module name, so `from hal import system_setup` works where a script imported
iree.runtime's. The functions are hal.driver's."""

from hal.driver import DRIVER_NAME as DEFAULT_DRIVER_NAMES
from hal.driver import get_device, get_driver, get_first_device, query_available_drivers

__all__ = ["DEFAULT_DRIVER_NAMES", "get_device", "get_driver", "get_first_device", "query_available_drivers"]
