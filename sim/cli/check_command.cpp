// `npusim check GOLDEN_DIR_OR_FILE [--set PATH=VALUE]... [--update]`: cycle
// count regression against stored goldens (sim/study/golden.hpp). Every
// golden runs as one `npusim run` child process; the table shows metric,
// expected, actual and delta. Exit 1 when any metric is out of tolerance or a
// run fails.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "study/child_process.hpp"
#include "study/golden.hpp"
#include "study/sweep.hpp"

namespace npusim::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using study::ojson;

namespace {

std::string value_text(const ojson& v) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.0f}", d);
        return fmt::format("{:.9g}", d);
    }
    return v.dump();
}

std::string number_text(double d) {
    if (d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.0f}", d);
    return fmt::format("{:.3g}", d);
}

std::string delta_text(const study::Comparison& c) {
    if (!c.numeric) return c.actual.is_null() || c.expected.is_null() ? "-" : (c.pass ? "same" : "differs");
    std::string t = c.delta == 0 ? "0" : (c.delta > 0 ? "+" : "") + number_text(c.delta);
    const double e = c.expected.get<double>();
    if (c.delta != 0 && e != 0) t += fmt::format(" ({:+.2f}%)", 100.0 * c.delta / std::fabs(e));
    return t;
}

struct TempFolder {
    std::string path;
    TempFolder() {
        std::string tmpl = (fs::temp_directory_path() / "npusim-check-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a temporary folder for the check");
        path = tmpl;
    }
    ~TempFolder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

int check_command(const Args& args) {
    std::string target;
    std::vector<std::string> sets;
    bool update = false;
    unsigned jobs = 0;
    po::options_description opts("npusim check GOLDEN_DIR_OR_FILE [options]");
    opts.add_options()
        ("help,h", "show this help")
        ("set", po::value(&sets), "apply PATH=VALUE to every golden's run (repeatable), e.g. to confirm a hardware "
                                  "change fails the check")
        ("update", po::bool_switch(&update), "rewrite the goldens' expected values with what the runs give now")
        ("jobs,j", po::value(&jobs), "goldens run at the same time (default: one per CPU)");
    Positional pos{"goldens", {}};
    pos.hidden.add_options()("goldens", po::value(&target), "golden file or folder");
    if (!parse_options(args, opts, pos)) return 0;
    if (target.empty()) throw InputError("check: missing the golden file or folder (npusim check traces/golden)");
    if (update && !sets.empty())
        throw InputError("check: --update with --set would store values the goldens' own settings do not give; "
                         "put the change into a golden's \"set\" instead");

    std::vector<study::Golden> goldens;
    for (const auto& f : study::golden_files(target)) goldens.push_back(study::load_golden(f));
    // Bad overrides are bad input (exit 2), found before anything runs.
    for (const auto& g : goldens) {
        std::vector<std::string> s = g.set_args();
        s.insert(s.end(), sets.begin(), sets.end());
        try {
            RunConfig::load(g.chip_path, g.workload_path, s);
        } catch (const InputError& e) {
            throw InputError(g.file + ": " + e.what());
        }
    }

    TempFolder tmp;
    std::vector<study::PendingPoint> runs;
    std::vector<std::string> metrics_unused;
    for (std::size_t i = 0; i < goldens.size(); ++i) {
        const auto& g = goldens[i];
        study::PendingPoint p;
        p.point.index = i;
        p.point.id = fmt::format("g{:03}", i);
        p.files = study::point_files(tmp.path, p.point.id);
        std::vector<std::string> s = g.set_args();
        s.insert(s.end(), sets.begin(), sets.end());
        p.argv = study::run_arguments(g.chip_path, g.workload_path, s, p.files.stats);
        p.argv.insert(p.argv.begin(), study::self_executable());
        runs.push_back(std::move(p));
    }
    std::map<std::size_t, study::Row> results;
    study::SweepSink sink;
    sink.finished = [&](const study::PendingPoint& p, const study::Row& row) { results[p.point.index] = row; };
    study::SweepOptions opt;
    opt.jobs = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
    study::install_interrupt_handlers();
    try {
        study::run_local_backend(runs, opt, metrics_unused, sink);
    } catch (const study::SweepInterrupted&) {
        std::cout << "check interrupted\n";
        return 130;
    }

    std::cout << fmt::format("check: {} golden{} from {}{}\n", goldens.size(), goldens.size() == 1 ? "" : "s", target,
                             update ? " (--update: rewriting expected values)" : "");
    for (const auto& s : sets) std::cout << "  with --set " << s << " on every run\n";
    std::vector<std::string> failed_names;
    std::size_t updated = 0;
    for (std::size_t i = 0; i < goldens.size(); ++i) {
        const auto& g = goldens[i];
        const study::Row& row = results[i];
        std::string set_text;
        for (auto it = g.set.begin(); it != g.set.end(); ++it) set_text += " " + study::set_arg(it.key(), it.value());
        std::cout << fmt::format("\n{}: {} on {}{}\n", g.file, fs::path(g.workload).filename().string(),
                                 fs::path(g.chip).stem().string(), set_text.empty() ? "" : ", set" + set_text);
        if (row.exit_code != 0) {
            std::cout << fmt::format("  FAIL  the run failed: {}\n", row.error);
            failed_names.push_back(g.name);
            continue;
        }
        nlohmann::json stats;
        try {
            stats = study::read_stats(runs[i].files.stats);
        } catch (const InputError& e) {
            std::cout << fmt::format("  FAIL  {}\n", e.what());
            failed_names.push_back(g.name);
            continue;
        }
        std::vector<study::Comparison> cmp;
        std::size_t w = 6;
        for (const auto& m : g.metrics) {
            cmp.push_back(study::compare_metric(m, stats));
            w = std::max(w, m.path.size());
        }
        std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>20}  {:>10}  {}\n", "metric", w, "expected", "actual", "delta",
                                 "tolerance", "result");
        bool all_pass = true;
        for (const auto& c : cmp) {
            std::string result;
            if (update) result = c.actual.is_null() ? "FAIL " + c.problem : "updated";
            else if (!c.problem.empty()) result = "FAIL " + c.problem;
            else result = c.pass ? "ok" : "FAIL";
            if (result != "ok" && result != "updated") all_pass = false;
            std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>20}  {:>10}  {}\n", c.metric, w, value_text(c.expected),
                                     value_text(c.actual), delta_text(c), c.numeric ? number_text(c.allowed) : "-", result);
        }
        if (update && all_pass) {
            study::update_golden(g, stats);
            ++updated;
            std::cout << "  -> rewritten\n";
        }
        if (!all_pass) {
            failed_names.push_back(g.name);
            std::size_t bad = 0;
            for (const auto& c : cmp) bad += !c.pass;
            std::cout << fmt::format("  -> {} of {} metrics out of tolerance\n", bad, cmp.size());
        }
    }

    std::cout << "\n";
    if (update) {
        std::cout << fmt::format("check --update: {} of {} golden{} rewritten{}\n", updated, goldens.size(),
                                 goldens.size() == 1 ? "" : "s",
                                 failed_names.empty() ? "" : fmt::format("; not rewritten: {}", fmt::join(failed_names, ", ")));
        return failed_names.empty() ? 0 : 1;
    }
    if (failed_names.empty()) {
        std::cout << fmt::format("check: all {} golden{} passed\n", goldens.size(), goldens.size() == 1 ? "" : "s");
        return 0;
    }
    std::cout << fmt::format("check: {} of {} golden{} FAILED: {}\n"
                             "  (if the change is intended, accept it with: npusim check {} --update)\n",
                             failed_names.size(), goldens.size(), goldens.size() == 1 ? "" : "s",
                             fmt::join(failed_names, ", "), target);
    return 1;
}

}  // namespace npusim::cli
