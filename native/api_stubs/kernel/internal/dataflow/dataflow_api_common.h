// Stub of tt_metal/hw/inc/internal/dataflow/dataflow_api_common.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>

#ifndef NOC_INDEX
#define NOC_INDEX 0  // the JIT passes -DNOC_INDEX=<DataMovementConfig::noc>
#endif
#ifndef NOC_MODE
#define NOC_MODE 0  // the JIT passes -DNOC_MODE=<DataMovementConfig::noc_mode>
#endif
// dataflow_api_common.h (KERNEL_BUILD): constexpr uint8_t noc_index = NOC_INDEX;
constexpr uint8_t noc_index = NOC_INDEX;
// dataflow_api_common.h (KERNEL_BUILD): constexpr uint8_t noc_mode = NOC_MODE;
constexpr uint8_t noc_mode = NOC_MODE;

// dataflow_api_common.h: #define NOC_UNICAST_WRITE_VC 1 / NOC_MULTICAST_WRITE_VC 4 (Wormhole/Blackhole)
#define NOC_UNICAST_WRITE_VC 1
#define NOC_MULTICAST_WRITE_VC 4

// internal/tt-1xx/<arch>/noc/noc_parameters.h: NOC_MAX_BURST_WORDS * NOC_WORD_BYTES
// (8192 on Wormhole, 16384 on Blackhole).
#ifndef NOC_MAX_BURST_SIZE
#define NOC_MAX_BURST_SIZE 8192
#endif
