// Stub of tt_metal/hw/inc/api/compute/binary_fmod.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binary_fmod.h: ALWI void fmod_binary_tile_init()
void fmod_binary_tile_init();
// binary_fmod.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void fmod_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void fmod_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// binary_fmod.h: ALWI void fmod_int32_tile_init()
void fmod_int32_tile_init();
// binary_fmod.h: ALWI void fmod_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
void fmod_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
}  // namespace ckernel
