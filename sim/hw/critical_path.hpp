// The chain of steps that set a run's end time (docs/design.md §4.4), walked
// back from the last finish through whatever made each step late: the task
// that set the event a task waited for, the task before it on a busy core,
// the scalar core's dispatch, the host when it released the task, and the
// previous task of a stream. Each task's run is data movement when its
// busiest transfer pipe (GM port, bandwidth share) outlasted its busiest
// compute pipe, else compute. Built after the run from the per-task record
// (TaskTiming), so the hardware pays a few stores per task.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/program_runtime.hpp"
#include "hw/scalar_core.hpp"
#include "hw/sim_context.hpp"

namespace npusim {

class Stats;
class TraceWriter;

enum class PathKind : std::uint8_t { compute, data_movement, dispatch, host, mesh, idle, sync };
const char* to_string(PathKind k);

struct PathSegment {
    std::uint32_t task = UINT32_MAX;  // UINT32_MAX: no task (host, idle)
    PathKind kind = PathKind::compute;
    std::uint64_t start_ps = 0, end_ps = 0;
    std::string after;   // why it started when it did: "event e1 set by t3", "core busy with t2", ...
    std::string waited;  // the event that released its task, if it waited for one
    std::string stage;   // host segments: the host stage (host.breakdown's groups, or "idle")
    std::string phase;   // a kernel program's phase (its timestamp), for its task's segments
    int rank = 0;        // whose die (a System's path crosses ranks)
};

// Where a die's part of the path ends: at a task that a memory wait released
// when another rank's write landed (rank and task of the writer, and when).
struct CrossRank {
    int rank = -1;
    std::uint32_t task = UINT32_MAX;
    std::uint64_t at_ps = 0;
};

// One stretch of a host thread's time in a stage group (frontend, infer,
// resize, launch, queue, drain, wait, cpu), in time order per thread.
struct HostSpan {
    std::uint64_t start_ps = 0, end_ps = 0;
    std::string stage;
};

// Where a run ends when the host outlasts the device: at `end_ps`, after
// host work that began when device task `gate.after_task` ended.
struct HostTail {
    std::uint64_t end_ps = 0;
    HostGate gate;
    int end_thread = -1;                       // the host thread that finished last
    std::vector<std::vector<HostSpan>> spans;  // per host thread: host segments split by stage
};

// What the walk of one die needs and where it starts.
struct PathWalk {
    const SimContext& ctx;
    const ScalarCore& scalar;
    const ProgramRuntime* programs = nullptr;  // to split program tasks into their phases
    HostTail tail;
    std::uint32_t from = UINT32_MAX;  // the task to walk back from (UINT32_MAX: the die's last)
    std::uint64_t until_ps = ~0ULL;   // ... cut at this time (a writer reached from another rank)
    CrossRank* leave = nullptr;       // if set, stop at a memory release from another rank
};

// In time order; contiguous from 0 to the run's end (the host's end when
// `tail.end_ps` is past the device's last finish).
std::vector<PathSegment> critical_path(const SimContext& ctx, const ScalarCore& scalar, const HostTail& tail = {});
// The same with a start, a cut and a stop: the piece of a System's path on one die.
std::vector<PathSegment> critical_path(const PathWalk& w);

// critical_path.{total_ns,by_kind.<kind>,segments[...],segments_omitted}.
// `contexts` per rank (one entry: a lone die, every segment on it).
void report_critical_path(Stats& s, const SimContext& ctx, const std::vector<PathSegment>& path);
void report_critical_path(Stats& s, const std::vector<const SimContext*>& contexts, const std::vector<PathSegment>& path);
// A "critical path" track in process `pid`: one slice per segment.
void trace_critical_path(TraceWriter& trace, int pid, int tid, const SimContext& ctx,
                         const std::vector<PathSegment>& path);
// One segment of it (its task named from `ctx`, the die it ran on), the
// slice's name after `prefix`.
void trace_path_segment(TraceWriter& trace, int pid, int tid, const SimContext& ctx, const PathSegment& p,
                        const std::string& prefix);

}  // namespace npusim
