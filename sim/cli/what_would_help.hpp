// `npusim run --what-would-help` (cli/what_would_help.cpp): after the run,
// one re-run per resource at twice its capacity; the savings go into the
// stats file (what_would_help.*, ops[].bound_resource) and the summary.
#pragma once
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace npusim::cli {

// `args`: the run's arguments (without --what-would-help); `stats_file`:
// where the run wrote its statistics (rewritten with the findings).
int what_would_help(const Args& args, const std::string& stats_file, bool quiet);

// The arguments of a re-run: the user's `npusim run` arguments without the
// outputs (--stats, --trace and its filters, --report, --profile, -q).
std::vector<std::string> run_args_without_outputs(const Args& args);

}  // namespace npusim::cli
