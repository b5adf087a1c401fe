// Stub of tt_metal/hw/inc/api/compute/binary_shift.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_shift.h: ALWI void binary_shift_tile_init()
void binary_shift_tile_init();
// binary_shift.h: template <DataFormat data_format> ALWI void binary_left_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void binary_left_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_shift.h: template <DataFormat data_format> ALWI void binary_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void binary_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_shift.h: template <DataFormat data_format> ALWI void binary_logical_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void binary_logical_right_shift_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
