// Stub of tt_metal/hw/inc/api/compute/mul_int_sfpu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// mul_int_sfpu.h: template <DataFormat data_format> ALWI void mul_int_tile_init()
template <DataFormat data_format>
void mul_int_tile_init();
// mul_int_sfpu.h: template <DataFormat data_format> ALWI void mul_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void mul_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
