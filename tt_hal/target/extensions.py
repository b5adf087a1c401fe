"""Optional C++ extensions (pybind11, built by setup.py) and why one is missing.

setup.py records, per extension, "built" or why not in `_build_status.json` beside
where the extension would be, so that an error can name what is missing."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import logging
import pathlib
from types import ModuleType

STATUS_FILE = "_build_status.json"
log = logging.getLogger(__name__)  # under the library's one `tt_hal` logger (hal/log.py)


@functools.cache
def build_status(package: str) -> dict[str, str]:
    """{extension: 'built' or why not} of `package` as setup.py recorded it at install time."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return {}
    try:
        return json.loads((pathlib.Path(spec.submodule_search_locations[0]) / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return {}


@functools.cache
def load(module_name: str, instead: str, level: int = logging.WARNING) -> tuple[ModuleType | None, str | None]:
    """(the extension module, None), or (None, why it cannot be used), said once at
    `level` with what runs `instead`."""
    try:
        return importlib.import_module(module_name), None
    except ImportError as error:
        package, name = module_name.rsplit(".", 1)
        recorded = build_status(package).get(name)
        if recorded and recorded != "built":
            reason = f"{module_name} was not built: {recorded}"
        elif recorded == "built":
            reason = f"{module_name} was built but does not load: {error}"
        else:
            reason = f"{module_name} is not built in this install (reinstall with `pip install -e .`): {error}"
        log.log(level, "%s; using %s", reason, instead)
        return None, reason
