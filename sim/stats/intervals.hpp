// Interval arithmetic for busy-time statistics: the union of many busy
// intervals and the overlap of two such unions (docs/design.md §4.4 overlap).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace npusim {

using Interval = std::pair<std::uint64_t, std::uint64_t>;  // [first, second)

// Sorted, disjoint, merged.
std::vector<Interval> merge_intervals(std::vector<Interval> v);
std::uint64_t total_length(const std::vector<Interval>& merged);
// Length of the intersection of two merged interval sets.
std::uint64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);
// |A ∩ B| / min(|A|, |B|), 0 when either is empty.
double overlap_ratio(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace npusim
