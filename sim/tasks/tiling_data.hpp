// A task's tiling data (docs/task-streams.md, "Tiling data") and the chip
// layer's plan it stands for: the compiler writes a plan into a task, the
// cube core reads it back. One conversion each way, so the two cannot drift.
#pragma once
#include "chip/timing.hpp"
#include "tasks/task.hpp"

namespace npusim {

inline CubeBlocking cube_blocking(const timing::MatmulTiling& g) {
    CubeBlocking b;
    b.m0 = static_cast<std::uint32_t>(g.m0), b.n0 = static_cast<std::uint32_t>(g.n0), b.k0 = static_cast<std::uint32_t>(g.k0);
    b.m1 = static_cast<std::uint32_t>(g.m1), b.n1 = static_cast<std::uint32_t>(g.n1), b.k1 = static_cast<std::uint32_t>(g.k1);
    b.keep_a = g.a_panel_reused, b.keep_b = g.b_reused;
    return b;
}

// The sizes and reuse flags only: timing::adopt_matmul_tiling fills in the
// rest for a chip, or refuses the plan.
inline timing::MatmulTiling matmul_tiling(const CubeBlocking& b) {
    timing::MatmulTiling g;
    g.m0 = b.m0, g.n0 = b.n0, g.k0 = b.k0;
    g.m1 = b.m1, g.n1 = b.n1, g.k1 = b.k1;
    g.a_panel_reused = b.keep_a, g.b_reused = b.keep_b;
    return g;
}

}  // namespace npusim
