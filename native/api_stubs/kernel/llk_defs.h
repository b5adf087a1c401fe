// Stub of tt_metal/tt-llk/tt_llk_wormhole_b0/llk_lib/llk_defs.h (identical enums in tt_llk_blackhole), tt-metal v0.81.1.
#pragma once
#include <cstdint>
#include "tensix_types.h"

namespace ckernel {

// llk_defs.h: enum class VectorMode : std::uint8_t
enum class VectorMode : std::uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
// llk_defs.h: enum class ReduceDim : std::uint8_t
enum class ReduceDim : std::uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
// llk_defs.h: enum class PoolType : std::uint8_t
enum class PoolType : std::uint8_t { SUM, AVG, MAX, MIN };
// llk_defs.h: enum class DataCopyType : std::uint8_t
enum class DataCopyType : std::uint8_t { A2D, B2D };
// llk_defs.h: enum class EltwiseBinaryType : std::uint8_t
enum class EltwiseBinaryType : std::uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWLESS };
// llk_defs.h: enum class EltwiseBinaryReuseDestType
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
// llk_defs.h: enum class DstSync : std::uint8_t
enum class DstSync : std::uint8_t { SyncHalf = 0, SyncFull = 1 };
// llk_defs.h: enum class BroadcastType : std::uint8_t
enum class BroadcastType : std::uint8_t { NONE = 0x0, COL = 0x1, ROW = 0x2, SCALAR = 0x3 };
// llk_defs.h: enum class MathFidelity : std::uint8_t
enum class MathFidelity : std::uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
// llk_defs.h: enum class ReluType : std::uint8_t
enum class ReluType : std::uint8_t { NO_RELU = 0, ZERO_RELU, MIN_THRESHOLD_RELU, MAX_THRESHOLD_RELU };
// llk_defs.h: struct ReluConfig (packer ReLU mode + threshold); opaque here.
struct ReluConfig;

}  // namespace ckernel
