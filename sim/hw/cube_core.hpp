// Cube (matrix) core: pipes MTE2 (GM->L1), MTE1 (L1->L0A/L0B), M (the cube)
// and FixPipe (L0C->out), stepping through L1 blocks of base tiles. The
// block plan and each pipe's work per block step are the
// chip layer's formulas (chip/timing.hpp); this module moves the bytes
// through the memory system and keeps the time.
#pragma once
#include "chip/timing.hpp"
#include "hw/ai_core.hpp"

namespace npusim {

class CubeCore : public AiCore {
public:
    enum Pipe { mte2, mte1, m, fixpipe };
    CubeCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener);
    // The traffic into and out of the cube cores' own buffers, over all of
    // `cubes`: memory.l1.in_bytes (MTE2), memory.l0.in_bytes (MTE1) and
    // memory.l0c.out_bytes (FixPipe); zero for no cores. And
    // units.cube.replanned_tasks: tasks whose carried plan did not fit.
    static void report_buffers(Stats& s, const std::vector<const AiCore*>& cubes);

private:
    std::uint64_t plan(const Task& t) override;
    StageWork work(const Task& t, int stage, std::uint64_t tile) override;
    int task_start_cycles() const override { return timing::task_start_cycles(CoreType::cube, ctx_.chip); }

    timing::MatmulShape shape_;  // the last task's shape and carried plan, which tiling_ is for
    CubeBlocking blocking_;
    bool planned_ = false;
    timing::MatmulTiling tiling_;
    bool adopted_ = false;         // tiling_ is the plan the task carries
    std::uint64_t replanned_ = 0;  // tasks whose carried plan did not fit this chip
    std::uint64_t a_total_ = 0;  // GM bytes of A of the running task
    double gm_cap_;              // MTE2/FixPipe GM rate, bytes/ps (a division, kept)
    timing::CubeTileRing steps_;  // the running task's block steps
};

}  // namespace npusim
