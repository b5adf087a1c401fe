// Stub of tt_metal/hw/inc/api/compute/reg_api.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// reg_api.h: ALWI void tile_regs_acquire()
void tile_regs_acquire();
// reg_api.h: ALWI void tile_regs_wait()
void tile_regs_wait();
// reg_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tile_regs_commit()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tile_regs_commit();
// reg_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> ALWI void tile_regs_release()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
void tile_regs_release();
// reg_api.h: [[deprecated("Use tile_regs_acquire() instead")]] ALWI void acquire_dst()
[[deprecated("Use tile_regs_acquire() instead")]] void acquire_dst();
// reg_api.h: template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> [[deprecated("Use tile_regs_release() instead")]] ALWI void release_dst()
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Use tile_regs_release() instead")]] void release_dst();
}  // namespace ckernel
