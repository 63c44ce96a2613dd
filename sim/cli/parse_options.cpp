#include "cli/parse_options.hpp"

#include <iostream>

namespace npusim::cli {

namespace po = boost::program_options;

std::optional<po::variables_map> parse_options(const Args& args, const po::options_description& visible,
                                               const Positional& pos) {
    po::options_description all;
    all.add(visible);
    po::positional_options_description positional;
    if (pos.name) {
        all.add(pos.hidden);
        positional.add(pos.name, pos.count);
    }
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
        std::cout << visible;
        return std::nullopt;
    }
    po::notify(vm);
    return vm;
}

}  // namespace npusim::cli
