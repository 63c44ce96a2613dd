// `npusim check GOLDEN_DIR_OR_FILE [--set PATH=VALUE]... [--update]
// [--junit OUT.xml] [--json OUT.json]`: cycle count regression against stored
// goldens (sim/study/golden.hpp). Every golden runs as one `npusim run` child
// process; the table shows metric, expected, actual and delta. Exit 1 when
// any metric is out of tolerance or a run fails (a deadlock, a crash); exit 2
// when a golden is broken: unreadable, naming a metric the statistics do not
// have, or describing a run that is itself bad input.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/check_outcome.hpp"
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

struct CheckTempFolder {
    std::string path;
    CheckTempFolder() {
        std::string tmpl = (fs::temp_directory_path() / "npusim-check-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a temporary folder for the check");
        path = tmpl;
    }
    ~CheckTempFolder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

int check_command(const Args& args) {
    std::string target, junit_file, json_file;
    std::vector<std::string> sets;
    bool update = false;
    unsigned jobs = 0;
    po::options_description opts("npusim check GOLDEN_DIR_OR_FILE [options]");
    opts.add_options()
        ("help,h", "show this help")
        ("set", po::value(&sets), "apply PATH=VALUE to every golden's run (repeatable), e.g. to confirm a hardware "
                                  "change fails the check")
        ("update", po::bool_switch(&update), "rewrite the goldens' expected values with what the runs give now")
        ("jobs,j", po::value(&jobs), "goldens run at the same time (default: one per CPU)")
        ("junit", po::value(&junit_file), "also write a JUnit XML report here (one testcase per golden)")
        ("json", po::value(&json_file), "also write the results as JSON here");
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

    CheckTempFolder tmp;
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
    std::vector<GoldenOutcome> outcomes;
    std::size_t updated = 0;
    bool run_failed = false;  // a deadlock or crash: not a change to accept with --update
    for (std::size_t i = 0; i < goldens.size(); ++i) {
        const auto& g = goldens[i];
        const study::Row& row = results[i];
        std::string set_text;
        for (auto it = g.set.begin(); it != g.set.end(); ++it) set_text += " " + study::set_arg(it.key(), it.value());
        GoldenOutcome o;
        o.name = g.name;
        o.file = g.file;
        o.run = fmt::format("{} on {}{}", fs::path(g.workload).filename().string(), fs::path(g.chip).stem().string(),
                            set_text.empty() ? "" : ", set" + set_text);
        std::cout << fmt::format("\n{}: {}\n", g.file, o.run);
        if (row.exit_code == 2) {
            // The run rejected its own input: the golden describes a bad run.
            o.status = GoldenOutcome::Status::error;
            o.message = g.file + ": the golden's run is bad input: " + row.error;
            std::cout << fmt::format("  ERROR {}\n", o.message);
            outcomes.push_back(std::move(o));
            continue;
        }
        if (row.exit_code != 0) {
            o.status = GoldenOutcome::Status::fail;
            o.message = "the run failed: " + row.error;
            run_failed = true;
            std::cout << fmt::format("  FAIL  {}\n", o.message);
            outcomes.push_back(std::move(o));
            continue;
        }
        nlohmann::json stats;
        try {
            stats = study::read_stats(runs[i].files.stats);
        } catch (const InputError& e) {
            o.status = GoldenOutcome::Status::fail;
            o.message = e.what();
            run_failed = true;
            std::cout << fmt::format("  FAIL  {}\n", e.what());
            outcomes.push_back(std::move(o));
            continue;
        }
        std::size_t w = 6;
        for (const auto& m : g.metrics) {
            o.metrics.push_back(study::compare_metric(m, stats));
            w = std::max(w, m.path.size());
        }
        std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>20}  {:>10}  {}\n", "metric", w, "expected", "actual", "delta",
                                 "tolerance", "result");
        bool all_pass = true;
        std::vector<std::string> unknown;
        for (const auto& c : o.metrics) {
            std::string result;
            if (c.unknown) result = "ERROR " + c.problem;
            else if (update) result = c.actual.is_null() ? "FAIL " + c.problem : "updated";
            else if (!c.problem.empty()) result = "FAIL " + c.problem;
            else result = c.pass ? "ok" : "FAIL";
            if (c.unknown) unknown.push_back(fmt::format("\"metrics\".\"{}\": {}", c.metric, c.problem));
            if (result != "ok" && result != "updated") all_pass = false;
            std::cout << fmt::format("  {:<{}}  {:>16}  {:>16}  {:>20}  {:>10}  {}\n", c.metric, w, value_text(c.expected),
                                     value_text(c.actual), delta_text(c), c.numeric ? number_text(c.allowed) : "-", result);
        }
        if (!unknown.empty()) {
            o.status = GoldenOutcome::Status::error;
            o.message = fmt::format("{}: {}", g.file, fmt::join(unknown, "; "));
            std::cout << fmt::format("  -> broken golden: {} unknown metric{}\n", unknown.size(), unknown.size() == 1 ? "" : "s");
        } else if (update && all_pass) {
            study::update_golden(g, stats);
            ++updated;
            std::cout << "  -> rewritten\n";
        } else if (!all_pass) {
            o.status = GoldenOutcome::Status::fail;
            std::size_t bad = 0;
            for (const auto& c : o.metrics) bad += !c.pass;
            std::cout << fmt::format("  -> {} of {} metrics out of tolerance\n", bad, o.metrics.size());
        }
        outcomes.push_back(std::move(o));
    }
    if (!junit_file.empty()) write_check_junit(junit_file, outcomes, sets);
    if (!json_file.empty()) write_check_json(json_file, target, outcomes, sets);

    std::vector<std::string> failed_names, broken;
    for (const auto& o : outcomes) {
        if (o.status == GoldenOutcome::Status::fail) failed_names.push_back(o.name);
        if (o.status == GoldenOutcome::Status::error) broken.push_back(o.name);
    }
    std::cout << "\n";
    if (update) {
        std::vector<std::string> not_rewritten = failed_names;
        not_rewritten.insert(not_rewritten.end(), broken.begin(), broken.end());
        std::cout << fmt::format("check --update: {} of {} golden{} rewritten{}\n", updated, goldens.size(),
                                 goldens.size() == 1 ? "" : "s",
                                 not_rewritten.empty() ? "" : fmt::format("; not rewritten: {}", fmt::join(not_rewritten, ", ")));
    } else if (failed_names.empty() && broken.empty()) {
        std::cout << fmt::format("check: all {} golden{} passed\n", goldens.size(), goldens.size() == 1 ? "" : "s");
        return 0;
    } else if (!failed_names.empty()) {
        std::cout << fmt::format("check: {} of {} golden{} FAILED: {}\n", failed_names.size(), goldens.size(),
                                 goldens.size() == 1 ? "" : "s", fmt::join(failed_names, ", "));
        // --update accepts a change of the model; not a --set what-if, a
        // deadlock or a crash, nor a broken golden.
        if (sets.empty() && !run_failed && broken.empty())
            std::cout << fmt::format("  (if the change is intended, accept it with: npusim check {} --update)\n", target);
    }
    if (!broken.empty()) {
        // One line on stderr per broken golden, as for any bad input.
        for (const auto& o : outcomes)
            if (o.status == GoldenOutcome::Status::error) std::cerr << "npusim: error: " << o.message << "\n";
        return 2;
    }
    return failed_names.empty() ? 0 : 1;
}

}  // namespace npusim::cli
