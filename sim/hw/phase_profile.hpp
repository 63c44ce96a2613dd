// Per-core phase timestamps (the simulator's GetSystemCycle): kernels stamp
// the end of each phase; the profile is one row per (rank, core) and one
// column per phase (docs/design.md §1.3 "Per-core phase profiling"). Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace npusim {

class Stats;

class PhaseProfile {
public:
    PhaseProfile(int ranks, int cores);

    // Phase names get column numbers in order of first use.
    int phase_id(const char* name);
    void stamp(int rank, int core, int phase, std::uint64_t t_ps);
    void start(int rank, int core, std::uint64_t t_ps);

    const std::vector<std::string>& phases() const { return names_; }
    int ranks() const { return ranks_; }
    int cores() const { return cores_; }
    // Takes rank `from_rank` of `other` (same cores) as rank `rank` of this
    // one, its phases matched by name (a System gathers its dies' profiles).
    void absorb(const PhaseProfile& other, int from_rank, int rank);
    // Whether any core stamped anything.
    bool empty() const { return names_.empty(); }
    // Timestamp of `phase` on (rank, core), or -1 if it never stamped it.
    std::int64_t at(int rank, int core, int phase) const;
    std::uint64_t start_of(int rank, int core) const { return start_[index(rank, core)]; }

    // rank,core,start_ns,<phase>... (ns, 3 decimals; empty cell = not stamped).
    std::string csv() const;
    // <prefix>.<name>.{order,mean_ns,max_ns,end_mean_ns,end_max_ns}: per-core
    // duration (from the previous stamp) and end time, over all cores.
    void report(Stats& s, const std::string& prefix) const;

private:
    std::size_t index(int rank, int core) const { return static_cast<std::size_t>(rank) * cores_ + core; }
    static constexpr int kStart = -1;  // a call's start, in the stamps
    int ranks_, cores_;
    std::vector<std::string> names_;
    std::vector<std::uint64_t> start_;
    // Per core, the (phase, time) stamps in order, each call's after its
    // (kStart, time); few phases, so a small list.
    std::vector<std::vector<std::pair<int, std::uint64_t>>> stamps_;
};

}  // namespace npusim
