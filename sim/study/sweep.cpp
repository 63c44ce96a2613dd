#include "study/sweep.hpp"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/html_report.hpp"
#include "study/child_process.hpp"
#include "study/fixed_streams.hpp"
#include "study/folder_lock.hpp"
#include "study/progress.hpp"
#include "study/responses.hpp"

namespace npusim::study {

namespace fs = std::filesystem;

namespace {

// A stopped sweep's points leave the temporaries their runs were writing
// (stats.json.tmp.PID, trace.json.tmp.PID: docs/robustness.md "Output
// files"). Slurm array tasks of the stopped sweep may still be writing
// theirs: only a temporary whose process is gone from this host and that
// nothing wrote for 10 minutes is stale.
void remove_stale_temporaries(const std::string& dir) {
    static const std::regex temp(R"(.*\.tmp\.([0-9]+))");
    const auto now = fs::file_time_type::clock::now();
    std::error_code ec;
    std::vector<fs::path> stale;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::smatch m;
        const std::string name = it->path().filename().string();
        if (!it->is_regular_file(ec) || !std::regex_match(name, m, temp)) continue;
        const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
        const bool gone = pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
        const auto written = fs::last_write_time(it->path(), ec);
        if (gone && !ec && now - written > std::chrono::minutes(10)) stale.push_back(it->path());
    }
    for (const auto& p : stale) fs::remove(p, ec);
}

std::string now_text() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// DIR/sweep.log: one line per event, appended (never rewritten), so every
// attempt of every point stays on record.
class SweepLog {
public:
    explicit SweepLog(const std::string& file) : out_(file, std::ios::app | std::ios::binary) {}
    void line(const std::string& text) {
        out_ << now_text() << " " << text << "\n";
        out_.flush();
    }

private:
    std::ofstream out_;
};

std::string shape_text(const Study& s, std::size_t points) {
    if (!s.changes.empty() || s.chips.size() > 1 || s.workloads.size() > 1) {
        std::size_t values = 0;
        for (const auto& c : s.changes) values += c.values.size();
        std::string text = fmt::format("{} chip{} x {} workload{}", s.chips.size(), s.chips.size() == 1 ? "" : "s",
                                       s.workloads.size(), s.workloads.size() == 1 ? "" : "s");
        if (!s.axes.empty()) text += fmt::format(" x {} ax{}", s.axes.size(), s.axes.size() == 1 ? "is" : "es");
        if (!s.changes.empty())
            text += fmt::format(", each with its base and {} change{} in {} mode{}", values, values == 1 ? "" : "s",
                                s.modes.size(), s.modes.size() == 1 ? "" : "s");
        return text;
    }
    if (s.combine == Combine::zip) return fmt::format("zip of {} axes", s.axes.size());
    std::string dims;
    for (const auto& a : s.axes) dims += (dims.empty() ? "" : " x ") + std::to_string(a.values.size());
    return s.axes.size() == 1 ? fmt::format("{} values", points) : "grid " + dims;
}

// What --resume refuses on: the first of chip, workload, "set" and axis
// paths that differs from the folder's study.json ("" when none does).
std::string differing_field(const ojson& before, const Study& now) {
    const ojson after = now.to_json(0);
    for (const char* key : {"chip", "workload", "set", "chips", "workloads", "changes", "modes"})
        if (before.value(key, ojson()) != after.value(key, ojson()))
            return fmt::format("\"{}\" was {}, now {}", key, before.value(key, ojson()).dump(),
                               after.value(key, ojson()).dump());
    std::vector<std::string> was, is;
    for (const auto& a : before.value("axes", ojson::array())) was.push_back(a.value("path", std::string()));
    for (const auto& a : now.axes) is.push_back(a.path);
    if (was != is) return fmt::format("axis paths were [{}], now [{}]", fmt::join(was, ", "), fmt::join(is, ", "));
    return "";
}

// Finished points of an earlier run of the study with other metrics: each
// row is rebuilt from the point's stored statistics; a point without them
// runs again. A metric no statistics have is the study's mistake (exit 2).
std::size_t reread_metrics(std::map<std::string, Row>& done, const Study& study, const std::string& dir,
                           const std::map<std::string, const Point*>& by_id) {
    std::size_t count = 0;
    for (auto it = done.begin(); it != done.end();) {
        std::vector<std::string> had;
        for (auto m = it->second.metrics.begin(); m != it->second.metrics.end(); ++m) had.push_back(m.key());
        if (had == study.metrics) {
            ++it;
            continue;
        }
        const PointFiles f = point_files(dir, it->first);
        bool readable = true;
        try {
            read_stats(f.stats);
        } catch (const InputError&) {
            readable = false;
        }
        if (!readable) {  // missing or damaged: the point runs again
            it = done.erase(it);
            continue;
        }
        Row r = make_row(*by_id.at(it->first), study.metrics, 0, it->second.elapsed_s, f);
        for (const auto& m : study.metrics)
            if (r.metrics[m].is_null() && !outcome_dependent_metric(m))
                throw InputError(fmt::format("{}: \"metrics\": {}", study.file, r.error));
        it->second = r;
        ++count;
        ++it;
    }
    return count;
}

// Metric names, checked before any point runs against the statistics of
// the first point's run built but not simulated (npusim run
// --elaborate-only), with a did-you-mean. A run that cannot be built is the
// point's own failure, reported when it runs; metrics whose keys depend on
// what a run did are checked as points finish.
void check_metric_names(const Study& study, const Point& first, const std::string& self) {
    std::string tmp = (fs::temp_directory_path() / "npusim-metrics-XXXXXX").string();
    if (!::mkdtemp(tmp.data())) return;
    std::vector<std::string> argv = run_arguments(study.chips[first.chip].path, study.workloads[first.workload].path,
                                                  first.compile_set_args(study), tmp + "/stats.json");
    argv.insert(argv.begin(), self);
    argv.push_back("--elaborate-only");
    std::string error;
    if (run_process(argv, tmp + "/log.txt") == 0) {
        try {
            const nlohmann::json stats = read_stats(tmp + "/stats.json");
            for (const auto& m : study.metrics) {
                nlohmann::json v;
                std::string err;
                if (!lookup_metric(stats, m, v, err) && !outcome_dependent_metric(m)) {
                    error = err;
                    break;
                }
            }
        } catch (const InputError&) {
        }
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (!error.empty()) throw InputError(fmt::format("{}: \"metrics\": {}", study.file, error));
}

// The finished points of an earlier run of the sweep: rows of results.jsonl
// (`torn` lines unreadable, `dropped` rows of points no longer in the study)
// and result.json files array tasks wrote after the collecting sweep stopped
// (`adopted`).
void collect_finished(const ResultsStore& store, const std::vector<Point>& points, const std::string& dir,
                      const std::map<std::string, const Point*>& by_id, std::map<std::string, Row>& done,
                      std::size_t& torn, std::size_t& dropped, std::size_t& adopted) {
    for (Row& r : store.load(&torn)) {
        if (!by_id.count(r.id)) {
            ++dropped;
            continue;
        }
        r.index = by_id.at(r.id)->index;
        if (r.ok()) done[r.id] = r;
    }
    std::error_code ec;
    for (const auto& p : points) {
        if (done.count(p.id)) continue;
        const PointFiles f = point_files(dir, p.id);
        try {
            if (!fs::exists(f.result, ec)) continue;
            std::ifstream in(f.result, std::ios::binary);
            Row r = Row::from_json(ojson::parse(in));
            if (r.ok() && r.id == p.id) {
                r.index = p.index;
                done[p.id] = r;
                ++adopted;
            }
        } catch (const std::exception&) {
        }
    }
}

// DIR/responses.jsonl and its verdict: false when a miss is not one the
// study records, or a recorded one passed.
bool write_responses(const Study& study, const std::vector<Point>& points, const std::map<std::string, Row>& rows,
                     const std::string& dir, std::ostream& out) {
    std::vector<nlohmann::json> stats(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto it = rows.find(points[i].id);
        if (it == rows.end() || !it->second.ok()) continue;
        try {
            stats[i] = read_stats(point_files(dir, points[i].id).stats);
        } catch (const InputError&) {
        }
    }
    const ResponseCheck check = judge_responses(study, points, stats);
    std::string text;
    for (const auto& r : check.rows) text += r.dump() + "\n";
    write_file_atomically(dir + "/responses.jsonl", text);
    out << fmt::format("responses ({} rule, {} within {:g}): {}, {} misses, {} recorded in the study -> {}/responses.jsonl\n",
                       study.expect.rule, study.expect.metric, study.expect.tolerance, check.rows.size(), check.misses,
                       study.expect.known.size(), dir);
    for (const auto& p : check.problems) out << "  " << p << "\n";
    return check.problems.empty();
}

}  // namespace

int run_sweep(const SweepOptions& opt, std::ostream& out) {
    if (opt.backend != "local" && opt.backend != "slurm")
        throw InputError("--backend: expected 'local' or 'slurm', got '" + opt.backend + "'");
    const Study study = load_study(opt.study_file);
    const std::vector<Point> points = expand_points(study);
    if (!points.empty()) check_metric_names(study, points.front(), opt.self);

    // The folder.
    const std::string dir = opt.out_dir;
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError(dir + ": --out must be a folder");
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir + ": cannot create folder: " + ec.message());
    // Before anything in the folder is read or written: one sweep at a time.
    std::string lock_note;
    const FolderLock lock(dir, lock_note);
    const std::string study_json = dir + "/study.json";
    std::vector<std::string> axis_paths;  // the axes, and a response study's fields (first seen first)
    for (const auto& p : points)
        for (auto it = p.values.begin(); it != p.values.end(); ++it)
            if (std::find(axis_paths.begin(), axis_paths.end(), it.key()) == axis_paths.end()) axis_paths.push_back(it.key());
    const ResultsStore store(dir, axis_paths, study.metrics);
    const bool has_results = fs::exists(store.jsonl_path(), ec) && fs::file_size(store.jsonl_path(), ec) > 0;
    if (!opt.resume && (fs::exists(study_json, ec) || has_results))
        throw InputError(dir + ": already holds a sweep (study.json, results.jsonl); add --resume to continue it, "
                               "or choose another --out");
    if (opt.resume && fs::exists(study_json, ec)) {
        const std::string differs = differing_field(read_json_object_file(study_json, "sweep description"), study);
        if (!differs.empty())
            throw InputError(fmt::format("{}: --resume: this folder holds a sweep of a different study: {} in {}; "
                                         "use another --out (metrics may change: they are read again from each "
                                         "point's statistics)",
                                         study_json, differs, opt.study_file));
    }
    write_file_atomically(study_json, study.to_json(points.size()).dump(2) + "\n");
    SweepLog log(dir + "/sweep.log");

    // Finished points: rows of results.jsonl (--resume), and result.json files
    // that array tasks wrote after the collecting sweep was stopped.
    std::map<std::string, const Point*> by_id;
    for (const auto& p : points) by_id[p.id] = &p;
    std::map<std::string, Row> done;
    std::size_t torn = 0, dropped = 0, adopted = 0;
    if (opt.resume) {
        remove_stale_temporaries(dir);
        collect_finished(store, points, dir, by_id, done, torn, dropped, adopted);
    }
    const std::size_t remeasured = reread_metrics(done, study, dir, by_id);
    {
        std::vector<Row> keep;
        for (auto& [id, r] : done) keep.push_back(r);
        store.rewrite(keep);  // fresh files, or the finished rows without torn lines and failures
    }

    const std::string abs_dir = fs::absolute(dir).lexically_normal().string();
    std::vector<PendingPoint> pending;
    for (const auto& p : points) {
        if (done.count(p.id)) continue;
        PendingPoint pp;
        pp.point = p;
        pp.files = point_files(abs_dir, p.id);
        const std::string workload =
            p.mode == Mode::fixed ? fixed_stream_path(abs_dir, study, p) : study.workloads[p.workload].path;
        pp.argv = run_arguments(study.chips[p.chip].path, workload, p.set_args(study), pp.files.stats);
        pp.argv.insert(pp.argv.begin(), opt.self);
        pending.push_back(std::move(pp));
    }

    const unsigned jobs = opt.jobs;
    out << fmt::format("sweep {}: {} points ({}), {} metric{}", study.name, points.size(), shape_text(study, points.size()),
                       study.metrics.size(), study.metrics.size() == 1 ? "" : "s");
    if (opt.resume)
        out << fmt::format("; resumed: {} finished point{} skipped{}", done.size(), done.size() == 1 ? "" : "s",
                           adopted ? fmt::format(" ({} collected from result.json)", adopted) : std::string());
    out << fmt::format("; running {}", pending.size());
    if (opt.backend == "local") out << fmt::format(" with -j {}", jobs);
    else out << " on Slurm";
    out << fmt::format(" -> {}\n", dir);
    if (!lock_note.empty()) out << "  (" << lock_note << ")\n";
    if (torn) out << fmt::format("  (ignored {} unreadable line{} of results.jsonl, e.g. torn by a kill)\n", torn, torn == 1 ? "" : "s");
    if (dropped) out << fmt::format("  (dropped {} row{} of points no longer in the study)\n", dropped, dropped == 1 ? "" : "s");
    if (remeasured)
        out << fmt::format("  (metrics of {} finished point{} read again from their statistics)\n", remeasured,
                           remeasured == 1 ? "" : "s");
    out.flush();
    log.line(fmt::format("sweep {} points={} pending={} resumed={} backend={}", study.name, points.size(), pending.size(),
                         done.size(), opt.backend));

    install_interrupt_handlers();
    if (study.has_fixed()) {
        std::vector<Point> to_run;
        for (const auto& p : pending) to_run.push_back(p.point);
        out << "compiling the base points' streams for the fixed runs ...\n";
        out.flush();
        compile_fixed_streams(study, to_run, abs_dir, opt.self, opt.jobs);
        if (interrupted()) {
            out << "sweep interrupted while compiling the fixed streams; rerun with --resume to continue\n";
            return 130;
        }
    }
    Progress progress(out, points.size(), done.size(), opt.tty);
    SweepSink sink;
    sink.started = [&](const PendingPoint& p) {
        log.line("start " + p.point.id + " " + p.point.label());
        progress.started();
    };
    sink.finished = [&](const PendingPoint& p, const Row& row) {
        store.append(row);
        log.line((row.ok() ? "ok " : "failed ") + p.point.id + fmt::format(" {:.3f}s", row.elapsed_s) +
                 (row.ok() ? "" : " " + row.error));
        progress.finished(row, p.point.label());
    };
    sink.tick = [&] { progress.tick(); };

    bool stopped = false;
    try {
        if (opt.backend == "local") run_local_backend(pending, opt, study.metrics, sink);
        else run_slurm_backend(pending, opt, study, sink, out);
    } catch (const SweepInterrupted&) {
        stopped = true;
    }
    progress.close();

    // Final tables sorted by point index (rows were appended as they finished).
    std::map<std::string, Row> last;
    for (Row& r : store.load()) {
        if (!by_id.count(r.id)) continue;
        r.index = by_id[r.id]->index;
        last[r.id] = r;
    }
    std::vector<Row> rows;
    for (auto& [id, r] : last) rows.push_back(r);
    store.rewrite(rows);
    std::size_t ok = 0, failed = 0;
    for (const auto& r : rows) (r.ok() ? ok : failed)++;
    const std::size_t missing = points.size() - rows.size();

    auto report = [&] {
        if (!opt.report) return;
        const std::string html = dir + "/report.html";
        report::write_sweep_report(html, dir);
        out << "  report -> " << html << "\n";
    };
    if (stopped) {
        report();
        log.line("interrupted");
        out << fmt::format("sweep interrupted: {} of {} points finished; rerun with --resume to continue\n", ok,
                           points.size());
        return 130;
    }
    out << fmt::format("sweep {}: {} points, {} ok, {} failed{} -> {}/results.csv\n", study.name, points.size(), ok, failed,
                       missing ? fmt::format(", {} not run", missing) : std::string(), dir);
    log.line(fmt::format("done ok={} failed={}", ok, failed));
    const bool responses_ok = study.expect.rule.empty() || write_responses(study, points, last, dir, out);
    report();  // after the responses: the page shows their verdicts
    return failed || missing || !responses_ok ? 1 : 0;
}

}  // namespace npusim::study
