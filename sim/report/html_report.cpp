// The data of the run and sweep reports; the page itself is in report_page.cpp.
#include "report/html_report.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/output_file.hpp"

namespace npusim::report {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const json* at_path(const json& j, const std::string& path) {
    const json* node = &j;
    std::size_t start = 0;
    for (;;) {
        const auto dot = path.find('.', start);
        const std::string seg = path.substr(start, dot - start);
        if (!node->is_object() || !node->contains(seg)) return nullptr;
        node = &(*node)[seg];
        if (dot == std::string::npos) return node;
        start = dot + 1;
    }
}

double num(const json& j, const std::string& path) {
    const json* v = at_path(j, path);
    return v && v->is_number() ? v->get<double>() : 0.0;
}

std::string bytes_text(double b) {
    if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
    if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
    if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
    return fmt::format("{:.0f} B", b);
}

std::string now_text() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return buf;
}

// Units in a reading order: cores, then their pipes, then memory.
json units_of(const json& stats) {
    json out = json::array();
    const json* units = at_path(stats, "units");
    if (!units || !units->is_object()) return out;
    std::vector<std::string> names;
    for (auto it = units->begin(); it != units->end(); ++it) names.push_back(it.key());
    auto rank = [](const std::string& n) {
        if (n == "cube") return 0;
        if (n.rfind("cube_", 0) == 0) return 1;
        if (n == "vector") return 2;
        if (n.rfind("vector_", 0) == 0) return 3;
        if (n == "scalar") return 4;
        if (n == "hbm" || n == "l2") return 6;
        return 5;
    };
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    for (const auto& n : names) {
        const json& u = (*units)[n];
        if (!u.is_object() || !u.contains("utilization")) continue;
        json e = {{"name", n}, {"utilization", u["utilization"]}};
        if (u.contains("busy_cycles")) e["busy_cycles"] = u["busy_cycles"];
        if (u.contains("count")) e["count"] = u["count"];
        out.push_back(e);
    }
    return out;
}

void write_text(const std::string& file, const std::string& text) {
    write_output_file(file, text);
}

// A run on several ranks (stats `ranks.*`, `mesh.*`), as label/value rows.
json system_rows(const json& stats) {
    json rows = json::array();
    if (!at_path(stats, "ranks.count")) return rows;
    rows.push_back({"ranks", fmt::format("{:.0f}; the last to finish: rank {:.0f}", num(stats, "ranks.count"), num(stats, "ranks.last"))});
    rows.push_back({"rank ends (min / mean / max)", fmt::format("{:.3f} / {:.3f} / {:.3f} µs", num(stats, "ranks.end_min_ns") / 1000.0,
                                                                 num(stats, "ranks.end_mean_ns") / 1000.0, num(stats, "total_ns") / 1000.0)});
    rows.push_back({"mesh", fmt::format("{} in {:.0f} writes ({:.1f}% headers), busiest link {:.1f}% busy, held by full receivers {:.3f} µs",
                                        bytes_text(num(stats, "mesh.bytes")), num(stats, "mesh.writes"),
                                        100 * num(stats, "mesh.header_overhead"), 100 * num(stats, "mesh.busiest_link_fraction"),
                                        num(stats, "mesh.backpressure_ns") / 1000.0)});
    rows.push_back({"stale reads", fmt::format("{:.0f}", num(stats, "memory_model.stale_reads"))});
    return rows;
}

// An LLM step's serving figures (stats `llm.*`), as label/value rows.
json serving_rows(const json& stats) {
    json rows = json::array();
    if (!at_path(stats, "llm.step_ns")) return rows;
    rows.push_back({"step", fmt::format("{:.3f} µs over {:.0f} layers (mean layer {:.3f} µs)", num(stats, "llm.step_ns") / 1000.0,
                                        num(stats, "llm.layers"), num(stats, "llm.layer_ns") / 1000.0)});
    if (at_path(stats, "llm.tpot_ns")) rows.push_back({"time per output token", fmt::format("{:.3f} µs", num(stats, "llm.tpot_ns") / 1000.0)});
    rows.push_back({"tokens/s per die", fmt::format("{:.0f}", num(stats, "llm.tokens_per_s_per_die"))});
    std::string shares;
    for (const char* k : {"matmul", "attention", "dispatch", "combine", "other"})
        shares += fmt::format("{}{} {:.1f}%", shares.empty() ? "" : ", ", k, 100 * num(stats, std::string("llm.op_time_shares.") + k));
    rows.push_back({"op time shares", shares});
    rows.push_back({"slowest die / mean", fmt::format("{:.3f}", num(stats, "llm.rank_imbalance"))});
    rows.push_back({"micro-batch overlap", fmt::format("{:.1f}%", 100 * num(stats, "llm.microbatch_overlap"))});
    rows.push_back({"weights / KV cache per die", bytes_text(num(stats, "llm.weight_bytes_per_die")) + " / " +
                                                      bytes_text(num(stats, "llm.kv_cache_bytes_per_die"))});
    // Each layer as the run summary's table has it: its end and its time
    // from the previous layer's end.
    if (const json* ends = at_path(stats, "llm.layer_ends_ns"); ends && ends->is_array()) {
        double before = 0;
        for (std::size_t l = 0; l < ends->size(); ++l) {
            const double end = (*ends)[l].get<double>();
            rows.push_back({fmt::format("layer {}", l),
                            fmt::format("ends at {:.3f} µs, {:.3f} µs", end / 1000.0, (end - before) / 1000.0)});
            before = end;
        }
    }
    return rows;
}

// The host runtime's figures of a host run (stats `host.*`), as label/value rows.
json host_rows(const json& stats) {
    json rows = json::array();
    const json* host = at_path(stats, "host");
    if (!host || !host->is_object()) return rows;
    auto us = [&](const char* key) { return fmt::format("{:.3f} µs", num(stats, std::string("host.") + key) / 1000.0); };
    const json* mode = at_path(stats, "host.mode");
    rows.push_back({"mode", mode && mode->is_string() ? mode->get<std::string>() : "?"});
    rows.push_back({"end to end", us("end_to_end_ns")});
    rows.push_back({"host end / device end", us("host_end_ns") + " / " + us("device_end_ns")});
    rows.push_back({"first launch", us("first_launch_ns")});
    rows.push_back({"device busy / idle", fmt::format("{} / {:.1f}%", us("device_busy_ns"), 100 * num(stats, "host.device_idle_fraction"))});
    rows.push_back({"ops (on CPU)", fmt::format("{:.0f} ({:.0f})", num(stats, "host.ops"), num(stats, "host.cpu_ops"))});
    rows.push_back({"launches / submissions / descriptors",
                    fmt::format("{:.0f} / {:.0f} / {:.0f}", num(stats, "host.launches"), num(stats, "host.submissions"),
                                num(stats, "host.descriptors"))});
    rows.push_back({"drains / waits", fmt::format("{:.0f} ({}) / {:.0f} ({})", num(stats, "host.drains"), us("drain_ns"),
                                                   num(stats, "host.waits"), us("wait_ns"))});
    rows.push_back({"peak device memory", bytes_text(num(stats, "host.peak_device_memory_bytes"))});
    if (const json* threads = at_path(stats, "host.threads"); threads && threads->is_object())
        for (auto it = threads->begin(); it != threads->end(); ++it)
            if (it->is_object() && it->contains("utilization"))
                rows.push_back({"thread " + it.key(), fmt::format("busy {:.3f} µs ({:.1f}%)", (*it).value("busy_ns", 0.0) / 1000.0,
                                                                  100 * (*it).value("utilization", 0.0))});
    if (const json* stages = at_path(stats, "host.stages"); stages && stages->is_object()) {
        std::string text;
        for (auto it = stages->begin(); it != stages->end(); ++it)
            if (it->is_object())
                text += (text.empty() ? "" : ", ") + fmt::format("{} {:.3f} µs", it.key(), (*it).value("busy_ns", 0.0) / 1000.0);
        rows.push_back({"host stages (busy)", text});
    }
    return rows;
}

// What the critical path spent its time on, by resource, most first, each
// with the chip key that sets its capacity (hw/bound_by.hpp).
json bind_rows(const json& stats) {
    json rows = json::array();
    const json* binds = at_path(stats, "critical_path.binds");
    if (!binds || !binds->is_array()) return rows;
    for (const auto& b : *binds) {
        const std::string key = b.value("key", std::string());
        rows.push_back({b.value("resource", std::string()),
                        fmt::format("{:.1f}% of the critical path ({:.3f} µs){}", 100 * b.value("share", 0.0),
                                    b.value("ns", 0.0) / 1000.0, key.empty() ? "" : "; set by " + key)});
    }
    return rows;
}

// --what-would-help's re-runs, most saved first: the key doubled and the
// run's change.
json help_rows(const json& stats) {
    json rows = json::array();
    const json* res = at_path(stats, "what_would_help.resources");
    if (!res || !res->is_object()) return rows;
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [name, e] : res->items()) order.emplace_back(e.value("change", 1e9), name);
    std::stable_sort(order.begin(), order.end());
    for (const auto& [change, name] : order) {
        const json& e = (*res)[name];
        const std::string what = fmt::format("{} {} → {}", e.value("key", std::string()), e.value("from", json()).dump(),
                                             e.value("to", json()).dump());
        rows.push_back({name, e.contains("change") ? fmt::format("{}: {:+.1f}% run time", what, 100 * change)
                                                   : fmt::format("{}: did not run ({})", what, e.value("error", std::string()))});
    }
    return rows;
}

}  // namespace

void write_run_report(const std::string& out_file, const json& stats, const std::string& trace_file,
                      const std::string& workload_label, const std::vector<std::string>& sets) {
    const json* cfg = at_path(stats, "config");
    const std::string chip = cfg && at_path(*cfg, "chip.name") ? at_path(*cfg, "chip.name")->get<std::string>() : "?";
    json d;
    d["kind"] = "run";
    d["title"] = fmt::format("npusim run: {} on {}", workload_label, chip);
    d["generated"] = now_text();
    const double clock = num(stats, "clock_ghz");
    json summary = json::array();
    summary.push_back({"chip", fmt::format("{} ({} cube + {} vector cores, {} GHz)", chip,
                                           cfg ? num(*cfg, "chip.cores.cube.count") : 0,
                                           cfg ? num(*cfg, "chip.cores.vector.count") : 0, clock)});
    summary.push_back({"workload", workload_label});
    std::string set_text;
    for (const auto& x : sets) set_text += (set_text.empty() ? "" : ", ") + x;
    summary.push_back({"--set", set_text.empty() ? "(none)" : set_text});
    if (const json* v = at_path(stats, "version"); v && v->is_string()) summary.push_back({"npusim version", v->get<std::string>()});
    summary.push_back({"total", fmt::format("{:.0f} cycles ({:.3f} µs)", num(stats, "total_cycles"),
                                            num(stats, "total_ns") / 1000.0)});
    summary.push_back({"tasks", fmt::format("{:.0f} on {:.0f} streams", num(stats, "tasks.count"), num(stats, "tasks.streams"))});
    summary.push_back({"events", fmt::format("{:.0f}, waited {:.0f} cycles in total", num(stats, "events.count"),
                                             num(stats, "events.wait_cycles"))});
    summary.push_back({"overlap.cube_vector", fmt::format("{:.1f}%", 100 * num(stats, "overlap.cube_vector"))});
    summary.push_back({"L2 hit rate", fmt::format("{:.1f}%", 100 * num(stats, "memory.l2.hit_rate"))});
    summary.push_back({"HBM read / write", bytes_text(num(stats, "memory.hbm.read_bytes")) + " / " +
                                               bytes_text(num(stats, "memory.hbm.write_bytes"))});
    d["summary"] = summary;
    d["sets"] = sets;
    d["units"] = units_of(stats);
    d["host"] = host_rows(stats);
    d["system"] = system_rows(stats);
    d["serving"] = serving_rows(stats);
    for (const char* key : {"ops", "roofline", "critical_path"})
        if (const json* v = at_path(stats, key)) d[key] = *v;
    d["binds"] = bind_rows(stats);
    d["help"] = help_rows(stats);
    if (!trace_file.empty()) {
        json tracks = json::array();
        for (const auto& t : report_tracks(trace_file, 20)) {
            json slices = json::array();
            for (const auto& s : t.slices) slices.push_back({s.start_us, s.dur_us, s.name});
            tracks.push_back({{"name", t.name}, {"process", t.process}, {"busy_us", t.busy_us}, {"slices", slices}});
        }
        d["timeline"] = {{"end_us", num(stats, "total_ns") / 1000.0}, {"tracks", tracks}};
    }
    write_text(out_file, render_page(d["title"].get<std::string>(), d));
}

namespace {

// A response study's columns (study/points.hpp): change first (the charts'
// x), value, mode, stream, chip, workload, then the study's axes, each with
// the values its rows take ("applied" repeats "value" as set).
json response_axes(const json& rows, const json& study_axes) {
    json axes = json::array();
    if (rows.empty()) return axes;
    std::vector<std::string> order = {"change", "value", "mode", "stream", "chip", "workload"};
    for (const auto& a : study_axes) order.push_back(a.value("path", std::string()));
    for (const auto& key : order) {
        if (std::none_of(rows.begin(), rows.end(), [&](const json& r) { return r["axes"].contains(key); })) continue;
        json values = json::array();
        for (const auto& r : rows) {
            const json& v = r["axes"].contains(key) ? r["axes"][key] : json();
            if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
        }
        axes.push_back({{"path", key}, {"unit", ""}, {"values", values}});
    }
    return axes;
}

// The files, changes, modes and, when judged, the responses of a response study.
void add_response_summary(json& summary, const json& study, const std::string& dir) {
    auto names = [](const json& files) {
        std::string t;
        for (const auto& f : files)
            t += (t.empty() ? "" : ", ") + f.value("name", std::string()) + " (" + f.value("path", std::string()) + ")";
        return t;
    };
    if (study.contains("chips")) summary.push_back({"chips", names(study["chips"])});
    if (study.contains("workloads")) summary.push_back({"workloads", names(study["workloads"])});
    if (study.contains("changes")) {
        std::string t;
        for (const auto& c : study["changes"])
            t += (t.empty() ? "" : "; ") + c.value("path", std::string()) + ": " + c["values"].dump();
        summary.push_back({"changes (each alone)", t});
        summary.push_back({"modes", study.value("modes", json::array()).dump()});
    }
    if (!study.contains("expect")) return;
    const json& e = study["expect"];
    std::map<std::string, int> verdicts;
    std::string misses;
    std::ifstream in(dir + "/responses.jsonl", std::ios::binary);
    for (std::string line; std::getline(in, line);) {
        const json r = json::parse(line, nullptr, false);
        if (r.is_discarded() || !r.is_object()) continue;
        const std::string v = r.value("verdict", std::string());
        ++verdicts[v];
        if (v == "ok") continue;
        json key = r;
        for (const char* f : {"rule", "metric", "base", "changed", "before", "after", "factor", "sign", "lo", "hi",
                              "fractions", "stream", "applied"})
            key.erase(f);
        misses += (misses.empty() ? "" : "; ") + key.dump();
    }
    std::string counts;
    for (const auto& [v, n] : verdicts) counts += (counts.empty() ? "" : ", ") + fmt::format("{} {}", v, n);
    summary.push_back({"responses", fmt::format("rule {} on {} (tolerance {:g}): {}", e.value("rule", std::string()),
                                                e.value("metric", std::string()), e.value("tolerance", 0.0),
                                                counts.empty() ? "not judged yet" : counts)});
    if (!misses.empty()) summary.push_back({"misses", misses});
}

}  // namespace

void write_sweep_report(const std::string& out_file, const std::string& dir) {
    std::ifstream sin(dir + "/study.json", std::ios::binary);
    if (!sin) throw InputError(dir + "/study.json: cannot read (is this a sweep folder?)");
    const json study = json::parse(sin, nullptr, false);
    if (study.is_discarded() || !study.is_object()) throw InputError(dir + "/study.json: not valid JSON");

    json d;
    d["kind"] = "sweep";
    d["title"] = "npusim sweep: " + study.value("name", std::string("study"));
    d["generated"] = now_text();
    d["axes"] = study.value("axes", json::array());
    d["metrics"] = study.value("metrics", json::array());

    json rows = json::array();
    std::ifstream rin(dir + "/results.jsonl", std::ios::binary);
    std::string line;
    std::size_t ok = 0, failed = 0;
    while (std::getline(rin, line)) {
        const json r = json::parse(line, nullptr, false);
        if (r.is_discarded() || !r.is_object()) continue;
        (r.value("status", std::string()) == "ok" ? ok : failed)++;
        rows.push_back({{"index", r.value("index", 0)},
                        {"id", r.value("id", std::string())},
                        {"axes", r.value("axes", json::object())},
                        {"metrics", r.value("metrics", json::object())},
                        {"status", r.value("status", std::string())},
                        {"error", r.value("error", std::string())}});
        if (r.contains("version") && r["version"].is_string()) rows.back()["version"] = r["version"];
    }
    std::sort(rows.begin(), rows.end(), [](const json& a, const json& b) { return a["index"] < b["index"]; });

    // Per-unit utilisation of every finished point, from its statistics.
    std::vector<std::string> unit_names;
    std::vector<json> per_row;
    for (const auto& r : rows) {
        json util = json::object();
        std::ifstream st(dir + "/points/" + r["id"].get<std::string>() + "/stats.json", std::ios::binary);
        if (st && r["status"] == "ok") {
            const json s = json::parse(st, nullptr, false);
            if (!s.is_discarded())
                for (const auto& u : units_of(s)) {
                    const std::string n = u["name"];
                    util[n] = u["utilization"];
                    if (std::find(unit_names.begin(), unit_names.end(), n) == unit_names.end()) unit_names.push_back(n);
                }
        }
        per_row.push_back(util);
    }
    json table = json::array();
    for (const auto& util : per_row) {
        json cells = json::array();
        for (const auto& n : unit_names) cells.push_back(util.contains(n) ? util[n] : json());
        table.push_back(cells);
    }
    d["rows"] = rows;
    d["unit_names"] = unit_names;
    d["unit_util"] = table;
    if (study.contains("changes") || study.contains("chips") || study.contains("workloads"))
        d["axes"] = response_axes(rows, study.value("axes", json::array()));

    json summary = json::array();
    summary.push_back({"study", study.value("study_file", std::string())});
    if (study.contains("notes")) summary.push_back({"notes", study["notes"]});
    summary.push_back({"chip", study.value("chip", std::string())});
    summary.push_back({"workload", study.value("workload", std::string())});
    std::string set_text;
    if (study.contains("set") && study["set"].is_object())
        for (auto it = study["set"].begin(); it != study["set"].end(); ++it)
            set_text += (set_text.empty() ? "" : ", ") + it.key() + "=" + it->dump();
    summary.push_back({"set", set_text.empty() ? "(nothing)" : set_text});
    std::string axes_text;
    for (const auto& a : study.value("axes", json::array()))
        axes_text += (axes_text.empty() ? "" : "; ") + a.value("path", std::string()) +
                     (a.value("unit", std::string()).empty() ? "" : " (" + a["unit"].get<std::string>() + ")") + ": " +
                     a.value("values", json::array()).dump();
    summary.push_back({"axes", axes_text.empty() ? std::string("(none)")
                                                 : axes_text + " — combined by " + study.value("combine", std::string("grid"))});
    add_response_summary(summary, study, dir);
    summary.push_back({"points", fmt::format("{} in the study, {} ok, {} failed, {} not run", study.value("points", 0), ok,
                                             failed, std::max(0, study.value("points", 0) - static_cast<int>(ok + failed)))});
    summary.push_back({"folder", fs::absolute(dir).lexically_normal().string()});
    for (const auto& r : d["rows"])  // the version of npusim that ran the points, when rows carry it
        if (r.contains("version")) {
            summary.push_back({"npusim version", r["version"]});
            break;
        }
    d["summary"] = summary;
    write_text(out_file, render_page(d["title"].get<std::string>(), d));
}

}  // namespace npusim::report
