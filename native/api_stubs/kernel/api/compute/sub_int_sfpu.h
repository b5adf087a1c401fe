// Stub of tt_metal/hw/inc/api/compute/sub_int_sfpu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// sub_int_sfpu.h: ALWI void sub_int_tile_init()
void sub_int_tile_init();
// sub_int_sfpu.h: template <DataFormat data_format> ALWI void sub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void sub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
