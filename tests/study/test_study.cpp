// What-if studies, goldens and reports (docs/design.md §4.1 `npusim sweep`, `npusim
// check`): study files and their errors, point expansion, the results store,
// golden comparison, and end to end through the binary: a 12-point sweep,
// a sweep killed midway and resumed, a failing point, the bundled goldens
// with and without a hardware change, HTML reports and the plot script.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "study/child_process.hpp"
#include "study/golden.hpp"
#include "study/point_run.hpp"
#include "study/points.hpp"
#include "study/results_store.hpp"
#include "study/study.hpp"
#include "support/e2e.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace npusim;
using namespace npusim::test;

namespace {

const std::string kBin = NPUSIM_BIN;
const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kTileStream = kSrc + "/traces/convbnrelu_tile.jsonl";
const std::string kResNet = kSrc + "/models/resnet50.json";

std::vector<std::string> lines_of(const std::string& file) {
    std::vector<std::string> out;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
}

// A study file in `tmp` (paths in it are absolute, so it may live anywhere).
std::string study_file(const TempDir& tmp, const std::string& name, const std::string& chip, const std::string& workload,
                       const json& axes, const json& metrics = json::array({"total_cycles"}), const std::string& combine = "grid") {
    nlohmann::ordered_json s;
    s["chip"] = chip;
    s["workload"] = workload;
    s["axes"] = nlohmann::ordered_json::parse(axes.dump());
    s["combine"] = combine;
    s["metrics"] = metrics;
    return tmp.write(name, s.dump(2));
}

std::string twelve_point_study(const TempDir& tmp) {
    nlohmann::ordered_json axes;
    axes["chip.hbm.bandwidth_gbps"] = {200, 400, 800, 1600};
    axes["chip.l2.bandwidth_gbps"] = {220, 440, 880};
    nlohmann::ordered_json s;
    s["chip"] = kAx300;
    s["workload"] = kTileStream;
    s["axes"] = axes;
    s["metrics"] = {"total_cycles", "units.cube.utilization"};
    return tmp.write("twelve.json", s.dump(2));
}

// How often each point id was started, from DIR/sweep.log.
std::map<std::string, int> starts(const std::string& dir) {
    std::map<std::string, int> n;
    for (const auto& line : lines_of(dir + "/sweep.log")) {
        std::istringstream ss(line);
        std::string time, what, id;
        ss >> time >> what >> id;
        if (what == "start") ++n[id];
    }
    return n;
}

std::string expect_input_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    FAIL("expected an InputError");
    return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// Study files and points (no simulation)

TEST_CASE("study: grid varies the first axis slowest, zip pairs values, ids are stable", "[study]") {
    TempDir tmp;
    const std::string grid = tmp.write("grid.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream +
                                                         R"(", "set": {"chip.l2.size_mb": 16},
        "axes": {"chip.hbm.bandwidth_gbps": [800, 1600, 3200], "chip.buffers.ub_kb": [128, 192, 256]},
        "metrics": ["total_cycles", "units.cube.utilization"]})");
    const study::Study s = study::load_study(grid);
    REQUIRE(s.axes.size() == 2);
    CHECK(s.axes[0].path == "chip.hbm.bandwidth_gbps");  // file order kept
    CHECK(s.axes[0].unit == "GB/s");
    CHECK(s.axes[1].unit == "KB");
    CHECK(s.metrics.size() == 2);
    const auto pts = study::expand_points(s);
    REQUIRE(pts.size() == 9);
    CHECK(pts[0].values["chip.hbm.bandwidth_gbps"] == 800);
    CHECK(pts[0].values["chip.buffers.ub_kb"] == 128);
    CHECK(pts[1].values["chip.hbm.bandwidth_gbps"] == 800);
    CHECK(pts[1].values["chip.buffers.ub_kb"] == 192);
    CHECK(pts[3].values["chip.hbm.bandwidth_gbps"] == 1600);
    std::set<std::string> ids;
    for (const auto& p : pts) ids.insert(p.id);
    CHECK(ids.size() == 9);
    // The id depends on the values only, not on key order or position.
    study::ojson v;
    v["chip.buffers.ub_kb"] = 192;
    v["chip.hbm.bandwidth_gbps"] = 800;
    CHECK(study::point_id(v) == pts[1].id);
    const auto args = pts[1].set_args(s);
    REQUIRE(args.size() == 3);
    CHECK(args[0] == "chip.l2.size_mb=16");
    CHECK(args[1] == "chip.hbm.bandwidth_gbps=800");
    CHECK(args[2] == "chip.buffers.ub_kb=192");

    tmp.write("zip.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream + R"(",
        "axes": {"chip.hbm.bandwidth_gbps": [800, 1600, 3200], "chip.buffers.ub_kb": [128, 192, 256]},
        "combine": "zip"})");
    const auto z = study::expand_points(study::load_study(tmp.path("zip.json")));
    REQUIRE(z.size() == 3);
    CHECK(z[2].values["chip.hbm.bandwidth_gbps"] == 3200);
    CHECK(z[2].values["chip.buffers.ub_kb"] == 256);
    CHECK(z[2].label() == "hbm.bandwidth_gbps=3200 buffers.ub_kb=256");
    // Two axes with the same leaf: each names its core type.
    study::Point p;
    p.values["chip.cores.cube.count"] = 4;
    p.values["chip.cores.vector.count"] = 8;
    p.values["workload.dims.seq"] = 128;
    CHECK(p.label() == "cube.count=4 vector.count=8 dims.seq=128");
    // A two-segment suffix another axis also ends with takes a third.
    study::Point q;
    q.values["a.x.count"] = 1;
    q.values["b.x.count"] = 2;
    CHECK(q.label() == "a.x.count=1 b.x.count=2");
}

TEST_CASE("study: bad study files name the file and key, with a did-you-mean", "[study][errors]") {
    TempDir tmp;
    const std::string head = R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream + R"(", )";
    auto err = [&](const std::string& body) {
        const std::string f = tmp.write("bad.json", head + body + "}");
        return expect_input_error([&] { study::load_study(f); });
    };
    std::string e = err(R"("axis": {"chip.hbm.bandwidth_gbps": [1]})");
    CHECK_THAT(e, Contains("bad.json") && Contains("unknown key \"axis\"") && Contains("did you mean 'axes'"));
    e = err(R"("axes": {"chip.hbm.bandwith_gbps": [1]})");
    CHECK_THAT(e, Contains("unknown key 'bandwith_gbps'") && Contains("did you mean 'bandwidth_gbps'"));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [1, 2]}, "combine": "gird")");
    CHECK_THAT(e, Contains("\"combine\"") && Contains("did you mean 'grid'"));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [1, 2], "chip.buffers.ub_kb": [128]}, "combine": "zip")");
    CHECK_THAT(e, Contains("equal length"));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": []})");
    CHECK_THAT(e, Contains("non-empty list"));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [800, 800]})");
    CHECK_THAT(e, Contains("listed twice"));
    e = err(R"("axes": {"chip.hbm": [800]})");
    CHECK_THAT(e, Contains("group of keys"));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [800]}, "metrics": "total_cycles")");
    CHECK_THAT(e, Contains("\"metrics\""));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [800]}, "set": {"chip.hbm.bandwidth_gbps": 400})");
    CHECK_THAT(e, Contains("also in \"set\""));
    e = err(R"("axes": {"chip.hbm.bandwidth_gbps": [800]}, "set": {"chip.cores.cube.cnt": 4})");
    CHECK_THAT(e, Contains("valid run") && Contains("did you mean 'count'"));
    const std::string missing = tmp.write("missing.json", R"({"chip": "nope/chip.json", "workload": "x.jsonl", "axes": {}})");
    CHECK_THAT(expect_input_error([&] { study::load_study(missing); }), Contains("\"chip\": file not found"));
    const std::string broken = tmp.write("broken.json", "{\n  \"chip\": \"a\",\n  \"axes\": [1,\n}");
    CHECK_THAT(expect_input_error([&] { study::load_study(broken); }), Contains("broken.json:4:"));
}

TEST_CASE("study: the bundled studies load and expand", "[study]") {
    const auto ub = study::load_study(kSrc + "/configs/studies/ub_hbm_resnet50.json");
    CHECK(study::expand_points(ub).size() == 9);
    CHECK(ub.workload_path == fs::path(kResNet).lexically_normal().string());
    const auto sync = study::load_study(kSrc + "/configs/studies/sync_cube_convbnrelu.json");
    CHECK(study::expand_points(sync).size() == 8);
    const auto moe = study::load_study(kSrc + "/configs/studies/planes_ranks_moe_dispatch.json");
    CHECK(study::expand_points(moe).size() == 16);
}

TEST_CASE("study: the results store appends, reloads, ignores a torn line, writes one CSV column per axis and metric",
          "[study]") {
    TempDir tmp;
    const study::ResultsStore store(tmp.dir.string(), {"chip.hbm.bandwidth_gbps", "workload.sync"},
                                    {"total_cycles", "units.cube.utilization"});
    store.rewrite({});
    study::Row a;
    a.index = 1;
    a.id = "p000000000001";
    a.axes["chip.hbm.bandwidth_gbps"] = 800;
    a.axes["workload.sync"] = "op";
    a.metrics["total_cycles"] = 1234;
    a.metrics["units.cube.utilization"] = 0.5;
    a.status = "ok";
    a.version = "0.16.0 (abc1234)";
    study::Row b = a;
    b.version.clear();
    b.index = 0;
    b.id = "p000000000000";
    b.status = "failed";
    b.error = "exit 2: bad, \"quoted\"";
    b.metrics["total_cycles"] = nullptr;
    store.append(a);
    store.append(b);
    std::ofstream(store.jsonl_path(), std::ios::app) << R"({"index": 2, "id": "p0000)";  // a kill mid-write
    std::size_t skipped = 0;
    const auto rows = store.load(&skipped);
    REQUIRE(rows.size() == 2);
    CHECK(skipped == 1);
    CHECK(rows[0].metrics["total_cycles"] == 1234);
    CHECK(rows[1].error == b.error);
    const auto csv = lines_of(store.csv_path());
    REQUIRE(csv.size() == 3);
    CHECK(csv[0] == "index,id,chip.hbm.bandwidth_gbps,workload.sync,total_cycles,units.cube.utilization,status,error,version");
    CHECK(rows[0].version == "0.16.0 (abc1234)");
    CHECK(csv[1] == "1,p000000000001,800,op,1234,0.5,ok,,0.16.0 (abc1234)");
    CHECK(csv[2] == "0,p000000000000,800,op,,0.5,failed,\"exit 2: bad, \"\"quoted\"\"\",");
    store.rewrite(rows);  // sorted by index
    const auto sorted = lines_of(store.csv_path());
    CHECK(sorted[1].rfind("0,", 0) == 0);
    CHECK(read_jsonl(store.jsonl_path()).size() == 2);
}

TEST_CASE("bench: a child run's progress lines are passed on as they come, each once, nothing else", "[study]") {
    TempDir tmp;
    const std::string log = (tmp.dir / "run.log").string();
    std::streamoff offset = 0;
    std::ostringstream out;
    std::ofstream w(log);
    w << "npusim: warning: something else\n"
      << "npusim: 6.9% of 50840128 tasks done on 32 ranks, 147163.3 us simulated, 483 s\n"
      << "npusim: 7.2% of 50840128 tasks done on 32 r" << std::flush;  // still being written
    study::forward_progress_lines(log, offset, "  prefill: ", out);
    CHECK(out.str() == "  prefill: 6.9% of 50840128 tasks done on 32 ranks, 147163.3 us simulated, 483 s\n");
    w << "anks, 150000.0 us simulated, 543 s\n" << std::flush;
    out.str("");
    study::forward_progress_lines(log, offset, "  prefill: ", out);
    CHECK(out.str() == "  prefill: 7.2% of 50840128 tasks done on 32 ranks, 150000.0 us simulated, 543 s\n");
    out.str("");
    study::forward_progress_lines(log, offset, "  prefill: ", out);
    CHECK(out.str().empty());
}

TEST_CASE("golden: metrics pass within their tolerance, exact by default", "[golden]") {
    const json stats = json::parse(R"({"total_cycles": 1000, "overlap": {"cube_vector": 0.5}, "chip": "x"})");
    study::GoldenMetric m;
    m.path = "total_cycles";
    m.has_expected = true;
    m.expected = 1000;
    CHECK(study::compare_metric(m, stats).pass);
    m.expected = 999;
    auto c = study::compare_metric(m, stats);
    CHECK_FALSE(c.pass);
    CHECK(c.delta == 1);
    m.tolerance = 1;
    CHECK(study::compare_metric(m, stats).pass);
    m.tolerance = 0;
    m.rel_tolerance = 0.01;
    m.expected = 1010;
    CHECK(study::compare_metric(m, stats).pass);
    study::GoldenMetric o;
    o.path = "overlap.cube_vektor";
    o.has_expected = true;
    o.expected = 0.5;
    c = study::compare_metric(o, stats);
    CHECK_FALSE(c.pass);
    CHECK_THAT(c.problem, Contains("did you mean 'overlap.cube_vector'"));
}

// ---------------------------------------------------------------------------
// End to end through the binary

TEST_CASE("sweep: a 12-point sweep with -j 2 completes with 12 rows", "[sweep]") {
    TempDir tmp;
    const std::string study = twelve_point_study(tmp), out = tmp.path("out");
    const Result r = run_npusim(tmp, {"sweep", study, "--out", out, "-j", "2"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const auto rows = read_jsonl(out + "/results.jsonl");
    REQUIRE(rows.size() == 12);
    std::set<std::string> ids;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(rows[i]["status"] == "ok");
        CHECK(rows[i]["index"] == i);  // sorted at the end
        CHECK(rows[i]["metrics"]["total_cycles"].get<double>() > 0);
        ids.insert(rows[i]["id"].get<std::string>());
    }
    CHECK(ids.size() == 12);
    const auto csv = lines_of(out + "/results.csv");
    REQUIRE(csv.size() == 13);
    CHECK(csv[0] == "index,id,chip.hbm.bandwidth_gbps,chip.l2.bandwidth_gbps,total_cycles,units.cube.utilization,status,error,version");
    // Plain progress lines when stdout is not a terminal.
    CHECK_THAT(r.out, Contains("[12/12] ok"));
    CHECK_THAT(r.out, Contains("12 ok, 0 failed"));
    const json study_json = json::parse(slurp(out + "/study.json"));
    CHECK(study_json["axes"][0]["unit"] == "GB/s");
    CHECK(study_json["points"] == 12);
    CHECK(rows[4]["axes"]["chip.hbm.bandwidth_gbps"] == 400);  // grid order: first axis slowest
    CHECK(rows[4]["axes"]["chip.l2.bandwidth_gbps"] == 440);
    // Each point's statistics are kept, and agree with a direct run.
    const std::string direct = tmp.path("direct.json");
    const Result d = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.hbm.bandwidth_gbps=200",
                                  "--set", "chip.l2.bandwidth_gbps=220", "--stats", direct, "-q"});
    REQUIRE(d.code == 0);
    CHECK(json::parse(slurp(direct))["total_cycles"] == rows[0]["metrics"]["total_cycles"]);
}

TEST_CASE("sweep: killed midway and resumed, it reruns none of the finished points", "[slow][sweep]") {
    TempDir tmp;
    nlohmann::ordered_json axes;
    axes["chip.hbm.bandwidth_gbps"] = {400, 800, 1600, 3200};
    axes["chip.l2.bandwidth_gbps"] = {2500, 5000, 10000};
    nlohmann::ordered_json s;
    s["chip"] = kA2;
    s["workload"] = kResNet;
    s["axes"] = axes;
    const std::string study = tmp.write("slow.json", s.dump(2)), out = tmp.path("out");

    // Start the sweep, let a few points finish, then SIGKILL it.
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = ::open(tmp.path("first.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execl(kBin.c_str(), kBin.c_str(), "sweep", study.c_str(), "--out", out.c_str(), "-j", "2", (char*)nullptr);
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    std::size_t seen = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        seen = lines_of(out + "/results.jsonl").size();
        if (seen >= 4) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    INFO(slurp(tmp.path("first.log")));
    REQUIRE(seen >= 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // orphaned points get SIGTERM and end

    std::set<std::string> finished;
    for (const auto& line : lines_of(out + "/results.jsonl")) {
        const json row = json::parse(line, nullptr, false);
        if (!row.is_discarded() && row["status"] == "ok") finished.insert(row["id"].get<std::string>());
    }
    INFO("finished before the kill: " << finished.size());
    REQUIRE(finished.size() >= 4);
    REQUIRE(finished.size() < 12);  // killed midway

    // A point's run killed with the sweep (SIGKILL: no handler runs) leaves
    // the temporary it was writing; --resume removes it once its process is
    // gone and nothing wrote it for 10 minutes (not one being written).
    std::filesystem::create_directories(out + "/points/stale");
    const std::string stale = tmp.write("out/points/stale/stats.json.tmp.999999999", "{\"half\":");
    std::filesystem::last_write_time(stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    const std::string live = tmp.write("out/points/stale/trace.json.tmp." + std::to_string(::getpid()), "[");

    const Result r = run_npusim(tmp, {"sweep", study, "--out", out, "-j", "2", "--resume"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(std::filesystem::exists(live));  // its process (this test) is alive
    // Points whose result.json was written just before the kill are adopted too.
    CHECK_THAT(r.out, Contains("resumed: "));
    const auto rows = read_jsonl(out + "/results.jsonl");
    REQUIRE(rows.size() == 12);
    for (const auto& row : rows) CHECK(row["status"] == "ok");
    const auto n = starts(out);
    for (const auto& id : finished) {
        INFO(id);
        CHECK(n.at(id) == 1);  // started once, by the first sweep only
    }
    CHECK(n.size() == 12);
    CHECK(lines_of(out + "/results.csv").size() == 13);
}

TEST_CASE("sweep: a point with an invalid value is reported and the others complete", "[sweep][errors]") {
    TempDir tmp;
    nlohmann::ordered_json axes;
    axes["chip.buffers.ub_kb"] = {192, 0, 256};
    nlohmann::ordered_json s;
    s["chip"] = kAx300;
    s["workload"] = kTileStream;
    s["axes"] = axes;
    const std::string study = tmp.write("bad_point.json", s.dump(2)), out = tmp.path("out");
    const Result r = run_npusim(tmp, {"sweep", study, "--out", out, "-j", "2"});
    SHOW(r);
    CHECK(r.code == 1);
    const auto rows = read_jsonl(out + "/results.jsonl");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0]["status"] == "ok");
    CHECK(rows[2]["status"] == "ok");
    CHECK(rows[1]["status"] == "failed");
    CHECK(rows[1]["exit_code"] == 2);
    CHECK_THAT(rows[1]["error"].get<std::string>(), Contains("chip.buffers.ub_kb"));
    CHECK_THAT(r.out, Contains("FAILED") && Contains("ub_kb=0"));
    CHECK_THAT(r.out, Contains("2 ok, 1 failed"));
    const auto csv = lines_of(out + "/results.csv");
    REQUIRE(csv.size() == 4);
    CHECK_THAT(csv[2], Contains(",failed,"));

    // The folder is not overwritten by accident; --resume retries only the failure.
    const Result again = run_npusim(tmp, {"sweep", study, "--out", out});
    CHECK(again.code == 2);
    CHECK_THAT(again.err, Contains("--resume"));
    const Result resumed = run_npusim(tmp, {"sweep", study, "--out", out, "--resume"});
    CHECK(resumed.code == 1);
    CHECK_THAT(resumed.out, Contains("2 finished points skipped") && Contains("running 1"));

    // A different study cannot resume this folder; the refusal names what differs.
    nlohmann::ordered_json other = s;
    other["set"] = {{"chip.hbm.bandwidth_gbps", 800}};
    const std::string study2 = tmp.write("other.json", other.dump(2));
    const Result r2 = run_npusim(tmp, {"sweep", study2, "--out", out, "--resume"});
    CHECK(r2.code == 2);
    CHECK_THAT(r2.err, Contains("different study: \"set\" was {}, now {\"chip.hbm.bandwidth_gbps\":800}"));
}

TEST_CASE("sweep: --resume with a metric added reads it from each finished point's statistics and reruns none", "[sweep]") {
    TempDir tmp;
    const json axes = json::parse(R"({"chip.cores.cube.count": [2, 4], "chip.hbm.bandwidth_gbps": [200, 400]})");
    const std::string out = tmp.path("out");
    const Result first = run_npusim(tmp, {"sweep", study_file(tmp, "s.json", kAx300, kTileStream, axes), "--out", out, "-j", "2"});
    REQUIRE(first.code == 0);
    const std::string more = study_file(tmp, "s.json", kAx300, kTileStream, axes, json::array({"total_cycles", "units.cube.utilization"}));
    const Result r = run_npusim(tmp, {"sweep", more, "--out", out, "-j", "2", "--resume"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("running 0") && Contains("metrics of 4 finished points read again"));
    for (const auto& [id, n] : starts(out)) CHECK(n == 1);
    const auto rows = read_jsonl(out + "/results.jsonl");
    REQUIRE(rows.size() == 4);
    for (const auto& row : rows) {
        const json stats = read_json(out + "/points/" + row["id"].get<std::string>() + "/stats.json");
        CHECK(row["metrics"]["units.cube.utilization"] == stats["units"]["cube"]["utilization"]);
        CHECK(row["metrics"]["total_cycles"] == stats["total_cycles"]);
    }
    CHECK_THAT(lines_of(out + "/results.csv")[0], Contains("total_cycles,units.cube.utilization,status"));
    // A metric the statistics lack is the study's mistake, named before anything runs.
    const std::string bad = study_file(tmp, "s.json", kAx300, kTileStream, axes, json::array({"units.cube.utilisation"}));
    const Result b = run_npusim(tmp, {"sweep", bad, "--out", out, "--resume"});
    CHECK(b.code == 2);
    CHECK_THAT(b.err, Contains("\"metrics\": metric 'units.cube.utilisation' is not in the statistics") &&
                          Contains("did you mean 'units.cube.utilization'"));
}

TEST_CASE("sweep: bad study files and options exit 2 with the file named", "[sweep][errors]") {
    TempDir tmp;
    const std::string bad = tmp.write("typo.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream +
                                                       R"(", "axes": {"chip.hbm.bandwidth_gbps": [1]}, "metric": []})");
    const Result r = run_npusim(tmp, {"sweep", bad, "--out", tmp.path("o")});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("typo.json") && Contains("did you mean 'metrics'"));
    const Result r2 = run_npusim(tmp, {"sweep", twelve_point_study(tmp), "--out", tmp.path("o2"), "--backend", "cloud"});
    CHECK(r2.code == 2);
    CHECK_THAT(r2.err, Contains("--backend"));
    const Result r3 = run_npusim(tmp, {"sweep", twelve_point_study(tmp)});
    CHECK(r3.code == 2);
    CHECK_THAT(r3.err, Contains("--out"));
}

TEST_CASE("sweep: a metric missing from the statistics is exit 2 before any point runs with a did-you-mean", "[sweep][errors]") {
    TempDir tmp;
    const std::string study = study_file(tmp, "m.json", kAx300, kTileStream,
                                         json::parse(R"({"chip.hbm.bandwidth_gbps": [400, 800, 1600, 3200]})"),
                                         json::array({"total_cycles", "units.cube.utilisation"}));
    const Result r = run_npusim(tmp, {"sweep", study, "--out", tmp.path("o"), "-j", "2"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("m.json: \"metrics\": metric 'units.cube.utilisation' is not in the statistics") &&
                          Contains("did you mean 'units.cube.utilization'"));
    CHECK_FALSE(std::filesystem::exists(tmp.path("o")));  // no point ran, nothing was written
    // A key only some runs have (the host time on the critical path) is the points' to report.
    const std::string later = study_file(tmp, "l.json", kAx300, kTileStream, json::parse(R"({"chip.hbm.bandwidth_gbps": [400]})"),
                                         json::array({"critical_path.by_kind.host"}));
    const Result l = run_npusim(tmp, {"sweep", later, "--out", tmp.path("l")});
    CHECK(l.code == 1);
    CHECK_THAT(l.out, Contains("metric 'critical_path.by_kind.host' is not in the statistics"));
    const std::string mended = study_file(tmp, "m.json", kAx300, kTileStream, json::parse(R"({"chip.hbm.bandwidth_gbps": [400, 800]})"));
    CHECK(run_npusim(tmp, {"sweep", mended, "--out", tmp.path("o"), "-j", "2"}).code == 0);
}

TEST_CASE("report: run --report and sweep --report write self-contained pages", "[report]") {
    TempDir tmp;
    const std::string html = tmp.path("run.html");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--report", html});
    SHOW(r);
    REQUIRE(r.code == 0);
    const std::string page = slurp(html);
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK_THAT(page, Contains("id=\"data\"") && Contains("\"timeline\"") && Contains("\"units\""));
    CHECK_THAT(page, Contains("cube0"));  // a track of the timeline
    for (const char* external : {"<link", "src=\"http", "href=\"http", "@import", "url(http"}) CHECK_THAT(page, !Contains(external));
    // The embedded data parses and holds the summary.
    const auto a = page.find("id=\"data\">") + 10, b = page.find("</script>", a);
    const json data = json::parse(page.substr(a, b - a));
    CHECK(data["kind"] == "run");
    CHECK(data["timeline"]["tracks"].size() > 0);
    CHECK(data["timeline"]["tracks"].size() <= 20);  // the critical path, then tracks of each unit kind in turn
    CHECK(data["timeline"]["tracks"][0]["name"] == "critical path");
    CHECK(data["units"].size() > 0);

    const std::string out = tmp.path("sweep");
    const std::string study = study_file(tmp, "s.json", kAx300, kTileStream,
                                         json::parse(R"({"chip.hbm.bandwidth_gbps": [200, 400]})"));
    const Result s = run_npusim(tmp, {"sweep", study, "--out", out, "--report", "-j", "2"});
    SHOW(s);
    REQUIRE(s.code == 0);
    const std::string spage = slurp(out + "/report.html");
    const auto c = spage.find("id=\"data\">") + 10, d = spage.find("</script>", c);
    const json sdata = json::parse(spage.substr(c, d - c));
    CHECK(sdata["kind"] == "sweep");
    CHECK(sdata["rows"].size() == 2);
    CHECK(sdata["unit_util"].size() == 2);
    CHECK(sdata["axes"][0]["unit"] == "GB/s");
}

TEST_CASE("check: the bundled goldens pass, and fail with a readable diff under a hardware change", "[golden]") {
    TempDir tmp;
    const std::string goldens = kSrc + "/traces/golden";
    const Result ok = run_npusim(tmp, {"check", goldens, "-j", "2"});
    SHOW(ok);
    REQUIRE(ok.code == 0);
    CHECK_THAT(ok.out, Contains("passed"));
    CHECK_THAT(ok.out, Contains("metric") && Contains("expected") && Contains("actual") && Contains("delta"));
    const Result bad = run_npusim(tmp, {"check", goldens, "-j", "2", "--set", "chip.hbm.bandwidth_gbps=400"});
    SHOW(bad);
    CHECK(bad.code == 1);
    CHECK_THAT(bad.out, Contains("FAIL") && Contains("total_cycles") && Contains("%)"));
    CHECK_THAT(bad.out, Contains("with --set chip.hbm.bandwidth_gbps=400"));
    // Bad input is exit 2, before anything runs.
    const Result typo = run_npusim(tmp, {"check", goldens, "--set", "chip.hbm.bandwith_gbps=400"});
    CHECK(typo.code == 2);
    CHECK_THAT(typo.err, Contains("did you mean 'bandwidth_gbps'"));
    const Result both = run_npusim(tmp, {"check", goldens, "--update", "--set", "chip.hbm.bandwidth_gbps=400"});
    CHECK(both.code == 2);
}

TEST_CASE("check: --update rewrites the expected values and keeps tolerances", "[golden]") {
    TempDir tmp;
    const std::string g = tmp.write("g.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream + R"(",
        "set": {"chip.hbm.bandwidth_gbps": 800},
        "metrics": {"total_cycles": {"expected": 1, "tolerance": 0}, "overlap.cube_vector": {"expected": 0, "tolerance": 1e-6}}})");
    const Result before = run_npusim(tmp, {"check", g});
    SHOW(before);
    CHECK(before.code == 1);
    const Result up = run_npusim(tmp, {"check", g, "--update"});
    SHOW(up);
    CHECK(up.code == 0);
    const json after = json::parse(slurp(g));
    CHECK(after["metrics"]["total_cycles"]["expected"].get<double>() > 1);
    CHECK(after["metrics"]["overlap.cube_vector"]["tolerance"] == 1e-6);
    CHECK(after["set"]["chip.hbm.bandwidth_gbps"] == 800);
    const Result now = run_npusim(tmp, {"check", g});
    SHOW(now);
    CHECK(now.code == 0);
    // A list of metric names is filled in by --update.
    const std::string fresh = tmp.write("fresh.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kTileStream +
                                                           R"(", "metrics": ["total_cycles", "units.cube.utilization"]})");
    CHECK(run_npusim(tmp, {"check", fresh}).code == 1);
    CHECK(run_npusim(tmp, {"check", fresh, "--update"}).code == 0);
    CHECK(run_npusim(tmp, {"check", fresh}).code == 0);
    CHECK(json::parse(slurp(fresh))["metrics"]["total_cycles"]["tolerance"] == 0);
}

TEST_CASE("plot: tools/plot_sweep.py draws line and heat-map charts of a sweep folder", "[slow][plot]") {
    TempDir tmp;
    // Debian's python3-matplotlib belongs to /usr/bin/python3, which another
    // python3 earlier in PATH (pyenv, venv) may hide.
    std::string python = "python3";
    if (run_program(tmp, python, {"-c", "import matplotlib"}).code != 0) python = "/usr/bin/python3";
    if (run_program(tmp, python, {"-c", "import matplotlib"}).code != 0) {
        WARN("python3-matplotlib is not installed: plot test skipped");
        return;
    }
    const std::string out = tmp.path("sweep");
    nlohmann::ordered_json axes;
    axes["chip.hbm.bandwidth_gbps"] = {200, 400, 800};
    axes["chip.l2.bandwidth_gbps"] = {220, 440};
    nlohmann::ordered_json s;
    s["chip"] = kAx300;
    s["workload"] = kTileStream;
    s["axes"] = axes;
    s["metrics"] = {"total_cycles", "overlap.cube_vector"};
    const Result sw = run_npusim(tmp, {"sweep", tmp.write("p.json", s.dump(2)), "--out", out, "-j", "2"});
    REQUIRE(sw.code == 0);
    for (const char* kind : {"line", "heatmap"}) {
        const std::string png = tmp.path(std::string(kind) + ".png");
        const Result p = run_program(tmp, python, {kSrc + "/tools/plot_sweep.py", out, "--kind", kind, "--out", png});
        SHOW(p);
        CHECK(p.code == 0);
        CHECK(slurp(png).substr(1, 3) == "PNG");
    }
    const Result bad = run_program(tmp, python, {kSrc + "/tools/plot_sweep.py", out, "--metric", "total_cycle"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("total_cycles"));
}

TEST_CASE("sweep: a graph dimension the graph does not have is exit 2 before any point runs", "[study][errors]") {
    TempDir tmp;
    const std::string s = study_file(tmp, "dims.json", kAx300, kSrc + "/models/convbnrelu.json",
                                     json{{"workload.dims.bach", {1, 2}}, {"chip.cores.cube.count", {2, 4}}});
    const Result r = run_npusim(tmp, {"sweep", s, "--out", tmp.path("out")});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("dims.json: the study's graph dimensions") && Contains("unknown dimension 'bach'") &&
                          Contains("did you mean 'batch'?"));
    CHECK_FALSE(std::filesystem::exists(tmp.path("out/results.jsonl")));
    // The graph's own dimension sweeps.
    const std::string ok = study_file(tmp, "ok.json", kAx300, kSrc + "/models/convbnrelu.json", json{{"workload.dims.batch", {1, 2}}});
    CHECK(run_npusim(tmp, {"sweep", ok, "--out", tmp.path("out2"), "-j", "2"}).code == 0);
}

TEST_CASE("run --elaborate-only: the statistics' keys of a run, nothing simulated", "[study][cli]") {
    TempDir tmp;
    const std::string dry = tmp.path("dry.json"), real = tmp.path("real.json");
    REQUIRE(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/models/convbnrelu.json", "--stats", dry, "--elaborate-only"}).code == 0);
    REQUIRE(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/models/convbnrelu.json", "--stats", real, "-q"}).code == 0);
    const json d = read_json(dry), r = read_json(real);
    CHECK(d["total_cycles"] == 0);
    CHECK(r["total_cycles"].get<double>() > 0);
    // Every key but what the run's path went through is there.
    std::function<void(const json&, const json&, const std::string&)> same = [&](const json& a, const json& b, const std::string& at) {
        if (!b.is_object()) return;
        for (auto it = b.begin(); it != b.end(); ++it) {
            const std::string key = at.empty() ? it.key() : at + "." + it.key();
            if (study::outcome_dependent_metric(key + ".")) continue;
            INFO(key);
            REQUIRE(a.contains(it.key()));
            same(a[it.key()], it.value(), key);
        }
    };
    same(d, r, "");
    const Result t = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--elaborate-only", "--trace", tmp.path("t.json")});
    CHECK(t.code == 2);
    CHECK_THAT(t.err, Contains("--elaborate-only: nothing is simulated"));
}
