// How far a long run on many dies has come, on stderr: a whole LLM step
// runs for tens of minutes and prints nothing else until it ends. A line
// every minute when stderr is a terminal; NPUSIM_PROGRESS_SECONDS=S sets the
// interval and prints to any stderr (logs, tests; 0: at every check). It
// reads the clock once every 64 windows; no result depends on it.
#pragma once
#include <chrono>
#include <cstdint>

namespace npusim {

class RunProgress {
public:
    // Throws InputError when NPUSIM_PROGRESS_SECONDS is not a number >= 0.
    RunProgress();
    // Cheap between lines: whether one is due now.
    bool due();
    void print(std::uint64_t tasks_done, std::uint64_t tasks, int ranks, std::uint64_t simulated_ps) const;

private:
    using Clock = std::chrono::steady_clock;
    bool on_ = false;
    Clock::duration interval_{};
    Clock::time_point start_, next_;
    unsigned calls_ = 0;
};

}  // namespace npusim
