// Stub of tt_metal/hw/inc/api/compile_time_args.h (tt-metal v0.81.1). The JIT passes
// -DKERNEL_COMPILE_TIME_ARGS=a,b,c (the kernel config's compile_args); pass the same when syntax-checking.
#ifndef TT_METAL_COMPILE_TIME_ARGS_H
#define TT_METAL_COMPILE_TIME_ARGS_H

#include <array>
#include <cstdint>
#include "internal/risc_attribs.h"

// compile_time_args.h: template <class T, class... Ts> constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values)
template <class T, class... Ts>
FORCE_INLINE constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values) {
    return {T(values)...};
}

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

// compile_time_args.h: constexpr auto kernel_compile_time_args = make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);
constexpr auto kernel_compile_time_args = make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);

// compile_time_args.h: template <uint32_t Idx> constexpr uint32_t get_ct_arg() (body needed: used in constant expressions)
template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
    static_assert(Idx < kernel_compile_time_args.size(), "Index out of range");
    return kernel_compile_time_args[Idx];
}

// compile_time_args.h: it is a MACRO, not a function: #define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()
#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()

#endif  // TT_METAL_COMPILE_TIME_ARGS_H
