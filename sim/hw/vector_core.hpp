// Vector core: pipes MTE2 (GM->UB), V (repeats of repeat_bytes of lanes,
// rows padded to whole repeats, times the op's cycles per repeat, plus an
// issue cost per instruction) and MTE3 (UB->GM), double-buffered through UB
// in chunks. The chunk plan and each pipe's work per chunk are the chip layer's
// formulas (chip/timing.hpp). A copy with a dst_rank leaves through the
// mesh instead: its MTE3 chunks go out as DataBlocks (remote_write).
#pragma once
#include "chip/timing.hpp"
#include "hw/ai_core.hpp"

namespace npusim {

class VectorCore : public AiCore {
public:
    enum Pipe { mte2, v, mte3 };
    VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener);
    // The traffic through the vector cores' UB, over all of `vectors`:
    // memory.ub.in_bytes (MTE2) and memory.ub.out_bytes (MTE3); zero for no
    // cores. And units.vector.replanned_tasks: tasks whose carried chunk did not fit.
    static void report_buffers(Stats& s, const std::vector<const AiCore*>& vectors);

private:
    std::uint64_t plan(const Task& t) override;
    StageWork work(const Task& t, int stage, std::uint64_t tile) override;
    int task_start_cycles() const override { return timing::task_start_cycles(CoreType::vector, ctx_.chip); }

    // The task being run, as the timing layer sees it, and its chunk plan.
    static timing::VectorShape shape_of(const Task& t);
    // A copy's MTE3 chunk to another rank's GM, over the mesh.
    StageWork remote_write(const Task& t, const timing::VectorTile& c);
    timing::VectorShape shape_;
    timing::VectorPlan plan_;
    bool planned_ = false;  // plan_ is for shape_'s sizes
    std::uint64_t chunk_ = 0;      // ... and the chunk the task carried
    bool adopted_ = false;         // plan_ is that chunk's
    std::uint64_t replanned_ = 0;  // tasks whose carried chunk did not fit this chip
    double gm_cap_;         // MTE2/MTE3 GM rate, bytes/ps (a division, kept)
};

}  // namespace npusim
