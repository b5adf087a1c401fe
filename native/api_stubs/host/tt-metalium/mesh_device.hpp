// Stub of tt_metal/api/tt-metalium/mesh_device.hpp (tt-metal v0.81.1). Replaces CreateDevice/CloseDevice:
// auto dev = MeshDevice::create_unit_mesh(device_id, ...); ... dev->close();
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <hostdevcommon/common_values.hpp>
#include <tt_stl/span.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/device.hpp>
#include <tt-metalium/dispatch_core_common.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <umd/device/types/arch.hpp>

namespace tt::tt_metal::distributed {
class MeshCommandQueue;

// mesh_device.hpp: class MeshDevice : public IDevice, public std::enable_shared_from_this<MeshDevice>
class MeshDevice : public IDevice, public std::enable_shared_from_this<MeshDevice> {
public:
    ~MeshDevice() override;
    MeshDevice(const MeshDevice&) = delete;
    MeshDevice& operator=(const MeshDevice&) = delete;

    // device.hpp/mesh_device.hpp: IDevice's virtual functions, overridden by MeshDevice (which has no subclass in
    // libtt_metal.so 0.81.1). Declared without `virtual`, so that a call is a direct call to MeshDevice's exported
    // override: see device.hpp for why the stub cannot place them in IDevice's vtable.
    tt::ARCH arch() const;
    int id() const;
    int num_dram_channels() const;
    uint32_t l1_size_per_core() const;
    uint32_t dram_size_per_channel() const;
    CoreCoord grid_size() const;
    CoreCoord logical_grid_size() const;
    CoreCoord dram_grid_size() const;
    CoreCoord compute_with_storage_grid_size() const;
    CoreCoord worker_core_from_logical_core(const CoreCoord& logical_core) const;
    bool close();

    // mesh_device.hpp: size_t num_devices() const;   const MeshShape& shape() const;
    size_t num_devices() const;
    const MeshShape& shape() const;

    // mesh_device.hpp: MeshCommandQueue& mesh_command_queue(std::optional<uint8_t> cq_id = std::nullopt) const;
    //   (replaces IDevice::command_queue(i); cq 0 and 1 exist when created with num_command_queues = 2)
    MeshCommandQueue& mesh_command_queue(std::optional<uint8_t> cq_id = std::nullopt) const;

    // mesh_device.hpp: static std::shared_ptr<MeshDevice> create_unit_mesh(int device_id,
    //     size_t l1_small_size = DEFAULT_L1_SMALL_SIZE, size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
    //     size_t num_command_queues = 1, const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
    //     ttsl::Span<const std::uint32_t> l1_bank_remap = {}, size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);
    static std::shared_ptr<MeshDevice> create_unit_mesh(
        int device_id,
        size_t l1_small_size = DEFAULT_L1_SMALL_SIZE,
        size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
        size_t num_command_queues = 1,
        const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
        ttsl::Span<const std::uint32_t> l1_bank_remap = {},
        size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);
    // mesh_device.hpp: static std::map<int, std::shared_ptr<MeshDevice>> create_unit_meshes(const std::vector<int>& device_ids, ...same defaults...)
    static std::map<int, std::shared_ptr<MeshDevice>> create_unit_meshes(
        const std::vector<int>& device_ids,
        size_t l1_small_size = DEFAULT_L1_SMALL_SIZE,
        size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
        size_t num_command_queues = 1,
        const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
        ttsl::Span<const std::uint32_t> l1_bank_remap = {},
        size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);

private:
    MeshDevice() = default;
};
}  // namespace tt::tt_metal::distributed
