// Traces as viewers read them (docs/statistics.md "Trace"): Perfetto turns
// every ts and dur into whole nanoseconds (llround(x * 1000)) and computes a
// slice's end as ts + dur; speedscope adds ts + dur in floating point. Slices
// on one track must still nest or abut after that, and every flow arrow must
// start inside its slice. tools/check_trace.py does both conversions; these
// tests run it on the trace of every bundled workload.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
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
const std::string kCheckTrace = kSrc + "/tools/check_trace.py";

// Runs one workload with --trace and checks the trace as the viewers read it.
void check_trace_of(const std::string& chip, const std::string& workload, const std::vector<std::string>& sets,
                    bool expect_flows) {
    TempDir tmp;
    const std::string trace = tmp.path("trace.json");
    std::vector<std::string> args = {"run", "--chip", chip, "--workload", workload, "--trace", trace, "-q"};
    for (const auto& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const Result r = run_npusim(tmp, args);
    INFO(workload << " on " << chip);
    SHOW(r);
    REQUIRE(r.code == 0);
    std::vector<std::string> check = {kCheckTrace, trace, "--quiet"};
    if (expect_flows) check.push_back("--expect-flows");
    const Result c = run_program(tmp, "/usr/bin/python3", check);
    SHOW(c);
    CHECK(c.code == 0);
}

// llround(us * 1000), as Perfetto converts a trace time.
long long perfetto_ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

}  // namespace

TEST_CASE("trace: every bundled task stream reads in whole ns with nested slices and flows inside", "[trace]") {
    for (const char* stream : {"convbnrelu_op.jsonl", "convbnrelu_tile.jsonl", "lint_concat_oversync.jsonl"})
        check_trace_of(kAx300, kSrc + "/traces/" + stream, {}, true);
    check_trace_of(kA2, kSrc + "/traces/copy_48core.jsonl", {}, false);
}

TEST_CASE("trace: every bundled model on a2 reads in whole ns with nested slices and flows inside", "[slow][trace]") {
    for (const char* model : {"convbnrelu.json", "resnet50.json", "bert_layer.json", "segnet.json", "host_hetero.json",
                              "host_smallops.json", "llm_decode.json"})
        check_trace_of(kA2, kSrc + "/models/" + model, {}, true);
}

TEST_CASE("trace: ResNet-50 on ax300 (1 GHz, coupled cores) reads in whole ns", "[trace]") {
    check_trace_of(kAx300, kSrc + "/models/resnet50.json", {}, true);
}

TEST_CASE("trace: every host mode's trace reads in whole ns, host flows included", "[slow][trace][host]") {
    for (const char* mode : {"sync", "async", "pipeline", "hetero"})
        check_trace_of(kA2, kSrc + "/models/llm_decode.json", {std::string("workload.host_mode=") + mode}, true);
}

TEST_CASE("trace: the MoE dispatch's per-rank phases and link planes read in whole ns", "[slow][trace][moe]") {
    for (const char* variant : {"baseline", "optimized"})
        check_trace_of(kSrc + "/configs/chips/a3-supernode.json", kSrc + "/models/moe_dispatch.json",
                       {"chip.interconnect.ranks=8", std::string("workload.variant=") + variant}, false);
}

TEST_CASE("trace: neighbours on a track share their nanosecond boundary and flows start inside", "[trace]") {
    // On a2 (1.85 GHz) a cycle is 540.5 ps, so task and pipe boundaries fall
    // between nanoseconds; the old writer's picosecond fractions made 1 ns
    // overlaps once Perfetto rounded ts and dur apart.
    TempDir tmp;
    const std::string trace = tmp.path("t.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kSrc + "/models/convbnrelu.json", "--trace", trace, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json doc = read_json(trace);
    std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> tracks;
    std::size_t fractional = 0, abutting = 0, flows = 0, flows_inside = 0;
    for (const json& e : doc["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double ts_ns = e["ts"].get<double>() * 1000.0, dur_ns = e["dur"].get<double>() * 1000.0;
        // Whole ns to within the writer's binary grid (2^-30 us).
        if (std::abs(ts_ns - std::round(ts_ns)) > 1e-3 || std::abs(dur_ns - std::round(dur_ns)) > 1e-3) ++fractional;
        tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(perfetto_ns(e["ts"]),
                                                                        perfetto_ns(e["ts"]) + perfetto_ns(e["dur"]));
    }
    CHECK(fractional == 0);
    for (auto& [key, slices] : tracks) {
        std::sort(slices.begin(), slices.end());
        for (std::size_t i = 1; i < slices.size(); ++i) {
            if (slices[i].first == slices[i - 1].second) ++abutting;
            // Tasks and pipe stages on one track never overlap in this run.
            CHECK(slices[i].first >= slices[i - 1].second);
        }
    }
    CHECK(abutting > 10);  // back-to-back pipe stages: the case that used to overlap
    for (const json& e : doc["traceEvents"]) {
        if (e["ph"] != "s") continue;
        ++flows;
        const long long t = perfetto_ns(e["ts"]);
        for (const auto& [s, end] : tracks[{e["pid"].get<int>(), e["tid"].get<int>()}])
            if (s <= t && t < end) {
                ++flows_inside;
                break;
            }
    }
    CHECK(flows > 0);
    CHECK(flows_inside == flows);
}

TEST_CASE("trace: check_trace.py finds the 1 ns overlaps and late flows of picosecond-fraction times", "[trace]") {
    // What the writer used to emit: times with picosecond fractions of a µs.
    // Slices a and b abut at 1499.2 ns; Perfetto rounds a's ts (0.6 ns) and
    // dur (1498.6 ns) up apart, so a ends at 1 + 1499 = 1500 ns while b
    // starts at 1499 ns. The arrow 1 ps before c's end (2000.399 ns) becomes
    // 2000 ns, after c's end.
    TempDir tmp;
    const std::string header = R"({"traceEvents":[{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"die"}},)"
                               R"({"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"core"}},)"
                               R"({"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"core2"}},)";
    const std::string overlap = tmp.write("overlap.json", header +
        R"({"ph":"X","pid":1,"tid":1,"name":"a","ts":0.000600,"dur":1.498600},)"
        R"({"ph":"X","pid":1,"tid":1,"name":"b","ts":1.499200,"dur":1.000000}]})");
    const std::string late = tmp.write("late.json", header +
        R"({"ph":"X","pid":1,"tid":1,"name":"b","ts":2.000000,"dur":1.000000},)"
        R"({"ph":"X","pid":1,"tid":2,"name":"c","ts":0.000000,"dur":2.000400},)"
        R"({"ph":"s","id":1,"pid":1,"tid":2,"name":"release","cat":"event","ts":2.000399},)"
        R"({"ph":"f","bp":"e","id":1,"pid":1,"tid":1,"name":"release","cat":"event","ts":2.0005}]})");
    // The same slices with whole-ns times pass.
    const std::string fine = tmp.write("fine.json", header +
        R"({"ph":"X","pid":1,"tid":1,"name":"a","ts":0.001,"dur":1.498},)"
        R"({"ph":"X","pid":1,"tid":1,"name":"b","ts":1.499,"dur":1.0},)"
        R"({"ph":"X","pid":1,"tid":2,"name":"c","ts":0.0,"dur":2.0},)"
        R"({"ph":"s","id":1,"pid":1,"tid":2,"name":"release","cat":"event","ts":1.999},)"
        R"({"ph":"f","bp":"e","id":1,"pid":1,"tid":1,"name":"release","cat":"event","ts":2.0}]})");
    const Result o = run_program(tmp, "/usr/bin/python3", {kCheckTrace, overlap, "--quiet"});
    const Result l = run_program(tmp, "/usr/bin/python3", {kCheckTrace, late, "--quiet"});
    const Result f = run_program(tmp, "/usr/bin/python3", {kCheckTrace, fine, "--quiet"});
    SHOW(o);
    CHECK(o.code == 1);
    CHECK_THAT(o.err, Contains("[1, 1500) ns"));
    CHECK_THAT(o.err, Contains("whole ns as Perfetto reads them"));
    SHOW(l);
    CHECK(l.code == 1);
    CHECK_THAT(l.err, Contains("flow id 1"));
    CHECK_THAT(l.err, Contains("at 2000 ns is not inside"));
    SHOW(f);
    CHECK(f.code == 0);
}
