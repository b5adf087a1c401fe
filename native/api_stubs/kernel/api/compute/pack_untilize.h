// Stub of tt_metal/hw/inc/api/compute/pack_untilize.h (tt-metal v0.81.1). The unpack-based untilize_block of
// untilize.h is [[deprecated]] in v0.81.1 (tt-metal#22904): pack_untilize replaces it.
#pragma once
#include <cstdint>
#include "api/compute/common_globals.h"

namespace ckernel {
// pack_untilize.h: template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en =
//                  DST_ACCUM_MODE> ALWI void pack_untilize_init(uint32_t icb, uint32_t ocb,
//                  uint32_t call_line = __builtin_LINE())
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void pack_untilize_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE());
// pack_untilize.h: template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en =
//                  DST_ACCUM_MODE> ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb,
//                  uint32_t block_c_index = 0)
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0);
// pack_untilize.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void pack_untilize_uninit(uint32_t ocb)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void pack_untilize_uninit(uint32_t ocb);
}  // namespace ckernel
