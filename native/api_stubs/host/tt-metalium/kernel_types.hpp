// Stub of tt_metal/api/tt-metalium/kernel_types.hpp (tt-metal v0.81.1). Member ORDER matters for designated
// initializers; it follows the real header (compiler_include_paths was appended by tt-metal PR #43470, 2026-05).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
#include <tt-metalium/base_types.hpp>

namespace tt::tt_metal {
// kernel_types.hpp: enum class DataMovementProcessor { RISCV_0 = 0 (BRISC), RISCV_1 = 1 (NCRISC), RISCV_2..7 (Quasar) }
enum class DataMovementProcessor { RISCV_0 = 0, RISCV_1 = 1, RISCV_2 = 2, RISCV_3 = 3, RISCV_4 = 4, RISCV_5 = 5, RISCV_6 = 6, RISCV_7 = 7 };
// kernel_types.hpp: enum NOC : uint8_t
enum NOC : uint8_t { RISCV_0_default = 0, RISCV_1_default = 1, NOC_0 = 0, NOC_1 = 1 };
// kernel_types.hpp: enum NOC_MODE : uint8_t
enum NOC_MODE : uint8_t { DM_DEDICATED_NOC = 0, DM_DYNAMIC_NOC = 1 };
// kernel_types.hpp: constexpr uint32_t max_runtime_args = 341;
constexpr uint32_t max_runtime_args = 341;
// kernel_types.hpp: using KernelHandle = std::uint32_t;
using KernelHandle = std::uint32_t;
// kernel_types.hpp: enum class KernelBuildOptLevel : uint8_t
enum class KernelBuildOptLevel : uint8_t { O1, O2, O3, O0, Os, Ofast, Oz };

// kernel_types.hpp: struct DataMovementConfig
struct DataMovementConfig {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    NOC_MODE noc_mode = NOC_MODE::DM_DEDICATED_NOC;
    std::vector<uint32_t> compile_args;                           // -> get_compile_time_arg_val(i)
    std::map<std::string, std::string> defines;                   // -> defines_generated.h
    std::unordered_map<std::string, uint32_t> named_compile_args; // -> get_named_compile_time_arg_val("name")
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O2;
    std::vector<std::string> compiler_include_paths;              // extra -I for the JIT (PR #43470)
};

// kernel_types.hpp: struct ComputeConfig
struct ComputeConfig {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;   // -> DST_ACCUM_MODE in the kernel
    bool dst_full_sync_en = false;   // -> DST_SYNC_MODE
    std::vector<UnpackToDestMode> unpack_to_dest_mode;
    bool bfp8_pack_precise = false;
    bool math_approx_mode = false;   // -> APPROX (math TRISC only)
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_compile_args;
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O3;
    std::vector<std::string> compiler_include_paths;              // (PR #43470)
};
}  // namespace tt::tt_metal
