// `npusim stats-reference [PREFIX] [--json] [--doc FILE]`: the statistics
// reference, generated from the schema every stats writer is checked
// against (sim/stats/stats_schema.hpp); the key tables of
// docs/statistics.md are its --doc output.
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "stats/stats_schema.hpp"

namespace npusim::cli {
namespace {

constexpr const char* kStatsReferenceUsage =
    "usage: npusim stats-reference [PREFIX] [--json] [--doc FILE]\n"
    "  Prints the statistics reference: every key a stats file can hold, with its kind, unit, how a run on\n"
    "  several ranks merges it, and its meaning, as Markdown tables by section. With PREFIX (e.g. units.cube,\n"
    "  mesh.tiers), only the keys under it; with --json, the rows as a JSON array.\n"
    "  --doc FILE prints FILE (docs/statistics.md) with every table between <!-- stats-reference:begin SECTION -->\n"
    "  and <!-- stats-reference:end --> regenerated.\n";

// Every name a prefix can take: each pattern's leading segments, alternatives expanded.
std::vector<std::string> prefixes() {
    std::set<std::string> out;
    for (const StatSpec& s : stat_keys()) {
        std::string path;
        for (std::size_t i = 0; i <= s.pattern.size(); ++i)
            if (i == s.pattern.size() || s.pattern[i] == '.') {
                if (path.find_first_of("<{") != std::string::npos) break;
                out.insert(path);
                if (i < s.pattern.size()) path += '.';
            } else {
                path += s.pattern[i];
            }
    }
    return {out.begin(), out.end()};
}

std::string read_doc(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw InputError("stats-reference --doc: cannot read '" + file + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int stats_reference_command(const Args& args) {
    std::string prefix, doc;
    bool json = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            std::cout << kStatsReferenceUsage;
            return 0;
        }
        if (a == "--json") json = true;
        else if (a == "--doc") {
            if (i + 1 == args.size()) throw InputError("stats-reference: --doc needs a FILE (docs/statistics.md)");
            doc = args[++i];
        }
        else if (a.rfind('-', 0) == 0 || !prefix.empty())
            throw InputError("stats-reference: unexpected '" + a + "' (npusim stats-reference --help)");
        else prefix = a;
    }
    if (!doc.empty()) {
        if (json || !prefix.empty()) throw InputError("stats-reference: --doc takes no PREFIX or --json");
        std::cout << render_statistics_doc(read_doc(doc));
        return 0;
    }
    const std::string md = stats_reference_markdown(prefix);
    if (md.empty())
        throw InputError("stats-reference: no statistics key begins with '" + prefix + "'" + did_you_mean(prefix, prefixes()));
    std::cout << (json ? stats_reference_json(prefix) : md);
    return 0;
}

}  // namespace npusim::cli
