// What binds, by attribution (hw/bound_by.hpp, docs/statistics.md "What
// binds"): the critical path and every op name the resource that held them
// and the key that sets it. The check is the physics: doubling the named
// resource must speed the run up, and more than doubling one it does not
// name.
#include <catch2/catch.hpp>

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

json stats_with(const TempDir& tmp, const std::string& workload, const std::vector<std::string>& sets,
                const std::string& chip = kA2) {
    return run_for_stats(tmp, chip, workload, sets);
}

// The critical path's leading resource other than latency.
json top_bind(const json& stats) {
    for (const auto& b : stats["critical_path"]["binds"])
        if (b["resource"] != "latency") return b;
    return json();
}

double value_at(const json& stats, const std::string& key) {
    const json* cur = &stats["config"];
    std::size_t from = 0;
    for (;;) {
        const auto dot = key.find('.', from);
        cur = &(*cur)[key.substr(from, dot == std::string::npos ? std::string::npos : dot - from)];
        if (dot == std::string::npos) break;
        from = dot + 1;
    }
    return cur->get<double>();
}

// total_ns with the capacity behind `key` doubled (a cycle cost halved),
// beside the base run's other --set values.
double doubled(const TempDir& tmp, const std::string& workload, const json& base, const std::string& key,
               std::vector<std::string> sets = {}, const std::string& chip = kA2) {
    const double v = value_at(base, key);
    const bool cost = key.find("_cycles") != std::string::npos;
    sets.push_back(key + "=" + (cost ? fmt::format("{}", v / 2) : fmt::format("{}", v * 2)));
    return stats_with(tmp, workload, sets, chip)["total_ns"].get<double>();
}

}  // namespace

TEST_CASE("what binds: a 384 MB copy is bound by HBM and twice the HBM bandwidth speeds it far more than twice the GM ports", "[whatif][binds]") {
    TempDir tmp;
    const std::string copy = kSrc + "/traces/copy_48core.jsonl";
    const json base = stats_with(tmp, copy, {});
    const json top = top_bind(base);
    REQUIRE(top.is_object());
    CHECK(top["resource"] == "hbm");
    CHECK(top["key"] == "chip.hbm.bandwidth_gbps");
    CHECK(top["share"].get<double>() > 0.9);
    for (const auto& op : base["ops"]) CHECK(op["resource"] == "hbm");
    const double t = base["total_ns"].get<double>();
    const double hbm = doubled(tmp, copy, base, "chip.hbm.bandwidth_gbps");
    const double port = doubled(tmp, copy, base, "chip.cores.vector.gm_bytes_per_cycle");
    CHECK(hbm < 0.7 * t);
    CHECK(t - hbm > 4 * (t - port));
}

TEST_CASE("what binds: BERT on a2 names the Cube GM port and doubling it saves more than doubling HBM or L2", "[whatif][binds]") {
    TempDir tmp;
    const std::string bert = kSrc + "/models/bert_layer.json";
    const json base = stats_with(tmp, bert, {});
    const json top = top_bind(base);
    REQUIRE(top.is_object());
    INFO(base["critical_path"]["binds"].dump());
    CHECK(top["resource"] == "cube.gm_port");
    CHECK(top["key"] == "chip.cores.cube.gm_bytes_per_cycle");
    // The ops the path runs through most say the same.
    CHECK(base["ops"][0]["resource"] == "cube.gm_port");
    const double t = base["total_ns"].get<double>();
    const double port = doubled(tmp, bert, base, "chip.cores.cube.gm_bytes_per_cycle");
    const double hbm = doubled(tmp, bert, base, "chip.hbm.bandwidth_gbps");
    const double l2 = doubled(tmp, bert, base, "chip.l2.bandwidth_gbps");
    CHECK(port < 0.95 * t);
    CHECK(port < hbm);
    CHECK(port < l2);
    // Every segment of the path carries its resource, and they add up.
    double sum = 0;
    for (const auto& [r, ns] : base["critical_path"]["by_resource"].items()) sum += ns.get<double>();
    CHECK(sum == Approx(base["critical_path"]["total_ns"].get<double>()).epsilon(1e-9));
    for (const auto& seg : base["critical_path"]["segments"]) CHECK(seg.contains("resource"));
}

TEST_CASE("what binds: a ring allreduce's sends are held by the mesh inside the node and twice its planes' bandwidth nearly halves it while twice the L2 port does nothing", "[whatif][binds]") {
    TempDir tmp;
    const std::string chip = kSrc + "/configs/chips/a3-supernode.json", coll = kSrc + "/models/collective_allreduce.json";
    const json base = run_for_stats(tmp, chip, coll, {"chip.interconnect.ranks=8"});
    const json top = top_bind(base);
    REQUIRE(top.is_object());
    INFO(base["critical_path"]["binds"].dump());
    CHECK(top["resource"] == "mesh.intra_node");
    CHECK(top["key"] == "chip.interconnect.intra_node.plane_bandwidth_gbps");
    const double t = base["total_ns"].get<double>();
    const std::vector<std::string> ranks = {"chip.interconnect.ranks=8"};
    const double planes = doubled(tmp, coll, base, "chip.interconnect.intra_node.plane_bandwidth_gbps", ranks, chip);
    const double port = doubled(tmp, coll, base, "chip.cores.vector.l2_read_bytes_per_cycle", ranks, chip);
    CHECK(planes < 0.6 * t);
    CHECK(port > 0.98 * t);
}

TEST_CASE("what binds: --what-would-help with --report puts the re-runs' findings in the page", "[whatif][binds][report]") {
    TempDir tmp;
    const std::string page = tmp.path("r.html");
    const Result r = run_npusim(tmp, {"run", "--chip", kSrc + "/configs/chips/ax300.json", "--workload",
                                      kSrc + "/traces/convbnrelu_tile.jsonl", "--what-would-help", "--report", page, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const std::string html = slurp(page);
    CHECK_THAT(html, Contains("\"help\":[[") && Contains("chip.hbm.bandwidth_gbps 400.0") && Contains("What binds"));
    CHECK_THAT(html, Contains("\"timeline\""));  // the run's own trace still drawn
}

TEST_CASE("what binds: the summary names the resource and its key", "[whatif][binds][cli]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kSrc + "/traces/copy_48core.jsonl"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("binds: hbm ") && Contains("(chip.hbm.bandwidth_gbps)") && Contains("memory (hbm)"));
}
