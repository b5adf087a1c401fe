// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/rounding.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// rounding.h: ALWI void rounding_op_tile_init()
void rounding_op_tile_init();
// rounding.h: ALWI void floor_tile(uint32_t idst) / ceil_tile / trunc_tile
void floor_tile(uint32_t idst);
void ceil_tile(uint32_t idst);
void trunc_tile(uint32_t idst);
// rounding.h: ALWI void round_tile(uint32_t idst, int32_t decimals)   (ties to even)
void round_tile(uint32_t idst, int32_t decimals);
}  // namespace ckernel
