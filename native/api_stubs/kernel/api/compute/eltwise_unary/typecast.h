// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/typecast.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// typecast.h: template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE> ALWI void typecast_tile_init()
template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
void typecast_tile_init();
// typecast.h: template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void typecast_tile(uint32_t idst)
template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void typecast_tile(uint32_t idst);
}  // namespace ckernel
