// A fixed, platform-independent 64-bit bit mix (the splitmix64 finaliser):
// the one hash behind every seeded choice of the model (plane of a block,
// delivery jitter, token routing), so results are identical on every machine.
#pragma once
#include <cstdint>

namespace npusim {

inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

}  // namespace npusim
