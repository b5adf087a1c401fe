// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/relu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// relu.h: ALWI void relu_tile_init()
void relu_tile_init();
// relu.h: ALWI void relu_tile(uint32_t idst)
void relu_tile(uint32_t idst);
// relu.h: ALWI void relu_max_tile_init() / relu_max_tile(uint32_t idst, uint32_t param0)   (param0 = threshold)
void relu_max_tile_init();
void relu_max_tile(uint32_t idst, uint32_t param0);
// relu.h: ALWI void relu_min_tile_init() / relu_min_tile(uint32_t idst, uint32_t param0)   (param0 = threshold)
void relu_min_tile_init();
void relu_min_tile(uint32_t idst, uint32_t param0);
// relu.h: ALWI void leaky_relu_tile_init()
void leaky_relu_tile_init();
// relu.h: ALWI void leaky_relu_tile(uint32_t idst, uint32_t slope = 0)   (slope = float32 bits, "reinterpret unsigned int to float")
void leaky_relu_tile(uint32_t idst, uint32_t slope = 0);
}  // namespace ckernel
