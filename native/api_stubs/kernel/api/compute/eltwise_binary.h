// Stub of tt_metal/hw/inc/api/compute/eltwise_binary.h (tt-metal v0.81.1). FPU binary ops: both operands from CBs.
// v0.81.1 names: add_init/sub_init/mul_init (old add_tiles_init/sub_tiles_init/mul_tiles_init and
// binary_op_init_common were removed; use compute_kernel_hw_startup(icb0, icb1, ocb) once instead).
#pragma once
#include <cstdint>
#include "api/compute/common.h"

namespace ckernel {
// eltwise_binary.h: template <bool full_init, EltwiseBinaryType eltwise_binary_type> ALWI void binary_tiles_init(
//                   std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE())
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
void binary_tiles_init(
    std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE());
// eltwise_binary.h: ALWI void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE())
void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE());
// eltwise_binary.h: ALWI void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE())
void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false, std::uint32_t call_line = __builtin_LINE());
// eltwise_binary.h: ALWI void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = true, std::uint32_t call_line = __builtin_LINE())
//                   (acc_to_dest defaults to true for Quasar compatibility; unused on Wormhole/Blackhole)
void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = true, std::uint32_t call_line = __builtin_LINE());
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void add_tiles(icb0, icb1, itile0, itile1, idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst);
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sub_tiles(icb0, icb1, itile0, itile1, idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst);
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void mul_tiles(icb0, icb1, itile0, itile1, idst)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_tiles(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1, std::uint32_t idst);
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void add_block(icb0, icb1, start_itile0, start_itile1, start_idst, ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
    std::uint32_t start_idst, std::uint32_t ntiles);
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sub_block(icb0, icb1, start_itile0, start_itile1, start_idst, ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
    std::uint32_t start_idst, std::uint32_t ntiles);
// eltwise_binary.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void mul_block(icb0, icb1, start_itile0, start_itile1, start_idst, ntiles)
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_block(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t start_itile0, std::uint32_t start_itile1,
    std::uint32_t start_idst, std::uint32_t ntiles);
// eltwise_binary.h: template <EltwiseBinaryReuseDestType reuse_dest> ALWI void add_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE())
template <EltwiseBinaryReuseDestType reuse_dest>
void add_reuse_dest_init(std::uint32_t icb, std::uint32_t call_line = __builtin_LINE());
// eltwise_binary.h: template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//                   ALWI void add_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index)
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index);
}  // namespace ckernel
