// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/cbrt.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// cbrt.h: ALWI void cbrt_tile_init()
void cbrt_tile_init();
// cbrt.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void cbrt_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void cbrt_tile(uint32_t idst);
}  // namespace ckernel
