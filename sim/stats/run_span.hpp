// The span a module's statistics cover: the run's length and the clock, so
// every module turns picoseconds into cycles and busy time into utilisation
// the same way (docs/design.md §4.4).
#pragma once
#include <cmath>
#include <cstdint>

namespace npusim {

struct RunSpan {
    std::uint64_t total_ps = 0;
    double ps_per_cycle = 1000.0;  // one core clock period

    // Nearest whole cycle.
    std::int64_t cycles(double ps) const { return static_cast<std::int64_t>(std::llround(ps / ps_per_cycle)); }
    // Share of the span `units` units were busy for; 0 for an empty span.
    double utilization(double busy_ps, double units = 1) const {
        const double total = static_cast<double>(total_ps);
        return total > 0 && units > 0 ? busy_ps / (total * units) : 0.0;
    }
};

}  // namespace npusim
