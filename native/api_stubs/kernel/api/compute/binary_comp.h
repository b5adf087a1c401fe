// Stub of tt_metal/hw/inc/api/compute/binary_comp.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_comp.h: template <DataFormat data_format> ALWI void eq_int_tile_init()
template <DataFormat data_format>
void eq_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void eq_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void eq_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_comp.h: template <DataFormat data_format> ALWI void ne_int_tile_init()
template <DataFormat data_format>
void ne_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void ne_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void ne_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_comp.h: template <DataFormat data_format> ALWI void lt_int_tile_init()
template <DataFormat data_format>
void lt_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void lt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void lt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_comp.h: template <DataFormat data_format> ALWI void gt_int_tile_init()
template <DataFormat data_format>
void gt_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void gt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void gt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_comp.h: template <DataFormat data_format> ALWI void le_int_tile_init()
template <DataFormat data_format>
void le_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void le_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void le_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_comp.h: template <DataFormat data_format> ALWI void ge_int_tile_init()
template <DataFormat data_format>
void ge_int_tile_init();
// binary_comp.h: template <DataFormat data_format> ALWI void ge_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <DataFormat data_format>
void ge_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
