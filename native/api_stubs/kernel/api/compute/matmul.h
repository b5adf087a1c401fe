// Stub of tt_metal/hw/inc/api/compute/matmul.h (tt-metal v0.81.1).
// v0.81.1: mm_init / mm_init_short / mm_block_init were removed (tt-metal PR #50570); transpose of in1 is now
// an argument of matmul_init, and matmul_tiles has NO transpose parameter. Matmul maps in0->SrcB, in1->SrcA, so
// start the kernel with compute_kernel_hw_startup<SrcOrder::Reverse>(in0_cb, in1_cb, out_cb).
#pragma once
#include <cstdint>
#include "api/compute/common.h"

namespace ckernel {
// matmul.h: ALWI void matmul_init(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, const std::uint32_t transpose = 0, std::uint32_t call_line = __builtin_LINE())
void matmul_init(
    std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, const std::uint32_t transpose = 0, std::uint32_t call_line = __builtin_LINE());
// matmul.h: ALWI void matmul_tiles(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index, std::uint32_t in1_tile_index, std::uint32_t idst)
void matmul_tiles(
    std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index, std::uint32_t in1_tile_index, std::uint32_t idst);
// matmul.h: ALWI void mm_uninit(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id)
void mm_uninit(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id);
// matmul.h: ALWI void matmul_block_init(in0_cb_id, in1_cb_id, const std::uint32_t transpose = 0, std::uint32_t ct_dim = 1,
//           std::uint32_t rt_dim = 1, std::uint32_t kt_dim = 1, std::uint32_t call_line = __builtin_LINE())
void matmul_block_init(
    std::uint32_t in0_cb_id,
    std::uint32_t in1_cb_id,
    const std::uint32_t transpose = 0,
    std::uint32_t ct_dim = 1,
    std::uint32_t rt_dim = 1,
    std::uint32_t kt_dim = 1,
    std::uint32_t call_line = __builtin_LINE());
// matmul.h: ALWI void matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, const std::uint32_t transpose,
//           std::uint32_t ct_dim, std::uint32_t rt_dim, std::uint32_t kt_dim, std::uint32_t call_line = __builtin_LINE())
void matmul_block(
    std::uint32_t in0_cb_id,
    std::uint32_t in1_cb_id,
    std::uint32_t in0_tile_index,
    std::uint32_t in1_tile_index,
    std::uint32_t idst,
    const std::uint32_t transpose,
    std::uint32_t ct_dim,
    std::uint32_t rt_dim,
    std::uint32_t kt_dim,
    std::uint32_t call_line = __builtin_LINE());
}  // namespace ckernel
