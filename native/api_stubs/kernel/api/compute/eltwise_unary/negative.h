// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/negative.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// negative.h: ALWI void negative_tile_init()
void negative_tile_init();
// negative.h: ALWI void negative_tile(uint32_t idst)
void negative_tile(uint32_t idst);
// negative.h: ALWI void negative_tile_int32(uint32_t idst)
void negative_tile_int32(uint32_t idst);
}  // namespace ckernel
