// Stub of tt_metal/hw/inc/internal/dataflow/dataflow_api_addrgen.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>
#include "internal/risc_attribs.h"
#include "internal/dataflow/dataflow_api_common.h"
#include "tensix_types.h"

// dataflow_api_addrgen.h: FORCE_INLINE uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index)
uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index);
// dataflow_api_addrgen.h: FORCE_INLINE std::uint64_t get_noc_addr(std::uint32_t addr, uint8_t noc = noc_index)  (this core's L1)
std::uint64_t get_noc_addr(std::uint32_t addr, uint8_t noc = noc_index);

// dataflow_api_addrgen.h: template <bool DRAM> struct InterleavedAddrGen
template <bool DRAM>
struct InterleavedAddrGen {
    static constexpr bool is_dram = DRAM;
    uint32_t bank_base_address;  // Base address for the whole tensor.
    const uint32_t page_size;    // Num bytes in page.
    // Real: = align_power_of_2(page_size, interleaved_addr_gen::get_allocator_alignment<DRAM>())
    const uint32_t aligned_page_size = page_size;

    // InterleavedAddrGen::get_noc_addr(const uint32_t id, const uintptr_t offset = 0, uint8_t noc = noc_index) const
    std::uint64_t get_noc_addr(const uint32_t id, const uintptr_t offset = 0, uint8_t noc = noc_index) const;
};

// dataflow_api_addrgen.h: template <bool DRAM, uint32_t tile_hw = 1024> struct InterleavedAddrGenFast
template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    static constexpr bool is_dram = DRAM;
    uint32_t bank_base_address;  // Base address for the whole tensor.
    uint32_t page_size;          // Num bytes in bank unit.
    DataFormat data_format;      // Data format

    // InterleavedAddrGenFast::get_noc_addr(const uint32_t id, const uint32_t offset = 0, uint8_t noc = noc_index) const
    std::uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0, uint8_t noc = noc_index) const;
};

// dataflow_api_addrgen.h: generic get_noc_addr for any AddrGen with a no-argument-callable get_noc_addr()
// (the `resolver` parameter is SFINAE only; InterleavedAddrGen does not qualify and falls to the deprecated overload).
template <typename AddrGen>
uint64_t get_noc_addr(
    const uint32_t id,
    const AddrGen& addrgen,
    uint32_t offset = 0,
    uint8_t noc = noc_index,
    decltype(addrgen.get_noc_addr())* resolver = nullptr);

// dataflow_api_addrgen.h: deprecated overload used by InterleavedAddrGen (prefer addrgen.get_noc_addr(id, offset) or
// noc_async_read_page/noc_async_write_page).
template <bool DRAM>
[[deprecated("Use <typename AddrGen> get_noc_addr instead.")]]
uint64_t get_noc_addr(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen, uint32_t offset = 0, uint8_t noc = noc_index);

// dataflow_api_addrgen.h: deprecated overload for InterleavedAddrGenFast
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> get_noc_addr instead.")]]
uint64_t get_noc_addr(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen, uint32_t offset = 0, uint8_t noc = noc_index);
