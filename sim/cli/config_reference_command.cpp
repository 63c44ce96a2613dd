// `npusim config-reference`: the configuration reference, generated from the
// schema that validates every run (docs/configuration.md is this output).
#include <iostream>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "config/schema.hpp"

namespace npusim::cli {

int config_reference_command(const Args& args) {
    if (!args.empty()) throw InputError("config-reference takes no arguments");
    std::cout << configuration_reference_markdown();
    return 0;
}

}  // namespace npusim::cli
