// Copy of the declarations in tt_metal/api/tt-metalium/buffer_types.hpp as shipped in the ttnn==0.81.1 wheel.
#pragma once
#include <cstdint>

namespace tt::tt_metal {
// buffer_types.hpp: enum class TensorMemoryLayout
enum class TensorMemoryLayout {
    INTERLEAVED = 0,
    HEIGHT_SHARDED = 2,
    WIDTH_SHARDED = 3,
    BLOCK_SHARDED = 4,
    ND_SHARDED = 5,
};
// buffer_types.hpp: enum class ShardOrientation
enum class ShardOrientation { ROW_MAJOR = 0, COL_MAJOR };
// buffer_types.hpp: enum class BufferType
enum class BufferType { DRAM, L1, SYSTEM_MEMORY, L1_SMALL, TRACE };
}  // namespace tt::tt_metal
