// `npusim check` as CI uses it (docs/studies.md "Goldens"): JUnit and JSON
// reports, exit 2 for a broken golden, the --update hint only where --update
// would accept a change of the model; `npusim --version` and the version in
// the statistics and sweep rows.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kOpStream = kSrc + "/traces/convbnrelu_op.jsonl";
const std::string kCopyStream = kSrc + "/traces/copy_48core.jsonl";

// What the stored golden of the op-level ConvBNReLU stream on ax300 expects
// (traces/golden/convbnrelu_op_ax300.json): the run these tests check.
std::uint64_t op_golden(const std::string& metric) {
    std::ifstream in(kSrc + "/traces/golden/convbnrelu_op_ax300.json");
    return json::parse(in)["metrics"][metric]["expected"].get<std::uint64_t>();
}
const std::uint64_t kOpCycles = op_golden("total_cycles");
const std::string kCycles = std::to_string(kOpCycles);

// A golden of the op-level ConvBNReLU stream on ax300 with the given metrics.
std::string golden(const TempDir& tmp, const std::string& name, const std::string& metrics,
                   const std::string& workload = kOpStream, const std::string& set = "{}") {
    return tmp.write("goldens/" + name + ".json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + workload +
                                                      R"(", "set": )" + set + R"(, "metrics": )" + metrics + "}");
}

const std::string kRight = R"({"total_cycles": {"expected": )" + kCycles + R"(, "tolerance": 0}, "tasks.count": 64})";

}  // namespace

TEST_CASE("check: --junit and --json report one testcase per golden and a failure per metric out of tolerance", "[golden][check]") {
    TempDir tmp;
    golden(tmp, "a_right", kRight);
    // Two metrics off, one within tolerance.
    const std::uint64_t wait = op_golden("events.wait_cycles");
    golden(tmp, "b_wrong", R"({"total_cycles": {"expected": 50000, "tolerance": 10}, "tasks.count": 65,
                               "events.wait_cycles": {"expected": )" + std::to_string(wait + 7) + R"(, "tolerance": 100}})");
    const std::string xml = tmp.path("out.xml"), js = tmp.path("out.json");
    const Result r = run_npusim(tmp, {"check", tmp.path("goldens"), "--junit", xml, "--json", js, "-j", "2"});
    SHOW(r);
    CHECK(r.code == 1);
    const std::string x = slurp(xml);
    CHECK_THAT(x, StartsWith("<?xml"));
    CHECK_THAT(x, Contains(R"(<testsuites name="npusim check" tests="2" failures="1" errors="0">)"));
    CHECK_THAT(x, Contains(R"(<testcase classname="npusim.check" name="a_right")"));
    CHECK_THAT(x, Contains(R"(<testcase classname="npusim.check" name="b_wrong")"));
    const std::regex failure(R"re(<failure type="out of tolerance" message="([^"]*)")re");
    std::vector<std::string> messages;
    for (auto it = std::sregex_iterator(x.begin(), x.end(), failure); it != std::sregex_iterator(); ++it)
        messages.push_back((*it)[1]);
    REQUIRE(messages.size() == 2);
    CHECK_THAT(messages[0], Contains("total_cycles: expected 50000, actual " + kCycles + ", delta " +
                                     std::to_string(kOpCycles - 50000) + ", tolerance 10"));
    CHECK_THAT(messages[1], Contains("tasks.count: expected 65, actual 64"));
    CHECK_THAT(x, Contains(R"(<property name="npusim.version")"));

    const json j = read_json(js);
    CHECK(j["passed"] == 1);
    CHECK(j["failed"] == 1);
    CHECK(j["errors"] == 0);
    REQUIRE(j["goldens"].size() == 2);
    CHECK(j["goldens"][0]["name"] == "a_right");
    CHECK(j["goldens"][0]["status"] == "pass");
    const json& wrong = j["goldens"][1];
    CHECK(wrong["status"] == "fail");
    REQUIRE(wrong["metrics"].size() == 3);
    CHECK(wrong["metrics"][0]["actual"] == kOpCycles);
    CHECK(wrong["metrics"][0]["delta"] == kOpCycles - 50000);
    CHECK(wrong["metrics"][0]["pass"] == false);
    CHECK(wrong["metrics"][2]["pass"] == true);  // 7 off, within 100
    CHECK(j["version"].get<std::string>().find('.') != std::string::npos);
    // The model changed: --update would accept it.
    CHECK_THAT(r.out, Contains("--update"));
}

TEST_CASE("check: a misspelt metric is a broken golden: exit 2 with a did-you-mean", "[golden][check]") {
    TempDir tmp;
    const std::string g = golden(tmp, "typo", R"({"total_cylces": )" + kCycles + R"(, "tasks.count": 64})");
    const std::string xml = tmp.path("out.xml");
    const Result r = run_npusim(tmp, {"check", g, "--junit", xml});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("typo.json") && Contains("total_cylces") && Contains("did you mean 'total_cycles'"));
    CHECK_THAT(r.out, !Contains("--update"));
    CHECK_THAT(slurp(xml), Contains(R"(errors="1")") && Contains(R"(<error type="broken golden")"));
}

TEST_CASE("check: a number written as a string in a golden is a broken golden, not a failed run", "[golden][check]") {
    TempDir tmp;
    const std::string g = golden(tmp, "quoted", R"({"total_cycles": ")" + kCycles + R"(", "tasks.count": 64})");
    const Result r = run_npusim(tmp, {"check", g});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("quoted.json") && Contains("\"total_cycles\"") &&
                          Contains("is a string but the statistic is a number: write it without quotes"));
    CHECK_THAT(r.out, !Contains("--update"));
}

TEST_CASE("check: an unreadable golden and a golden whose run is bad input exit 2", "[golden][check]") {
    TempDir tmp;
    const std::string broken = tmp.write("broken.json", "{\"chip\": ");
    const Result a = run_npusim(tmp, {"check", broken});
    SHOW(a);
    CHECK(a.code == 2);
    CHECK_THAT(a.err, Contains("broken.json:1:"));
    // The chip and stream load, but the stream asks for a core ax300 does not have.
    const std::string stream = tmp.write(
        "bad.jsonl", R"({"id":"t","core_type":"vector","kernel":"vector","stream":"s","core":7,"wait":[],"signal":[],"params":{"bytes":4096}})"
                     "\n");
    const std::string g = golden(tmp, "badrun", kRight, stream);
    const std::string js = tmp.path("out.json");
    const Result b = run_npusim(tmp, {"check", g, "--json", js});
    SHOW(b);
    CHECK(b.code == 2);
    CHECK_THAT(b.err, Contains("badrun.json") && Contains("bad input"));
    CHECK_THAT(b.out, !Contains("--update"));
    CHECK(read_json(js)["goldens"][0]["status"] == "error");
}

TEST_CASE("check: no --update hint after --set or after a deadlocked run", "[golden][check]") {
    TempDir tmp;
    const std::string g = golden(tmp, "right", kRight);
    const Result set = run_npusim(tmp, {"check", g, "--set", "chip.hbm.bandwidth_gbps=10"});
    SHOW(set);
    CHECK(set.code == 1);
    CHECK_THAT(set.out, Contains("FAIL"));
    CHECK_THAT(set.out, !Contains("--update"));
    // A stream that waits for an event nobody signals deadlocks (run exit 3).
    const std::string stream = tmp.write(
        "stuck.jsonl", "{\"event\":\"never\",\"count\":1}\n"
                       R"({"id":"t","core_type":"vector","kernel":"vector","stream":"s","wait":["never"],"signal":[],"params":{"bytes":4096}})"
                       "\n");
    const std::string stuck = golden(tmp, "stuck", kRight, stream);
    const Result d = run_npusim(tmp, {"check", stuck});
    SHOW(d);
    CHECK(d.code == 1);
    CHECK_THAT(d.out, Contains("the run failed") && Contains("exit 3"));
    CHECK_THAT(d.out, !Contains("--update"));
}

TEST_CASE("check: a golden that lists the version passes whatever build runs it", "[golden][check]") {
    TempDir tmp;
    const std::string g = golden(tmp, "v", R"j({"total_cycles": )j" + kCycles + R"j(, "version": "0.0.1 (an old build)"})j");
    const Result r = run_npusim(tmp, {"check", g});
    SHOW(r);
    CHECK(r.code == 0);
}

TEST_CASE("version: npusim --version, and the version in the statistics and sweep rows", "[cli][version]") {
    TempDir tmp;
    const Result v = run_npusim(tmp, {"--version"});
    SHOW(v);
    REQUIRE(v.code == 0);
    const std::smatch m = [&] {
        std::smatch s;
        std::regex_search(v.out, s, std::regex(R"re(^npusim (\d+\.\d+\.\d+( \([^)]+\))?)\n$)re"));
        return s;
    }();
    REQUIRE(m.size() > 1);
    const std::string version = m[1];
    // Deterministic: the same text every time.
    CHECK(run_npusim(tmp, {"--version"}).out == v.out);

    const std::string stats = tmp.path("s.json");
    REQUIRE(run_npusim(tmp, {"run", "--chip", kA2, "--workload", kCopyStream, "--stats", stats, "-q"}).code == 0);
    CHECK(read_json(stats)["version"] == version);

    const std::string study = tmp.write("study.json", R"({"chip": ")" + kAx300 + R"(", "workload": ")" + kOpStream +
                                                          R"(", "axes": {"chip.hbm.bandwidth_gbps": [400, 800]}, "metrics": ["total_cycles"]})");
    const Result s = run_npusim(tmp, {"sweep", study, "--out", tmp.path("sw"), "-j", "2"});
    SHOW(s);
    REQUIRE(s.code == 0);
    std::ifstream rows(tmp.path("sw/results.jsonl"));
    std::string line;
    int n = 0;
    while (std::getline(rows, line)) {
        CHECK(json::parse(line)["version"] == version);
        ++n;
    }
    CHECK(n == 2);
    const std::string csv = slurp(tmp.path("sw/results.csv"));
    CHECK_THAT(csv, Contains(",status,error,version\n"));
}
