#include "system/run_progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim {

RunProgress::RunProgress() : start_(Clock::now()) {
    double seconds = 60;
    on_ = isatty(STDERR_FILENO) != 0;
    if (const char* env = std::getenv("NPUSIM_PROGRESS_SECONDS"); env && *env) {
        char* end = nullptr;
        seconds = std::strtod(env, &end);
        if (*end != '\0' || !(seconds >= 0) || seconds > 1e9)
            throw InputError(fmt::format(
                "NPUSIM_PROGRESS_SECONDS: expected seconds between progress lines (a number >= 0), got '{}'", env));
        on_ = true;
    }
    interval_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    next_ = start_ + interval_;
}

bool RunProgress::due() {
    constexpr unsigned kWindowsPerCheck = 64;
    if (!on_ || ++calls_ % kWindowsPerCheck != 0) return false;
    const Clock::time_point now = Clock::now();
    if (now < next_) return false;
    next_ = now + interval_;
    return true;
}

void RunProgress::print(std::uint64_t tasks_done, std::uint64_t tasks, int ranks, std::uint64_t simulated_ps) const {
    const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    const double share = tasks ? 100.0 * static_cast<double>(tasks_done) / static_cast<double>(tasks) : 100.0;
    std::fputs(fmt::format("npusim: {:.1f}% of {} tasks done on {} ranks, {:.1f} us simulated, {:.0f} s\n", share,
                           tasks, ranks, static_cast<double>(simulated_ps) / 1e6, wall)
                   .c_str(),
               stderr);
    std::fflush(stderr);
}

}  // namespace npusim
