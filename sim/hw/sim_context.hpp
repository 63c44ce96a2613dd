// What every hardware module of a die shares: the chip description, the
// task stream being executed, the memory system, the trace and the per-task
// timing record. Owned by the Die.
#pragma once
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "hw/bound_by.hpp"
#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

class MemorySystem;
class WakeScheduler;
class TraceWriter;
class Fabric;
class ProgramRuntime;

// Where a die sits in a System of ranks (sim/system): its rank and its port
// to the fabric. A die on its own has none.
struct DiePlace {
    int rank = 0;
    Fabric* fabric = nullptr;
};

// When each task became ready to issue, was dispatched, started and ended.
// One per task on every rank, kept to the end for the statistics and the
// critical path across ranks: fields are ordered so it packs into 88 B.
struct TaskTiming {
    std::uint64_t head_ps = 0;      // reached the head of its stream
    std::uint64_t released_ps = 0;  // its last awaited event fired
    std::uint64_t start_ps = 0;     // began on its core
    std::uint64_t end_ps = 0;
    std::int32_t core = -1;         // core index within its type
    std::int32_t trace_tid = 0;     // track the task ran on
    bool done = false;
    // What held it up, for the critical path (hw/critical_path): a few
    // stores per task, never per cycle.
    BoundBy bound = BoundBy::none;  // what held it (hw/bound_by.hpp)
    std::uint32_t prev_on_core = UINT32_MAX;  // the task its core ran before it
    std::uint64_t dispatch_ps = 0;  // its dispatch began on the scalar core
    std::uint64_t compute_ps = 0;   // busiest compute pipe's time inside the task
    std::uint64_t transfer_ps = 0;  // busiest transfer pipe's (GM port, bandwidth share)
    std::uint64_t bytes = 0;        // moved by its transfer stages
    // A memory wait released it: the rank and task that wrote the block that
    // landed last (the critical path goes on there).
    std::int32_t mem_rank = -1;
    std::uint32_t mem_task = UINT32_MAX;
};
static_assert(sizeof(TaskTiming) == 88, "TaskTiming: a field that breaks the packing costs 8 B per task per rank");

struct SimContext {
    const ChipParams& chip;
    const TaskStream& stream;
    WakeScheduler* scheduler = nullptr;
    MemorySystem* memory = nullptr;
    TraceWriter* trace = nullptr;
    DiePlace place;
    ProgramRuntime* programs = nullptr;  // the stream's kernel programs (null: none)
    int trace_pid = 1;
    bool tracing = false;      // trace != nullptr and enabled
    bool trace_pipes = true;   // per-tile pipe slices (large for big runs)
    int next_tid = 1;          // trace thread ids, handed out in build order
    std::vector<TaskTiming> timing;

    SimContext(const ChipParams& c, const TaskStream& s)
        : chip(c), stream(s), timing(s.tasks.size()), ps_per_cycle_(c.ps_per_cycle()) {}

    // Nearest picosecond (cycles >= 0); inline, as it runs on every event.
    std::uint64_t cycles_to_ps(double cycles) const {
        return static_cast<std::uint64_t>(cycles * ps_per_cycle_ + 0.5);
    }
    // Engine rate in bytes per picosecond from bytes per core cycle.
    double bytes_per_ps(double bytes_per_cycle) const { return bytes_per_cycle / ps_per_cycle_; }

private:
    double ps_per_cycle_;  // chip.ps_per_cycle(), a division, kept
};

}  // namespace npusim
