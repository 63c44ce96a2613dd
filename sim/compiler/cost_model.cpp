#include "compiler/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::compiler {
namespace {

// GM bytes per cycle one core gets when `active` cores stream at once.
double gm_rate(double port, const ChipParams& chip, int active) {
    const double hbm_per_cycle = chip.hbm.bandwidth_gbps / chip.clock_ghz;  // GB/s / GHz = B/cycle
    return std::min(port, hbm_per_cycle / std::max(1, active));
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

}  // namespace

double task_overhead_cycles(CoreType t, const ChipParams& chip) {
    const double start = t == CoreType::cube ? chip.cube.task_start_cycles : chip.vector.task_start_cycles;
    return start + chip.scalar.dispatch_cycles;
}

double cube_task_cycles(const CubeWork& w, const ChipParams& chip, int active) {
    const double sk = chip.cube.shape_k * (w.dtype == DType::int8 ? 2 : 1);
    const double mac = ceil_div(static_cast<double>(w.m), chip.cube.shape_m) * ceil_div(static_cast<double>(w.k), sk) *
                       ceil_div(static_cast<double>(w.n), chip.cube.shape_n);
    const double rate = gm_rate(chip.cube.gm_bytes_per_cycle, chip, active);
    const double in = static_cast<double>(w.gm_in_bytes) / rate;
    const double out = static_cast<double>(w.out_bytes) / rate;
    const double l0 = static_cast<double>((w.m + w.n) * w.k * static_cast<std::uint64_t>(dtype_bytes(w.dtype))) /
                      chip.cube.l1_to_l0_bytes_per_cycle;
    // Pipelined: the slowest pipe dominates; latency shows once.
    return std::max({mac, in, out, l0}) + chip.hbm.latency_ns * chip.clock_ghz + task_overhead_cycles(CoreType::cube, chip);
}

double vector_task_cycles(const VectorWork& w, const ChipParams& chip, int active) {
    const double rate = gm_rate(chip.vector.gm_bytes_per_cycle, chip, active);
    const double v = ceil_div(static_cast<double>(w.in_bytes), chip.vector.repeat_bytes) * w.cycles_per_repeat;
    const double in = static_cast<double>(w.in_bytes) / rate;
    const double out = static_cast<double>(w.out_bytes) / rate;
    return std::max({v, in, out}) + chip.hbm.latency_ns * chip.clock_ghz + task_overhead_cycles(CoreType::vector, chip);
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
    // Split: the Vector op reads the intermediate back from GM on all vector
    // cores, after (op sync) or alongside (tile sync) the Cube op.
    const double vec_split = vector_task_cycles(vw, chip, vectors) / vectors;
    BoundaryEstimate e;
    e.split_cycles = sync == SyncGranularity::op ? cube_t + vec_split : std::max(cube_t, vec_split) + vec_split / 8;
    // Fused: each Cube tile's Vector work runs on the paired vector core from
    // UB / L2 (no HBM read), but only on as many vector cores as cube cores.
    VectorWork fw{mid.bytes(), out.bytes(), v.cycles_per_repeat};
    const double v_compute = ceil_div(static_cast<double>(fw.in_bytes), chip.vector.repeat_bytes) * fw.cycles_per_repeat;
    const double vec_fused = std::max(v_compute, static_cast<double>(fw.out_bytes) /
                                                     gm_rate(chip.vector.gm_bytes_per_cycle, chip, cubes)) /
                             std::min(cubes, vectors);
    e.fused_cycles = std::max(cube_t - static_cast<double>(cw.out_bytes) / cubes /
                                           gm_rate(chip.cube.gm_bytes_per_cycle, chip, cubes) / 2,
                              vec_fused) +
                     vec_fused / 8;
    return e;
}

}  // namespace npusim::compiler
