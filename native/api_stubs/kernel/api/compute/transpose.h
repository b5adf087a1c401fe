// Stub of tt_metal/hw/inc/api/compute/transpose.h (tt-metal v0.81.1). Replaces transpose_wh.h:
// transpose_wh_init/transpose_wh_init_short/transpose_wh_tile -> transpose_init/transpose_tile (tt-metal PR #23835).
#pragma once
#include "api/compute/common.h"

namespace ckernel {
// transpose.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void transpose_init(uint32_t icb, uint32_t call_line = __builtin_LINE())
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void transpose_init(uint32_t icb, uint32_t call_line = __builtin_LINE());
// transpose.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst);
// transpose.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void transpose_block(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void transpose_block(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles);
}  // namespace ckernel
