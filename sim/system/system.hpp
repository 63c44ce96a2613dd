// A supernode as one system (docs/design.md §1.4): N ranks, each a whole
// Die — the same Cube, Vector and Scalar cores, L2 and HBM as a single-die
// run — joined by the Mesh, with one functional global memory that tells
// when each DataBlock of each rank's GM lands, what flag it carries and who
// wrote it. The System is every die's Fabric: a die's writes leave through
// it, and its waits on GM are answered by it.
//
// Ranks meet only through memory: a copy with a dst_rank or a program's
// write leaves its die as DataBlocks over the mesh, and a task's memory wait
// or a program's wait_flag watches its own rank's GM. One WakeHub runs every
// die's scheduler (one SystemC process for the whole System).
#pragma once
#include <memory>
#include <vector>

#include <systemc>

#include "engine/wake_scheduler.hpp"
#include "hw/die.hpp"
#include "hw/fabric.hpp"
#include "system/global_memory.hpp"
#include "system/mesh.hpp"
#include "system/run_progress.hpp"

namespace npusim {

class Stats;
class TraceWriter;

class System : public sc_core::sc_module, public Fabric, private WakeHub::WindowListener {
public:
    // per_rank[r]: the tasks rank r runs (null: none); chip.interconnect.ranks
    // of them. Ranks that run the same program may share one stream. `trace`
    // may be null; only the ranks in `traced_ranks` write to it.
    System(sc_core::sc_module_name name, const ChipParams& chip, std::vector<std::shared_ptr<const TaskStream>> per_rank,
           TraceWriter* trace, std::vector<int> traced_ranks, bool trace_pipes = true);

    // Threads the dies run on (1 or 2; the results are the same): 2 halves
    // the wall time of large runs on a machine with a second core. A traced
    // run keeps to one (the trace is written in event order).
    void set_threads(int n);
    int threads() const { return hub_.threads(); }

    // How far the dies run ahead of each other (docs/architecture.md, "How
    // time works"; the results are the same): `cell`, one half of the
    // shortest link latency at a time; `posts` (the default), as many cells
    // as no die can post a write to another die in.
    enum class Lookahead { cell, posts };
    void set_lookahead(Lookahead l) { lookahead_ = l; }

    int ranks() const { return static_cast<int>(dies_.size()); }
    Die& die(int rank) { return *dies_[static_cast<std::size_t>(rank)]; }
    const Die& die(int rank) const { return *dies_[static_cast<std::size_t>(rank)]; }
    Mesh& mesh() { return *mesh_; }
    const Mesh& mesh() const { return *mesh_; }
    GlobalMemory& memory() { return *memory_; }
    const GlobalMemory& memory() const { return *memory_; }
    bool traced(int rank) const;

    // Runs to completion; throws DeadlockError naming, on up to two ranks, a
    // task that can never run and what it waits for.
    void run();
    // Throws DeadlockError if some rank has tasks left (after sc_start).
    void check_finished() const;
    std::uint64_t end_ps() const;  // the last task's end on any rank
    int last_rank() const;         // the rank whose last task ends last (lowest on ties)
    // Simulation events run() processed (task and pipe actions, memory flows,
    // mesh chunks), as `engine.events`: the benchmark's events per second.
    std::uint64_t events() const { return events_.total(); }
    const EventCounts& events_by_kind() const { return events_; }
    // Hub windows the dies ran in, as `engine.windows`.
    std::uint64_t windows() const { return hub_.windows_run(); }

    // One rank: exactly its die's statistics. N ranks: every die reports
    // over the system's span and the figures merge — counts, bytes and
    // cycles summed, ratios averaged (so a utilisation is the system's) —
    // plus ranks.r<R>.* per rank, the ops table of the rank that ends last,
    // the critical path across ranks, the programs' phases, the mesh and
    // the functional memory.
    void collect(Stats& s) const;
    // engine.events and engine.events_by.* of run().
    void report_events(Stats& s) const;
    void trace_critical_path();
    // After the run, into the trace: an arrow from each task's writer on a
    // traced rank to the task its memory wait released (the write that
    // landed last), and the mesh's per-tier egress rate counters.
    void trace_fabric();
    // The chain of steps that set the end, across ranks: walked back on the
    // rank that ends last, and on from a task a memory wait released to the
    // rank and task whose write landed last (docs/statistics.md).
    std::vector<PathSegment> critical_path() const;
    // rank,core,start_ns,<phase>...: every program core's phase stamps.
    std::string phase_csv() const;

    // --- Fabric ----------------------------------------------------------------
    std::uint32_t block_bytes() const override { return memory_->block_bytes(); }
    std::uint64_t min_landing_ps() const override { return min_landing_ps_; }
    std::uint64_t max_latency_ps() const override { return max_latency_ps_; }
    PostedWrite post(const WriteRequest& w, std::uint64_t t0_ps) override;
    void post_local(const WriteRequest& w, std::uint64_t land_ps) override;
    bool watch(int rank, int unit, Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag,
               std::uint64_t& fire_ps) override;
    Writer writer_of(int rank, Addr addr, std::uint32_t blocks) const override;
    bool block_written(int rank, Addr addr, std::uint64_t& flag) const override;
    bool check_read(int rank, Addr addr, std::uint64_t bytes, int core, std::uint64_t now_ps) override;
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>* remote_ranges(int rank) const override {
        return &remote_ranges_[static_cast<std::size_t>(rank)];
    }

private:
    static void on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps);
    // What a write posted in a hub window does to another die — its blocks
    // landing in that die's L2, a watch there coming true — is queued and
    // applied in posting order when the window is over (docs/architecture.md,
    // "How time works"): it happens at least a link latency after the
    // window, and no die touches another while the dies run.
    struct Deferred {
        int rank;
        int unit;  // -1: a landing (addr, bytes at t_ps); else a watch of this unit fired (tag at t_ps)
        std::uint64_t t_ps, addr_or_tag, bytes;
    };
    void window_over() override;
    std::uint64_t window_end(std::uint64_t now, std::uint64_t end) override;
    std::vector<Deferred> deferred_;
    Lookahead lookahead_ = Lookahead::posts;
    // Per rank, a time before which its die posts nothing unless a write
    // lands in it first (0: to be found again), and the working space.
    std::vector<std::uint64_t> quiet_until_;
    HorizonScratch horizon_scratch_;
    int posting_rank_ = -1;  // the die whose write the functional memory is taking
    static constexpr int kUnitBits = 12;  // watch owner = rank << kUnitBits | unit

    const ChipParams& chip_;
    std::vector<std::shared_ptr<const TaskStream>> streams_;  // each die holds a reference to its own
    // Per rank, the [begin, end) GM ranges copies write into it.
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> remote_ranges_;
    std::vector<int> traced_;
    TraceWriter* trace_ = nullptr;  // null when not tracing
    std::uint64_t min_landing_ps_ = 0, max_latency_ps_ = 0;
    EventCounts events_;    // during run(), by kind
    RunProgress progress_;  // a line on stderr now and then in a long run
    void report_progress() const;
    mutable WakeHub hub_;  // serialize() from const fabric calls
    bool tracing_ = false;
    std::unique_ptr<GlobalMemory> memory_;
    std::unique_ptr<Mesh> mesh_;
    std::vector<std::unique_ptr<Die>> dies_;
};

}  // namespace npusim
