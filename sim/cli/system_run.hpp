// `npusim run` of a cross-rank task stream: every rank a whole die, joined
// by the mesh (hw/system).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/spmd.hpp"
#include "config/run_config.hpp"
#include "tasks/task.hpp"
#include "trace/trace_filter.hpp"

namespace npusim {
class Stats;
class System;
class TraceWriter;
}

namespace npusim::cli {

struct SystemRunOptions {
    std::string workload_file, stats_file, trace_file;
    std::string profile_file;  // kernel programs' per-core phase stamps (CSV)
    std::string trace_ranks;  // --trace-ranks LIST ("" = the default)
    bool quiet = false, trace_tasks_only = false, fail_on_stale = false;
    // A generated workload's own figures (kind collective: collective.*),
    // added once the System's stats are in; returns lines for the summary.
    std::function<std::string(Stats&)> workload_stats;
    // The same with the System at hand (per-die task times).
    std::function<std::string(Stats&, const System&)> system_stats;
    // --report: the HTML page of the run (its timeline from the traced
    // ranks' trace; a temporary one without --trace), with the --set list.
    std::string report_file;
    std::vector<std::string> sets;
    // --threads: the dies run on this many threads (1 or 2; 0: 2 when the
    // machine has a second core). The results do not depend on it.
    int threads = 0;
    // --trace-window, --trace-ops, --trace-cores.
    TraceFilter trace_filter;
    // --elaborate-only: build the System, collect its statistics unsimulated.
    bool elaborate_only = false;
    // Called after the summary and before the report (--what-would-help's
    // re-runs, which rewrite the stats file: the report then shows them).
    std::function<void()> after_run;
    // --lookahead: how far the dies run ahead of each other (System::Lookahead;
    // the results do not depend on it).
    bool lookahead_cells = false;
};

// The end of a run: `after_run`, then the report from the stats file it
// may have rewritten (else from `stats_json`), and its line in the summary.
void finish_run(const std::function<void()>& after_run, const std::string& stats_file, const std::string& stats_json,
                const std::string& report_file, const std::string& trace_path, const std::string& workload,
                const std::vector<std::string>& sets, bool quiet);

// After a filtered trace is closed: a filter that selected no slice wrote
// no file; say so on stderr.
void warn_if_selected_nothing(const TraceWriter& trace, const TraceFilter& filter);

// The compile warnings of every distinct rank program, once each, to stderr.
void print_warnings(const compiler::SpmdCompile& spmd);

int run_system(const RunConfig& cfg, const TaskStream& stream, const SystemRunOptions& opt);
// The same for streams already per rank (ranks may share one).
int run_system(const RunConfig& cfg, std::vector<std::shared_ptr<const TaskStream>> per_rank, const SystemRunOptions& opt);

// How many ranks a trace keeps unless told (the first ones, or the
// critical path's with --trace-ranks critical).
constexpr int kDefaultTracedRanks = 8;

// "0,3,8-15" -> the ranks, each < ranks; "" -> ranks 0 .. min(ranks, 8) - 1.
// Throws InputError naming the option and the bad item.
std::vector<int> parse_trace_ranks(const std::string& list, int ranks);

}  // namespace npusim::cli
