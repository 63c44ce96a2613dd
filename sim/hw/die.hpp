// One NPU die: Scalar core(s), Cube and Vector cores, and the memory system
// (L2 + HBM), executing one task stream. Coupled and split layouts differ
// in which buffers a task may reach (see tasks/stream_checks).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include <systemc>

#include "hw/critical_path.hpp"
#include "hw/cube_core.hpp"
#include "hw/fabric.hpp"
#include "hw/memory_system.hpp"
#include "hw/program_runtime.hpp"
#include "hw/scalar_core.hpp"
#include "hw/sim_context.hpp"
#include "hw/vector_core.hpp"
#include "engine/wake_scheduler.hpp"

namespace npusim {

class Stats;
struct RunSpan;

class Die : public sc_core::sc_module, public Watcher {
public:
    // `trace` may be null. The stream must already be checked against the chip.
    // `place` puts it in a System of ranks (its trace process is then
    // "rank R", pid R + 1); a stream with kernel programs needs one.
    // `descriptors`: the stream's, shared with other dies that run it (null:
    // the die packs its own).
    // `kernel`: Kernel::alone builds a die that run_alone() runs without
    // SystemC (no process, event or simulation time), any number of times
    // per process before the simulation starts.
    Die(sc_core::sc_module_name name, const ChipParams& chip, const TaskStream& stream, TraceWriter* trace,
        bool trace_pipes = true, DiePlace place = {}, std::shared_ptr<const DescriptorTable> descriptors = nullptr,
        WakeScheduler::Kernel kernel = WakeScheduler::Kernel::systemc);
    ~Die() override;

    // Runs to completion; throws DeadlockError if tasks remain that can never run.
    void run();
    // The same for a die built with Kernel::alone.
    void run_alone();
    std::uint64_t end_ps() const;  // the last task's end
    // The run's statistics: every module's report plus the die's own
    // figures (total time, Cube/Vector overlap, task and event counts,
    // per-op table, critical path).
    // `span_ps` (0: the die's own end) is the time utilisations are over:
    // a System's ranks all report over the system's end.
    // `addressed_bytes`: the GM its stream addresses, when the owner has
    // counted it already (ranks sharing one compiled stream count it once).
    void collect(Stats& stats, std::uint64_t span_ps = 0, std::optional<std::uint64_t> addressed_bytes = {}) const;
    // A host that outlasts the device ends the critical path (call before collect).
    void set_host_tail(const HostTail& tail) { host_tail_ = tail; }
    std::vector<PathSegment> critical_path() const {
        return npusim::critical_path(PathWalk{ctx_, *scalar_, programs_.get(), host_tail_});
    }
    // The piece of a System's path on this die (PathWalk's start, cut and stop).
    std::vector<PathSegment> critical_path_from(std::uint32_t task, std::uint64_t until_ps, CrossRank* leave) const {
        PathWalk w{ctx_, *scalar_, programs_.get(), {}};
        w.from = task;
        w.until_ps = until_ps;
        w.leave = leave;
        return npusim::critical_path(w);
    }
    // The critical path as a track of its own in the die's trace process.
    void trace_critical_path();
    ScalarCore& scalar() { return *scalar_; }
    const ScalarCore& scalar() const { return *scalar_; }
    int rank() const { return ctx_.place.rank; }
    // A watch on this die's GM came true (the fabric calls it).
    void watch_fired(int unit, std::uint64_t tag, std::uint64_t fire_ps) override;
    // A one-line reason why the run cannot finish; "" if every task ran.
    std::string deadlock_report() const;
    // The kernel programs' shared state (null: the stream has none).
    const ProgramRuntime* programs() const { return programs_.get(); }
    MemorySystem& memory_system() { return *memory_; }
    const MemorySystem& memory_system() const { return *memory_; }
    int cube_cores() const { return static_cast<int>(cube_.size()); }
    int vector_cores() const { return static_cast<int>(vector_.size()); }
    CubeCore& cube_core(int i) { return *cube_[static_cast<std::size_t>(i)]; }
    VectorCore& vector_core(int i) { return *vector_[static_cast<std::size_t>(i)]; }
    // Throws DeadlockError if tasks remain that can never run (after run()).
    void check_finished() const;
    SimContext& context() { return ctx_; }
    const SimContext& context() const { return ctx_; }
    // Where the die's modules, and a host driving the die, post their wakes.
    WakeScheduler& scheduler() { return scheduler_; }

private:
    void report_overlap(Stats& s, const RunSpan& span) const;
    void report_tasks(Stats& s, const RunSpan& span) const;

    SimContext ctx_;
    WakeScheduler scheduler_;
    std::unique_ptr<MemorySystem> memory_;
    std::unique_ptr<ProgramRuntime> programs_;
    std::unique_ptr<ScalarCore> scalar_;
    std::vector<std::unique_ptr<CubeCore>> cube_;
    std::vector<std::unique_ptr<VectorCore>> vector_;
    HostTail host_tail_;
};

}  // namespace npusim
