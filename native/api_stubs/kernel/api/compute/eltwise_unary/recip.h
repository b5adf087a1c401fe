// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/recip.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// recip.h: enum class ReciprocalDestAcc { BF16, FP32 };
enum class ReciprocalDestAcc { BF16, FP32 };
// recip.h: enum class ReciprocalApproxMode { Default, Precise, Approximate };
enum class ReciprocalApproxMode { Default, Precise, Approximate };
// recip.h: template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
//                    ReciprocalApproxMode approximation = ReciprocalApproxMode::Default> ALWI void recip_tile_init()
template <
    ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
    ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
void recip_tile_init();
// recip.h: same template; ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC)
template <
    ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
    ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC);
}  // namespace ckernel
