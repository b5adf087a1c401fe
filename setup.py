"""Builds tt-hal's C++ extensions; the package metadata is in pyproject.toml.

- `tt_hal.target._conversions` (C++17, pybind11): tilize/untilize and the bf16 /
  bfp8_b / bfp4_b packers, twins of tt_hal/target's numba conversions. Built
  whenever a C++ compiler works; without one the package still installs and runs
  on the numba conversions, and says so.
- `tt_hal.native._tt_metal` (C++20, pybind11, CMake): the TT-Metal host API binding
  of the hardware backend (native/). Built only when a TT-Metal install is found
  through TT_METAL_HOME; see docs/hardware.md.

Why each extension was or was not built goes into a `_build_status.json` beside it
(tt_hal/target/extensions.py reads it), so that errors can name what is missing.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from pybind11.setup_helpers import Pybind11Extension
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
NATIVE = ROOT / "native"
STATUS_FILE = "_build_status.json"  # tt_hal.target.extensions.STATUS_FILE (setup.py cannot import the package)


class CMakeExtension(Extension):
    """An extension built by native/CMakeLists.txt (which finds TT-Metal's CMake package)."""

    def __init__(self, name: str):
        super().__init__(name, sources=[])


def tt_metal_home() -> pathlib.Path | None:
    home = os.environ.get("TT_METAL_HOME")
    return pathlib.Path(home) if home and pathlib.Path(home).is_dir() else None


class OptionalBuildExt(build_ext):
    """Builds each extension, but lets a failure leave the package in mock mode
    instead of failing `pip install`; the reason is recorded and printed."""

    def run(self):
        self.status = {}  # extension module name -> "built" or why not
        if tt_metal_home() is None:
            self.status[TT_METAL] = ("TT_METAL_HOME was not set to a TT-Metal install when tt-hal was installed"
                                     if not os.environ.get("TT_METAL_HOME") else
                                     f"TT_METAL_HOME={os.environ['TT_METAL_HOME']} is not a directory")
        super().run()
        for package in {name.rsplit(".", 1)[0] for name in self.status}:
            target = pathlib.Path(self.get_ext_fullpath(f"{package}.x")).parent
            target.mkdir(parents=True, exist_ok=True)
            status = {name.rsplit(".", 1)[1]: why for name, why in self.status.items()
                      if name.startswith(package + ".")}
            (target / STATUS_FILE).write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")

    def build_extension(self, ext):
        try:
            if isinstance(ext, CMakeExtension):
                self._build_cmake(ext)
            else:
                super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 - any failure means: run without this extension
            reason = f"the build failed: {type(error).__name__}: {error}"
            self.status[ext.name] = reason
            print(f"tt-hal: extension {ext.name} not built ({reason}); "
                  f"{'hardware mode is unavailable' if ext.name == TT_METAL else 'using the numba conversions'}",
                  file=sys.stderr)
            return
        self.status[ext.name] = "built"

    def _build_cmake(self, ext):
        out_dir = pathlib.Path(self.get_ext_fullpath(ext.name)).parent.resolve()
        build_dir = pathlib.Path(self.build_temp).resolve() / "tt_metal"
        import pybind11

        subprocess.run(["cmake", "-S", str(NATIVE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                        f"-DTT_METAL_HOME={tt_metal_home()}", f"-DTT_HAL_OUTPUT_DIR={out_dir}"], check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--parallel"], check=True)


TT_METAL = "tt_hal.native._tt_metal"
extensions = [Pybind11Extension("tt_hal.target._conversions", ["tt_hal/target/src/conversions.cpp"], cxx_std=17,
                                extra_compile_args=["-O3"])]
if tt_metal_home() is not None:
    extensions.append(CMakeExtension(TT_METAL))

setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
