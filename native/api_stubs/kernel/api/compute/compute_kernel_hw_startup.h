// Stub of tt_metal/hw/inc/api/compute/compute_kernel_hw_startup.h (tt-metal v0.81.1).
// v0.81.1 programming model: call compute_kernel_hw_startup once at the top of kernel_main, then <op>_init before each op.
// (Replaces binary_op_init_common / unary_op_init_common / mm_init full inits of older releases.)
#pragma once
#include "api/compute/common_globals.h"
#include "api/compute/src_order.h"

namespace ckernel {
// compute_kernel_hw_startup.h: template <SrcOrder src_order = SrcOrder::Regular> ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb)
template <SrcOrder src_order = SrcOrder::Regular>
void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb);
// compute_kernel_hw_startup.h: ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb)
void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb);
}  // namespace ckernel
