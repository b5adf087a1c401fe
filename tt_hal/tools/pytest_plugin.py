"""pytest plugin for hardware-free CI of Tenstorrent programs (entry point `tt_hal`).

Fixtures:
    tt_driver   the `tenstorrent` HAL driver (`hal.get_driver("tenstorrent")`)
    tt_device   a fresh device per test, closed after it
Options:
    --tt-arch NAME   chip preset (tt_hal/target/arch.py ARCHS: wormhole_b0, blackhole_p150,
                     blackhole_p100, or n150 / p150 / p100)
    --tt-grid XxY    a smaller worker grid: X columns, Y rows
    --tt-mode MODE   mock | hardware | auto; default TT_HAL_MODE, else mock
Markers:
    @pytest.mark.tt_arch("blackhole_p150", grid=(2, 2))   this test's chip
    @pytest.mark.tt_all_archs                             once per distinct preset

The arch and grid come from, most specific first: tt_all_archs's parameter, the
tt_arch marker, the command line, the driver's default (TT_HAL_MOCK_ARCH or
wormhole_b0, full grid). The mode defaults to mock rather than the HAL's auto so
that a suite means the same on a laptop and on a machine with a card; an explicit
--tt-mode or TT_HAL_MODE still wins. On hardware a test that asks for another arch
or for a smaller grid is skipped: the card is what it is.

Compare results with `tt_hal.tools.testing.assert_device_close`. This module imports
only pytest at load time, since pytest loads it in every run.
"""

from __future__ import annotations

import argparse
import os
import urllib.parse

import pytest

MODES = ("mock", "hardware", "auto")


def _arch_name(value: str) -> str:
    """--tt-arch: a preset name, checked at once so that a typo is a usage error."""
    from tt_hal.target.arch import ARCHS

    if value not in ARCHS:
        raise argparse.ArgumentTypeError(f"unknown arch {value!r}; known: {', '.join(sorted(ARCHS))}")
    return value


def parse_grid(value) -> tuple[int, int]:
    """(x, y) worker columns and rows from "XxY" or a pair of ints, each at least 1."""
    try:
        x, y = (int(v) for v in (value.lower().split("x") if isinstance(value, str) else value))
    except (TypeError, ValueError):
        raise ValueError(f"grid {value!r}: expected XxY such as 2x2, or a pair (x, y)") from None
    if x < 1 or y < 1:
        raise ValueError(f"grid {value!r}: columns and rows must be at least 1")
    return x, y


def _grid_option(value: str) -> tuple[int, int]:
    try:
        return parse_grid(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def pytest_addoption(parser):
    group = parser.getgroup("tt_hal", "tt-hal simulated Tenstorrent device")
    group.addoption("--tt-arch", type=_arch_name, metavar="NAME",
                    help="chip preset of tt_device: wormhole_b0 (n150), blackhole_p150 (p150), blackhole_p100 (p100)")
    group.addoption("--tt-grid", type=_grid_option, metavar="XxY",
                    help="shrink tt_device's worker grid to X columns and Y rows, e.g. 2x2")
    group.addoption("--tt-mode", choices=MODES,
                    help="device mode of tt_device; default TT_HAL_MODE, else mock (hardware-free)")


def pytest_configure(config):
    config.addinivalue_line("markers", "tt_arch(name=None, grid=None): open tt_device as chip preset `name` "
                                       "(e.g. 'blackhole_p150') with worker grid `grid` = (columns, rows)")
    config.addinivalue_line("markers", "tt_all_archs: run the test once per distinct chip preset, "
                                       "tt_device being each in turn")


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("tt_all_archs") is None:
        return
    if "tt_device" not in metafunc.fixturenames:
        pytest.fail(f"{metafunc.definition.name}: tt_all_archs runs the test per arch through tt_device, "
                    f"which it does not use", pytrace=False)
    from tt_hal.target.arch import ARCHS

    names = list(dict.fromkeys(spec.name for spec in ARCHS.values()))  # aliases share their preset's spec
    metafunc.parametrize("tt_device", names, indirect=True)


def _marker_selection(marker) -> tuple[str | None, tuple[int, int] | None]:
    def select(name=None, grid=None):
        return name, grid

    try:
        name, grid = select(*marker.args, **marker.kwargs)
        return name, None if grid is None else parse_grid(grid)
    except (TypeError, ValueError) as error:
        pytest.fail(f"@pytest.mark.tt_arch: {error}; expected tt_arch(name=None, grid=(x, y))", pytrace=False)


def _selection(request) -> tuple[str | None, tuple[int, int] | None]:
    """The (arch, grid) this test asks for; None leaves the driver's default."""
    arch, grid = request.config.getoption("tt_arch"), request.config.getoption("tt_grid")
    marker = request.node.get_closest_marker("tt_arch")
    if marker is not None:
        name, marker_grid = _marker_selection(marker)
        arch, grid = name or arch, marker_grid or grid
    return getattr(request, "param", arch), grid


def _open_mock(driver, arch, grid):
    """The simulator rejects unknown arches and grids larger than the chip (INVALID_ARGUMENT)."""
    options = {} if arch is None else {"arch": arch}
    if grid is not None:
        options.update(grid_x=grid[0], grid_y=grid[1])
    return driver.create_device_by_uri("tenstorrent://mock?" + urllib.parse.urlencode(options))


def _open_hardware(arch, grid):
    import hal
    from tt_hal.target.arch import get_arch

    if grid is not None:
        pytest.skip("a smaller worker grid exists only on the simulated chip")
    # A driver of its own: an explicit --tt-mode must win over TT_HAL_MODE, which the registry's driver reads.
    device = hal.HalDriver(mode="hardware").create_default_device()
    if arch is not None and device.arch.name != get_arch(arch).name:
        found = device.arch.name
        device.close()
        pytest.skip(f"needs {arch}; the device is {found}")
    return device


@pytest.fixture(scope="session")
def tt_driver():
    """The `tenstorrent` HAL driver."""
    import hal

    return hal.get_driver("tenstorrent")


@pytest.fixture
def tt_device(request, tt_driver):
    """A new device for this test (a simulated chip unless --tt-mode / TT_HAL_MODE say
    otherwise), closed after it, so that no buffer or queue state leaks between tests."""
    from hal.backend import resolve_mode

    arch, grid = _selection(request)
    mode = resolve_mode(request.config.getoption("tt_mode") or os.environ.get("TT_HAL_MODE") or "mock")
    device = _open_mock(tt_driver, arch, grid) if mode == "mock" else _open_hardware(arch, grid)
    yield device
    device.close()
