"""The pytest plugin (tt_hal/tools/pytest_plugin.py) through pytester, and the closeness
checks (tt_hal/tools/testing.py) directly against numpy references.

Inner runs are in-process (`runpytest`), which loads the plugin through its
`pytest11` entry point as a user's run would; one subprocess run checks the entry
point from a clean interpreter. Hardware mode runs against a fake card: `native`'s
functions patched to report one device and open a simulated blackhole_p150.

An in-process run forgets the modules it imported when it ends, and numba cannot
import its lazily loaded modules twice; so this module imports what the inner runs
use, and `_numba_loaded` has numba load its modules, before any inner run.
"""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numba
import numpy as np
import pytest

import hal
import tt_hal.compiler.tolerance  # noqa: F401 (see the module docstring)
import tt_hal.native as native
from tt_hal import ops
from tt_hal.sim.device import SimDevice
from tt_hal.tools.testing import assert_device_close, default_tolerance

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module", autouse=True)
def _numba_loaded():
    numba.njit(lambda: 0)()  # a first compile imports numba's lazily loaded implementations


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    """Inner runs see the plugin's defaults, whatever this run's environment says."""
    monkeypatch.delenv("TT_HAL_MODE", raising=False)
    monkeypatch.delenv("TT_HAL_MOCK_ARCH", raising=False)


def test_entry_point_loads_plugin_in_a_clean_interpreter(pytester):
    pytester.makepyfile("""
        import hal
        import tt_hal.tools.pytest_plugin

        def test_default(request, tt_device, tt_driver):
            assert request.config.pluginmanager.get_plugin("tt_hal") is tt_hal.tools.pytest_plugin
            assert tt_driver is hal.get_driver("tenstorrent")
            assert tt_device.driver is tt_driver
            assert tt_device.backend.mode == "mock"
            assert (tt_device.arch.name, tt_device.arch.grid_x, tt_device.arch.grid_y) == ("wormhole_b0", 8, 8)
    """)
    result = pytester.runpytest_subprocess("--strict-markers")
    result.assert_outcomes(passed=1)


def test_plugin_can_be_disabled(pytester):
    pytester.makepyfile("def test_x(tt_device): pass")
    result = pytester.runpytest("-p", "no:tt_hal")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'tt_device' not found*"])


def test_plugin_import_is_cheap_and_helper_needs_no_pytest():
    code = ("import sys\n"
            "import tt_hal.tools.pytest_plugin\n"
            "assert not {'hal', 'numpy', 'sim'} & set(sys.modules), sorted(sys.modules)\n"
            "sys.modules['pytest'] = None  # import pytest now fails\n"
            "import tt_hal.tools.testing\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_each_test_gets_a_fresh_device_closed_after_it(pytester):
    pytester.makepyfile("""
        import numpy as np
        import pytest
        import hal

        seen = []

        def test_first(tt_device):
            seen.append(tt_device)
            tt_device.to_device(np.ones((64, 64), np.float32))
            assert tt_device.allocator.statistics["device_bytes_allocated"] > 0

        def test_second(tt_device):
            (first,) = seen
            assert tt_device is not first
            assert set(tt_device.allocator.statistics.values()) == {0}
            with pytest.raises(hal.HalError, match="closed"):
                first.queue_fill(first.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL,
                                                                 hal.BufferUsage.DEFAULT, 64),
                                 b"\\0", [], [(first.create_semaphore(0), 1)])
    """)
    pytester.runpytest().assert_outcomes(passed=2)


def test_tt_arch_option(pytester):  # aliases: the grid and marker tests use p150 and p100
    pytester.makepyfile("""
        from tt_hal.target.arch import ARCHS

        def test_arch(tt_device):
            assert tt_device.arch.name == "blackhole_p150"
            assert tt_device.arch == ARCHS["blackhole_p150"]
    """)
    pytester.runpytest("--tt-arch", "blackhole_p150").assert_outcomes(passed=1)


def test_tt_grid_option_shrinks_the_worker_grid(pytester):
    pytester.makepyfile("""
        def test_grid(tt_device):
            assert (tt_device.arch.name, tt_device.arch.grid_x, tt_device.arch.grid_y) == ("blackhole_p150", 2, 3)
            assert tt_device.query_i64("tt.device", "worker_cores") == 6
    """)
    pytester.runpytest("--tt-arch", "p150", "--tt-grid", "2x3").assert_outcomes(passed=1)


def test_tt_arch_marker_beats_the_command_line(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.tt_arch("blackhole_p150", grid=(2, 2))
        def test_both(tt_device):
            assert (tt_device.arch.name, tt_device.arch.grid_x, tt_device.arch.grid_y) == ("blackhole_p150", 2, 2)

        @pytest.mark.tt_arch(grid="1x4")
        def test_grid_only(tt_device):
            assert (tt_device.arch.name, tt_device.arch.grid_x, tt_device.arch.grid_y) == ("blackhole_p100", 1, 4)

        @pytest.mark.tt_arch("wormhole_b0")
        class TestClass:
            def test_arch_only(self, tt_device):
                assert (tt_device.arch.name, tt_device.arch.grid_x, tt_device.arch.grid_y) == ("wormhole_b0", 3, 3)

        def test_unmarked(tt_device):
            assert (tt_device.arch.name, tt_device.arch.grid_x) == ("blackhole_p100", 3)
    """)
    result = pytester.runpytest("--strict-markers", "--tt-arch", "p100", "--tt-grid", "3x3")
    result.assert_outcomes(passed=4)


def test_tt_all_archs_runs_once_per_distinct_preset(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.tt_all_archs
        def test_each(request, tt_device):
            assert tt_device.arch.name == request.node.callspec.id
            assert (tt_device.arch.grid_x, tt_device.arch.grid_y) == (2, 2)

        @pytest.mark.tt_all_archs
        @pytest.mark.parametrize("n", [1, 2])
        def test_with_params(tt_device, n):
            pass
    """)
    result = pytester.runpytest("-v", "--strict-markers", "--tt-arch", "p100", "--tt-grid", "2x2")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines_random([
        "*::test_each[[]wormhole_b0[]] PASSED*",
        "*::test_each[[]blackhole_p150[]] PASSED*",
        "*::test_each[[]blackhole_p100[]] PASSED*",
        "*::test_with_params[[]blackhole_p150-2[]] PASSED*",
    ])
    result.stdout.no_fnmatch_line("*[[]n150*")


def test_tt_all_archs_without_tt_device_is_a_collection_error(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.tt_all_archs
        def test_no_device():
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*test_no_device: tt_all_archs runs the test per arch through tt_device*"])


@pytest.mark.parametrize("args, message", [
    (["--tt-arch", "wormhole"], "*argument --tt-arch: unknown arch 'wormhole'; known: blackhole_p100, *"),
    (["--tt-grid", "2by2"], "*argument --tt-grid: grid '2by2': expected XxY*"),
    (["--tt-grid", "0x2"], "*argument --tt-grid: grid '0x2': columns and rows must be at least 1*"),
    (["--tt-mode", "sim"], "*argument --tt-mode: invalid choice: 'sim'*"),
])
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makepyfile("def test_x(tt_device): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_bad_markers_and_grids_fail_the_test_setup(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.tt_arch("wormhole_b1")
        def test_unknown_arch(tt_device):
            pass

        @pytest.mark.tt_arch(grid=(2,))
        def test_bad_grid(tt_device):
            pass

        @pytest.mark.tt_arch("wormhole_b0", grid=(9, 1))
        def test_grid_too_large(tt_device):
            pass

        @pytest.mark.tt_arch("wormhole_b0", "1x1", grid=(1, 1))
        def test_two_grids(tt_device):
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines_random([
        "*unknown arch 'wormhole_b1'*",
        "*@pytest.mark.tt_arch: grid (2,): expected XxY such as 2x2, or a pair (x, y)*",
        "*grid_x=9; wormhole_b0's worker grid is 8x8*",
        "*@pytest.mark.tt_arch: *got multiple values for argument 'grid'*",
    ])


_MODE_TEST = """
    def test_mode(tt_device):
        assert tt_device.backend.mode == "mock"
"""


@pytest.fixture
def no_hardware(monkeypatch):
    monkeypatch.setattr(native, "unavailable_reason", lambda: "no card (test)")


@pytest.mark.parametrize("env, args, outcome", [
    ("hardware", [], {"errors": 1}),  # TT_HAL_MODE is honoured ...
    ("hardware", ["--tt-mode", "mock"], {"passed": 1}),  # ... but --tt-mode wins
    (None, ["--tt-mode", "hardware"], {"errors": 1}),
    (None, ["--tt-mode", "auto"], {"passed": 1}),  # auto falls back to the simulator
])
def test_mode_selection(pytester, monkeypatch, no_hardware, env, args, outcome):
    if env is not None:
        monkeypatch.setenv("TT_HAL_MODE", env)
    pytester.makepyfile(_MODE_TEST)
    result = pytester.runpytest(*args)
    result.assert_outcomes(**outcome)
    if "errors" in outcome:
        result.stdout.fnmatch_lines(["*UNAVAILABLE*hardware layer cannot run: no card (test)*"])


@pytest.fixture
def fake_card(monkeypatch):
    """One TT-Metal device, a blackhole_p150 (simulated behind the hardware entry points)."""
    monkeypatch.setattr(native, "unavailable_reason", lambda: None)
    monkeypatch.setattr(native, "query_devices",
                        lambda: [{"device_id": 0, "path": "0", "name": "fake p150", "mode": "hardware"}])
    monkeypatch.setattr(native, "open_device", lambda ordinal, arch=None, **options: SimDevice("blackhole_p150"))


@pytest.mark.parametrize("args, arch", [([], "wormhole_b0"), (["--tt-mode", "auto"], "blackhole_p150")])
def test_default_mode_is_the_simulator_even_beside_a_card(pytester, fake_card, args, arch):
    pytester.makepyfile(f"""
        def test_which(tt_device):
            assert tt_device.arch.name == {arch!r}
    """)
    pytester.runpytest(*args).assert_outcomes(passed=1)


def test_hardware_mode_skips_what_the_card_cannot_be(pytester, fake_card, monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "mock")  # --tt-mode beats it
    pytester.makepyfile("""
        import pytest

        def test_card(tt_device):
            assert tt_device.arch.name == "blackhole_p150"
            assert tt_device.ordinal == 0 and tt_device.driver.mode == "hardware"

        @pytest.mark.tt_all_archs
        def test_each(tt_device):
            assert tt_device.arch.name == "blackhole_p150"

        @pytest.mark.tt_arch(grid=(2, 2))
        def test_small_grid(tt_device):
            pass
    """)
    result = pytester.runpytest("--tt-mode", "hardware", "-rs")
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines_random([
        "*needs wormhole_b0; the device is blackhole_p150*",
        "*needs blackhole_p100; the device is blackhole_p150*",
        "*a smaller worker grid exists only on the simulated chip*",
    ])


def test_assert_helper_in_a_user_test(pytester):
    pytester.makepyfile("""
        import numpy as np
        from tt_hal.tools.testing import assert_device_close

        def data():
            return np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32)

        def test_bf16_round_trip(tt_device):
            assert_device_close(tt_device.to_device(data(), "bfloat16", layout="tile"), data())

        def test_real_error(tt_device):
            x = data()
            y = x.copy()
            y[40, 70] += 0.5
            view = tt_device.to_device(y, "bfloat16", layout="tile")
            assert_device_close(view, x)
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        ">*assert_device_close(view, x)",
        "E*AssertionError: not close: |actual - expected| <= atol + rtol * |expected|; rtol 0.007812, atol 1.175e-38",
        "E*shape (64, 96), data format bfloat16; actual bfloat16, expected float32",
        "E*max abs error 0.49* at [[]40, 70[]]: actual 1.06*, expected 0.56*",
        "E*normalized error * (max abs error / max |expected| *) vs rtol 0.007812",
        "E*PCC 0.99*",
        "E*1 of 6144 elements (0.02%) beyond tolerance",
        "E*worst tiles (32x32 tiles of the last two dims as [[]..., tile row, tile column[]]; "
        "1 of 6 tiles have errors beyond tolerance):",
        "E*tile [[]1, 2[]]: max abs error 0.49* at [[]40, 70[]], 1 beyond tolerance",
    ])
    result.stdout.no_fnmatch_line("*tt_hal/tools/testing.py*")  # __tracebackhide__: the user's line is the failure


# tt_hal.tools.testing, directly. `device` is tests/conftest.py's simulated wormhole_b0.

@pytest.mark.parametrize("data_format, rtol, atol", [
    ("float32", 2.0**-23, 2.0**-126), ("bfloat16", 2.0**-7, 2.0**-126), ("bfloat8_b", 2.0**-6, 2.0**-126),
    ("bfloat4_b", 2.0**-2, 2.0**-126), ("int32", 0.0, 0.0), ("uint8", 0.0, 0.0),
])
def test_default_tolerance(data_format, rtol, atol):
    assert default_tolerance(data_format) == (rtol, atol)


@pytest.mark.parametrize("data_format", ["float32", "bfloat16", "bfloat8_b", "bfloat4_b"])
@pytest.mark.parametrize("shape", [(70,), (3, 40, 50), (64, 64)])
def test_device_round_trips_pass_with_the_default_tolerance(device, data_format, shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(np.float32)  # wide exponents
    view = device.to_device(x, data_format, layout="tile")
    assert_device_close(view, x)
    assert_device_close(view.to_host(np.float32), x, data_format)


@pytest.mark.parametrize("data_format", ["bfloat8_b", "bfloat4_b"])
def test_on_chip_packing_passes_with_the_default_tolerance(device, data_format):
    """The packer rounds (bfp8) or truncates (bfp4) after Dst's own rounding: more than
    the host's half step (measured: 2^-6.6 and 2^-2.07 of the block max), within one step."""
    rng = np.random.default_rng(6)
    a, b = (rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16).astype(np.float32) for _ in range(2))
    out = ops.add(*(device.to_device(x, "bfloat16", layout="tile") for x in (a, b)), dtype=data_format)
    assert out.spec.dtype.name == data_format
    assert_device_close(out, a + b)


@pytest.mark.parametrize("data_format", ["float32", "bfloat16", "bfloat8_b", "bfloat4_b"])
def test_two_steps_off_fails(data_format):
    x = np.random.default_rng(2).uniform(1, 2, (32, 32)).astype(np.float64)
    rtol, _ = default_tolerance(data_format)
    assert_device_close(x * (1 + 0.9 * rtol), x, data_format)
    y = x.copy()
    y[5, 7] *= 1 + 2 * rtol
    with pytest.raises(AssertionError, match=r"max abs error .* at \[5, 7\]"):
        assert_device_close(y, x, data_format)


def test_block_float_error_is_relative_to_its_16_value_block():
    x = np.ones((2, 48), np.float32)
    x[0, 0] = 100.0  # the block of row 0, columns 0..15
    y = x.copy()
    y[0, 15] += 1.5  # < 100 * 2^-6
    assert_device_close(y, x, "bfloat8_b")
    with pytest.raises(AssertionError, match="bfloat16"):
        assert_device_close(y, x, "bfloat16")
    for index in [(0, 16), (1, 0)]:  # the next block, the next row: their scale is 1
        y = x.copy()
        y[index] += 1.5
        with pytest.raises(AssertionError, match=rf"at \[{index[0]}, {index[1]}\]"):
            assert_device_close(y, x, "bfloat8_b")


def test_transposed_faces_make_blocks_of_face_columns(device):
    x = np.random.default_rng(3).uniform(1, 2, (2, 40, 32)).astype(np.float32)
    x[:, 0, :] = 200.0  # every face column's first block holds one 200: the small values lose their low bits
    view = device.to_device(x, "bfloat4_b", layout="tile", transpose_within_face=True)
    assert_device_close(view, x)
    with pytest.raises(AssertionError):  # not within 1/4 of the row blocks' scale
        assert_device_close(view.to_host(), x, "bfloat4_b")


def test_integer_formats_are_exact(device):
    x = np.arange(-500, 524, dtype=np.int32).reshape(32, 32)
    assert_device_close(device.to_device(x), x)
    y = x.copy()
    y[3, 4] += 1
    with pytest.raises(AssertionError, match=r"not close: exact; rtol 0, atol 0"):
        assert_device_close(y, x)
    assert_device_close(y, x, atol=1)


def test_dense_view_takes_the_format_of_its_element_type(device):
    x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8)
    view = device.allocator.allocate_buffer_copy(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, device, x,
                                                 hal.HalElementType.FLOAT_32)
    assert view.spec is None
    assert_device_close(view, x)
    with pytest.raises(AssertionError, match="data format float32"):
        assert_device_close(view, x + 1e-3)


def test_bfloat16_arrays_default_to_bfloat16():
    x = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)
    assert_device_close(x.astype(ml_dtypes.bfloat16), x)
    with pytest.raises(AssertionError):
        assert_device_close(x.astype(ml_dtypes.bfloat16), x, "float32")


@pytest.mark.parametrize("actual, expected", [
    ([1.0, np.nan], [1.0, 2.0]),
    ([1.0, 2.0], [1.0, np.nan]),
    ([1.0, np.inf], [1.0, -np.inf]),
    ([1.0, np.inf], [1.0, 2.0]),
])
def test_nan_and_inf_must_match(actual, expected):
    with pytest.raises(AssertionError, match=r"NaN/inf mismatch in 1 of 2 elements .*\n  at \[1\]: actual"):
        assert_device_close(np.float32(actual), np.float32(expected))


def test_matching_nan_and_inf_pass():
    values = np.float32([np.nan, np.inf, -np.inf, 1.0])
    assert_device_close(values.copy(), values)


def test_shape_mismatch():
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(4, 4\) \(float32\), "
                                             r"expected \(4,\) \(float64\)"):
        assert_device_close(np.zeros((4, 4), np.float32), np.zeros(4))


def test_overrides_and_pcc():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 40)).astype(np.float32)
    y = x + rng.uniform(-0.01, 0.01, x.shape).astype(np.float32)
    with pytest.raises(AssertionError):
        assert_device_close(y, x, "bfloat16")
    assert_device_close(y, x, "bfloat16", atol=0.01)
    assert_device_close(y, x, "bfloat16", rtol=0.0, atol=0.01, pcc=0.999)
    with pytest.raises(AssertionError, match=r"PCC 0\.9999\d* \(required >= 0\.999999\)\n  0 of 1600 elements"):
        assert_device_close(y, x, "bfloat16", atol=0.01, pcc=0.999999)


def test_pcc_alone_checks_only_the_correlation_as_ttnn_does():
    """Issue 20: a ttnn user's `pcc=0.999` failed on a bf16 softmax of PCC 0.99998,
    because the default one-rounding tolerance still applied."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 128))
    reference = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    # A few roundings of bf16 arithmetic: up to 2% off per element, PCC about 0.9999.
    actual = (reference * (1 + rng.uniform(-0.02, 0.02, x.shape))).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError):
        assert_device_close(actual, reference, "bfloat16")  # a softmax is more than one rounding off
    assert_device_close(actual, reference, "bfloat16", pcc=0.999)
    with pytest.raises(AssertionError, match=r"not close: PCC >= 0\.9999999 only"):
        assert_device_close(actual, reference, "bfloat16", pcc=0.9999999)
    with pytest.raises(AssertionError, match=r"elements .* beyond tolerance"):  # both, when rtol/atol are given
        assert_device_close(actual, reference, "bfloat16", rtol=0.0, atol=1e-6, pcc=0.999)


def test_worst_tiles_are_ranked_with_batch_coordinates():
    x = np.zeros((2, 64, 70), np.float32)
    y = x.copy()
    y[1, 33, 69] = 3.0  # tile [1, 1, 2]
    y[0, 2, 40] = 5.0  # tile [0, 0, 1]
    y[0, 3, 41] = 1.0
    with pytest.raises(AssertionError) as failure:
        assert_device_close(y, x)
    report = str(failure.value)
    assert "3 of 8960 elements (0.03%) beyond tolerance" in report
    assert "2 of 12 tiles have errors beyond tolerance" in report
    tiles = [line.strip() for line in report.splitlines() if line.strip().startswith("tile")]
    assert tiles == ["tile [0, 0, 1]: max abs error 5 at [0, 2, 40], 2 beyond tolerance",
                     "tile [1, 1, 2]: max abs error 3 at [1, 33, 69], 1 beyond tolerance"]


# The device URI options the plugin builds on (hal/driver.py).

def test_device_uri_grid_options():
    device = hal.create_device("tenstorrent://mock?arch=blackhole_p100&grid_x=3&grid_y=2")
    assert (device.arch.name, device.arch.grid_x, device.arch.grid_y) == ("blackhole_p100", 3, 2)
    device.close()
    for bad in ("grid_x=0", "grid_y=-1", "grid_x=two"):
        with pytest.raises(hal.HalError, match=f"device option {bad.split('=')[0]}=.* is not a valid") as error:
            hal.create_device(f"tenstorrent://mock?{bad}")
        assert error.value.code == hal.StatusCode.INVALID_ARGUMENT


def test_a_compiled_program_runs_on_the_fixture_device_of_each_arch(pytester):
    """What a user's CI test of their model looks like: the .vmfb compiled once, run on
    tt_device (every arch preset with the marker) and compared with numpy within the
    compiler's float32 tolerance (the FPU multiplies bf16-truncated operands)."""
    pytester.makepyfile("""
        import functools

        import numpy as np
        import pytest

        from tt_hal import compiler, runtime
        from tt_hal.compiler import tolerance

        MLIR = '''func.func @main(%a: tensor<40x70xf32>, %b: tensor<70x30xf32>) -> tensor<40x30xf32> {
          %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
              : (tensor<40x70xf32>, tensor<70x30xf32>) -> tensor<40x30xf32>
          %1 = stablehlo.tanh %0 : tensor<40x30xf32>
          return %1 : tensor<40x30xf32>
        }'''

        @functools.cache
        def vmfb():
            return compiler.compile_vmfb(MLIR)

        @pytest.mark.tt_all_archs
        def test_model(tt_device):
            a, b = np.random.default_rng(0).uniform(-1, 1, (2, 70, 70)).astype(np.float32)
            a, b = a[:40], b[:, :30]
            module = runtime.load_vm_flatbuffer(vmfb(), device=tt_device)
            assert module.device is tt_device
            tolerance.check(module.main(a, b), [np.tanh(a.astype(np.float64) @ b)], "float32")
    """)
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=3)
