"""Optional C++ extensions (pybind11, built by setup.py) and why one is missing.

setup.py records, per extension, "built" or why not in `_build_status.json` beside
where the extension would be, so that an error can name what is missing."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import pathlib
from types import ModuleType

STATUS_FILE = "_build_status.json"


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


def load(module_name: str) -> tuple[ModuleType | None, str | None]:
    """(the extension module, None), or (None, why it cannot be used)."""
    try:
        return importlib.import_module(module_name), None
    except ImportError as error:
        package, name = module_name.rsplit(".", 1)
        recorded = build_status(package).get(name)
        if recorded and recorded != "built":
            return None, f"{module_name} was not built: {recorded}"
        if recorded == "built":
            return None, f"{module_name} was built but does not load: {error}"
        return None, f"{module_name} is not built in this install (reinstall with `pip install -e .`): {error}"
