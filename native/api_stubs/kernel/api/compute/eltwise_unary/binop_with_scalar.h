// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/binop_with_scalar.h (tt-metal v0.81.1).
// param1 = "fp32 value scalar encoded as uint32" (float32 bits).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// binop_with_scalar.h: ALWI void binop_with_scalar_tile_init()
void binop_with_scalar_tile_init();
// binop_with_scalar.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void add_unary_tile(uint32_t idst, uint32_t param1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_unary_tile(uint32_t idst, uint32_t param1);
// binop_with_scalar.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sub_unary_tile(uint32_t idst, uint32_t param1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_unary_tile(uint32_t idst, uint32_t param1);
// binop_with_scalar.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void mul_unary_tile(uint32_t idst, uint32_t param1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_unary_tile(uint32_t idst, uint32_t param1);
// binop_with_scalar.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void div_unary_tile(uint32_t idst, uint32_t param1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void div_unary_tile(uint32_t idst, uint32_t param1);
// binop_with_scalar.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void rsub_unary_tile(uint32_t idst, uint32_t param1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void rsub_unary_tile(uint32_t idst, uint32_t param1);
}  // namespace ckernel
