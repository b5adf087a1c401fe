// Stub of tt_metal/api/tt-metalium/sub_device_types.hpp (tt-metal v0.81.1).
#pragma once
#include <cstdint>
#include <tt_stl/strong_type.hpp>

namespace tt::tt_metal {
// sub_device_types.hpp: using SubDeviceId = ttsl::StrongType<uint8_t, struct SubDeviceIdTag>;
using SubDeviceId = ttsl::StrongType<uint8_t, struct SubDeviceIdTag>;
}  // namespace tt::tt_metal
