// The critical path and the per-op table in the statistics of `npusim run`,
// on cases whose answer is known: an over-synchronised stream (the lint's
// example), a memory-bound copy, a host-bound model.
#include <catch2/catch.hpp>

#include <map>
#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json", kA2 = kSrc + "/configs/chips/a2.json";

double kind_ns(const json& cp, const std::string& kind) { return cp["by_kind"].value(kind, 0.0); }

// The path tiles [0, total] with no gap or overlap and its kinds add up to it.
void check_contiguous(const json& cp, double total_ns) {
    REQUIRE(cp["segments_omitted"] == 0);
    const json& segs = cp["segments"];
    REQUIRE(!segs.empty());
    CHECK(segs.front()["start_ns"].get<double>() == 0.0);
    CHECK(segs.back()["end_ns"].get<double>() == Approx(total_ns).epsilon(1e-12));
    for (std::size_t i = 1; i < segs.size(); ++i) {
        INFO("segment " << i << ": " << segs[i].dump());
        CHECK(segs[i]["start_ns"].get<double>() == Approx(segs[i - 1]["end_ns"].get<double>()).margin(1e-6));
        CHECK(segs[i]["end_ns"].get<double>() > segs[i]["start_ns"].get<double>());
    }
    double sum = 0;
    for (const auto& [k, v] : cp["by_kind"].items()) sum += v.get<double>();
    CHECK(sum == Approx(total_ns).epsilon(1e-9));
    CHECK(cp["total_ns"].get<double>() == Approx(total_ns).epsilon(1e-12));
}

// The lint example without its redundant event: no task waits for conv_done.
std::string without_conv_done(const TempDir& tmp) {
    std::string text = slurp(kSrc + "/traces/lint_concat_oversync.jsonl"), out;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t nl = text.find('\n', at);
        if (nl == std::string::npos) nl = text.size();
        json line = json::parse(text.substr(at, nl - at));
        at = nl + 1;
        if (line.contains("event") && line["event"] == "conv_done") continue;
        for (const char* list : {"wait", "signal"}) {
            if (!line.contains(list)) continue;
            json kept = json::array();
            for (const auto& e : line[list])
                if (e != "conv_done") kept.push_back(e);
            line[list] = kept;
        }
        out += line.dump() + "\n";
    }
    return tmp.write("no_conv_done.jsonl", out);
}

}  // namespace

TEST_CASE("critical path: the over-synchronised lint stream's path runs through the redundant event", "[critical_path]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kAx300, kSrc + "/traces/lint_concat_oversync.jsonl");
    const json& cp = s["critical_path"];
    check_contiguous(cp, s["total_ns"].get<double>());
    // Pooling on the path was held back by conv_done (it waited for every conv
    // tile) and the path starts in the conv that set it last.
    int held = 0;
    for (const auto& g : cp["segments"]) held += g.value("waited", std::string()) == "conv_done" ? 1 : 0;
    CHECK(held >= 1);
    CHECK(cp["segments"].front()["op"] == "conv");
    CHECK(cp["segments"].back()["op"] == "concat");

    // Without the event the run is shorter and nothing on its path waits for it.
    const json fixed = run_for_stats(tmp, kAx300, without_conv_done(tmp));
    CHECK(fixed["total_ns"].get<double>() < 0.9 * s["total_ns"].get<double>());
    check_contiguous(fixed["critical_path"], fixed["total_ns"].get<double>());
    CHECK_THAT(fixed["critical_path"].dump(), !Contains("conv_done"));
}

TEST_CASE("critical path: a memory-bound copy is data movement, and halving HBM bandwidth doubles it", "[critical_path]") {
    TempDir tmp;
    const std::string copy = kSrc + "/traces/copy_48core.jsonl";
    const json s = run_for_stats(tmp, kA2, copy);
    const json& cp = s["critical_path"];
    const double total = s["total_ns"].get<double>();
    check_contiguous(cp, total);
    CHECK(kind_ns(cp, "data_movement") > 0.95 * total);
    CHECK(kind_ns(cp, "compute") == 0.0);
    // One op, on all 48 vector cores, memory bound; its bytes are what its
    // tasks move in and out (192 tasks of 1 MiB each way).
    REQUIRE(s["ops"].size() == 1);
    const json& op = s["ops"][0];
    CHECK(op["name"] == "copy");
    CHECK(op["tasks"] == 192);
    CHECK(op["cores"] == 48);
    CHECK(op["bound"] == "memory");
    CHECK(op["bytes"] == 192ull * 2 * 1048576);
    CHECK(op["flops"] == 0.0);

    const json half = run_for_stats(tmp, kA2, copy, {"chip.hbm.bandwidth_gbps=800"});
    CHECK(kind_ns(half["critical_path"], "data_movement") ==
          Approx(2 * kind_ns(cp, "data_movement")).epsilon(0.05));
}

TEST_CASE("critical path: a host-bound model in sync mode is host time, end to end", "[critical_path][host]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kAx300, kSrc + "/models/host_smallops.json", {"workload.host_mode=sync"});
    const json& cp = s["critical_path"];
    const double e2e = s["host"]["end_to_end_ns"].get<double>();
    // The host ends the run, and the run's length (the headline total) is there.
    REQUIRE(e2e > s["host"]["device_end_ns"].get<double>());
    CHECK(s["total_ns"].get<double>() == e2e);
    check_contiguous(cp, e2e);
    CHECK(kind_ns(cp, "host") > 0.9 * e2e);
    // Device steps on the path were released by the host.
    int released = 0;
    for (const auto& g : cp["segments"]) released += g.value("after", std::string()) == "host" ? 1 : 0;
    CHECK(released >= 1);
    // The host part split by stage: one host thread, so its stages on the
    // path are nearly all of its stage time (host.breakdown), and they add up
    // to the path's host time.
    const json& stages = cp.at("host_stages");
    double sum = 0;
    for (const auto& [k, v] : stages.items()) sum += v.get<double>();
    CHECK(sum == Approx(kind_ns(cp, "host")).epsilon(1e-9));
    for (const char* stage : {"frontend", "infer", "resize", "launch"}) {
        CAPTURE(stage);
        const double on_path = stages.value(stage, 0.0);
        const double total = s["host"]["breakdown"][std::string(stage) + "_ns"].get<double>();
        CHECK(on_path > 0);
        CHECK(on_path <= total * (1 + 1e-9));
        CHECK(on_path > 0.7 * total);
    }
    bool staged = false;
    for (const auto& g : cp["segments"]) staged = staged || (g["kind"] == "host" && g.contains("stage"));
    CHECK(staged);
}

TEST_CASE("critical path: in pipeline mode the host part follows the launch thread's stages", "[critical_path][host]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kAx300, kSrc + "/models/host_smallops.json", {"workload.host_mode=pipeline"});
    const json& cp = s["critical_path"];
    const json& stages = cp.at("host_stages");
    double sum = 0;
    for (const auto& [k, v] : stages.items()) sum += v.get<double>();
    CHECK(sum == Approx(kind_ns(cp, "host")).epsilon(1e-9));
    // The launch thread launches; where it waited for the resize thread, its
    // time is idle.
    CHECK(stages.value("launch", 0.0) > 0);
    CHECK(stages.value("frontend", 0.0) == 0);
    // The run summary names them.
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/models/host_smallops.json", "--set",
                                      "workload.host_mode=pipeline"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("host stages on it:") && Contains(" launch "));
}

TEST_CASE("ops: the ConvBNReLU reference lists every op with its tasks, cores, FLOPs and what bound it", "[critical_path]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kAx300, kSrc + "/traces/convbnrelu_tile.jsonl");
    // The stream's own task counts and matmul FLOPs per op, from the file.
    std::map<std::string, int> tasks;
    std::map<std::string, double> flops;
    const std::string text = slurp(kSrc + "/traces/convbnrelu_tile.jsonl");
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t nl = text.find('\n', at);
        if (nl == std::string::npos) nl = text.size();
        const json t = json::parse(text.substr(at, nl - at));
        at = nl + 1;
        if (!t.contains("id")) continue;
        const std::string op = t.value("op", std::string(t["kernel"]));
        ++tasks[op];
        if (t["kernel"] == "matmul") flops[op] += 2.0 * t["params"]["m"].get<double>() * t["params"]["n"].get<double>() *
                                                 t["params"]["k"].get<double>();
    }
    REQUIRE(s["ops"].size() == tasks.size());
    double prev_busy = 1e300, busy_sum = 0;
    for (const auto& op : s["ops"]) {
        INFO(op.dump());
        const std::string name = op["name"];
        CHECK(op["tasks"] == tasks[name]);
        CHECK(op["cores"].get<int>() >= 1);
        CHECK(op["cores"].get<int>() <= 4);
        CHECK(op["end_ns"].get<double>() <= s["total_ns"].get<double>());
        CHECK(op["busy_ns"].get<double>() <= prev_busy);  // longest first
        prev_busy = op["busy_ns"].get<double>();
        busy_sum += prev_busy;
        if (flops.count(name)) {
            CHECK(op["flops"].get<double>() == Approx(flops[name]));
            CHECK(op["bound"] == "compute");  // the conv keeps the Cube's M pipe busiest
        }
    }
    // Busy time per op adds up to the cores' busy time.
    const double core_busy_ns = (s["units"]["cube"]["busy_cycles"].get<double>() + s["units"]["vector"]["busy_cycles"].get<double>()) /
                                s["clock_ghz"].get<double>();
    CHECK(busy_sum == Approx(core_busy_ns).epsilon(1e-3));
    CHECK(s["roofline"]["cube_flops_per_s"].get<double>() == Approx(2.0 * 4 * 16 * 16 * 16 * 1e9));
}

TEST_CASE("critical path: the run summary names its kinds and top ops, and the trace has a critical path track", "[critical_path]") {
    TempDir tmp;
    const std::string trace = tmp.path("trace.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/traces/lint_concat_oversync.jsonl",
                                      "--trace", trace});
    SHOW(r);
    REQUIRE(r.code == 0);
    // The path spans the whole run (21558 cycles at 1 GHz).
    CHECK_THAT(r.out, Contains("total        21558 cycles  (21.558 us)"));
    CHECK_THAT(r.out, Contains("critical path 21.558 us:  compute"));
    CHECK_THAT(r.out, Contains("compute conv1 (conv)"));
    CHECK_THAT(r.out, Contains("ops on it: "));
    CHECK_THAT(r.out, Contains("ops (top 4 of 4)"));
    CHECK_THAT(r.out, Contains("    conv "));
    // The track: slices that add up to the run, on a thread of its own.
    const json t = read_json(trace);
    int tid = -1;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "critical path") tid = e["tid"];
    REQUIRE(tid >= 0);
    double dur = 0;
    int slices = 0;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == tid && e["pid"] == 1) {
            dur += e["dur"].get<double>();
            ++slices;
        }
    CHECK(slices >= 5);
    // Slices on whole-ns boundaries that abut: the path's 21558 ns.
    CHECK(dur == Approx(21.558).epsilon(1e-6));
}

TEST_CASE("critical path: a MoE Dispatch run follows its last core's phases, with its waits on the mesh", "[critical_path][moe]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kSrc + "/configs/chips/a3-supernode.json", kSrc + "/models/moe_dispatch.json",
                                 {"chip.interconnect.ranks=16"});
    const json& cp = s["critical_path"];
    check_contiguous(cp, s["total_ns"].get<double>());
    CHECK(kind_ns(cp, "mesh") > 0);
    // The Dispatch program's task, phase by phase, in the optimized variant's order.
    std::vector<std::string> phases;
    for (const auto& g : cp["segments"]) {
        const std::string phase = g.value("phase", std::string());
        if (phase.empty()) continue;
        CHECK(g["op"] == "dispatch");
        if (phases.empty() || phases.back() != phase) phases.push_back(phase);
    }
    const std::vector<std::string> order = {"bitmap", "counts", "cumsum", "send", "reorder"};
    REQUIRE(phases.size() >= 4);
    CHECK(std::is_sorted(phases.begin(), phases.end(), [&](const std::string& a, const std::string& b) {
        return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
    }));
    CHECK(phases.front() == "bitmap");
    CHECK(phases.back() == "reorder");
    CHECK(cp["segments"][1]["task"] == cp["segments"].back()["task"]);
}

TEST_CASE("critical path: every bundled workload's path runs from 0 to its end with no gap, on both chips", "[slow][critical_path]") {
    TempDir tmp;
    for (const char* chip : {"ax300", "a2"})
        for (const char* w : {"models/convbnrelu.json", "models/bert_layer.json", "models/segnet.json", "models/llm_decode.json",
                              "models/host_hetero.json", "traces/convbnrelu_op.jsonl", "traces/convbnrelu_tile.jsonl"}) {
            INFO(w << " on " << chip);
            const json s = run_for_stats(tmp, kSrc + "/configs/chips/" + chip + ".json", kSrc + "/" + w);
            const double end = s.contains("host") ? s["host"]["end_to_end_ns"].get<double>() : s["total_ns"].get<double>();
            check_contiguous(s["critical_path"], end);
            // Every task on the path belongs to an op of the table.
            std::set<std::string> ops;
            for (const auto& o : s["ops"]) ops.insert(o["name"].get<std::string>());
            for (const auto& g : s["critical_path"]["segments"])
                if (!g["op"].is_null()) CHECK(ops.count(g["op"].get<std::string>()) == 1);
        }
}
