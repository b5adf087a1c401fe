// Stub of tt_metal/api/tt-metalium/mesh_buffer.hpp (tt-metal v0.81.1). Replaces CreateBuffer(InterleavedBufferConfig)
// / CreateBuffer(ShardedBufferConfig): MeshBuffer::create(ReplicatedBufferConfig{size},
// DeviceLocalBufferConfig{page_size, buffer_type, BufferShardingArgs(...)}, mesh_device.get()).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/buffer_types.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal::distributed {
class MeshDevice;

// mesh_buffer.hpp: struct DeviceLocalBufferConfig (layout over the banks of each device)
struct DeviceLocalBufferConfig {
    DeviceAddr page_size = 0;
    BufferType buffer_type = BufferType::DRAM;  // DRAM, L1, SYSTEM_MEMORY, L1_SMALL, TRACE
    BufferShardingArgs sharding_args;           // default: interleaved
    std::optional<bool> bottom_up;              // allocation direction
    std::optional<SubDeviceId> sub_device_id = std::nullopt;
};

// mesh_buffer.hpp: struct ReplicatedBufferConfig { DeviceAddr size = 0; }  (each device gets a buffer of this size)
struct ReplicatedBufferConfig {
    DeviceAddr size = 0;
};

// mesh_buffer.hpp: struct ShardedBufferConfig (split across the devices of a mesh; not needed for one chip, not stubbed)
struct ShardedBufferConfig;

// mesh_buffer.hpp: using MeshBufferConfig = std::variant<ReplicatedBufferConfig, ShardedBufferConfig>;
// (stubbed with ReplicatedBufferConfig only, since ShardedBufferConfig is left incomplete here)
using MeshBufferConfig = std::variant<ReplicatedBufferConfig>;

// mesh_buffer.hpp: class MeshBuffer
class MeshBuffer {
public:
    // static std::shared_ptr<MeshBuffer> create(const MeshBufferConfig&, const DeviceLocalBufferConfig&,
    //                                           MeshDevice* mesh_device, std::optional<DeviceAddr> address = std::nullopt)
    static std::shared_ptr<MeshBuffer> create(
        const MeshBufferConfig& mesh_buffer_config,
        const DeviceLocalBufferConfig& device_local_config,
        MeshDevice* mesh_device,
        std::optional<DeviceAddr> address = std::nullopt);
    ~MeshBuffer();
    MeshBuffer(const MeshBuffer&) = delete;
    MeshBuffer& operator=(const MeshBuffer&) = delete;
    MeshBuffer(MeshBuffer&& other) noexcept;
    MeshBuffer& operator=(MeshBuffer&& other) noexcept;
    bool is_allocated() const;
    void deallocate();
    MeshDevice* device() const;
    DeviceAddr size() const;
    DeviceAddr device_local_size() const;
    // mesh_buffer.hpp: DeviceAddr address() const { return address_; }   (same address on every device)
    DeviceAddr address() const;
    // mesh_buffer.hpp: Buffer* get_device_buffer(const MeshCoordinate& device_coord) const;
    Buffer* get_device_buffer(const MeshCoordinate& device_coord) const;
    uint32_t page_size() const;
    uint32_t num_pages() const;
};
}  // namespace tt::tt_metal::distributed
