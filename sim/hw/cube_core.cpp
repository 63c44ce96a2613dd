#include "hw/cube_core.hpp"

#include <algorithm>
#include <cmath>

#include "stats/stats.hpp"

namespace npusim {

namespace {
// Divisors here are mostly fractal shapes and tile counts, powers of two or
// 1: shifts instead of 64-bit divisions, which showed in the profile (a
// dozen per task plan, several per tile).
std::uint64_t fast_div(std::uint64_t a, std::uint64_t b) {
    return (b & (b - 1)) == 0 ? a >> __builtin_ctzll(b) : a / b;
}
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return fast_div(a + b - 1, b); }
std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return ceil_div(a, b) * b; }
constexpr std::uint64_t kAccBytes = 4;  // L0C accumulates in fp32 / int32
constexpr std::uint64_t kOutBytes = 2;  // FixPipe writes fp16
}  // namespace

std::uint64_t cube_cycles(const ChipParams& chip, DType dt, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
    const std::uint64_t sk = static_cast<std::uint64_t>(chip.cube.shape_k) * (dt == DType::int8 ? 2 : 1);
    return ceil_div(m, chip.cube.shape_m) * ceil_div(k, sk) * ceil_div(n, chip.cube.shape_n);
}

MatmulTiling plan_matmul(const KernelParams& p, const ChipParams& chip) {
    MatmulTiling t;
    t.elt = dtype_bytes(p.dtype);
    const std::uint64_t sm = chip.cube.shape_m, sn = chip.cube.shape_n;
    const std::uint64_t sk = static_cast<std::uint64_t>(chip.cube.shape_k) * (p.dtype == DType::int8 ? 2 : 1);
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

CubeCore::CubeCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener)
    : AiCore(name, CoreType::cube, index, ctx, listener, {"mte2", "mte1", "m", "fixpipe"}),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.cube.gm_bytes_per_cycle)) {}

std::uint64_t CubeCore::plan(const Task& t) {
    // Consecutive tasks on a core are often the same shape (tiles of one
    // op): their plan is the last one's.
    const KernelParams& p = t.params;
    if (planned_ && p.m == planned_.m && p.n == planned_.n && p.k == planned_.k && p.dtype == planned_.dtype &&
        p.a_bytes == planned_.a_bytes)
        return tiling_.mb * tiling_.nb * tiling_.kb;
    planned_ = PlanKey{true, p.m, p.n, p.k, p.a_bytes, p.dtype};
    tiling_ = plan_matmul(t.params, ctx_.chip);
    a_total_ = static_cast<std::uint64_t>(std::llround(
        static_cast<double>(t.params.m * t.params.k * static_cast<std::uint64_t>(tiling_.elt)) * tiling_.a_gm_ratio));
    return tiling_.mb * tiling_.nb * tiling_.kb;
}

StageWork CubeCore::work(const Task& t, int stage, std::uint64_t tile) {
    const KernelParams& p = t.params;
    const MatmulTiling& g = tiling_;
    // tile = (mi * nb + ni) * kb + ki
    const std::uint64_t rest = fast_div(tile, g.kb), mi = fast_div(rest, g.nb);
    const std::uint64_t ki = tile - rest * g.kb, ni = rest - mi * g.nb;
    const std::uint64_t tm = std::min(g.m0, p.m - mi * g.m0);
    const std::uint64_t tn = std::min(g.n0, p.n - ni * g.n0);
    const std::uint64_t tk = std::min(g.k0, p.k - ki * g.k0);
    const std::uint64_t elt = static_cast<std::uint64_t>(g.elt);
    const std::uint64_t a_bytes = tm * tk * elt, b_bytes = tk * tn * elt;
    StageWork w;
    switch (stage) {
        case mte2: {
            if (!is_global(p.src)) return w;  // operands resident in L1
            const bool need_a = !g.a_panel_reused || ni == 0;
            const bool need_b = !g.b_reused || mi == 0;
            const auto a_gm = static_cast<std::uint64_t>(std::llround(static_cast<double>(a_bytes) * g.a_gm_ratio));
            const std::uint64_t bytes = (need_a ? a_gm : 0) + (need_b ? b_bytes : 0);
            if (bytes == 0) return w;
            w.kind = StageWork::Kind::transfer;
            w.bytes = bytes;
            w.transfer.space = p.src;
            w.transfer.bytes = bytes;
            w.transfer.cap_bytes_per_ps = gm_cap_;
            // The input stream holds A (a_total_ bytes in all) then B, tiles
            // in loop order.
            const std::uint64_t a_total = a_total_;
            const std::uint64_t a_off = static_cast<std::uint64_t>(std::llround(
                static_cast<double>((mi * g.kb + ki) * g.m0 * g.k0 * elt) * g.a_gm_ratio));
            const std::uint64_t b_off = a_total + (ki * g.nb + ni) * g.k0 * g.n0 * elt;
            if (need_a) in_map_.map(a_off, a_gm, w.transfer);
            if (need_b) in_map_.map(b_off, b_bytes, w.transfer);
            return w;
        }
        case mte1:
            w.kind = StageWork::Kind::compute;
            w.bytes = a_bytes + b_bytes;
            w.cycles = static_cast<double>(a_bytes + b_bytes) / ctx_.chip.cube.l1_to_l0_bytes_per_cycle;
            return w;
        case m:
            w.kind = StageWork::Kind::compute;
            w.cycles = static_cast<double>(cube_cycles(ctx_.chip, p.dtype, tm, tk, tn));
            return w;
        case fixpipe: {
            if (ki + 1 != g.kb) return w;  // accumulating in L0C
            const std::uint64_t out = tm * tn * kOutBytes;
            w.bytes = out;
            if (is_global(p.dst)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.write = true;
                w.transfer.space = p.dst;
                w.transfer.bytes = out;
                w.transfer.cap_bytes_per_ps = gm_cap_;
                out_map_.map((mi * g.nb + ni) * g.m0 * g.n0 * kOutBytes, out, w.transfer);
            } else {
                w.kind = StageWork::Kind::compute;
                w.cycles = static_cast<double>(out) / ctx_.chip.cube.fixpipe_bytes_per_cycle;
            }
            return w;
        }
    }
    return w;
}

void CubeCore::report_buffers(Stats& s, const std::vector<const AiCore*>& cubes) {
    s.set("memory.l1.in_bytes", pipe_bytes(cubes, mte2));
    s.set("memory.l0.in_bytes", pipe_bytes(cubes, mte1));
    s.set("memory.l0c.out_bytes", pipe_bytes(cubes, fixpipe));
}

}  // namespace npusim
