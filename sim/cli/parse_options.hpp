// One way every subcommand reads its options: --help prints the visible
// ones, an optional hidden option takes the one positional argument, and
// boost's own errors (unknown option, bad value) reach main() as they are.
#pragma once
#include <optional>

#include <boost/program_options.hpp>

#include "cli/commands.hpp"

namespace npusim::cli {

struct Positional {
    const char* name = nullptr;  // the hidden option it fills; nullptr = none
    boost::program_options::options_description hidden;
    int count = 1;               // how many positional arguments it takes (-1: any)
};

// Parses args into the variables bound by `visible` (and pos.hidden).
// Empty after printing the help, when the command should exit 0.
std::optional<boost::program_options::variables_map> parse_options(
    const Args& args, const boost::program_options::options_description& visible, const Positional& pos = {});

}  // namespace npusim::cli
