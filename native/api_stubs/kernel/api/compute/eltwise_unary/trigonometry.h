// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/trigonometry.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// trigonometry.h: ALWI void sin_tile_init()
void sin_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sin_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sin_tile(uint32_t idst);
// trigonometry.h: ALWI void cos_tile_init()
void cos_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void cos_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void cos_tile(uint32_t idst);
// trigonometry.h: ALWI void tan_tile_init()
void tan_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tan_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tan_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atan_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atan_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atan_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atan_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void asin_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void asin_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void asin_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void asin_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void acos_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void acos_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void acos_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void acos_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sinh_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sinh_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sinh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sinh_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void cosh_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void cosh_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void cosh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void cosh_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void asinh_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void asinh_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void asinh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void asinh_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void acosh_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void acosh_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void acosh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void acosh_tile(uint32_t idst);
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atanh_tile_init()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atanh_tile_init();
// trigonometry.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void atanh_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void atanh_tile(uint32_t idst);
}  // namespace ckernel
