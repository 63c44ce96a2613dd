// Runs that are valid but probably not what the user meant (docs/configuration.md
// "Plausible ranges", docs/supernode.md, docs/lint.md): a warning on stderr
// for a value far outside real chips and for a stream that cannot fill the
// chip it runs on, an opt-in failure on stale reads, and lint --summary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kSupernode = kSrc + "/configs/chips/a3-supernode.json";
const std::string kCopy = kSrc + "/traces/copy_48core.jsonl";

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("plausibility: HBM at 1.6 GB/s (TB/s meant) warns with key, unit and range, and still runs", "[plausibility]") {
    TempDir tmp;
    const std::string slow = tmp.path("slow.json"), real = tmp.path("real.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kCopy, "--set", "chip.hbm.bandwidth_gbps=1.6",
                                      "--stats", slow, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Contains("npusim: warning: --set chip.hbm.bandwidth_gbps=1.6: chip.hbm.bandwidth_gbps = 1.6 GB/s "
                               "is far outside what real chips have (plausible: 50 to 20000 GB/s)"));
    CHECK(lines(r.err) == 1);
    const Result ok = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kCopy, "--stats", real, "-q"});
    SHOW(ok);
    REQUIRE(ok.code == 0);
    CHECK(ok.err.empty());
    // Run as given: the copy is HBM-bound, so 1000x less bandwidth is far slower.
    CHECK(read_json(slow)["total_cycles"].get<double>() > 100 * read_json(real)["total_cycles"].get<double>());
    // A chip file's value is named by its file.
    json chip = read_json(kAx300);
    chip["clock_ghz"] = 18.5;  // a slipped decimal point
    const Result f = run_npusim(tmp, {"run", "--chip", tmp.write("mhz.json", chip.dump()), "--workload",
                                      kSrc + "/traces/convbnrelu_op.jsonl", "-q"});
    SHOW(f);
    CHECK(f.code == 0);
    CHECK_THAT(f.err, Contains("mhz.json: chip.clock_ghz = 18.5 GHz is far outside") && Contains("plausible: 0.2 to 5 GHz"));
}

TEST_CASE("plausibility: the bundled chips and workloads run without warnings", "[plausibility]") {
    TempDir tmp;
    for (const auto& [chip, workload] : std::vector<std::pair<std::string, std::string>>{
             {kAx300, "traces/convbnrelu_op.jsonl"}, {kAx300, "traces/convbnrelu_tile.jsonl"},
             {kAx300, "traces/lint_concat_oversync.jsonl"}, {kA2, "traces/copy_48core.jsonl"},
             {kA2, "models/resnet50.json"}, {kAx300, "models/segnet.json"}, {kA2, "models/llm_decode.json"}}) {
        const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kSrc + "/" + workload, "-q"});
        INFO(workload);
        SHOW(r);
        CHECK(r.code == 0);
        CHECK(r.err.empty());
    }
}

TEST_CASE("plausibility: the configuration reference shows each key's plausible range", "[plausibility][config]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"config-reference"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("| `chip.hbm.bandwidth_gbps` |") && Contains("plausible 50 to 20000"));
    CHECK(slurp(kSrc + "/docs/configuration.md") == r.out);
}

TEST_CASE("plausibility: a stream compiled for ax300 run on a2 warns that it uses 4 of 24 cube cores", "[plausibility]") {
    TempDir tmp;
    const std::string stream = tmp.path("cbr_ax300.jsonl");
    REQUIRE(run_npusim(tmp, {"compile", "--chip", kAx300, "--workload", kSrc + "/models/convbnrelu.json", "--emit-tasks",
                             stream})
                .code == 0);
    const Result on_a2 = run_npusim(tmp, {"run", "--chip", kA2, "--workload", stream, "-q"});
    SHOW(on_a2);
    CHECK(on_a2.code == 0);
    CHECK_THAT(on_a2.err, Contains("cube tasks can use at most 4 of the 24 cube cores of chip 'a2' (4 pinned cube cores)"));
    CHECK_THAT(on_a2.err, Contains("at most 4 of the 48 vector cores"));
    const Result on_ax300 = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", stream, "-q"});
    SHOW(on_ax300);
    CHECK(on_ax300.code == 0);
    CHECK(on_ax300.err.empty());
    // The bundled ConvBNReLU stream (4 cube streams written for ax300, its
    // tasks unpinned) on a2: a stream orders only issue, so its tasks reach
    // every core and there is nothing to warn about.
    const std::string tile = tmp.path("tile.json");
    const Result streams = run_npusim(
        tmp, {"run", "--chip", kA2, "--workload", kSrc + "/traces/convbnrelu_tile.jsonl", "-q", "--stats", tile});
    CHECK(streams.code == 0);
    CHECK_THAT(streams.err, !Contains("can use at most"));
    const auto stats = read_json(tile);
    int cube_cores_used = 0;
    for (const auto& [name, core] : stats["cores"].items())
        if (name.rfind("cube", 0) == 0 && core["tasks"].get<int>() > 0) ++cube_cores_used;
    CHECK(cube_cores_used == 24);  // its 32 cube tasks on all 24 cores, not on 4
}

TEST_CASE("plausibility: --fail-on-stale exits 1 on a MoE run with stale reads, 0 on a clean one", "[plausibility][moe]") {
    TempDir tmp;
    const std::vector<std::string> base = {"run", "--chip", kSupernode, "--workload", kSrc + "/models/moe_dispatch.json",
                                           "--set", "chip.interconnect.ranks=32", "--set", "workload.variant=optimized",
                                           "--set", "chip.interconnect.reorder_seed=1", "-q"};  // jitter lets a flag overtake its data
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return run_npusim(tmp, a);
    };
    // Flags outside the DataBlocks: a reader can see a flag before its data.
    const std::string stats = tmp.path("s.json");
    const Result stale = with({"--set", "workload.flag_in_block=false", "--stats", stats, "--fail-on-stale"});
    SHOW(stale);
    CHECK(stale.code == 1);
    const double n = read_json(stats)["memory_model"]["stale_reads"].get<double>();
    CHECK(n > 0);
    CHECK_THAT(stale.err, Contains("--fail-on-stale: " + std::to_string(static_cast<int>(n)) + " stale reads on the mesh"));
    const Result off = with({"--set", "workload.flag_in_block=false"});
    CHECK(off.code == 0);  // opt-in
    const Result clean = with({"--fail-on-stale"});
    SHOW(clean);
    CHECK(clean.code == 0);
    const Result die = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kCopy, "--fail-on-stale"});
    CHECK(die.code == 2);
    CHECK_THAT(die.err, Contains("--fail-on-stale: only a run on several ranks"));
}

TEST_CASE("lint: --summary groups near-identical findings with counts", "[lint]") {
    TempDir tmp;
    const Result small = run_npusim(tmp, {"lint", "--chip", kAx300, "--tasks", kSrc + "/traces/lint_concat_oversync.jsonl", "--summary"});
    SHOW(small);
    CHECK(small.code == 1);
    CHECK_THAT(small.out, Contains("16 edges in 1 group") &&
                              Contains("16 x event 'conv_done' orders conv -> maxpool, e.g. 'conv0' -> 'pool0'") &&
                              Contains("the event can be removed"));
    CHECK_THAT(small.out, !Contains("over-synchronisation: event"));  // no per-edge lines

    // ResNet-50 with op-level events: thousands of findings, a few dozen lines.
    const std::string stream = tmp.path("r50op.jsonl");
    REQUIRE(run_npusim(tmp, {"compile", "--chip", kA2, "--workload", kSrc + "/models/resnet50.json", "--set",
                             "workload.sync=op", "--emit-tasks", stream})
                .code == 0);
    const Result full = run_npusim(tmp, {"lint", "--chip", kA2, "--tasks", stream});
    const Result sum = run_npusim(tmp, {"lint", "--chip", kA2, "--tasks", stream, "--summary"});
    CHECK(full.code == 1);
    CHECK(sum.code == 1);
    CHECK(lines(full.out) > 10000);
    CHECK(lines(sum.out) < 100);
    // The counts add up to every finding, and the verdict line is the same.
    const std::regex count(R"re(\n +(\d+) x event)re");
    std::size_t total = 0;
    for (auto it = std::sregex_iterator(sum.out.begin(), sum.out.end(), count); it != std::sregex_iterator(); ++it)
        total += std::stoul((*it)[1]);
    std::size_t per_edge = 0;
    for (std::size_t at = full.out.find("over-synchronisation: event"); at != std::string::npos;
         at = full.out.find("over-synchronisation: event", at + 1))
        ++per_edge;
    CHECK(total == per_edge);
    CHECK(full.out.substr(full.out.rfind("FAILED")) == sum.out.substr(sum.out.rfind("FAILED")));
}
