#include "cli/run_summary.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace npusim::cli {

std::string run_summary(const Stats& s, const ChipParams& chip, const std::string& stats_file,
                        const std::string& trace_file) {
    std::string out = fmt::format("npusim: {} tasks on {} ({} cube + {} vector, {} GHz)\n", s.number("tasks.count"),
                                  chip.name, chip.cube.count, chip.vector.count, chip.clock_ghz);
    out += fmt::format("  total        {:.0f} cycles  ({:.3f} us)\n", s.number("total_cycles"), s.number("total_ns") / 1000.0);
    for (const char* u : {"cube", "cube_mte2", "cube_mte1", "cube_m", "cube_fixpipe", "vector", "vector_mte2", "vector_v",
                          "vector_mte3", "scalar", "hbm", "l2"}) {
        const std::string key = fmt::format("units.{}.utilization", u);
        if (!s.has(key)) continue;
        const double v = s.number(key);
        const int bar = static_cast<int>(v * 30 + 0.5);
        out += fmt::format("  {:<13} {:5.1f}%  {:<30}\n", u, v * 100.0, std::string(static_cast<std::size_t>(std::min(bar, 30)), '#'));
    }
    out += fmt::format("  overlap.cube_vector {:.1f}%   L2 hit rate {:.1f}%   event wait {:.0f} cycles\n",
                       s.number("overlap.cube_vector") * 100.0, s.number("memory.l2.hit_rate") * 100.0,
                       s.number("events.wait_cycles"));
    if (!stats_file.empty()) out += fmt::format("  stats  -> {}\n", stats_file);
    if (!trace_file.empty()) out += fmt::format("  trace  -> {}  (open in ui.perfetto.dev)\n", trace_file);
    return out;
}

}  // namespace npusim::cli
