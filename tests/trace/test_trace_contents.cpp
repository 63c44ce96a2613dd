// What a trace holds beyond slices (docs/statistics.md "Trace"): the filters
// that keep a large trace small (--trace-window, --trace-ops, --trace-cores,
// --trace-ranks critical), the work each pipe slice says it did, queue-depth
// counters, and on a supernode the mesh's rate counters and the arrows from
// a write's task on one rank to the task its landing released on another.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kSuper = kSrc + "/configs/chips/a3-supernode.json";
const std::string kConvBnRelu = kSrc + "/models/convbnrelu.json";

struct Trace {
    json doc;
    std::map<std::pair<int, int>, std::string> tracks;  // (pid, tid) -> thread name
    std::vector<json> slices, counters, flows;

    explicit Trace(const std::string& file) : doc(read_json(file)) {
        for (const auto& e : doc["traceEvents"]) {
            const std::string ph = e.value("ph", "");
            if (ph == "M" && e.value("name", "") == "thread_name") tracks[{e["pid"], e["tid"]}] = e["args"]["name"];
            if (ph == "X") slices.push_back(e);
            if (ph == "C") counters.push_back(e);
            if (ph == "s") flows.push_back(e);
        }
    }
    std::string track(const json& e) const {
        const auto it = tracks.find({e["pid"].get<int>(), e["tid"].get<int>()});
        return it == tracks.end() ? "" : it->second;
    }
    static bool on_core(const std::string& track) { return track.rfind("cube", 0) == 0 || track.rfind("vector", 0) == 0; }
};

Trace traced_run(const TempDir& tmp, const std::string& name, std::vector<std::string> args) {
    const std::string file = tmp.path(name);
    args.insert(args.end(), {"--trace", file, "-q"});
    args.insert(args.begin(), "run");
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return Trace(file);
}

double us(const json& v) { return v.get<double>(); }

}  // namespace

TEST_CASE("trace filters: a window, ops and cores keep only what they select, arrows included", "[trace]") {
    TempDir tmp;
    const std::vector<std::string> base = {"--chip", kAx300, "--workload", kConvBnRelu};
    const Trace all = traced_run(tmp, "all.json", base);

    std::vector<std::string> w = base;
    w.insert(w.end(), {"--trace-window", "5:10"});
    const Trace win = traced_run(tmp, "w.json", w);
    REQUIRE(!win.slices.empty());
    CHECK(win.slices.size() < all.slices.size());
    for (const auto& s : win.slices) {
        CHECK(us(s["ts"]) + us(s["dur"]) >= 5.0 - 1e-9);
        CHECK(us(s["ts"]) <= 10.0 + 1e-9);
    }
    for (const auto& c : win.counters) CHECK((us(c["ts"]) >= 5.0 - 1e-9 && us(c["ts"]) <= 10.0 + 1e-9));

    std::vector<std::string> o = base;
    o.insert(o.end(), {"--trace-ops", "conv*"});
    const Trace ops = traced_run(tmp, "o.json", o);
    std::size_t conv_slices = 0, conv_in_all = 0;
    for (const auto& s : all.slices)
        if (Trace::on_core(all.track(s)) && s["name"].get<std::string>().rfind("conv", 0) == 0) ++conv_in_all;
    for (const auto& s : ops.slices)
        if (Trace::on_core(ops.track(s))) {
            CHECK_THAT(s["name"].get<std::string>(), Catch::Matchers::StartsWith("conv"));
            ++conv_slices;
        }
    CHECK(conv_slices == conv_in_all);  // all of them, and only them
    CHECK(conv_slices > 0);

    std::vector<std::string> c = base;
    c.insert(c.end(), {"--trace-cores", "cube0,vector1"});
    const Trace cores = traced_run(tmp, "c.json", c);
    std::set<std::string> names;
    for (const auto& [key, name] : cores.tracks) names.insert(name.substr(0, name.find('.')));
    CHECK(names.count("cube0"));
    CHECK(names.count("vector1"));
    CHECK_FALSE(names.count("cube1"));
    CHECK_FALSE(names.count("vector0"));
    CHECK(names.count("scalar0"));  // not a core's track: kept
    std::set<std::string> counters;
    for (const auto& e : cores.counters) counters.insert(e["name"].get<std::string>());
    CHECK(counters.count("cube0 L1 in use (KB)"));
    CHECK_FALSE(counters.count("cube1 L1 in use (KB)"));
    CHECK(counters.count("HBM bandwidth (GB/s)"));  // the die's own
    // Every arrow left joins two kept tracks.
    std::set<std::pair<int, int>> kept;
    for (const auto& [key, name] : cores.tracks) kept.insert(key);
    for (const auto& f : cores.flows) CHECK(kept.count({f["pid"].get<int>(), f["tid"].get<int>()}));

    // Every arrow of a filtered trace starts and ends inside a kept slice.
    for (const char* f : {"w.json", "o.json", "c.json"}) {
        const Result check = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/check_trace.py", tmp.path(f), "--quiet"});
        INFO(f);
        SHOW(check);
        CHECK(check.code == 0);
    }

    // A filter that selects nothing: a warning, no file (an older one at the
    // path removed), and the summary does not point at one.
    const std::string none = tmp.write("none.json", "{\"stale\": true}");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--trace", none, "--trace-ops", "nosuchop"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("--trace-ops selected no slice") && Contains("no trace written"));
    CHECK_FALSE(std::filesystem::exists(none));
    CHECK_THAT(r.out, !Contains("trace  ->"));
}

TEST_CASE("trace filters: --trace-ops keeps a host's launch arrows and a kernel program's phases with their ops", "[trace]") {
    TempDir tmp;
    const Trace host = traced_run(tmp, "h.json", {"--chip", kA2, "--workload", kSrc + "/models/host_smallops.json", "--trace-ops", "b0.mul"});
    CHECK(!host.flows.empty());
    const Result check = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/check_trace.py", tmp.path("h.json"), "--quiet"});
    SHOW(check);
    CHECK(check.code == 0);  // no arrow ends on a slice the filter removed
    const Trace moe = traced_run(tmp, "m.json", {"--chip", kSuper, "--workload", kSrc + "/models/moe_dispatch.json", "--set",
                                                 "chip.interconnect.ranks=16", "--trace-ranks", "0", "--trace-ops", "dispatch"});
    std::set<std::string> phases;
    for (const auto& s : moe.slices)
        if (s.value("cat", "") == "phase") phases.insert(s["name"].get<std::string>());
    CHECK(phases.count("send"));
    CHECK(phases.size() >= 3);
}

TEST_CASE("trace: --trace-ranks critical needs a trace and passes on a failing first run's message and exit code", "[trace][errors]") {
    TempDir tmp;
    const Result untraced = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/models/moe_dispatch.json",
                                             "--trace-ranks", "critical"});
    CHECK(untraced.code == 2);
    CHECK_THAT(untraced.err, Contains("--trace-ranks critical") && Contains("give --trace FILE"));
    const Result bad = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/models/moe_dispatch.json", "--set",
                                        "chip.interconnect.ranks=0", "--trace", tmp.path("t.json"), "--trace-ranks", "critical"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("chip.interconnect.ranks"));
    const Result one = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--trace", tmp.path("u.json"),
                                        "--trace-ranks", "critical"});
    CHECK(one.code == 2);
    CHECK_THAT(one.err, Contains("only a run on several ranks"));
}

TEST_CASE("trace filters: bad values exit 2 naming the option", "[trace][errors]") {
    TempDir tmp;
    const std::vector<std::string> base = {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--trace", tmp.path("t.json")};
    const auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return run_npusim(tmp, a);
    };
    const Result core = with({"--trace-cores", "cube9"});
    CHECK(core.code == 2);
    CHECK_THAT(core.err, Contains("--trace-cores: 'cube9' is not a core of this chip") && Contains("cube0..cube3"));
    const Result back = with({"--trace-window", "30:10"});
    CHECK(back.code == 2);
    CHECK_THAT(back.err, Contains("--trace-window 30:10: the window ends before it starts"));
    const Result word = with({"--trace-window", "ten:20"});
    CHECK(word.code == 2);
    CHECK_THAT(word.err, Contains("'ten' is not a time in microseconds"));
    const Result empty = with({"--trace-ops", "conv*,"});
    CHECK(empty.code == 2);
    CHECK_THAT(empty.err, Contains("--trace-ops 'conv*,': an empty item"));
    const Result untraced = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--trace-ops", "conv*"});
    CHECK(untraced.code == 2);
    CHECK_THAT(untraced.err, Contains("--trace-ops: filters a trace; give --trace FILE"));
    const Result ranks = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--trace-ranks", "0"});
    CHECK(ranks.code == 2);
    CHECK_THAT(ranks.err, Contains("--trace-ranks: chooses what a trace holds; give --trace FILE"));
}

TEST_CASE("trace: pipe slices carry their bytes, FLOPs and L2 hits and misses, which add up to the run's", "[trace]") {
    TempDir tmp;
    const std::string stats = tmp.path("s.json");
    const Trace t = traced_run(tmp, "mm.json", {"--chip", kA2, "--workload", kSrc + "/models/matmul_2048.json", "--stats", stats});
    double flops = 0, hit = 0, miss = 0;
    std::size_t mte2 = 0;
    for (const auto& s : t.slices) {
        if (s.value("cat", "") != "pipe") continue;
        const json& a = s["args"];
        flops += a.value("flops", 0.0);
        hit += a.value("l2_hit_bytes", 0.0);
        miss += a.value("l2_miss_bytes", 0.0);
        if (t.track(s).size() > 5 && t.track(s).substr(t.track(s).size() - 5) == ".mte2") {
            ++mte2;
            CHECK(a.value("l2_hit_bytes", 0.0) + a.value("l2_miss_bytes", 0.0) == a.value("bytes", -1.0));
        }
    }
    CHECK(mte2 > 0);
    CHECK(flops == 2.0 * 2048 * 2048 * 2048);
    const json l2 = read_json(stats)["memory"]["l2"];
    CHECK(hit == l2["hit_bytes"].get<double>());
    CHECK(miss == l2["miss_bytes"].get<double>());
}

TEST_CASE("trace: ready-task and buffer counters rise and fall and end at zero, buffers within the chip's", "[trace]") {
    TempDir tmp;
    const Trace t = traced_run(tmp, "q.json", {"--chip", kAx300, "--workload", kConvBnRelu});
    const json chip = read_json(kAx300);
    const double l1_kb = chip["buffers"]["l1_kb"], ub_kb = chip["buffers"]["ub_kb"];
    std::map<std::string, double> buffer_last, buffer_peak;
    for (const auto& c : t.counters) {
        const std::string name = c["name"];
        if (name.find(" in use (KB)") == std::string::npos) continue;
        const double v = c["args"]["value"];
        CHECK(v >= 0);
        CHECK(v <= (name.find(" L1 ") != std::string::npos ? l1_kb : ub_kb));
        buffer_last[name] = v;
        buffer_peak[name] = std::max(buffer_peak[name], v);
    }
    CHECK(buffer_last.size() == 8);  // 4 Cube cores' L1, 4 Vector cores' UB
    for (const auto& [name, v] : buffer_last) {
        INFO(name);
        CHECK(v == 0);
        CHECK(buffer_peak[name] > 0);
    }
    std::map<std::string, double> last;
    std::size_t n = 0;
    for (const auto& c : t.counters) {
        const std::string name = c["name"];
        if (name.rfind("ready tasks (", 0) != 0) continue;
        ++n;
        CHECK(c["args"]["value"].get<double>() >= 0);
        last[name] = c["args"]["value"].get<double>();
    }
    CHECK(n > 0);
    CHECK(last.count("ready tasks (cube)"));
    CHECK(last.count("ready tasks (vector)"));
    for (const auto& [name, v] : last) CHECK(v == 0);
}

TEST_CASE("trace: a supernode run's link counters stay within the planes and integrate to the bytes sent, and landings draw arrows across ranks", "[trace][system]") {
    TempDir tmp;
    const Trace t = traced_run(tmp, "a.json", {"--chip", kSuper, "--workload", kSrc + "/models/collective_allreduce.json", "--set",
                                               "chip.interconnect.ranks=4", "--set", "workload.bytes=1048576", "--trace-ranks", "0-3"});
    // A die sends on all its planes at most (configs/chips/a3-supernode.json).
    const json ic = read_json(kSuper)["interconnect"];
    const double egress_gbps = ic["planes"].get<double>() * ic["intra_node"]["plane_bandwidth_gbps"].get<double>();
    double peak = 0, integral_gb_us = 0, prev_ts = 0, prev_v = 0;
    for (const auto& c : t.counters) {
        if (c["name"] != "intra tx (GB/s)" || c["pid"] != 1) continue;
        const double ts = us(c["ts"]), v = c["args"]["value"].get<double>();
        integral_gb_us += prev_v * (ts - prev_ts);
        prev_ts = ts, prev_v = v;
        peak = std::max(peak, v);
    }
    CHECK(peak > 0);
    CHECK(peak <= egress_gbps * (1 + 1e-9));
    CHECK(prev_v == 0);
    double sent = 0;
    for (const auto& s : t.slices)
        if (s["pid"] == 1 && s["name"] == "chunk out") sent += s["args"]["bytes"].get<double>();
    // GB/s x us = 1e3 B; the counter's steps are whole-ns times, the chunks' ps.
    CHECK(integral_gb_us * 1e3 == Approx(sent).epsilon(0.01));
    std::size_t across = 0;
    std::map<long long, int> from_pid;
    for (const auto& e : t.doc["traceEvents"]) {
        if (e.value("name", "") != "landed") continue;
        if (e["ph"] == "s") from_pid[e["id"].get<long long>()] = e["pid"];
        if (e["ph"] == "f" && from_pid.count(e["id"].get<long long>()) && from_pid[e["id"].get<long long>()] != e["pid"].get<int>())
            ++across;
    }
    CHECK(across > 0);
    const Result check = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/check_trace.py", tmp.path("a.json"), "--quiet"});
    SHOW(check);
    CHECK(check.code == 0);
}

TEST_CASE("trace: --trace-ranks critical keeps the ranks the critical path runs on", "[trace][system]") {
    TempDir tmp;
    const std::string stats = tmp.path("s.json");
    const std::vector<std::string> run = {"run", "--chip", kSuper, "--workload", kSrc + "/models/moe_dispatch.json", "--set",
                                          "chip.interconnect.ranks=16", "-q"};
    std::vector<std::string> a = run;
    a.insert(a.end(), {"--stats", stats});
    REQUIRE(run_npusim(tmp, a).code == 0);
    const json path_ranks = read_json(stats)["critical_path"]["ranks"];
    REQUIRE(!path_ranks.empty());
    std::vector<std::string> b = run;
    b.insert(b.end(), {"--trace", tmp.path("t.json"), "--trace-ranks", "critical"});
    const Result r = run_npusim(tmp, b);
    SHOW(r);
    REQUIRE(r.code == 0);
    const int first = path_ranks[0]["rank"];
    CHECK_THAT(r.err, Contains(fmt::format("--trace-ranks critical: ranks {}", first)));
    std::set<std::string> processes;
    const json trace = read_json(tmp.path("t.json"));
    for (const auto& e : trace["traceEvents"])
        if (e.value("name", "") == "process_name") processes.insert(e["args"]["name"]);
    CHECK(processes.count(fmt::format("rank {} (a3-supernode)", first)));
    CHECK(processes.size() == std::min<std::size_t>(path_ranks.size(), 8) + 1);  // and the critical path's own
}
