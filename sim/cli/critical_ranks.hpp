// `npusim run --trace-ranks critical`: the ranks the critical path runs on
// are known only when the run is done, so a first run without a trace (in a
// child process: SystemC cannot restart) finds them, and the traced run
// keeps those. Runs are deterministic: the second run is the first again.
#pragma once
#include <optional>

#include "cli/commands.hpp"

namespace npusim::cli {

// Replaces the value "critical" of --trace-ranks in `args` by the ranks the
// critical path spends time on (most first, at most 8); no-op without it.
// When the first run fails, its output is on stderr and its exit code is
// returned (the run is not repeated).
std::optional<int> resolve_critical_ranks(Args& args);

}  // namespace npusim::cli
