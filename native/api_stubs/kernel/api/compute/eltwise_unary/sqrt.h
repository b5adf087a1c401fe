// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/sqrt.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// sqrt.h: ALWI void sqrt_tile_init()
void sqrt_tile_init();
// sqrt.h: template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sqrt_tile(uint32_t idst)
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sqrt_tile(uint32_t idst);
}  // namespace ckernel
