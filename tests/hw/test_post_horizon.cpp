// What the System's lookahead rests on (hw/post_horizon, docs/architecture.md
// "How time works"): no task runs on its core in less than its floor. A
// floor above a task's real time would let a window span a cell a die
// posts in, and a post would land where the receiver has already run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "chip/timing.hpp"

#include "compiler/compiler.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "hw/post_horizon.hpp"
#include "llm/hf_config.hpp"
#include "llm/llm_graph.hpp"
#include "support/build_paths.hpp"
#include "support/e2e.hpp"

using namespace npusim;

namespace {
// Runs `workload` on one die and checks every task's time on its core
// against its floor; returns the least time / floor of tasks of `kernel`
// whose floor is more than their start-up.
double check_floors(const std::string& chip, const std::string& workload, const std::vector<std::string>& set,
                    Kernel kernel, std::size_t& counted) {
    const std::string src = NPUSIM_SOURCE_DIR;
    const RunConfig cfg = RunConfig::load(src + chip, workload, set);
    const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
    const TaskStream& ts = r.stream;
    Die die("die0", cfg.chip(), ts, nullptr);
    die.run();
    double closest = 1e30;
    counted = 0;
    for (std::uint32_t i = 0; i < ts.tasks.size(); ++i) {
        const Task& t = ts.tasks[i];
        const TaskTiming& tm = die.context().timing[i];
        const std::uint64_t floor = task_floor_ps(t, cfg.chip());
        INFO(workload << " " << t.id << ": " << tm.end_ps - tm.start_ps << " ps on its core, floor " << floor);
        REQUIRE(tm.end_ps - tm.start_ps >= floor);
        const std::uint64_t start =
            static_cast<std::uint64_t>(timing::task_start_cycles(t.core_type, cfg.chip()) * cfg.chip().ps_per_cycle());
        if (t.kernel != kernel || floor <= start) continue;
        ++counted;
        closest = std::min(closest, static_cast<double>(tm.end_ps - tm.start_ps) / static_cast<double>(floor));
    }
    return closest;
}
}  // namespace

TEST_CASE("post horizon: no task of a compiled model runs in less than its floor and MatMul floors come near",
          "[die]") {
    std::size_t matmuls = 0;
    const double closest =
        check_floors("/configs/chips/a3-supernode.json", std::string(NPUSIM_SOURCE_DIR) + "/models/llm_decode.json",
                     {"chip.interconnect.ranks=1"}, Kernel::matmul, matmuls);
    REQUIRE(matmuls > 50);
    // Decode GEMMs stream their weights: the B operand at the port's rate is
    // a good part of some task's time, so the floors bound a die's next post
    // well beyond its start-up costs.
    CHECK(closest < 3.0);
}

namespace {
// One Llama-family layer built from its config as a graph file (one die
// per process: each case below runs one).
std::string llama_layer(const test::TempDir& tmp, const std::vector<std::string>& set) {
    const std::string src = NPUSIM_SOURCE_DIR;
    const RunConfig cfg = RunConfig::load(src + "/configs/chips/a2.json", src + "/models/llm/llama3_8b.json", set);
    const llm::LlmGraph g =
        llm::build_llm_graph(llm::read_hf_config(cfg.workload().llm.model), cfg.workload().llm, cfg.chip());
    return tmp.write("layer.json", g.text);
}
}  // namespace

// Vector tasks between two posts (norms, RoPE, softmax, quantisation) add
// up to a useful bound only if their floors count their bytes in and out
// through the one port: every task at or above its floor, and some vector
// task near it.
TEST_CASE("post horizon: a vector task takes no less than its bytes at the port's rate (Llama prefill layer)",
          "[die]") {
    test::TempDir tmp;
    const std::string file = llama_layer(
        tmp, {"workload.phase=prefill", "workload.prompt_len=512", "workload.batch=1", "workload.layers=1"});
    std::size_t vectors = 0;
    const double closest = check_floors("/configs/chips/a2.json", file, {}, Kernel::vector, vectors);
    CHECK(vectors > 20);
    CHECK(closest < 2.0);
}

TEST_CASE("post horizon: a vector task takes no less than its bytes at the port's rate (Llama decode layer)", "[die]") {
    test::TempDir tmp;
    const std::string file = llama_layer(tmp, {"workload.layers=1"});
    std::size_t vectors = 0;
    const double closest = check_floors("/configs/chips/a2.json", file, {}, Kernel::vector, vectors);
    CHECK(vectors > 20);
    CHECK(closest < 2.0);
}

TEST_CASE("post horizon: a vector task takes no less than its bytes at the port's rate (BERT layer)", "[die]") {
    std::size_t vectors = 0;
    check_floors("/configs/chips/a2.json", std::string(NPUSIM_SOURCE_DIR) + "/models/bert_layer.json", {},
                 Kernel::vector, vectors);
    CHECK(vectors > 20);
}
