"""The layers of the project and their import rules (../shared/DESIGN.md section 1),
checked on every import statement of every module, module-level or not:

    hal.status, hal.log             leaves: import nothing of the project
    tt_hal.target                   the chip and its programs: only hal.status
    tt_hal.kernels                  the kernel library: the target
    hal                             the HAL mirror: the target, never a backend
    tt_hal.sim, tt_hal.native       the backends: hal.backend (and its leaves) and the target,
                                    never each other
    tt_hal.ops, tt_hal.runtime,     layers above the HAL
    tt_hal.compiler, tt_hal.tools

No package `__init__` imports its own submodules eagerly, so importing `hal.status`
or the ISA loads only what it needs.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Directories and the packages they are imported as (pyproject.toml's package-dir).
PACKAGES = {"hal": "hal", "tt_hal": "tt_hal", "sim": "tt_hal.sim", "native": "tt_hal.native"}
HAL_LEAVES = ("hal.status", "hal.log")
BACKEND_SEAM = ("hal.backend", *HAL_LEAVES)
# Layer (module prefix) -> the project modules it may import (prefixes); the longest prefix wins.
RULES = {
    "hal.status": (),
    "hal.log": (),
    "tt_hal": (),
    "tt_hal.target": ("hal.status", "tt_hal.target"),
    "tt_hal.kernels": ("hal.status", "tt_hal.target", "tt_hal.kernels"),
    "hal": ("hal", "tt_hal.target"),
    "tt_hal.sim": (*BACKEND_SEAM, "tt_hal.target", "tt_hal.sim"),
    "tt_hal.native": (*BACKEND_SEAM, "tt_hal.target", "tt_hal.native"),
    "tt_hal.ops": ("hal", "tt_hal.target", "tt_hal.kernels", "tt_hal.ops"),
    "tt_hal.runtime": ("hal", "tt_hal.target", "tt_hal.kernels", "tt_hal.ops", "tt_hal.runtime"),
    "tt_hal.compiler": ("hal", "tt_hal.target", "tt_hal.kernels", "tt_hal.runtime", "tt_hal.compiler"),
    "tt_hal.tools": ("hal", "tt_hal"),
}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts[0] = PACKAGES[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, pathlib.Path]:
    return {module_name(path): path for directory in PACKAGES for path in sorted((ROOT / directory).rglob("*.py"))}


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def is_project(module: str) -> bool:
    return within(module, "hal") or within(module, "tt_hal")


def imports(module: str, path: pathlib.Path) -> list[tuple[int, str, bool]]:
    """(line, imported project module, at module level) of every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found += [(node.lineno, name, id(node) in top_level) for name in names if is_project(name)]
    return found


MODULES = project_modules()


def layer(module: str) -> str:
    return max((prefix for prefix in RULES if within(module, prefix)), key=len)


def test_every_module_belongs_to_a_layer():
    assert "hal.driver" in MODULES and "tt_hal.sim.device" in MODULES and "tt_hal.target.isa" in MODULES
    assert all(is_project(module) for module in MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    allowed = RULES[layer(module)]
    breaks = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {name}"
              for line, name, _ in imports(module, MODULES[module])
              if not any(within(name, prefix) for prefix in allowed)]
    assert not breaks, f"layer {layer(module)} may import only {allowed or 'nothing of the project'}:\n" + "\n".join(
        breaks)


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_no_package_init_imports_its_submodules_eagerly(module):
    eager = [name for _, name, top in imports(module, MODULES[module])
             if top and within(name, module) and name != module]
    assert not eager, f"{module}/__init__.py imports {eager} when the package is imported"


def loaded_by(statement: str) -> set[str]:
    """The project modules (and the heavy dependencies) a fresh interpreter loads for `statement`
    (TT_HAL_QUIET: on a cold numba cache, tt_hal's first-compile notice would load numba)."""
    script = (f"import sys\n{statement}\n"
              "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
              "('hal', 'tt_hal', 'numba', 'flatbuffers', 'iree')))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            check=True, env={**os.environ, "TT_HAL_QUIET": "1"})
    return set(result.stdout.split())


def test_importing_the_status_codes_loads_only_them():
    assert loaded_by("import hal.status") == {"hal", "hal.status"}


def test_importing_the_isa_loads_the_isa_and_the_status_codes():
    assert loaded_by("import tt_hal.target.isa") == {"hal", "hal.status", "tt_hal", "tt_hal.target",
                                                     "tt_hal.target.isa"}


def test_import_hal_loads_no_backend_kernel_library_or_compiler():
    loaded = loaded_by("import hal; hal.HalError, hal.BufferUsage")
    assert loaded == {"hal", "hal.status", "hal.types"}, loaded


def test_a_device_loads_the_simulator_by_name_not_the_kernel_library_or_compiler():
    loaded = loaded_by("import hal; hal.create_device('tenstorrent://mock').close()")
    assert any(within(m, "tt_hal.sim") for m in loaded)
    assert not any(within(m, prefix) for m in loaded for prefix in ("tt_hal.kernels", "tt_hal.compiler", "iree",
                                                                    "tt_hal.ops", "tt_hal.native.device"))


def test_numba_caches_go_when_any_simulator_source_changes(tmp_path):
    """A kernel's cache is keyed by its own file; one file's edit must drop them all."""
    from tt_hal import drop_stale_numba_caches

    first, second = tmp_path / "target", tmp_path / "sim"
    for directory in (first, second):
        (directory / "__pycache__").mkdir(parents=True)
        (directory / "code.py").write_text("X = 1\n")
    stamp = first / "__pycache__" / "stamp"
    drop_stale_numba_caches([first, second], stamp)
    cache = second / "__pycache__" / "code.kernel-1.py311.nbi"
    cache.write_bytes(b"index")
    drop_stale_numba_caches([first, second], stamp)
    assert cache.exists()  # sources unchanged: the cache stays
    (first / "code.py").write_text("X = 2\n")  # another file than the cached function's
    drop_stale_numba_caches([first, second], stamp)
    assert not cache.exists()


def test_the_simulator_refuses_a_name_other_than_tt_hal_sim():
    """Imported as a top-level `sim` (from the repository's root), its numba caches would
    name a module other processes cannot import: the import fails and says how to import
    it, before any cache is written."""
    result = subprocess.run([sys.executable, "-c", "from sim import numerics"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode != 0 and "ImportError" in result.stderr
    assert "import it as tt_hal.sim" in result.stderr
    assert "tt_hal.sim" in loaded_by("import tt_hal.sim")
