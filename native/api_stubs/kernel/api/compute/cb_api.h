// Stub of tt_metal/hw/inc/api/compute/cb_api.h (tt-metal v0.81.1).
#pragma once
#include "api/compute/common_globals.h"

namespace ckernel {
// cb_api.h: ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles)
void cb_wait_front(uint32_t cbid, uint32_t ntiles);
// cb_api.h: ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles)
void cb_pop_front(uint32_t cbid, uint32_t ntiles);
// cb_api.h: ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles)
void cb_reserve_back(uint32_t cbid, uint32_t ntiles);
// cb_api.h: ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles)
void cb_push_back(uint32_t cbid, uint32_t ntiles);
// cb_api.h: ALWI uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index)
uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index);
// cb_api.h: ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset)
uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset);
}  // namespace ckernel
