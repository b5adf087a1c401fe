// Stub of tt_metal/hw/inc/api/compute/compute_kernel_api.h (tt-metal v0.81.1): the SFPU unary ops that live in
// the monolith header. `fast_and_approx`-style template flags are explicit here; ComputeConfig::math_approx_mode
// (APPROX) is only a default inside the implementation and exists only on the math TRISC.
#pragma once
#include <cstdint>
#include "api/compute/common_globals.h"

namespace ckernel {
// compute_kernel_api.h: template <bool fast_and_approx = false> ALWI void sigmoid_tile_init()
template <bool fast_and_approx = false>
void sigmoid_tile_init();
// compute_kernel_api.h: template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sigmoid_tile(uint32_t idst)
template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sigmoid_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void silu_tile_init()
void silu_tile_init();
// compute_kernel_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void silu_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void silu_tile(uint32_t idst);
// compute_kernel_api.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tanh_tile_init()
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tanh_tile_init();
// compute_kernel_api.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tanh_tile(uint32_t idst)
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tanh_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void square_tile_init()
void square_tile_init();
// compute_kernel_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void square_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void square_tile(uint32_t idst);
// compute_kernel_api.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void log_tile_init()
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void log_tile_init();
// compute_kernel_api.h: template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void log_tile(uint32_t idst)
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void log_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void abs_tile_init()
void abs_tile_init();
// compute_kernel_api.h: ALWI void abs_tile(uint32_t idst)
void abs_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void sign_tile_init()
void sign_tile_init();
// compute_kernel_api.h: ALWI void sign_tile(uint32_t idst)
void sign_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void power_tile_init()
void power_tile_init();
// compute_kernel_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void power_tile(uint32_t idst, uint32_t param0)
//   param0 = the exponent as IEEE-754 float32 bits (NOT an integer in v0.81.1)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void power_tile(uint32_t idst, uint32_t param0);
// compute_kernel_api.h: ALWI void power_iterative_tile_init()
void power_iterative_tile_init();
// compute_kernel_api.h: ALWI void power_iterative_tile(uint32_t idst, uint32_t param0)   (param0 = non-negative integer exponent)
void power_iterative_tile(uint32_t idst, uint32_t param0);
// compute_kernel_api.h: ALWI void unary_max_tile_init() / unary_max_tile(uint32_t idst, uint32_t param0)  (param0 = float32 bits)
void unary_max_tile_init();
void unary_max_tile(uint32_t idst, uint32_t param0);
// compute_kernel_api.h: ALWI void unary_min_tile_init() / unary_min_tile(uint32_t idst, uint32_t param0)  (param0 = float32 bits)
void unary_min_tile_init();
void unary_min_tile(uint32_t idst, uint32_t param0);
// compute_kernel_api.h: template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void expm1_tile_init() / expm1_tile(uint32_t idst)
template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void expm1_tile_init();
template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void expm1_tile(uint32_t idst);
// compute_kernel_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void exp2_tile_init() / exp2_tile(uint32_t idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void exp2_tile_init();
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void exp2_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void sign_tile_init() / ALWI void sign_tile(uint32_t idst)
void sign_tile_init();
void sign_tile(uint32_t idst);
// compute_kernel_api.h: ALWI void abs_tile_int32(uint32_t idst)
void abs_tile_int32(uint32_t idst);
}  // namespace ckernel
