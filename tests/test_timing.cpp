// The timing formulas are written once (chip/timing.hpp): the hardware times
// its pipes with them and the compiler's cost model estimates tasks with
// them. So the compiler's estimate of an isolated kernel — one task alone on
// a die, cold L2 — must be the simulated time; these cases hold it to 5% on
// both bundled dies, and check that the estimate moves with the chip.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chip/pipeline_schedule.hpp"
#include "chip/timing.hpp"
#include "compiler/cost_model.hpp"
#include "config/run_config.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kAx300 = std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/ax300.json";
const std::string kA2 = std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/a2.json";

// Simulated cycles of a one-task stream (a .jsonl of one line) on `chip_file`.
double simulate(const TempDir& tmp, const std::string& chip_file, const std::string& task_line) {
    const std::string stream = tmp.write("one.jsonl", task_line + "\n");
    const std::string stats = tmp.path("stats.json");
    const Result r = run_npusim(tmp, {"run", "--chip", chip_file, "--workload", stream, "--stats", stats});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return read_json(stats).at("total_cycles").get<double>();
}

std::string matmul_line(std::uint64_t m, std::uint64_t n, std::uint64_t k, const char* dtype) {
    return fmt::format(R"({{"id":"mm","core_type":"cube","kernel":"matmul","stream":"s","wait":[],"signal":[],)"
                       R"("params":{{"m":{},"n":{},"k":{},"dtype":"{}","addr":4294967296,"out_addr":8589934592}}}})",
                       m, n, k, dtype);
}

std::string vector_line(const char* kernel, std::uint64_t bytes, double cycles_per_repeat) {
    const std::string cpr =
        std::string(kernel) == "copy" ? "" : fmt::format(R"("cycles_per_repeat":{},)", cycles_per_repeat);
    return fmt::format(R"({{"id":"v","core_type":"vector","kernel":"{}","stream":"s","wait":[],"signal":[],)"
                       R"("params":{{"bytes":{},{}"addr":4294967296,"out_addr":8589934592}}}})",
                       kernel, bytes, cpr);
}

double estimate_matmul(const ChipParams& chip, std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dt) {
    compiler::CubeWork w;
    w.m = m, w.n = n, w.k = k, w.dtype = dt;
    w.gm_in_bytes = (m + n) * k * static_cast<std::uint64_t>(dtype_bytes(dt));
    w.out_bytes = m * n * timing::kOutBytes;
    return compiler::cube_task_cycles(w, chip, 1);
}

double estimate_vector(const ChipParams& chip, std::uint64_t bytes, double cpr, bool copy) {
    compiler::VectorWork w{bytes, bytes, copy ? 1.0 : cpr, copy};
    return compiler::vector_task_cycles(w, chip, 1);
}

}  // namespace

TEST_CASE("timing: the compiler's estimate of an isolated kernel is the simulated time within 5%", "[timing][e2e]") {
    TempDir tmp;
    for (const std::string& file : {kAx300, kA2}) {
        const ChipParams chip = RunConfig::load(file, "", {}).chip();
        CAPTURE(file);
        struct Mm {
            std::uint64_t m, n, k;
            DType dt;
            const char* name;
        };
        // One base tile; several tiles with K accumulated in L0C; int8.
        for (const Mm& c : {Mm{128, 128, 128, DType::fp16, "fp16"}, Mm{256, 512, 1024, DType::fp16, "fp16"},
                            Mm{200, 100, 300, DType::fp16, "fp16"}, Mm{128, 256, 512, DType::int8, "int8"}}) {
            CAPTURE(c.m, c.n, c.k, c.name);
            const double sim = simulate(tmp, file, matmul_line(c.m, c.n, c.k, c.name));
            const double est = estimate_matmul(chip, c.m, c.n, c.k, c.dt);
            CAPTURE(sim, est);
            CHECK(std::abs(est - sim) <= 0.05 * sim);
        }
        // One vector tile, a multi-chunk vector task, a copy.
        for (const auto& [kernel, bytes, cpr] : {std::tuple<const char*, std::uint64_t, double>{"vector", 8192, 2},
                                                 {"vector", 1 << 20, 4}, {"copy", 1 << 20, 1}}) {
            CAPTURE(kernel, bytes, cpr);
            const double sim = simulate(tmp, file, vector_line(kernel, bytes, cpr));
            const double est = estimate_vector(chip, bytes, cpr, std::string(kernel) == "copy");
            CAPTURE(sim, est);
            CHECK(std::abs(est - sim) <= 0.05 * sim);
        }
    }
}

TEST_CASE("timing: the estimate follows the chip the way the hardware does", "[timing]") {
    const ChipParams a2 = RunConfig::load(kA2, "", {}).chip();
    // A copy streams through the GM port: halving HBM on a single core
    // changes nothing while the port (32 B/cycle) is the limit ...
    ChipParams slow = a2;
    slow.hbm.bandwidth_gbps /= 2;
    const double copy = estimate_vector(a2, 1 << 20, 1, true);
    CHECK(estimate_vector(slow, 1 << 20, 1, true) == Approx(copy).epsilon(0.01));
    // ... but 48 cores streaming at once share HBM: the port is no longer the limit.
    CHECK(compiler::vector_task_cycles({1 << 20, 1 << 20, 1, true}, slow, 48) >
          1.8 * compiler::vector_task_cycles({1 << 20, 1 << 20, 1, true}, a2, 48));
    // A wider cube (n 16 -> 32) halves the M cycles of a tile and shortens a
    // compute-bound matmul.
    ChipParams wide = a2;
    wide.cube.shape_n = 32;
    CHECK(timing::mmad_cycles(wide, DType::fp16, 128, 128, 128) * 2 == timing::mmad_cycles(a2, DType::fp16, 128, 128, 128));
    CHECK(estimate_matmul(wide, 256, 512, 1024, DType::fp16) < estimate_matmul(a2, 256, 512, 1024, DType::fp16));
    // A faster GM port shortens a transfer-bound task; more HBM latency lengthens it.
    ChipParams port = a2;
    port.vector.gm_bytes_per_cycle *= 2;
    CHECK(estimate_vector(port, 1 << 20, 1, true) < 0.6 * copy);
    ChipParams lat = a2;
    lat.hbm.latency_ns *= 2;
    CHECK(estimate_vector(lat, 1 << 20, 1, true) > copy);
}

TEST_CASE("timing: the pipe schedule overlaps stages, fills and drains", "[timing]") {
    // Three stages of 10, 30, 10 cycles over 5 tiles, double-buffered: the
    // middle stage sets the pace (5 x 30) plus fill (10) and drain (10).
    const auto cost = [](int stage, std::uint64_t) { return timing::StageCost{false, stage == 1 ? 30.0 : 10.0, 0}; };
    CHECK(timing::pipelined_cycles(3, 5, 2, cost) == Approx(170));
    // One tile: the stages run one after another.
    CHECK(timing::pipelined_cycles(3, 1, 2, cost) == Approx(50));
    // A transfer's latency overlaps the next transfer, but with two buffers a
    // latency longer than a tile stalls the pipe: tile 2 waits for tile 0 to
    // free its buffer (arrives 110, consumed 120), tile 3 for tile 1.
    const auto lat = [](int stage, std::uint64_t) {
        return stage == 0 ? timing::StageCost{false, 10, 100} : timing::StageCost{false, 10, 0};
    };
    CHECK(timing::pipelined_cycles(2, 2, 2, lat) == Approx(10 + 10 + 100 + 10));
    CHECK(timing::pipelined_cycles(2, 4, 2, lat) == Approx(250));
    // Extrapolated past exact_tiles at the steady-state rate.
    CHECK(timing::pipelined_cycles(3, 1000, 2, cost, 64) == Approx(timing::pipelined_cycles(3, 1000, 2, cost)));
    // A stage with no work costs nothing.
    const auto skip = [](int stage, std::uint64_t) {
        return stage == 1 ? timing::StageCost{true, 0, 0} : timing::StageCost{false, 10, 0};
    };
    CHECK(timing::pipelined_cycles(3, 3, 2, skip) == Approx(40));
}
