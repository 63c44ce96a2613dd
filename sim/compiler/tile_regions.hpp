// Byte and range helpers the tiler's pieces share: how many bytes a list of
// GM regions names, and an even cut of an extent into blocks.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/memory_plan.hpp"

namespace npusim::compiler {

using i64 = std::int64_t;

std::uint64_t sum_bytes(const std::vector<Region>& rs);

// Splits [0, n) into `parts` near-equal ranges, each a multiple of `unit`
// except the last.
std::vector<std::pair<i64, i64>> split_ranges(i64 n, i64 parts, i64 unit = 1);

}  // namespace npusim::compiler
