// Runs one kernel instance per AIV core of every rank of the supernode: owns
// the functional global memory, the mesh, the per-die SyncAll barriers and
// the phase profile, and each die's memory system (L2 + HBM, on the die's
// own WakeScheduler) that the die's AIV cores' DataCopies go through.
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
    KernelRuntime(sc_core::sc_module_name name, const ChipParams& chip, Kernel kernel, TraceWriter* trace = nullptr,
                  int traced_ranks = 0, std::size_t stack_bytes = 64 * 1024);
    ~KernelRuntime() override;

    // Runs to completion; throws DeadlockError naming a core that still waits.
    void run();
    std::uint64_t end_ps() const { return end_ps_; }

    int ranks() const { return ranks_; }
    int cores() const { return cores_; }
    const ChipParams& chip() const { return chip_; }
    GlobalMemory& memory() { return *memory_; }
    Mesh& mesh() { return *mesh_; }
    const Mesh& mesh() const { return *mesh_; }
    PhaseProfile& profile() { return profile_; }
    const PhaseProfile& profile() const { return profile_; }
    AivCore& core(int rank, int core) { return *cores_v_[static_cast<std::size_t>(rank * cores_ + core)]; }
    // Die `rank`'s memory system (L2 + HBM).
    MemorySystem& memory_system(int rank) { return *dies_[static_cast<std::size_t>(rank)].memory; }
    const MemorySystem& memory_system(int rank) const { return *dies_[static_cast<std::size_t>(rank)].memory; }

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

    // What a die contributes to a kernel run: its scheduler and memory system.
    struct DieMemory {
        std::unique_ptr<WakeScheduler> scheduler;
        std::unique_ptr<MemorySystem> memory;
    };

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
    std::unique_ptr<GlobalMemory> memory_;
    std::unique_ptr<Mesh> mesh_;
    std::vector<DieMemory> dies_;
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
