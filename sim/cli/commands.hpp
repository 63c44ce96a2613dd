// The npusim subcommands. Each takes the arguments after its name and
// returns the process exit code (docs/design.md §4.1); errors travel as exceptions.
#pragma once
#include <string>
#include <vector>

namespace npusim::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args);
int compile_command(const Args& args);
int bench_command(const Args& args, const std::string& self_path);
int config_reference_command(const Args& args);
int stats_reference_command(const Args& args);
int lint_command(const Args& args);
int sweep_command(const Args& args);
int check_command(const Args& args);
int import_command(const Args& args);
int diff_command(const Args& args);

}  // namespace npusim::cli
