// How choose_cube rates a Cube kernel's block counts: one tile's cycles
// where its wave runs, the waves over the cores, and the serial dispatch.
#include "compiler/cube_rater.hpp"

#include <algorithm>
#include <utility>

#include "chip/timing.hpp"
#include "common/arith.hpp"

namespace npusim::compiler {

CubeRater::CubeRater(const ChipParams& chip, CubeWorkFn work, const CubeProblem& p, i64 group, double warm)
    : chip_(chip), work_(std::move(work)), p_(p), cubes_(std::max(1, chip.cube.count)), group_(group) {
    // Every tile of a row block reads the same A rows, every tile of a
    // column block the same B columns: the L2 fetches each operand byte
    // from HBM once (when the operands fit it) and serves the other
    // tiles' copies. Counting every tile's bytes as HBM traffic would
    // make finer blocks look HBM-bound and fewer, larger blocks (idle
    // cores) win when HBM is slower.
    const std::uint64_t all_unique = static_cast<std::uint64_t>(p_.outer) * work_(p_.rows, p_.cols, p_.K).gm_in_bytes;
    fits_l2_ = static_cast<double>(all_unique) <= timing::l2_capacity_bytes(chip_);
    // Of those, an earlier kernel's output is in L2 already: only the
    // rest (weights, graph inputs) comes from HBM, once.
    unique_bytes_ = static_cast<std::uint64_t>(static_cast<double>(all_unique) * (1.0 - warm));
}

// The largest tile of the block counts (the others are remainders).
std::tuple<i64, i64, i64> CubeRater::tile_extent(const CubeBlocks& b) const {
    const i64 r = ceil_div(p_.rows, b.m * p_.row_unit) * p_.row_unit, c = ceil_div(p_.cols, b.n * 16) * 16;
    const i64 kp = b.k > 1 ? ceil_div(p_.K, b.k * 16) * 16 : p_.K;
    return std::make_tuple(std::min(r, p_.rows), std::min(c, p_.cols), std::min(kp, p_.K));
}

CubeWork CubeRater::tile_work(const CubeBlocks& b) const {
    const auto [r, c, kp] = tile_extent(b);
    return work_(r, c, kp);
}

// The share of a tile's loads another tile of the kernel fetched
// first: of all its tiles when the operands fit L2, else of its
// wave's (w.wave_a_blocks, w.wave_b_blocks set), whose tiles read a
// shared block at about the same time.
double CubeRater::shared_share(const CubeWork& w, i64 tiles) const {
    const double all = static_cast<double>(w.gm_in_bytes) * static_cast<double>(tiles);
    if (fits_l2_) return all > 0 ? 1.0 - static_cast<double>(unique_bytes_) / all : 0.0;
    const double wave = static_cast<double>(w.gm_in_bytes) * static_cast<double>(std::min<i64>(tiles * group_, cubes_));
    const double distinct = static_cast<double>(w.wave_a_blocks * w.a_bytes() + w.wave_b_blocks * w.b_bytes());
    return wave > 0 ? std::max(0.0, 1.0 - distinct / wave) : 0.0;
}

// The distinct A and B blocks of the first wave of tiles, in the
// order they are emitted (images, row blocks, column blocks, K
// parts), with the kernels alike beside them (the same A, their own
// B): what streams through L2 while a tile reads its own blocks
// again (timing::rereads_in_l2). Counted as every core's tile whole
// (or the wave's operands without their order), a wave whose operands
// outgrow L2 looks as if every block were read again from HBM, and the
// choice falls on fewer cores or a needless split of K.
void CubeRater::wave_blocks(const CubeBlocks& b, CubeWork& w) const {
    const i64 per_image = block_count(b), tiles = p_.outer * per_image;
    const i64 wave = std::min<i64>(tiles, std::max<i64>(1, cubes_ / group_));
    const i64 images = wave / per_image, rest = wave % per_image, row = b.n * b.k;
    const i64 a_blocks = images * b.m * b.k + rest / row * b.k + std::min(rest % row, b.k);
    const i64 b_blocks = images * row + std::min(rest, row);  // B per image: the most it can be
    w.wave_a_blocks = static_cast<std::uint64_t>(a_blocks);
    w.wave_b_blocks = static_cast<std::uint64_t>(b_blocks * group_);
}

double CubeRater::tile_cycles(const CubeBlocks& b, i64 tiles, bool full) {
    const auto [r, c, kp] = tile_extent(b);
    const i64 active = std::min<i64>(tiles * group_, cubes_);
    CubeWork w = work_(r, c, kp);
    wave_blocks(b, w);
    auto [it, fresh] =
        memo_.emplace(std::make_tuple(r, c, kp, active, tiles, full, w.wave_a_blocks, w.wave_b_blocks), 0.0);
    if (fresh) it->second = cube_task_cycles(w, chip_, static_cast<int>(active), shared_share(w, tiles), full);
    return it->second;
}

double CubeRater::estimate(const CubeBlocks& b, bool full) {
    const i64 tiles = p_.outer * b.m * b.n * b.k;
    return waves_of(tiles, tile_cycles(b, tiles, full));
}

double CubeRater::estimate_floor(const CubeBlocks& b) const {
    return waves_of(p_.outer * b.m * b.n * b.k, cube_task_floor_cycles(tile_work(b), chip_));
}

// Rises with the tile's cycles `t`: so a floor of t gives one of the estimate.
double CubeRater::waves_of(i64 tiles, double t) const {
    const double waves = static_cast<double>(ceil_div(tiles * group_, cubes_)) * t;
    const double dispatch = static_cast<double>(tiles * group_) * timing::dispatch_interval_cycles(chip_);
    return std::max(waves, dispatch) + (p_.consumed ? 0.5 * t : 0.0);
}

}  // namespace npusim::compiler
