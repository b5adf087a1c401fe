// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/erf_erfc.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// erf_erfc.h: template <bool fast_and_approx = true> ALWI void erf_tile_init()
template <bool fast_and_approx = true>
void erf_tile_init();
// erf_erfc.h: template <bool fast_and_approx = true> ALWI void erf_tile(uint32_t idst)
template <bool fast_and_approx = true>
void erf_tile(uint32_t idst);
// erf_erfc.h: ALWI void erfc_tile_init() / ALWI void erfc_tile(uint32_t idst)
void erfc_tile_init();
void erfc_tile(uint32_t idst);
}  // namespace ckernel
