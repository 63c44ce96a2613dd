// A supernode as one system (docs/design.md §1.4): N ranks, each a whole
// Die — the same Cube, Vector and Scalar cores, L2 and HBM as a single-die
// run — joined by the Mesh, with one functional global memory that tells
// when each DataBlock of each rank's GM lands and what flag it carries.
//
// Ranks meet only through memory: a copy with a dst_rank leaves its die as
// DataBlocks over the mesh, and a task's memory wait watches its own rank's
// GM. The global memory has one watch callback; the System routes it to the
// waiting die's scalar core (owner bit ScalarCore::kWatchOwner) or to
// whoever else watches (the kernel runtime).
#pragma once
#include <memory>
#include <vector>

#include <systemc>

#include "hw/die.hpp"
#include "mesh/global_memory.hpp"
#include "mesh/mesh.hpp"

namespace npusim {

class Stats;
class TraceWriter;

class System : public sc_core::sc_module {
public:
    // per_rank[r]: the tasks rank r runs (empty for a die that only hosts
    // kernels); chip.interconnect.ranks of them. `trace` may be null; only
    // the ranks in `traced_ranks` write to it.
    System(sc_core::sc_module_name name, const ChipParams& chip, std::vector<TaskStream> per_rank,
           TraceWriter* trace, std::vector<int> traced_ranks, bool trace_pipes = true);

    int ranks() const { return static_cast<int>(dies_.size()); }
    Die& die(int rank) { return *dies_[static_cast<std::size_t>(rank)]; }
    const Die& die(int rank) const { return *dies_[static_cast<std::size_t>(rank)]; }
    Mesh& mesh() { return *mesh_; }
    const Mesh& mesh() const { return *mesh_; }
    GlobalMemory& memory() { return *memory_; }
    const GlobalMemory& memory() const { return *memory_; }
    bool traced(int rank) const;
    // Watches of owners without ScalarCore::kWatchOwner go here.
    void set_kernel_fire(GlobalMemory::FireFn fn, void* ctx) {
        kernel_fire_ = fn;
        kernel_ctx_ = ctx;
    }

    // Runs to completion; throws DeadlockError naming the first rank with a
    // task that can never run, and what it waits for.
    void run();
    // Throws DeadlockError if some rank has tasks left (after sc_start).
    void check_finished() const;
    std::uint64_t end_ps() const;  // the last task's end on any rank
    int last_rank() const;         // the rank whose last task ends last (lowest on ties)

    // One rank: exactly its die's statistics. N ranks: every die reports
    // over the system's span and the figures merge — counts, bytes and
    // cycles summed, ratios averaged (so a utilisation is the system's) —
    // plus ranks.r<R>.* per rank, the ops table and critical path of the
    // rank that ends last, the mesh and the functional memory.
    void collect(Stats& s) const;
    void trace_critical_path();

private:
    static void on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps);

    const ChipParams& chip_;
    std::vector<TaskStream> streams_;  // each die holds a reference to its own
    // Per rank, the [begin, end) GM ranges copies write into it (RankLink).
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> remote_ranges_;
    std::vector<int> traced_;
    std::unique_ptr<GlobalMemory> memory_;
    std::unique_ptr<Mesh> mesh_;
    std::vector<std::unique_ptr<Die>> dies_;
    GlobalMemory::FireFn kernel_fire_ = nullptr;
    void* kernel_ctx_ = nullptr;
};

}  // namespace npusim
