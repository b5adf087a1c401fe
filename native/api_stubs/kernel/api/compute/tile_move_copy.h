// Stub of tt_metal/hw/inc/api/compute/tile_move_copy.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>
#include "api/compute/common_globals.h"
#include "api/compute/reconfig_data_format.h"

namespace ckernel {
// tile_move_copy.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void copy_init(std::uint32_t cbid,
//                   std::uint32_t transpose = 0, std::uint32_t transpose_within_16x16_face = false, std::uint32_t call_line = __builtin_LINE())
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void copy_init(
    std::uint32_t cbid,
    std::uint32_t transpose = 0,
    std::uint32_t transpose_within_16x16_face = false,
    std::uint32_t call_line = __builtin_LINE());
// tile_move_copy.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void copy_tile(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void copy_tile(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index);
// tile_move_copy.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void copy_block(std::uint32_t in_cb_id,
//                   std::uint32_t start_in_tile_index, std::uint32_t start_dst_tile_index, std::uint32_t ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void copy_block(
    std::uint32_t in_cb_id, std::uint32_t start_in_tile_index, std::uint32_t start_dst_tile_index, std::uint32_t ntiles);
// tile_move_copy.h: deprecated ("Renamed to copy_init(). This will be removed after 20-09-2026.")
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init(). This will be removed after 20-09-2026.")]] void copy_tile_init(
    std::uint32_t cbid, std::uint32_t call_line = __builtin_LINE());
// tile_move_copy.h: deprecated ("Renamed to copy_init(). This will be removed after 20-09-2026.")
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Renamed to copy_init(). This will be removed after 20-09-2026.")]] void copy_tile_to_dst_init_short(
    std::uint32_t cbid,
    std::uint32_t transpose = 0,
    std::uint32_t transpose_within_16x16_face = false,
    std::uint32_t call_line = __builtin_LINE());
}  // namespace ckernel
