#include "stats/intervals.hpp"

#include <algorithm>

namespace npusim {

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
    std::sort(v.begin(), v.end());
    std::vector<Interval> out;
    for (const auto& iv : v) {
        if (iv.second <= iv.first) continue;
        if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
        else out.push_back(iv);
    }
    return out;
}

std::uint64_t total_length(const std::vector<Interval>& merged) {
    std::uint64_t n = 0;
    for (const auto& iv : merged) n += iv.second - iv.first;
    return n;
}

std::uint64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    std::uint64_t n = 0;
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const std::uint64_t lo = std::max(a[i].first, b[j].first);
        const std::uint64_t hi = std::min(a[i].second, b[j].second);
        if (hi > lo) n += hi - lo;
        if (a[i].second < b[j].second) ++i;
        else ++j;
    }
    return n;
}

double overlap_ratio(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    const std::uint64_t la = total_length(a), lb = total_length(b);
    const std::uint64_t m = std::min(la, lb);
    return m == 0 ? 0.0 : static_cast<double>(intersection_length(a, b)) / static_cast<double>(m);
}

}  // namespace npusim
