"""Builds tt-hal's native extensions; the package metadata is in pyproject.toml.

- `native._conversions` (C++17, pybind11): tilize/untilize and the bf16 / bfp8_b /
  bfp4_b packers. Built whenever a C++ compiler works; without one the package
  still installs and runs on the numba conversions (mock mode), and says so.
- `native._tt_metal` (C++17, pybind11, CMake): the TT-Metal host API binding of
  the hardware backend. Built only when a TT-Metal install is found through
  TT_METAL_HOME; see docs/hardware.md.

Why each extension was or was not built goes into native/_build_status.json, so
that TT_HAL_MODE=hardware can name what is missing.
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
        self.status = {}
        if tt_metal_home() is None:
            self.status["_tt_metal"] = ("TT_METAL_HOME was not set to a TT-Metal install when tt-hal was installed"
                                        if not os.environ.get("TT_METAL_HOME") else
                                        f"TT_METAL_HOME={os.environ['TT_METAL_HOME']} is not a directory")
        super().run()
        target = pathlib.Path(self.get_ext_fullpath("native._conversions")).parent
        target.mkdir(parents=True, exist_ok=True)
        (target / "_build_status.json").write_text(json.dumps(self.status, indent=1, sort_keys=True) + "\n")

    def build_extension(self, ext):
        short = ext.name.rsplit(".", 1)[-1]
        try:
            if isinstance(ext, CMakeExtension):
                self._build_cmake(ext)
            else:
                super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 - any failure means: run without this extension
            reason = f"the build failed: {type(error).__name__}: {error}"
            self.status[short] = reason
            print(f"tt-hal: native extension {ext.name} not built ({reason}); "
                  f"{'hardware mode is unavailable' if short == '_tt_metal' else 'using the numba conversions'}",
                  file=sys.stderr)
            return
        self.status[short] = "built"

    def _build_cmake(self, ext):
        out_dir = pathlib.Path(self.get_ext_fullpath(ext.name)).parent.resolve()
        build_dir = pathlib.Path(self.build_temp).resolve() / "tt_metal"
        import pybind11

        subprocess.run(["cmake", "-S", str(NATIVE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                        f"-DTT_METAL_HOME={tt_metal_home()}", f"-DTT_HAL_OUTPUT_DIR={out_dir}"], check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--parallel"], check=True)


extensions = [Pybind11Extension("native._conversions", ["native/src/conversions.cpp"], cxx_std=17,
                                extra_compile_args=["-O3"])]
if tt_metal_home() is not None:
    extensions.append(CMakeExtension("native._tt_metal"))

setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
