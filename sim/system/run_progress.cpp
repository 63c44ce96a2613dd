#include "system/run_progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim {

RunProgress::RunProgress() : start_(Clock::now()) {
    const double seconds = interval_from_environment();
    on_ = seconds >= 0 || isatty(STDERR_FILENO) != 0;
    interval_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds >= 0 ? seconds : 60));
    next_ = start_ + interval_;
}

double RunProgress::interval_from_environment() {
    const char* env = std::getenv("NPUSIM_PROGRESS_SECONDS");
    if (!env || !*env) return -1;
    char* end = nullptr;
    const double seconds = std::strtod(env, &end);
    if (*end != '\0' || !(seconds >= 0) || seconds > 1e9)
        throw InputError(fmt::format(
            "NPUSIM_PROGRESS_SECONDS: expected the seconds between progress lines, from 0 to 1e9, got '{}'", env));
    return seconds;
}

// The clock once a window: tens of ns against a window's microseconds of work.
bool RunProgress::due() {
    if (!on_) return false;
    const Clock::time_point now = Clock::now();
    if (now < next_) return false;
    next_ = now + interval_;
    return true;
}

void RunProgress::print(std::uint64_t tasks_done, std::uint64_t tasks, int ranks, std::uint64_t simulated_ps) const {
    const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    const double share = tasks ? 100.0 * static_cast<double>(tasks_done) / static_cast<double>(tasks) : 100.0;
    std::fputs(fmt::format("npusim: {:.1f}% of {} tasks done on {} rank{}, {:.1f} us simulated, {:.0f} s\n", share,
                           tasks, ranks, ranks == 1 ? "" : "s", static_cast<double>(simulated_ps) / 1e6, wall)
                   .c_str(),
               stderr);
    std::fflush(stderr);
}

}  // namespace npusim
