"""How a device reads in messages (issue 20, finding 6): str(device) says which device
it is (URI with driver and ordinal, simulated or hardware, arch, worker cores), not
just the driver name `tenstorrent`; repr() is the same with the backend's details."""

import hal


def test_str_names_uri_kind_arch_and_worker_cores():
    device = hal.create_device("tenstorrent")
    try:
        assert str(device) == "tenstorrent://0?arch=wormhole_b0 (simulated wormhole_b0, 8x8 grid of 64 worker cores)"
        assert f"{device}" == str(device)
    finally:
        device.close()


def test_str_follows_the_grid_and_repr_adds_the_backend():
    device = hal.create_device("tenstorrent://mock?arch=blackhole_p150&grid_x=2&grid_y=2&num_hw_cqs=1")
    try:
        text = str(device)
        assert text == ("tenstorrent://0?arch=blackhole_p150&grid_x=2&grid_y=2&num_hw_cqs=1 "
                        "(simulated blackhole_p150, 2x2 grid of 4 worker cores)")
        assert text.startswith(device.uri) and device.driver.name == "tenstorrent"  # iree.runtime's str(device)
        assert repr(device) == f"<HalDevice {text[:-1]}; mock backend, 1 command queue)>"
    finally:
        device.close()


def test_messages_that_name_a_device_use_the_informative_text():
    """A dispatch binding of another device: the error names the device it ran on."""
    import numpy as np

    from hal.executable import EXECUTABLE_FORMAT
    from tt_hal.target.isa import Processor
    from tt_hal.target.kernel_builder import KernelBuilder
    from tt_hal.target.program import ArgKind, Program, RuntimeArg, Stage
    from tt_hal.target.ttx import Export, write_executable

    one, other = hal.create_device("tenstorrent"), hal.create_device("tenstorrent://mock?arch=blackhole_p150")
    try:
        k = KernelBuilder("nop")
        k.arg(0, "address")
        program = Program((), (k.build(Processor.RISCV_0),), ((RuntimeArg(ArgKind.BINDING_ADDRESS, 0),),))
        data = write_executable([Export("nop", 0, 1, (1, 1, 1), (Stage(program),))])
        executable = one.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, data)
        foreign = other.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
        cb = one.create_command_buffer()
        try:
            cb.dispatch(executable, 0, (1, 1, 1), np.zeros(0, np.uint32).tobytes(), [foreign])
            cb.end()
            done = one.create_semaphore(0)
            one.queue_execute(cb, [], [(done, 1)])
            done.wait(1, timeout=10**10)
        except hal.HalError as error:
            message = str(error)
        else:
            raise AssertionError("a binding of another device was accepted")
        assert f"another device than {one}" in message and "simulated wormhole_b0" in message
    finally:
        one.close()
        other.close()
