// `npusim run ... --what-would-help`: the run, then one re-run per resource
// with twice its capacity (HBM and L2 bandwidth, the cores' GM ports, L1 ->
// L0 and FixPipe rates, Cube and Vector core counts, dispatch, the mesh's
// planes), each in a child `npusim run` (SystemC cannot restart in one
// process). What each doubling saves of the run, and of each op's busy
// time, is measured by the model itself, not estimated: the resource whose
// doubling saves the most is what binds.
#include "cli/what_would_help.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "study/child_process.hpp"

namespace npusim::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Resource {
    const char* name;
    const char* key;
    bool halve;        // a cost (cycles): twice the capacity is half of it
    bool ranks_only;   // the mesh: only on a chip with ranks
};

const std::vector<Resource>& resources() {
    static const std::vector<Resource> r = {
        {"hbm", "chip.hbm.bandwidth_gbps", false, false},
        {"l2", "chip.l2.bandwidth_gbps", false, false},
        {"cube.gm_port", "chip.cores.cube.gm_bytes_per_cycle", false, false},
        {"vector.gm_port", "chip.cores.vector.gm_bytes_per_cycle", false, false},
        {"mte1", "chip.cores.cube.l1_to_l0_bytes_per_cycle", false, false},
        {"fixpipe", "chip.cores.cube.fixpipe_bytes_per_cycle", false, false},
        {"cube cores", "chip.cores.cube.count", false, false},
        {"vector cores", "chip.cores.vector.count", false, false},
        {"dispatch", "chip.cores.scalar.dispatch_cycles", true, false},
        {"mesh intra-node", "chip.interconnect.intra_node.plane_bandwidth_gbps", false, true},
        {"mesh inter-node", "chip.interconnect.inter_node.plane_bandwidth_gbps", false, true},
    };
    return r;
}


const json* at_path(const json& j, const std::string& path) {
    const json* cur = &j;
    std::size_t from = 0;
    while (from <= path.size()) {
        const auto dot = path.find('.', from);
        const std::string seg = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
        if (!cur->is_object() || !cur->contains(seg)) return nullptr;
        cur = &(*cur)[seg];
        if (dot == std::string::npos) break;
        from = dot + 1;
    }
    return cur;
}

std::string value_text(double v) { return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.6g}", v); }

struct Rerun {
    const Resource* r = nullptr;
    double from = 0, to = 0;
    std::string stats, log;
    pid_t pid = -1;
    int code = -1;
    json result;
};

json read_stats(const std::string& file) {
    try {
        return json::parse(std::ifstream(file));
    } catch (const json::exception& e) {
        throw InputError(file + ": cannot read the run's statistics (" + e.what() + "); give --stats a regular file");
    }
}

std::map<std::string, double> op_busy(const json& stats) {
    std::map<std::string, double> m;
    if (stats.contains("ops"))
        for (const auto& op : stats["ops"]) m[op.value("name", std::string())] = op.value("busy_ns", 0.0);
    return m;
}

}  // namespace

std::vector<std::string> run_args_without_outputs(const Args& args) {
    static const std::vector<std::string> valued = {"--stats", "--trace", "--report", "--profile", "--trace-ranks",
                                                    "--trace-window", "--trace-ops", "--trace-cores"};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
            ++i;  // and its value
            continue;
        }
        if (std::any_of(valued.begin(), valued.end(), [&](const std::string& o) { return a.rfind(o + "=", 0) == 0; })) continue;
        if (a == "-q" || a == "--quiet" || a == "--trace-tasks-only") continue;
        out.push_back(a);
    }
    return out;
}

int what_would_help(const Args& args, const std::string& stats_file, bool quiet) {
    const json base = read_stats(stats_file);
    const bool ranks = base.contains("system") || (at_path(base, "config.chip.interconnect.ranks") &&
                                                    at_path(base, "config.chip.interconnect.ranks")->get<double>() > 1);
    std::string pattern = (fs::temp_directory_path() / "npusim-what-would-help-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw InputError("--what-would-help: cannot make a temporary folder in " + fs::temp_directory_path().string());
    const fs::path dir = pattern;
    const std::vector<std::string> common = run_args_without_outputs(args);
    const std::string self = study::self_executable();
    std::vector<Rerun> runs;
    for (const Resource& r : resources()) {
        if (r.ranks_only && !ranks) continue;
        const json* v = at_path(base, std::string("config.") + r.key);
        if (!v || !v->is_number() || v->get<double>() <= 0) continue;
        Rerun x;
        x.r = &r;
        x.from = v->get<double>();
        x.to = r.halve ? x.from / 2 : x.from * 2;
        if (v->is_number_integer()) x.to = std::max(1.0, std::round(x.to));
        if (x.to == x.from) continue;  // (a cost of 1 cycle cannot halve)
        x.stats = (dir / fmt::format("{}.json", runs.size())).string();
        x.log = (dir / fmt::format("{}.log", runs.size())).string();
        runs.push_back(x);
    }
    // As many at a time as the machine has cores.
    const std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
    std::size_t next = 0, running = 0;
    while (next < runs.size() || running > 0) {
        while (running < jobs && next < runs.size()) {
            Rerun& x = runs[next];
            std::vector<std::string> argv = {self, "run"};
            argv.insert(argv.end(), common.begin(), common.end());
            argv.insert(argv.end(), {"--set", fmt::format("{}={}", x.r->key, value_text(x.to)), "--stats", x.stats, "-q"});
            x.pid = study::spawn_process(argv, x.log);
            ++running;
            ++next;
        }
        // The oldest re-run still going (each waited for by its own pid).
        for (Rerun& x : runs) {
            if (x.pid < 0) continue;
            int status = 0;
            pid_t done = -1;
            while ((done = ::waitpid(x.pid, &status, 0)) < 0 && errno == EINTR) {
            }
            x.code = done < 0 ? 128 : study::exit_code_of(status);
            x.pid = -1;
            --running;
            break;
        }
    }
    const double total = base.value("total_ns", 0.0);
    const auto busy0 = op_busy(base);
    json section = json::object();
    std::map<std::string, std::pair<double, std::string>> op_best;  // op -> (largest busy saving, resource)
    for (Rerun& x : runs) {
        json e{{"key", x.r->key}, {"from", x.from}, {"to", x.to}};
        if (x.code == 0) {
            x.result = read_stats(x.stats);
            const double t = x.result.value("total_ns", 0.0);
            e["total_ns"] = t;
            e["change"] = total > 0 ? t / total - 1 : 0.0;
            for (const auto& [op, b] : op_busy(x.result)) {
                const auto it = busy0.find(op);
                if (it == busy0.end() || it->second <= 0) continue;
                const double saved = 1 - b / it->second;
                auto& best = op_best[op];
                if (saved > best.first) best = {saved, x.r->name};
            }
        } else {
            std::ifstream log(x.log);
            std::string line;
            std::getline(log, line);
            e["error"] = line;
        }
        section[x.r->name] = e;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);

    // The binding resource: the doubling that saves the most (at least 1%).
    std::string binds;
    double most = -0.01;
    for (const auto& [name, e] : section.items())
        if (e.contains("change") && e["change"].get<double>() < most) most = e["change"].get<double>(), binds = name;
    json doc = base;
    doc["what_would_help"] = {{"method", "re-run with the resource at twice its capacity"}, {"binds", binds}, {"resources", section}};
    if (doc.contains("ops"))
        for (auto& op : doc["ops"]) {
            const auto it = op_best.find(op.value("name", std::string()));
            if (it != op_best.end() && it->second.first >= 0.01) {
                op["bound_resource"] = it->second.second;
                op["bound_resource_saving"] = it->second.first;
            }
        }
    OutputFile out(stats_file);
    out.stream() << doc.dump(1) << "\n";
    out.commit();
    if (quiet) return 0;

    std::cout << "what would help (each resource at twice its capacity, one re-run each; most saved first):\n";
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [name, e] : section.items()) order.emplace_back(e.value("change", 1.0), name);
    std::sort(order.begin(), order.end());
    for (const auto& [ignored, name] : order) {
        const json& e = section[name];
        const std::string change = e.contains("change") ? fmt::format("{:+.1f}%", 100 * e["change"].get<double>())
                                                        : "not run: " + e.value("error", std::string());
        std::cout << fmt::format("  {:<16} {:<58} {:>9}\n", name,
                                 fmt::format("{} {} -> {}", e["key"].get<std::string>(), value_text(e["from"].get<double>()),
                                             value_text(e["to"].get<double>())),
                                 change);
    }
    std::cout << (binds.empty() ? std::string("  binds: no single resource (no doubling saves 1%)\n")
                                : fmt::format("  binds: {} ({}: {:+.1f}% with twice of it)\n", binds,
                                              section[binds]["key"].get<std::string>(), 100 * most));
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, b] : busy0) ops.emplace_back(b, op);
    std::sort(ops.rbegin(), ops.rend());
    std::cout << "  ops (top 10 by busy time): the resource whose doubling saves most of its busy time\n";
    for (std::size_t i = 0; i < ops.size() && i < 10; ++i) {
        const auto it = op_best.find(ops[i].second);
        std::cout << fmt::format("    {:<36} {:>10.3f} us  {}\n", ops[i].second, ops[i].first / 1000,
                                 it != op_best.end() && it->second.first >= 0.01
                                     ? fmt::format("{} ({:.1f}% less)", it->second.second, 100 * it->second.first)
                                     : std::string("-"));
    }
    return 0;
}

}  // namespace npusim::cli
