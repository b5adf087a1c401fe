// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/fill.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// fill.h: ALWI void fill_tile_init()
void fill_tile_init();
// fill.h: ALWI void fill_tile(uint32_t idst, float param0)
void fill_tile(uint32_t idst, float param0);
// fill.h: ALWI void fill_tile_bitcast(uint32_t idst, uint32_t param0)   (param0 = float32 bits)
void fill_tile_bitcast(uint32_t idst, uint32_t param0);
// fill.h: template <DataFormat DATA_FORMAT> ALWI void fill_tile_int(uint32_t idst, uint32_t param0)
template <DataFormat DATA_FORMAT>
void fill_tile_int(uint32_t idst, uint32_t param0);
}  // namespace ckernel
