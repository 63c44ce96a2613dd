// Runs one kernel instance per AIV core of every rank of a System (one Die
// per rank, joined by the mesh; docs/design.md §1.4): AivCore (r, i) is
// vector core i of die r, its DataCopies go through that die's memory system
// (L2 + HBM, on the die's own WakeScheduler) and its writes over the
// System's mesh into its functional global memory. Owns the per-die SyncAll
// barriers and the phase profile.
//
// The kernels own the AIV cores while they run: a task stream on the same
// System may use the Cube cores (and the dies' memory, which then really is
// shared), but a vector task running on a core a kernel also uses is not
// arbitrated against it (both would use the port at once).
//
// Process style: each core is an SC_THREAD made with sc_spawn and a small
// stack (default 64 KB, only the touched pages become resident), so kernels
// read as straight-line Ascend-C-like code. Per-core threads stay cheap at
// 288 x 48 = 13,824 cores because a core enters the SystemC scheduler only
// for shared actions (AivCore's local time offset); links, landings and
// watches live in the single Mesh agenda, not in processes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "chip/chip_params.hpp"
#include "kernel_api/aiv_core.hpp"
#include "kernel_api/phase_profile.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/memory_system.hpp"
#include "hw/system.hpp"
#include "mesh/global_memory.hpp"
#include "mesh/mesh.hpp"

namespace npusim {

class Stats;
class TraceWriter;

class KernelRuntime : public sc_core::sc_module, public TransferClient, private Wakeable {
public:
    using Kernel = std::function<void(AivCore&)>;

    // `trace` may be null; the first `traced_ranks` ranks get a trace process
    // (pid rank + 1) with one track per AIV core (phases) and per busy plane.
    // A System of its own: one Die per rank of `chip`, with no tasks.
    KernelRuntime(sc_core::sc_module_name name, const ChipParams& chip, Kernel kernel, TraceWriter* trace = nullptr,
                  int traced_ranks = 0, std::size_t stack_bytes = 64 * 1024);
    // The kernels run on `system`'s dies (which may also run task streams);
    // its trace is the System's (`trace` as given to it).
    KernelRuntime(sc_core::sc_module_name name, System& system, Kernel kernel, TraceWriter* trace = nullptr,
                  int traced_ranks = 0, std::size_t stack_bytes = 64 * 1024);
    ~KernelRuntime() override;

    // Runs to completion; throws DeadlockError naming a core that still waits.
    void run();
    std::uint64_t end_ps() const { return end_ps_; }

    int ranks() const { return ranks_; }
    int cores() const { return cores_; }
    const ChipParams& chip() const { return chip_; }
    GlobalMemory& memory() { return system_.memory(); }
    Mesh& mesh() { return system_.mesh(); }
    const Mesh& mesh() const { return system_.mesh(); }
    System& system() { return system_; }
    PhaseProfile& profile() { return profile_; }
    const PhaseProfile& profile() const { return profile_; }
    AivCore& core(int rank, int core) { return *cores_v_[static_cast<std::size_t>(rank * cores_ + core)]; }
    // Die `rank`'s memory system (L2 + HBM).
    MemorySystem& memory_system(int rank) { return system_.die(rank).memory_system(); }

    // GM workspace of the cross-core flags: one block per (flag id, core).
    Addr cross_core_addr(int id, int core) const;
    static constexpr Addr kCrossCoreBase = 0x7F0000000000ULL;

    std::uint64_t kernel_ops() const { return ops_; }
    // The run's totals, kernel.* and supernode.* (its own), then the reports
    // of the functional memory (memory_model.*), the mesh and the profile.
    void collect(Stats& s) const;

private:
    friend class AivCore;
    struct Barrier {
        int arrived = 0;
        std::uint64_t generation = 0;
        sc_core::sc_event ev;
    };

    void build(std::size_t stack_bytes);
    static void on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps);
    // A core's pending transfer enters its die's memory system at t_ps.
    void submit_at(AivCore& k, std::uint64_t t_ps);
    void wake(std::uint64_t core_id) override;  // hands the core's pending transfer over
    void transfer_drained(std::uint64_t tag) override;
    void transfer_done(std::uint64_t tag) override;
    void report_memory(Stats& s) const;  // memory.* and units.hbm / units.l2, summed over the dies
    void core_main(std::uint32_t id);
    void report_critical_path(Stats& s) const;  // critical_path.*

    const ChipParams& chip_;
    Kernel kernel_;
    TraceWriter* trace_;
    int traced_ranks_;
    int ranks_, cores_;
    std::unique_ptr<System> own_;  // when not given one
    System& system_;
    std::uint64_t completion_ps_ = 0;
    double gm_cap_ = 0, l2_read_cap_ = 0, l2_write_cap_ = 0;  // an AIV core's port, bytes/ps
    std::vector<std::unique_ptr<AivCore>> cores_v_;
    std::vector<std::unique_ptr<Barrier>> barriers_;
    PhaseProfile profile_;
    std::uint64_t end_ps_ = 0;
    std::uint64_t ops_ = 0;
    std::uint64_t waits_ = 0;         // times a core entered the SystemC scheduler
    std::uint64_t lookahead_ps_ = 0;  // shortest time from posting a write to its landing
    sc_core::sc_event never_;         // finished cores park here (no process teardown)
    std::uint64_t sync_alls_ = 0;
};

}  // namespace npusim
