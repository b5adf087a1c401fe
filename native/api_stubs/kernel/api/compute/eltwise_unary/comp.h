// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/comp.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// comp.h: ALWI void gtz_tile(uint32_t idst) / gtz_tile_init()   (1.0 where x > 0, else 0.0)
void gtz_tile_init();
void gtz_tile(uint32_t idst);
// comp.h: ALWI void gez_tile(uint32_t idst) / gez_tile_init()
void gez_tile_init();
void gez_tile(uint32_t idst);
// comp.h: ALWI void ltz_tile(uint32_t idst) / ltz_tile_init()
void ltz_tile_init();
void ltz_tile(uint32_t idst);
// comp.h: ALWI void lez_tile(uint32_t idst) / lez_tile_init()
void lez_tile_init();
void lez_tile(uint32_t idst);
// comp.h: ALWI void eqz_tile(uint32_t idst) / eqz_tile_init()
void eqz_tile_init();
void eqz_tile(uint32_t idst);
// comp.h: ALWI void nez_tile(uint32_t idst) / nez_tile_init()
void nez_tile_init();
void nez_tile(uint32_t idst);
}  // namespace ckernel
