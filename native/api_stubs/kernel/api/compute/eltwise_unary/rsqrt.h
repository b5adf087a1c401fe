// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/rsqrt.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// rsqrt.h: enum class RsqrtMode { Default, Fast };
enum class RsqrtMode { Default, Fast };
// rsqrt.h: ALWI void rsqrt_tile_init()
void rsqrt_tile_init();
// rsqrt.h: template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void rsqrt_tile(uint32_t idst)
template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void rsqrt_tile(uint32_t idst);
}  // namespace ckernel
