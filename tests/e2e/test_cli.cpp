// End-to-end tests of the npusim command line (docs/design.md §4.1, §4.4, §4.5):
// the binary is run as a user would run it; exit codes, messages on stderr,
// the stats JSON and the trace (checked by tools/check_trace.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "stats/stats_schema.hpp"
#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kTileStream = kSrc + "/traces/convbnrelu_tile.jsonl";
const std::string kOpStream = kSrc + "/traces/convbnrelu_op.jsonl";
const std::string kCopyStream = kSrc + "/traces/copy_48core.jsonl";
const std::string kCheckTrace = kSrc + "/tools/check_trace.py";

// One valid task line (a vector kernel) with the given id, stream, waits and extra params.
std::string task_line(const std::string& id, const std::string& stream, const std::string& wait = "[]",
                      const std::string& signal = "[]", const std::string& extra_params = "") {
    return R"({"id":")" + id + R"(","core_type":"vector","kernel":"vector","stream":")" + stream + R"(","wait":)" + wait +
           R"(,"signal":)" + signal + R"(,"params":{"bytes":4096)" + extra_params + "}}\n";
}

// The bundled ax300 chip file with one change applied.
std::string ax300_with(const TempDir& tmp, const std::string& name, void (*edit)(json&)) {
    json chip = read_json(kAx300);
    edit(chip);
    return tmp.write(name, chip.dump(2));
}

// Every bad-input case must fail without a crash and with one "npusim" message.
void check_bad_input(const Result& r, int code) {
    SHOW(r);
    CHECK(r.code == code);
    CHECK_THAT(r.err, Contains("npusim"));
    CHECK_THAT(r.err, !Contains("internal error"));
    CHECK_THAT(r.err, !Contains("terminate called"));
}

}  // namespace

TEST_CASE("cli: run on ax300 writes the stats of docs/design.md §4.4", "[cli]") {
    TempDir tmp;
    const std::string stats = tmp.path("stats.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", stats});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(r.out.empty());  // the human summary
    const json s = read_json(stats);

    REQUIRE(s.contains("total_cycles"));
    CHECK(s["total_cycles"].get<double>() > 0);
    REQUIRE(s.contains("total_ns"));
    CHECK(s["total_ns"].get<double>() > 0);
    // 1 GHz: one cycle per ns.
    CHECK(s["total_ns"].get<double>() == Approx(s["total_cycles"].get<double>()).epsilon(0.001));

    const double cube_util = s.at("units").at("cube").at("utilization").get<double>();
    CHECK(cube_util > 0);
    CHECK(cube_util <= 1);
    const double vector_util = s.at("units").at("vector").at("utilization").get<double>();
    CHECK(vector_util > 0);
    CHECK(vector_util <= 1);
    const double overlap = s.at("overlap").at("cube_vector").get<double>();
    CHECK(overlap >= 0);
    CHECK(overlap <= 1);
    CHECK(s.at("cores").at("cube0").at("busy_cycles").get<double>() > 0);
    CHECK(s.at("cores").at("vector0").at("busy_cycles").get<double>() > 0);
    CHECK(s.at("memory").at("hbm").at("read_bytes").get<double>() > 0);
    CHECK(s.at("events").at("count").get<double>() > 0);
    CHECK(s.at("tasks").at("count").get<int>() == 32 * 2);

    // The resolved configuration document is echoed for provenance.
    REQUIRE(s.contains("config"));
    CHECK(s["config"].at("chip").at("name") == "ax300");
    CHECK(s["config"].at("chip").at("cores").at("cube").at("count") == 4);
    CHECK(s["config"].at("chip").at("buffers").at("ub_kb") == 192);
    CHECK(s["config"].contains("workload"));
}

TEST_CASE("cli: run with op-level sync runs the same tasks, with less overlap", "[cli]") {
    TempDir tmp;
    const std::string op = tmp.path("op.json"), tile = tmp.path("tile.json");
    const Result r1 = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kOpStream, "--stats", op, "-q"});
    const Result r2 = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", tile, "-q"});
    SHOW(r1);
    REQUIRE(r1.code == 0);
    REQUIRE(r2.code == 0);
    CHECK(r1.out.empty());  // --quiet
    const json so = read_json(op), st = read_json(tile);
    CHECK(so.at("tasks").at("count") == 32 * 2);
    CHECK(so.at("total_cycles").get<double>() > 0);
    // docs/design.md §1.1: moving sync from op level to tile level raises Cube/Vector overlap.
    CHECK(st.at("overlap").at("cube_vector").get<double>() > so.at("overlap").at("cube_vector").get<double>());
}

TEST_CASE("cli: two runs with the same inputs write identical stats", "[cli]") {
    TempDir tmp;
    const std::string a = tmp.path("a.json"), b = tmp.path("b.json");
    for (const auto& out : {a, b}) {
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", out, "--quiet",
                                          "--set", "chip.hbm.bandwidth_gbps=800"});
        SHOW(r);
        REQUIRE(r.code == 0);
    }
    const std::string ta = slurp(a), tb = slurp(b);
    REQUIRE_FALSE(ta.empty());
    CHECK(ta == tb);
    CHECK(read_json(a).at("config").at("chip").at("hbm").at("bandwidth_gbps").get<double>() == 800);
}

TEST_CASE("cli: the trace of a run is valid for Perfetto and has the tracks of docs/design.md §4.5", "[cli][trace]") {
    TempDir tmp;
    const std::string trace = tmp.path("trace.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--trace", trace, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);

    const Result check = run_program(tmp, "python3", {kCheckTrace, trace, "--expect-flows"});
    {
        SHOW(check);
        CHECK(check.code == 0);
    }

    const json t = read_json(trace);
    REQUIRE(t.is_object());
    REQUIRE(t.contains("traceEvents"));
    std::set<std::string> threads, processes, counters;
    int task_slices = 0, slices_with_id = 0, flow_starts = 0, flow_ends = 0;
    for (const auto& e : t["traceEvents"]) {
        const std::string ph = e.at("ph");
        if (ph == "M" && e.at("name") == "thread_name") threads.insert(e.at("args").at("name").get<std::string>());
        if (ph == "M" && e.at("name") == "process_name") processes.insert(e.at("args").at("name").get<std::string>());
        if (ph == "X") {
            const std::string cat = e.value("cat", "");
            if (cat != "pipe" && cat != "dispatch") ++task_slices;
            if (e.contains("args") && e["args"].contains("id")) ++slices_with_id;
        }
        if (ph == "s") ++flow_starts;
        if (ph == "f") ++flow_ends;
        if (ph == "C") counters.insert(e.at("name").get<std::string>());
    }
    CAPTURE(threads, counters);
    CHECK(processes.size() == 1);
    for (const char* name : {"cube0", "cube3", "vector0", "vector3", "cube0.mte2", "cube0.m", "vector0.v",
                             "vector0.mte3"})
        CHECK(threads.count(name) == 1);
    CHECK(task_slices >= 64);
    CHECK(slices_with_id >= 64);
    CHECK(flow_starts > 0);
    CHECK(flow_starts == flow_ends);
    bool hbm = false, l2 = false;
    for (const auto& c : counters) {
        hbm = hbm || c.find("HBM") != std::string::npos;
        l2 = l2 || c.find("L2") != std::string::npos;
    }
    CHECK(hbm);
    CHECK(l2);
}

TEST_CASE("cli: traces of the op-level stream and of 48 copy cores on a2 are valid", "[cli][trace]") {
    TempDir tmp;
    const std::string op = tmp.path("op.json"), copy = tmp.path("copy.json");
    const Result r1 = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kOpStream, "--trace", op, "-q"});
    const Result r2 = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kCopyStream, "--trace", copy, "-q"});
    {
        SHOW(r1);
        REQUIRE(r1.code == 0);
    }
    {
        SHOW(r2);
        REQUIRE(r2.code == 0);
    }
    const Result c1 = run_program(tmp, "python3", {kCheckTrace, op, "--expect-flows", "--quiet"});
    {
        SHOW(c1);
        CHECK(c1.code == 0);
    }
    const Result c2 = run_program(tmp, "python3", {kCheckTrace, copy, "--quiet"});
    {
        SHOW(c2);
        CHECK(c2.code == 0);
    }
}

TEST_CASE("cli: check_trace.py rejects improperly nested slices and dangling flows", "[cli][trace]") {
    TempDir tmp;
    const std::string header =
        R"({"traceEvents":[{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"die"}},)"
        R"({"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"core"}},)";
    const std::string overlap =
        tmp.write("overlap.json", header + R"({"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":10},)"
                                           R"({"ph":"X","pid":1,"tid":1,"name":"b","ts":5,"dur":10}]})");
    const std::string dangling =
        tmp.write("dangling.json", header + R"({"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":10},)"
                                            R"({"ph":"s","id":7,"pid":1,"tid":1,"name":"r","cat":"e","ts":20}]})");
    const std::string garbage = tmp.write("garbage.json", "{\"traceEvents\": [");
    const Result a = run_program(tmp, "python3", {kCheckTrace, overlap, "--quiet"});
    const Result b = run_program(tmp, "python3", {kCheckTrace, dangling, "--quiet"});
    const Result c = run_program(tmp, "python3", {kCheckTrace, garbage, "--quiet"});
    SHOW(a);
    CHECK(a.code == 1);
    CHECK_THAT(a.err, Contains("nest"));
    CHECK(b.code == 1);
    CHECK_THAT(b.err, Contains("flow id 7"));
    CHECK(c.code == 2);
}

TEST_CASE("cli: malformed JSON in a chip file gives file:line:col and exit 2", "[cli][errors]") {
    TempDir tmp;
    const std::string chip = tmp.write("broken.json", "{\n  \"clock_ghz\": 1.0,\n  \"cores\": {\"cube\": {\"count\": 4,}}\n}\n");
    const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kTileStream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("broken.json:3:"));
}

TEST_CASE("cli: an unknown chip key gets a did-you-mean and exit 2", "[cli][errors]") {
    TempDir tmp;
    const std::string chip = ax300_with(tmp, "unknown_key.json", [](json& c) {
        c["hbm"]["bandwith_gbps"] = c["hbm"]["bandwidth_gbps"];
        c["hbm"].erase("bandwidth_gbps");
    });
    const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kTileStream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("unknown_key.json"));
    CHECK_THAT(r.err, Contains("bandwith_gbps"));
    CHECK_THAT(r.err, Contains("did you mean"));
    CHECK_THAT(r.err, Contains("bandwidth_gbps"));
}

TEST_CASE("cli: a chip value of the wrong type names the key path and exit 2", "[cli][errors]") {
    TempDir tmp;
    const std::string chip = ax300_with(tmp, "wrong_type.json", [](json& c) { c["cores"]["cube"]["count"] = "four"; });
    const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kTileStream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("wrong_type.json"));
    CHECK_THAT(r.err, Contains("cores.cube.count"));
    CHECK_THAT(r.err, Contains("four"));
}

TEST_CASE("cli: a negative bandwidth through --set names the key and exit 2", "[cli][errors]") {
    TempDir tmp;
    const Result r =
        run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.hbm.bandwidth_gbps=-5"});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("chip.hbm.bandwidth_gbps"));
    CHECK_THAT(r.err, Contains("-5"));
}

TEST_CASE("cli: a typo'd key in a task line names file:line and gets a did-you-mean", "[cli][errors]") {
    TempDir tmp;
    SECTION("top-level key") {
        const std::string stream = tmp.write(
            "typo.jsonl", task_line("t0", "s0") +
                              R"({"id":"t1","core_type":"vector","kernel":"vector","stream":"s0","wiat":[],"wait":[],"signal":[],"params":{"bytes":64}})"
                              "\n");
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("typo.jsonl:2"));
        CHECK_THAT(r.err, Contains("wiat"));
        CHECK_THAT(r.err, Contains("did you mean 'wait'"));
    }
    SECTION("kernel parameter") {
        const std::string stream = tmp.write(
            "typo.jsonl", task_line("t0", "s0") +
                              R"({"id":"t1","core_type":"vector","kernel":"vector","stream":"s0","wait":[],"signal":[],"params":{"bytse":64}})"
                              "\n");
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("typo.jsonl:2"));
        CHECK_THAT(r.err, Contains("t1"));
        CHECK_THAT(r.err, Contains("params.bytse"));
        CHECK_THAT(r.err, Contains("did you mean 'bytes'"));
    }
}

TEST_CASE("cli: malformed JSON in a stream line names file:line and exit 2", "[cli][errors]") {
    TempDir tmp;
    const std::string stream =
        tmp.write("broken.jsonl", task_line("t0", "s0") + task_line("t1", "s0") + R"({"id":"t2", "core_type":"vector")" "\n");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("broken.jsonl:3"));
    CHECK_THAT(r.err, Contains("JSON"));
}

TEST_CASE("cli: a footprint larger than UB names the task and both sizes, exit 2", "[cli][errors]") {
    TempDir tmp;
    // ax300 has 192 KB = 196608 B of UB; ask for 256 KB.
    const std::string stream =
        tmp.write("big.jsonl", task_line("small", "s0") + task_line("too_big", "s1", "[]", "[]", R"(,"ub_bytes":262144)"));
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("big.jsonl:2"));
    CHECK_THAT(r.err, Contains("too_big"));
    CHECK_THAT(r.err, Contains("262144"));
    CHECK((r.err.find("196608") != std::string::npos || r.err.find("192 KB") != std::string::npos));
}

TEST_CASE("cli: an event nobody signals is a deadlock naming the task and the event, exit 3", "[cli][errors]") {
    TempDir tmp;
    const std::string stream = tmp.write(
        "dead.jsonl", task_line("first", "s0", "[]", R"(["ev_ok"])") + task_line("second", "s1", R"(["ev_ok"])") +
                          task_line("stuck", "s2", R"(["ev_never"])") + task_line("after_stuck", "s2"));
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream, "--stats", tmp.path("s.json")});
    check_bad_input(r, 3);
    CHECK_THAT(r.err, Contains("deadlock"));
    CHECK_THAT(r.err, Contains("stuck"));
    CHECK_THAT(r.err, Contains("ev_never"));
}

TEST_CASE("cli: missing files name the file, exit 2", "[cli][errors]") {
    TempDir tmp;
    SECTION("chip") {
        const std::string missing = tmp.path("no_such_chip.json");
        const Result r = run_npusim(tmp, {"run", "--chip", missing, "--workload", kTileStream});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("no_such_chip.json"));
    }
    SECTION("workload") {
        const std::string missing = tmp.path("no_such_stream.jsonl");
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", missing});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("no_such_stream.jsonl"));
    }
}

TEST_CASE("cli: an unknown subcommand gets a did-you-mean, exit 2", "[cli][errors]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"rnu", "--chip", kAx300, "--workload", kTileStream});
    check_bad_input(r, 2);
    CHECK_THAT(r.err, Contains("rnu"));
    CHECK_THAT(r.err, Contains("did you mean 'run'"));
}

TEST_CASE("cli: a missing required option is named, exit 2", "[cli][errors]") {
    TempDir tmp;
    SECTION("--workload") {
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("--workload"));
    }
    SECTION("--chip") {
        const Result r = run_npusim(tmp, {"run", "--workload", kTileStream});
        check_bad_input(r, 2);
        CHECK_THAT(r.err, Contains("--chip"));
    }
}

TEST_CASE("cli: --help exits 0 and no arguments exits 2", "[cli]") {
    TempDir tmp;
    const Result help = run_npusim(tmp, {"--help"});
    {
        SHOW(help);
        CHECK(help.code == 0);
        CHECK_THAT(help.out, Contains("run"));
    }
    const Result none = run_npusim(tmp, {});
    {
        SHOW(none);
        CHECK(none.code == 2);
        CHECK_THAT(none.out + none.err, Contains("usage"));
    }
    const Result run_help = run_npusim(tmp, {"run", "--help"});
    {
        SHOW(run_help);
        CHECK(run_help.code == 0);
        CHECK_THAT(run_help.out, Contains("--chip"));
    }
}

TEST_CASE("cli: bench reports its event rate beside a plain SystemC loop's, and medians over runs", "[cli][bench]") {
    TempDir tmp;
    const Result human = run_npusim(tmp, {"bench", "--chip", kA2, "--tasks", "30000"});
    SHOW(human);
    REQUIRE(human.code == 0);
    for (const char* line : {"tasks/s", "events/s", "SystemC process activations", "plain SystemC", "ratio", "by wall clock",
                             "s CPU", "peak memory"})
        CHECK_THAT(human.out, Contains(line));

    const Result machine = run_npusim(tmp, {"bench", "--chip", kA2, "--tasks", "30000", "--machine"});
    SHOW(machine);
    REQUIRE(machine.code == 0);
    double tasks = 0, secs = 0, tps = 0, eps = 0, kb = 0, ratio = 0, wall_secs = 0, wall_ratio = 0;
    REQUIRE(std::sscanf(machine.out.c_str(),
                        "tasks=%lf sim_s=%lf tasks_per_s=%lf events_per_s=%lf peak_kb=%lf ratio=%lf sim_wall_s=%lf ratio_wall=%lf",
                        &tasks, &secs, &tps, &eps, &kb, &ratio, &wall_secs, &wall_ratio) == 8);
    CHECK(tasks == 30000);
    CHECK(eps > 5 * tps);  // a synthetic task is about 7 events (dispatch, start, stages, transfers)
    CHECK(ratio > 0.0);
    CHECK(ratio < 10.0);
    CHECK(wall_ratio > 0.0);
    CHECK(wall_ratio < 10.0);
    CHECK(secs > 0.0);
    CHECK(wall_secs > 0.0);
    CHECK(kb > 0);

    const Result runs = run_npusim(tmp, {"bench", "--chip", kA2, "--tasks", "3000", "--runs", "3"});
    SHOW(runs);
    REQUIRE(runs.code == 0);
    std::size_t rows = 0;
    for (std::size_t at = runs.out.find("\n      3000 "); at != std::string::npos; at = runs.out.find("\n      3000 ", at + 1)) ++rows;
    CHECK(rows == 3);
    CHECK_THAT(runs.out, Contains("\n    median "));  // right-aligned in 10 columns

    const Result bad = run_npusim(tmp, {"bench", "--runs", "0"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("--runs"));
}

TEST_CASE("cli: bench --compile and --moe measure each child's wall, CPU and peak memory", "[slow][cli][bench]") {
    TempDir tmp;
    const Result compile = run_npusim(tmp, {"bench", "--compile", "--chip", kA2, "--sizes", "10000"});
    SHOW(compile);
    REQUIRE(compile.code == 0);
    double tasks = 0, n = 0, wall = 0, cpu = 0, mb = 0, per_task = 0;
    const auto row = compile.out.find('\n');
    REQUIRE(row != std::string::npos);
    REQUIRE(std::sscanf(compile.out.c_str() + row, "%lf %lf %lf %lf %lf %lf", &tasks, &n, &wall, &cpu, &mb, &per_task) == 6);
    CHECK(tasks > 9000);
    CHECK(tasks <= 10000);
    CHECK(wall > 0);
    CHECK(mb > 1);
    CHECK(per_task == Approx(mb * 1024 * 1024 / tasks).epsilon(0.01));

    // 16 ranks instead of 288 keep it short; the bundled models are found
    // from the source tree.
    const std::string chip = tmp.write(
        "c16.json", R"({"extends": ")" + kSrc + R"(/configs/chips/a3-supernode.json", "interconnect": {"ranks": 16}})");
    const Result moe = run_program(tmp, "cd " + quote(kSrc) + " && " + quote(NPUSIM_BIN), {"bench", "--moe", "--chip", chip});
    SHOW(moe);
    REQUIRE(moe.code == 0);
    CHECK_THAT(moe.out, Contains("models/moe_dispatch.json") && Contains("models/moe_layer.json") &&
                            Contains("events/CPU s") && Contains("the die alone:"));
    // Two variants of each, each with its figures and a verdict against the
    // budget (what the verdict is depends on the machine: not asserted).
    std::size_t rows = 0;
    std::istringstream lines(moe.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("within") == std::string::npos && line.find("OVER") == std::string::npos) continue;
        double us = 0, wall = 0, cpu = 0, mb = 0, events = 0, rate = 0;
        char variant[32] = {};
        REQUIRE(std::sscanf(line.c_str(), "%31s %lf %lf %lf %lf %lf %lf", variant, &us, &wall, &cpu, &mb, &events, &rate) == 7);
        CHECK(us > 10);
        CHECK(events > 1000);
        CHECK(rate > 0);
        ++rows;
    }
    CHECK(rows == 4);
}

TEST_CASE("cli: bench --bytes prints simulated GM bytes per CPU second of a large GEMM and a contiguous copy", "[cli][bench]") {
    TempDir tmp;
    const Result r = run_program(tmp, "cd " + quote(kSrc) + " && " + quote(NPUSIM_BIN), {"bench", "--bytes", "--runs", "3"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("(median wall and CPU time of 3 runs each)"));
    struct Row {
        double us = 0, wall = 0, cpu = 0, mb = 0, rate = 0;
    };
    const auto row = [&](const std::string& name) {
        Row x;
        const auto at = r.out.find(name);
        REQUIRE(at != std::string::npos);
        REQUIRE(std::sscanf(r.out.c_str() + at + name.size(), "%lf %lf %lf %lf %lf", &x.us, &x.wall, &x.cpu, &x.mb, &x.rate) == 5);
        return x;
    };
    const Row gemm = row("2048^3 fp16 MatMul graph"), copy = row("384 MB contiguous copy");
    // The GEMM reads A and B (8 MiB each) and writes C (8 MiB) at the
    // least; the copy reads and writes 192 MiB each way (402.7 MB).
    CHECK(gemm.mb >= 3 * 8.388608);
    CHECK(copy.mb == Approx(2 * 201.326592).epsilon(0.01));
    CHECK(gemm.us > 0);
    CHECK(copy.us > 0);
    // The rate is computed before printing; CPU s (3 decimals) and GM MB (1
    // decimal) are rounded, so the rate lies within what their rounding allows.
    for (const Row& x : {gemm, copy}) {
        REQUIRE(x.cpu > 0.0005);
        CHECK(x.rate >= (x.mb - 0.05) * 1e6 / (x.cpu + 0.0005) - 1);
        CHECK(x.rate <= (x.mb + 0.05) * 1e6 / (x.cpu - 0.0005) + 1);
    }
    CHECK_THAT(r.out, Contains("stream KB") && Contains("budget 0.1 s, 1024 KB"));
}

TEST_CASE("cli: huge pages change speed only: identical stats with and without them", "[cli][bench]") {
    TempDir tmp;
    const std::string with = tmp.path("with.json"), without = tmp.path("without.json");
    const Result a = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", with, "-q"});
    const Result b = run_program(tmp, "NPUSIM_NO_HUGEPAGES=1 " + quote(NPUSIM_BIN),
                                 {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", without, "-q"});
    SHOW(a);
    SHOW(b);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(slurp(with) == slurp(without));
    const Result off = run_program(tmp, "NPUSIM_NO_HUGEPAGES=1 " + quote(NPUSIM_BIN), {"bench", "--chip", kA2, "--tasks", "2000"});
    SHOW(off);
    CHECK_THAT(off.out, Contains("huge pages      off"));
    // The re-executed process keeps the caller's environment, its own
    // glibc tunables included.
    const Result kept = run_program(tmp, "GLIBC_TUNABLES=glibc.malloc.tcache_count=7 " + quote(NPUSIM_BIN),
                                    {"bench", "--chip", kA2, "--tasks", "2000"});
    SHOW(kept);
    REQUIRE(kept.code == 0);
    const std::string thp = slurp("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!std::getenv("NPUSIM_NO_HUGEPAGES") && !thp.empty() && thp.find("[never]") == std::string::npos) {
        CHECK_THAT(kept.out,
                   Contains("huge pages      on (GLIBC_TUNABLES=glibc.malloc.tcache_count=7:glibc.malloc.hugetlb=1)"));
    } else {
        CHECK_THAT(kept.out, Contains("huge pages      off"));
    }
}

TEST_CASE("cli: README's sample summary and the statistics reference's examples are what a run prints", "[cli][docs]") {
    TempDir tmp;
    const auto run = [&](const std::string& stream, const std::string& name) {
        const Result r = run_program(tmp, "cd " + quote(tmp.dir.string()) + " && " + quote(NPUSIM_BIN),
                                     {"run", "--chip", kAx300, "--workload", stream, "--stats", "out/" + name, "--trace",
                                      "out/trace.json"});
        SHOW(r);
        REQUIRE(r.code == 0);
        return r.out + r.err;
    };
    const std::string printed = run(kTileStream, "stats.json");
    const json tile = read_json(tmp.path("out/stats.json"));
    run(kOpStream, "op.json");
    const json op = read_json(tmp.path("out/op.json"));

    // Every line of README's sample but the "..." elisions, in order, as printed.
    const std::string readme = slurp(kSrc + "/README.md");
    const std::string intro = "The run prints a short summary:\n\n```\n";
    const auto at = readme.find(intro);
    REQUIRE(at != std::string::npos);
    const std::string block = readme.substr(at + intro.size(), readme.find("```", at + intro.size()) - at - intro.size());
    std::vector<std::string> lines;
    {
        std::istringstream in(printed);
        for (std::string line; std::getline(in, line);) {
            while (!line.empty() && line.back() == ' ') line.pop_back();
            lines.push_back(line);
        }
    }
    std::size_t next = 0;
    std::istringstream sample(block);
    int compared = 0;
    for (std::string line; std::getline(sample, line);) {
        if (line.find_first_not_of(" .") == std::string::npos) continue;  // an elision
        CAPTURE(line);
        const auto it = std::find(lines.begin() + static_cast<std::ptrdiff_t>(next), lines.end(), line);
        REQUIRE(it != lines.end());
        next = static_cast<std::size_t>(it - lines.begin()) + 1;
        ++compared;
    }
    CHECK(compared >= 15);
    // README's op-level against tile-level sync figures.
    CHECK_THAT(readme, Contains(fmt::format("({} -> {} cycles)", op["total_cycles"].get<std::uint64_t>(),
                                            tile["total_cycles"].get<std::uint64_t>())));

    // The schema's examples (docs/statistics.md's Example column) are this
    // run's values: every numeric example of a key the run has.
    int examples = 0;
    for (const npusim::StatSpec& row : npusim::stat_keys()) {
        if (row.example.empty() || row.pattern.find_first_of("<{[") != std::string::npos) continue;
        json::json_pointer ptr("/" + std::regex_replace(row.pattern, std::regex("\\."), "/"));
        if (!tile.contains(ptr) || !tile[ptr].is_number()) continue;  // another run's key, or text
        CAPTURE(row.pattern, row.example);
        const double v = tile[ptr].get<double>(), ex = std::stod(row.example);
        // Examples of fractions are rounded to 4 decimals, the rest exact.
        CHECK(std::abs(v - ex) <= (tile[ptr].is_number_float() ? 5e-5 * std::max(1.0, std::abs(v)) : 0.0));
        ++examples;
    }
    CHECK(examples >= 35);
    // The Format section's example of per-core rounding.
    const std::string stats_md = slurp(kSrc + "/docs/statistics.md");
    std::uint64_t cores_sum = 0;
    for (int i = 0; i < 4; ++i) cores_sum += tile["cores"]["cube" + std::to_string(i)]["busy_cycles"].get<std::uint64_t>();
    CHECK_THAT(stats_md, Contains(fmt::format("`units.cube.busy_cycles` is {} and the sum", tile["units"]["cube"]["busy_cycles"].get<std::uint64_t>())) &&
                             Contains(fmt::format("`cores.cubeN.busy_cycles` is {}.", cores_sum)));
}

TEST_CASE("cli: diff of two runs names the key that differs and every statistic's delta", "[cli][diff]") {
    TempDir tmp;
    const auto stats = [&](const std::string& name, const std::vector<std::string>& sets) {
        std::vector<std::string> args = {"run", "--chip", kAx300, "--workload", kTileStream, "--stats", tmp.path(name), "-q"};
        for (const auto& s : sets) args.insert(args.end(), {"--set", s});
        REQUIRE(run_npusim(tmp, args).code == 0);
        return tmp.path(name);
    };
    const std::string a = stats("a.json", {}), b = stats("b.json", {"chip.cores.cube.count=2"});
    const json ja = read_json(a), jb = read_json(b);
    Result r = run_npusim(tmp, {"diff", a, b, "--json", tmp.path("d.json"), "--ops-csv", tmp.path("ops.csv")});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("config: 1 key differs") && Contains("chip.cores.cube.count") && Contains("4 -> 2"));
    const long long ta = ja["total_cycles"].get<long long>(), tb = jb["total_cycles"].get<long long>();
    REQUIRE(tb > ta);  // half the Cube cores
    CHECK_THAT(r.out, Contains(fmt::format("total_cycles")) && Contains(fmt::format("{:+d}", tb - ta)));
    const json d = read_json(tmp.path("d.json"));
    CHECK(d["same_workload"] == true);
    bool found = false;
    for (const auto& s : d["statistics"])
        if (s["key"] == "total_cycles") found = s["delta"].get<double>() == static_cast<double>(tb - ta);
    CHECK(found);
    CHECK(d["ops"].size() == ja["ops"].size());
    const std::string csv = slurp(tmp.path("ops.csv"));
    CHECK(csv.rfind("op,a_tasks,a_cores,a_flops", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == static_cast<std::ptrdiff_t>(ja["ops"].size()) + 1);
    // Another workload: said, and what is common compared.
    REQUIRE(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kOpStream, "--stats", tmp.path("op.json"), "-q"}).code == 0);
    r = run_npusim(tmp, {"diff", a, tmp.path("op.json")});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("different workloads") && Contains("total_cycles"));
    r = run_npusim(tmp, {"diff", a});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("expected two stats files"));
}

TEST_CASE("cli: --what-would-help finds the GM port binding BERT on a2 and HBM binding a copy", "[cli][slow]") {
    TempDir tmp;
    const auto findings = [&](const std::string& workload, const std::string& name) {
        const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", workload, "--what-would-help", "--stats", tmp.path(name)});
        SHOW(r);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, Contains("what would help") && Contains("binds: "));
        return read_json(tmp.path(name));
    };
    // BERT: twice the HBM bandwidth saves almost nothing, twice the Cube
    // cores' GM port saves most; the big MatMuls say so op by op.
    const json bert = findings(kSrc + "/models/bert_layer.json", "bert.json");
    const json& w = bert["what_would_help"];
    CHECK(w["binds"] == "cube.gm_port");
    CHECK(w["resources"]["cube.gm_port"]["change"].get<double>() < -0.05);
    CHECK(w["resources"]["hbm"]["change"].get<double>() > -0.02);
    CHECK(w["resources"]["hbm"]["to"].get<double>() == 2 * w["resources"]["hbm"]["from"].get<double>());
    bool down = false;
    for (const auto& op : bert["ops"])
        if (op["name"] == "ffn.down.matmul") down = op.value("bound_resource", std::string()) == "cube.gm_port";
    CHECK(down);
    // A 384 MB copy on the 48 Vector cores: HBM binds (twice of it: well under the run's time).
    const json copy = findings(kCopyStream, "copy.json");
    CHECK(copy["what_would_help"]["binds"] == "hbm");
    CHECK(copy["what_would_help"]["resources"]["hbm"]["change"].get<double>() < -0.3);
}

TEST_CASE("cli: a trace to a .json.gz path is the same trace gzip-compressed, and the report reads it", "[cli][trace]") {
    TempDir tmp;
    const auto run = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args = {"run", "--chip", kAx300, "--workload", kTileStream, "-q"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Result r = run_npusim(tmp, args);
        SHOW(r);
        REQUIRE(r.code == 0);
    };
    run({"--trace", tmp.path("t.json")});
    run({"--trace", tmp.path("t.json.gz"), "--report", tmp.path("r.html")});
    const auto plain = std::filesystem::file_size(tmp.path("t.json")), packed = std::filesystem::file_size(tmp.path("t.json.gz"));
    CHECK(packed * 5 < plain);
    const Result unzip = run_program(tmp, "gzip", {"-dc", tmp.path("t.json.gz")});
    REQUIRE(unzip.code == 0);
    CHECK(unzip.out == slurp(tmp.path("t.json")));
    const Result check = run_program(tmp, "/usr/bin/python3", {kCheckTrace, tmp.path("t.json.gz")});
    SHOW(check);
    CHECK(check.code == 0);
    CHECK_THAT(slurp(tmp.path("r.html")), Contains("cube0"));
}
