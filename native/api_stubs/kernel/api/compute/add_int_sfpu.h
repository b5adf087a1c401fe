// Stub of tt_metal/hw/inc/api/compute/add_int_sfpu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// add_int_sfpu.h: ALWI void add_int_tile_init()
void add_int_tile_init();
// add_int_sfpu.h: template <DataFormat data_format> ALWI void add_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void add_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
