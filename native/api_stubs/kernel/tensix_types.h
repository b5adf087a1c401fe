// Stub of tt_metal/hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines/tensix_types.h
// (same values in .../blackhole/tensix_types.h; the JIT puts the arch directory on -I, so kernels see "tensix_types.h").
#pragma once
#include <cstdint>

// tensix_types.h: enum class DataFormat : std::uint8_t (global namespace on device).
enum class DataFormat : std::uint8_t {
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
    Int8 = 14,
    UInt8 = 30,
    UInt16 = 9,
    Int32 = 8,
    UInt32 = 24,
    Tf32 = 4,
    Invalid = 0xff
};
