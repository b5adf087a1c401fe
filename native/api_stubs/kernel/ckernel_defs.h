// Stub of tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc/ckernel_defs.h (tt-metal v0.81.1), the parts the compute API names.
#pragma once
#include <cstdint>

namespace ckernel {

// ckernel_defs.h: enum class DataLayout
enum class DataLayout { TILE = 0, ROW_MAJOR = 1 };
// ckernel_defs.h: enum class DstRoundingMode : std::uint8_t
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };

}  // namespace ckernel
