// A Cube kernel's block counts (rows, columns, K parts) and so how many of
// the Cube cores it fills: a user's forced tiling, or the counts with the
// least estimated kernel time (CubeRater), with the runners-up the plan
// search tries. Also how a Cube kernel will be cut, asked before it is
// tiled (cube_cut).
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "common/errors.hpp"
#include "compiler/cube_rater.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {
namespace {

// How far behind the best estimate a Cube kernel's runner-up plans may be
// (the plan search tries them in the whole graph's schedule).
constexpr double kRunnerUpBand = 0.15;
constexpr double kFullPlanWindow = 0.05;  // block counts re-rated by the full Cube plan (choose_cube)

using RatedBlocks = std::vector<std::pair<double, CubeBlocks>>;

// Every block count up to four waves of tiles per image, rated by the quick
// Cube plan, then those near the best by the full one; returns the best.
// Counts are rated in the order of their floors (estimate_floor): once a
// floor is beyond every band this file and the plan search judge by, no
// count from there on can be chosen, be re-rated or be a runner-up, and it
// keeps its floor as its estimate. The same choice as rating every count.
double rate_cube_blocks(const CubeProblem& p, CubeRater& rate, RatedBlocks& rated, std::vector<char>& estimated) {
    // Up to four waves of tiles per image, beyond the core count.
    const i64 per_outer = std::max<i64>(64, 4 * rate.cubes());
    const i64 k_units = ceil_div(p.K, 16);
    for (i64 ks = 1; ks <= (p.split_k ? std::min<i64>(k_units, 8) : 1); ks *= 2) {
        if (ks > 1 && p.outer * ks > per_outer) break;
        for (i64 mb = 1; mb <= std::min<i64>(ceil_div(p.rows, p.row_unit), per_outer / ks); ++mb) {
            for (i64 nb = 1; nb <= std::min<i64>(ceil_div(p.cols, 16), per_outer / (ks * mb)); ++nb) {
                const CubeBlocks b{mb, nb, ks};
                rated.emplace_back(rate.estimate_floor(b), b);
            }
        }
    }
    std::vector<std::size_t> order(rated.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return rated[a].first < rated[b].first; });
    constexpr double kWidestBand = std::max({kFullPlanWindow, kEstimateMargin, kRunnerUpBand});
    double best = std::numeric_limits<double>::max();
    std::size_t done = 0;  // order[0, done) rated
    // Rates by the quick plan, in floor order, every count whose floor is
    // within the band of the best so far.
    const auto rate_within_band = [&] {
        for (; done < order.size() && rated[order[done]].first <= best * (1 + kWidestBand); ++done) {
            auto& [est, b] = rated[order[done]];
            est = rate.estimate(b, false);
            best = std::min(best, est);
        }
    };
    rate_within_band();
    // The quick Cube plan ranks only the blocks that move the fewest
    // bytes, and a larger L0C or L0B, whose blocks move fewer still,
    // can push out the block the smaller buffer ran fastest. So the
    // counts within kFullPlanWindow of the best are rated again by
    // the full plan, whose candidates include the smaller buffer's
    // (for a buffer that doubles: timing.cpp); rating every count by
    // the full plan costs several times the compile time.
    const double cut = best * (1 + kFullPlanWindow);
    best = std::numeric_limits<double>::max();
    for (std::size_t i = 0; i < done; ++i) {
        auto& [est, b] = rated[order[i]];
        if (est <= cut) est = rate.estimate(b, true);
        best = std::min(best, est);
    }
    // The full plan is ranked over fewer stepped steps than a task's
    // estimate, so the best can end a little above the quick one: counts
    // whose floors lie within the band of that best are rated too (beyond
    // the full-plan window, they keep the quick plan).
    rate_within_band();
    estimated.assign(rated.size(), 0);
    for (std::size_t i = 0; i < done; ++i) estimated[order[i]] = 1;
    return best;
}

TilingChoice::Blocks to_blocks(const CubeBlocks& b) {
    return {static_cast<int>(b.m), static_cast<int>(b.n), static_cast<int>(b.k)};
}

// Bytes the kernel's tiles move through the cores' ports.
double port_bytes(const CubeProblem& p, const CubeRater& rate, const CubeBlocks& b) {
    const CubeWork w = rate.tile_work(b);
    return static_cast<double>(w.gm_in_bytes + w.out_bytes) * static_cast<double>(p.outer * block_count(b));
}

// The least estimate; of equal ones (block counts that round to the same
// tiles), the fewest tiles; of as many tiles, the fewest bytes through the
// cores' ports.
CubeBlocks least_cube_blocks(const CubeProblem& p, const CubeRater& rate, const RatedBlocks& rated, double best) {
    CubeBlocks best_b;
    i64 fewest = std::numeric_limits<i64>::max();
    for (const auto& [est, b] : rated)
        if (est <= best && block_count(b) < fewest) fewest = block_count(b), best_b = b;
    // Of as many tiles (the same waves), the shape that moves the
    // fewest bytes through the cores' ports, unless another is
    // estimated kEstimateMargin faster: the estimate spreads an
    // operand's L2 hits evenly over its readers and sees no other
    // kernel's traffic, so it underrates tiles that each read all
    // of A.
    double least = port_bytes(p, rate, best_b), least_est = best;
    const i64 tiles = block_count(best_b);
    for (const auto& [est, b] : rated) {
        if (block_count(b) != tiles || est > best * (1 + kEstimateMargin)) continue;
        const double bytes = port_bytes(p, rate, b);
        if (bytes < least * (1 - 1e-9) || (bytes <= least * (1 + 1e-9) && est < least_est))
            least = bytes, least_est = est, best_b = b;
    }
    return best_b;
}

// Runners-up for the plan search (plan_search.cpp): this estimate
// cannot see the kernel's neighbours, and four kinds of plan are
// what they reward: more row blocks (a wave reads fewer rows, so
// it starts behind fewer of a row-cut producer's tiles), more
// tiles (waves that overlap a producer's and a consumer's), fewer
// tiles (cores left to a kernel beside it, and less of the
// operands loaded twice), and tiles of whole rows (a row-cut
// consumer takes each row block as soon as its tiles end, not
// after the last column block). The best of each kind within
// kRunnerUpBand of the best estimate.
void add_cube_runners_up(const RatedBlocks& rated, double best, const CubeBlocks& best_b, TilingChoice& choice) {
    const auto runner_up = [&](auto kind) {
        std::optional<std::pair<double, CubeBlocks>> r;
        for (const auto& [est, b] : rated)
            if (kind(b) && est <= best * (1 + kRunnerUpBand) &&
                (!r || est < r->first || (est == r->first && block_count(b) < block_count(r->second))))
                r = std::make_pair(est, b);
        return r;
    };
    const auto add = [&](const std::optional<std::pair<double, CubeBlocks>>& r) {
        if (!r) return;
        const TilingChoice::Blocks b = to_blocks(r->second);
        if (std::find(choice.runners_up.begin(), choice.runners_up.end(), b) == choice.runners_up.end())
            choice.runners_up.push_back(b);
    };
    add(runner_up([&](const CubeBlocks& b) { return b.m > best_b.m; }));
    add(runner_up([&](const CubeBlocks& b) { return block_count(b) > block_count(best_b); }));
    add(runner_up([&](const CubeBlocks& b) { return block_count(b) < block_count(best_b); }));
    if (best_b.n > 1) add(runner_up([&](const CubeBlocks& b) { return b.n == 1 && b.m > 1; }));
}

// The front of estimate against bytes: the estimated counts (fastest
// first) that move fewer bytes through the ports than every count
// estimated faster. The estimate spreads shared operands' L2 hits evenly
// and does not see the L2's slices or another kernel's traffic, so it can
// rank a count that moves far more bytes a little faster than one that
// does not. The first kFewerBytesPlans besides the chosen count go to the
// plan search's die runs (its budget per kernel).
void add_fewer_bytes(const CubeProblem& p, const CubeRater& rate, const RatedBlocks& rated,
                     const std::vector<char>& estimated, const CubeBlocks& best_b, TilingChoice& choice) {
    constexpr std::size_t kFewerBytesPlans = 2;
    std::vector<std::pair<std::pair<double, double>, std::size_t>> by_estimate;  // ((estimate, bytes), index)
    for (std::size_t i = 0; i < rated.size(); ++i)
        if (estimated[i]) by_estimate.push_back({{rated[i].first, port_bytes(p, rate, rated[i].second)}, i});
    std::sort(by_estimate.begin(), by_estimate.end());
    double least = std::numeric_limits<double>::max();
    for (const auto& [key, i] : by_estimate) {
        if (key.second >= least * (1 - 1e-9)) continue;
        least = key.second;
        const TilingChoice::Blocks b = to_blocks(rated[i].second);
        if (b == to_blocks(best_b)) continue;
        if (choice.fewer_bytes.size() == kFewerBytesPlans) break;
        choice.fewer_bytes.push_back(b);
    }
}

}  // namespace

// The block counts with the least estimated kernel time: whole waves of
// tiles over the cube cores (a last wave with idle cores costs a full
// tile), the scalar cores' serial dispatch of every tile, and half a
// tile a consumer sees exposed (none for an output no kernel reads);
// split-K parts each write their block.
CubeBlocks Tiler::choose_cube(const Kernel& k, const CubeProblem& p, const CubeWorkFn& work_in, TilingChoice& choice) {
    // Each tile as finish_cube will emit it: its result where it goes.
    const auto work = [&](i64 r, i64 c, i64 kp) {
        CubeWork w = work_in(r, c, kp);
        w.dst = out_space(p.dst, w.out_bytes);
        return w;
    };
    CubeProblem q = p;
    q.consumed = read_by_a_kernel(k.output);
    // Kernels alike beside it (projections of one input) run at the
    // same time on the same cores: their tiles together fill the waves.
    CubeRater rate(chip_, work, q, kernels_alike(k), warm_input_share(k));
    const ForcedTiling* f = forced(k);
    const CubeBlocks best_b = f && (f->m_blocks > 0 || f->n_blocks > 0 || f->k_blocks > 0)
                                  ? forced_cube_blocks(k, p, *f, choice)
                                  : searched_cube_blocks(k, p, rate, choice);
    choice.node = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
    if (p.whole_floor)
        choice.m_floor_cycles = static_cast<double>(p.outer) * cube_m_cycles(work(p.rows, p.cols, p.K), chip_);
    choice.chosen = to_blocks(best_b);
    const i64 tiles = p.outer * best_b.m * best_b.n * best_b.k;
    choice.est_cycles = static_cast<double>(ceil_div(tiles, rate.cubes())) * rate.tile_cycles(best_b, tiles, true);
    // The kernel's tasks are planned where this estimate put them: its
    // cores streaming, its shared operand bytes warm (planned_blocking).
    {
        CubeWork w = rate.tile_work(best_b);
        rate.wave_blocks(best_b, w);
        cube_where_ = CubeWhere{static_cast<int>(std::min<i64>(tiles * rate.group(), rate.cubes())),
                                rate.shared_share(w, tiles), w.wave_a_blocks, w.wave_b_blocks};
    }
    choice.shape = fmt::format("{} {} x {} {}{}{}", best_b.m, p.rows_name, best_b.n, p.cols_name,
                               best_b.k > 1 ? fmt::format(" x {} K blocks (atomic-add)", best_b.k) : std::string(),
                               p.outer > 1 ? fmt::format(" x {} batch", p.outer) : std::string());
    return best_b;
}

// The user's block counts (workload.tiling), checked against the op.
CubeBlocks Tiler::forced_cube_blocks(const Kernel& k, const CubeProblem& p, const ForcedTiling& f,
                                     TilingChoice& choice) const {
    const std::string& name = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
    CubeBlocks best_b;
    best_b.m = std::max(1, f.m_blocks);
    best_b.n = std::max(1, f.n_blocks);
    best_b.k = std::max(1, f.k_blocks);
    if (best_b.m > ceil_div(p.rows, p.row_unit) || best_b.n > ceil_div(p.cols, 16))
        throw InputError(fmt::format(
            "workload.tiling.{}: {} x {} blocks, but the op has {} rows (at most {} "
            "blocks of {}) and {} columns (at most {} blocks of 16)",
            name, best_b.m, best_b.n, p.rows, ceil_div(p.rows, p.row_unit), p.row_unit, p.cols, ceil_div(p.cols, 16)));
    if (best_b.k > 1 && !p.split_k)
        throw InputError(
            fmt::format("workload.tiling.{}.k_blocks: {} K parts, but only a MatMul whose result "
                        "goes to GM unfused can split K (its parts add into the result)",
                        name, best_b.k));
    if (best_b.k > ceil_div(p.K, 16))
        throw InputError(
            fmt::format("workload.tiling.{}.k_blocks: {} K parts, but K = {} has at most {} blocks "
                        "of 16",
                        name, best_b.k, p.K, ceil_div(p.K, 16)));
    choice.forced = !f.searched;
    choice.searched = f.searched;
    return best_b;
}

// The best block counts by the estimate, and the runners-up beside them.
CubeBlocks Tiler::searched_cube_blocks(const Kernel& k, const CubeProblem& p, CubeRater& rate, TilingChoice& choice) {
    RatedBlocks rated;
    std::vector<char> estimated;
    const double best = rate_cube_blocks(p, rate, rated, estimated);
    const CubeBlocks best_b = least_cube_blocks(p, rate, rated, best);
    choice.node = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
    choice.dims = fmt::format("{} {}x{}x{}x{} {}", p.rows_name, p.outer, p.rows, p.cols, p.K, p.split_k);
    add_cube_runners_up(rated, best, best_b, choice);
    add_fewer_bytes(p, rate, rated, estimated, best_b, choice);
    return best_b;
}

void Tiler::dry_result(const TilingChoice& choice, i64 tiles) {
    const i64 waves = ceil_div(tiles, std::max(1, chip_.cube.count));
    *dry_cut_ = CubeCut{tiles, choice.est_cycles / static_cast<double>(std::max<i64>(1, waves))};
}

std::optional<Tiler::CubeCut> Tiler::cube_cut(int ki) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    if (k.core != CoreType::cube || (k.kind != KernelKind::conv && k.kind != KernelKind::matmul)) return std::nullopt;
    // choose_cube leaves the plan context of the kernel it chose for.
    const auto where = cube_where_;
    const auto key = blocking_key_;
    std::optional<CubeCut> cut = CubeCut{};
    dry_cut_ = &cut;
    TilingChoice scratch;
    if (k.kind == KernelKind::conv) conv(ki, scratch);
    else matmul(ki, scratch);
    dry_cut_ = nullptr;
    cube_where_ = where;
    blocking_key_ = key;
    if (cut->tiles == 0) return std::nullopt;
    return cut;
}

}  // namespace npusim::compiler
