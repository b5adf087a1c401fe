// Stub of tt_metal/hw/inc/api/compute/binary_max_min.h (tt-metal v0.81.1). SFPU max/min on two Dst tiles.
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_max_min.h: ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC)
void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC);
// binary_max_min.h: ALWI void binary_max_tile_init()
void binary_max_tile_init();
// binary_max_min.h: ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC)
void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC);
// binary_max_min.h: ALWI void binary_min_tile_init()
void binary_min_tile_init();
// binary_max_min.h: ALWI void binary_max_int32_tile_init()
void binary_max_int32_tile_init();
// binary_max_min.h: ALWI void binary_max_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void binary_max_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_max_min.h: ALWI void binary_max_uint32_tile_init()
void binary_max_uint32_tile_init();
// binary_max_min.h: ALWI void binary_max_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void binary_max_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_max_min.h: ALWI void binary_min_int32_tile_init()
void binary_min_int32_tile_init();
// binary_max_min.h: ALWI void binary_min_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void binary_min_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_max_min.h: ALWI void binary_min_uint32_tile_init()
void binary_min_uint32_tile_init();
// binary_max_min.h: ALWI void binary_min_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void binary_min_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
