// Stub of tt_metal/api/tt-metalium/base_types.hpp (tt-metal v0.81.1).
#pragma once
#include <cstdint>

namespace tt::tt_metal {
// base_types.hpp: enum class MathFidelity : uint8_t
enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4, Invalid = 0xff };
// base_types.hpp: enum class UnpackToDestMode : uint8_t
enum class UnpackToDestMode : uint8_t { UnpackToDestFp32, Default };
}  // namespace tt::tt_metal
