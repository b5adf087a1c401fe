// Stub of tt_metal/hw/inc/api/compute/pack.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// pack.h: ALWI void pack_init(std::uint32_t ocb, std::uint32_t call_line = __builtin_LINE())
void pack_init(std::uint32_t ocb, std::uint32_t call_line = __builtin_LINE());
// pack.h: template <bool out_of_order_output = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//         ALWI void pack_tile(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t output_tile_index = 0)
template <bool out_of_order_output = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void pack_tile(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t output_tile_index = 0);
// pack.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void pack_block(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void pack_block(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t ntiles);
// pack.h: ALWI void pack_reconfig_l1_acc(const std::uint32_t l1_acc_en)
void pack_reconfig_l1_acc(const std::uint32_t l1_acc_en);
}  // namespace ckernel
