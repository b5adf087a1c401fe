// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/log1p.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// log1p.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void log1p_tile_init()
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void log1p_tile_init();
// log1p.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void log1p_tile(uint32_t idst)
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void log1p_tile(uint32_t idst);
}  // namespace ckernel
