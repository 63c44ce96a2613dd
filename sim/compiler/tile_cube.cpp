// Cube kernels cut into tiles: convolutions (implicit im2col), MatMuls and
// grouped MatMuls, each tile's GM regions and its Cube plan. The block
// counts come from choose_cube (tile_cube_choice.cpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "compiler/tiler_impl.hpp"
#include "tasks/tiling_data.hpp"

namespace npusim::compiler {

CubeWork gemm_work(i64 m, i64 n, i64 k, int elt, DType dtype) {
    CubeWork w;
    w.m = static_cast<std::uint64_t>(m);
    w.n = static_cast<std::uint64_t>(n);
    w.k = static_cast<std::uint64_t>(k);
    w.gm_in_bytes = static_cast<std::uint64_t>((m + n) * k * elt);
    w.out_bytes = static_cast<std::uint64_t>(m * n * 2);
    w.dtype = dtype;
    return w;
}

// ---- Cube: convolution with implicit im2col -----------------------------
void Tiler::conv(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Node& n = node(k);
    const int x = k.inputs[0], w = k.inputs[1];
    const Shape& xs = T(x).shape;  // N C H W
    const Shape& os = T(k.output).shape;
    const auto stride = n.attr_ints("stride", {1, 1});
    const auto pad = n.attr_ints("pad", {0, 0});
    const auto dilation = n.attr_ints("dilation", {1, 1});
    const Shape& ws = T(w).shape;  // O C/g kh kw
    // A dilated window spans dh (kh - 1) + 1 input rows.
    const i64 sh = stride[0], ph = pad[0], kh = dilation[0] * (ws[2] - 1) + 1;
    const i64 N = os[0], O = os[1], Ho = os[2], Wo = os[3];
    const i64 K = ws[1] * ws[2] * ws[3];
    const int e = dtype_bytes(T(x).dtype);
    // Input rows output rows [h0, h1) read; none when their windows
    // fall wholly in the padding.
    const auto in_rows = [&](i64 h0, i64 h1) {
        const i64 r0 = std::min<i64>(xs[2], std::max<i64>(0, h0 * sh - ph));
        return std::pair<i64, i64>{r0, std::max(r0, std::min<i64>(xs[2], (h1 - 1) * sh - ph + kh))};
    };
    if (k.core == CoreType::vector) return vector_conv(ki, choice, in_rows);
    // Grouped: each group's O/g columns fill whole fractals (the waste is
    // Cube work); a tile of channels o0..o1 holds (o1 - o0) / (O/g) groups.
    const i64 groups = n.attr_int("groups", 1);
    const auto cube_n = [&](i64 oc) {
        return groups > 1 ? grouped_conv_cube_n(oc, std::max<i64>(1, oc * groups / O)) : oc;
    };
    auto work = [&](i64 rows, i64 oc, i64 /*k_part: convolutions are not split along K*/) {
        CubeWork cw;
        cw.m = static_cast<std::uint64_t>(rows * Wo);
        cw.n = static_cast<std::uint64_t>(cube_n(oc));
        cw.k = static_cast<std::uint64_t>(K);
        const i64 r_in = std::min<i64>(xs[2], (rows - 1) * sh + kh);
        cw.gm_in_bytes = static_cast<std::uint64_t>(ceil_div(xs[1], 16) * 16 * r_in * xs[3] * e + oc * K * e);
        cw.out_bytes = static_cast<std::uint64_t>(rows * Wo * oc * 2);
        cw.dtype = T(x).dtype;
        return cw;
    };
    const Space dst = cube_dst(ki);
    const auto [mb, nb, ks] =
        choose_cube(k, CubeProblem{N, Ho, O, K, "row blocks per image", "channel blocks", 1, false, dst, groups == 1},
                    work, choice);
    (void)ks;
    if (dry_cut_) return dry_result(choice, N * mb * nb);
    for (i64 b = 0; b < N; ++b)
        for (const auto& [h0, h1] : split_ranges(Ho, mb))
            for (const auto& [o0, o1] : split_ranges(O, nb, 16)) {
                TileTask t = cube_task(ki, fmt::format("n{}/h{}-{}/c{}-{}", b, h0, h1, o0, o1));
                const auto [r0, r1] = in_rows(h0, h1);
                mem_.regions(x, Block{b, b + 1, r0, r1, 0, xs[1]}, t.reads);
                const std::uint64_t a = sum_bytes(t.reads);
                t.reads.push_back(
                    mem_.physical(w, static_cast<std::uint64_t>(o0 * K * e), static_cast<std::uint64_t>(o1 * K * e)));
                add_consts(k, 2, t.reads);
                mem_.regions(k.output, Block{b, b + 1, h0, h1, o0, o1}, t.writes);
                t.params.m = static_cast<std::uint64_t>((h1 - h0) * Wo);
                t.params.n = static_cast<std::uint64_t>(cube_n(o1 - o0));
                t.params.k = static_cast<std::uint64_t>(K);
                t.params.dtype = T(x).dtype == DType::int8 ? DType::int8 : DType::fp16;
                t.params.a_bytes = std::max<std::uint64_t>(1, a);  // 0 would mean m x k (no im2col)
                finish_cube(t, dst, work(h1 - h0, o1 - o0, K));
            }
}

// ---- Cube: matrix multiply ------------------------------------------------
void Tiler::matmul(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Node& n = node(k);
    if (n.op == OpType::GroupedMatMul) return grouped_matmul(ki, choice);
    const int a = k.inputs[0], bt = k.inputs[1];
    const Shape& as = T(a).shape;
    const Shape& os = T(k.output).shape;
    const bool tb = n.attr_int("transpose_b", 0) != 0;
    const i64 M = os[os.size() - 2], N = os.back(), K = as.back();
    i64 batch = 1;
    for (std::size_t i = 0; i + 2 < os.size(); ++i) batch *= os[i];
    const Shape& bs = T(bt).shape;
    i64 b_batch = 1;
    for (std::size_t i = 0; i + 2 < bs.size(); ++i) b_batch *= bs[i];
    const int e = dtype_bytes(T(a).dtype);
    auto work = [&](i64 rows, i64 cols, i64 kp) { return gemm_work(rows, cols, kp, e, T(a).dtype); };
    const Space dst = cube_dst(ki);
    // Split-K accumulates partial sums by atomic-add writes into the
    // output (in L2), so each part writes its whole block; a fused
    // epilogue would see a partial sum, so only for a GM result.
    const auto [mb, nb, ks] = choose_cube(
        k, CubeProblem{batch, M, N, K, "row blocks", "column blocks", 16, dst == Space::hbm, dst}, work, choice);
    if (dry_cut_) return dry_result(choice, batch * mb * nb * ks);
    k_parts_[static_cast<std::size_t>(ki)] = static_cast<int>(ks);
    for (i64 b = 0; b < batch; ++b)
        for (const auto& [m0, m1] : split_ranges(M, mb, 16))
            for (const auto& [n0, n1] : split_ranges(N, nb, 16))
                for (const auto& [k0, k1] : split_ranges(K, ks, 16)) {
                    TileTask t =
                        cube_task(ki, ks > 1 ? fmt::format("b{}/m{}-{}/n{}-{}/k{}-{}", b, m0, m1, n0, n1, k0, k1)
                                             : fmt::format("b{}/m{}-{}/n{}-{}", b, m0, m1, n0, n1));
                    const i64 a_batch = as.size() > 2 ? b : 0;
                    mem_.matrix_regions(a, Block{a_batch, a_batch + 1, m0, m1, k0, k1}, t.reads);
                    const i64 bb = b_batch > 1 ? b % b_batch : 0;
                    // A constant B with a group dim (grouped / MoE experts'
                    // weights): group bb's K x N block.
                    const auto group = static_cast<std::uint64_t>(bb * K * N * e);
                    if (T(bt).is_const && ks == 1) {
                        t.reads.push_back(mem_.physical(bt, group + static_cast<std::uint64_t>(n0 * K * e),
                                                        group + static_cast<std::uint64_t>(n1 * K * e)));
                    } else if (T(bt).is_const) {
                        // Weights are laid out for the Cube in 16-column
                        // blocks of K x 16: a K range is one run per block.
                        for (i64 c = n0; c < n1; c += 16) {
                            const i64 w = std::min<i64>(16, N - c);
                            t.reads.push_back(mem_.physical(bt,
                                                            group + static_cast<std::uint64_t>((c * K + k0 * w) * e),
                                                            group + static_cast<std::uint64_t>((c * K + k1 * w) * e)));
                        }
                    } else if (tb) {
                        mem_.matrix_regions(bt, Block{bb, bb + 1, n0, n1, k0, k1}, t.reads);
                    } else {
                        mem_.matrix_regions(bt, Block{bb, bb + 1, k0, k1, n0, n1}, t.reads);
                    }
                    add_consts(k, 2, t.reads);
                    mem_.matrix_regions(k.output, Block{b, b + 1, m0, m1, n0, n1}, t.writes);
                    t.params.m = static_cast<std::uint64_t>(m1 - m0);
                    t.params.n = static_cast<std::uint64_t>(n1 - n0);
                    t.params.k = static_cast<std::uint64_t>(k1 - k0);
                    t.params.dtype = T(a).dtype == DType::int8 ? DType::int8 : DType::fp16;
                    finish_cube(t, dst, work(m1 - m0, n1 - n0, k1 - k0));
                }
}

// ---- Cube: one MatMul per group of rows (the experts after a Dispatch) ------
// Every group's rows by its own weights [K, N]: the groups run at once,
// so, as a grouped kernel's tiling is chosen once for its launch, the
// tile shape is chosen for the mean group over every rank (the same plan
// on each; with a Dispatch capacity every group has that many rows), and
// each group is cut into row blocks of that height (its last one shorter;
// a group without rows has no tasks).
void Tiler::grouped_matmul(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Node& n = node(k);
    const int a = k.inputs[0], bt = k.inputs[1];
    const std::vector<i64>& groups = T(a).row_groups;
    const bool tb = n.attr_int("transpose_b", 0) != 0;
    const i64 N = T(k.output).shape.back(), K = T(a).shape.back();
    const int e = dtype_bytes(T(a).dtype);
    i64 busy = 0;
    for (const i64 m : groups) busy += m > 0;
    if (busy == 0) {
        choice.shape = "no rows on this rank";
        return;
    }
    const i64 mean = std::max<i64>(1, static_cast<i64>(std::ceil(T(a).group_rows_mean)));
    busy = static_cast<i64>(groups.size());
    auto work = [&](i64 r, i64 c, i64 kp) { return gemm_work(r, c, kp, e, T(a).dtype); };
    const Space dst = cube_dst(ki);
    const auto [mb, nb, ks] =
        choose_cube(k, CubeProblem{busy, mean, N, K, "row blocks", "column blocks", 16, dst == Space::hbm, dst, false},
                    work, choice);
    const i64 height = std::max<i64>(16, ceil_div(ceil_div(mean, mb), 16) * 16);
    if (dry_cut_) return dry_result(choice, busy * mb * nb * ks);
    k_parts_[static_cast<std::size_t>(ki)] = static_cast<int>(ks);
    i64 first = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const i64 m = groups[g];
        const auto group = static_cast<std::uint64_t>(static_cast<i64>(g) * K * N * e);
        for (i64 r0 = 0; r0 < m; r0 += height) {
            const i64 r1 = std::min(m, r0 + height);
            for (const auto& [n0, n1] : split_ranges(N, nb, 16))
                for (const auto& [k0, k1] : split_ranges(K, ks, 16)) {
                    TileTask t =
                        cube_task(ki, ks > 1 ? fmt::format("g{}/m{}-{}/n{}-{}/k{}-{}", g, r0, r1, n0, n1, k0, k1)
                                             : fmt::format("g{}/m{}-{}/n{}-{}", g, r0, r1, n0, n1));
                    mem_.matrix_regions(a, Block{0, 1, first + r0, first + r1, k0, k1}, t.reads);
                    if (tb) {
                        t.reads.push_back(mem_.physical(bt, group + static_cast<std::uint64_t>(n0 * K * e),
                                                        group + static_cast<std::uint64_t>(n1 * K * e)));
                    } else {
                        // Weights are laid out for the Cube in 16-column blocks of K x 16:
                        // the whole ones as one strided region, a narrower last one apart.
                        const i64 whole = std::min(n1, N / 16 * 16);
                        if (whole > n0) {
                            Region r = mem_.physical(bt, group + static_cast<std::uint64_t>((n0 * K + k0 * 16) * e),
                                                     group + static_cast<std::uint64_t>((n0 * K + k1 * 16) * e));
                            r.stride = static_cast<std::uint64_t>(16 * K * e);
                            r.rows = static_cast<std::uint32_t>(ceil_div(whole - n0, 16));
                            t.reads.push_back(r);
                        }
                        for (i64 c = std::max(n0, whole); c < n1; c += 16) {
                            const i64 w = std::min<i64>(16, N - c);
                            t.reads.push_back(mem_.physical(bt,
                                                            group + static_cast<std::uint64_t>((c * K + k0 * w) * e),
                                                            group + static_cast<std::uint64_t>((c * K + k1 * w) * e)));
                        }
                    }
                    mem_.matrix_regions(k.output, Block{0, 1, first + r0, first + r1, n0, n1}, t.writes);
                    t.params.m = static_cast<std::uint64_t>(r1 - r0);
                    t.params.n = static_cast<std::uint64_t>(n1 - n0);
                    t.params.k = static_cast<std::uint64_t>(k1 - k0);
                    t.params.dtype = T(a).dtype == DType::int8 ? DType::int8 : DType::fp16;
                    finish_cube(t, dst, work(r1 - r0, n1 - n0, k1 - k0));
                }
        }
        first += m;
    }
}

TileTask Tiler::cube_task(int ki, std::string label) const {
    TileTask t;
    t.kernel = ki;
    t.label = std::move(label);
    t.core = CoreType::cube;
    t.type = npusim::Kernel::matmul;
    return t;
}

// The task's Cube plan for this chip, carried in the stream as a
// kernel carries its tiling data: a stream compiled once runs the same
// plan on a changed chip as long as it fits there (docs/task-streams.md).
// A kernel tiled by choose_cube plans its tasks for the context its
// estimate assumed (cube_plan_context); others as a core would alone.
CubeBlocking Tiler::planned_blocking(const KernelParams& p, const CubeWork& w) {
    const timing::MatmulShape s{p.m, p.n, p.k, p.dtype, p.a_bytes, p.src, p.dst};
    // Tiles of one op mostly share a shape.
    if (!blocking_key_.valid || !(blocking_key_.s == s)) {
        const timing::PlanContext where =
            cube_where_ ? cube_plan_context(w, chip_, cube_where_->active, cube_where_->shared) : timing::PlanContext{};
        blocking_key_ = {true, s, cube_blocking(timing::plan_matmul(s, chip_, where))};
    }
    return blocking_key_.b;
}

// In place in UB only if the tile leaves room to double-buffer.
Space Tiler::out_space(Space dst, std::uint64_t out_bytes) const {
    return dst == Space::ub && out_bytes * 2 > static_cast<std::uint64_t>(chip_.buffers.ub_kb) * 1024 ? Space::l2 : dst;
}

void Tiler::finish_cube(TileTask& t, Space dst, CubeWork w, Space src) {
    dst = out_space(dst, sum_bytes(t.writes));
    if (cube_where_) w.wave_a_blocks = cube_where_->wave_a_blocks, w.wave_b_blocks = cube_where_->wave_b_blocks;
    t.params.src = w.src = src;
    t.params.dst = w.dst = dst;
    if (dst != Space::hbm)
        for (Region& r : t.writes) r.space = dst;
    // As choose_cube rated it: its kernel's cores streaming, its shared
    // and warm operand bytes L2 hits.
    t.est_cycles = cube_where_ ? cube_task_cycles(w, chip_, cube_where_->active, cube_where_->shared, true)
                               : cube_task_cycles(w, chip_, chip_.cube.count, 0, true);
    t.params.blocking = planned_blocking(t.params, w);
    if (tasks_.size() >= kMaxCompiledTasks)
        too_many_tasks(plan_.kernels[static_cast<std::size_t>(t.kernel)].name, tasks_.size() + 1);
    tasks_.push_back(std::move(t));
}

}  // namespace npusim::compiler
