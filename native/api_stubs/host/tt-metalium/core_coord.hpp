// Stub of tt_metal/api/tt-metalium/core_coord.hpp (tt-metal v0.81.1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <vector>
#include <umd/device/types/xy_pair.hpp>

namespace tt::tt_metal {
// core_coord.hpp: using CoreCoord = tt::xy_pair;   (libtt_metal.so symbols spell CoreCoord as tt::xy_pair)
using CoreCoord = tt::xy_pair;

// core_coord.hpp: class CoreRange { CoreCoord start_coord, end_coord; ... }  (inclusive range)
class CoreRange {
public:
    CoreCoord start_coord;
    CoreCoord end_coord;
    // core_coord.hpp: CoreRange(const CoreCoord& point)
    CoreRange(const CoreCoord& point);
    // core_coord.hpp: CoreRange(const CoreCoord& start_coord, const CoreCoord& end_coord)
    CoreRange(const CoreCoord& start_coord, const CoreCoord& end_coord);
    // core_coord.hpp: size_t size() const
    std::size_t size() const;
};

// core_coord.hpp: class CoreRangeSet
class CoreRangeSet {
public:
    CoreRangeSet() = default;
    // core_coord.hpp: CoreRangeSet(const CoreRange& core_range)
    CoreRangeSet(const CoreRange& core_range);
    // core_coord.hpp: CoreRangeSet(const std::set<CoreRange>& core_ranges)
    CoreRangeSet(const std::set<CoreRange>& core_ranges);
    // core_coord.hpp: explicit CoreRangeSet(ttsl::Span<const CoreRange> core_ranges)
    explicit CoreRangeSet(std::span<const CoreRange> core_ranges);
    // core_coord.hpp: CoreRangeSet(std::vector<CoreRange>&& core_ranges)
    CoreRangeSet(std::vector<CoreRange>&& core_ranges);
    // core_coord.hpp: uint32_t num_cores() const
    uint32_t num_cores() const;
    // core_coord.hpp: const std::vector<CoreRange>& ranges() const
    const std::vector<CoreRange>& ranges() const;
};
}  // namespace tt::tt_metal
