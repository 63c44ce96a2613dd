// What a trace keeps (`npusim run --trace-window T0:T1 --trace-ops GLOBS
// --trace-cores LIST`, docs/statistics.md "Filters"): a window of simulated
// time, and on the cores' tracks only the slices of matching ops or only
// the listed cores. Tracks that are not a core's (scalar dispatch slots,
// critical path, links, host) are kept whole but for the window.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace npusim {

struct TraceFilter {
    std::uint64_t from_ps = 0;
    std::uint64_t to_ps = std::numeric_limits<std::uint64_t>::max();
    std::vector<std::string> ops;    // shell globs on op names; empty: every op
    std::vector<std::string> cores;  // "cube0", "vector3"; empty: every core

    bool active() const;
    // A slice or point in [start, end] (ps) overlaps the window.
    bool in_window(std::uint64_t start_ps, std::uint64_t end_ps) const;
    bool keeps_op(std::string_view op) const;
    // The core a track belongs to ("cube3" for "cube3.mte2"), "" if none.
    static std::string core_of_track(std::string_view track);
    bool keeps_core(std::string_view core) const;
    // The options that set it, for messages ("--trace-window, --trace-ops").
    std::string options() const;
};

// "T0:T1" in microseconds of simulated time (either side may be empty:
// ":50" is the first 50 us); throws InputError naming --trace-window.
void parse_trace_window(const std::string& text, TraceFilter& f);
// Comma-separated items; throws InputError naming `option` on an empty item.
std::vector<std::string> parse_trace_list(const std::string& text, const std::string& option);
// Each of `cores` names a core of the chip (cube0..cube<cubes-1>,
// vector0..): otherwise InputError with a did-you-mean.
void check_trace_cores(const std::vector<std::string>& cores, int cubes, int vectors);

}  // namespace npusim
