// Sync insertion (docs/design.md §1.1 Synchronisation): a task depends on the
// earlier tasks that wrote what it reads. With `op` granularity a consumer
// waits for all tiles of each producer op (one counting event per op); with
// `tile` only for the tiles it actually reads. Either way redundant edges
// are removed first (transitive reduction), so no event is implied by
// others. Fused Cube->Vector pairs always synchronise tile by tile.
#pragma once
#include <string>
#include <vector>

#include "compiler/kernel_plan.hpp"
#include "compiler/options.hpp"
#include "compiler/tiler.hpp"

namespace npusim::compiler {

struct SyncPlan {
    std::vector<std::vector<int>> preds;        // reduced task dependences
    // Per task, indices into `events`: an id string per wait was nearly
    // half of a long graph's compile memory.
    std::vector<std::vector<std::uint32_t>> wait;
    std::vector<std::vector<std::uint32_t>> signal;
    std::vector<std::pair<std::string, std::uint32_t>> events;  // id, count (in creation order)
    std::size_t edges_before = 0, edges_after = 0;
};

SyncPlan insert_sync(const std::vector<TileTask>& tasks, const KernelPlan& plan, SyncGranularity sync);

// Task-level read-after-write dependences by address overlap (every
// address is written once, so an overlap is a true dependence).
std::vector<std::vector<int>> data_dependences(const std::vector<TileTask>& tasks);
// Removes p from preds(t) when another pred of t already depends on p and
// returns how many it removed; each preds(t) sorted ascending, without
// repeats and below t, as data_dependences makes them.
// With `group` (a group per task, e.g. its kernel), the same result found
// faster: the search skips tasks whose group cannot lead to a pred's group.
std::size_t transitive_reduction(std::vector<std::vector<int>>& preds, const std::vector<int>* group = nullptr);

}  // namespace npusim::compiler
