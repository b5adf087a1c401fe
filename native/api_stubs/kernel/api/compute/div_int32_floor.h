// Stub of tt_metal/hw/inc/api/compute/div_int32_floor.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// div_int32_floor.h: ALWI void div_int32_trunc_tile_init()
void div_int32_trunc_tile_init();
// div_int32_floor.h: ALWI void div_int32_trunc_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void div_int32_trunc_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// div_int32_floor.h: ALWI void div_int32_floor_tile_init()
void div_int32_floor_tile_init();
// div_int32_floor.h: ALWI void div_int32_floor_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void div_int32_floor_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
