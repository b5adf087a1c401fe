// Stub of tt_metal/hw/inc/api/compute/src_order.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>

namespace ckernel {
// src_order.h: enum class SrcOrder : uint8_t { Regular = 0 (icb0->SrcA), Reverse = 1 (icb0->SrcB, used by matmul) }
enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };
}  // namespace ckernel
