// Stub of tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc/ckernel_instr_params.h (tt-metal v0.81.1), p_sfpu constants only.
#pragma once
#include <cstdint>

namespace ckernel {

// ckernel_instr_params.h: struct p_sfpu { constexpr static std::uint32_t kCONST_1_FP16B = 0x3F80; ... };
struct p_sfpu {
    constexpr static std::uint32_t kCONST_1_FP16B = 0x3F80;
    constexpr static std::uint32_t kCONST_1_FP16A = 0x3C00;
    constexpr static std::uint32_t kCONST_0 = 0x0000;
};

}  // namespace ckernel
