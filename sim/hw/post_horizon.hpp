// What bounds how soon a die can next post a write to another die: the
// System runs its dies that far ahead of each other (docs/architecture.md,
// "How time works"). Per task of a stream, shared by the ranks that run it:
// whether it may post, and a floor under its time on a core that the core
// model can never beat.
#pragma once
#include <cstdint>
#include <vector>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

struct PostHorizon {
    PostHorizon(const TaskStream& ts, const ChipParams& chip);

    enum Flag : std::uint8_t { posts = 1, rows_dependent = 2 };
    std::vector<std::uint8_t> flags;      // per task
    std::vector<std::uint32_t> floor_ns;  // per task, rounded down
    // Per event: no task signals it (only the host can), or a task that
    // signals it comes after one that waits for it in task order. Its
    // firing is then not bounded by the tasks before its waiters.
    std::vector<std::uint8_t> unordered;
    std::uint32_t start_ns[2] = {0, 0};  // a task's floor on a Cube / Vector core with no rows on this rank
};

// Working space of ScalarCore::post_bound, one for all dies of a System
// (they are asked one at a time): per event, the earliest a task that
// signals it can end and the work left on each core type before it fires.
struct HorizonScratch {
    void begin(std::size_t events, std::size_t streams);
    bool seen(std::size_t e) const { return stamp[e] == now; }
    // A task of core type `type` (-1: scalar) pinned to `core` (-1: any)
    // that signals event e ends at `end` at the earliest, after `work` on a core.
    void add(std::size_t e, std::uint64_t end, std::uint64_t work, int type, int core);
    // The work left before e fires spread over the cores that can do it: on
    // `cores` of a type when some task may take any core of it.
    std::uint64_t spread_ps(std::size_t e, int type, double cores) const;

    std::vector<std::uint32_t> stamp;
    std::uint32_t now = 0;
    std::vector<std::uint64_t> min_end, work[2];
    std::vector<std::uint64_t> pinned[2];  // per type, the cores (below 64) tasks are pinned to; ~0: some may take any
    std::vector<std::uint32_t> signallers;
    std::vector<std::uint64_t> stream_start;                     // per stream, its last descriptor's bound
    std::vector<std::size_t> cursor;                             // per stream, the next descriptor
    std::vector<std::pair<std::uint32_t, std::uint32_t>> heads;  // (task, stream), a min-heap
};

// A task's least time on its core: its start, and for a MatMul reading GM
// its B operand (k x n, read at least once) at the fastest rate a transfer
// of the core can get (the port's miss rate or its L2 hit rate).
std::uint64_t task_floor_ps(const Task& t, const ChipParams& chip);

}  // namespace npusim
