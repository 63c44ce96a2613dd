#include "study/progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace npusim::study {

std::string format_duration(double s) {
    if (!(s >= 0)) s = 0;
    const long long t = static_cast<long long>(std::llround(s));
    if (t < 60) return s < 10 ? fmt::format("{:.1f}s", s) : fmt::format("{}s", t);
    if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
    return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}

Progress::Progress(std::ostream& out, std::size_t total, std::size_t already_done, bool tty)
    : out_(out), total_(total), already_(already_done), tty_(tty), start_(std::chrono::steady_clock::now()) {}

void Progress::started() {
    ++running_;
    draw(false);
}

std::string Progress::eta_text() const {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::size_t remaining = total_ - std::min(total_, already_ + done_);
    if (done_ == 0) return remaining == 0 ? "ETA 0s" : "ETA ?";
    return "ETA " + format_duration(elapsed / static_cast<double>(done_) * static_cast<double>(remaining));
}

void Progress::finished(const Row& row, const std::string& label) {
    if (running_ > 0) --running_;
    ++done_;
    if (!row.ok()) ++failed_;
    const std::size_t n = already_ + done_;
    const int width = static_cast<int>(std::to_string(total_).size());
    std::string metrics;
    for (auto it = row.metrics.begin(); it != row.metrics.end(); ++it)
        metrics += fmt::format("  {}={}", it.key(),
                               it->is_string()       ? it->get<std::string>()
                               : it->is_number_float() ? fmt::format("{:.6g}", it->get<double>())
                                                       : it->dump());
    if (row.ok()) {
        if (!tty_)
            message(fmt::format("[{:>{}}/{}] ok      {}  {}{}  ({}, {})", n, width, total_, row.id, label, metrics,
                                format_duration(row.elapsed_s), eta_text()));
    } else {
        message(fmt::format("[{:>{}}/{}] FAILED  {}  {}  {}", n, width, total_, row.id, label, row.error));
    }
    draw(true);
}

void Progress::message(const std::string& line) {
    clear_bar();
    out_ << line << "\n";
    out_.flush();
    draw(true);
}

void Progress::tick() { draw(false); }

void Progress::clear_bar() {
    if (tty_ && bar_shown_) {
        out_ << "\r\033[K";
        bar_shown_ = false;
    }
}

void Progress::draw(bool force) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && bar_shown_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
    last_draw_ = now;
    const std::size_t n = std::min(total_, already_ + done_);
    const int cells = 30;
    const int full = total_ == 0 ? cells : static_cast<int>(cells * n / total_);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    out_ << "\r\033[K"
         << fmt::format("[{}{}] {}/{}  {} running{}  {} elapsed  {}", std::string(static_cast<std::size_t>(full), '#'),
                        std::string(static_cast<std::size_t>(cells - full), '.'), n, total_, running_,
                        failed_ ? fmt::format("  {} failed", failed_) : std::string(), format_duration(elapsed),
                        eta_text());
    out_.flush();
    bar_shown_ = true;
}

void Progress::close() {
    clear_bar();
    out_.flush();
}

}  // namespace npusim::study
