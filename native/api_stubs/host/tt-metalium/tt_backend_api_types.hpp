// Stub of tt_metal/api/tt-metalium/tt_backend_api_types.hpp / data_format.hpp (tt-metal v0.81.1): host-side
// tt::DataFormat (same numeric values as the device's tensix_types.h DataFormat).
#pragma once
#include <cstdint>

namespace tt {
// enum class DataFormat : uint8_t
enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Bfp2 = 11,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Bfp2_b = 15,
    Lf8 = 10,
    Fp8_e4m3 = 0x1A,
    Int8 = 14,
    Tf32 = 4,
    UInt8 = 30,
    UInt16 = 9,
    Int32 = 8,
    UInt32 = 24,
    RawUInt8 = 0xf0,
    RawUInt16 = 0xf1,
    RawUInt32 = 0xf2,
    Invalid = 0xff
};
}  // namespace tt
