// A graph on a supernode (docs/compiler.md, "Graphs that span ranks"): every
// rank runs it (SPMD). Ranks whose shapes — the tokens a Dispatch sends them,
// per local expert — and lowering are the same share one compiled plan and
// one task stream: compiled once, not once per rank.
#pragma once
#include <memory>
#include <vector>

#include "compiler/compiler.hpp"

namespace npusim::compiler {

struct SpmdCompile {
    std::vector<CompileResult> plans;   // one per distinct rank program (their `stream`s moved out)
    std::vector<int> plan_of_rank;      // per rank
    std::vector<std::shared_ptr<const TaskStream>> streams;  // per rank: its plan's stream

    // One cross-rank stream holding every rank's tasks (ids, streams, events
    // and programs prefixed per rank): what `compile --emit-tasks` writes and
    // `run` replays to the same cycles.
    TaskStream merged() const;
};

// `g` read for rank 0 of `chip.interconnect.ranks`. The distinct programs
// after the first are planned on `threads` threads (1 or 2; 0: 2 on a
// machine with a second core); the plans are the same either way.
SpmdCompile compile_spmd(const Graph& g, const ChipParams& chip, const CompileOptions& opt, int threads = 0);
SpmdCompile compile_spmd_workload(const WorkloadParams& workload, const ChipParams& chip, int threads = 0);

// Whether a graph workload runs on several ranks (a chip with an interconnect).
bool runs_on_ranks(const ChipParams& chip);

}  // namespace npusim::compiler
