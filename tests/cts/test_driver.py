"""Driver registry, device enumeration/creation, URIs, device queries, status errors.

Modelled on IREE's cts/driver_test.h and core/driver_test.cc.
"""

import uuid

import pytest

import hal

from .ctsutil import SC, raises_status

WORMHOLE = dict(grid_x=8, grid_y=8, l1_size=1_499_136, dram_bank_count=12,
                dram_bank_size=1 << 30, dram_alignment=32)
BLACKHOLE_P150 = dict(grid_x=13, grid_y=10, l1_size=1_572_864, dram_bank_count=8,
                      dram_bank_size=4_278_190_080, dram_alignment=64)
ARCHES = {"wormhole_b0": WORMHOLE, "blackhole_p150": BLACKHOLE_P150}


# -- status codes and errors ------------------------------------------------------

def test_status_code_numbering_matches_iree():
    expected = dict(OK=0, CANCELLED=1, UNKNOWN=2, INVALID_ARGUMENT=3, DEADLINE_EXCEEDED=4,
                    NOT_FOUND=5, ALREADY_EXISTS=6, PERMISSION_DENIED=7,
                    RESOURCE_EXHAUSTED=8, FAILED_PRECONDITION=9, ABORTED=10,
                    OUT_OF_RANGE=11, UNIMPLEMENTED=12, INTERNAL=13, UNAVAILABLE=14,
                    DATA_LOSS=15)
    for name, value in expected.items():
        assert int(getattr(hal.StatusCode, name)) == value, name


def test_hal_error_python_exception_classes():
    err = hal.HalError(SC.INVALID_ARGUMENT, "bad pattern")
    assert isinstance(err, RuntimeError) and isinstance(err, ValueError)
    assert err.code == SC.INVALID_ARGUMENT and err.message == "bad pattern"
    assert str(err) == "INVALID_ARGUMENT; bad pattern"
    oor = hal.HalError(SC.OUT_OF_RANGE, "past the end")
    assert isinstance(oor, IndexError) and isinstance(oor, hal.HalError)
    missing = hal.HalError(SC.NOT_FOUND, "nope")  # iree.runtime: NOT_FOUND is a ValueError too
    assert isinstance(missing, ValueError) and isinstance(missing, hal.NotFoundError)
    assert str(missing).startswith("NOT_FOUND; ")
    other = hal.HalError(SC.ABORTED, "stopped")
    assert isinstance(other, RuntimeError)
    assert not isinstance(other, (ValueError, IndexError, NotImplementedError))


# -- registry ---------------------------------------------------------------------

def test_query_available_drivers_has_tenstorrent():
    drivers = hal.query_available_drivers()
    assert "tenstorrent" in list(drivers)


def test_get_unknown_driver_not_found():
    with raises_status(SC.NOT_FOUND):
        hal.get_driver("no-such-driver-" + uuid.uuid4().hex)


def test_create_device_unknown_driver_not_found():
    with raises_status(SC.NOT_FOUND):
        hal.create_device("no-such-driver-" + uuid.uuid4().hex + "://")


def test_register_driver_twice_already_exists():
    name = "cts-dummy-" + uuid.uuid4().hex[:8]
    real = hal.get_driver("tenstorrent")
    hal.register_driver(name, lambda: real)
    assert name in hal.query_available_drivers()
    with raises_status(SC.ALREADY_EXISTS):
        hal.register_driver(name, lambda: real)


def test_register_builtin_driver_again_already_exists():
    with raises_status(SC.ALREADY_EXISTS):
        hal.register_driver("tenstorrent", lambda: hal.get_driver("tenstorrent"))


# -- enumeration and creation -------------------------------------------------------

def test_query_available_devices_entries():
    driver = hal.get_driver("tenstorrent")
    infos = driver.query_available_devices()
    assert len(infos) >= 1
    ids = []
    for info in infos:
        assert {"device_id", "path", "name"} <= set(info)
        assert isinstance(info["name"], str) and info["name"]
        ids.append(info["device_id"])
    assert len(set(ids)) == len(ids), "device ids must be unique"


def test_create_every_device_by_id_and_info():
    driver = hal.get_driver("tenstorrent")
    for info in driver.query_available_devices():
        for key in (info["device_id"], info):
            dev = driver.create_device(key)
            assert dev.query_i64("hal.device.id", "tenstorrent") == 1
            buf = dev.allocator.allocate_buffer(
                hal.MemoryType.DEVICE_LOCAL | hal.MemoryType.HOST_VISIBLE,
                hal.BufferUsage.DEFAULT | hal.BufferUsage.MAPPING, 16)
            assert buf.byte_length() == 16


def test_create_every_device_by_path_uri():
    driver = hal.get_driver("tenstorrent")
    for info in driver.query_available_devices():
        dev = driver.create_device_by_uri(f"tenstorrent://{info['path']}")
        assert dev.query_i64("hal.device.id", "tenstorrent") == 1


def test_create_default_device():
    dev = hal.get_driver("tenstorrent").create_default_device()
    assert dev.query_i64("hal.device.id", "tenstorrent") == 1


@pytest.mark.parametrize("uri", ["tenstorrent", "tenstorrent://", "tenstorrent://0"])
def test_create_device_by_uri(uri):
    dev = hal.create_device(uri)
    assert dev.query_i64("hal.device.id", "tenstorrent") == 1
    assert dev.query_i64("hal.device.id", "tenst*") == 1
    assert dev.query_i64("hal.device.id", "cuda") == 0


def test_get_device_caches_create_device_does_not():
    a = hal.get_device("tenstorrent")
    assert hal.get_device("tenstorrent") is a
    b = hal.create_device("tenstorrent")
    c = hal.create_device("tenstorrent")
    assert b is not c and b is not a


def test_device_ordinal_past_end():
    driver = hal.get_driver("tenstorrent")
    n = len(driver.query_available_devices())
    with raises_status(SC.OUT_OF_RANGE, SC.NOT_FOUND):
        hal.create_device(f"tenstorrent://{n + 100}")


def test_unknown_device_id():
    driver = hal.get_driver("tenstorrent")
    ids = [i["device_id"] for i in driver.query_available_devices()]
    bad = (max(ids) + 1000) if all(isinstance(i, int) for i in ids) else "no-such-device"
    with raises_status(SC.OUT_OF_RANGE, SC.NOT_FOUND):
        driver.create_device(bad)


@pytest.mark.parametrize("uri", [
    "tenstorrent://mock?arch=no_such_arch",
    "tenstorrent://mock?arch=",
    "tenstorrent://mock?no_such_option=1",
    "tenstorrent://mock?num_hw_cqs=0",
    "tenstorrent://mock?num_hw_cqs=3",
    "tenstorrent://mock?num_hw_cqs=two",
    "tenstorrent://mock?l1_small_size=-5",
    "tenstorrent://mock?l1_unreserved_base=-16",
    "tenstorrent://mock?l1_unreserved_base=99999999",
    "tenstorrent://mock?arch=blackhole_p150&arch=wormhole_b0",
    "tenstorrent://not_an_ordinal",
])
def test_bad_uri_query_invalid_argument(uri):
    with raises_status(SC.INVALID_ARGUMENT):
        hal.create_device(uri)


@pytest.mark.parametrize("option", ["l1_small_size=65536", "l1_unreserved_base=200000"])
def test_l1_options_shrink_the_l1_bank(option):
    base = hal.create_device("tenstorrent://mock?arch=wormhole_b0")
    dev = hal.create_device(f"tenstorrent://mock?arch=wormhole_b0&{option}")
    assert 0 < _tt(dev, "l1_bank_size") < _tt(base, "l1_bank_size")


def test_single_command_queue_device():
    from .ctsutil import new_buffer, wait_ok
    dev = hal.create_device("tenstorrent://mock?num_hw_cqs=1")
    assert _tt(dev, "num_hw_cqs") == 1
    a = new_buffer(dev.allocator, 64)
    b = new_buffer(dev.allocator, 64)
    gate, sem = dev.create_semaphore(0), dev.create_semaphore(0)
    dev.queue_fill(a, b"\x03", [(gate, 1)], [(sem, 1)])
    cb = hal.HalCommandBuffer(dev)
    cb.copy(a, b)
    cb.end()
    dev.queue_execute(cb, [(sem, 1)], [(sem, 2)])
    gate.signal(1)
    wait_ok(sem, 2)
    assert b.map_read() == b"\x03" * 64


def test_hardware_mode_without_native_layer_unavailable(monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "hardware")
    with raises_status(SC.UNAVAILABLE) as info:
        hal.create_device("tenstorrent")
    msg = info.value.message.lower()
    assert "install" in msg, info.value.message
    assert any(word in msg for word in ("tt-metal", "tt_metal", "ttnn", "native", "metal")), msg


def test_mock_mode_env_creates_device(monkeypatch):
    monkeypatch.setenv("TT_HAL_MODE", "mock")
    dev = hal.create_device("tenstorrent")
    assert dev.query_i64("hal.device.id", "tenstorrent") == 1


# -- device queries -------------------------------------------------------------------

def _tt(dev, key):
    return dev.query_i64("tt.device", key)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_mock_arch_geometry(arch):
    dev = hal.create_device(f"tenstorrent://mock?arch={arch}")
    want = ARCHES[arch]
    for key, value in want.items():
        assert _tt(dev, key) == value, key
    assert _tt(dev, "worker_cores") == want["grid_x"] * want["grid_y"]
    assert _tt(dev, "dram_size") == want["dram_bank_count"] * want["dram_bank_size"]
    assert _tt(dev, "l1_alignment") == 16
    assert 0 < _tt(dev, "l1_bank_size") <= want["l1_size"]
    assert _tt(dev, "num_hw_cqs") == 2
    assert _tt(dev, f"arch.{arch}") == 1
    for other in ARCHES:
        if other != arch:
            assert _tt(dev, f"arch.{other}") == 0


def test_default_device_is_a_known_arch():
    dev = hal.create_device("tenstorrent")
    matches = [a for a in ARCHES if _tt(dev, f"arch.{a}") == 1]
    assert len(matches) == 1
    assert _tt(dev, "grid_x") == ARCHES[matches[0]]["grid_x"]


def test_executable_format_query():
    dev = hal.create_device("tenstorrent")
    assert dev.query_i64("hal.executable.format", "tenstorrent-ttx-fb") == 1
    assert dev.query_i64("hal.executable.format", "vulkan-spirv-fb") == 0


@pytest.mark.parametrize("category,key", [
    ("tt.device", "no_such_key"),
    ("no.such.category", "grid_x"),
])
def test_query_i64_unknown_key_not_found(category, key):
    dev = hal.create_device("tenstorrent")
    with raises_status(SC.NOT_FOUND):
        dev.query_i64(category, key)
