// Stub of tt_metal/hostdevcommon/api/hostdevcommon/kernel_structs.h (tt-metal v0.81.1).
#pragma once
#include <cstdint>

namespace tt {

// kernel_structs.h: enum CBIndex : std::uint8_t { c_0 = 0, ..., c_63 = 63 };
enum CBIndex : std::uint8_t {
    c_0 = 0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9, c_10, c_11, c_12, c_13, c_14, c_15,
    c_16, c_17, c_18, c_19, c_20, c_21, c_22, c_23, c_24, c_25, c_26, c_27, c_28, c_29, c_30, c_31,
    c_32, c_33, c_34, c_35, c_36, c_37, c_38, c_39, c_40, c_41, c_42, c_43, c_44, c_45, c_46, c_47,
    c_48, c_49, c_50, c_51, c_52, c_53, c_54, c_55, c_56, c_57, c_58, c_59, c_60, c_61, c_62, c_63,
};

}  // namespace tt
