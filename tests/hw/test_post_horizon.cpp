// What the System's lookahead rests on (hw/post_horizon, docs/architecture.md
// "How time works"): no task runs on its core in less than its floor. A
// floor above a task's real time would let a window span a cell a die
// posts in, and a post would land where the receiver has already run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "compiler/compiler.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "hw/post_horizon.hpp"
#include "support/build_paths.hpp"

using namespace npusim;

TEST_CASE("post horizon: no task of a compiled model runs in less than its floor and MatMul floors come near",
          "[die]") {
    const std::string src = NPUSIM_SOURCE_DIR;
    const RunConfig cfg = RunConfig::load(src + "/configs/chips/a3-supernode.json", src + "/models/llm_decode.json",
                                          {"chip.interconnect.ranks=1"});
    const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
    const TaskStream& ts = r.stream;
    Die die("die0", cfg.chip(), ts, nullptr);
    die.run();
    double closest = 1e30;  // the least time / floor of a MatMul reading GM
    std::size_t matmuls = 0;
    for (std::uint32_t i = 0; i < ts.tasks.size(); ++i) {
        const Task& t = ts.tasks[i];
        const TaskTiming& tm = die.context().timing[i];
        const std::uint64_t floor = task_floor_ps(t, cfg.chip());
        INFO(t.id << ": " << tm.end_ps - tm.start_ps << " ps on its core, floor " << floor);
        REQUIRE(tm.end_ps - tm.start_ps >= floor);
        if (t.kernel != Kernel::matmul) continue;
        ++matmuls;
        closest = std::min(closest, static_cast<double>(tm.end_ps - tm.start_ps) / static_cast<double>(floor));
    }
    REQUIRE(matmuls > 50);
    // Decode GEMMs stream their weights: the B operand at the port's rate is
    // a good part of some task's time, so the floors bound a die's next post
    // well beyond its start-up costs.
    CHECK(closest < 3.0);
}
