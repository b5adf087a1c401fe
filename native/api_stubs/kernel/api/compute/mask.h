// Stub of tt_metal/hw/inc/api/compute/mask.h (tt-metal v0.81.1).
// NOTE (real source): idst2_mask is ignored; the mask is read from Dst[idst_data + 1]. Where the mask is zero,
// mask_tile writes 0 and mask_posinf_tile writes +inf. There is no -inf variant in v0.81.1.
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// mask.h: ALWI void mask_tile_init()
void mask_tile_init();
// mask.h: ALWI void mask_tile(uint32_t idst_data, uint32_t idst2_mask, DataFormat data_format = DataFormat::Float16_b)
void mask_tile(uint32_t idst_data, uint32_t idst2_mask, DataFormat data_format = DataFormat::Float16_b);
// mask.h: ALWI void mask_posinf_tile(uint32_t idst_data, uint32_t idst2_mask)
void mask_posinf_tile(uint32_t idst_data, uint32_t idst2_mask);
}  // namespace ckernel
