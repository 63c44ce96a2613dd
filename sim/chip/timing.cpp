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

namespace {
std::uint64_t vector_lanes(const VectorShape& s, const ChipParams& chip) {
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(chip.vector.repeat_bytes) /
                                          static_cast<std::uint64_t>(dtype_bytes(s.dtype)));
}
// Repeats of one contiguous run of `bytes` (its last repeat partly masked).
std::uint64_t run_repeats(const VectorShape& s, const ChipParams& chip, std::uint64_t bytes) {
    return ceil_div(ceil_div(bytes, static_cast<std::uint64_t>(dtype_bytes(s.dtype))), vector_lanes(s, chip));
}
// Input bytes that fit UB: two buffers, each an input chunk and its output.
std::uint64_t ub_fit_bytes(const VectorShape& s, const ChipParams& chip) {
    const std::uint64_t ub = static_cast<std::uint64_t>(chip.buffers.ub_kb) * 1024;
    const double out_per_in = s.bytes ? static_cast<double>(s.out_bytes) / static_cast<double>(s.bytes) : 1.0;
    return static_cast<std::uint64_t>(static_cast<double>(ub) / (2.0 * (1.0 + out_per_in)));
}
}  // namespace

std::uint64_t vector_chunk_bytes(const VectorShape& s, const ChipParams& chip) {
    const std::uint64_t tile = static_cast<std::uint64_t>(chip.vector.tile_kb) * 1024;
    const std::uint64_t fit = ub_fit_bytes(s, chip);
    const std::uint64_t row = s.row_bytes;
    if (row > 0 && row < s.bytes && row <= fit)  // whole rows, at least one
        return std::max<std::uint64_t>(1, std::min(tile, fit) / row) * row;
    const std::uint64_t repeat = static_cast<std::uint64_t>(chip.vector.repeat_bytes);
    std::uint64_t chunk = std::min({tile, fit, s.bytes});
    if (chunk > repeat) chunk = chunk / repeat * repeat;  // whole repeats
    return std::max<std::uint64_t>(1, chunk);
}

VectorPlan plan_vector(const VectorShape& s, const ChipParams& chip) {
    VectorPlan p;
    p.chunk = vector_chunk_bytes(s, chip);
    const std::uint64_t row = s.row_bytes;
    if (row > p.chunk && row < s.bytes) {  // rows longer than a chunk: pieces of one row
        p.pieces = ceil_div(row, p.chunk);
        const std::uint64_t rows = s.bytes / row, rest = s.bytes - rows * row;
        p.tiles = rows * p.pieces + ceil_div(rest, p.chunk);
    } else {
        p.tiles = ceil_div(s.bytes, p.chunk);
    }
    return p;
}

std::uint64_t vector_repeats(const VectorShape& s, const ChipParams& chip, std::uint64_t bytes) {
    if (s.row_bytes == 0 || bytes <= s.row_bytes) return run_repeats(s, chip, bytes);
    const std::uint64_t rows = bytes / s.row_bytes;
    return rows * run_repeats(s, chip, s.row_bytes) + run_repeats(s, chip, bytes - rows * s.row_bytes);
}

std::uint64_t vector_instructions(const VectorShape& s, const ChipParams& chip, std::uint64_t repeats) {
    // The tolerance keeps a cost of 2.0000001 (a scaled figure) at two passes.
    const auto passes = static_cast<std::uint64_t>(std::max(1.0, std::ceil(s.cycles_per_repeat - 1e-6)));
    return passes * ceil_div(repeats, static_cast<std::uint64_t>(std::max(1, chip.vector.max_repeats)));
}

double vector_v_cycles(const VectorShape& s, const ChipParams& chip, std::uint64_t bytes) {
    if (s.copy) return 0;
    const std::uint64_t repeats = vector_repeats(s, chip, bytes);
    return static_cast<double>(repeats) * s.cycles_per_repeat +
           static_cast<double>(vector_instructions(s, chip, repeats)) * chip.vector.issue_cycles;
}

VectorTile vector_tile(const VectorPlan& p, const VectorShape& s, const ChipParams& chip, std::uint64_t tile) {
    VectorTile v;
    if (p.pieces > 1) {
        const std::uint64_t row = fast_div(tile, p.pieces), piece = tile - row * p.pieces;
        v.in_offset = row * s.row_bytes + piece * p.chunk;
        v.in_bytes = std::min({p.chunk, s.row_bytes - piece * p.chunk, s.bytes - v.in_offset});
    } else {
        v.in_offset = tile * p.chunk;
        v.in_bytes = std::min(p.chunk, s.bytes - v.in_offset);
    }
    // Output in proportion to the input, so the chunks' shares sum to out_bytes.
    const auto share = [&](std::uint64_t in) -> std::uint64_t {
        if (in >= s.bytes || s.out_bytes == s.bytes) return in >= s.bytes ? s.out_bytes : in;  // the common cases
        std::uint64_t prod = 0;
        if (!__builtin_mul_overflow(s.out_bytes, in, &prod)) return prod / s.bytes;
        return static_cast<std::uint64_t>(static_cast<unsigned __int128>(s.out_bytes) * in / s.bytes);
    };
    v.out_offset = share(v.in_offset);
    v.out_bytes = share(v.in_offset + v.in_bytes) - v.out_offset;
    v.v_cycles = vector_v_cycles(s, chip, v.in_bytes);
    return v;
}

double vector_task_v_cycles(const VectorPlan& p, const VectorShape& s, const ChipParams& chip) {
    if (s.copy || p.tiles == 0) return 0;
    // Chunks repeat with a period of one row's pieces (or are all alike);
    // sum one period and the tail, not every chunk.
    const std::uint64_t period = p.pieces;
    double one = 0;
    for (std::uint64_t t = 0; t < std::min(period, p.tiles); ++t) one += vector_tile(p, s, chip, t).v_cycles;
    const std::uint64_t periods = (p.tiles - 1) / period;  // whole periods before the last one
    double total = one * static_cast<double>(periods);
    for (std::uint64_t t = periods * period; t < p.tiles; ++t) total += vector_tile(p, s, chip, t).v_cycles;
    return total;
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
