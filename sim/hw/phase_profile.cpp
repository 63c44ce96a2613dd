#include "hw/phase_profile.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "stats/stats.hpp"

namespace npusim {

PhaseProfile::PhaseProfile(int ranks, int cores)
    : ranks_(ranks),
      cores_(cores),
      start_(static_cast<std::size_t>(ranks) * cores, 0),
      stamps_(static_cast<std::size_t>(ranks) * cores) {}

int PhaseProfile::phase_id(const char* name) {
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return static_cast<int>(i);
    names_.emplace_back(name);
    return static_cast<int>(names_.size() - 1);
}

// A core may run several programs (a Dispatch, then a Combine, per layer):
// each start opens a call of its own, and a phase lasts from the previous
// stamp or start of that call.
void PhaseProfile::start(int rank, int core, std::uint64_t t_ps) {
    auto& row = stamps_[index(rank, core)];
    if (row.empty()) start_[index(rank, core)] = t_ps;
    row.emplace_back(kStart, t_ps);
}

void PhaseProfile::stamp(int rank, int core, int phase, std::uint64_t t_ps) {
    stamps_[index(rank, core)].emplace_back(phase, t_ps);
}

void PhaseProfile::absorb(const PhaseProfile& other, int from_rank, int rank) {
    std::vector<int> id(other.names_.size());
    for (std::size_t p = 0; p < other.names_.size(); ++p) id[p] = phase_id(other.names_[p].c_str());
    for (int c = 0; c < std::min(cores_, other.cores_); ++c) {
        start_[index(rank, c)] = other.start_[other.index(from_rank, c)];
        auto& row = stamps_[index(rank, c)];
        for (const auto& [p, t] : other.stamps_[other.index(from_rank, c)])
            row.emplace_back(p == kStart ? kStart : id[static_cast<std::size_t>(p)], t);
    }
}

std::int64_t PhaseProfile::at(int rank, int core, int phase) const {
    std::int64_t t = -1;
    for (const auto& [p, ts] : stamps_[index(rank, core)])
        if (p == phase && p != kStart) t = static_cast<std::int64_t>(ts);  // the last stamp of a repeated phase
    return t;
}

std::string PhaseProfile::csv() const {
    std::string out = "rank,core,start_ns";
    for (const auto& n : names_) out += "," + n;
    out += "\n";
    // One row per call (a core that ran two programs has two rows).
    std::vector<std::int64_t> row(names_.size());
    for (int r = 0; r < ranks_; ++r)
        for (int c = 0; c < cores_; ++c) {
            const auto& stamps = stamps_[index(r, c)];
            std::size_t i = 0;
            do {
                std::uint64_t start = start_[index(r, c)];
                if (i < stamps.size() && stamps[i].first == kStart) start = stamps[i++].second;
                std::fill(row.begin(), row.end(), -1);
                for (; i < stamps.size() && stamps[i].first != kStart; ++i)
                    row[static_cast<std::size_t>(stamps[i].first)] = static_cast<std::int64_t>(stamps[i].second);
                out += fmt::format("{},{},{:.3f}", r, c, static_cast<double>(start) / 1000.0);
                for (const std::int64_t t : row) out += t < 0 ? std::string(",") : fmt::format(",{:.3f}", static_cast<double>(t) / 1000.0);
                out += "\n";
            } while (i < stamps.size());
        }
    return out;
}

void PhaseProfile::report(Stats& s, const std::string& prefix) const {
    const std::size_t n = names_.size();
    std::vector<double> dur_sum(n, 0), dur_max(n, 0), end_sum(n, 0), end_max(n, 0);
    std::vector<std::uint64_t> count(n, 0);
    for (std::size_t i = 0; i < stamps_.size(); ++i) {
        std::uint64_t prev = start_[i];
        for (const auto& [p, ts] : stamps_[i]) {
            if (p == kStart) {
                prev = ts;
                continue;
            }
            const double d = static_cast<double>(ts > prev ? ts - prev : 0) / 1000.0;
            const auto k = static_cast<std::size_t>(p);
            dur_sum[k] += d;
            dur_max[k] = std::max(dur_max[k], d);
            end_sum[k] += static_cast<double>(ts) / 1000.0;
            end_max[k] = std::max(end_max[k], static_cast<double>(ts) / 1000.0);
            ++count[k];
            prev = ts;
        }
    }
    for (std::size_t k = 0; k < n; ++k) {
        const std::string key = prefix + "." + names_[k];
        const double c = static_cast<double>(std::max<std::uint64_t>(count[k], 1));
        s.set(key + ".order", static_cast<int>(k));
        s.set(key + ".mean_ns", dur_sum[k] / c);
        s.set(key + ".max_ns", dur_max[k]);
        s.set(key + ".end_mean_ns", end_sum[k] / c);
        s.set(key + ".end_max_ns", end_max[k]);
    }
}

}  // namespace npusim
