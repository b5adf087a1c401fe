// Stub of tt_stl/tt_stl/strong_type.hpp (tt-metal v0.81.1; namespace ttsl per libtt_metal.so symbols).
#pragma once
#include <utility>

namespace ttsl {
// strong_type.hpp: template <typename T, typename Tag> class StrongType (explicit ctor, operator* to read)
template <typename T, typename Tag>
class StrongType {
public:
    using value_type = T;
    constexpr StrongType() noexcept : value_(T{}) {}
    constexpr explicit StrongType(T v) noexcept : value_(std::move(v)) {}
    constexpr const T& operator*() const { return value_; }
    constexpr const T& get() const { return value_; }

private:
    T value_;
};
}  // namespace ttsl
