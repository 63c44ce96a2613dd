// `npusim lint`: report over-synchronisation in a task stream (docs/design.md §1.1,
// §4.1): event edges between tasks that share no written data and that no
// true dependence needs. Exit 0 clean, 1 findings, 2 bad input.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "config/run_config.hpp"
#include "tasks/lint.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::cli {

namespace po = boost::program_options;

int lint_command(const Args& args) {
    std::string chip_file, tasks_file, json_file;
    bool summary = false;
    po::options_description opts("npusim lint options");
    opts.add_options()
        ("help,h", "show this help")
        ("chip", po::value(&chip_file)->required(), "chip file (JSON)")
        ("tasks", po::value(&tasks_file)->required(), "task stream to check (.jsonl)")
        ("json", po::value(&json_file), "also write the findings as JSON here")
        ("summary", po::bool_switch(&summary), "one line per group of findings that join the same two ops through "
                                               "the same event, with a count");
    if (!parse_options(args, opts)) return 0;

    // The same validation as `npusim run`: the chip file, then the stream
    // and whether it fits the chip.
    const RunConfig cfg = RunConfig::load(chip_file, tasks_file, {});
    const WorkloadParams& workload = cfg.workload();
    if (cfg.kind() != WorkloadKind::tasks)
        throw InputError(fmt::format("{}: npusim lint checks task streams (.jsonl), not a '{}' workload{}", tasks_file,
                                     cfg.workload_kind(),
                                     cfg.kind() == WorkloadKind::graph ? "; emit its tasks with npusim compile first" : ""));
    const TaskStream stream = read_task_stream(workload.file);
    check_stream_fits_chip(stream, cfg.chip());

    const LintReport report = lint_task_stream(stream);
    if (!json_file.empty()) {
        write_output_file(json_file, lint_report_json(stream, report));
    }
    std::cout << lint_report_text(stream, report, summary);
    return report.clean() ? 0 : 1;
}

}  // namespace npusim::cli
