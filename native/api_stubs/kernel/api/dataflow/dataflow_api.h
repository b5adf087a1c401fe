// Stub of tt_metal/hw/inc/api/dataflow/dataflow_api.h (tt-metal v0.81.1). Kernels include it as
// "api/dataflow/dataflow_api.h" (the v0.81.1 JIT puts only tt_metal/hw/inc on -I; bare "dataflow_api.h" no longer resolves).
// Entry point of a data movement kernel: `void kernel_main() { ... }` (called by hw/firmware/src/tt-1xx/brisck.cc / ncrisck.cc).
#pragma once

#include <cstdint>
#if __has_include("chlkc_descriptors.h")
#include "chlkc_descriptors.h"
#define DATA_FORMATS_DEFINED
#endif
#include "internal/risc_attribs.h"
#include "internal/dataflow/dataflow_api_common.h"
#include "internal/dataflow/dataflow_api_addrgen.h"
#include "api/compile_time_args.h"
#include "hostdevcommon/kernel_structs.h"
#include "tensix_types.h"

// ---- runtime arguments (dataflow_api.h) ----
// dataflow_api.h: static FORCE_INLINE uintptr_t get_arg_addr(int arg_idx)
uintptr_t get_arg_addr(int arg_idx);
// dataflow_api.h: static FORCE_INLINE uintptr_t get_common_arg_addr(int arg_idx)
uintptr_t get_common_arg_addr(int arg_idx);
// dataflow_api.h: template <typename T> FORCE_INLINE T get_arg_val(int arg_idx)   (only 4-byte T)
template <typename T>
T get_arg_val(int arg_idx);
// dataflow_api.h: template <typename T> FORCE_INLINE T get_common_arg_val(int arg_idx)
template <typename T>
T get_common_arg_val(int arg_idx);

// ---- circular buffers, producer/consumer side (dataflow_api.h) ----
// dataflow_api.h: FORCE_INLINE void cb_push_back(const int32_t operand, const int32_t num_pages)
void cb_push_back(const int32_t operand, const int32_t num_pages);
// dataflow_api.h: FORCE_INLINE void cb_pop_front(int32_t operand, int32_t num_pages)
void cb_pop_front(int32_t operand, int32_t num_pages);
// dataflow_api.h: FORCE_INLINE void cb_reserve_back(int32_t operand, int32_t num_pages)
void cb_reserve_back(int32_t operand, int32_t num_pages);
// dataflow_api.h: FORCE_INLINE void cb_wait_front(int32_t operand, int32_t num_pages)
void cb_wait_front(int32_t operand, int32_t num_pages);
// dataflow_api.h: FORCE_INLINE bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages)
bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages);
// dataflow_api.h: FORCE_INLINE bool cb_pages_available_at_front(int32_t operand, int32_t num_pages)
bool cb_pages_available_at_front(int32_t operand, int32_t num_pages);
// dataflow_api.h: FORCE_INLINE uint32_t get_write_ptr(uint32_t operand)   (byte address in L1)
uint32_t get_write_ptr(uint32_t operand);
// dataflow_api.h: FORCE_INLINE uint32_t get_read_ptr(uint32_t operand)    (byte address in L1)
uint32_t get_read_ptr(uint32_t operand);

#ifdef DATA_FORMATS_DEFINED
// dataflow_api.h (DATA_FORMATS_DEFINED): constexpr inline std::int32_t get_tile_size(const std::int32_t operand)
constexpr inline std::int32_t get_tile_size(const std::int32_t operand) { return unpack_tile_size[operand]; }
// dataflow_api.h (DATA_FORMATS_DEFINED): constexpr inline DataFormat get_dataformat(const std::int32_t operand)
constexpr inline DataFormat get_dataformat(const std::int32_t operand) {
    return static_cast<DataFormat>(unpack_src_format[operand]);
}
#endif

// ---- NoC transfers (dataflow_api.h) ----
// dataflow_api.h: template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
//                 inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
//                                            uint8_t noc = noc_index, uint32_t read_req_vc = NOC_UNICAST_WRITE_VC)
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
void noc_async_read(
    uint64_t src_noc_addr,
    uint32_t dst_local_l1_addr,
    uint32_t size,
    uint8_t noc = noc_index,
    uint32_t read_req_vc = NOC_UNICAST_WRITE_VC);
// dataflow_api.h: template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
//                 inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
//                                             uint8_t noc = noc_index, uint32_t vc = NOC_UNICAST_WRITE_VC)
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
void noc_async_write(
    uint32_t src_local_l1_addr,
    uint64_t dst_noc_addr,
    uint32_t size,
    uint8_t noc = noc_index,
    uint32_t vc = NOC_UNICAST_WRITE_VC);
// dataflow_api.h: template <typename AddrGen, bool enable_noc_tracing = true> FORCE_INLINE void noc_async_read_page(
//                 const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index)
template <typename AddrGen, bool enable_noc_tracing = true>
void noc_async_read_page(
    const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index);
// dataflow_api.h: template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false> FORCE_INLINE void
//                 noc_async_write_page(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
//                                      uint32_t size = 0, uint32_t offset = 0, uint8_t noc = noc_index)
template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
void noc_async_write_page(
    const uint32_t id,
    const AddrGen& addrgen,
    uint32_t src_local_l1_addr,
    uint32_t size = 0,
    uint32_t offset = 0,
    uint8_t noc = noc_index);
// dataflow_api.h: deprecated ("Use <typename AddrGen> noc_async_read_page instead.")
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
void noc_async_read_tile(
    const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
    uint8_t noc = noc_index);
// dataflow_api.h: deprecated ("Use <typename AddrGen> noc_async_read_page instead.")
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
void noc_async_read_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen, uint32_t dst_local_l1_addr,
    uint32_t offset = 0, uint8_t noc = noc_index);
// dataflow_api.h: deprecated ("Use <typename AddrGen> noc_async_write_page instead.")
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
void noc_async_write_tile(
    const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen, uint32_t src_local_l1_addr, uint8_t noc = noc_index);
// dataflow_api.h: deprecated ("Use <typename AddrGen> noc_async_write_page instead.")
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
void noc_async_write_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen, uint32_t src_local_l1_addr,
    uint8_t noc = noc_index);
// dataflow_api.h: void noc_async_read_barrier(uint8_t noc = noc_index)
void noc_async_read_barrier(uint8_t noc = noc_index);
// dataflow_api.h: FORCE_INLINE void noc_async_write_barrier(uint8_t noc = noc_index)
void noc_async_write_barrier(uint8_t noc = noc_index);
// dataflow_api.h: FORCE_INLINE void noc_async_writes_flushed(uint8_t noc = noc_index)
void noc_async_writes_flushed(uint8_t noc = noc_index);
// dataflow_api.h: FORCE_INLINE void noc_async_full_barrier(uint8_t noc_idx = noc_index)
void noc_async_full_barrier(uint8_t noc_idx = noc_index);
