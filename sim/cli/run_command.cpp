// `npusim run`: resolve the configuration, load the workload, simulate one
// die, write stats and trace, print a short human summary.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/die_timer.hpp"
#include "cli/commands.hpp"
#include "cli/what_would_help.hpp"
#include "cli/critical_ranks.hpp"
#include "cli/llm_run.hpp"
#include "cli/parse_options.hpp"
#include "cli/report_trace.hpp"
#include "cli/run_summary.hpp"
#include "cli/system_run.hpp"
#include "collective/collective_plan.hpp"
#include "collective/collective_report.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "common/output_file.hpp"
#include "common/phase.hpp"
#include "common/version.hpp"
#include "compiler/compiler.hpp"
#include "compiler/spmd.hpp"
#include "config/run_config.hpp"
#include "host/host_model.hpp"
#include "hw/die.hpp"
#include "report/html_report.hpp"
#include "stats/stats.hpp"
#include "system/run_progress.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_fit.hpp"
#include "tasks/stream_reader.hpp"
#include "trace/trace_filter.hpp"
#include "trace/trace_writer.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

namespace {

int run_once(const Args& args, const std::function<void()>& after_run = {}) {
    std::string chip_file, workload_file, stats_file, trace_file, report_file;
    std::string profile_file;  // kind moe: per-core phase profile
    std::string trace_ranks;   // cross-rank runs: which ranks the trace keeps
    std::string trace_window, trace_ops, trace_cores;
    std::vector<std::string> sets;
    bool quiet = false, trace_tasks_only = false, fail_on_stale = false, elaborate_only = false;
    int threads = 0;
    std::string lookahead = "posts";
    po::options_description opts("npusim run options");
    opts.add_options()("help,h", "show this help")("chip", po::value(&chip_file)->required(), "chip file (JSON)")(
        "workload", po::value(&workload_file)->required(),
        "workload: a task stream (.jsonl), a model graph (.json) or an ONNX model (.onnx)")(
        "set", po::value(&sets), "override PATH=VALUE in the run document (repeatable)")(
        "stats", po::value(&stats_file), "write statistics JSON here")("trace", po::value(&trace_file),
                                                                       "write a Perfetto-loadable trace here")(
        "profile", po::value(&profile_file),
        "kernel programs (Dispatch, Combine): per-core phase timestamps (CSV, one row per rank/core)")(
        "trace-tasks-only", po::bool_switch(&trace_tasks_only), "trace tasks but not per-tile pipe activity")(
        "trace-ranks", po::value(&trace_ranks),
        "runs on several ranks: the ranks whose dies go into the trace, e.g. 0,3,8-15, or 'critical': those the "
        "critical path runs on (found by a first run without trace; default: the first 8)")(
        "trace-window", po::value(&trace_window),
        "trace only T0:T1, in microseconds of simulated time (e.g. 100:250, :50, 400:)")(
        "trace-ops", po::value(&trace_ops),
        "on the cores' tracks, trace only these ops (comma-separated shell globs, e.g. 'layer1.*,fc')")(
        "trace-cores", po::value(&trace_cores),
        "trace only these cores' tracks (e.g. cube0,vector3); other tracks stay")(
        "report", po::value(&report_file), "write a self-contained HTML report here (summary, utilisation, timeline)")(
        "threads", po::value(&threads),
        "runs on several ranks: the dies run on 1 or 2 threads (default 2 on a machine with two cores; a traced run uses "
        "1); the results are the same")(
        "lookahead", po::value(&lookahead),
        "runs on several ranks: how far the dies run ahead of each other, 'posts' (default: up to where one may "
        "post a write to another) or 'cell' (half a link latency at a time); the results are the same")(
        "quiet,q", po::bool_switch(&quiet), "no summary on stdout")(
        "elaborate-only", po::bool_switch(&elaborate_only),
        "build the run (compile, dies, mesh) but do not simulate: --stats then holds the keys a run has, with "
        "unsimulated values (npusim sweep checks a study's metric names with it)")(
        "what-would-help",
        "after the run, re-run it once per resource (HBM, L2, GM ports, L1->L0, FixPipe, core counts, "
        "dispatch, mesh planes) at twice its capacity: what each saves, of the run and of each op, and "
        "so what binds (stats: what_would_help.*, ops[].bound_resource)")(
        "fail-on-stale", po::bool_switch(&fail_on_stale),
        "runs on several ranks: exit 1 when any read on the mesh saw stale data (memory_model.stale_reads > 0)");
    if (!parse_options(args, opts)) return 0;
    if (threads != 0 && threads != 1 && threads != 2) throw InputError(fmt::format("--threads {}: expected 1 or 2", threads));
    if (lookahead != "posts" && lookahead != "cell")
        throw InputError(fmt::format("--lookahead {}: expected posts or cell{}", lookahead,
                                     did_you_mean(lookahead, {"posts", "cell"})));
    if (trace_ranks == "critical")  // an abbreviated option name: resolve_critical_ranks looks for it in full
        throw InputError("--trace-ranks critical: write the option name in full");

    const RunConfig cfg = RunConfig::load(chip_file, workload_file, sets);
    for (const auto& w : cfg.warnings()) std::cerr << "npusim: warning: " << w << "\n";
    TraceFilter filter;
    if (!trace_window.empty()) parse_trace_window(trace_window, filter);
    if (!trace_ops.empty()) filter.ops = parse_trace_list(trace_ops, "--trace-ops");
    if (!trace_cores.empty()) filter.cores = parse_trace_list(trace_cores, "--trace-cores");
    check_trace_cores(filter.cores, cfg.chip().cube.count, cfg.chip().vector.count);
    if (elaborate_only && (!trace_file.empty() || !report_file.empty() || !profile_file.empty()))
        throw InputError("--elaborate-only: nothing is simulated, so there is no --trace, --report or --profile to write");
    if (elaborate_only) quiet = true;
    if (filter.active() && trace_file.empty() && report_file.empty())
        throw InputError(filter.options() + ": filters a trace; give --trace FILE (or --report)");
    if ((!trace_ranks.empty() || trace_tasks_only) && trace_file.empty() && report_file.empty())
        throw InputError(std::string(trace_ranks.empty() ? "--trace-tasks-only" : "--trace-ranks") +
                         ": chooses what a trace holds; give --trace FILE (or --report)");
    if (!profile_file.empty()) {
        std::error_code ec;
        const auto dir = std::filesystem::path(profile_file).parent_path();
        if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    }
    // Output folders are created on demand (`--stats out/run1/stats.json`).
    for (const std::string& f : {stats_file, trace_file, report_file}) {
        const auto dir = std::filesystem::path(f).parent_path();
        std::error_code ec;
        if (!f.empty() && !dir.empty()) std::filesystem::create_directories(dir, ec);
    }
    const ChipParams& chip = cfg.chip();
    // The compiler's plan searches run candidates on this chip's die model.
    use_die_timer();
    // A graph is compiled on the fly; a stream is read as it is (the
    // resolved path: relative to a .json workload file, or as --set it).
    const WorkloadParams& workload = cfg.workload();
    std::optional<Phase> phase(std::in_place, "reading " + workload_file);
    std::optional<compiler::CompileResult> compiled;
    // A run of a System of dies (every rank a die) takes these.
    SystemRunOptions sys{workload_file,
                         stats_file,
                         trace_file,
                         profile_file,
                         trace_ranks,
                         quiet,
                         trace_tasks_only,
                         fail_on_stale,
                         {},
                         {},
                         report_file,
                         sets,
                         threads,
                         filter,
                         elaborate_only,
                         after_run,
                         lookahead == "cell"};
    if (cfg.kind() == WorkloadKind::llm) {
        phase.reset();
        return run_llm(cfg, sys);
    }
    if (cfg.kind() == WorkloadKind::graph) phase.emplace("compiling " + workload_file);
    // On a supernode every rank runs the graph (SPMD): one plan per distinct rank program.
    if (cfg.kind() == WorkloadKind::graph && compiler::runs_on_ranks(chip)) {
        if (workload.graph.host_mode != HostMode::off)
            throw InputError("workload.host_mode: the host runtime drives one die; on a chip with ranks "
                             "(chip.interconnect.ranks = " + std::to_string(chip.interconnect.ranks) + ") use host_mode off");
        const compiler::SpmdCompile spmd = compiler::compile_spmd_workload(workload, chip);
        print_warnings(spmd);
        for (const auto& ts : spmd.streams) check_stream_fits_chip(*ts, chip);
        phase.emplace("simulating " + workload_file);
        SystemRunOptions opt = sys;
        opt.workload_stats = [&](Stats& s) {
            spmd.plans.front().report(s);
            s.set("compile.rank_programs", static_cast<std::uint64_t>(spmd.plans.size()));
            return fmt::format("compiled {}: {} distinct rank program(s) over {} ranks; rank 0: {} kernels -> {} tasks\n",
                               workload_file, spmd.plans.size(), chip.interconnect.ranks, spmd.plans.front().kernels,
                               spmd.plans.front().tasks);
        };
        return run_system(cfg, spmd.streams, opt);
    }
    if (cfg.kind() == WorkloadKind::graph) {
        compiled = compiler::compile_workload(workload, chip);
        for (const auto& w : compiled->warnings) std::cerr << "npusim: warning: " << w << "\n";
    }
    // Host runtime (docs/design.md §1.2): with workload.host_mode, kernels wait for the modelled host to launch them.
    std::unique_ptr<host::HostModel> host = compiled ? host::HostModel::create(workload.graph, chip, *compiled) : nullptr;
    // A collective is generated into a cross-rank stream (sim/collective).
    std::optional<collective::CollectivePlan> plan;
    if (cfg.kind() == WorkloadKind::collective) try {
            plan = collective::plan_collective(workload.collective, chip);
        } catch (const InputError& e) {
            throw InputError(workload_file + ": " + e.what());  // the file that asked for it
        }
    const TaskStream stream = host       ? host->take_stream()
                              : compiled ? std::move(compiled->stream)
                              : plan     ? collective::collective_stream(*plan, workload_file)
                                         : read_task_stream(workload.file);
    check_stream_fits_chip(stream, chip);
    // Tasks on several ranks, or kernel programs: a System of whole dies
    // joined by the mesh.
    if (stream.cross_rank || !stream.programs.empty()) {
        phase.emplace("simulating " + workload_file);
        SystemRunOptions opt = sys;
        if (plan)
            opt.workload_stats = [&](Stats& s) {
                collective::report_collective(*plan, chip, s.number("total_ns"), s);
                return collective::collective_summary(*plan, chip, s.number("total_ns"));
            };
        return run_system(cfg, stream, opt);
    }
    if (!trace_ranks.empty()) throw InputError("--trace-ranks: only a cross-rank stream (tasks with a rank) runs on several ranks");
    if (fail_on_stale) throw InputError("--fail-on-stale: only a run on several ranks checks its reads on the mesh");
    if (!profile_file.empty()) throw InputError("--profile: only kernel programs (Dispatch, Combine) stamp per-core phases");
    check_memory_budget(fmt::format("{}: simulating {} tasks", workload_file, stream.tasks.size()),
                        static_cast<std::uint64_t>(stream.tasks.size()) * kStreamBytesPerTask,
                        "use a smaller workload (a lower --set workload.batch=N for a graph)");
    phase.emplace("simulating " + workload_file);
    // A compiled graph is placed for this chip; a stream file may not be.
    if (!compiled)
        for (const auto& w : stream_fit_warnings(stream, chip)) std::cerr << "npusim: warning: " << w << "\n";

    // The report's timeline reads the trace: without --trace, a temporary one.
    const ReportTrace report_trace(trace_file, !report_file.empty());
    const std::string& trace_path = report_trace.path();
    std::unique_ptr<TraceWriter> trace =
        trace_path.empty() ? std::make_unique<TraceWriter>() : std::make_unique<TraceWriter>(trace_path);
    trace->set_filter(filter);
    Die die("die0", chip, stream, trace.get(), !trace_tasks_only);
    if (host) host->attach(die, trace.get());
    if (!elaborate_only) {
        die.run();
        if (host) host->finish();
    }

    phase.emplace("writing the results");
    Stats stats;
    die.collect(stats);
    stats.set_json("config", cfg.dump());
    stats.set("version", version());
    if (compiled) compiled->report(stats);
    if (host) host->collect(stats);
    die.trace_critical_path();
    if (!stats_file.empty()) {
        write_output_file(stats_file, stats.to_json());
    }
    trace->close(fmt::format(R"({{"chip":"{}","workload":"{}","total_ns":{},"version":"{}"}})", json_escape(chip.name),
                             json_escape(workload_file), stats.number("total_ns"), json_escape(version())));
    warn_if_selected_nothing(*trace, filter);
    if (!quiet) {
        if (compiled)
            std::cout << fmt::format("compiled {}: {} kernels -> {} tasks, {} events, {} FormatConvert tasks\n",
                                     workload_file, compiled->kernels, stats.number("compile.tasks"), compiled->events,
                                     compiled->format_converts);
        std::cout << run_summary(stats, chip, stats_file, trace->selected_nothing() ? std::string() : trace_file);
        if (host) std::cout << host->summary(stats);
    }
    finish_run(after_run, stats_file, stats.to_json(), report_file, trace->selected_nothing() ? std::string() : trace_path,
               workload_file, sets, quiet);
    return 0;
}

}  // namespace

int run_command(const Args& args) {
    RunProgress::interval_from_environment();  // a typo is exit 2 now, not after a long compile
    // --what-would-help: the run as asked (its stats to a file of its own
    // when none was asked for), then the re-runs (cli/what_would_help.cpp).
    Args rest;
    bool help = false, quiet = false;
    std::string stats;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--what-would-help") {
            help = true;
            continue;
        }
        if (args[i] == "-q" || args[i] == "--quiet") quiet = true;
        if (args[i] == "--stats" && i + 1 < args.size()) stats = args[i + 1];
        if (args[i].rfind("--stats=", 0) == 0) stats = args[i].substr(8);
        rest.push_back(args[i]);
    }
    if (const std::optional<int> failed = resolve_critical_ranks(rest)) return *failed;
    if (!help) return run_once(rest);
    if (std::find(rest.begin(), rest.end(), "--elaborate-only") != rest.end())
        throw InputError("--what-would-help: re-runs the simulation; it cannot go with --elaborate-only");
    std::string own_dir;  // no --stats: the run's go to a folder of its own
    if (stats.empty()) {
        own_dir = (std::filesystem::temp_directory_path() / "npusim-run-XXXXXX").string();
        if (!::mkdtemp(own_dir.data())) throw InputError("--what-would-help: cannot make a temporary folder");
        stats = own_dir + "/stats.json";
        rest.insert(rest.end(), {"--stats", stats});
    }
    const int rc = run_once(rest, [&] { what_would_help(rest, stats, quiet); });
    if (!own_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(own_dir, ec);
    }
    return rc;
}

}  // namespace npusim::cli
