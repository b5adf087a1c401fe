// Stub of the JIT-generated chlkc_descriptors.h (written by tt_metal/jit_build/genfiles.cpp,
// generate_all_descriptors(), tt-metal v0.81.1). Values here are placeholders; the real ones come from ComputeConfig.
#pragma once
#include <cstdint>

#if defined(UCK_CHLKC_MATH)
#include "llk_defs.h"
// genfiles.cpp emit_math_scalar_descriptors(): ComputeConfig::math_fidelity
constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>(4);
// genfiles.cpp emit_math_scalar_descriptors(): ComputeConfig::math_approx_mode (math TRISC only!)
constexpr bool APPROX = false;
#endif

#if !defined(UCK_CHLKC_PACK)
// genfiles.cpp emit_unpack_data_formats()/emit_unpack_tile_dims(): per-CB tables (64 CBs on Blackhole, 32 on Wormhole).
constexpr std::int32_t unpack_src_format[64] = {};
constexpr std::int32_t unpack_dst_format[64] = {};
constexpr uint8_t unpack_tile_num_faces[64] = {};
constexpr uint8_t unpack_tile_r_dim[64] = {};
constexpr uint8_t unpack_tile_c_dim[64] = {};
constexpr uint16_t unpack_tile_size[64] = {};
#endif

#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK) || defined(UCK_CHLKC_UNPACK) || defined(UCK_CHLKC_ISOLATE_SFPU)
// genfiles.cpp emit_compute_scalar_descriptors(): ComputeConfig::fp32_dest_acc_en (all TRISCs)
constexpr bool DST_ACCUM_MODE = false;
// genfiles.cpp emit_compute_scalar_descriptors(): "#define DST_SYNC_MODE DstSync::Sync{Full|Half}" (dst_full_sync_en)
#define DST_SYNC_MODE DstSync::SyncHalf
#endif
