// The Slurm backend of `npusim sweep`: the pending points become one job
// array (tools/slurm/sweep_array.sbatch.in); each array task runs its share of
// the points and writes their result.json into the sweep folder; this process
// waits for the array (`sbatch --wait`) and collects results as they appear.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "study/child_process.hpp"
#include "study/slurm_template.hpp"
#include "study/sweep.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

const char* builtin_slurm_template() { return kSlurmTemplate; }

namespace {

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

// A result.json written by an array task, or nothing yet.
bool read_result(const PendingPoint& p, Row& row) {
    std::error_code ec;
    if (!fs::exists(p.files.result, ec)) return false;
    try {
        row = Row::from_json(ojson::parse(read_text_file(p.files.result)));
        return row.id == p.point.id;
    } catch (const std::exception&) {
        return false;  // renamed into place atomically, so this is not a half-written file
    }
}

}  // namespace

void run_slurm_backend(const std::vector<PendingPoint>& pending, const SweepOptions& opt, const Study& study,
                       SweepSink& sink, std::ostream& out) {
    if (pending.empty()) return;
    const std::string out_dir = fs::absolute(opt.out_dir).lexically_normal().string();
    const std::string sdir = out_dir + "/slurm";
    std::error_code ec;
    fs::create_directories(sdir + "/logs", ec);
    if (ec) throw InputError(sdir + ": cannot create folder: " + ec.message());

    const std::size_t tasks = std::min(pending.size(), std::max<std::size_t>(1, opt.slurm_max_array));
    ojson list;
    list["npusim"] = opt.self;
    list["metrics"] = study.metrics;
    list["tasks"] = tasks;
    list["points"] = ojson::array();
    for (const auto& p : pending) {
        prepare_point_folder(p);
        list["points"].push_back(
            {{"index", p.point.index}, {"id", p.point.id}, {"values", p.point.values}, {"argv", p.argv}});
    }
    write_file_atomically(sdir + "/tasks.json", list.dump(1) + "\n");

    std::string tmpl = builtin_slurm_template();
    if (!opt.slurm_template.empty()) {
        std::ifstream in(opt.slurm_template, std::ios::binary);
        if (!in) throw InputError(opt.slurm_template + ": cannot open Slurm template (--slurm-template)");
        tmpl = read_text_file(opt.slurm_template);
    }
    const std::string script_file = sdir + "/sweep.sbatch";
    write_file_atomically(script_file, replace_all(replace_all(tmpl, "{{NPUSIM}}", shell_quote(opt.self)),
                                                   "{{OUT_DIR}}", shell_quote(out_dir)));
    ::chmod(script_file.c_str(), 0755);

    const std::string job_name = fmt::format("npusim-{}-{}", study.name, ::getpid());
    std::vector<std::string> argv = {"sbatch", "--parsable", "--wait", "--job-name=" + job_name,
                                     fmt::format("--array=0-{}{}", tasks - 1,
                                                 opt.jobs_given ? fmt::format("%{}", opt.jobs) : std::string()),
                                     "--output=" + sdir + "/logs/%A_%a.out"};
    argv.insert(argv.end(), opt.sbatch_args.begin(), opt.sbatch_args.end());
    argv.push_back(script_file);
    const std::string sbatch_log = sdir + "/sbatch.log";
    out << fmt::format("slurm: submitting {} points as an array of {} tasks (job name {}); waiting for it\n",
                       pending.size(), tasks, job_name);
    out.flush();
    const pid_t pid = spawn_process(argv, sbatch_log);

    std::set<std::string> collected;
    auto collect = [&] {
        for (const auto& p : pending) {
            if (collected.count(p.point.id)) continue;
            Row row;
            if (!read_result(p, row)) continue;
            collected.insert(p.point.id);
            sink.finished(p, row);
        }
    };
    // `sbatch --wait` itself notices the end of the array late (it polls at
    // growing intervals: 2, 10, 42 s ...), so the sweep watches the result
    // files every 200 ms. Once every point has its result the array is done:
    // the tasks get up to 3 s to leave the queue (squeue, by the job id that
    // --parsable prints at submission) and sbatch is stopped rather than
    // waited for. While results are missing, sbatch's own end decides: on a
    // shared file system a result may show on this host only later.
    int status = 0;
    bool reaped = false;
    std::string job;  // id, once known
    const std::string squeue_log = sdir + "/squeue.log";
    auto job_gone = [&] {
        if (job.empty()) return false;
        int code = 0;
        try {
            code = run_process({"squeue", "--noheader", "--jobs=" + job, "--format=%i"}, squeue_log);
        } catch (const InputError&) {
            return false;
        }
        const std::string said = read_text_file(squeue_log);
        // Empty: no task left; "Invalid job id": already purged from the queue.
        if (code == 0) return said.find_first_not_of(" \r\n") == std::string::npos;
        return said.find("Invalid job id") != std::string::npos;
    };
    auto stop_sbatch = [&] {
        ::kill(pid, SIGTERM);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        reaped = true;
    };
    for (;;) {
        if (interrupted()) {
            // Cancel the array, or its tasks would go on writing results.
            try {
                run_process({"scancel", "--name=" + job_name}, sdir + "/scancel.log");
            } catch (const InputError&) {
            }
            ::kill(pid, SIGTERM);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            throw SweepInterrupted{};
        }
        collect();
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            reaped = true;
            break;
        }
        if (r < 0 && errno != EINTR) break;
        if (job.empty()) {
            const std::string first = read_text_file(sbatch_log);
            const auto end = first.find_first_of(";\n");
            if (end != std::string::npos && end > 0 && first.find_first_not_of("0123456789") == end) job = first.substr(0, end);
        }
        if (collected.size() == pending.size()) {
            // All results are in: give the tasks a moment to leave the
            // queue (their logs complete), then stop waiting.
            for (int i = 0; i < 15 && !job_gone(); ++i) nap_ms(200);
            stop_sbatch();
            status = 0;  // the array delivered every result; sbatch's own status is moot
            break;
        }
        if (sink.tick) sink.tick();
        nap_ms(200);
    }
    if (!reaped) {
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    collect();
    const int code = exit_code_of(status);
    const std::string said = last_line(read_text_file(sbatch_log));
    if (collected.empty() && code == 127)
        throw InputError("cannot run sbatch (" + said + "); install Slurm's client (slurm-client) or use --backend local");

    std::string job_id = said;
    const auto semi = job_id.find(';');
    if (semi != std::string::npos) job_id = job_id.substr(0, semi);
    for (std::size_t i = 0; i < pending.size(); ++i) {
        const PendingPoint& p = pending[i];
        if (collected.count(p.point.id)) continue;
        Row row;
        row.index = p.point.index;
        row.id = p.point.id;
        row.axes = p.point.values;
        for (const auto& m : study.metrics) row.metrics[m] = nullptr;
        row.status = "failed";
        row.exit_code = -1;
        row.error = fmt::format("no result from Slurm array task {} (sbatch exit {}: {}; task log {}/logs/{}_{}.out)",
                                i % tasks, code, said.empty() ? "no output" : said, sdir, job_id, i % tasks);
        sink.finished(p, row);
    }
}

int run_slurm_array_task(const std::string& out_dir, std::size_t task, std::ostream& out) {
    const std::string list_file = out_dir + "/slurm/tasks.json";
    const ojson list = read_json_object_file(list_file, "Slurm task list");
    std::size_t tasks = 0;
    std::vector<std::string> metrics;
    try {
        tasks = list.at("tasks").get<std::size_t>();
        metrics = list.at("metrics").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
        throw InputError(list_file + ": malformed task list: " + e.what());
    }
    if (tasks == 0 || task >= tasks)
        throw InputError(fmt::format("{}: array task {} out of range (the list has {} tasks)", list_file, task, tasks));
    int ran = 0;
    const auto& points = list.at("points");
    for (std::size_t i = task; i < points.size(); i += tasks) {
        PendingPoint p;
        p.point.index = points[i].at("index").get<std::size_t>();
        p.point.id = points[i].at("id").get<std::string>();
        p.point.values = points[i].at("values");
        p.argv = points[i].at("argv").get<std::vector<std::string>>();
        p.files = point_files(out_dir, p.point.id);
        prepare_point_folder(p);
        const auto t0 = std::chrono::steady_clock::now();
        const int code = run_process(p.argv, p.files.log);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const Row row = make_row(p.point, metrics, code, elapsed, p.files);
        write_file_atomically(p.files.result, row.to_json().dump() + "\n");
        out << fmt::format("point {} ({}): {}{}\n", p.point.index, p.point.id, row.status,
                           row.ok() ? "" : " - " + row.error);
        ++ran;
    }
    out << fmt::format("array task {}: {} points\n", task, ran);
    return 0;
}

}  // namespace npusim::study
