// The die model run on a stream alone: the compiler's way to cost a plan by
// running it (docs/compiler.md, "Costing a plan on the die model"). Each
// call builds a die that runs without SystemC (WakeScheduler::Kernel::alone),
// runs the stream on it to the end and returns when the last task ended:
// the same modules and formulas as `npusim run`, so the same time to the
// picosecond. Only before the simulation starts (a die is a module).
#pragma once
#include <cstdint>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

class DieProbe {
public:
    explicit DieProbe(const ChipParams& chip) : chip_(chip) {}
    // The stream must fit the chip (tasks/stream_checks); throws
    // DeadlockError if it cannot finish.
    std::uint64_t end_ps(const TaskStream& s);
    // end_ps in the chip's cycles, after checking that the stream fits the
    // chip: how the compiler's plan searches time a candidate
    // (compiler::set_die_timer).
    double cycles(const TaskStream& s);
    // A fresh probe's cycles on `chip`: the timer the command line and the
    // test binary register.
    static double time(const TaskStream& s, const ChipParams& chip) { return DieProbe(chip).cycles(s); }
    std::uint64_t probes() const { return probes_; }
    double ps_per_cycle() const { return chip_.ps_per_cycle(); }
    const ChipParams& chip() const { return chip_; }

private:
    ChipParams chip_;
    std::uint64_t probes_ = 0;
};

}  // namespace npusim
