// Stub of UMD's device/api/umd/device/types/arch.hpp (the tt-umd version bundled with tt-metal v0.81.1).
#pragma once

namespace tt {
// arch.hpp: enum class ARCH { WORMHOLE_B0 = 2, BLACKHOLE = 3, QUASAR = 4, Invalid = 0xFF }
enum class ARCH { WORMHOLE_B0 = 2, BLACKHOLE = 3, QUASAR = 4, Invalid = 0xFF };
}  // namespace tt
