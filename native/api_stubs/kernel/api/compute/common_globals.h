// Stub of tt_metal/hw/inc/api/compute/common_globals.h (tt-metal v0.81.1).
// Compute kernels are compiled three times (unpack, math, pack TRISC) with -DTRISC_<X> and -DUCK_CHLKC_<X>.
#pragma once

#if !defined(TRISC_UNPACK) && !defined(TRISC_MATH) && !defined(TRISC_PACK) && !defined(TRISC_ISOLATE_SFPU)
// Stub only: with no TRISC selected, behave as the unpack TRISC (the strictest: no APPROX / MATH_FIDELITY).
#define TRISC_UNPACK
#ifndef UCK_CHLKC_UNPACK
#define UCK_CHLKC_UNPACK
#endif
#endif

// common_globals.h: #define ALWI inline __attribute__((always_inline))
#define ALWI inline __attribute__((always_inline))

#include <cstdint>
#include "internal/risc_attribs.h"
#include "internal/firmware_common.h"     // brings api/compile_time_args.h (get_compile_time_arg_val)
#include "hostdevcommon/kernel_structs.h"  // tt::CBIndex
#include "llk_defs.h"                      // ckernel::BroadcastType, PoolType, ReduceDim, EltwiseBinaryType, ...
#include "ckernel_defs.h"
#include "ckernel_instr_params.h"
#include "tensix_types.h"                  // DataFormat
#include "chlkc_descriptors.h"             // JIT-generated: DST_ACCUM_MODE, DST_SYNC_MODE; MATH_FIDELITY/APPROX (math only)

// common_globals.h: MATH(...)/PACK(...)/UNPACK(...) keep their argument only on their own TRISC;
// MAIN is math_main()/pack_main()/unpack_main(). NAMESPACE is NOT defined by the v0.81.1 JIT: the legacy
// `namespace NAMESPACE { void MAIN { } }` form is gone, compute kernels define `void kernel_main()`.
#ifdef TRISC_MATH
#define MATH(...) __VA_ARGS__
#define MAIN math_main()
#else
#define MATH(...)
#endif
#ifdef TRISC_PACK
#define PACK(...) __VA_ARGS__
#define MAIN pack_main()
#else
#define PACK(...)
#endif
#ifdef TRISC_UNPACK
#define UNPACK(...) __VA_ARGS__
#define MAIN unpack_main()
#else
#define UNPACK(...)
#endif

// Mirrors `using namespace ckernel;` in hw/ckernels/<arch>/metal/common/chlkc_list.h, which the real build
// places before the kernel source, so kernels call compute API functions and enums unqualified.
using namespace ckernel;
