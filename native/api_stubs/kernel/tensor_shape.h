// Stub of tt_metal/tt-llk/common/tensor_shape.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>

namespace ckernel {
// tensor_shape.h: struct __attribute__((packed)) TensorShape { face_r_dim, face_c_dim, num_faces_r_dim, num_faces_c_dim }
struct TensorShape {
    std::uint8_t face_r_dim;
    std::uint8_t face_c_dim;
    std::uint8_t num_faces_r_dim;
    std::uint8_t num_faces_c_dim;
};
}  // namespace ckernel
