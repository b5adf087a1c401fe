// Stub of tt_metal/hw/inc/internal/firmware_common.h (tt-metal v0.81.1): only the part
// kernels see, i.e. it brings api/compile_time_args.h into compute kernels (see tt-metal issue #56792).
#pragma once
#include "api/compile_time_args.h"
