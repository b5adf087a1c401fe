// Stub of tt_metal/hw/inc/api/compute/eltwise_unary/eltwise_unary.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

namespace ckernel {
// eltwise_unary.h: deprecated ("Use compute_kernel_hw_startup(icb, ocb) once at kernel start, then copy_init(icb). This will be removed after 20-09-2026.")
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "Use compute_kernel_hw_startup(icb, ocb) once at kernel start, then copy_init(icb). This will be removed after "
    "20-09-2026.")]] void unary_op_init_common(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE());
// eltwise_unary.h: deprecated (same message as unary_op_init_common)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "Use compute_kernel_hw_startup(icb, ocb) once at kernel start, then copy_init(icb). This will be removed after "
    "20-09-2026.")]] void init_sfpu(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE());
}  // namespace ckernel
