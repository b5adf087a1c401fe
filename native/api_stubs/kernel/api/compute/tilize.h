// Stub of tt_metal/hw/inc/api/compute/tilize.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>
#include "api/compute/common_globals.h"

namespace ckernel {
// tilize.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tilize_init(uint32_t icb, uint32_t block,
//           uint32_t ocb, uint32_t call_line = __builtin_LINE())
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t call_line = __builtin_LINE());
// tilize.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tilize_block(uint32_t icb, uint32_t block,
//           uint32_t ocb, uint32_t input_tile_index = 0, uint32_t output_tile_index = 0)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                  uint32_t output_tile_index = 0);
// tilize.h: ALWI void tilize_uninit(uint32_t icb, uint32_t ocb)
void tilize_uninit(uint32_t icb, uint32_t ocb);
}  // namespace ckernel
