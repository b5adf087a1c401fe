// Stub of tt_metal/hw/inc/api/compute/common.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"

// Runtime args are read the same way as in data movement kernels (global namespace):
// common.h: static FORCE_INLINE uint32_t get_arg_addr(int arg_idx)
uint32_t get_arg_addr(int arg_idx);
// common.h: static FORCE_INLINE uint32_t get_common_arg_addr(int arg_idx)
uint32_t get_common_arg_addr(int arg_idx);
// common.h: template <typename T> FORCE_INLINE T get_arg_val(int arg_idx)   (only 4-byte T)
template <typename T>
T get_arg_val(int arg_idx);
// common.h: template <typename T> FORCE_INLINE T get_common_arg_val(int arg_idx)
template <typename T>
T get_common_arg_val(int arg_idx);
