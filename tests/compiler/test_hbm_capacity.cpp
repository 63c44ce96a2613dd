// A die's HBM capacity (chip.hbm.size_gb) against what a graph needs of it
// (compiler/hbm_footprint.hpp): the footprint in every compiled run's
// stats, an over-capacity graph refused with the figures, and
// workload.capacity warn running it anyway for what-if studies.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "compiler/graph_reader.hpp"
#include "compiler/hbm_footprint.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";  // 64 GB

// An embedding lookup of `tokens` rows from a [rows, 4096] fp16 table, then
// two element-wise ops on them: the table is the weights, the gathered rows
// the activations (two alive at once at most).
std::string lookup_graph(std::int64_t rows, std::int64_t tokens) {
    return json{{"kind", "graph"},
                {"name", "lookup"},
                {"tensors",
                 {{"ids", {{"shape", {tokens}}, {"dtype", "fp32"}, {"input", true}}},
                  {"table", {{"shape", {rows, 4096}}, {"dtype", "fp16"}, {"const", true}}}}},
                {"nodes",
                 {{{"name", "embed"}, {"op", "Gather"}, {"inputs", {"table", "ids"}}, {"outputs", {"x"}}},
                  {{"name", "act"}, {"op", "ReLU"}, {"inputs", {"x"}}, {"outputs", {"y"}}},
                  {{"name", "scale"}, {"op", "Sigmoid"}, {"inputs", {"y"}}, {"outputs", {"z"}}}}},
                {"outputs", {"z"}}}
        .dump();
}

}  // namespace

TEST_CASE("hbm capacity: the footprint is the weights plus the inputs plus the most activations alive at once",
          "[compiler][capacity]") {
    TempDir tmp;
    const std::string file = tmp.write("lookup.json", lookup_graph(1024, 256));
    const npusim::compiler::Graph g = npusim::compiler::read_graph(file, {});
    const auto f = npusim::compiler::hbm_footprint(g);
    CHECK(f.weights == 1024ull * 4096 * 2);
    CHECK(f.inputs == 256ull * 4);
    // x and y are alive together (y is made from x), then y and z: two
    // 256 x 4096 fp16 tensors at once, not three.
    CHECK(f.activations_peak == 2ull * 256 * 4096 * 2);
    const json s = run_for_stats(tmp, kA2, file);
    CHECK(s["compile"]["hbm_footprint_bytes"].get<std::uint64_t>() == f.total());
    CHECK(s["compile"]["hbm_weights_bytes"].get<std::uint64_t>() == f.weights);
}

TEST_CASE("hbm capacity: a graph over the die's HBM is exit 2 with the figures unless workload.capacity is warn",
          "[compiler][capacity][errors]") {
    TempDir tmp;
    // A 68.7 GB table (2^23 rows of 8 KB) on a 64 GB die; one row looked up.
    const std::string file = tmp.write("big.json", lookup_graph(std::int64_t{1} << 23, 16));
    Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", file});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("big.json: a die needs 68.72 GB of HBM (weights 68.72 GB") &&
                          Catch::Matchers::Contains("but holds 64.00 GB (chip.hbm.size_gb)") &&
                          Catch::Matchers::Contains("workload.capacity=warn"));
    // Twice the HBM: it fits.
    CHECK(run_npusim(tmp, {"run", "--chip", kA2, "--workload", file, "--set", "chip.hbm.size_gb=128", "-q"}).code == 0);
    // A what-if past the capacity: a warning, and the run's numbers.
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", file, "--set", "workload.capacity=warn", "-q"});
    SHOW(r);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Matchers::Contains("npusim: warning:") && Catch::Matchers::Contains("running anyway"));
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", file, "--set", "workload.capacity=warm"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("workload.capacity"));
}
