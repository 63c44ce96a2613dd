// One NPU die: Scalar core(s), Cube and Vector cores, and the memory system
// (L2 + HBM), executing one task stream. Coupled and split layouts differ
// in which buffers a task may reach (see tasks/stream_checks).
#pragma once
#include <memory>
#include <vector>

#include <systemc>

#include "hw/critical_path.hpp"
#include "hw/cube_core.hpp"
#include "hw/memory_system.hpp"
#include "hw/scalar_core.hpp"
#include "hw/sim_context.hpp"
#include "hw/vector_core.hpp"
#include "engine/wake_scheduler.hpp"

namespace npusim {

class Stats;
struct RunSpan;

class Die : public sc_core::sc_module {
public:
    // `trace` may be null. The stream must already be checked against the chip.
    Die(sc_core::sc_module_name name, const ChipParams& chip, const TaskStream& stream, TraceWriter* trace,
        bool trace_pipes = true);

    // Runs to completion; throws DeadlockError if tasks remain that can never run.
    void run();
    std::uint64_t end_ps() const { return end_ps_; }
    // The run's statistics: every module's report plus the die's own
    // figures (total time, Cube/Vector overlap, task and event counts,
    // per-op table, critical path).
    void collect(Stats& stats) const;
    // A host that outlasts the device ends the critical path (call before collect).
    void set_host_tail(const HostTail& tail) { host_tail_ = tail; }
    std::vector<PathSegment> critical_path() const { return npusim::critical_path(ctx_, *scalar_, host_tail_); }
    // The critical path as a track of its own in the die's trace process.
    void trace_critical_path();
    ScalarCore& scalar() { return *scalar_; }
    SimContext& context() { return ctx_; }
    // Where the die's modules, and a host driving the die, post their wakes.
    WakeScheduler& scheduler() { return scheduler_; }

private:
    void report_overlap(Stats& s, const RunSpan& span) const;
    void report_tasks(Stats& s, const RunSpan& span) const;

    SimContext ctx_;
    WakeScheduler scheduler_;
    std::unique_ptr<MemorySystem> memory_;
    std::unique_ptr<ScalarCore> scalar_;
    std::vector<std::unique_ptr<CubeCore>> cube_;
    std::vector<std::unique_ptr<VectorCore>> vector_;
    std::uint64_t end_ps_ = 0;
    HostTail host_tail_;
};

}  // namespace npusim
