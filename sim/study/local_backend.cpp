// The local backend of `npusim sweep`: up to -j points at a time, each an
// `npusim run` child process on this machine.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "study/child_process.hpp"
#include "study/json_file.hpp"
#include "study/sweep.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

struct Running {
    const PendingPoint* p;
    std::chrono::steady_clock::time_point start;
    bool timed_out = false;
};

void stop_all(std::map<pid_t, Running>& running) {
    for (auto& [pid, r] : running) ::kill(pid, SIGTERM);
    for (auto& [pid, r] : running) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    running.clear();
}

}  // namespace

void prepare_point_folder(const PendingPoint& p) {
    std::error_code ec;
    fs::create_directories(p.files.dir, ec);
    // Stale files of an earlier attempt must not be mistaken for this one's.
    fs::remove(p.files.stats, ec);
    fs::remove(p.files.result, ec);
}

void run_local_backend(const std::vector<PendingPoint>& pending, const SweepOptions& opt,
                       const std::vector<std::string>& metrics, SweepSink& sink) {
    const unsigned slots = std::max(1u, opt.jobs);
    std::map<pid_t, Running> running;
    std::size_t next = 0;
    while (next < pending.size() || !running.empty()) {
        if (interrupted()) {
            stop_all(running);
            throw SweepInterrupted{};
        }
        while (running.size() < slots && next < pending.size()) {
            const PendingPoint& p = pending[next++];
            prepare_point_folder(p);
            const pid_t pid = spawn_process(p.argv, p.files.log);
            running[pid] = Running{&p, std::chrono::steady_clock::now()};
            if (sink.started) sink.started(p);
        }
        bool reaped = false;
        for (auto it = running.begin(); it != running.end();) {
            int status = 0;
            const pid_t r = ::waitpid(it->first, &status, WNOHANG);
            const auto now = std::chrono::steady_clock::now();
            const double elapsed = std::chrono::duration<double>(now - it->second.start).count();
            if (r == it->first) {
                const PendingPoint& p = *it->second.p;
                Row row = make_row(p.point, metrics, exit_code_of(status), elapsed, p.files);
                if (it->second.timed_out) {
                    row.status = "failed";
                    row.error = fmt::format("timed out after {} s (--timeout)", opt.point_timeout_s);
                }
                it = running.erase(it);
                reaped = true;
                // The point's own record first: a sweep killed before appending
                // the row adopts it on --resume instead of running the point again.
                write_file_atomically(p.files.result, row.to_json().dump() + "\n");
                sink.finished(p, row);
                continue;
            }
            if (opt.point_timeout_s > 0 && elapsed > opt.point_timeout_s && !it->second.timed_out) {
                it->second.timed_out = true;
                ::kill(it->first, SIGKILL);
            }
            ++it;
        }
        if (!reaped) {
            if (sink.tick) sink.tick();
            nap_ms(10);
        }
    }
}

}  // namespace npusim::study
