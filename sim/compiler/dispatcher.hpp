// The dispatcher (docs/design.md §1.1): puts every task on a core of its type —
// list scheduling on the cost model's estimates, so cores stay balanced,
// with locality (a fused Vector tile goes to the vector core paired with
// the Cube core that holds its input; on coupled parts a Vector consumer
// prefers the core beside its Cube producer) — and gives it a priority
// from its critical path. Each core gets its own in-order stream.
#pragma once
#include <vector>

#include "compiler/tiler.hpp"
#include "chip/chip_params.hpp"

namespace npusim::compiler {

struct Placement {
    int core = 0;       // within its type
    int priority = 0;   // longer remaining critical path = higher
    double est_start = 0, est_end = 0;
};

std::vector<Placement> place_tasks(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                                   const ChipParams& chip);

}  // namespace npusim::compiler
