// Stub of tt_metal/api/tt-metalium/buffer.hpp (tt-metal v0.81.1). Only the types MeshBuffer configs use.
// The single-device CreateBuffer(InterleavedBufferConfig/ShardedBufferConfig) API is gone in v0.81.1.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <tt-metalium/buffer_types.hpp>
#include <tt-metalium/core_coord.hpp>

namespace tt::tt_metal {
// hal_types.hpp / buffer.hpp: using DeviceAddr = uint64_t;
using DeviceAddr = uint64_t;

// buffer.hpp: struct ShardSpec (PHYSICAL mode constructor)
struct ShardSpec {
    CoreRangeSet grid;
    std::array<uint32_t, 2> shape;
    ShardOrientation orientation = ShardOrientation::ROW_MAJOR;
    ShardSpec(
        const CoreRangeSet& core_sets_,
        const std::array<uint32_t, 2>& shard_shape_,
        const ShardOrientation& shard_orientation_ = ShardOrientation::ROW_MAJOR);
};

// buffer.hpp: struct ShardSpecBuffer
struct ShardSpecBuffer {
    ShardSpec tensor_shard_spec;
    std::array<uint32_t, 2> page_shape;
    std::array<uint32_t, 2> tensor2d_shape_in_pages;
    // ShardSpecBuffer(const CoreRangeSet& core_sets_, const std::array<uint32_t, 2>& shard_shape_,
    //                 const ShardOrientation& shard_orientation_, const std::array<uint32_t, 2>& page_shape,
    //                 const std::array<uint32_t, 2>& tensor2d_shape_in_pages)    (no `halo` argument any more)
    ShardSpecBuffer(
        const CoreRangeSet& core_sets_,
        const std::array<uint32_t, 2>& shard_shape_,
        const ShardOrientation& shard_orientation_,
        const std::array<uint32_t, 2>& page_shape,
        const std::array<uint32_t, 2>& tensor2d_shape_in_pages);
    // std::array<uint32_t, 2> shape_in_pages() const;   DeviceAddr num_pages() const;
    std::array<uint32_t, 2> shape_in_pages() const;
    DeviceAddr num_pages() const;
};

// buffer.hpp: class BufferShardingArgs (how a buffer is laid out over the banks of one device)
class BufferShardingArgs {
public:
    // BufferShardingArgs()  -> interleaved
    BufferShardingArgs();
    // BufferShardingArgs(ShardSpecBuffer shard_spec, TensorMemoryLayout buffer_layout)
    BufferShardingArgs(ShardSpecBuffer shard_spec, TensorMemoryLayout buffer_layout);
    // BufferShardingArgs(std::optional<ShardSpecBuffer> shard_spec, TensorMemoryLayout buffer_layout)
    BufferShardingArgs(std::optional<ShardSpecBuffer> shard_spec, TensorMemoryLayout buffer_layout);
};

// buffer.hpp: struct BufferRegion { DeviceAddr offset; DeviceAddr size; BufferRegion() = delete; }
struct BufferRegion {
    DeviceAddr offset = 0;
    DeviceAddr size = 0;
    BufferRegion() = delete;
    BufferRegion(DeviceAddr offset, DeviceAddr size) : offset(offset), size(size) {}
};

// buffer.hpp: class Buffer (one device's allocation; reached through MeshBuffer::get_device_buffer)
class Buffer {
public:
    DeviceAddr address() const;
    DeviceAddr size() const;
    DeviceAddr page_size() const;
    uint32_t num_pages() const;
    BufferType buffer_type() const;
    TensorMemoryLayout buffer_layout() const;
};
}  // namespace tt::tt_metal
