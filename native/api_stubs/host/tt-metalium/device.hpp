// Stub of tt_metal/api/tt-metalium/device.hpp (tt-metal v0.81.1): the IDevice queries tt-hal needs.
// MeshDevice implements IDevice; a unit mesh (1x1) is how a single chip is opened in v0.81.1.
#pragma once
#include <cstdint>
#include <tt-metalium/core_coord.hpp>
#include <umd/device/types/arch.hpp>

namespace tt::tt_metal {
// device.hpp: class IDevice
class IDevice {
public:
    virtual ~IDevice() = default;
    // device.hpp: virtual tt::ARCH arch() const = 0;
    virtual tt::ARCH arch() const = 0;
    // device.hpp: virtual int id() const = 0;
    virtual int id() const = 0;
    // device.hpp: virtual int num_dram_channels() const = 0;
    virtual int num_dram_channels() const = 0;
    // device.hpp: virtual uint32_t l1_size_per_core() const = 0;
    virtual uint32_t l1_size_per_core() const = 0;
    // device.hpp: virtual uint32_t dram_size_per_channel() const = 0;
    virtual uint32_t dram_size_per_channel() const = 0;
    // device.hpp: virtual CoreCoord grid_size() const = 0;
    virtual CoreCoord grid_size() const = 0;
    // device.hpp: virtual CoreCoord logical_grid_size() const = 0;
    virtual CoreCoord logical_grid_size() const = 0;
    // device.hpp: virtual CoreCoord dram_grid_size() const = 0;
    virtual CoreCoord dram_grid_size() const = 0;
    // device.hpp: virtual CoreCoord compute_with_storage_grid_size() const = 0;
    virtual CoreCoord compute_with_storage_grid_size() const = 0;
    // device.hpp: virtual CoreCoord worker_core_from_logical_core(const CoreCoord& logical_core) const = 0;  (NoC coords)
    virtual CoreCoord worker_core_from_logical_core(const CoreCoord& logical_core) const = 0;
    // device.hpp: virtual bool close() = 0;
    virtual bool close() = 0;
};
}  // namespace tt::tt_metal
