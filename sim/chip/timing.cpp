#include "chip/timing.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::timing {

namespace {
// Divisors here are mostly fractal shapes and tile counts, powers of two or
// 1: shifts instead of 64-bit divisions, which showed in the profile (a
// dozen per task plan, several per tile).
std::uint64_t fast_div(std::uint64_t a, std::uint64_t b) { return (b & (b - 1)) == 0 ? a >> __builtin_ctzll(b) : a / b; }
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return fast_div(a + b - 1, b); }
std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return ceil_div(a, b) * b; }
std::uint64_t fractal_k(const ChipParams& chip, DType dt) {
    return static_cast<std::uint64_t>(chip.cube.shape_k) * (dt == DType::int8 ? 2 : 1);
}
}  // namespace

std::uint64_t mmad_cycles(const ChipParams& chip, DType dt, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
    return ceil_div(m, static_cast<std::uint64_t>(chip.cube.shape_m)) * ceil_div(k, fractal_k(chip, dt)) *
           ceil_div(n, static_cast<std::uint64_t>(chip.cube.shape_n));
}

MatmulTiling plan_matmul(const MatmulShape& p, const ChipParams& chip) {
    MatmulTiling t;
    t.elt = dtype_bytes(p.dtype);
    const std::uint64_t sm = static_cast<std::uint64_t>(chip.cube.shape_m);
    const std::uint64_t sn = static_cast<std::uint64_t>(chip.cube.shape_n);
    const std::uint64_t sk = fractal_k(chip, p.dtype);
    const std::uint64_t l0a = static_cast<std::uint64_t>(chip.buffers.l0a_kb) * 1024 / 2;  // double-buffered
    const std::uint64_t l0b = static_cast<std::uint64_t>(chip.buffers.l0b_kb) * 1024 / 2;
    const std::uint64_t l0c = static_cast<std::uint64_t>(chip.buffers.l0c_kb) * 1024 / 2;
    const std::uint64_t elt = static_cast<std::uint64_t>(t.elt);
    t.m0 = std::min<std::uint64_t>(round_up(p.m, sm), 8 * sm);
    t.n0 = std::min<std::uint64_t>(round_up(p.n, sn), 8 * sn);
    while (t.m0 * t.n0 * kAccBytes > l0c && t.n0 > sn) t.n0 = round_up(t.n0 / 2, sn);
    while (t.m0 * t.n0 * kAccBytes > l0c && t.m0 > sm) t.m0 = round_up(t.m0 / 2, sm);
    std::uint64_t kmax = std::min(fast_div(l0a, t.m0 * elt), fast_div(l0b, t.n0 * elt));
    kmax = std::max<std::uint64_t>(sk, fast_div(kmax, sk) * sk);
    t.k0 = std::min(round_up(p.k, sk), kmax);
    t.mb = ceil_div(p.m, t.m0);
    t.nb = ceil_div(p.n, t.n0);
    t.kb = ceil_div(p.k, t.k0);
    const std::uint64_t l1_quarter = static_cast<std::uint64_t>(chip.buffers.l1_kb) * 1024 / 4;
    t.a_panel_reused = t.m0 * p.k * elt <= l1_quarter;
    t.b_reused = p.k * p.n * elt <= l1_quarter;
    if (p.a_bytes) t.a_gm_ratio = static_cast<double>(p.a_bytes) / static_cast<double>(p.m * p.k * elt);
    return t;
}

CubeTile cube_tile(const MatmulShape& p, const MatmulTiling& g, const ChipParams& chip, std::uint64_t tile) {
    CubeTile c;
    const std::uint64_t rest = fast_div(tile, g.kb);
    c.mi = fast_div(rest, g.nb);
    c.ki = tile - rest * g.kb;
    c.ni = rest - c.mi * g.nb;
    c.tm = std::min(g.m0, p.m - c.mi * g.m0);
    c.tn = std::min(g.n0, p.n - c.ni * g.n0);
    c.tk = std::min(g.k0, p.k - c.ki * g.k0);
    const std::uint64_t elt = static_cast<std::uint64_t>(g.elt);
    const std::uint64_t a_bytes = c.tm * c.tk * elt, b_bytes = c.tk * c.tn * elt;
    if (!g.a_panel_reused || c.ni == 0)
        c.a_gm_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(a_bytes) * g.a_gm_ratio));
    if (!g.b_reused || c.mi == 0) c.b_bytes = b_bytes;
    c.l0_bytes = a_bytes + b_bytes;
    c.mte1_cycles = static_cast<double>(c.l0_bytes) / chip.cube.l1_to_l0_bytes_per_cycle;
    c.m_cycles = static_cast<double>(mmad_cycles(chip, p.dtype, c.tm, c.tk, c.tn));
    if (c.ki + 1 == g.kb) c.out_bytes = c.tm * c.tn * kOutBytes;
    return c;
}

double fixpipe_local_cycles(const ChipParams& chip, std::uint64_t bytes) {
    return static_cast<double>(bytes) / chip.cube.fixpipe_bytes_per_cycle;
}

std::uint64_t vector_chunk_bytes(std::uint64_t bytes, std::uint64_t out_bytes, const ChipParams& chip) {
    const std::uint64_t ub = static_cast<std::uint64_t>(chip.buffers.ub_kb) * 1024;
    const std::uint64_t tile = static_cast<std::uint64_t>(chip.vector.tile_kb) * 1024;
    const double out_per_in = bytes ? static_cast<double>(out_bytes) / static_cast<double>(bytes) : 1.0;
    // Two buffers, each holding an input chunk and its output chunk.
    const auto fit = static_cast<std::uint64_t>(static_cast<double>(ub) / (2.0 * (1.0 + out_per_in)));
    const std::uint64_t repeat = static_cast<std::uint64_t>(chip.vector.repeat_bytes);
    std::uint64_t chunk = std::min({tile, fit, bytes});
    if (chunk > repeat) chunk = chunk / repeat * repeat;  // whole repeats
    return std::max<std::uint64_t>(1, chunk);
}

VectorPlan plan_vector(std::uint64_t bytes, std::uint64_t out_bytes, const ChipParams& chip) {
    VectorPlan p;
    p.chunk = vector_chunk_bytes(bytes, out_bytes, chip);
    p.tiles = (bytes + p.chunk - 1) / p.chunk;
    p.out_per_chunk = bytes ? out_bytes * p.chunk / bytes : 0;
    return p;
}

VectorTile vector_tile(const VectorPlan& p, std::uint64_t bytes, std::uint64_t out_bytes, double cycles_per_repeat,
                       bool is_copy, const ChipParams& chip, std::uint64_t tile) {
    VectorTile v;
    v.in_bytes = std::min(p.chunk, bytes - tile * p.chunk);
    v.out_bytes = tile + 1 == p.tiles ? out_bytes - p.out_per_chunk * (p.tiles - 1) : p.out_per_chunk;
    v.in_offset = tile * p.chunk;
    v.out_offset = tile * p.out_per_chunk;
    if (!is_copy)
        v.v_cycles = std::ceil(static_cast<double>(v.in_bytes) / chip.vector.repeat_bytes) * cycles_per_repeat;
    return v;
}

double ub_move_cycles(const ChipParams& chip, std::uint64_t bytes) {
    return static_cast<double>(bytes) / chip.vector.ub_bytes_per_cycle;
}

double gm_share_bytes_per_cycle(double port_bytes_per_cycle, const ChipParams& chip, int active) {
    // GB/s / GHz = B/cycle; a stream of reads gets the streaming share of peak.
    const double hbm_per_cycle = chip.hbm.bandwidth_gbps * hbm_efficiency(chip.hbm, 0) / chip.clock_ghz;
    return std::min(port_bytes_per_cycle, hbm_per_cycle / std::max(1, active));
}

double hbm_efficiency(const HbmParams& hbm, double write_fraction) {
    const double minority = std::min(write_fraction, 1 - write_fraction);
    const double channel_bytes_per_ns = hbm.bandwidth_gbps / std::max(1, hbm.channels);
    // Per byte moved, the minority direction forces 2 switches every
    // write_batch_bytes of it; each idles the channel turnaround_ns.
    const double idle_per_byte = 2 * hbm.turnaround_ns * minority / std::max(1, hbm.write_batch_bytes);
    return hbm.efficiency / (1 + idle_per_byte * channel_bytes_per_ns);
}

double hbm_latency_cycles(const ChipParams& chip) { return chip.hbm.latency_ns * chip.clock_ghz; }
double gm_write_latency_cycles(const ChipParams& chip) { return chip.l2.latency_ns * chip.clock_ghz; }

int task_start_cycles(CoreType t, const ChipParams& chip) {
    return t == CoreType::cube ? chip.cube.task_start_cycles : chip.vector.task_start_cycles;
}

int dispatch_cycles(const ChipParams& chip) { return chip.scalar.dispatch_cycles; }

}  // namespace npusim::timing
