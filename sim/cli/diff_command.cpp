// `npusim diff A B [--json OUT] [--ops-csv OUT] [--all]`: two runs side by
// side — the stats files `npusim run --stats` writes, or sweep points (a
// point's folder holding stats.json). The configuration keys that differ,
// every statistic that changed with its delta, and the ops matched by name
// (busy time, bound). Runs of different workloads are compared on what they
// have in common, and the output says so.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/parse_options.hpp"
#include "common/csv.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "common/output_file.hpp"

namespace npusim::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using json = nlohmann::json;

struct Run {
    std::string file;
    json stats;
};

Run load(const std::string& path) {
    std::error_code ec;
    const std::string file = fs::is_directory(path, ec) ? (fs::path(path) / "stats.json").string() : path;
    JsonFileSpec spec;
    spec.what = "stats file";
    Run r{file, read_json_file<json>(file, spec)};
    if (!r.stats.contains("total_ps"))
        throw InputError(file + ": not a stats file of npusim run (no total_ps); write one with npusim run --stats FILE");
    return r;
}

// Leaves of `j` as "a.b.c" -> value; lists of objects are left out (per-op
// rows and critical-path segments are compared by name, or not at all).
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    } else if (!j.is_array()) {
        out[prefix] = j;
    }
}

struct Change {
    std::string key;
    json a, b;
    double delta = 0, rel = 0;  // numbers only; rel = delta / |a| (0 when a is 0)
};

std::vector<Change> changes(const std::map<std::string, json>& a, const std::map<std::string, json>& b) {
    std::vector<Change> v;
    std::set<std::string> keys;
    for (const auto& [k, x] : a) keys.insert(k);
    for (const auto& [k, x] : b) keys.insert(k);
    for (const auto& k : keys) {
        const auto ia = a.find(k), ib = b.find(k);
        Change c{k, ia == a.end() ? json() : ia->second, ib == b.end() ? json() : ib->second};
        if (c.a == c.b) continue;
        if (c.a.is_number() && c.b.is_number()) {
            c.delta = c.b.get<double>() - c.a.get<double>();
            // From 0 to anything is the largest change there is (stale reads, stalls appearing).
            c.rel = c.a.get<double>() != 0 ? c.delta / std::fabs(c.a.get<double>()) : HUGE_VAL;
        }
        v.push_back(std::move(c));
    }
    return v;
}

std::string text(const json& v) {
    if (v.is_null()) return "(absent)";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
    return v.dump();
}

std::string delta_text(const Change& c) {
    if (!c.a.is_number() || !c.b.is_number()) return "";
    std::string t = fmt::format("{:+.6g}", c.delta);
    if (c.a.get<double>() != 0) t += fmt::format(" ({:+.2f}%)", 100 * c.rel);
    else t += " (from 0)";
    return t;
}

std::map<std::string, json> ops_by_name(const json& stats) {
    std::map<std::string, json> m;
    if (stats.contains("ops") && stats["ops"].is_array())
        for (const auto& op : stats["ops"])
            if (op.contains("name")) m[op["name"].get<std::string>()] = op;
    return m;
}

// What the two runs ran: the workload file and kind.
std::string workload_of(const json& stats) {
    const json* w = stats.contains("config") && stats["config"].contains("workload") ? &stats["config"]["workload"] : nullptr;
    if (!w) return "";
    return w->value("kind", std::string()) + " " + w->value("file", std::string());
}

void write_ops_csv(const std::string& file, const std::map<std::string, json>& a, const std::map<std::string, json>& b) {
    static const std::vector<std::string> fields = {"tasks", "cores", "flops", "bytes", "busy_ns", "compute_ns",
                                                    "transfer_ns", "event_wait_ns", "start_ns", "end_ns", "bound"};
    OutputFile out(file);
    std::ostream& os = out.stream();
    os << "op";
    for (const char* side : {"a", "b"})
        for (const auto& f : fields) os << "," << side << "_" << f;
    os << ",a_achieved_flops_per_s,b_achieved_flops_per_s\n";
    std::set<std::string> names;
    for (const auto& [k, v] : a) names.insert(k);
    for (const auto& [k, v] : b) names.insert(k);
    const auto cell = [](const json& v) {
        if (v.is_null()) return std::string();
        if (v.is_string()) return csv_quoted(v.get<std::string>());
        return v.is_number_float() ? fmt::format("{:.6g}", v.get<double>()) : v.dump();
    };
    const auto rate = [](const std::map<std::string, json>& m, const std::string& n) {
        const auto it = m.find(n);
        if (it == m.end() || !it->second.contains("flops") || !it->second.contains("busy_ns")) return std::string();
        const double busy = it->second["busy_ns"].get<double>() / std::max(1.0, it->second.value("cores", 1.0));
        return busy > 0 ? fmt::format("{:.6g}", it->second["flops"].get<double>() / (busy * 1e-9)) : std::string();
    };
    for (const auto& n : names) {
        os << csv_quoted(n);
        for (const auto* m : {&a, &b}) {
            const auto it = m->find(n);
            for (const auto& f : fields) os << "," << (it == m->end() ? std::string() : cell(it->second.value(f, json())));
        }
        os << "," << rate(a, n) << "," << rate(b, n) << "\n";
    }
    out.commit();
}

int diff(const Args& args);

}  // namespace

// Malformed stats (a field of an unexpected type) are bad input, not an internal error.
int diff_command(const Args& args) {
    try {
        return diff(args);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("diff: a stats file is not as npusim run writes it: ") + e.what());
    }
}

namespace {

int diff(const Args& args) {
    std::vector<std::string> files;
    std::string json_file, csv_file;
    bool all = false;
    po::options_description opts("npusim diff A B [options]  (A, B: stats files of npusim run --stats, or sweep point folders)");
    opts.add_options()
        ("help,h", "show this help")
        ("all", po::bool_switch(&all), "list every statistic that changed (default: the 25 that changed most)")
        ("json", po::value(&json_file), "also write the comparison as JSON here")
        ("ops-csv", po::value(&csv_file), "write every op of both runs, matched by name, as CSV here (FLOPs, bytes, busy, "
                                          "compute, transfer and wait time, span, bound, achieved FLOP/s per core)");
    Positional pos{"runs", {}, 2};
    pos.hidden.add_options()("runs", po::value(&files), "the two runs");
    if (!parse_options(args, opts, pos)) return 0;
    if (files.size() != 2) throw InputError("diff: expected two stats files (or sweep points), got " + std::to_string(files.size()));
    const Run a = load(files[0]), b = load(files[1]);

    std::map<std::string, json> ca, cb, sa, sb;
    if (a.stats.contains("config")) flatten(a.stats["config"], "", ca);
    if (b.stats.contains("config")) flatten(b.stats["config"], "", cb);
    json sa_j = a.stats, sb_j = b.stats;
    sa_j.erase("config");
    sb_j.erase("config");
    sa_j.erase("version");
    sb_j.erase("version");
    flatten(sa_j, "", sa);
    flatten(sb_j, "", sb);
    const std::vector<Change> config = changes(ca, cb);
    std::vector<Change> metrics = changes(sa, sb);
    std::stable_sort(metrics.begin(), metrics.end(), [](const Change& x, const Change& y) { return std::fabs(x.rel) > std::fabs(y.rel); });
    const auto oa = ops_by_name(a.stats), ob = ops_by_name(b.stats);
    const bool same_workload = workload_of(a.stats) == workload_of(b.stats);

    std::cout << fmt::format("npusim diff: A = {}, B = {}\n", a.file, b.file);
    if (!same_workload)
        std::cout << fmt::format("  different workloads (A: {}; B: {}): comparing what they have in common\n", workload_of(a.stats),
                                 workload_of(b.stats));
    std::cout << fmt::format("config: {} key{} differ{}\n", config.size(), config.size() == 1 ? "" : "s", config.size() == 1 ? "s" : "");
    for (const auto& c : config) std::cout << fmt::format("  {:<44} {} -> {}\n", c.key, text(c.a), text(c.b));
    // The run's length first; per-core keys only with --all.
    std::vector<const Change*> listed;
    for (const auto& c : metrics)
        if (c.key == "total_cycles") listed.push_back(&c);
    for (const auto& c : metrics)
        if (c.key != "total_cycles" && (all || (c.key.rfind("cores.", 0) != 0 && listed.size() < 25))) listed.push_back(&c);
    std::cout << fmt::format("statistics: {} changed{}\n", metrics.size(),
                             listed.size() < metrics.size()
                                 ? fmt::format(" (the run's length, then the {} that changed most but per core; --all for every one)",
                                               listed.size())
                                 : "");
    for (const Change* c : listed)
        std::cout << fmt::format("  {:<44} {:>14} -> {:<14} {}\n", c->key, text(c->a), text(c->b), delta_text(*c));
    std::vector<std::string> names;
    for (const auto& [n, op] : oa)
        if (ob.count(n)) names.push_back(n);
    std::sort(names.begin(), names.end(), [&](const std::string& x, const std::string& y) {
        return oa.at(x).value("busy_ns", 0.0) > oa.at(y).value("busy_ns", 0.0);
    });
    std::cout << fmt::format("ops: {} in both, {} only in A, {} only in B (busy us, A -> B; bound)\n", names.size(),
                             oa.size() - names.size(), ob.size() - names.size());
    for (std::size_t i = 0; i < names.size() && (all || i < 15); ++i) {
        const json &x = oa.at(names[i]), &y = ob.at(names[i]);
        const double bx = x.value("busy_ns", 0.0) / 1000, by = y.value("busy_ns", 0.0) / 1000;
        std::cout << fmt::format("  {:<36} {:>12.3f} -> {:<12.3f} {:>9} {} -> {}\n", names[i], bx, by,
                                 bx > 0 ? fmt::format("{:+.1f}%", 100 * (by - bx) / bx) : "", x.value("bound", "-"),
                                 y.value("bound", "-"));
    }

    if (!json_file.empty()) {
        const auto rows = [](const std::vector<Change>& v) {
            json r = json::array();
            for (const auto& c : v) {
                json e{{"key", c.key}, {"a", c.a}, {"b", c.b}};
                if (c.a.is_number() && c.b.is_number()) e["delta"] = c.delta;
                r.push_back(std::move(e));
            }
            return r;
        };
        json ops = json::array();
        for (const auto& n : names) ops.push_back(json{{"name", n}, {"a", oa.at(n)}, {"b", ob.at(n)}});
        const json doc{{"a", a.file}, {"b", b.file}, {"same_workload", same_workload}, {"config", rows(config)},
                       {"statistics", rows(metrics)}, {"ops", ops}};
        OutputFile out(json_file);
        out.stream() << doc.dump(1) << "\n";
        out.commit();
    }
    if (!csv_file.empty()) write_ops_csv(csv_file, oa, ob);
    return 0;
}

}  // namespace

}  // namespace npusim::cli
