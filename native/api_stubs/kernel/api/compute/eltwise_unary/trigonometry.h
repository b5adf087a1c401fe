// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/trigonometry.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// trigonometry.h: ALWI void sin_tile_init()
void sin_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sin_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sin_tile(uint32_t idst);
// trigonometry.h: ALWI void cos_tile_init()
void cos_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void cos_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void cos_tile(uint32_t idst);
}  // namespace ckernel
