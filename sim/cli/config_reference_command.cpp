// `npusim config-reference [PREFIX]`: the configuration reference, generated
// from the schema that validates every run (docs/configuration.md is this
// output); with PREFIX, only the rows of the keys that begin with it.
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "config/schema.hpp"

namespace npusim::cli {
namespace {

constexpr const char* kConfigReferenceUsage =
    "usage: npusim config-reference [PREFIX]\n"
    "  Prints the configuration reference (docs/configuration.md): every chip and workload key with its type,\n"
    "  unit, default, range and meaning. With PREFIX (e.g. chip.hbm, workload.routing), only the keys that\n"
    "  begin with it, under their section headings.\n";

// The reference's sections that hold keys beginning with `prefix`, with only those rows.
std::string filtered(const std::string& md, const std::string& prefix) {
    std::istringstream in(md);
    std::string line, section, out;
    bool kept = false;
    const std::string row = "| `" + prefix;
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) {  // a new section: its heading and table head wait for a row
            section = line + "\n";
            kept = false;
            continue;
        }
        if (line.rfind("| `", 0) == 0) {
            if (line.rfind(row, 0) != 0) continue;
            if (!kept) out += (out.empty() ? "" : "\n") + section;
            kept = true;
            out += line + "\n";
        } else if (!section.empty() && !kept && (line.rfind("| Key", 0) == 0 || line.rfind("|---", 0) == 0)) {
            section += line + "\n";
        }
    }
    return out;
}

}  // namespace

int config_reference_command(const Args& args) {
    if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
        std::cout << kConfigReferenceUsage;
        return 0;
    }
    if (args.size() > 1 || (!args.empty() && args[0].rfind('-', 0) == 0))
        throw InputError("config-reference: expected at most one key prefix (e.g. chip.hbm), got '" + args.back() +
                         "' (npusim config-reference --help)");
    const std::string md = configuration_reference_markdown();
    if (args.empty()) {
        std::cout << md;
        return 0;
    }
    const std::string out = filtered(md, args[0]);
    if (out.empty()) {
        std::set<std::string> groups;  // every key and every group above it
        for (const auto& k : config_keys())
            for (std::size_t dot = 0; dot != std::string::npos;) {
                dot = k.path.find('.', dot + 1);
                groups.insert(k.path.substr(0, dot));
            }
        const std::vector<std::string> paths(groups.begin(), groups.end());
        throw InputError("config-reference: no key begins with '" + args[0] + "'" + did_you_mean(args[0], paths));
    }
    std::cout << out;
    return 0;
}

}  // namespace npusim::cli
