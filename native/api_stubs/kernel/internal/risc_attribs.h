// Stub of tt_metal/hw/inc/internal/risc_attribs.h (tt-metal v0.81.1).
#pragma once
#include <stddef.h>
#include <stdint.h>

// Real: __attribute__((rvtt_l1_ptr)) / __attribute__((rvtt_reg_ptr)), SFPI-compiler-only attributes.
#define tt_l1_ptr
#define tt_reg_ptr
// internal/risc_attribs.h: FORCE_INLINE = inline __attribute__((always_inline))
#define FORCE_INLINE inline __attribute__((always_inline))
