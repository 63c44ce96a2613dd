// npusim command line: dispatches to a subcommand and maps errors to exit
// codes: 0 ok, 1 check failed, 2 bad input, 3 deadlock.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>
#include <systemc>

#include "cli/commands.hpp"
#include "cli/huge_pages.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/phase.hpp"
#include "common/version.hpp"
#include "moe/moe_programs.hpp"

namespace {

const char* kUsage = R"(usage: npusim <command> [options]

commands:
  run     --chip FILE --workload FILE [--set PATH=VALUE]... [--stats OUT.json] [--trace OUT.json]
  compile --chip FILE --workload GRAPH.json|MODEL.onnx [--set PATH=VALUE]... --emit-tasks OUT.jsonl
  bench   [--tasks N] [--chip FILE] [--sizes N1,N2,...] [--runs N] [--compile] [--moe]   simulator (or compiler) speed and memory
  config-reference [PREFIX]                                 print the configuration reference (Markdown)
  stats-reference [PREFIX] [--json] [--doc FILE]            print the statistics reference (Markdown, JSON, or FILE with its tables)
  lint    --chip FILE --tasks STREAM.jsonl [--json OUT.json] [--summary]  report over-synchronisation (exit 1 if any)
  sweep   STUDY.json --out DIR [-j N] [--resume] [--backend local|slurm] [--report]   what-if study
  check   GOLDEN_DIR_OR_FILE [--set PATH=VALUE]... [--update] [--junit OUT.xml] [--json OUT.json]
          cycle-count regression against goldens
  import  MODEL.onnx --out GRAPH.json [--set workload.dims.NAME=N]...   ONNX model -> graph file (--list-ops: what maps)
  diff    A.json B.json [--json OUT.json] [--ops-csv OUT.csv] [--all]   two runs' stats (or sweep points) side by side

Run `npusim <command> --help` for a command's options; `npusim --version` prints the version.
)";

}  // namespace

int sc_main(int argc, char* argv[]) {
    npusim::register_moe_programs();  // the kernel programs streams may launch
    using namespace npusim;
    npusim::cli::Args args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsage;
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version" || args[0] == "version") {
        std::cout << "npusim " << version() << "\n";
        return 0;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    try {
        if (cmd == "run") return cli::run_command(args);
        if (cmd == "compile") return cli::compile_command(args);
        if (cmd == "bench") return cli::bench_command(args, argv[0]);
        if (cmd == "config-reference") return cli::config_reference_command(args);
        if (cmd == "stats-reference") return cli::stats_reference_command(args);
        if (cmd == "lint") return cli::lint_command(args);
        if (cmd == "sweep") return cli::sweep_command(args);
        if (cmd == "check") return cli::check_command(args);
        if (cmd == "diff") return cli::diff_command(args);
        if (cmd == "import") return cli::import_command(args);
        const std::vector<std::string> commands = {"run", "compile", "lint", "sweep", "check", "bench", "config-reference", "stats-reference", "import", "diff"};
        std::string list;
        for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
        throw InputError(fmt::format("unknown command '{}'{}; commands: {}", cmd, did_you_mean(cmd, commands), list));
    } catch (const InputError& e) {
        std::cerr << "npusim: error: " << e.what() << "\n";
        return 2;
    } catch (const boost::program_options::error& e) {
        std::cerr << "npusim " << cmd << ": error: " << e.what() << "\n";
        return 2;
    } catch (const DeadlockError& e) {
        std::cerr << "npusim: " << e.what() << "\n";
        return 3;
    } catch (const CheckFailed& e) {
        std::cerr << "npusim: " << e.what() << "\n";
        return 1;
    } catch (const std::bad_alloc&) {
        // Past the estimates (common/memory_budget.hpp): one line, the phase.
        const std::string phase = npusim::Phase::current();
        std::cerr << "npusim: error: out of memory" << (phase.empty() ? "" : " while " + phase)
                  << "; make the workload smaller (docs/robustness.md \"Memory as an input limit\")\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "npusim: internal error: " << e.what() << "\n";
        return 4;
    }
}

// Our own entry point: SystemC prints its banner when its kernel starts,
// before sc_main, unless told not to; the banner would clutter every
// command's output. Large runs are faster on huge pages (cli/huge_pages).
int main(int argc, char* argv[]) {
    npusim::cli::reexec_with_huge_pages(argv);
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}
