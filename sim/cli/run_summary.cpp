#include "cli/run_summary.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace npusim::cli {

namespace {

// The critical path's split by kind and its three longest steps.
std::string critical_path_summary(const Stats& s) {
    const std::string* text = s.json("critical_path");
    if (!text) return {};
    const auto cp = nlohmann::json::parse(*text);
    const double total = cp.value("total_ns", 0.0);
    if (total <= 0) return {};
    std::vector<std::pair<double, std::string>> kinds;
    for (const auto& [k, v] : cp["by_kind"].items()) kinds.emplace_back(v.get<double>(), k);
    std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out = fmt::format("  critical path {:.3f} us:", total / 1000.0);
    for (const auto& [ns, k] : kinds) out += fmt::format("  {} {:.1f}%", k, ns / total * 100.0);
    out += "\n";
    if (cp.contains("binds") && !cp["binds"].empty()) {
        out += "    binds:";
        for (std::size_t i = 0; i < cp["binds"].size() && i < 3; ++i) {
            const auto& b = cp["binds"][i];
            const std::string key = b.value("key", std::string());
            out += fmt::format("{} {} {:.1f}%{}", i ? "," : "", b.value("resource", std::string()), 100 * b.value("share", 0.0),
                               key.empty() ? "" : " (" + key + ")");
        }
        out += "\n";
    }
    std::vector<const nlohmann::json*> segs;
    std::map<std::string, double> by_op;
    for (const auto& g : cp["segments"]) {
        segs.push_back(&g);
        if (!g["op"].is_null()) by_op[g["op"].get<std::string>()] += g["end_ns"].get<double>() - g["start_ns"].get<double>();
    }
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, ns] : by_op) ops.emplace_back(ns, op);
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (!ops.empty()) {
        out += "    ops on it:";
        for (std::size_t i = 0; i < ops.size() && i < 5; ++i)
            out += fmt::format("{} {} {:.1f}%", i ? "," : "", ops[i].second, ops[i].first / total * 100.0);
        out += "\n";
    }
    if (cp.contains("host_stages")) {
        std::vector<std::pair<double, std::string>> stages;
        for (const auto& [k, v] : cp["host_stages"].items()) stages.emplace_back(v.get<double>(), k);
        std::stable_sort(stages.begin(), stages.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        out += "    host stages on it:";
        for (std::size_t i = 0; i < stages.size(); ++i)
            out += fmt::format("{} {} {:.1f}%", i ? "," : "", stages[i].second, stages[i].first / total * 100.0);
        out += "\n";
    }
    auto dur = [](const nlohmann::json* g) { return (*g)["end_ns"].get<double>() - (*g)["start_ns"].get<double>(); };
    std::stable_sort(segs.begin(), segs.end(), [&](const auto* a, const auto* b) { return dur(a) > dur(b); });
    for (std::size_t i = 0; i < segs.size() && i < 3; ++i) {
        const auto& g = *segs[i];
        const std::string who = g["task"].is_null()
                                    ? (g.contains("stage") ? " " + g["stage"].get<std::string>() : "")
                                    : fmt::format(" {} ({})", g["task"].get<std::string>(), g["op"].get<std::string>());
        std::string why;
        if (g.contains("after")) why += ", after " + g["after"].get<std::string>();
        if (g.contains("waited")) why += ", waited for " + g["waited"].get<std::string>();
        out += fmt::format("    {:5.1f}%  {}{}  {:.3f} us{}\n", dur(&g) / total * 100.0, g["kind"].get<std::string>(), who,
                           dur(&g) / 1000.0, why);
    }
    return out;
}

// The ten ops that kept cores busy longest.
std::string ops_summary(const Stats& s) {
    const std::string* text = s.json("ops");
    if (!text) return {};
    const auto ops = nlohmann::json::parse(*text);
    if (ops.empty()) return {};
    std::string out = fmt::format("  {:<28} {:>6} {:>5} {:>12} {:>10}  bound\n",
                                  fmt::format("ops (top {} of {})", std::min<std::size_t>(10, ops.size()), ops.size()),
                                  "tasks", "cores", "busy us", "MB moved");
    for (std::size_t i = 0; i < ops.size() && i < 10; ++i) {
        const auto& o = ops[i];
        std::string name = o["name"].get<std::string>();
        if (name.size() > 26) name = name.substr(0, 25) + "~";
        out += fmt::format("    {:<26} {:>6} {:>5} {:>12.3f} {:>10.3f}  {}\n", name, o["tasks"].get<std::uint64_t>(),
                           o["cores"].get<std::uint64_t>(), o["busy_ns"].get<double>() / 1000.0,
                           o["bytes"].get<double>() / 1e6,
                           o["bound"].get<std::string>() + (o.contains("resource") && o["bound"] != "sync"
                                                                 ? " (" + o["resource"].get<std::string>() + ")"
                                                                 : std::string()));
    }
    return out;
}

}  // namespace

std::string run_summary(const Stats& s, const ChipParams& chip, const std::string& stats_file,
                        const std::string& trace_file) {
    std::string out = fmt::format("npusim: {} tasks on {} ({} cube + {} vector, {} GHz)\n", s.number("tasks.count"),
                                  chip.name, chip.cube.count, chip.vector.count, chip.clock_ghz);
    out += fmt::format("  total        {:.0f} cycles  ({:.3f} us)\n", s.number("total_cycles"), s.number("total_ns") / 1000.0);
    for (const char* u : {"cube", "cube_mte2", "cube_mte1", "cube_m", "cube_fixpipe", "vector", "vector_mte2", "vector_v",
                          "vector_mte3", "scalar", "hbm", "l2"}) {
        const std::string key = fmt::format("units.{}.utilization", u);
        if (!s.has(key)) continue;
        const double v = s.number(key);
        const int bar = static_cast<int>(v * 30 + 0.5);
        out += fmt::format("  {:<13} {:5.1f}%  {:<30}\n", u, v * 100.0, std::string(static_cast<std::size_t>(std::min(bar, 30)), '#'));
    }
    out += fmt::format("  overlap.cube_vector {:.1f}%   L2 hit rate {:.1f}%   event wait {:.0f} cycles\n",
                       s.number("overlap.cube_vector") * 100.0, s.number("memory.l2.hit_rate") * 100.0,
                       s.number("events.wait_cycles"));
    // A stream compiled for other buffers: say how many plans the cores remade.
    for (const char* t : {"cube", "vector"}) {
        const std::string key = fmt::format("units.{}.replanned_tasks", t);
        if (s.has(key) && s.number(key) > 0)
            out += fmt::format("  {} {} tasks re-planned: their tiling data does not fit this chip ({})\n",
                               s.number(key), t, key);
    }
    out += critical_path_summary(s);
    out += ops_summary(s);
    if (!stats_file.empty()) out += fmt::format("  stats  -> {}\n", stats_file);
    if (!trace_file.empty()) out += fmt::format("  trace  -> {}  (open in ui.perfetto.dev)\n", trace_file);
    return out;
}

}  // namespace npusim::cli
