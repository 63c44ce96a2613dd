// `npusim run`: resolve the configuration, load the workload, simulate one
// die, write stats and trace, print a short human summary.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/run_summary.hpp"
#include "common/errors.hpp"
#include "compiler/compiler.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"
#include "trace/trace_writer.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

int run_command(const Args& args) {
    std::string chip_file, workload_file, stats_file, trace_file;
    std::vector<std::string> sets;
    bool quiet = false, trace_tasks_only = false;
    po::options_description opts("npusim run options");
    opts.add_options()
        ("help,h", "show this help")
        ("chip", po::value(&chip_file)->required(), "chip file (JSON)")
        ("workload", po::value(&workload_file)->required(), "workload: a task stream (.jsonl) or a model graph (.json)")
        ("set", po::value(&sets), "override PATH=VALUE in the run document (repeatable)")
        ("stats", po::value(&stats_file), "write statistics JSON here")
        ("trace", po::value(&trace_file), "write a Perfetto-loadable trace here")
        ("trace-tasks-only", po::bool_switch(&trace_tasks_only), "trace tasks but not per-tile pipe activity")
        ("quiet,q", po::bool_switch(&quiet), "no summary on stdout");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    po::notify(vm);

    const RunConfig cfg = RunConfig::load(chip_file, workload_file, sets);
    // Output folders are created on demand (`--stats out/run1/stats.json`).
    for (const std::string& f : {stats_file, trace_file}) {
        const auto dir = std::filesystem::path(f).parent_path();
        std::error_code ec;
        if (!f.empty() && !dir.empty()) std::filesystem::create_directories(dir, ec);
    }
    const ChipParams& chip = cfg.chip();
    // A graph is compiled on the fly; a stream is read as it is (the
    // resolved path: relative to a .json workload file, or as --set it).
    const nlohmann::json& workload = cfg.document()["workload"];
    std::optional<compiler::CompileResult> compiled;
    if (cfg.workload_kind() == "graph") compiled = compiler::compile_workload(workload, chip);
    const TaskStream stream = compiled ? std::move(compiled->stream) : read_task_stream(workload["file"].get<std::string>());
    check_stream_fits_chip(stream, chip);

    std::unique_ptr<TraceWriter> trace =
        trace_file.empty() ? std::make_unique<TraceWriter>() : std::make_unique<TraceWriter>(trace_file);
    Die die("die0", chip, stream, trace.get(), !trace_tasks_only);
    die.run();

    Stats stats;
    die.collect(stats);
    stats.set_json("config", cfg.dump());
    if (compiled) compiled->report(stats);
    if (!stats_file.empty()) {
        std::ofstream out(stats_file, std::ios::binary);
        if (!out) throw InputError(fmt::format("{}: cannot write stats file", stats_file));
        out << stats.to_json();
    }
    trace->close(fmt::format(R"({{"chip":"{}","workload":"{}","total_ns":{}}})", json_escape(chip.name),
                             json_escape(workload_file), stats.number("total_ns")));
    if (!quiet) {
        if (compiled)
            std::cout << fmt::format("compiled {}: {} kernels -> {} tasks, {} events, {} FormatConvert tasks\n",
                                     workload_file, compiled->kernels, stats.number("compile.tasks"), compiled->events,
                                     compiled->format_converts);
        std::cout << run_summary(stats, chip, stats_file, trace_file);
    }
    return 0;
}

}  // namespace npusim::cli
