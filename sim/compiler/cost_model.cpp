#include "compiler/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "chip/pipeline_schedule.hpp"
#include "chip/timing.hpp"

namespace npusim::compiler {
namespace {

timing::VectorShape vector_shape(const VectorWork& w) {
    timing::VectorShape s;
    s.bytes = std::max<std::uint64_t>(1, w.in_bytes);
    s.out_bytes = w.out_bytes;
    s.dtype = w.dtype;
    s.row_bytes = w.row_bytes;
    s.cycles_per_repeat = w.cycles_per_repeat;
    s.copy = w.copy;
    s.src = w.src;
    s.dst = w.dst;
    return s;
}

}  // namespace

double task_overhead_cycles(CoreType t, const ChipParams& chip) {
    return timing::task_start_cycles(t, chip) + timing::dispatch_cycles(chip);
}

double cube_task_cycles(const CubeWork& w, const ChipParams& chip, int active, double shared_hits, bool full) {
    // The tile plan and pipe work of the cube core (chip/timing.hpp), with
    // operands from GM and the result written back to GM.
    timing::MatmulShape s;
    s.m = w.m;
    s.n = w.n;
    s.k = w.k;
    s.dtype = w.cube_dtype();
    s.src = w.src;
    s.dst = w.dst;
    s.a_bytes = w.a_bytes();
    if (s.m == 0 || s.n == 0 || s.k == 0) return task_overhead_cycles(CoreType::cube, chip);
    const timing::PlanContext where = cube_plan_context(w, chip, active, shared_hits);
    const timing::MatmulTiling g = full ? timing::plan_matmul(s, chip, where) : timing::plan_matmul_quick(s, chip, where);
    return timing::matmul_pipe_cycles(s, g, chip, where.active, timing::rereads_in_l2(s, g, chip, where), 4096,
                                      where.warm) +
           task_overhead_cycles(CoreType::cube, chip);
}

double cube_m_cycles(const CubeWork& w, const ChipParams& chip) {
    return static_cast<double>(timing::mmad_cycles(chip, w.cube_dtype(), w.m, w.k, w.n));
}

double cube_task_floor_cycles(const CubeWork& w, const ChipParams& chip) {
    return cube_m_cycles(w, chip) + task_overhead_cycles(CoreType::cube, chip);
}

timing::PlanContext cube_plan_context(const CubeWork& w, const ChipParams& chip, int active, double shared_hits) {
    timing::PlanContext where;
    where.active = std::max(1, active);
    // Bytes the task read before are L2 hits when L2 holds what streams
    // between the two reads: from the plan and the wave's distinct blocks
    // when the tiler knows them (tiles of a wave share panels), else when
    // the operands of every core streaming, counted whole, fit.
    where.a_streams = w.wave_a_blocks;
    where.b_streams = w.wave_b_blocks;
    where.rereads_hit = static_cast<double>(w.gm_in_bytes) * where.active <= timing::l2_capacity_bytes(chip);
    where.warm = std::clamp(shared_hits, 0.0, 1.0);
    return where;
}

double vector_task_cycles(const VectorWork& w, const ChipParams& chip, int active) {
    // The chunk plan and pipe work of the vector core, GM in and out.
    const timing::VectorShape s = vector_shape(w);
    const timing::VectorPlan p = timing::plan_vector(s, chip, timing::VectorContext{active, w.warm});
    return timing::vector_pipe_cycles(s, p, chip, active, 4096, w.warm) + task_overhead_cycles(CoreType::vector, chip);
}

int vector_streams(const VectorWork& w, const ChipParams& chip, std::int64_t tiles) {
    // Short tasks share L2 and HBM with fewer cores than the kernel has
    // tiles: one scalar slot dispatches a task every dispatch_cycles, so
    // many short tasks never all stream together. Fewer streams make each
    // task shorter, so it is iterated down to the count its own length
    // supports.
    int c = static_cast<int>(std::clamp<std::int64_t>(tiles, 1, std::max(1, chip.vector.count)));
    const double interval = timing::dispatch_interval_cycles(chip);
    if (interval <= 0) return c;
    for (int i = 0; i < 16; ++i) {
        const double t = vector_task_cycles(w, chip, c);
        const int next = static_cast<int>(std::clamp<double>(std::ceil(t / interval), 1.0, static_cast<double>(c)));
        if (next >= c) break;
        c = next;
    }
    return c;
}

std::uint64_t vector_task_chunk(const VectorWork& w, const ChipParams& chip, int active) {
    return timing::plan_vector(vector_shape(w), chip, timing::VectorContext{active, w.warm}).chunk;
}

std::int64_t grouped_conv_cube_n(std::int64_t out_channels, std::int64_t groups) {
    const std::int64_t g = std::max<std::int64_t>(1, groups), per = (out_channels + g - 1) / g;
    return g == 1 ? out_channels : g * ((per + 15) / 16 * 16);
}

GroupedConvEstimate estimate_grouped_conv(const Graph& g, const Node& conv, const ChipParams& chip) {
    const Tensor& x = g.tensors[static_cast<std::size_t>(conv.inputs.at(0))];
    const Tensor& w = g.tensors[static_cast<std::size_t>(conv.inputs.at(1))];
    const Tensor& out = g.tensors[static_cast<std::size_t>(conv.outputs.at(0))];
    const Shape& os = out.shape;  // N O Ho Wo
    const Shape& ws = w.shape;    // O C/g kh kw
    const int cubes = std::max(1, chip.cube.count), vectors = std::max(1, chip.vector.count);
    CubeWork cw;
    cw.m = static_cast<std::uint64_t>(os[0] * os[2] * os[3]);
    cw.n = static_cast<std::uint64_t>(grouped_conv_cube_n(os[1], conv.attr_int("groups", 1)));
    cw.k = static_cast<std::uint64_t>(ws[1] * ws[2] * ws[3]);
    cw.gm_in_bytes = x.bytes() + cw.n * cw.k * static_cast<std::uint64_t>(dtype_bytes(w.dtype));
    cw.out_bytes = out.bytes();
    cw.dtype = x.dtype;
    GroupedConvEstimate e;
    e.cube_cycles = cube_task_cycles(cw, chip, cubes) / cubes;
    VectorWork vw{x.bytes(), out.bytes(), static_cast<double>(ws[2] * ws[3]) * static_cast<double>(ws[1])};
    vw.dtype = x.dtype;
    // The per-output taps as a cost per input repeat (the V pipe counts input).
    vw.cycles_per_repeat *= static_cast<double>(out.bytes()) / static_cast<double>(std::max<std::uint64_t>(1, x.bytes()));
    e.vector_cycles = vector_task_cycles(vw, chip, vectors) / vectors;
    return e;
}

BoundaryEstimate estimate_boundary(const Graph& g, const Kernel& c, const Kernel& v, const ChipParams& chip,
                                   SyncGranularity sync) {
    const Tensor& mid = g.tensors[static_cast<std::size_t>(c.output)];
    const Tensor& out = g.tensors[static_cast<std::size_t>(v.output)];
    const int cubes = std::max(1, chip.cube.count), vectors = std::max(1, chip.vector.count);
    // Whole-op work, spread evenly over the cores that run it.
    CubeWork cw;
    for (int in : c.inputs) cw.gm_in_bytes += g.tensors[static_cast<std::size_t>(in)].bytes();
    cw.out_bytes = mid.bytes();
    const Shape& s = mid.shape;
    cw.n = static_cast<std::uint64_t>(s.size() == 4 ? s[1] : s.back());
    cw.m = static_cast<std::uint64_t>(elements(s)) / std::max<std::uint64_t>(1, cw.n);
    cw.k = 256;  // unknown here; only the relative size of the two options matters
    cw.dtype = mid.dtype;
    const double cube_t = cube_task_cycles(cw, chip, cubes) / cubes;
    VectorWork vw{mid.bytes(), out.bytes(), v.cycles_per_repeat};
    vw.dtype = mid.dtype;
    // Split: the Vector op reads the intermediate back from GM on all vector
    // cores, after (op sync) or alongside (tile sync) the Cube op.
    const double vec_split = vector_task_cycles(vw, chip, vectors) / vectors;
    BoundaryEstimate e;
    e.split_cycles = sync == SyncGranularity::op ? cube_t + vec_split : std::max(cube_t, vec_split) + vec_split / 8;
    // Fused: each Cube tile's Vector work runs on the paired vector core from
    // UB / L2 (no HBM read), but only on as many vector cores as cube cores.
    VectorWork fw = vw;
    const timing::VectorShape fs = vector_shape(fw);
    const double v_compute = timing::vector_task_v_cycles(timing::plan_vector(fs, chip), fs, chip);
    const double vec_fused = std::max(v_compute, static_cast<double>(fw.out_bytes) /
                                                     timing::gm_share_bytes_per_cycle(chip.vector.gm_bytes_per_cycle, chip, cubes)) /
                             std::min(cubes, vectors);
    e.fused_cycles = std::max(cube_t - static_cast<double>(cw.out_bytes) / cubes /
                                           timing::gm_share_bytes_per_cycle(chip.cube.gm_bytes_per_cycle, chip, cubes) / 2,
                              vec_fused) +
                     vec_fused / 8;
    return e;
}

}  // namespace npusim::compiler
