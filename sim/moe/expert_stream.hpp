// The expert FFN GEMMs of the MoE layer as one task stream per rank, run by
// the rank's die (its Cube cores) between the Dispatch and the Combine. Each
// local expert with m routed tokens (from the Routing, so the work is what the
// tokens make it) is two matmuls:
//   gate_up  [m x hidden] x [hidden x 2 ffn]   (gate and up projections together)
//   down     [m x ffn] x [ffn x hidden]
// each cut into a grid of about one tile per Cube core (expert_grid), so the
// cores share every expert. (The SwiGLU between them is elementwise on
// m x ffn values, a few microseconds of vector work, and is not modelled.)
// A gate_up tile waits in memory for the expert's ready flags from the
// Dispatch kernel (task wait_memory); a down tile waits for its expert's
// gate_up tiles; the last task is a one-block flag write into the rank's
// own GM (LayerLayout::done) that the Combine kernel waits for.
#pragma once
#include <cstdint>
#include <vector>

#include "chip/chip_params.hpp"
#include "moe/combine.hpp"
#include "tasks/task.hpp"

namespace npusim {

// How one [m x n] output is cut: rows into `rows.size()` near-equal blocks,
// columns into widths that are multiples of 16 (the cube fractal; the last
// may be narrower). About `cube_cores` tiles in all, the split chosen so the
// tiles are near square in m x n (each tile reads its rows of A and its
// columns of B: square tiles read the least).
struct ExpertGrid {
    std::vector<std::uint64_t> rows, cols;
};
ExpertGrid expert_grid(std::uint64_t m, std::uint64_t n, int cube_cores);

// Rank `rank`'s expert stream.
TaskStream expert_stream(const LayerContext& ctx, const ChipParams& chip, int rank);

}  // namespace npusim
