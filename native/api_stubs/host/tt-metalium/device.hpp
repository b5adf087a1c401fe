// Stub of tt_metal/api/tt-metalium/device.hpp (tt-metal v0.81.1). MeshDevice implements IDevice; a unit mesh (1x1)
// is how a single chip is opened in v0.81.1.
#pragma once

namespace tt::tt_metal {
// device.hpp: class IDevice. The real class declares some 70 virtual functions (MeshDevice's vtable in libtt_metal.so:
// arch() is slot 2, num_dram_channels() 7, l1_size_per_core() 8, compute_with_storage_grid_size() 20, close() 39).
// The stub does not reproduce that list, so it declares none: the queries tt-hal needs are declared on MeshDevice
// (mesh_device.hpp) as direct calls to MeshDevice's exported overrides, which no vtable slot of the stub can misdirect.
class IDevice {
public:
    virtual ~IDevice() = default;
};
}  // namespace tt::tt_metal
