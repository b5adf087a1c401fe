// Stub of tt_metal/hw/inc/api/compute/reduce.h (tt-metal v0.81.1). Reduce type/dim are template arguments
// (no more REDUCE_OP / REDUCE_DIM define defaults).
#pragma once
#include <cstdint>
#include "api/compute/common.h"
#include "tensor_shape.h"

namespace ckernel {
// reduce.h: template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//           ALWI void reduce_init(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t ocb, std::uint32_t call_line = __builtin_LINE())
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void reduce_init(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t ocb, std::uint32_t call_line = __builtin_LINE());
// reduce.h: ALWI void reduce_uninit(std::uint32_t icb = 0)
void reduce_uninit(std::uint32_t icb = 0);
// reduce.h: template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//           ALWI void reduce_tile(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t itile, std::uint32_t itile_scaler, std::uint32_t idst)
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void reduce_tile(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t itile, std::uint32_t itile_scaler, std::uint32_t idst);
// reduce.h: template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//           ALWI void reduce_block(icb, icb_scaler, start_itile, itile_scaler, start_idst, ntiles)
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void reduce_block(
    std::uint32_t icb,
    std::uint32_t icb_scaler,
    std::uint32_t start_itile,
    std::uint32_t itile_scaler,
    std::uint32_t start_idst,
    std::uint32_t ntiles);
}  // namespace ckernel
