// Stub of UMD's umd/device/types/xy_pair.hpp: tt::xy_pair, which tt-metal aliases as CoreCoord.
#pragma once
#include <cstddef>

namespace tt {
// xy_pair.hpp: struct xy_pair { std::size_t x, y; }
struct xy_pair {
    constexpr xy_pair() : x{}, y{} {}
    constexpr xy_pair(std::size_t x, std::size_t y) : x(x), y(y) {}
    std::size_t x;
    std::size_t y;
};
}  // namespace tt
