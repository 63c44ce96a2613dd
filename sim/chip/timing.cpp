#include "chip/timing.hpp"

#include <algorithm>

#include <array>
#include <utility>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "chip/pipeline_schedule.hpp"

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

namespace {
// What one Cube core's buffers hold (docs/design.md, Timing model): base
// tiles double-buffered in L0A/L0B/L0C, L1 blocks of A and B
// double-buffered in L1, the accumulators of a block whose K spans several
// blocks in L0C. plan_matmul chooses within these limits and
// adopt_matmul_tiling checks a given plan against them.
struct CubeBudget {
    std::uint64_t sm, sn, sk, l0a, l0b, l0c_full, l0c, l1, elt, kdeep;
    CubeBudget(const ChipParams& chip, DType dt)
        : sm(static_cast<std::uint64_t>(chip.cube.shape_m)),
          sn(static_cast<std::uint64_t>(chip.cube.shape_n)),
          sk(fractal_k(chip, dt)),
          l0a(static_cast<std::uint64_t>(chip.buffers.l0a_kb) * 1024 / 2),  // double-buffered
          l0b(static_cast<std::uint64_t>(chip.buffers.l0b_kb) * 1024 / 2),
          l0c_full(static_cast<std::uint64_t>(chip.buffers.l0c_kb) * 1024),
          l0c(l0c_full / 2),
          l1(static_cast<std::uint64_t>(chip.buffers.l1_kb) * 1024),
          elt(static_cast<std::uint64_t>(dtype_bytes(dt))),
          kdeep(4 * sk * elt) {}
    // An m0 x n0 base tile, 4 fractals deep in K, double-buffered in L0.
    bool base_fits(std::uint64_t m0, std::uint64_t n0) const {
        return m0 * n0 * kAccBytes <= l0c && m0 * kdeep <= l0a && n0 * kdeep <= l0b;
    }
    // The deepest K step of an m0 x n0 base tile that L0A/L0B hold (at least one fractal).
    std::uint64_t k0_max(std::uint64_t m0, std::uint64_t n0) const {
        const std::uint64_t kmax = std::min(fast_div(l0a, m0 * elt), fast_div(l0b, n0 * elt));
        return std::max<std::uint64_t>(sk, fast_div(kmax, sk) * sk);
    }
    bool block_fits_l1(std::uint64_t m1, std::uint64_t n1, std::uint64_t k1) const {
        return 2 * (m1 + n1) * k1 * elt <= l1;
    }
    bool acc_fits_l0c(std::uint64_t m1, std::uint64_t n1) const { return m1 * n1 * kAccBytes <= l0c_full; }
    // Room in L1 to keep all of A beside B's blocks, all of B beside A's, or both.
    bool a_fits(const MatmulShape& p, std::uint64_t n1, std::uint64_t k1) const {
        return p.m * p.k * elt + 2 * k1 * n1 * elt <= l1;
    }
    bool b_fits(const MatmulShape& p, std::uint64_t m1, std::uint64_t k1) const {
        return p.k * p.n * elt + 2 * m1 * k1 * elt <= l1;
    }
    bool both_fit(const MatmulShape& p) const { return (p.m + p.n) * p.k * elt <= l1; }
};

double a_gm_ratio(const MatmulShape& p) {
    return p.a_bytes ? static_cast<double>(p.a_bytes) / static_cast<double>(p.m * p.k * dtype_bytes(p.dtype)) : 1.0;
}
}  // namespace

namespace {
// Raw bytes of plain values, side by side in a fixed buffer: what a memo
// key is made of, built without a call per value.
template <std::size_t N>
struct ByteBuffer {
    std::array<char, N> data;
    std::size_t size = 0;
    template <class T>
    void add(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        if (size + sizeof v > N) throw std::logic_error("memo key longer than its buffer");
        std::memcpy(data.data() + size, &v, sizeof v);
        size += sizeof v;
    }
};

// The memo keys of one compile name a few chips (the target, its buffers
// rounded down to powers of two): a chip's bytes become a small id, so a
// key is tens of bytes instead of hundreds.
// What the Cube and Vector plans and pipes read of the chip; a Cube plan
// reads nothing of the vector cores (with_vector false), so a chip with
// fewer of them finds the Cube plans already made.
std::uint32_t chip_id(const ChipParams& c, bool with_vector) {
    ByteBuffer<sizeof c.clock_ghz + sizeof c.cube + sizeof c.vector + sizeof c.buffers + sizeof c.l2 + sizeof c.hbm>
        bytes;
    static const VectorParams kNoVector{};  // static: its padding bytes are zero
    bytes.add(c.clock_ghz), bytes.add(c.cube), bytes.add(with_vector ? c.vector : kNoVector);
    bytes.add(c.buffers), bytes.add(c.l2), bytes.add(c.hbm);
    thread_local decltype(bytes.data) last;
    thread_local std::uint32_t last_id = 0;
    thread_local std::unordered_map<std::string, std::uint32_t> ids;
    if (!ids.empty() && std::memcmp(bytes.data.data(), last.data(), last.size()) == 0) return last_id;
    const std::string key(bytes.data.data(), bytes.size);
    last_id = ids.try_emplace(key, static_cast<std::uint32_t>(ids.size())).first->second;
    last = bytes.data;
    return last_id;
}

// A memo key of the raw bytes of what a plan or schedule depends on; str()
// copies them into a string the memo keeps per thread: a lookup that hits
// allocates nothing, and a key is copied out only to be stored.
struct CacheKey {
    ByteBuffer<4096> buf;
    std::string& out;
    explicit CacheKey(std::string& buffer) : out(buffer) {}
    template <class T>
    void add(const T& v) {
        buf.add(v);
    }
    void shape(const MatmulShape& p) { add(p.m), add(p.n), add(p.k), add(p.dtype), add(p.a_bytes), add(p.src), add(p.dst); }
    void chip(const ChipParams& c) { add(chip_id(c, true)); }
    void cube_chip(const ChipParams& c) { add(chip_id(c, false)); }
    const std::string& str() {
        out.assign(buf.data.data(), buf.size);
        return out;
    }
};

MatmulTiling plan_matmul_uncached(const MatmulShape& p, const ChipParams& chip, const PlanContext& where, bool quick);

MatmulTiling plan_matmul_cached(const MatmulShape& p, const ChipParams& chip, const PlanContext& where, bool quick) {
    // The compiler asks for the same tile shapes many times (every block
    // count that rounds to it, the estimate and the carried plan) and a core
    // for every task of an op: plans are kept per shape, place and chip.
    thread_local std::string buffer;
    CacheKey key(buffer);
    key.shape(p);
    key.add(where.active), key.add(where.rereads_hit), key.add(where.warm), key.add(quick);
    key.add(where.a_streams), key.add(where.b_streams);
    key.cube_chip(chip);
    thread_local std::unordered_map<std::string, MatmulTiling> cache;
    const std::string& k = key.str();
    if (const auto it = cache.find(k); it != cache.end()) return it->second;
    if (cache.size() >= 65536) cache.clear();
    std::string stored = k;  // the buffer is reused by the nested plan below
    MatmulTiling t = plan_matmul_uncached(p, chip, where, quick);
    // A buffer of a size between two powers of two (L0B 96 KB) gives base
    // tiles and K steps of its own, not those of the power of two below it
    // (as a doubled buffer keeps its half's): so the full plan also plans
    // for the buffers rounded down to powers of two and keeps that plan if
    // it runs sooner here, so a buffer between two powers of two never
    // plans worse than the power of two below it.
    if (!quick) {
        ChipParams floor2 = chip;
        bool rounded = false;
        for (int BufferParams::*kb : {&BufferParams::l0a_kb, &BufferParams::l0b_kb, &BufferParams::l0c_kb,
                                      &BufferParams::l1_kb}) {
            int& v = floor2.buffers.*kb;
            int f = 1;
            while (f * 2 <= v) f *= 2;
            rounded |= f != v;
            v = f;
        }
        if (rounded) {
            const MatmulTiling f = plan_matmul_cached(p, floor2, where, false);
            if (matmul_plan_cycles(p, f, chip, where) < matmul_plan_cycles(p, t, chip, where) * (1 - 1e-9)) t = f;
        }
    }
    cache.emplace(std::move(stored), t);
    return t;
}
}  // namespace

MatmulTiling plan_matmul(const MatmulShape& p, const ChipParams& chip, const PlanContext& where) {
    return plan_matmul_cached(p, chip, where, false);
}

MatmulTiling plan_matmul_quick(const MatmulShape& p, const ChipParams& chip, const PlanContext& where) {
    return plan_matmul_cached(p, chip, where, true);
}

namespace {
MatmulTiling plan_matmul_uncached(const MatmulShape& p, const ChipParams& chip, const PlanContext& where, bool quick) {
    MatmulTiling t;
    t.elt = dtype_bytes(p.dtype);
    const CubeBudget bud(chip, p.dtype);
    const std::uint64_t sm = bud.sm, sn = bud.sn, sk = bud.sk, l0c_full = bud.l0c_full, elt = bud.elt;
    const std::uint64_t mpad = round_up(p.m, sm), npad = round_up(p.n, sn), kpad = round_up(p.k, sk);
    // Base tile: as large as L0C (double-buffered) holds, the longer side
    // halved first, and deep enough in K (4 fractals) for L0A/L0B.
    t.m0 = mpad;
    t.n0 = npad;
    while (!bud.base_fits(t.m0, t.n0) && (t.m0 > sm || t.n0 > sn)) {
        if (t.m0 * bud.kdeep > bud.l0a && t.m0 > sm) { t.m0 = round_up(t.m0 / 2, sm); continue; }
        if (t.n0 * bud.kdeep > bud.l0b && t.n0 > sn) { t.n0 = round_up(t.n0 / 2, sn); continue; }
        // The longer side, or the only one still longer than a fractal.
        if (t.n0 > sn && (t.n0 >= t.m0 || t.m0 == sm)) t.n0 = round_up(t.n0 / 2, sn);
        else t.m0 = round_up(t.m0 / 2, sm);
    }
    t.k0 = std::min(kpad, bud.k0_max(t.m0, t.n0));
    t.a_gm_ratio = a_gm_ratio(p);

    // L1 blocks: whole base tiles (or the whole padded extent) doubling up
    // to it, and the squarest blocks whose accumulators fill L0C or a half
    // or a quarter of it (most reuse per byte); A and B double-buffered in
    // L1. The fewest GM bytes among the largest base tile's blocks pick the
    // first plan (`t`), which the pipe schedule then ranks against the
    // others below. The blocks of smaller base tiles (the halvings of the
    // largest, in the same order) join too: two halvings for a quick plan,
    // down to one fractal for the full one, whose squarest blocks also go
    // down to kMinSide. So the full plan's candidates on a chip with a
    // larger L0C or L1 include every candidate of the smaller chip (its
    // largest base tile is a halving of this one's), and the plan it ranks
    // fastest is never slower by the schedule.
    const double a_total = static_cast<double>(p.m * p.k * elt) * t.a_gm_ratio;
    const double b_total = static_cast<double>(p.k * p.n * elt);
    const auto ladder = [](std::uint64_t base, std::uint64_t full) {
        std::vector<std::uint64_t> v;
        for (std::uint64_t x = base; x < full; x *= 2) v.push_back(x);
        v.push_back(full);
        return v;
    };
    constexpr std::uint64_t kMinSide = 64;  // smaller squarest blocks reuse too little to be worth ranking
    std::vector<std::uint64_t> sides;
    for (std::uint64_t share = 1; quick ? share <= 4 : l0c_full / share / kAccBytes >= kMinSide * kMinSide; share *= 2)
        sides.push_back(static_cast<std::uint64_t>(std::sqrt(static_cast<double>(l0c_full / share / kAccBytes))));
    double best = -1;
    std::uint64_t best_block = 0;
    // Every block that fits, with its bytes: thousands for a large GEMM, in
    // the thread's buffer (growing it per plan showed in the profile; the
    // ranking below plans no MatMul, so nothing re-enters while it is used).
    thread_local std::vector<std::pair<double, MatmulTiling>> seen;
    seen.clear();
    const auto blocks = [&](const MatmulTiling base, bool pick) {
        std::vector<std::uint64_t> ms = ladder(base.m0, mpad), ns = ladder(base.n0, npad);
        const std::vector<std::uint64_t> ks = ladder(base.k0, kpad);
        for (const std::uint64_t side : sides) {
            ms.push_back(std::min(mpad, std::max(sm, side / sm * sm)));
            ns.push_back(std::min(npad, std::max(sn, side / sn * sn)));
        }
        for (std::size_t i = 0; i < ms.size(); ++i)
            for (std::size_t j = 0; j < ns.size(); ++j)
                for (std::size_t l = 0; l < ks.size(); ++l) {
                    const std::uint64_t m1 = ms[i], n1 = ns[j], k1 = ks[l];
                    // A block of one base tile always goes.
                    const bool one_base_tile = i == 0 && j == 0;
                    if (!bud.block_fits_l1(m1, n1, k1) && !(one_base_tile && l == 0)) continue;
                    const std::uint64_t kb = ceil_div(p.k, k1);
                    if (kb > 1 && !bud.acc_fits_l0c(m1, n1) && !one_base_tile) continue;
                    const std::uint64_t mb = ceil_div(p.m, m1), nb = ceil_div(p.n, n1);
                    // What stays in L1: A panels when K is one block or A fits
                    // beside B's blocks; B when it is one block or fits beside A's.
                    const bool a_fits = bud.a_fits(p, n1, k1), b_fits = bud.b_fits(p, m1, k1), both = bud.both_fit(p);
                    bool a_keep = kb == 1 || a_fits, b_keep = (kb == 1 && nb == 1) || b_fits;
                    if (a_keep && b_keep && !both && kb > 1) {
                        // A and B do not both fit: keep the one that saves more.
                        if (a_total * static_cast<double>(nb - 1) >= b_total * static_cast<double>(mb - 1)) b_keep = false;
                        else a_keep = false;
                    }
                    const double bytes = a_total * static_cast<double>(a_keep ? 1 : nb) +
                                         b_total * static_cast<double>(b_keep ? 1 : mb);
                    MatmulTiling g = base;
                    // A block narrower than the base tile holds one, that narrow.
                    g.m0 = std::min(g.m0, m1), g.n0 = std::min(g.n0, n1);
                    g.m1 = m1, g.n1 = n1, g.k1 = k1, g.mb = mb, g.nb = nb, g.kb = kb;
                    g.a_panel_reused = a_keep, g.b_reused = b_keep;
                    seen.emplace_back(bytes, g);
                    if (!pick) continue;
                    // Ties: the larger output block, then the shorter K step
                    // (a shorter pipe fill and drain).
                    const std::uint64_t block = m1 * n1;
                    if (best >= 0 && (bytes > best || (bytes == best && (block < best_block ||
                                                                         (block == best_block && k1 >= t.k1)))))
                        continue;
                    best = bytes;
                    best_block = block;
                    t = g;
                }
    };
    const MatmulTiling largest = t;
    blocks(largest, true);
    MatmulTiling smaller = largest;
    for (int h = 0; (quick ? h < 2 : true) && (smaller.m0 > sm || smaller.n0 > sn); ++h) {
        if (smaller.n0 > sn && (smaller.n0 >= smaller.m0 || smaller.m0 == sm)) smaller.n0 = round_up(smaller.n0 / 2, sn);
        else smaller.m0 = round_up(smaller.m0 / 2, sm);
        smaller.k0 = std::min(kpad, bud.k0_max(smaller.m0, smaller.n0));
        blocks(smaller, false);
    }
    // A block so large that the task is one step loads everything before
    // the Cube starts, though it moves no more bytes than a few K steps: so
    // a bigger L1 could make a task slower. Then the pipe schedule where the
    // task runs picks among the blocks that move as few bytes.
    // Every block, ranked by the pipe schedule where the task runs (the
    // rule above breaks its ties): the fewest bytes is not always the
    // fastest plan (a block that fills L1 or L0C exposes its whole load or
    // drain), and a larger buffer only adds candidates, so it never makes the
    // chosen plan slower by the schedule. A quick plan (a search rating many
    // tile shapes) ranks only the blocks within kByteSlack of the fewest
    // bytes, kMaxRanked of them at most: never faster than the full plan.
    constexpr double kByteSlack = 1.10;
    constexpr std::size_t kMaxRanked = 24;
    // Fewest bytes first, ties in the order found (as a stable sort, without
    // its temporary buffer of thousands of plans).
    thread_local std::vector<std::uint32_t> order;
    order.clear();
    for (std::uint32_t i = 0; i < seen.size(); ++i) order.push_back(i);
    const auto fewer_bytes = [&](std::uint32_t a, std::uint32_t b) {
        return seen[a].first != seen[b].first ? seen[a].first < seen[b].first : a < b;
    };
    // A quick plan looks at the first kMaxRanked + 1 at most: only they are sorted.
    auto ranked_end = order.end();
    if (quick && order.size() > kMaxRanked + 1) {
        ranked_end = order.begin() + static_cast<std::ptrdiff_t>(kMaxRanked + 1);
        std::partial_sort(order.begin(), ranked_end, order.end(), fewer_bytes);
    } else {
        std::sort(order.begin(), order.end(), fewer_bytes);
    }
    const auto schedule = [&](const MatmulTiling& g) { return matmul_plan_cycles(p, g, chip, where); };
    double fastest = schedule(t);
    std::size_t ranked = 0;
    for (auto it = order.begin(); it != ranked_end; ++it) {
        const auto& [bytes, g] = seen[*it];
        if (quick && (bytes > best * kByteSlack || ranked++ >= kMaxRanked)) break;
        // A plan that cannot run sooner than the fastest so far need not be
        // stepped: the same choice, fewer schedules stepped.
        if (matmul_plan_floor(p, g, chip, where) >= fastest) continue;
        const double c = schedule(g);
        if (c < fastest * (1 - 1e-9)) fastest = c, t = g;
    }
    return t;
}
}  // namespace

namespace {
// Stepped exactly for at least 64 block steps, then extrapolated at the
// rate of the second half: whole rows of blocks (nb·kb steps), since a
// row's steps differ (its last column block may be a narrow remainder,
// its first K step waits for the last row's drain).
std::uint64_t plan_exact_steps(const MatmulTiling& g) {
    const std::uint64_t row = std::max<std::uint64_t>(1, g.nb * g.kb);
    return std::min<std::uint64_t>(2 * row * ceil_div(std::uint64_t{32}, row), 1024);
}
int plan_active(const ChipParams& chip, const PlanContext& where) {
    return where.active > 0 ? where.active : chip.cube.count;
}
}  // namespace

double matmul_plan_cycles(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip,
                          const PlanContext& where) {
    return matmul_pipe_cycles(s, g, chip, plan_active(chip, where), rereads_in_l2(s, g, chip, where),
                              plan_exact_steps(g), where.warm);
}

double matmul_plan_floor(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip,
                         const PlanContext& where) {
    // A stepped schedule never ends before the floor, and an extrapolated
    // one is raised to it (matmul_pipe_cycles_uncached).
    return matmul_pipe_floor(s, g, chip, plan_active(chip, where), rereads_in_l2(s, g, chip, where), where.warm);
}

Rereads rereads_in_l2(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip, const PlanContext& where) {
    if (where.a_streams == 0 || where.b_streams == 0) return Rereads(where.rereads_hit);
    const double elt = static_cast<double>(g.elt), k = static_cast<double>(s.k);
    const double a_panel = static_cast<double>(std::min(g.m1, s.m)) * k * elt * g.a_gm_ratio;
    const double b_panel = static_cast<double>(std::min(g.n1, s.n)) * k * elt;
    const double b_all = static_cast<double>(s.n) * k * elt;
    const double l2 = l2_capacity_bytes(chip);
    const double a_rows = static_cast<double>(where.a_streams) * a_panel;
    const double b_streams = static_cast<double>(where.b_streams);
    return Rereads(a_rows + b_streams * b_panel <= l2, a_rows + b_streams * b_all <= l2);
}

bool adopt_matmul_tiling(const MatmulShape& p, MatmulTiling& t, const ChipParams& chip) {
    const CubeBudget bud(chip, p.dtype);
    t.elt = dtype_bytes(p.dtype);
    t.a_gm_ratio = a_gm_ratio(p);
    if (t.m0 == 0 || t.n0 == 0 || t.k0 == 0 || t.m1 == 0 || t.n1 == 0 || t.k1 == 0) return false;
    // Whole fractals, within the padded extents, K blocks of whole K steps:
    // as plan_matmul's ladders are (the squarest block may be narrower than
    // the base tile).
    const std::uint64_t mpad = round_up(p.m, bud.sm), npad = round_up(p.n, bud.sn), kpad = round_up(p.k, bud.sk);
    if (t.m0 % bud.sm != 0 || t.n0 % bud.sn != 0 || t.k0 % bud.sk != 0) return false;
    if (t.m1 % bud.sm != 0 || t.n1 % bud.sn != 0 || t.k1 % bud.sk != 0) return false;
    if (t.m0 > mpad || t.n0 > npad || t.k0 > kpad || t.m1 > mpad || t.n1 > npad || t.k1 > kpad) return false;
    if (t.k1 < t.k0) return false;
    // The same limits plan_matmul chooses within, with its exceptions: the
    // one-fractal base tile, and a block of one base tile, always go.
    if (!bud.base_fits(t.m0, t.n0) && !(t.m0 == bud.sm && t.n0 == bud.sn)) return false;
    if (t.k0 > bud.k0_max(t.m0, t.n0)) return false;
    const bool one_base_tile = t.m1 == t.m0 && t.n1 == t.n0;
    if (!bud.block_fits_l1(t.m1, t.n1, t.k1) && !(one_base_tile && t.k1 == t.k0)) return false;
    t.mb = ceil_div(p.m, t.m1), t.nb = ceil_div(p.n, t.n1), t.kb = ceil_div(p.k, t.k1);
    std::uint64_t steps = 0;
    if (__builtin_mul_overflow(t.mb, t.nb, &steps) || __builtin_mul_overflow(steps, t.kb, &steps)) return false;
    if (t.kb > 1 && !bud.acc_fits_l0c(t.m1, t.n1) && !one_base_tile) return false;
    if (t.a_panel_reused && t.kb > 1 && !bud.a_fits(p, t.n1, t.k1)) return false;
    if (t.b_reused && !(t.kb == 1 && t.nb == 1) && !bud.b_fits(p, t.m1, t.k1)) return false;
    if (t.a_panel_reused && t.b_reused && t.kb > 1 && !bud.both_fit(p)) return false;
    return true;
}

void fit_rows(MatmulTiling& t, const MatmulShape& s, const ChipParams& chip) {
    const std::uint64_t mpad = round_up(s.m, CubeBudget(chip, s.dtype).sm);
    t.m1 = std::min(t.m1, mpad);
    t.m0 = std::min(t.m0, mpad);
}

namespace {
// What a Cube schedule's transfers cost where it runs: `active` cores
// streaming, a `warm` share of every load fetched by another core first.
struct CubeRates {
    double per_hit, per_miss, out_rate, load_latency, warm;
    CubeRates(const MatmulShape& s, const ChipParams& chip, int active, double warm_share)
        // A load's cycles: hits at the L2 rate, misses at the HBM share (as
        // core_transfer_cycles, with the two rates found once per schedule).
        : per_hit(1.0 / core_transfer_bytes_per_cycle(chip, CoreType::cube, 1.0, active)),
          per_miss(1.0 / core_transfer_bytes_per_cycle(chip, CoreType::cube, 0.0, active)),
          // Stores allocate in the write-back L2: they move at the core's L2 write rate.
          out_rate(core_transfer_bytes_per_cycle(chip, CoreType::cube, 1.0, active, true)),
          load_latency(0),
          warm(s.src == Space::l2 ? 1.0 : warm_share) {
        load_latency = warm * gm_write_latency_cycles(chip) + (1 - warm) * hbm_latency_cycles(chip);
    }
};

double matmul_pipe_cycles_uncached(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip,
                                   const CubeRates& rates, Rereads rereads, std::uint64_t exact_tiles);
}  // namespace

double matmul_pipe_cycles(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip, int active,
                          Rereads rereads, std::uint64_t exact_tiles, double warm) {
    // The compiler's whole-plan searches rate the same Cube tasks in every
    // plan they try (a plan for fewer cores changes a few kernels' tiles):
    // the stepped schedule is kept per task shape, plan, transfer rates and
    // chip. Rates, not the core count: counts whose HBM shares the port
    // caps alike give the same schedule.
    const CubeRates rates(s, chip, active, warm);
    thread_local std::string buffer;
    CacheKey key(buffer);
    key.shape(s);
    key.add(g.m0), key.add(g.n0), key.add(g.k0), key.add(g.m1), key.add(g.n1), key.add(g.k1);
    key.add(g.mb), key.add(g.nb), key.add(g.kb), key.add(g.elt), key.add(g.a_gm_ratio);
    key.add(g.a_panel_reused), key.add(g.b_reused);
    key.add(rates.per_hit), key.add(rates.per_miss), key.add(rates.out_rate), key.add(rates.load_latency);
    key.add(rates.warm), key.add(rereads.a), key.add(rereads.b), key.add(exact_tiles);
    key.cube_chip(chip);
    thread_local std::unordered_map<std::string, double> cache;
    const std::string& k = key.str();
    if (const auto it = cache.find(k); it != cache.end()) return it->second;
    if (cache.size() >= 65536) cache.clear();
    std::string stored = k;  // whatever the schedule asks next may reuse the buffer
    const double c = matmul_pipe_cycles_uncached(s, g, chip, rates, rereads, exact_tiles);
    cache.emplace(std::move(stored), c);
    return c;
}

namespace {
using StepCosts = std::array<StageCost, 4>;  // MTE2, MTE1, M, FixPipe

// A block step's pipe costs follow from the work cube_tile finds for it.
StepCosts step_costs(const CubeTile& c, const MatmulShape& s, const ChipParams& chip, const CubeRates& r,
                     Rereads rereads) {
    const bool gm_in = s.src == Space::hbm || s.src == Space::l2, gm_out = s.dst == Space::hbm || s.dst == Space::l2;
    StepCosts out;
    const std::uint64_t bytes = c.a_gm_bytes + c.b_bytes;
    if (bytes == 0 || !gm_in) {
        out[0] = StageCost{true, 0, 0};
    } else {
        const double again = static_cast<double>((rereads.a && c.a_reread ? c.a_gm_bytes : 0) +
                                                 (rereads.b && c.b_reread ? c.b_bytes : 0));
        const double hits = std::max(again, r.warm * static_cast<double>(bytes));
        out[0] = StageCost{false, hits * r.per_hit + (static_cast<double>(bytes) - hits) * r.per_miss, r.load_latency};
    }
    out[1] = StageCost{false, c.mte1_cycles, 0};
    out[2] = StageCost{false, c.m_cycles, 0};
    if (c.out_bytes == 0) out[3] = StageCost{true, 0, 0};
    else if (!gm_out) out[3] = StageCost{false, fixpipe_local_cycles(chip, c.out_bytes), 0};
    else out[3] = StageCost{false, transfer_cycles(static_cast<double>(c.out_bytes), r.out_rate),
                            gm_write_latency_cycles(chip)};
    return out;
}

// When the block counts cover the shape (as every plan_matmul plan's do),
// a step's work depends only on whether it is in the first or last row
// of blocks, the first or last column, and the last K step (remainders,
// what stays in L1, the FixPipe step): one of 32 kinds, each found once.
class CubeStepTable {
public:
    CubeStepTable(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip, const CubeRates& r,
                  Rereads rereads)
        : s_(s), g_(g), chip_(chip), r_(r), rereads_(rereads),
          by_kind_(g.m1 > 0 && g.n1 > 0 && g.k1 > 0 && g.mb == ceil_div(s.m, g.m1) && g.nb == ceil_div(s.n, g.n1) &&
                   g.kb == ceil_div(s.k, g.k1)) {}

    bool by_kind() const { return by_kind_; }
    // The kinds of the first `tiles` steps, found once by walking the
    // blocks in order: a schedule asks a step's costs many times per stage.
    void index_kinds(std::uint64_t tiles) {
        if (!by_kind_ || kind_of_.size() >= tiles) return;
        kind_of_.clear();
        kind_of_.reserve(tiles);
        std::uint64_t mi = 0, ni = 0, ki = 0;
        for (std::uint64_t t = 0; t < tiles; ++t) {
            kind_of_.push_back(static_cast<std::uint8_t>(kind(mi, ni, ki)));
            if (++ki < g_.kb) continue;
            ki = 0;
            if (++ni < g_.nb) continue;
            ni = 0;
            ++mi;
        }
    }
    unsigned kind(std::uint64_t tile) const {
        const std::uint64_t rest = fast_div(tile, g_.kb), mi = fast_div(rest, g_.nb);
        return kind(mi, rest - mi * g_.nb, tile - rest * g_.kb);
    }
    unsigned kind(std::uint64_t mi, std::uint64_t ni, std::uint64_t ki) const {
        return (mi == 0 ? 1u : 0u) | (mi + 1 == g_.mb ? 2u : 0u) | (ni == 0 ? 4u : 0u) | (ni + 1 == g_.nb ? 8u : 0u) |
               (ki + 1 == g_.kb ? 16u : 0u);
    }
    // The first step of a kind, or ~0 when no step is of that kind.
    std::uint64_t first_of(unsigned kind) const {
        const auto at = [](std::uint64_t blocks, bool first, bool last) -> std::uint64_t {
            if (first) return last == (blocks == 1) ? 0 : ~std::uint64_t{0};
            if (last) return blocks > 1 ? blocks - 1 : ~std::uint64_t{0};
            return blocks > 2 ? 1 : ~std::uint64_t{0};
        };
        const std::uint64_t mi = at(g_.mb, kind & 1u, kind & 2u), ni = at(g_.nb, kind & 4u, kind & 8u);
        const std::uint64_t ki = kind & 16u ? g_.kb - 1 : (g_.kb > 1 ? 0 : ~std::uint64_t{0});
        if (mi == ~std::uint64_t{0} || ni == ~std::uint64_t{0} || ki == ~std::uint64_t{0}) return ~std::uint64_t{0};
        return (mi * g_.nb + ni) * g_.kb + ki;
    }
    const StepCosts& at(std::uint64_t tile) {
        if (tile < kind_of_.size()) {  // a stepped schedule's step: inline
            const unsigned k = kind_of_[tile];
            if (found_ >> k & 1u) return kinds_[k];
        }
        return find(tile);
    }
    // The costs of a kind of step (one there is: first_of(kind) is a step).
    const StepCosts& of_kind(unsigned kind) {
        if (!(found_ >> kind & 1u)) {
            kinds_[kind] = step_costs(cube_tile(s_, g_, chip_, first_of(kind)), s_, chip_, r_, rereads_);
            found_ |= 1u << kind;
        }
        return kinds_[kind];
    }

private:
    [[gnu::noinline]] const StepCosts& find(std::uint64_t tile) {
        if (!by_kind_) {
            Own& o = own_[tile & 7];
            if (o.tile != tile) o = Own{tile, step_costs(cube_tile(s_, g_, chip_, tile), s_, chip_, r_, rereads_)};
            return o.costs;
        }
        const unsigned k = tile < kind_of_.size() ? kind_of_[tile] : kind(tile);
        if (!(found_ >> k & 1u)) {
            kinds_[k] = step_costs(cube_tile(s_, g_, chip_, tile), s_, chip_, r_, rereads_);
            found_ |= 1u << k;
        }
        return kinds_[k];
    }

    struct Own {
        std::uint64_t tile = ~std::uint64_t{0};
        StepCosts costs;
    };
    const MatmulShape& s_;
    const MatmulTiling& g_;
    const ChipParams& chip_;
    const CubeRates& r_;
    Rereads rereads_;
    bool by_kind_;
    std::array<StepCosts, 32> kinds_{};
    std::uint32_t found_ = 0;
    std::array<Own, 8> own_{};
    std::vector<std::uint8_t> kind_of_;  // by step, the first index_kinds() steps
};

// The first `tiles` steps' schedule follows from the kinds of step among
// them and their costs: plans of other shapes, cores or K extents often
// step the same ones (a task's last row only matters once it is reached).
const std::string& schedule_key(CubeStepTable& table, const MatmulTiling& g, std::uint64_t tiles, std::uint32_t port,
                                std::uint64_t period) {
    thread_local std::string buffer;
    CacheKey key(buffer);
    key.add(tiles), key.add(port), key.add(period), key.add(g.nb), key.add(g.kb);
    key.add((g.mb - 1) * g.nb * g.kb < tiles ? g.mb : 0);
    for (unsigned k = 0; k < 32; ++k) {
        const std::uint64_t first = table.first_of(k);
        if (first >= tiles) continue;
        key.add(k);
        for (const StageCost& c : table.of_kind(k)) key.add(c.none), key.add(c.cycles), key.add(c.latency);
    }
    return key.str();
}

double pipe_floor(CubeStepTable& table, const MatmulShape& s, const MatmulTiling& g);

double matmul_pipe_cycles_uncached(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip,
                                   const CubeRates& rates, Rereads rereads, std::uint64_t exact_tiles) {
    const bool gm_in = s.src == Space::hbm || s.src == Space::l2, gm_out = s.dst == Space::hbm || s.dst == Space::l2;
    CubeStepTable table(s, g, chip, rates, rereads);
    const auto cost = [&](int stage, std::uint64_t tile) { return table.at(tile)[static_cast<std::size_t>(stage)]; };
    // MTE2 and FixPipe share the core's GM port (when both go through it).
    // Block steps run m-outer, n, k-inner: the steps of one (m, n) block
    // repeat along a row (those of a whole row when the rows are short).
    const std::uint32_t port = (gm_in ? 1u : 0u) | (gm_out ? 0b1000u : 0u);
    const std::uint64_t period = g.kb * (g.nb <= 4 ? g.nb : 1);
    const auto step = [&](std::uint64_t n) {
        table.index_kinds(n);
        return detail::Stepper<decltype(cost)>(cost).run(4, n, 2, port, period);
    };
    if (!table.by_kind()) return extrapolated_cycles(g.tiles(), exact_tiles, step);
    // A few steps are stepped sooner than their key is made and found.
    constexpr std::uint64_t kMinKept = 16;
    thread_local std::unordered_map<std::string, double> stepped;
    // Extrapolated at the rate of the last stepped steps, a task whose rows
    // end in narrow blocks would seem to run faster than its busiest stage
    // allows: it takes at least that.
    const double floor = g.tiles() > exact_tiles ? pipe_floor(table, s, g) : 0.0;
    return std::max(floor, extrapolated_cycles(g.tiles(), exact_tiles, [&](std::uint64_t n) {
                        if (n < kMinKept) return step(n);
                        const std::string& key = schedule_key(table, g, n, port, period);
                        if (const auto it = stepped.find(key); it != stepped.end()) return it->second;
                        if (stepped.size() >= 65536) stepped.clear();
                        const double c = step(n);
                        stepped.emplace(key, c);
                        return c;
                    }));
}

// How many of a task's block steps are of each kind (CubeStepTable::kind):
// a product of the rows, columns and K steps in each position.
std::array<std::uint64_t, 32> kind_counts(const MatmulTiling& g) {
    // Blocks in a position: bit 0 first, bit 1 last (one block is both).
    const auto in = [](std::uint64_t blocks, unsigned pos) -> std::uint64_t {
        switch (pos) {
            case 3:
                return blocks == 1 ? 1 : 0;
            case 1:
            case 2:
                return blocks > 1 ? 1 : 0;
            default:
                return blocks > 2 ? blocks - 2 : 0;
        }
    };
    std::array<std::uint64_t, 32> n{};
    for (unsigned k = 0; k < 32; ++k) n[k] = in(g.mb, k & 3u) * in(g.nb, k >> 2 & 3u) * (k & 16u ? 1 : g.kb - 1);
    return n;
}

// No schedule of the task's steps ends before its busiest stage (after the
// first step reaches it, and with the last step still to pass the stages
// after it) or its GM port are done: each stage runs its steps one at a
// time, and the port moves one transfer's bytes at a time. 0 when the
// steps are not known by kind.
double pipe_floor(CubeStepTable& table, const MatmulShape& s, const MatmulTiling& g) {
    if (!table.by_kind() || g.tiles() == 0) return 0;
    const std::array<std::uint64_t, 32> count = kind_counts(g);
    std::array<double, 4> busy{};
    for (unsigned k = 0; k < 32; ++k) {
        if (count[k] == 0) continue;
        const StepCosts& c = table.of_kind(k);
        for (std::size_t st = 0; st < 4; ++st)
            if (!c[st].none) busy[st] += static_cast<double>(count[k]) * c[st].cycles;
    }
    const auto pass = [](const StageCost& c) { return c.none ? 0.0 : c.cycles + c.latency; };
    const StepCosts first = table.at(0), last = table.at(g.tiles() - 1);
    double floor = 0, fill = 0;
    for (std::size_t st = 0; st < 4; ++st) {
        double drain = last[st].none ? 0.0 : last[st].latency;
        for (std::size_t after = st + 1; after < 4; ++after) drain += pass(last[after]);
        floor = std::max(floor, fill + busy[st] + drain);
        fill += pass(first[st]);
    }
    const bool gm_in = s.src == Space::hbm || s.src == Space::l2, gm_out = s.dst == Space::hbm || s.dst == Space::l2;
    if (gm_in && gm_out) floor = std::max(floor, busy[0] + busy[3]);
    return floor;
}
}  // namespace

double matmul_pipe_floor(const MatmulShape& s, const MatmulTiling& g, const ChipParams& chip, int active,
                         Rereads rereads, double warm) {
    const CubeRates rates(s, chip, active, warm);
    CubeStepTable table(s, g, chip, rates, rereads);
    return pipe_floor(table, s, g);
}

CubeTile cube_tile(const MatmulShape& p, const MatmulTiling& g, const ChipParams& chip, std::uint64_t tile) {
    CubeTile c;
    const std::uint64_t rest = fast_div(tile, g.kb);
    c.mi = fast_div(rest, g.nb);
    c.ki = tile - rest * g.kb;
    c.ni = rest - c.mi * g.nb;
    c.tm = std::min(g.m1, p.m - c.mi * g.m1);
    c.tn = std::min(g.n1, p.n - c.ni * g.n1);
    c.tk = std::min(g.k1, p.k - c.ki * g.k1);
    const std::uint64_t elt = static_cast<std::uint64_t>(g.elt);
    const std::uint64_t a_bytes = c.tm * c.tk * elt, b_bytes = c.tk * c.tn * elt;
    if (!g.a_panel_reused || c.ni == 0)
        c.a_gm_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(a_bytes) * g.a_gm_ratio));
    if (!g.b_reused || c.mi == 0) c.b_bytes = b_bytes;
    c.a_reread = c.ni > 0;
    c.b_reread = c.mi > 0;
    // Every base tile of the block takes its A rows and B columns from L1.
    c.l0_bytes = c.tk * elt * (c.tm * ceil_div(c.tn, g.n0) + c.tn * ceil_div(c.tm, g.m0));
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

namespace {
VectorPlan plan_with_chunk(const VectorShape& s, std::uint64_t chunk) {
    VectorPlan p;
    p.chunk = chunk;
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

VectorPlan plan_vector_uncached(const VectorShape& s, const ChipParams& chip, const VectorContext& where) {
    // Candidates: the largest chunk UB and tile_kb allow
    // (vector_chunk_bytes), then halvings of it (whole rows, or whole
    // repeats) down to kMinChunk. A shorter chunk fills and drains the pipes
    // sooner but pays its instructions and, with two buffers, its load
    // latency more often: the fastest schedule (at the core's share of HBM
    // with every vector core streaming) wins, ties the larger chunk.
    constexpr std::uint64_t kMinChunk = 2048;
    constexpr std::uint64_t kExactTiles = 32;  // then extrapolated at the steady rate
    const std::uint64_t largest = vector_chunk_bytes(s, chip);
    const std::uint64_t row = s.row_bytes, repeat = static_cast<std::uint64_t>(chip.vector.repeat_bytes);
    const bool whole_rows = row > 0 && row < s.bytes && largest % row == 0;
    const int vectors = where.active > 0 ? std::min(where.active, std::max(1, chip.vector.count)) : std::max(1, chip.vector.count);
    VectorPlan best = plan_with_chunk(s, largest);
    if (s.bytes <= repeat) return best;
    double best_t = vector_pipe_cycles(s, best, chip, vectors, kExactTiles, where.warm);
    std::uint64_t prev = largest;
    for (int h = 1; (largest >> h) >= kMinChunk; ++h) {
        std::uint64_t c = largest >> h;
        if (whole_rows) c = c / row * row;
        else if (c > repeat) c = c / repeat * repeat;
        if (c < std::min(repeat, largest) || c == prev) break;
        prev = c;
        const VectorPlan p = plan_with_chunk(s, c);
        const double t = vector_pipe_cycles(s, p, chip, vectors, kExactTiles, where.warm);
        if (t < best_t * (1 - 1e-9)) best = p, best_t = t;
    }
    return best;
}

const std::string& vector_plan_key(const VectorShape& p, const ChipParams& chip, const VectorContext& where) {
    thread_local std::string buffer;
    CacheKey key(buffer);
    key.add(where.active), key.add(where.warm), key.add(p.src), key.add(p.dst);
    key.add(p.bytes), key.add(p.out_bytes), key.add(p.dtype), key.add(p.row_bytes), key.add(p.cycles_per_repeat);
    key.add(p.copy), key.chip(chip);
    return key.str();
}
}  // namespace

bool adopt_vector_chunk(const VectorShape& s, std::uint64_t chunk, const ChipParams& chip, VectorPlan& plan) {
    // plan_vector's candidates are the largest chunk this chip allows (UB
    // double-buffered with the output, tile_kb) and its halvings: whole
    // rows where a row fits, else whole repeats (or the whole task).
    const std::uint64_t largest = vector_chunk_bytes(s, chip);
    const std::uint64_t row = s.row_bytes, repeat = static_cast<std::uint64_t>(chip.vector.repeat_bytes);
    if (chunk < std::min(repeat, largest) || chunk > largest) return false;
    const bool rows = row > 0 && row < s.bytes && largest % row == 0;  // the plan keeps whole rows
    if (rows && chunk % row != 0) return false;
    if (!rows && chunk > repeat && chunk % repeat != 0 && chunk < s.bytes) return false;
    plan = plan_with_chunk(s, chunk);
    return true;
}

VectorPlan plan_vector(const VectorShape& s, const ChipParams& chip, const VectorContext& where) {
    thread_local std::unordered_map<std::string, VectorPlan> cache;
    const std::string& key = vector_plan_key(s, chip, where);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
    if (cache.size() >= 65536) cache.clear();
    std::string stored = key;  // the buffer is the next key's
    const VectorPlan p = plan_vector_uncached(s, chip, where);
    cache.emplace(std::move(stored), p);
    return p;
}

double vector_pipe_cycles(const VectorShape& s, const VectorPlan& p, const ChipParams& chip, int active,
                          std::uint64_t exact_tiles, double warm) {
    // Loads from HBM hit L2 in the `warm` share (the rest miss), loads from
    // an L2-resident space always hit; stores allocate in the write-back L2.
    // UB in place moves nothing, L1 moves over the core's UB path.
    const double hit = s.src == Space::l2 ? 1.0 : std::clamp(warm, 0.0, 1.0);
    const double rate = core_transfer_bytes_per_cycle(chip, CoreType::vector, hit, active);
    const double latency = hit * gm_write_latency_cycles(chip) + (1 - hit) * hbm_latency_cycles(chip);
    const double out_rate = core_transfer_bytes_per_cycle(chip, CoreType::vector, 1.0, active, true);
    VectorTile c;
    std::uint64_t planned = ~std::uint64_t{0};
    const auto cost = [&](int stage, std::uint64_t tile) {
        if (tile != planned) c = vector_tile(p, s, chip, tile), planned = tile;
        switch (stage) {
            case 0:
                if (c.in_bytes == 0 || s.src == Space::ub) return StageCost{true, 0, 0};
                if (s.src == Space::l1) return StageCost{false, ub_move_cycles(chip, c.in_bytes), 0};
                return StageCost{false, transfer_cycles(static_cast<double>(c.in_bytes), rate), latency};
            case 1: return s.copy ? StageCost{true, 0, 0} : StageCost{false, c.v_cycles, 0};
            default:
                if (c.out_bytes == 0 || s.dst == Space::ub) return StageCost{true, 0, 0};
                if (s.dst == Space::l1) return StageCost{false, ub_move_cycles(chip, c.out_bytes), 0};
                return StageCost{false, transfer_cycles(static_cast<double>(c.out_bytes), out_rate),
                                 gm_write_latency_cycles(chip)};
        }
    };
    // MTE2 and MTE3 share the core's GM port.
    return pipelined_cycles(3, p.tiles, 2, cost, exact_tiles, 0b101u, 1);
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
    // An op that writes more repeats than it reads (an upsampling Resize)
    // walks its output: a chunk costs its output repeats at the task's V
    // work per output repeat (the task's input repeats x cycles_per_repeat
    // over its output repeats), in passes over the output. A chunk of part
    // of one input repeat is not charged that whole repeat's work again.
    const auto rb = static_cast<std::uint64_t>(std::max(1, chip.vector.repeat_bytes));
    const std::uint64_t out_bytes =
        s.bytes == 0 || s.out_bytes <= s.bytes
            ? 0
            : static_cast<std::uint64_t>(static_cast<unsigned __int128>(s.out_bytes) * bytes / s.bytes);
    const std::uint64_t out_repeats = ceil_div(out_bytes, rb);
    if (out_repeats > repeats) {
        const double per_out = s.cycles_per_repeat * static_cast<double>(vector_repeats(s, chip, s.bytes)) /
                               static_cast<double>(ceil_div(s.out_bytes, rb));
        const auto passes = static_cast<std::uint64_t>(std::max(1.0, std::ceil(per_out - 1e-6)));
        const std::uint64_t per_pass = ceil_div(out_repeats, static_cast<std::uint64_t>(std::max(1, chip.vector.max_repeats)));
        return static_cast<double>(out_repeats) * per_out + static_cast<double>(passes * per_pass) * chip.vector.issue_cycles;
    }
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

double l2_port_bytes_per_cycle(const ChipParams& chip, CoreType t, bool write, int active) {
    const double port = t == CoreType::cube ? (write ? chip.cube.l2_write_bytes_per_cycle : chip.cube.l2_read_bytes_per_cycle)
                                            : (write ? chip.vector.l2_write_bytes_per_cycle : chip.vector.l2_read_bytes_per_cycle);
    const double l2_per_cycle = chip.l2.bandwidth_gbps / chip.clock_ghz;
    return std::min(port, l2_per_cycle / std::max(1, active));
}

double core_transfer_bytes_per_cycle(const ChipParams& chip, CoreType t, double hit_fraction, int active, bool write) {
    const double h = std::clamp(hit_fraction, 0.0, 1.0);
    const double gm = t == CoreType::cube ? chip.cube.gm_bytes_per_cycle : chip.vector.gm_bytes_per_cycle;
    const double miss = gm_share_bytes_per_cycle(gm, chip, active);
    const double hit = l2_port_bytes_per_cycle(chip, t, write, active);
    return 1.0 / (h / hit + (1.0 - h) / miss);
}

double core_transfer_cycles(const ChipParams& chip, CoreType t, double bytes, double hit_bytes, int active, bool write) {
    if (bytes <= 0) return 0;
    return transfer_cycles(bytes, core_transfer_bytes_per_cycle(chip, t, hit_bytes / bytes, active, write));
}

double hbm_latency_cycles(const ChipParams& chip) { return chip.hbm.latency_ns * chip.clock_ghz; }
double gm_write_latency_cycles(const ChipParams& chip) { return chip.l2.latency_ns * chip.clock_ghz; }

int task_start_cycles(CoreType t, const ChipParams& chip) {
    return t == CoreType::cube ? chip.cube.task_start_cycles : chip.vector.task_start_cycles;
}

int dispatch_cycles(const ChipParams& chip) { return chip.scalar.dispatch_cycles; }

double dispatch_interval_cycles(const ChipParams& chip) {
    return static_cast<double>(dispatch_cycles(chip)) / std::max(1, chip.scalar.count);
}

}  // namespace npusim::timing
