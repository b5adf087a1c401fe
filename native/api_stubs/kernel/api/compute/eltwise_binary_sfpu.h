// Stub of tt_metal/hw/inc/api/compute/eltwise_binary_sfpu.h (tt-metal v0.81.1). SFPU binary ops on two Dst tiles.
// v0.81.1 takes THREE Dst indices (idst0, idst1, odst); older releases took two (result in idst0).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// eltwise_binary_sfpu.h: template <DstRoundingMode dst_rounding_mode = DstRoundingMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//                        ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// eltwise_binary_sfpu.h: same template as add_binary_tile
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// eltwise_binary_sfpu.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// eltwise_binary_sfpu.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void div_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void div_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// eltwise_binary_sfpu.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
// eltwise_binary_sfpu.h: ALWI void add_binary_tile_init() / sub_ / mul_ / div_ / power_
void add_binary_tile_init();
void sub_binary_tile_init();
void mul_binary_tile_init();
void div_binary_tile_init();
void power_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void eq_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / eq_binary_tile_init()   (1.0 where a eq b, else 0.0)
void eq_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void eq_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void ne_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / ne_binary_tile_init()   (1.0 where a ne b, else 0.0)
void ne_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void ne_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void lt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / lt_binary_tile_init()   (1.0 where a lt b, else 0.0)
void lt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void lt_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void gt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / gt_binary_tile_init()   (1.0 where a gt b, else 0.0)
void gt_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void gt_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void le_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / le_binary_tile_init()   (1.0 where a le b, else 0.0)
void le_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void le_binary_tile_init();
// eltwise_binary_sfpu.h: ALWI void ge_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) / ge_binary_tile_init()   (1.0 where a ge b, else 0.0)
void ge_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst);
void ge_binary_tile_init();
}  // namespace ckernel
