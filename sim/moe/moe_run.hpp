// `npusim run` for a workload of kind "moe": the MoE Dispatch operator on the
// supernode (docs/design.md §1.3). Builds the routing, runs one kernel instance per
// AIV core of every rank, writes stats, trace and the per-core phase profile.
#pragma once
#include <string>

namespace npusim {

class RunConfig;
class Stats;
struct ChipParams;

struct MoeRunOptions {
    std::string workload_file;  // as given, for the trace metadata
    std::string stats_file, trace_file, profile_file;
    bool quiet = false;
    bool fail_on_stale = false;  // exit 1 when any read saw stale data (memory_model.stale_reads > 0)
};

// Returns the exit code; errors travel as exceptions (InputError, DeadlockError).
int run_moe(const RunConfig& cfg, const MoeRunOptions& opt);

// The summary's last lines, the same for the Dispatch and the layer: stale
// reads and where the stats, trace and profile went.
std::string moe_summary_tail(const Stats& s, const ChipParams& chip, const MoeRunOptions& opt);

}  // namespace npusim
