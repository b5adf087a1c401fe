// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/gelu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// gelu.h: template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void gelu_tile_init()
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void gelu_tile_init();
// gelu.h: template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void gelu_tile(uint32_t idst)
//   (note the default: fast/approximate GELU unless <false> is passed)
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void gelu_tile(uint32_t idst);
// gelu.h: template <bool fast = false> ALWI void gelu_tanh_tile_init()
template <bool fast = false>
void gelu_tanh_tile_init();
// gelu.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fast = false> ALWI void gelu_tanh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE, bool fast = false>
void gelu_tanh_tile(uint32_t idst);
}  // namespace ckernel
