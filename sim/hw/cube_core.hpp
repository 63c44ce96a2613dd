// Cube (matrix) core: pipes MTE2 (GM->L1), MTE1 (L1->L0A/L0B), M (the cube)
// and FixPipe (L0C->out). A matmul is cut into base tiles that fit L0A/L0B
// and L0C double-buffered; M costs ceil(m/16)·ceil(k/16)·ceil(n/16) cycles
// per tile for fp16 (k in 32s for int8).
#pragma once
#include "hw/ai_core.hpp"

namespace npusim {

// Base tile of a matmul on one cube core; public for tests and the tiler.
struct MatmulTiling {
    std::uint64_t m0 = 0, n0 = 0, k0 = 0;  // base tile
    std::uint64_t mb = 0, nb = 0, kb = 0;  // tile counts per dimension
    int elt = 2;                            // operand bytes
    double a_gm_ratio = 1.0;                // GM bytes of A per byte of A in L0A
    bool a_panel_reused = false;            // A row panel stays in L1 across n tiles
    bool b_reused = false;                  // all of B stays in L1 across m tiles
};
MatmulTiling plan_matmul(const KernelParams& p, const ChipParams& chip);
// M-pipe cycles of one (m, k, n) tile.
std::uint64_t cube_cycles(const ChipParams& chip, DType dt, std::uint64_t m, std::uint64_t k, std::uint64_t n);

class CubeCore : public AiCore {
public:
    enum Pipe { mte2, mte1, m, fixpipe };
    CubeCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener);
    // The traffic into and out of the cube cores' own buffers, over all of
    // `cubes`: memory.l1.in_bytes (MTE2), memory.l0.in_bytes (MTE1) and
    // memory.l0c.out_bytes (FixPipe); zero for no cores.
    static void report_buffers(Stats& s, const std::vector<const AiCore*>& cubes);

private:
    std::uint64_t plan(const Task& t) override;
    StageWork work(const Task& t, int stage, std::uint64_t tile) override;
    int task_start_cycles() const override { return ctx_.chip.cube.task_start_cycles; }

    MatmulTiling tiling_;
    struct PlanKey {  // the shape tiling_ was planned for
        bool valid = false;
        std::uint64_t m = 0, n = 0, k = 0, a_bytes = 0;
        DType dtype = DType::fp16;
        explicit operator bool() const { return valid; }
    } planned_;
    std::uint64_t a_total_ = 0;  // GM bytes of A of the running task
    double gm_cap_;              // MTE2/FixPipe GM rate, bytes/ps (a division, kept)
};

}  // namespace npusim
