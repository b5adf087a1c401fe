// Stub of tt_metal/hw/inc/api/compute/reconfig_data_format.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"
#include "api/compute/src_order.h"

namespace ckernel {
// reconfig_data_format.h: template <SrcOrder src_order = SrcOrder::Regular> ALWI void reconfig_data_format(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand)
template <SrcOrder src_order = SrcOrder::Regular>
void reconfig_data_format(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand);
// reconfig_data_format.h: template <SrcOrder src_order = SrcOrder::Regular> ALWI void reconfig_data_format(old0, new0, old1, new1)
template <SrcOrder src_order = SrcOrder::Regular>
void reconfig_data_format(
    const uint32_t icb0_old_operand,
    const uint32_t icb0_new_operand,
    const uint32_t icb1_old_operand,
    const uint32_t icb1_new_operand);
// reconfig_data_format.h: ALWI void reconfig_data_format_srca(const uint32_t srca_new_operand)
void reconfig_data_format_srca(const uint32_t srca_new_operand);
// reconfig_data_format.h: ALWI void reconfig_data_format_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand)
void reconfig_data_format_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand);
// reconfig_data_format.h: ALWI void reconfig_data_format_srcb(const uint32_t srcb_new_operand)
void reconfig_data_format_srcb(const uint32_t srcb_new_operand);
// reconfig_data_format.h: ALWI void reconfig_data_format_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand)
void reconfig_data_format_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand);
// reconfig_data_format.h: template <bool is_tile_dim_reconfig_en = false> ALWI void pack_reconfig_data_format(const uint32_t new_cb_id)
template <bool is_tile_dim_reconfig_en = false>
void pack_reconfig_data_format(const uint32_t new_cb_id);
// reconfig_data_format.h: template <bool is_tile_dim_reconfig_en = false> ALWI void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id)
template <bool is_tile_dim_reconfig_en = false>
void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id);
}  // namespace ckernel
