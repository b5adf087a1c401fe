"""tt-hal beyond the HAL: everything that is not `hal` (the IREE HAL mirror), the
simulator (`tt_hal.sim`, the repository's sim/) or the native layer
(`tt_hal.native`, native/). Subpackages, bottom up:

- `target`: what a Tensix chip and its programs are (arch presets, data formats,
  tile layout and host conversions, the ISA, kernel builder, programs, .ttx);
- `kernels`: the kernel library (parameterised programs);
- `ops`: device tensors' eager TTNN-style ops over `hal`;
- `runtime`: IREE `.vmfb` programs run by iree.runtime's VM, its `hal` imports served
  by `hal`;
- `compiler`: the IREE bridge (MLIR -> a `.vmfb` whose dispatches are Tensix programs);
- `tools`: the `tt-hal` command line, the pytest plugin, testing helpers, pictures.

Nothing of the project is imported here: `import tt_hal.target.isa` loads the ISA
alone. What runs here: a check that numba's caches of the simulator are not stale.
"""

from __future__ import annotations

import hashlib
import importlib.util
import pathlib


def drop_stale_numba_caches(directories: list[pathlib.Path], stamp: pathlib.Path) -> None:
    """numba keys a function's on-disk cache by its own source file only, but the
    simulator's kernels compile in functions and constants of other files (a NoC bounds
    check, an ISA opcode): after an edit or an upgrade there, a cached kernel would run
    the old code. So the caches of `directories` go when any of their sources changed
    (`stamp` keeps the digest of the sources the caches were built from)."""
    digest = hashlib.sha256()
    for directory in directories:
        for source in sorted(directory.glob("*.py")):
            digest.update(source.name.encode() + source.read_bytes())
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        for directory in directories:
            for cached in [*directory.glob("__pycache__/*.nbi"), *directory.glob("__pycache__/*.nbc")]:
                cached.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: numba then caches elsewhere, or not at all
        pass


def _simulator_directories() -> list[pathlib.Path]:
    """tt_hal/target and the simulator's package (the repository's sim/)."""
    directories = [pathlib.Path(__file__).parent / "target"]
    spec = importlib.util.find_spec("tt_hal.sim")
    if spec is not None and spec.submodule_search_locations:
        directories.append(pathlib.Path(next(iter(spec.submodule_search_locations))))
    return directories


drop_stale_numba_caches(_simulator_directories(),
                        pathlib.Path(__file__).parent / "target" / "__pycache__" / "numba-sources.sha256")
