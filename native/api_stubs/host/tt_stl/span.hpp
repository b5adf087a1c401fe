// Stub of tt_stl/tt_stl/span.hpp (tt-metal v0.81.1). In v0.81.1 the namespace is `ttsl` and the exported
// symbols of libtt_metal.so spell every Span parameter as std::span, i.e. ttsl::Span is std::span.
#pragma once
#include <cstddef>
#include <span>

namespace ttsl {
template <class T, std::size_t Extent = std::dynamic_extent>
using Span = std::span<T, Extent>;
}  // namespace ttsl

// Older headers spell it tt::stl::Span (namespace tt::stl was renamed to ttsl); kept as an alias here.
namespace tt {
namespace stl = ::ttsl;
}  // namespace tt
