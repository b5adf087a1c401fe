// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/where.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// where.h: template <DataFormat data_format> ALWI void where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst)
//   (odst = idst0 != 0 ? idst1 : idst2; its comment lists Int32, UInt32, UInt16, and its
//   SFPU code, sfpu/ckernel_sfpu_where.h, takes Float32 and Float16_b as well)
template <DataFormat data_format>
void where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst);
// where.h: ALWI void where_tile_init()
void where_tile_init();
}  // namespace ckernel
