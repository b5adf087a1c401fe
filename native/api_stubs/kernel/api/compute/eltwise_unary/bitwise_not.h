// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/bitwise_not.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// bitwise_not.h: ALWI void bitwise_not_tile_init()
void bitwise_not_tile_init();
// bitwise_not.h: ALWI void bitwise_not_tile(uint32_t idst)
void bitwise_not_tile(uint32_t idst);
}  // namespace ckernel
