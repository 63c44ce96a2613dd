#include "cli/critical_ranks.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/what_would_help.hpp"
#include "common/errors.hpp"
#include "study/child_process.hpp"

namespace npusim::cli {

namespace {

constexpr std::size_t kMaxCriticalRanks = 8;  // the default number of traced ranks

// Where "critical" stands in args (the value's index), or -1.
long critical_at(const Args& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--trace-ranks" && i + 1 < args.size() && args[i + 1] == "critical") return static_cast<long>(i + 1);
        if (args[i] == "--trace-ranks=critical") return static_cast<long>(i);
    }
    return -1;
}

std::vector<int> ranks_from(const std::string& stats_file) {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(stats_file), nullptr, false);
    std::vector<int> ranks;
    if (j.is_discarded() || !j.contains("critical_path") || !j["critical_path"].contains("ranks")) return ranks;
    for (const auto& r : j["critical_path"]["ranks"])
        if (ranks.size() < kMaxCriticalRanks) ranks.push_back(r.at("rank").get<int>());
    return ranks;
}

}  // namespace

void resolve_critical_ranks(Args& args) {
    const long at = critical_at(args);
    if (at < 0) return;
    std::string dir = (std::filesystem::temp_directory_path() / "npusim-critical-XXXXXX").string();
    if (!::mkdtemp(dir.data())) throw InputError("--trace-ranks critical: cannot make a temporary folder");
    std::vector<std::string> argv = {study::self_executable(), "run"};
    for (const auto& a : run_args_without_outputs(args)) argv.push_back(a);
    argv.insert(argv.end(), {"--stats", dir + "/stats.json", "-q"});
    const int code = study::run_process(argv, dir + "/log.txt");
    const std::vector<int> ranks = code == 0 ? ranks_from(dir + "/stats.json") : std::vector<int>{};
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    // A failed first run fails again in the real one, with its own message.
    const std::string list = ranks.empty() ? "0" : fmt::format("{}", fmt::join(ranks, ","));
    if (code == 0 && ranks.empty())
        throw InputError("--trace-ranks critical: only a run on several ranks has a critical path across ranks");
    args[static_cast<std::size_t>(at)] = args[static_cast<std::size_t>(at)] == "critical" ? list : "--trace-ranks=" + list;
    if (code == 0) std::cerr << fmt::format("npusim: --trace-ranks critical: ranks {} (the critical path's)\n", list);
}

}  // namespace npusim::cli
