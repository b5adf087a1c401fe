// Stub of tt_metal/hw/inc/api/compute/binary_bitwise_sfpu.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_bitwise_sfpu.h: ALWI void binary_bitwise_tile_init()
void binary_bitwise_tile_init();
// binary_bitwise_sfpu.h: template <DataFormat data_format> ALWI void bitwise_and_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void bitwise_and_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_bitwise_sfpu.h: template <DataFormat data_format> ALWI void bitwise_or_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void bitwise_or_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_bitwise_sfpu.h: template <DataFormat data_format> ALWI void bitwise_xor_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void bitwise_xor_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
