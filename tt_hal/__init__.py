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
alone. What runs here: a check that numba's caches of the simulator are not stale,
and, when they are missing (a fresh install, or just dropped as stale), a one-line
notice on stderr at the first compile that the simulator's kernels take about a
minute to compile (the only line the library writes itself, so that a first run is
not a silent minute; TT_HAL_QUIET=1 turns it off).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import sys

QUIET_ENVIRONMENT = "TT_HAL_QUIET"
COMPILE_NOTICE = ("tt-hal: compiling the simulator's kernels (10-20 seconds, once per install; "
                  f"{QUIET_ENVIRONMENT}=1 hides this notice)")


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
            cache = numba_cache_directory(directory)
            for cached in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
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


def numba_cache_directory(directory: pathlib.Path) -> pathlib.Path:
    """Where numba caches the functions of `directory`'s modules: under NUMBA_CACHE_DIR
    when it is set (numba's UserProvidedCacheLocator), else __pycache__ beside them."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        return directory / "__pycache__"
    path = os.path.abspath(directory)
    return pathlib.Path(root) / f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def numba_caches_missing(directories: list[pathlib.Path]) -> bool:
    """True when the numba cache of any of `directories` holds no compiled function
    (an index, *.nbi): the first run compiles them all."""
    return any(not any(numba_cache_directory(d).glob("*.nbi")) for d in directories)


def quiet() -> bool:
    """TT_HAL_QUIET set (to anything but 0): no notices."""
    return os.environ.get(QUIET_ENVIRONMENT, "") not in ("", "0")


def notice_first_compile(directories: list[pathlib.Path]) -> bool:
    """When the numba caches of `directories` are missing (numba_caches_missing) and
    TT_HAL_QUIET is not set, arranges that the first numba compile of a function of
    theirs in this process writes COMPILE_NOTICE to stderr, once. True when armed."""
    if quiet() or not numba_caches_missing(directories):
        return False
    sources = {os.path.abspath(d) for d in directories}

    from numba.core import event  # only on a cold cache, where seconds of compiling follow

    class FirstCompile(event.Listener):
        noticed = False

        def on_start(self, ev) -> None:
            function = getattr(ev.data.get("dispatcher"), "py_func", None)
            if self.noticed or function is None:
                return
            if os.path.dirname(os.path.abspath(function.__code__.co_filename)) in sources:
                self.noticed = True
                # A line of its own, not a log record: IREE's compiler configures the root
                # logger on import, which would prefix it with WARNING:tt_hal:.
                sys.stderr.write(COMPILE_NOTICE + "\n")
                sys.stderr.flush()

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", FirstCompile())
    return True


_SIMULATOR = _simulator_directories()
drop_stale_numba_caches(_SIMULATOR, pathlib.Path(__file__).parent / "target" / "__pycache__" / "numba-sources.sha256")
notice_first_compile(_SIMULATOR)
