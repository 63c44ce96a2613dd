// The Python tools (README "Start here"): they run with /usr/bin/python3,
// and one whose third-party module is missing says in one line which Debian
// package to install, instead of a traceback. `python3 -S` leaves out
// site-packages (where Debian's python3-matplotlib lives), which is what an
// interpreter without Debian's packages looks like.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

void check_one_line(const Result& r, const std::string& tool, const std::string& module, const std::string& package) {
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, !Contains("Traceback"));
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(tool + ": error: needs the Python module '" + module + "': apt-get install " + package));
}

}  // namespace

TEST_CASE("python tools: every tool names /usr/bin/python3 on its first line", "[tools]") {
    for (const auto& e : std::filesystem::directory_iterator(kSrc + "/tools")) {
        const auto name = e.path().filename();
        if (e.path().extension() != ".py" || name == "debian_deps.py" || name == "tool_args.py") continue;
        std::ifstream in(e.path());
        std::string first;
        std::getline(in, first);
        INFO(e.path().filename().string());
        CHECK(first == "#!/usr/bin/python3");
    }
}

TEST_CASE("python tools: plot_sweep.py and plot_phases.py without matplotlib say which package, in one line", "[tools][plot]") {
    TempDir tmp;
    // A two-point sweep and a MoE phase profile to plot.
    const std::string study = tmp.write(
        "s.json", R"({"chip": ")" + kSrc + R"(/configs/chips/ax300.json", "workload": ")" + kSrc +
                      R"(/traces/convbnrelu_op.jsonl", "axes": {"chip.hbm.bandwidth_gbps": [200, 400]}, "metrics": ["total_cycles"]})");
    REQUIRE(run_npusim(tmp, {"sweep", study, "--out", tmp.path("sw"), "-j", "2"}).code == 0);
    const std::string csv = tmp.path("phases.csv");
    REQUIRE(run_npusim(tmp, {"run", "--chip", kSrc + "/configs/chips/a3-supernode.json", "--workload",
                             kSrc + "/models/moe_dispatch.json", "--set", "chip.interconnect.ranks=8", "--profile", csv, "-q"})
                .code == 0);

    const Result sweep = run_program(tmp, "/usr/bin/python3", {"-S", kSrc + "/tools/plot_sweep.py", tmp.path("sw")});
    check_one_line(sweep, "plot_sweep", "matplotlib", "python3-matplotlib");
    const Result phases = run_program(tmp, "/usr/bin/python3", {"-S", kSrc + "/tools/plot_phases.py", csv, "--out", tmp.path("p.png")});
    check_one_line(phases, "plot_phases", "matplotlib", "python3-matplotlib");
    CHECK_FALSE(std::filesystem::exists(tmp.path("p.png")));

    // With Debian's packages (where installed) the same command draws.
    if (run_program(tmp, "/usr/bin/python3", {"-c", "import matplotlib"}).code != 0) {
        WARN("python3-matplotlib is not installed: the drawing half skipped");
        return;
    }
    const Result drawn = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/plot_phases.py", csv, "--out", tmp.path("p.png")});
    SHOW(drawn);
    CHECK(drawn.code == 0);
    CHECK(std::filesystem::file_size(tmp.path("p.png")) > 1000);
}

TEST_CASE("python tools: every tool answers --help, and a bad argument is one line and exit 2", "[tools]") {
    TempDir tmp;
    int tools = 0;
    for (const auto& e : std::filesystem::directory_iterator(kSrc + "/tools")) {
        const std::string name = e.path().filename().string();
        // The two modules the tools import, not tools.
        if (e.path().extension() != ".py" || name == "debian_deps.py" || name == "tool_args.py") continue;
        ++tools;
        INFO(name);
        const Result help = run_program(tmp, "/usr/bin/python3", {e.path().string(), "--help"});
        SHOW(help);
        // A tool whose third-party module is missing here says so first (the test above).
        if (!(help.code == 2 && help.err.find("needs the Python module") != std::string::npos)) {
            CHECK(help.code == 0);
            CHECK_THAT(help.out, StartsWith("usage: "));
        }
        const Result bad = run_program(tmp, "/usr/bin/python3", {e.path().string(), "--no-such-option"});
        SHOW(bad);
        CHECK(bad.code == 2);
        CHECK(bad.out.empty());
        CHECK(lines(bad.err) == 1);
        CHECK_THAT(bad.err, Contains(": error: "));
    }
    CHECK(tools >= 16);
}

TEST_CASE("python tools: the standard-library tools start without site-packages", "[tools]") {
    TempDir tmp;
    for (const char* tool : {"check_trace.py", "study_tables.py"}) {
        const Result r = run_program(tmp, "/usr/bin/python3", {"-S", kSrc + "/tools/" + tool, "--help"});
        INFO(tool);
        SHOW(r);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Contains("usage"));
    }
}

TEST_CASE("python tools: plot_sweep.py fixes, facets and draws speed-up on a three-axis sweep, with labels that say whose count",
          "[slow][plot]") {
    TempDir tmp;
    if (run_program(tmp, "/usr/bin/python3", {"-c", "import matplotlib"}).code != 0) {
        WARN("python3-matplotlib is not installed: plot test skipped");
        return;
    }
    // Two axes end in `count`: a bare `count=2` in a legend would not say which.
    nlohmann::ordered_json axes;
    axes["chip.cores.cube.count"] = {2, 4};
    axes["chip.cores.vector.count"] = {2, 4};
    axes["chip.hbm.bandwidth_gbps"] = {200, 400};
    nlohmann::ordered_json s;
    s["chip"] = kSrc + "/configs/chips/ax300.json";
    s["workload"] = kSrc + "/traces/convbnrelu_tile.jsonl";
    s["axes"] = axes;
    s["metrics"] = {"total_cycles"};
    const std::string out = tmp.path("sw");
    REQUIRE(run_npusim(tmp, {"sweep", tmp.write("s.json", s.dump(2)), "--out", out, "-j", "2"}).code == 0);
    const auto plot = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {kSrc + "/tools/plot_sweep.py", out});
        return run_program(tmp, "/usr/bin/python3", args);
    };
    const auto refused = [](const Result& r) {
        SHOW(r);
        CHECK(r.code == 2);
        CHECK(lines(r.err) == 1);
        CHECK_THAT(r.err, StartsWith("plot_sweep: error: ") && !Contains("Traceback"));
    };
    const auto drawn = [&](const Result& r, const std::string& png) {
        SHOW(r);
        CHECK(r.code == 0);
        CHECK(slurp(png).substr(1, 3) == "PNG");
    };

    // A heat map of three axes needs the third fixed or faceted, and says which.
    const Result three = plot({"--kind", "heatmap"});
    refused(three);
    CHECK_THAT(three.err, Contains("fix or facet") && Contains("hbm.bandwidth_gbps"));
    const std::string heat = tmp.path("heat.png"), facet = tmp.path("facet.png"), speed = tmp.path("speed.png");
    drawn(plot({"--kind", "heatmap", "--fix", "hbm.bandwidth_gbps=400", "--out", heat}), heat);
    drawn(plot({"--facet", "vector.count", "--out", facet}), facet);
    const Result typo = plot({"--fix", "cube.cont=2"});
    refused(typo);
    CHECK_THAT(typo.err, Contains("did you mean 'cube.count'?"));

    // Speed-up against one point; --table prints each drawn point as metric, panel, series, x, value.
    const Result sp = plot({"--x", "hbm.bandwidth_gbps", "--speedup-vs", "cube.count=2,vector.count=2,hbm.bandwidth_gbps=200",
                            "--table", "--out", speed});
    drawn(sp, speed);
    std::map<std::pair<std::string, std::string>, std::string> table;  // (series, x) -> value
    std::istringstream in(sp.out);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
        INFO(line);
        REQUIRE(f.size() == 5);
        CHECK(f[0] == "total_cycles");
        CHECK_THAT(f[2], StartsWith("cube.count=") && Contains(", vector.count="));  // never a bare `count=`
        table[{f[2], f[3]}] = f[4];
    }
    CHECK(table.size() == 8);
    std::map<std::vector<int>, double> cycles;  // (cube, vector, hbm) -> total_cycles
    std::istringstream rows(slurp(out + "/results.jsonl"));
    for (std::string line; std::getline(rows, line);) {
        if (line.empty()) continue;
        const auto r = nlohmann::json::parse(line);
        cycles[{r["axes"]["chip.cores.cube.count"].get<int>(), r["axes"]["chip.cores.vector.count"].get<int>(),
                r["axes"]["chip.hbm.bandwidth_gbps"].get<int>()}] = r["metrics"]["total_cycles"].get<double>();
    }
    REQUIRE(cycles.size() == 8);
    REQUIRE(table.count({"cube.count=2, vector.count=2", "200"}));
    REQUIRE(table.count({"cube.count=4, vector.count=4", "400"}));
    // Python prints the shortest text that reads back as the same double, and the cycle counts are exact in a
    // double, so the quotients compare exactly.
    CHECK(std::stod(table[{"cube.count=2, vector.count=2", "200"}]) == 1.0);
    CHECK(std::stod(table[{"cube.count=4, vector.count=4", "400"}]) == cycles[{2, 2, 200}] / cycles[{4, 4, 400}]);

    // A base that leaves the x axis out is not one point per line.
    const Result vague = plot({"--x", "hbm.bandwidth_gbps", "--speedup-vs", "cube.count=2"});
    refused(vague);
    CHECK_THAT(vague.err, Contains("ambiguous") && Contains("hbm.bandwidth_gbps=VALUE"));
}
