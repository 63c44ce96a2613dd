// Progress of a sweep: a bar with ETA redrawn in place on a terminal, plain
// one-line-per-point messages otherwise (logs, CI, Slurm output files).
#pragma once
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

#include "study/results_store.hpp"

namespace npusim::study {

class Progress {
public:
    // `total` points in the study, `already_done` of them finished before
    // (--resume); `tty` chooses the bar.
    Progress(std::ostream& out, std::size_t total, std::size_t already_done, bool tty);

    void started();
    // One point finished; `label` names its axis values.
    void finished(const Row& row, const std::string& label);
    // Redraws the bar (at most a few times per second); no-op without a tty.
    void tick();
    // A line of text (above the bar on a terminal).
    void message(const std::string& line);
    // Clears the bar.
    void close();

    std::size_t failed() const { return failed_; }

private:
    void draw(bool force);
    void clear_bar();
    std::string eta_text() const;

    std::ostream& out_;
    std::size_t total_, already_, done_ = 0, running_ = 0, failed_ = 0;
    bool tty_;
    bool bar_shown_ = false;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

// "4s", "1m05s", "2h03m".
std::string format_duration(double seconds);

}  // namespace npusim::study
