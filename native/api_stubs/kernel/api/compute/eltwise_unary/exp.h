// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/exp.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// exp.h: enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 }
enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 };
// exp.h: template <bool approx = false, uint32_t scale = 0x3F800000, InputClamping input_clamping = InputClamping::ClampToNegative,
//                  bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void exp_tile_init()
template <
    bool approx = false,
    uint32_t scale = 0x3F800000,
    InputClamping input_clamping = InputClamping::ClampToNegative,
    bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void exp_tile_init();
// exp.h: template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
//                  int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//        ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B)
template <
    bool approx = false,
    bool scale_en = false,
    InputClamping input_clamping = InputClamping::ClampToNegative,
    int iterations = 8,
    bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B);
}  // namespace ckernel
