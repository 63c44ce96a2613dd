// `npusim compile`: model graph -> task stream file, with a report of what
// each pass did and the tiles chosen. `npusim run` on the emitted stream
// gives exactly the cycles of compiling on the fly.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/die_timer.hpp"
#include "cli/commands.hpp"
#include "cli/estimates_csv.hpp"
#include "cli/llm_run.hpp"
#include "cli/parse_options.hpp"
#include "cli/system_run.hpp"
#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "common/output_file.hpp"
#include "common/phase.hpp"
#include "compiler/compiler.hpp"
#include "compiler/spmd.hpp"
#include "config/run_config.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

namespace {

// Every rank's tasks as one cross-rank stream (`run` replays it), and the
// compile report of rank 0's program.
void write_spmd_stream(const compiler::SpmdCompile& spmd, const RunConfig& cfg, const std::string& out_file, bool quiet) {
    // The ranks share compiled programs, the file holds each rank's copy:
    // refused before the copies fill the machine.
    std::uint64_t tasks = 0;
    for (const auto& s : spmd.streams) tasks += s->tasks.size();
    check_memory_budget(
        fmt::format("{}: writing the stream of {} ranks ({} tasks)", cfg.workload().file, spmd.streams.size(), tasks),
        tasks * kEmitBytesPerTask,
        "emit fewer ranks (--set chip.interconnect.ranks=N) or, for kind llm, fewer layers (--set workload.layers=N)");
    const TaskStream merged = spmd.merged();
    check_stream_fits_chip(merged, cfg.chip());
    OutputFile out(out_file);
    write_task_stream(merged, out.stream());
    out.commit();
    if (!quiet)
        std::cout << spmd.plans.front().summary()
                  << fmt::format("  ranks: {} ({} distinct rank programs; above: rank 0's)\n  stream -> {} ({} tasks)\n",
                                 cfg.chip().interconnect.ranks, spmd.plans.size(), out_file, merged.tasks.size());
}

// Kind llm: the die's graph to a file, and / or every die's tasks.
int compile_llm_command(const RunConfig& cfg, const std::string& out_file, const std::string& graph_file, bool quiet) {
    std::optional<Phase> phase(std::in_place, "building " + cfg.workload().file);
    const LlmBuild b = build_llm(cfg);
    if (!graph_file.empty()) {
        OutputFile g(graph_file);
        g.stream() << b.graph.text << "\n";
        g.commit();
        if (!quiet)
            std::cout << fmt::format("  graph -> {} ({} nodes; run it with --workload {})\n", graph_file, b.graph.nodes.size(), graph_file);
    }
    if (out_file.empty()) return 0;
    phase.emplace("compiling " + cfg.workload().file);
    const compiler::SpmdCompile spmd = compile_llm(cfg, b);
    phase.emplace("writing " + out_file);
    write_spmd_stream(spmd, cfg, out_file, quiet);
    return 0;
}

}  // namespace

int compile_command(const Args& args) {
    std::string chip_file, workload_file, out_file, estimates_file, graph_file;
    std::vector<std::string> sets;
    bool quiet = false;
    po::options_description opts("npusim compile options");
    opts.add_options()
        ("help,h", "show this help")
        ("chip", po::value(&chip_file)->required(), "chip file (JSON)")
        ("workload", po::value(&workload_file)->required(), "model graph (.json), ONNX model (.onnx) or LLM run file (kind llm)")
        ("set", po::value(&sets), "override PATH=VALUE in the run document (repeatable)")
        ("emit-tasks", po::value(&out_file), "write the task stream (JSON Lines) here")
        ("emit-graph", po::value(&graph_file), "kind llm: write the die's graph (docs/graph-format.md) here; it runs as a graph workload")
        ("estimates", po::value(&estimates_file),
         "write the cost model's estimate of each task here (CSV: id,op,core_type,est_cycles), to set beside "
         "the run's task times (tools/estimate_accuracy.py)")
        ("quiet,q", po::bool_switch(&quiet), "no report on stdout");
    if (!parse_options(args, opts)) return 0;
    const RunConfig cfg = RunConfig::load(chip_file, workload_file, sets);
    if (out_file.empty() && graph_file.empty()) throw InputError("compile: give --emit-tasks FILE (or, for kind llm, --emit-graph FILE)");
    // The compiler's plan searches run candidates on this chip's die model.
    use_die_timer();
    if (cfg.kind() == WorkloadKind::llm) return compile_llm_command(cfg, out_file, graph_file, quiet);
    if (!graph_file.empty()) throw InputError("--emit-graph: only an LLM run file (kind llm) builds a graph to write");
    if (out_file.empty()) throw InputError("compile: --emit-tasks FILE is required");
    if (cfg.kind() != WorkloadKind::graph)
        throw InputError(fmt::format("{}: compile takes a model graph (kind \"graph\"), this workload is kind \"{}\"",
                                     workload_file, cfg.workload_kind()));
    std::optional<Phase> phase(std::in_place, "compiling " + workload_file);
    if (compiler::runs_on_ranks(cfg.chip())) {
        const compiler::SpmdCompile spmd = compiler::compile_spmd_workload(cfg.workload(), cfg.chip());
        print_warnings(spmd);
        if (!estimates_file.empty()) throw InputError("--estimates: not available for a graph on several ranks");
        phase.emplace("writing " + out_file);
        write_spmd_stream(spmd, cfg, out_file, quiet);
        return 0;
    }
    const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
    for (const auto& w : r.warnings) std::cerr << "npusim: warning: " << w << "\n";
    phase.emplace("writing " + out_file);
    check_stream_fits_chip(r.stream, cfg.chip());
    OutputFile out(out_file);
    write_task_stream(r.stream, out.stream());
    out.commit();
    std::string estimates_note;
    if (!estimates_file.empty()) estimates_note = write_estimates(r, cfg.chip(), estimates_file);
    if (!quiet) std::cout << r.summary() << fmt::format("  stream -> {}\n", out_file) << estimates_note;
    return 0;
}

}  // namespace npusim::cli
