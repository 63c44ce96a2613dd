// How far a long run on many dies has come, on stderr: a whole LLM step
// runs for tens of minutes and prints nothing else until it ends. A line
// every minute when stderr is a terminal; NPUSIM_PROGRESS_SECONDS=S sets the
// interval and prints to any stderr (logs, tests; 0: after every window).
// No result depends on it.
#pragma once
#include <chrono>
#include <cstdint>

namespace npusim {

class RunProgress {
public:
    // Throws InputError when NPUSIM_PROGRESS_SECONDS is not a number of seconds.
    RunProgress();
    // NPUSIM_PROGRESS_SECONDS, or -1 when unset; throws InputError when it
    // is not a number from 0 to 1e9 (`run` checks it before it compiles).
    static double interval_from_environment();
    // Cheap between lines: whether one is due now.
    bool due();
    void print(std::uint64_t tasks_done, std::uint64_t tasks, int ranks, std::uint64_t simulated_ps) const;

private:
    using Clock = std::chrono::steady_clock;
    bool on_ = false;
    Clock::duration interval_{};
    Clock::time_point start_, next_;
};

}  // namespace npusim
