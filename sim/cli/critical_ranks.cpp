#include "cli/critical_ranks.hpp"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/system_run.hpp"
#include "cli/what_would_help.hpp"
#include "common/errors.hpp"
#include "study/child_process.hpp"

namespace npusim::cli {

namespace {


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
        if (ranks.size() < static_cast<std::size_t>(kDefaultTracedRanks)) ranks.push_back(r.at("rank").get<int>());
    return ranks;
}

// A temporary folder, removed however the first run ends.
struct TempFolder {
    std::string path = (std::filesystem::temp_directory_path() / "npusim-critical-XXXXXX").string();
    TempFolder() {
        if (!::mkdtemp(path.data())) throw InputError("--trace-ranks critical: cannot make a temporary folder");
    }
    ~TempFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

bool has_output(const Args& args) {
    for (const auto& a : args)
        for (const char* o : {"--trace", "--report"})
            if (a == o || a.rfind(std::string(o) + "=", 0) == 0) return true;
    return false;
}

}  // namespace

std::optional<int> resolve_critical_ranks(Args& args) {
    const long at = critical_at(args);
    if (at < 0) return std::nullopt;
    for (const auto& a : args)
        if (a == "-h" || a == "--help") return std::nullopt;
    if (!has_output(args))
        throw InputError("--trace-ranks critical: chooses the ranks a trace keeps; give --trace FILE (or --report)");
    const TempFolder dir;
    std::vector<std::string> argv = {study::self_executable(), "run"};
    for (const auto& a : run_args_without_outputs(args)) argv.push_back(a);
    argv.insert(argv.end(), {"--stats", dir.path + "/stats.json", "-q"});
    const int code = study::run_process(argv, dir.path + "/log.txt");
    if (code != 0) {  // its own message (a bad input, a deadlock, a signal), and its exit code
        std::cerr << std::ifstream(dir.path + "/log.txt").rdbuf();
        if (code >= 128) std::cerr << fmt::format("npusim: --trace-ranks critical: the first run was killed by signal {}\n", code - 128);
        return code;
    }
    const std::vector<int> ranks = ranks_from(dir.path + "/stats.json");
    if (ranks.empty()) throw InputError("--trace-ranks critical: only a run on several ranks has a critical path across ranks");
    const std::string list = fmt::format("{}", fmt::join(ranks, ","));
    args[static_cast<std::size_t>(at)] = args[static_cast<std::size_t>(at)] == "critical" ? list : "--trace-ranks=" + list;
    std::cerr << fmt::format("npusim: --trace-ranks critical: ranks {} (the critical path's)\n", list);
    return std::nullopt;
}

}  // namespace npusim::cli
