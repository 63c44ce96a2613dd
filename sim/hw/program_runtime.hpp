// What the vector cores of one die share while they run kernel programs
// (hw/program): the stream's programs, built from their declarations; one
// SyncAll barrier per program (its blocks on this die); the phase stamps the
// programs make (GetSystemCycle) and what each phase waited for; the
// counters the statistics report.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "hw/phase_profile.hpp"
#include "hw/program.hpp"
#include "tasks/task.hpp"

namespace npusim {

class AivCore;
class Stats;

// One phase of one program task as its core lived it: when it ended, and of
// its time how much the core waited on the mesh (flags, landings), in SyncAll
// and for its own DataCopies; the rest is its own work.
struct PhaseSpan {
    std::uint32_t task = 0;
    int phase = 0;
    std::uint64_t end_ps = 0, mesh_ps = 0, sync_ps = 0, memory_ps = 0;
};

class ProgramRuntime {
public:
    ProgramRuntime(const TaskStream& ts, const ChipParams& chip, int vector_cores);

    const Program& program(std::uint32_t decl) const { return *programs_[decl]; }
    std::uint32_t blocks(std::uint32_t decl) const { return blocks_[decl]; }
    // The index of program `decl` among the stream's (a GM workspace per program).
    std::size_t programs() const { return programs_.size(); }

    struct Barrier {
        std::uint32_t arrived = 0;
        std::uint64_t generation = 0;
        std::vector<AivCore*> waiting;
    };
    Barrier& barrier(std::uint32_t decl) { return barriers_[decl]; }

    PhaseProfile& profile() { return profile_; }
    const PhaseProfile& profile() const { return profile_; }
    std::vector<PhaseSpan>& spans() { return spans_; }
    const std::vector<PhaseSpan>& spans() const { return spans_; }

    std::uint64_t ops = 0;        // kernel API calls
    std::uint64_t waits = 0;      // times a program suspended
    std::uint64_t sync_alls = 0;  // barriers released
    std::uint64_t instances = 0;  // program tasks started

    // kernel.{instances,ops,waits,sync_alls} and phases.* (this die's).
    void report(Stats& s) const;

private:
    std::vector<std::shared_ptr<const Program>> programs_;
    std::vector<std::uint32_t> blocks_;
    std::vector<Barrier> barriers_;
    PhaseProfile profile_;
    std::vector<PhaseSpan> spans_;
};

}  // namespace npusim
