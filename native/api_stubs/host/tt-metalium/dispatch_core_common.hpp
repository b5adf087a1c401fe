// Stub of tt_metal/api/tt-metalium/dispatch_core_common.hpp (tt-metal v0.81.1).
#pragma once
#include <cstdint>
#include <optional>

namespace tt::tt_metal {
// dispatch_core_common.hpp: enum class DispatchCoreType : uint32_t { WORKER, ETH, COUNT };
enum class DispatchCoreType : uint32_t { WORKER, ETH, COUNT };
// dispatch_core_common.hpp: enum class DispatchCoreAxis { ROW, COL, COUNT };
enum class DispatchCoreAxis { ROW, COL, COUNT };

// dispatch_core_common.hpp: class DispatchCoreConfig (default: WORKER dispatch cores, axis resolved from the arch)
class DispatchCoreConfig {
public:
    DispatchCoreConfig() : type_(DispatchCoreType::WORKER) {}
    DispatchCoreConfig(DispatchCoreType type) : type_(type) {}
    DispatchCoreConfig(DispatchCoreType type, DispatchCoreAxis axis) : type_(type), axis_(axis) {}
    DispatchCoreType get_dispatch_core_type() const { return type_; }

private:
    DispatchCoreType type_;
    std::optional<DispatchCoreAxis> axis_;
};
}  // namespace tt::tt_metal
