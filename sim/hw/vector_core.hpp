// Vector core: pipes MTE2 (GM->UB), V (repeat_bytes per repeat, times the
// op's cycles per repeat) and MTE3 (UB->GM), double-buffered through UB in
// chunks of tile_kb.
#pragma once
#include "hw/ai_core.hpp"

namespace npusim {

// Input bytes per chunk for a task: tile_kb, shrunk so that input and
// output chunks of both buffers fit in UB.
std::uint64_t vector_chunk_bytes(const KernelParams& p, const ChipParams& chip);

class VectorCore : public AiCore {
public:
    enum Pipe { mte2, v, mte3 };
    VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener);
    // The traffic through the vector cores' UB, over all of `vectors`:
    // memory.ub.in_bytes (MTE2) and memory.ub.out_bytes (MTE3); zero for no cores.
    static void report_buffers(Stats& s, const std::vector<const AiCore*>& vectors);

private:
    std::uint64_t plan(const Task& t) override;
    StageWork work(const Task& t, int stage, std::uint64_t tile) override;
    int task_start_cycles() const override { return ctx_.chip.vector.task_start_cycles; }

    std::uint64_t chunk_ = 0;
    std::uint64_t tiles_ = 0;
    std::uint64_t out_per_chunk_ = 0;  // output bytes of every chunk but the last
    bool planned_ = false;             // the plan above is for these sizes:
    std::uint64_t planned_bytes_ = 0, planned_out_bytes_ = 0;
    double gm_cap_;                    // MTE2/MTE3 GM rate, bytes/ps (a division, kept)
};

}  // namespace npusim
