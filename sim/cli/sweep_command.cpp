// `npusim sweep STUDY.json --out DIR [-j N] [--resume]`: runs a what-if study
// (sim/study/), locally or as a Slurm job array.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <iostream>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/errors.hpp"
#include "compiler/compiler.hpp"
#include "compiler/graph_reader.hpp"
#include "config/run_config.hpp"
#include "onnx/onnx_import.hpp"
#include "study/child_process.hpp"
#include "study/points.hpp"
#include "study/study.hpp"
#include "study/sweep.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

namespace {

// A graph study's dimensions (workload.dims.NAME in "set" or an axis) must
// be the graph's: checked once, on the first point's values, before any
// point runs (each point would fail the same way).
void check_graph_dims(const std::string& study_file) {
    const study::Study s = study::load_study(study_file);
    const std::vector<study::Point> points = study::expand_points(s);
    if (points.empty()) return;
    const std::vector<std::string> sets = points.front().compile_set_args(s);
    if (std::none_of(sets.begin(), sets.end(), [](const std::string& a) { return a.rfind("workload.dims.", 0) == 0; })) return;
    std::optional<RunConfig> loaded;
    try {
        loaded.emplace(RunConfig::load(s.chips[points.front().chip].path, s.workloads[points.front().workload].path, sets));
    } catch (const InputError&) {
        return;  // a bad value of the first point: that point fails on its own, the others go on
    }
    const RunConfig& cfg = *loaded;
    if (cfg.kind() != WorkloadKind::graph) return;
    const GraphWorkload& g = cfg.workload().graph;
    if (g.dims.empty()) return;
    try {
        const std::string& file = cfg.workload().file;
        if (onnx_import::is_onnx_file_name(file)) onnx_import::import_model(file, compiler::graph_dims(g));
        else compiler::read_graph(file, compiler::graph_dims(g));
    } catch (const InputError& e) {
        throw InputError(study_file + ": the study's graph dimensions: " + e.what());
    }
}

}  // namespace

int sweep_command(const Args& args) {
    study::SweepOptions opt;
    unsigned jobs = 0;
    long array_task = -1;
    po::options_description opts("npusim sweep STUDY.json --out DIR [options]");
    opts.add_options()
        ("help,h", "show this help")
        ("out,o", po::value(&opt.out_dir), "sweep folder: results.jsonl, results.csv, study.json, points/ (required)")
        ("jobs,j", po::value(&jobs), "points run at the same time (default: one per CPU); with --backend slurm: "
                                     "the most array tasks running at once")
        ("resume", po::bool_switch(&opt.resume), "keep the finished points of DIR and run the rest (failed points run again)")
        ("backend", po::value(&opt.backend)->default_value("local"), "local: child processes here; slurm: one Slurm job array")
        ("report", po::bool_switch(&opt.report), "write DIR/report.html (self-contained: charts, table, utilisation)")
        ("timeout", po::value(&opt.point_timeout_s), "local backend: stop a point after this many seconds (it fails)")
        ("sbatch-arg", po::value(&opt.sbatch_args), "slurm: extra sbatch option, e.g. --sbatch-arg=--partition=big (repeatable)")
        ("slurm-template", po::value(&opt.slurm_template), "slurm: job script template (default: the built-in "
                                                           "tools/slurm/sweep_array.sbatch.in)")
        ("slurm-max-array", po::value(&opt.slurm_max_array)->default_value(1000), "slurm: at most this many array tasks; "
                                                                                  "each runs every N-th point");
    Positional pos{"study", {}};
    pos.hidden.add_options()
        ("study", po::value(&opt.study_file), "study file")
        ("array-task", po::value(&array_task), "internal: run the share of one Slurm array task");
    const auto vm = parse_options(args, opts, pos);
    if (!vm) return 0;

    if (array_task >= 0) {
        if (opt.out_dir.empty()) throw InputError("sweep --array-task needs --out DIR");
        return study::run_slurm_array_task(opt.out_dir, static_cast<std::size_t>(array_task), std::cout);
    }
    if (opt.study_file.empty()) throw InputError("sweep: missing the study file (npusim sweep STUDY.json --out DIR)");
    if (opt.out_dir.empty()) throw InputError("sweep: missing --out DIR (the folder the results go to)");
    if (vm->count("jobs") && jobs == 0) throw InputError("sweep: -j must be at least 1");
    opt.jobs_given = vm->count("jobs") != 0;
    opt.jobs = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
    opt.tty = ::isatty(::fileno(stdout)) != 0;
    opt.self = study::self_executable();
    check_graph_dims(opt.study_file);
    return study::run_sweep(opt, std::cout);
}

}  // namespace npusim::cli
