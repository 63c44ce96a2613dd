// How many tiles a Vector kernel is cut into (by size, by a Cube
// producer's tiles, by the scalar cores' dispatch, in waves ahead of a Cube
// consumer), and each Vector tile's finish: its repeats and UB chunk plan.
#include <algorithm>

#include "common/arith.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {

i64 Tiler::vector_tiles(const Kernel& k, std::uint64_t bytes) {
    if (const ForcedTiling* f = forced(k); f && f->tiles > 0) return f->tiles;
    const i64 vectors = std::max(1, chip_.vector.count);
    // Align with a Cube producer's tiles so tile-level events line up,
    // when they are enough to keep half the vector cores that can take
    // them busy: a Cube tile's output is ready no sooner for more vector
    // cores than the two beside each Cube core (A2's pairing), so a
    // larger vector count does not make a finer, unaligned cut pay.
    const i64 consumers = std::min<i64>(vectors, 2 * std::max(1, chip_.cube.count));
    for (int in : k.inputs) {
        const int p = producer_kernel(in);
        if (p < 0 || plan_.kernels[static_cast<std::size_t>(p)].core != CoreType::cube) continue;
        // Fused attention writes its output from one tile in three (p·v);
        // split-K parts add into one block: a consumer tile waits for all.
        const int out_tiles = tile_count_[static_cast<std::size_t>(p)] /
                              (plan_.kernels[static_cast<std::size_t>(p)].kind == KernelKind::attention ? 3 : 1) /
                              k_parts_[static_cast<std::size_t>(p)];
        if (out_tiles >= consumers / 2) return out_tiles;
    }
    constexpr std::uint64_t kMaxTaskBytes = 256 * 1024, kMinTaskBytes = 8 * 1024;
    const i64 by_size = ceil_div(static_cast<i64>(bytes), static_cast<i64>(vectors * kMaxTaskBytes)) * vectors;
    i64 tiles = std::max<i64>(1, std::min<i64>(by_size, ceil_div(static_cast<i64>(bytes), kMinTaskBytes)));
    tiles = dispatch_bounded_tiles(k, bytes, tiles);
    tiles = std::min<i64>(tiles * producer_waves(k, bytes, tiles), ceil_div(static_cast<i64>(bytes), kMinTaskBytes));
    if (tasks_.size() + static_cast<std::uint64_t>(tiles) > kMaxCompiledTasks)
        too_many_tasks(k.name, tasks_.size() + static_cast<std::uint64_t>(tiles));
    return tiles;
}

// One of n equal tiles of a Vector kernel over `bytes`, with as many
// vector cores streaming as it has tiles (at most all).
double Tiler::vector_tile_cycles(const Kernel& k, std::uint64_t bytes, i64 n) const {
    const auto per = static_cast<std::uint64_t>(n);
    VectorWork w{bytes / per, bytes / per, k.cycles_per_repeat, false};
    w.warm = warm_input_share(k);
    return vector_task_cycles(w, chip_, vector_streams(w, chip_, n));
}

// One wave of small tiles can cost more in the scalar cores' serial
// dispatch (dispatch_cycles per task) than the tiles take to run: the
// last tile starts only when all before it are dispatched. From the
// size rule's count, halve while the estimated kernel time (the later of
// the dispatch and the waves, plus a tile's drain) does not grow; at
// least a quarter of the vector cores.
i64 Tiler::dispatch_bounded_tiles(const Kernel& k, std::uint64_t bytes, i64 tiles) const {
    const i64 vectors = std::max(1, chip_.vector.count);
    if (tiles > vectors || tiles < 8) return tiles;
    const auto kernel_cycles = [&](i64 n) {
        const double t = vector_tile_cycles(k, bytes, n);
        const double dispatch = static_cast<double>(n) * timing::dispatch_interval_cycles(chip_);
        return std::max(dispatch, static_cast<double>(ceil_div(n, vectors)) * t) + t;
    };
    double best = kernel_cycles(tiles);
    while (tiles / 2 >= std::max<i64>(1, vectors / 4) && tiles % 2 == 0) {
        const double half = kernel_cycles(tiles / 2);
        if (half > best) break;
        best = half;
        tiles /= 2;
    }
    return tiles;
}

// A Vector kernel that feeds a Cube kernel (an input FormatConvert, a
// softmax before p·v) in one wave finishes all its tiles together, and
// the Cube waits for them. Cut into w waves (row order), its rows are
// ready a wave at a time; the Cube kernel's waves (its own tiling, asked
// ahead: cube_cut) each start when the rows they read are ready and the
// wave before has run. The w with the earliest Cube end wins: more waves
// let a Cube kernel of several waves start sooner, but each tile pays
// its start and latency again, and a Cube kernel of one wave waits for
// its last rows either way.
i64 Tiler::producer_waves(const Kernel& k, std::uint64_t bytes, i64 tiles) {
    const i64 vectors = std::max(1, chip_.vector.count);
    if (tiles > vectors) return 1;
    // Under op sync the Cube waits for every tile anyway.
    if (opt_.sync != SyncGranularity::tile) return 1;
    std::optional<CubeCut> cut;
    for (std::size_t c = 0; c < plan_.kernels.size() && !cut; ++c) {
        const Kernel& ck = plan_.kernels[c];
        if (ck.core == CoreType::cube && std::find(ck.inputs.begin(), ck.inputs.end(), k.output) != ck.inputs.end())
            cut = cube_cut(static_cast<int>(c));
    }
    if (!cut) return 1;
    const i64 cube_waves = ceil_div(cut->tiles, std::max(1, chip_.cube.count));
    // The scalar slots start one tile per interval: the tiles of the
    // first waves are ready no sooner than they are all dispatched.
    const double interval = timing::dispatch_interval_cycles(chip_);
    const auto cube_end = [&](i64 w) {
        const double small = vector_tile_cycles(k, bytes, tiles * w);
        const i64 producer_waves = ceil_div(tiles * w, vectors);
        double t = 0;
        for (i64 j = 0; j < cube_waves; ++j) {
            // Rows the first j + 1 Cube waves read: produced after this many waves.
            const i64 ready_waves = ceil_div((j + 1) * producer_waves, cube_waves);
            const i64 ready_tiles = std::min(tiles * w, ready_waves * vectors);
            const double ready =
                std::max(static_cast<double>(ready_waves) * small, static_cast<double>(ready_tiles) * interval + small);
            t = std::max(t, ready) + cut->tile_cycles;
        }
        return t;
    };
    i64 best_w = 1;
    double best = cube_end(1);
    for (i64 w = 2; w <= 8; w *= 2) {
        const double end = cube_end(w);
        if (end < best * (1 - 1e-9)) best = end, best_w = w;
    }
    return best_w;
}

TileTask Tiler::vector_task(int ki, std::string label, npusim::Kernel type) const {
    TileTask t;
    t.kernel = ki;
    t.label = std::move(label);
    t.core = CoreType::vector;
    t.type = type;
    return t;
}

// The UB chunk plan of each Vector task of the kernel whose tasks start
// at `first`, made where the kernel runs: as many vector cores streaming
// as it has tiles (at most all). It travels with the task, as the Cube
// plan does (planned_blocking), so a stream compiled for a chip with
// more vector cores than its kernels fill runs the chunks it would on a
// chip with just enough.
void Tiler::plan_vector_tasks(const Kernel& k, std::size_t first) {
    int n = 0;
    for (std::size_t i = first; i < tasks_.size(); ++i) n += tasks_[i].core == CoreType::vector;
    const double warm = warm_input_share(k);
    for (std::size_t i = first; i < tasks_.size(); ++i) {
        TileTask& t = tasks_[i];
        if (t.core != CoreType::vector || t.type == npusim::Kernel::program || t.remote.dst_rank >= 0 ||
            !t.wait_memory.empty())
            continue;
        const VectorWork vw{t.params.bytes,
                            t.params.out_bytes,
                            t.params.cycles_per_repeat,
                            t.type == npusim::Kernel::copy,
                            t.params.dtype,
                            t.params.row_bytes,
                            t.params.src,
                            t.params.dst,
                            warm};
        const int active = vector_streams(vw, chip_, n);
        t.est_cycles = vector_task_cycles(vw, chip_, active);
        const std::uint64_t chunk = vector_task_chunk(vw, chip_, active);  // at most UB
        t.params.ub_chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk, 0xffffffffu));
    }
}

void Tiler::finish_vector(TileTask& t, double cycles_per_out_repeat) {
    t.params.bytes = std::max<std::uint64_t>(1, t.params.bytes);
    // The V pipe counts whole repeats of input: scale the per-output
    // cost by the bytes out per byte in. An op that writes more than it
    // reads walks its output (an upsampling Resize writes many repeats
    // from part of one): then by whole repeats out per whole repeat in,
    // as the die counts them.
    const auto repeats = [&](std::uint64_t bytes) {
        return static_cast<double>(ceil_div(bytes, static_cast<std::uint64_t>(std::max(1, chip_.vector.repeat_bytes))));
    };
    const double out_per_in = t.params.out_bytes > t.params.bytes
                                  ? repeats(t.params.out_bytes) / repeats(t.params.bytes)
                                  : static_cast<double>(t.params.out_bytes) / static_cast<double>(t.params.bytes);
    t.params.cycles_per_repeat =
        t.type == npusim::Kernel::copy ? 1.0 : std::max(0.01, cycles_per_out_repeat * out_per_in);
    if (t.type == npusim::Kernel::copy) t.params.out_bytes = t.params.bytes;
    // Its estimate and UB chunk plan come when the kernel's tiles are all
    // known (plan_vector_tasks).
    if (tasks_.size() >= kMaxCompiledTasks)
        too_many_tasks(plan_.kernels[static_cast<std::size_t>(t.kernel)].name, tasks_.size() + 1);
    tasks_.push_back(std::move(t));
}

}  // namespace npusim::compiler
