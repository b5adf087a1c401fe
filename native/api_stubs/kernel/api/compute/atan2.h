// Stub of tt_metal/hw/inc/api/compute/atan2.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// atan2.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atan2_binary_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atan2_binary_tile_init();
// atan2.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atan2_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atan2_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
