// Small conversions and integer arithmetic used across layers, written once.
#pragma once
#include <cmath>
#include <cstdint>

namespace npusim {

// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A time in ns (a chip file's unit) as whole picoseconds (the engine's).
inline std::uint64_t ns_to_ps(double ns) { return static_cast<std::uint64_t>(std::llround(ns * 1000.0)); }

// Set bits of x, inline: without a target flag for the instruction, GCC's
// builtin calls a library routine, and the L2 model counts lines this way
// on every lookup.
constexpr std::uint64_t popcount64(std::uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

}  // namespace npusim
