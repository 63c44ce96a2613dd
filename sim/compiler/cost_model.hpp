// The compiler's cost model: cycle estimates of one task on one core, used to
// choose tile shapes, to decide the Cube/Vector fusion boundary and to
// balance cores. It runs the hardware's own formulas (chip/timing.hpp: tile
// plan, per-tile pipe work, the double-buffered pipe schedule), so an
// estimate of an isolated task is the simulated time; it ignores contention
// beyond an even share of HBM and assumes L2 misses.
#pragma once
#include <cstdint>

#include "compiler/graph.hpp"
#include "compiler/kernel_plan.hpp"
#include "compiler/options.hpp"
#include "chip/chip_params.hpp"
#include "chip/timing.hpp"

namespace npusim::compiler {

// Two plans whose estimates differ by less than this are not told apart by
// them: the cost model is per kernel (no other kernel's traffic) and spreads
// shared operand bytes evenly. A plan must be estimated this much faster to
// displace one kept for another reason (the tiler's fewest-bytes rule,
// tile_cube_choice.cpp).
inline constexpr double kEstimateMargin = 0.02;

struct CubeWork {
    std::uint64_t m = 0, n = 0, k = 0;
    std::uint64_t gm_in_bytes = 0;  // A (as read, e.g. conv input rows) + B
    std::uint64_t out_bytes = 0;
    // The distinct A blocks and B blocks the wave of tiles it runs in
    // reads, itself included (0: not known, every core's tile counted
    // whole): what streams through L2 between a block's two reads
    // (timing::rereads_in_l2).
    std::uint64_t wave_a_blocks = 0, wave_b_blocks = 0;
    DType dtype = DType::fp16;
    Space src = Space::hbm, dst = Space::hbm;  // as the task's params say
    // The Cube's operand type (int8 stays int8, every float type runs as
    // fp16, as the tiler emits tasks) and the bytes of A and of B in gm_in_bytes.
    DType cube_dtype() const { return dtype == DType::int8 ? DType::int8 : DType::fp16; }
    std::uint64_t b_bytes() const { return k * n * static_cast<std::uint64_t>(dtype_bytes(cube_dtype())); }
    std::uint64_t a_bytes() const { return gm_in_bytes > b_bytes() ? gm_in_bytes - b_bytes() : 0; }
};

struct VectorWork {
    std::uint64_t in_bytes = 0;
    std::uint64_t out_bytes = 0;
    double cycles_per_repeat = 1;
    bool copy = false;  // no V pipe work
    DType dtype = DType::fp16;
    std::uint64_t row_bytes = 0;  // independent rows of this many input bytes; 0 = contiguous
    Space src = Space::hbm, dst = Space::hbm;
    double warm = 0;  // share of a GM input that L2 holds (an earlier kernel's output)
};

// Cycles of one task, with `active` cores of its type streaming at once
// (they share HBM evenly).
// `shared_hits`: the share of the task's loads that other tiles of its
// kernel fetched first (operand blocks several tiles read), served by L2.
// `full`: with the plan the task will carry (plan_matmul); else with the
// quick plan a search rates its many tile shapes by (plan_matmul_quick).
double cube_task_cycles(const CubeWork& w, const ChipParams& chip, int active, double shared_hits = 0, bool full = false);
// Where such a task runs, as plan_matmul weighs it: cube_task_cycles plans
// the task for this context, and the tiler carries the same plan in the
// stream, so the plan that runs is the one the kernel's tiling was chosen by.
// No plan of the task ends sooner: its Cube (M pipe) work, which every
// plan's blocks add up to at least, one fractal at a time, plus the fixed
// cost (a bound on cube_task_cycles; a test holds it to that).
double cube_task_floor_cycles(const CubeWork& w, const ChipParams& chip);
// The M pipe's cycles for that work, one fractal at a time.
double cube_m_cycles(const CubeWork& w, const ChipParams& chip);
timing::PlanContext cube_plan_context(const CubeWork& w, const ChipParams& chip, int active, double shared_hits);
double vector_task_cycles(const VectorWork& w, const ChipParams& chip, int active);
// The vector cores that stream at once when a kernel's `tiles` equal tasks
// of that work start: at most one per core, and no more than run while the
// scalar slots dispatch the rest (a task of T cycles overlaps about
// T / dispatch interval others). The `active` of the two functions above.
int vector_streams(const VectorWork& w, const ChipParams& chip, std::int64_t tiles);
// Input bytes per UB chunk of the vector core's plan for that work.
std::uint64_t vector_task_chunk(const VectorWork& w, const ChipParams& chip, int active);
// Fixed cost every task pays: dispatch plus kernel entry.
double task_overhead_cycles(CoreType t, const ChipParams& chip);

// A grouped (e.g. depthwise) convolution on the Cube wastes what each
// group's small K (C/g·kh·kw) and N (O/g) leave of the 16 x 16 fractals;
// on the Vector cores it is kh·kw multiply-adds per output on the lanes.
// Whole-op estimates (the work spread evenly over each type's cores).
struct GroupedConvEstimate {
    double cube_cycles = 0;
    double vector_cycles = 0;
    bool on_vector() const { return vector_cycles < cube_cycles; }
};
GroupedConvEstimate estimate_grouped_conv(const Graph& g, const Node& conv, const ChipParams& chip);
// Output columns a grouped convolution's Cube matmul computes: each group's
// O/g channels padded to whole 16-column fractals.
std::int64_t grouped_conv_cube_n(std::int64_t out_channels, std::int64_t groups);

struct BoundaryEstimate {
    double fused_cycles = 0;
    double split_cycles = 0;
};
// Cube kernel c followed by element-wise Vector kernel v.
BoundaryEstimate estimate_boundary(const Graph& g, const Kernel& c, const Kernel& v, const ChipParams& chip,
                                   SyncGranularity sync);

}  // namespace npusim::compiler
