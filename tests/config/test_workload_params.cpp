// The typed workload section (config/workload_params.hpp): every field is
// what the schema table says — its defaults, a graph file's own workload
// object, --set — and bad values of the free-form keys fail with the key path.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "compiler/options.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"
#include "host/host_runtime.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kA3 = kSrc + "/configs/chips/a3-supernode.json";
const std::string kConv = kSrc + "/models/convbnrelu.json";
const std::string kMoe = kSrc + "/models/moe_dispatch.json";

const json& schema_default(const std::string& path, const std::string& kind) {
    const KeySpec* k = find_key(path, kind);
    REQUIRE(k != nullptr);
    return k->default_value;
}

}  // namespace

TEST_CASE("workload: every key but notes is bound to a WorkloadParams field", "[config]") {
    for (const KeySpec& k : config_keys()) {
        if (k.path.rfind("workload.", 0) != 0) continue;
        INFO(k.path << " (kind " << k.workload_kind << ")");
        CHECK(static_cast<bool>(k.apply_workload) == (k.path != "workload.notes"));
        CHECK_FALSE(static_cast<bool>(k.apply));  // chip bindings are for chip keys
    }
}

TEST_CASE("workload: defaults in the struct are the schema's", "[config]") {
    // convbnrelu.json gives no workload object of its own: every value is a default.
    const RunConfig cfg = RunConfig::load(kA2, kConv, {});
    const WorkloadParams& w = cfg.workload();
    CHECK(w.kind == "graph");
    CHECK(w.file == kConv);
    const GraphWorkload& g = w.graph;
    CHECK(g.batch == schema_default("workload.batch", "graph").get<int>());
    CHECK(g.submit_batch == schema_default("workload.submit_batch", "graph").get<std::uint32_t>());
    CHECK(g.passes.fold_bn == schema_default("workload.passes.fold_bn", "graph").get<bool>());
    CHECK(g.passes.fuse_vector == schema_default("workload.passes.fuse_vector", "graph").get<bool>());
    CHECK(g.dynamic_shapes == schema_default("workload.dynamic_shapes", "graph").get<bool>());
    CHECK((g.sync == SyncGranularity::tile) == (schema_default("workload.sync", "graph") == "tile"));
    CHECK((g.host_mode == HostMode::off) == (schema_default("workload.host_mode", "graph") == "off"));
    CHECK(g.dims.empty());
    CHECK(g.tiling.empty());
    CHECK(g.cpu_ops.empty());

    // The defaults-only parameters and what hand-built options start from
    // are the same values.
    const GraphWorkload& d = default_workload_params("graph").graph;
    CHECK(d.batch == g.batch);
    CHECK(d.submit_batch == g.submit_batch);
    const compiler::CompileOptions opt;
    CHECK(opt.fold_bn == g.passes.fold_bn);
    CHECK(opt.fuse_activation == g.passes.fuse_activation);
    CHECK(opt.hoist_layout == g.passes.hoist_layout);
    CHECK(opt.sync == g.sync);
    CHECK(opt.boundary == g.fusion_boundary);
    const host::RuntimeOptions rt;
    CHECK(rt.submit_batch == g.submit_batch);
    CHECK(rt.dynamic_shapes == g.dynamic_shapes);

    // The communication ops' defaults and the routing (graphs that span ranks).
    CHECK(d.comm_optimized == (schema_default("workload.variant", "graph") == "optimized"));
    CHECK(d.flag_in_block == schema_default("workload.flag_in_block", "graph").get<bool>());
    CHECK(d.routing.zipf == (schema_default("workload.routing.distribution", "graph") == "zipf"));
    CHECK(d.routing.skew == schema_default("workload.routing.skew", "graph").get<double>());
    CHECK(d.routing.seed == schema_default("workload.routing.seed", "graph").get<std::uint64_t>());
    CHECK(d.routing.redundant_experts == schema_default("workload.routing.redundant_experts", "graph").get<int>());
    CHECK(opt.comm_optimized == d.comm_optimized);
    CHECK(opt.flag_in_block == d.flag_in_block);
}

TEST_CASE("workload: a graph file's own options and --set reach the struct", "[config]") {
    // host_hetero.json: {"host_mode": "hetero", "passes": {"fuse_vector": false}, "fusion_boundary": "split"}
    const RunConfig cfg = RunConfig::load(kA2, kSrc + "/models/host_hetero.json",
                                          {"workload.batch=4", "workload.sync=op", "workload.input_layout=NC1HWC0",
                                           R"(workload.dims={"seq_len": 64})", R"(workload.tiling={"mm1": {"n_blocks": 2}})",
                                           R"(workload.cpu_ops=["mm3"])", "workload.submit_batch=0"});
    const GraphWorkload& g = cfg.workload().graph;
    CHECK(g.host_mode == HostMode::hetero);
    CHECK_FALSE(g.passes.fuse_vector);
    CHECK(g.passes.fold_bn);
    CHECK(g.fusion_boundary == FusionBoundary::split);
    CHECK(g.batch == 4);
    CHECK(g.sync == SyncGranularity::op);
    CHECK(g.input_layout == InputLayout::NC1HWC0);
    CHECK(g.dims == std::map<std::string, std::int64_t>{{"seq_len", 64}});
    REQUIRE(g.tiling.count("mm1"));
    CHECK(g.tiling.at("mm1").n_blocks == 2);
    CHECK(g.tiling.at("mm1").m_blocks == 0);  // not forced
    CHECK(g.cpu_ops == std::vector<std::string>{"mm3"});
    CHECK(g.submit_batch == 0);

    const RunConfig moe_cfg = RunConfig::load(kA3, kMoe, {"workload.variant=baseline", "workload.routing.distribution=zipf",
                                                        "workload.routing.seed=9", "workload.flag_in_block=false",
                                                        "workload.routing.redundant_experts=32"});
    const GraphWorkload& m = moe_cfg.workload().graph;
    CHECK_FALSE(m.comm_optimized);
    CHECK(m.routing.zipf);
    CHECK(m.routing.seed == 9);
    CHECK(m.routing.redundant_experts == 32);
    CHECK_FALSE(m.flag_in_block);
}

TEST_CASE("workload: bad values exit 2 with the key path", "[config]") {
    TempDir tmp;
    auto run = [&](const std::string& chip, const std::string& workload, const std::string& set) {
        return run_npusim(tmp, {"run", "-q", "--chip", chip, "--workload", workload, "--set", set});
    };
    struct Case {
        std::string chip, workload, set, expected;
        bool names_the_set = true;  // the message starts with the --set that wrote the key
    };
    const Case cases[] = {
        {kA2, kConv, R"(workload.dims={"seq_len": 0})", "workload.dims.seq_len: expected a positive integer, got 0"},
        {kA2, kConv, R"(workload.dims={"seq_len": "long"})", "workload.dims.seq_len: expected a positive integer"},
        {kA2, kConv, R"(workload.tiling={"conv1": {"n_blocks": 5000}})", "workload.tiling.conv1.n_blocks: expected an integer in [1, 4096]"},
        {kA2, kConv, R"(workload.tiling={"conv1": 3})", "workload.tiling.conv1: expected an object"},
        {kA2, kConv, "workload.batch=0", "workload.batch: expected an integer >= 1"},
        {kA2, kConv, "workload.host_mode=fast", "workload.host_mode: expected one of"},
        {kA3, kMoe, "workload.routing.redundant_experts=5", "do not divide across the 288 ranks", false},  // checked with the chip
        {kA3, kMoe, "workload.variant=fancy", "workload.variant: expected one of 'baseline', 'optimized'"},
        {kA3, kMoe, "workload.routing.distribution=zipff", "workload.routing.distribution: expected one of 'uniform', 'zipf'"},
    };
    for (const Case& c : cases) {
        const Result r = run(c.chip, c.workload, c.set);
        SHOW(r);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(c.expected));
        CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
        if (c.names_the_set) CHECK_THAT(r.err, Contains("error: --set " + c.set + ": workload."));
    }
    // Read at load time, so every command that loads the run document sees it;
    // a value from the graph file's own workload object names that file.
    CHECK_THROWS_WITH(RunConfig::load(kA2, kConv, {R"(workload.dims={"seq_len": -1})"}),
                      Contains("workload.dims.seq_len: expected a positive integer, got -1"));
    const std::string graph = tmp.write("g.json", R"({"kind": "graph", "workload": {"tiling": {"conv1": {"m_blocks": 0}}},
        "tensors": {"x": {"shape": [1, 64], "input": true}},
        "nodes": [{"name": "conv1", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})");
    CHECK_THROWS_WITH(RunConfig::load(kA2, graph, {}), Contains(graph + ": workload.tiling.conv1.m_blocks: expected an integer in [1, 4096], got 0"));
}

// A copy of a graph with its own "dims": {"batch": 4} used to run at
// workload.batch's default 1 without a word.
TEST_CASE("workload: a graph's own dims.batch holds unless workload.batch is set", "[config][e2e]") {
    TempDir tmp;
    json g = read_json(kConv);
    g["dims"]["batch"] = 4;
    const std::string four = tmp.path("convbnrelu_b4.json");
    std::ofstream(four) << g.dump();
    const auto cycles = [&](const std::string& file, std::vector<std::string> sets) {
        return run_for_stats(tmp, kA2, file, sets)["total_cycles"].get<std::uint64_t>();
    };
    const std::uint64_t own = cycles(four, {}), set4 = cycles(kConv, {"workload.batch=4"}), one = cycles(kConv, {});
    CHECK(own == set4);
    CHECK(own > one);
    CHECK(cycles(four, {"workload.batch=1"}) == one);  // the user's --set wins
}
