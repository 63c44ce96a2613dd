// Small conversions and integer arithmetic used across layers, written once.
#pragma once
#include <cmath>
#include <cstdint>

namespace npusim {

// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A time in ns (a chip file's unit) as whole picoseconds (the engine's).
inline std::uint64_t ns_to_ps(double ns) { return static_cast<std::uint64_t>(std::llround(ns * 1000.0)); }

}  // namespace npusim
