// Stub of tt_metal/api/tt-metalium/mesh_buffer.hpp (tt-metal v0.81.1). Replaces CreateBuffer(InterleavedBufferConfig)
// / CreateBuffer(ShardedBufferConfig): MeshBuffer::create(ReplicatedBufferConfig{size},
// DeviceLocalBufferConfig{page_size, buffer_type, BufferShardingArgs(...)}, mesh_device.get()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
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

// shape2d.hpp: class Shape2D (height, width)
class Shape2D {
public:
    Shape2D(std::size_t height, std::size_t width) : height_(height), width_(width) {}
    std::size_t height() const { return height_; }
    std::size_t width() const { return width_; }

private:
    std::size_t height_ = 0;
    std::size_t width_ = 0;
};

// mesh_buffer.hpp: struct ShardedBufferConfig (split across the devices of a mesh; tt-hal does not use it, but it is
// the second alternative of MeshBufferConfig, which is part of MeshBuffer::create's mangled name)
struct ShardedBufferConfig {
    DeviceAddr global_size = 0;
    Shape2D global_buffer_shape = {0, 0};
    Shape2D shard_shape = {0, 0};
    ShardOrientation shard_orientation = ShardOrientation::ROW_MAJOR;
    uint32_t compute_datum_size_bytes() const;
    std::pair<bool, bool> replicated_dims() const;
    Shape2D physical_shard_shape() const;
};

// mesh_buffer.hpp: using MeshBufferConfig = std::variant<ReplicatedBufferConfig, ShardedBufferConfig>;
using MeshBufferConfig = std::variant<ReplicatedBufferConfig, ShardedBufferConfig>;

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
    // mesh_buffer.hpp: DeviceAddr address() const { return address_; }   (inline in 0.81.1: it reads a member whose
    // offset these stubs do not reproduce, so it is not declared; the reference buffer's address is the same)
    // mesh_buffer.hpp: Buffer* get_device_buffer(const MeshCoordinate& device_coord) const;
    Buffer* get_device_buffer(const MeshCoordinate& device_coord) const;
    // mesh_buffer.hpp: Buffer* get_reference_buffer() const;   (the buffer every device's allocation mirrors)
    Buffer* get_reference_buffer() const;
};
}  // namespace tt::tt_metal::distributed
