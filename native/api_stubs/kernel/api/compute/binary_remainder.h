// Stub of tt_metal/hw/inc/api/compute/binary_remainder.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_remainder.h: ALWI void remainder_uint32_tile_init()
void remainder_uint32_tile_init();
// binary_remainder.h: ALWI void remainder_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void remainder_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
