// Stub of tt_metal/hw/inc/api/compute/bcast.h (tt-metal v0.81.1). FPU binary ops with operand B broadcast.
// General form: bcast_init<OP, DIM>(icb0, icb1) + any_tiles_bcast<OP, DIM>(...) or add/sub/mul_tiles_bcast<DIM>(...).
// v0.81.1 renamed the *_init_short inits to *_init (e.g. add_bcast_rows_init_short -> add_bcast_rows_init).
#pragma once
#include "api/compute/common.h"

namespace ckernel {
// bcast.h: template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim> ALWI void bcast_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE())
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
void bcast_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
// bcast.h: template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
//          ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0)
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void any_tiles_bcast(
    uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
// bcast.h: template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void add_tiles_bcast(..., uint32_t bcast_row_idx = 0)
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_tiles_bcast(
    uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
// bcast.h: template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void sub_tiles_bcast(..., uint32_t bcast_row_idx = 0)
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_tiles_bcast(
    uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
// bcast.h: template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void mul_tiles_bcast(..., uint32_t bcast_row_idx = 0)
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_tiles_bcast(
    uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);

// bcast.h: per-op inits, all ALWI void X(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE())
void add_bcast_rows_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void add_bcast_cols_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void add_bcast_scalar_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void sub_bcast_rows_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void sub_bcast_cols_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void sub_bcast_scalar_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void mul_bcast_rows_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void mul_bcast_cols_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());
void mul_bcast_scalar_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE());

// bcast.h: per-op tile calls. *_rows take an extra `uint32_t bcast_row_idx = 0`; all have template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>.
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void add_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void sub_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx = 0);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void mul_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst);

// bcast.h: template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void unary_bcast_init(uint32_t icb)
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void unary_bcast_init(uint32_t icb);
// bcast.h: template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index)
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index);
}  // namespace ckernel
