// Stub of tt_metal/hostdevcommon/api/hostdevcommon/common_values.hpp (tt-metal v0.81.1).
#pragma once
#include <cstddef>
#include <cstdint>

// common_values.hpp: 0 means "use the runtime default" for all three.
constexpr static std::size_t DEFAULT_L1_SMALL_SIZE = 0;
constexpr static std::size_t DEFAULT_TRACE_REGION_SIZE = 0;
constexpr static std::size_t DEFAULT_WORKER_L1_SIZE = 0;  // Size is dynamically determined based on the device type.
