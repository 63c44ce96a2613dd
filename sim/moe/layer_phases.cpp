#include "moe/layer_phases.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernel_api/phase_profile.hpp"
#include "stats/stats.hpp"

namespace npusim {

namespace {
int column(const PhaseProfile& prof, const char* name) {
    const auto& names = prof.phases();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) throw std::logic_error(fmt::format("MoE layer profile: no phase '{}' was stamped", name));
    return static_cast<int>(it - names.begin());
}
}  // namespace

LayerPhases layer_phases(const PhaseProfile& prof, int ranks, int cores) {
    LayerPhases out{LayerPhase{"dispatch"}, LayerPhase{"experts"}, LayerPhase{"combine"}};
    const int ready = column(prof, "ready"), experts = column(prof, "experts"), sum = column(prof, "combine_sum");
    for (auto& ph : out) ph.start_ns = std::numeric_limits<double>::max();
    double total = 0;
    for (int r = 0; r < ranks; ++r) {
        std::int64_t start = std::numeric_limits<std::int64_t>::max(), ready_at = 0, end = 0;
        std::int64_t experts_at = std::numeric_limits<std::int64_t>::max();
        for (int c = 0; c < cores; ++c) {
            const std::int64_t a = prof.at(r, c, ready), b = prof.at(r, c, experts), e = prof.at(r, c, sum);
            if (a < 0 || b < 0 || e < 0)
                throw std::logic_error(fmt::format("MoE layer profile: rank {} core {} lacks a phase stamp", r, c));
            start = std::min(start, static_cast<std::int64_t>(prof.start_of(r, c)));
            ready_at = std::max(ready_at, a);
            experts_at = std::min(experts_at, b);
            end = std::max(end, e);
        }
        experts_at = std::max(experts_at, ready_at);  // the flag cannot be seen before the GEMMs could start
        const std::int64_t bounds[4] = {start, ready_at, experts_at, end};
        for (std::size_t i = 0; i < out.size(); ++i) {
            const double a = static_cast<double>(bounds[i]) / 1000.0, b = static_cast<double>(bounds[i + 1]) / 1000.0;
            out[i].start_ns = std::min(out[i].start_ns, a);
            out[i].end_ns = std::max(out[i].end_ns, b);
            out[i].mean_ns += (b - a) / ranks;
        }
        total += static_cast<double>(end - start) / 1000.0 / ranks;
    }
    for (auto& ph : out) ph.share = total > 0 ? ph.mean_ns / total : 0;
    return out;
}

void report_layer_phases(const LayerPhases& phases, Stats& s) {
    for (const auto& ph : phases) {
        const std::string k = fmt::format("moe.phases.{}.", ph.name);
        s.set(k + "start_ns", ph.start_ns);
        s.set(k + "end_ns", ph.end_ns);
        s.set(k + "mean_ns", ph.mean_ns);
        s.set(k + "share", ph.share);
    }
}

}  // namespace npusim
