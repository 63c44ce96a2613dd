// The Python tools (README "Start here"): they run with /usr/bin/python3,
// and one whose third-party module is missing says in one line which Debian
// package to install, instead of a traceback. `python3 -S` leaves out
// site-packages (where Debian's python3-matplotlib lives), which is what an
// interpreter without Debian's packages looks like.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/e2e.hpp"

using Catch::Matchers::Contains;
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
        if (e.path().extension() != ".py" || e.path().filename() == "debian_deps.py") continue;
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

TEST_CASE("python tools: the standard-library tools start without site-packages", "[tools]") {
    TempDir tmp;
    for (const char* tool : {"check_trace.py", "whatif_conformance.py", "moe_calibration.py", "between_grid.py"}) {
        const Result r = run_program(tmp, "/usr/bin/python3", {"-S", kSrc + "/tools/" + tool, "--help"});
        INFO(tool);
        SHOW(r);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Contains("usage"));
    }
}
