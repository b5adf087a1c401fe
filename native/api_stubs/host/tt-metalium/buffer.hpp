// Stub of tt_metal/api/tt-metalium/buffer.hpp (tt-metal v0.81.1). Only the types MeshBuffer configs use.
// The single-device CreateBuffer(InterleavedBufferConfig/ShardedBufferConfig) API is gone in v0.81.1.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
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
    // Inline in 0.81.1 (not exported by libtt_metal.so).
    ShardSpec(
        const CoreRangeSet& core_sets_,
        const std::array<uint32_t, 2>& shard_shape_,
        const ShardOrientation& shard_orientation_ = ShardOrientation::ROW_MAJOR) :
        grid(core_sets_), shape(shard_shape_), orientation(shard_orientation_) {}
};

// buffer.hpp: struct ShardSpecBuffer
struct ShardSpecBuffer {
    ShardSpec tensor_shard_spec;
    std::array<uint32_t, 2> page_shape;
    std::array<uint32_t, 2> tensor2d_shape_in_pages;
    // ShardSpecBuffer(const CoreRangeSet& core_sets_, const std::array<uint32_t, 2>& shard_shape_,
    //                 const ShardOrientation& shard_orientation_, const std::array<uint32_t, 2>& page_shape,
    //                 const std::array<uint32_t, 2>& tensor2d_shape_in_pages)    (no `halo` argument any more)
    //   (inline in 0.81.1: not exported by libtt_metal.so)
    ShardSpecBuffer(
        const CoreRangeSet& core_sets_,
        const std::array<uint32_t, 2>& shard_shape_,
        const ShardOrientation& shard_orientation_,
        const std::array<uint32_t, 2>& page_shape,
        const std::array<uint32_t, 2>& tensor2d_shape_in_pages) :
        tensor_shard_spec(core_sets_, shard_shape_, shard_orientation_),
        page_shape(page_shape),
        tensor2d_shape_in_pages(tensor2d_shape_in_pages) {}
    // std::array<uint32_t, 2> shape_in_pages() const;   DeviceAddr num_pages() const;
    std::array<uint32_t, 2> shape_in_pages() const;
    DeviceAddr num_pages() const;
};

class BufferShardingArgsImpl;

// buffer.hpp: class BufferShardingArgs (how a buffer is laid out over the banks of one device). A handle to its
// implementation, not an empty type: libtt_metal.so exports its copy, move, assignments and destructor.
class BufferShardingArgs {
public:
    // BufferShardingArgs()  -> interleaved
    BufferShardingArgs();
    BufferShardingArgs(const BufferShardingArgs& other);
    BufferShardingArgs(BufferShardingArgs&& other);
    BufferShardingArgs& operator=(const BufferShardingArgs& other);
    BufferShardingArgs& operator=(BufferShardingArgs&& other);
    ~BufferShardingArgs();
    // BufferShardingArgs(ShardSpecBuffer shard_spec, TensorMemoryLayout buffer_layout)
    BufferShardingArgs(ShardSpecBuffer shard_spec, TensorMemoryLayout buffer_layout);
    // BufferShardingArgs(std::optional<ShardSpecBuffer> shard_spec, TensorMemoryLayout buffer_layout)
    BufferShardingArgs(std::optional<ShardSpecBuffer> shard_spec, TensorMemoryLayout buffer_layout);

private:
    std::unique_ptr<BufferShardingArgsImpl> impl_;
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
