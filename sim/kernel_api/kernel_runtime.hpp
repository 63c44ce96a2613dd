// Runs one kernel instance per AIV core of every rank of the supernode: owns
// the functional global memory, the mesh, the per-die SyncAll barriers and
// the phase profile.
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
#include "mesh/global_memory.hpp"
#include "mesh/mesh.hpp"

namespace npusim {

class Stats;
class TraceWriter;

class KernelRuntime : public sc_core::sc_module {
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

    static void on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps);
    void core_main(std::uint32_t id);
    void report_critical_path(Stats& s) const;  // critical_path.*

    const ChipParams& chip_;
    Kernel kernel_;
    TraceWriter* trace_;
    int traced_ranks_;
    int ranks_, cores_;
    std::unique_ptr<GlobalMemory> memory_;
    std::unique_ptr<Mesh> mesh_;
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
