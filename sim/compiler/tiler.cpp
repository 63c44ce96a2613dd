#include "compiler/tiler.hpp"
#include "common/arith.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "chip/timing.hpp"
#include "compiler/comm_lowering.hpp"
#include "compiler/comm_ops.hpp"
#include "compiler/cost_model.hpp"
#include "tasks/tiling_data.hpp"

namespace npusim::compiler {
namespace {

using i64 = std::int64_t;
std::uint64_t sum_bytes(const std::vector<Region>& rs) {
    std::uint64_t n = 0;
    for (const auto& r : rs) n += r.total();
    return n;
}

// An m x n x k matmul tile that reads A (m x k) and B (k x n) of `elt`-byte
// elements from GM and writes its fp16 result.
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

// Splits [0, n) into `parts` near-equal ranges, each a multiple of `unit`
// except the last.
std::vector<std::pair<i64, i64>> split(i64 n, i64 parts, i64 unit = 1) {
    std::vector<std::pair<i64, i64>> out;
    const i64 units = ceil_div(n, unit);
    parts = std::max<i64>(1, std::min(parts, units));
    i64 lo = 0;
    for (i64 p = 0; p < parts; ++p) {
        const i64 hi = std::min(n, (units * (p + 1) / parts) * unit);
        if (hi > lo) out.emplace_back(lo, hi);
        lo = hi;
    }
    return out;
}

// How far behind the best estimate a Cube kernel's runner-up plans may be
// (the plan search tries them in the whole graph's schedule).
constexpr double kRunnerUpBand = 0.15;
constexpr double kFullPlanWindow = 0.05;  // block counts re-rated by the full Cube plan (choose_cube)

// Tasks one graph may compile to: bounds the compiler's memory and time (a
// 2 TiB tensor would otherwise become millions of tiles); a large CNN at
// batch 256 is tens of thousands.
constexpr std::size_t kMaxCompiledTasks = 1000000;

class Tiler {
public:
    Tiler(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem, const ChipParams& chip, const CompileOptions& opt)
        : g_(g), plan_(plan), mem_(mem), full_chip_(chip), chip_(chip), opt_(opt), first_tile_(plan.kernels.size(), -1),
          tile_count_(plan.kernels.size(), 0), k_parts_(plan.kernels.size(), 1), capacity_(capacity_dispatches(g)) {}

    std::vector<TileTask> run(std::vector<TilingChoice>& choices) {
        for (std::size_t k = 0; k < plan_.kernels.size(); ++k) {
            const Kernel& kn = plan_.kernels[k];
            first_tile_[k] = static_cast<int>(tasks_.size());
            TilingChoice choice;
            choice.kernel = kn.name;
            use_core_group(kn);
            cube_where_.reset();
            blocking_key_.valid = false;
            switch (kn.kind) {
                case KernelKind::conv: conv(static_cast<int>(k), choice); break;
                case KernelKind::matmul: matmul(static_cast<int>(k), choice); break;
                case KernelKind::elementwise:
                    if (kn.fused_with >= 0) fused_vector(static_cast<int>(k), choice);
                    else elementwise(static_cast<int>(k), choice);
                    break;
                case KernelKind::format:
                case KernelKind::reduce:
                case KernelKind::pool: rowwise(static_cast<int>(k), choice); break;
                case KernelKind::concat: concat(static_cast<int>(k), choice); break;
                case KernelKind::transpose: elementwise(static_cast<int>(k), choice); break;
                case KernelKind::alias: choice.shape = "view (no task)"; break;
                case KernelKind::attention: attention(static_cast<int>(k), choice); break;
                case KernelKind::program:
                case KernelKind::collective: comm(static_cast<int>(k), choice); break;
            }
            tile_count_[k] = static_cast<int>(tasks_.size()) - first_tile_[k];
            mask_rows(kn, static_cast<std::size_t>(first_tile_[k]));
            for (std::size_t t = static_cast<std::size_t>(first_tile_[k]); t < tasks_.size(); ++t) {
                const bool cube = tasks_[t].core == CoreType::cube;
                tasks_[t].core_lo = cube ? kn.cores.cube_lo : kn.cores.vector_lo;
                tasks_[t].core_hi = cube ? kn.cores.cube_hi : kn.cores.vector_hi;
            }
            plan_vector_tasks(kn, static_cast<std::size_t>(first_tile_[k]));
            if (choice.est_cycles == 0 && tile_count_[k] > 0 && tasks_.back().core == CoreType::vector)
                choice.est_cycles = tasks_.back().est_cycles * static_cast<double>(ceil_div(tile_count_[k], std::max(1, chip_.vector.count)));
            choice.tiles = tile_count_[k];
            choices.push_back(choice);
        }
        return std::move(tasks_);
    }

private:
    const Tensor& T(int t) const { return g_.tensors[static_cast<std::size_t>(t)]; }

    // A kernel of a core group is tiled for that group's cores.
    void use_core_group(const Kernel& k) {
        const CoreRange& r = k.cores;
        if (r.cube_hi > full_chip_.cube.count || r.vector_hi > full_chip_.vector.count)
            throw InputError(fmt::format("{}: node '{}': cores cube [{}, {}) vector [{}, {}) but a die of chip '{}' has {} cube and "
                                         "{} vector cores",
                                         g_.file, g_.nodes[static_cast<std::size_t>(k.nodes[0])].name, r.cube_lo, r.cube_hi, r.vector_lo,
                                         r.vector_hi, full_chip_.name, full_chip_.cube.count, full_chip_.vector.count));
        chip_.cube.count = r.cube_hi > 0 ? r.cube_hi - r.cube_lo : full_chip_.cube.count;
        chip_.vector.count = r.vector_hi > 0 ? r.vector_hi - r.vector_lo : full_chip_.vector.count;
    }

    // Rows a Dispatch's capacity layout leaves empty on some ranks: each task
    // over such a tensor names the rows it covers, and the rank's row table
    // says at run time how many hold tokens (docs/task-streams.md, "Row
    // tables"). The rows are those of its writes in the (2-D, ND) output.
    void mask_rows(const Kernel& k, std::size_t first) {
        if (k.kind == KernelKind::program || k.kind == KernelKind::collective || k.kind == KernelKind::alias) return;
        const int d = masking_dispatch(g_, k.output);
        if (d < 0) return;
        const auto table = std::find(capacity_.begin(), capacity_.end(), d) - capacity_.begin();
        const Tensor& out = T(k.output);
        const std::uint64_t rows = static_cast<std::uint64_t>(out.shape[0]);
        const std::uint64_t row = mem_.bytes(k.output) / std::max<std::uint64_t>(rows, 1);
        const std::uint64_t base = mem_.addr(k.output), end = base + mem_.bytes(k.output);
        const auto cap = static_cast<std::uint32_t>(dispatch_capacity(g_, g_.nodes[static_cast<std::size_t>(d)]));
        for (std::size_t i = first; i < tasks_.size(); ++i) {
            std::uint64_t lo = rows, hi = 0;
            for (const Region& r : tasks_[i].writes) {
                if (r.addr < base || r.addr >= end) continue;
                lo = std::min(lo, (r.addr - base) / row);
                hi = std::max(hi, (std::min(r.end(), end) - base + row - 1) / row);
            }
            if (hi <= lo) continue;
            KernelParams& p = tasks_[i].params;
            p.rows_table = static_cast<std::uint32_t>(table) + 1;
            p.rows_group = cap;
            p.rows_first = static_cast<std::uint32_t>(lo);
            p.rows_span = static_cast<std::uint32_t>(hi - lo);
        }
    }
    const Node& node(const Kernel& k) const { return g_.nodes[static_cast<std::size_t>(k.nodes[0])]; }

    const ForcedTiling* forced(const Kernel& k) const {
        for (int n : k.nodes) {
            auto it = opt_.tiling.find(g_.nodes[static_cast<std::size_t>(n)].name);
            if (it != opt_.tiling.end()) return &it->second;
        }
        return nullptr;
    }

    // Where a cube kernel's output goes: in place for a fused consumer.
    Space cube_dst(int k) const {
        for (const Kernel& v : plan_.kernels)
            if (v.fused_with == k) return chip_.layout == CoreLayout::coupled ? Space::ub : Space::l2;
        return Space::hbm;
    }

    void add_consts(const Kernel& k, std::size_t from, std::vector<Region>& reads) const {
        for (std::size_t i = from; i < k.inputs.size(); ++i) {
            const int t = k.inputs[i];
            if (T(t).is_const) reads.push_back(mem_.physical(t, 0, mem_.bytes(t)));
        }
    }

    // ---- Cube: convolution with implicit im2col -----------------------------
    void conv(int ki, TilingChoice& choice) {
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
            choose_cube(k, N, Ho, O, K, work, choice, "row blocks per image", "channel blocks", 1, false, dst);
        (void)ks;
        if (dry_cut_) return dry_result(choice, N * mb * nb);
        for (i64 b = 0; b < N; ++b)
            for (const auto& [h0, h1] : split(Ho, mb))
                for (const auto& [o0, o1] : split(O, nb, 16)) {
                    TileTask t = cube_task(ki, fmt::format("n{}/h{}-{}/c{}-{}", b, h0, h1, o0, o1));
                    const auto [r0, r1] = in_rows(h0, h1);
                    mem_.regions(x, Block{b, b + 1, r0, r1, 0, xs[1]}, t.reads);
                    const std::uint64_t a = sum_bytes(t.reads);
                    t.reads.push_back(mem_.physical(w, static_cast<std::uint64_t>(o0 * K * e),
                                                    static_cast<std::uint64_t>(o1 * K * e)));
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

    // ---- Vector: a grouped convolution the cost model put on the lanes ------
    // Row blocks of each image, all channels: its input rows (with the
    // window's halo) in, kh·kw multiply-adds per output (and any fused
    // element-wise ops), its output rows out.
    template <class InRows>
    void vector_conv(int ki, TilingChoice& choice, InRows in_rows) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const int x = k.inputs[0];
        const Shape& xs = T(x).shape;
        const Shape& os = T(k.output).shape;
        const i64 N = os[0], Ho = os[2];
        const i64 tiles = vector_tiles(k, mem_.bytes(k.output));
        const i64 per = std::max<i64>(1, std::min<i64>(Ho, ceil_div(tiles, N)));
        int count = 0;
        for (i64 b = 0; b < N; ++b)
            for (const auto& [h0, h1] : split(Ho, per)) {
                TileTask t = vector_task(ki, fmt::format("n{}/h{}-{}", b, h0, h1));
                const auto [r0, r1] = in_rows(h0, h1);
                mem_.regions(x, Block{b, b + 1, r0, r1, 0, xs[1]}, t.reads);
                const std::uint64_t in_bytes = sum_bytes(t.reads);
                add_consts(k, 1, t.reads);
                for (std::size_t i = 1; i < k.inputs.size(); ++i)  // a computed weight: all of it
                    if (!T(k.inputs[i]).is_const) t.reads.push_back(mem_.physical(k.inputs[i], 0, mem_.bytes(k.inputs[i])));
                mem_.regions(k.output, Block{b, b + 1, h0, h1, 0, os[1]}, t.writes);
                t.params.bytes = in_bytes;
                t.params.out_bytes = sum_bytes(t.writes);
                t.params.dtype = T(x).dtype;
                finish_vector(t, k.cycles_per_repeat);
                ++count;
            }
        choice.shape = fmt::format("on Vector (grouped: cheaper than the Cube's padded fractals): {} row blocks", count);
    }

    // ---- Cube: matrix multiply ------------------------------------------------
    void matmul(int ki, TilingChoice& choice) {
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
        const auto [mb, nb, ks] =
            choose_cube(k, batch, M, N, K, work, choice, "row blocks", "column blocks", 16, dst == Space::hbm, dst);
        if (dry_cut_) return dry_result(choice, batch * mb * nb * ks);
        k_parts_[static_cast<std::size_t>(ki)] = static_cast<int>(ks);
        for (i64 b = 0; b < batch; ++b)
            for (const auto& [m0, m1] : split(M, mb, 16))
                for (const auto& [n0, n1] : split(N, nb, 16))
                    for (const auto& [k0, k1] : split(K, ks, 16)) {
                    TileTask t = cube_task(ki, ks > 1 ? fmt::format("b{}/m{}-{}/n{}-{}/k{}-{}", b, m0, m1, n0, n1, k0, k1)
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
                            t.reads.push_back(mem_.physical(bt, group + static_cast<std::uint64_t>((c * K + k0 * w) * e),
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
    // on each), and each group is cut into row blocks of that height (its
    // last one shorter; a group without rows has no tasks).
    void grouped_matmul(int ki, TilingChoice& choice) {
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
            choose_cube(k, busy, mean, N, K, work, choice, "row blocks", "column blocks", 16, dst == Space::hbm, dst);
        const i64 height = std::max<i64>(16, ceil_div(ceil_div(mean, mb), 16) * 16);
        if (dry_cut_) return dry_result(choice, busy * mb * nb * ks);
        k_parts_[static_cast<std::size_t>(ki)] = static_cast<int>(ks);
        i64 first = 0;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const i64 m = groups[g];
            const auto group = static_cast<std::uint64_t>(static_cast<i64>(g) * K * N * e);
            for (i64 r0 = 0; r0 < m; r0 += height) {
                const i64 r1 = std::min(m, r0 + height);
                for (const auto& [n0, n1] : split(N, nb, 16))
                    for (const auto& [k0, k1] : split(K, ks, 16)) {
                        TileTask t = cube_task(ki, ks > 1 ? fmt::format("g{}/m{}-{}/n{}-{}/k{}-{}", g, r0, r1, n0, n1, k0, k1)
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
                                t.reads.push_back(mem_.physical(bt, group + static_cast<std::uint64_t>((c * K + k0 * w) * e),
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

    // ---- Communication: programs on every vector core, collectives' steps ------
    void comm(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const CommContext c{g_, mem_, chip_, opt_};
        std::vector<TileTask> ts = k.kind == KernelKind::program ? lower_moe_op(c, k, ki) : lower_collective(c, k, ki);
        choice.shape = k.kind == KernelKind::program ? fmt::format("{} blocks of {}", ts.size(), ts.empty() ? "" : ts.front().program_name)
                                                     : fmt::format("{} steps on this rank", ts.size());
        for (TileTask& t : ts) choice.est_cycles = std::max(choice.est_cycles, t.est_cycles);
        for (TileTask& t : ts) tasks_.push_back(std::move(t));
    }

    // ---- Cube + Vector: fused attention (flash-attention style) ---------------
    // Per query block of Br rows of one head: q·kᵀ on a Cube core into the
    // score workspace (UB on coupled parts, L2 on split ones: never HBM), the
    // softmax on the Vector core beside it (scale, mask, the online rescale
    // of each key block after the first), p·v on the same Cube core. Key
    // blocks of Bc columns are what one Cube / Vector step holds (L0C, UB);
    // the tasks carry the whole key range of their query block.
    void attention(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const Node& n = node(k);
        // MLAttention: the values are the latent cache's first v_dim columns
        // (read again from it for p·v: the same bytes, L2-resident by then).
        const bool mla = n.op == OpType::MLAttention;
        const int q = k.inputs[0], kt = k.inputs[1], v = mla ? k.inputs[1] : k.inputs[2];
        const int mask = !mla && k.inputs.size() > 3 ? k.inputs[3] : -1;
        const int ws = k.workspace;
        const bool k_t = !mla && n.attr_int("k_transposed", 1) != 0;
        const bool causal = n.attr_int("causal", 0) != 0;
        const Shape& qs = T(q).shape;
        const Shape& vs = T(v).shape;
        const i64 S = qs[qs.size() - 2], D = qs.back(), Sk = vs[vs.size() - 2];
        const i64 Dv = mla ? n.attr_int("v_dim", D) : vs.back();
        // Causal: query row m (position Sk - S + m) sees keys up to its own;
        // a query block runs over the keys its last row sees.
        const auto keys = [&](i64 m1) { return causal ? std::min(Sk, Sk - S + m1) : Sk; };
        const auto lead = [&](int t) {
            i64 b = 1;
            const Shape& sh = T(t).shape;
            for (std::size_t i = 0; i + 2 < sh.size(); ++i) b *= sh[i];
            return b;
        };
        const i64 batch = lead(q), kb = lead(kt), vb = lead(v), mb = mask >= 0 ? lead(mask) : 1;
        // The head of k / v / mask a query head reads (shared heads: grouped queries, broadcast masks).
        const auto head = [&](i64 b, i64 of) { return of == batch ? b : of <= 1 ? 0 : b / std::max<i64>(1, batch / of); };
        const int e = dtype_bytes(T(q).dtype);
        const int me = mask >= 0 ? dtype_bytes(T(mask).dtype) : 0;
        const bool coupled = chip_.layout == CoreLayout::coupled;
        const auto ub = static_cast<i64>(chip_.buffers.ub_kb) * 1024, l0c = static_cast<i64>(chip_.buffers.l0c_kb) * 1024;
        // Key block: Br x Bc fp32 scores double-buffered in L0C, and in UB with
        // their fp16 probabilities and exp temporaries.
        const auto key_block = [&](i64 br) {
            const i64 by_l0c = l0c / 2 / (br * 4), by_ub = ub / 2 / (br * (4 + 2 + me));
            return std::max<i64>(16, std::min<i64>(Sk, std::min(by_l0c, by_ub) / 16 * 16));
        };
        const auto softmax_cycles_per_repeat = [&](i64 br) {
            const i64 nkb = ceil_div(Sk, key_block(br));
            // softmax (max, exp, sum, divide: 6), the scale (1), the mask (1);
            // per key block after the first the running max / sum update and
            // the rescale and accumulation of the Br x Dv partial output, and
            // the final normalisation, in repeats of the Br x Sk scores.
            return 6.0 + 1.0 + (mask >= 0 ? 1.0 : 0.0) +
                   (3.0 * static_cast<double>(nkb - 1) + 1.0) * static_cast<double>(Dv) / static_cast<double>(Sk);
        };
        // One query block's Cube step: br x n x k, A (br x k) and B (k x n)
        // read from GM, the fp16 result written (QK^T: n = Sk, k = D;
        // PV: n = Dv, k = Sk).
        const auto cube_work = [&](i64 br, i64 n, i64 k) { return gemm_work(br, n, k, e, T(q).dtype); };
        const auto qk_work = [&](i64 br) { return cube_work(br, Sk, D); };
        const auto pv_work = [&](i64 br) { return cube_work(br, Dv, Sk); };
        const auto softmax_work = [&](i64 br) {
            VectorWork w;
            w.in_bytes = static_cast<std::uint64_t>(br * Sk * (e + me));
            w.out_bytes = static_cast<std::uint64_t>(br * Sk * e);
            w.cycles_per_repeat = softmax_cycles_per_repeat(br) * static_cast<double>(e) / static_cast<double>(e + me);
            w.dtype = T(q).dtype;
            w.row_bytes = static_cast<std::uint64_t>(Sk * e);
            return w;
        };
        // Query block: the least estimated time over whole waves of blocks,
        // Cube (q·kᵀ then p·v) and Vector (softmax) overlapping across blocks.
        const int cubes = std::max(1, chip_.cube.count), vectors = std::max(1, chip_.vector.count);
        i64 br = 16;
        double best = std::numeric_limits<double>::infinity();
        const ForcedTiling* f = forced(k);
        for (i64 cand = 16; cand <= 256; cand *= 2) {
            if (cand > 16 && cand >= S + 16) break;
            const i64 units = batch * ceil_div(S, cand);
            const int active = static_cast<int>(std::min<i64>(units, cubes));
            const double cube = cube_task_cycles(qk_work(cand), chip_, active) + cube_task_cycles(pv_work(cand), chip_, active);
            const double vec = vector_task_cycles(softmax_work(cand), chip_, vector_streams(softmax_work(cand), chip_, units));
            const double waves = std::max(static_cast<double>(ceil_div(units, cubes)) * cube,
                                          static_cast<double>(ceil_div(units, vectors)) * vec);
            const double dispatch = static_cast<double>(3 * units) * timing::dispatch_interval_cycles(chip_);
            const double t = std::max(waves, dispatch) + vec + cube / 2;  // filling and draining the pipeline
            if (t < best) {
                best = t;
                br = cand;
            }
        }
        if (f && f->m_blocks > 0) br = std::max<i64>(16, ceil_div(ceil_div(S, f->m_blocks), 16) * 16);  // forced query blocks
        choice.forced = f != nullptr;
        const i64 bc = key_block(br), nkb = ceil_div(Sk, bc);
        choice.est_cycles = best;
        choice.shape = fmt::format("{} query blocks of {} rows x {} heads, {} key block(s) of {} (online softmax); "
                                   "scores in {}",
                                   ceil_div(S, br), br, batch, nkb, bc, coupled ? "UB / L1" : "L2");
        const auto blocks = split(S, ceil_div(S, br), 16);
        // Cube -> Vector in place in UB when two score tiles fit (else L2),
        // Vector -> Cube into L1 when the probabilities fit beside the
        // Cube's own double-buffered blocks.
        const Space score_space = coupled && 2 * br * Sk * e <= ub ? Space::ub : Space::l2;
        const Space prob_space = coupled && 2 * br * Sk * e <= static_cast<i64>(chip_.buffers.l1_kb) * 1024 / 2 ? Space::l1 : Space::l2;
        std::vector<int> qk_task, softmax_task;
        // All q·kᵀ tiles, then all softmaxes, then all p·v: each core type's
        // tiles of the kernel are placed together, the Cube runs ahead.
        for (i64 b = 0; b < batch; ++b)
            for (const auto& [m0, m1] : blocks) {
                TileTask t = cube_task(ki, fmt::format("h{}/q{}-{}/qk", b, m0, m1));
                const i64 sk = keys(m1);
                mem_.matrix_regions(q, Block{b, b + 1, m0, m1, 0, D}, t.reads);
                const i64 hk = head(b, kb);
                mem_.matrix_regions(kt, k_t ? Block{hk, hk + 1, 0, D, 0, sk} : Block{hk, hk + 1, 0, sk, 0, D}, t.reads);
                mem_.matrix_regions(ws, Block{b, b + 1, m0, m1, 0, sk}, t.writes);
                t.params.m = static_cast<std::uint64_t>(m1 - m0);
                t.params.n = static_cast<std::uint64_t>(sk);
                t.params.k = static_cast<std::uint64_t>(D);
                t.params.dtype = T(q).dtype == DType::int8 ? DType::int8 : DType::fp16;
                qk_task.push_back(static_cast<int>(tasks_.size()));
                finish_cube(t, score_space, cube_work(m1 - m0, sk, D));
                tasks_.back().params.dst = score_space;
                for (Region& r : tasks_.back().writes) r.space = score_space;
            }
        std::size_t u = 0;
        for (i64 b = 0; b < batch; ++b)
            for (const auto& [m0, m1] : blocks) {
                TileTask t = vector_task(ki, fmt::format("h{}/q{}-{}/softmax", b, m0, m1));
                t.paired = qk_task[u++];
                t.reads = tasks_[static_cast<std::size_t>(t.paired)].writes;
                std::uint64_t mask_bytes = 0;
                if (mask >= 0) {
                    const i64 hm = head(b, mb);
                    const Shape& ms = T(mask).shape;
                    const i64 mrows = ms.size() >= 2 ? ms[ms.size() - 2] : 1;
                    // A mask broadcast over query rows is one row for all of them.
                    const std::size_t before = t.reads.size();
                    mem_.matrix_regions(mask, mrows == 1 ? Block{hm, hm + 1, 0, 1, 0, ms.back()}
                                                         : Block{hm, hm + 1, m0, m1, 0, ms.back()}, t.reads);
                    for (std::size_t r = before; r < t.reads.size(); ++r) mask_bytes += t.reads[r].total();
                }
                // In place: the probabilities overwrite the scores.
                const i64 sk = keys(m1);
                mem_.matrix_regions(ws, Block{b, b + 1, m0, m1, 0, sk}, t.writes);
                for (Region& r : t.writes) r.space = prob_space;
                t.params.src = score_space;
                t.params.dst = prob_space;
                t.params.bytes = static_cast<std::uint64_t>((m1 - m0) * sk * e) + mask_bytes;
                t.params.out_bytes = static_cast<std::uint64_t>((m1 - m0) * sk * e);
                t.params.dtype = T(q).dtype;
                t.params.row_bytes = static_cast<std::uint64_t>(sk * e);
                softmax_task.push_back(static_cast<int>(tasks_.size()));
                finish_vector(t, softmax_cycles_per_repeat(m1 - m0));
            }
        u = 0;
        for (i64 b = 0; b < batch; ++b)
            for (const auto& [m0, m1] : blocks) {
                TileTask t = cube_task(ki, fmt::format("h{}/q{}-{}/pv", b, m0, m1));
                t.paired = softmax_task[u++];
                t.reads = tasks_[static_cast<std::size_t>(t.paired)].writes;
                const i64 hv = head(b, vb), sk = keys(m1);
                mem_.matrix_regions(v, Block{hv, hv + 1, 0, sk, 0, Dv}, t.reads);
                mem_.matrix_regions(k.output, Block{b, b + 1, m0, m1, 0, Dv}, t.writes);
                t.params.m = static_cast<std::uint64_t>(m1 - m0);
                t.params.n = static_cast<std::uint64_t>(Dv);
                t.params.k = static_cast<std::uint64_t>(sk);
                t.params.dtype = T(q).dtype == DType::int8 ? DType::int8 : DType::fp16;
                // p in L1 already (coupled): only v streams in; else both from L2.
                if (prob_space == Space::l1) t.params.a_bytes = 1;
                finish_cube(t, Space::hbm, cube_work(m1 - m0, Dv, sk), prob_space == Space::l1 ? Space::hbm : Space::l2);
            }
    }

    struct CubeBlocks {
        i64 m = 1, n = 1, k = 1;  // row, column and K blocks
    };

    // The block counts with the least estimated kernel time: whole waves of
    // tiles over the cube cores (a last wave with idle cores costs a full
    // tile), the scalar cores' serial dispatch of every tile, and half a
    // tile a consumer sees exposed; split-K parts each write their block.
    template <class Work>
    CubeBlocks choose_cube(const Kernel& k, i64 outer, i64 rows, i64 cols, i64 K, Work work_in, TilingChoice& choice,
                           const char* rows_name, const char* cols_name, i64 row_unit, bool split_k, Space dst) {
        // Each tile as finish_cube will emit it: its result where it goes.
        const auto work = [&](i64 r, i64 c, i64 kp) {
            CubeWork w = work_in(r, c, kp);
            w.dst = out_space(dst, w.out_bytes);
            return w;
        };
        const int cubes = std::max(1, chip_.cube.count);
        // Kernels alike beside it (projections of one input) run at the
        // same time on the same cores: their tiles together fill the waves.
        const i64 group = kernels_alike(k);
        const auto count = [](const CubeBlocks& b) { return b.m * b.n * b.k; };
        CubeBlocks best_b;
        // One tile's cycles per distinct shape (many block counts round to
        // the same tile): bounds compile time.
        std::map<std::tuple<i64, i64, i64, i64, i64, bool, std::uint64_t, std::uint64_t>, double> memo;
        // Every tile of a row block reads the same A rows, every tile of a
        // column block the same B columns: the L2 fetches each operand byte
        // from HBM once (when the operands fit it) and serves the other
        // tiles' copies. Counting every tile's bytes as HBM traffic would
        // make finer blocks look HBM-bound and fewer, larger blocks (idle
        // cores) win when HBM is slower.
        const std::uint64_t all_unique = static_cast<std::uint64_t>(outer) * work(rows, cols, K).gm_in_bytes;
        const bool fits_l2 = static_cast<double>(all_unique) <= timing::l2_capacity_bytes(chip_);
        // Of those, an earlier kernel's output is in L2 already: only the
        // rest (weights, graph inputs) comes from HBM, once.
        const auto unique_bytes = static_cast<std::uint64_t>(
            static_cast<double>(all_unique) * (1.0 - warm_input_share(k)));
        // The largest tile of the block counts (the others are remainders).
        const auto tile_extent = [&](const CubeBlocks& b) {
            const i64 r = ceil_div(rows, b.m * row_unit) * row_unit, c = ceil_div(cols, b.n * 16) * 16;
            const i64 kp = b.k > 1 ? ceil_div(K, b.k * 16) * 16 : K;
            return std::make_tuple(std::min(r, rows), std::min(c, cols), std::min(kp, K));
        };
        const auto tile_work = [&](const CubeBlocks& b) {
            const auto [r, c, kp] = tile_extent(b);
            return work(r, c, kp);
        };
        // The share of a tile's loads another tile of the kernel fetched
        // first: of all its tiles when the operands fit L2, else of its
        // wave's (w.wave_a_blocks, w.wave_b_blocks set), whose tiles read a
        // shared block at about the same time.
        const auto shared_share = [&](const CubeWork& w, i64 tiles) {
            const double all = static_cast<double>(w.gm_in_bytes) * static_cast<double>(tiles);
            if (fits_l2) return all > 0 ? 1.0 - static_cast<double>(unique_bytes) / all : 0.0;
            const double wave = static_cast<double>(w.gm_in_bytes) * static_cast<double>(std::min<i64>(tiles * group, cubes));
            const double distinct = static_cast<double>(w.wave_a_blocks * w.a_bytes() + w.wave_b_blocks * w.b_bytes());
            return wave > 0 ? std::max(0.0, 1.0 - distinct / wave) : 0.0;
        };
        // The distinct A and B blocks of the first wave of tiles, in the
        // order they are emitted (images, row blocks, column blocks, K
        // parts), with the kernels alike beside them (the same A, their own
        // B): what streams through L2 while a tile reads its own blocks
        // again (timing::rereads_in_l2). Counted as every core's tile
        // whole, a 8192^3 MatMul's 24 tiles (235 MB, a2's L2 192 MB) were
        // estimated with every block read again from HBM, 2.5x their run,
        // and the kernel planned for 16 of 24 cores (58% of the Cube peak);
        // as the wave's distinct operands (145 MB of 3 x 4 x 8 blocks), the
        // 24 tiles of 4 x 6 blocks (262 MB) still were, 2.8x their run, and
        // the kernel split K in 8 and ran at 79% (89% in 4 x 6).
        const auto wave_blocks = [&](const CubeBlocks& b, CubeWork& w) {
            const i64 per_image = count(b), tiles = outer * per_image;
            const i64 wave = std::min<i64>(tiles, std::max<i64>(1, cubes / group));
            const i64 images = wave / per_image, rest = wave % per_image, row = b.n * b.k;
            const i64 a_blocks = images * b.m * b.k + rest / row * b.k + std::min(rest % row, b.k);
            const i64 b_blocks = images * row + std::min(rest, row);  // B per image: the most it can be
            w.wave_a_blocks = static_cast<std::uint64_t>(a_blocks);
            w.wave_b_blocks = static_cast<std::uint64_t>(b_blocks * group);
        };
        const auto tile_cycles = [&](const CubeBlocks& b, i64 tiles, bool full) {
            const auto [r, c, kp] = tile_extent(b);
            const i64 active = std::min<i64>(tiles * group, cubes);
            CubeWork w = work(r, c, kp);
            wave_blocks(b, w);
            auto [it, fresh] =
                memo.emplace(std::make_tuple(r, c, kp, active, tiles, full, w.wave_a_blocks, w.wave_b_blocks), 0.0);
            if (fresh) it->second = cube_task_cycles(w, chip_, static_cast<int>(active), shared_share(w, tiles), full);
            return it->second;
        };
        const auto estimate = [&](const CubeBlocks& b, bool full) {
            const i64 tiles = outer * b.m * b.n * b.k;
            const double t = tile_cycles(b, tiles, full);
            const double waves = static_cast<double>(ceil_div(tiles * group, cubes)) * t;
            const double dispatch = static_cast<double>(tiles * group) * timing::dispatch_interval_cycles(chip_);
            return std::max(waves, dispatch) + 0.5 * t;
        };
        if (const ForcedTiling* f = forced(k); f && (f->m_blocks > 0 || f->n_blocks > 0 || f->k_blocks > 0)) {
            const std::string& name = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
            best_b.m = std::max(1, f->m_blocks);
            best_b.n = std::max(1, f->n_blocks);
            best_b.k = std::max(1, f->k_blocks);
            if (best_b.m > ceil_div(rows, row_unit) || best_b.n > ceil_div(cols, 16))
                throw InputError(fmt::format("workload.tiling.{}: {} x {} blocks, but the op has {} rows (at most {} "
                                             "blocks of {}) and {} columns (at most {} blocks of 16)",
                                             name, best_b.m, best_b.n, rows, ceil_div(rows, row_unit), row_unit, cols,
                                             ceil_div(cols, 16)));
            if (best_b.k > 1 && !split_k)
                throw InputError(fmt::format("workload.tiling.{}.k_blocks: {} K parts, but only a MatMul whose result "
                                             "goes to GM unfused can split K (its parts add into the result)",
                                             name, best_b.k));
            if (best_b.k > ceil_div(K, 16))
                throw InputError(fmt::format("workload.tiling.{}.k_blocks: {} K parts, but K = {} has at most {} blocks "
                                             "of 16", name, best_b.k, K, ceil_div(K, 16)));
            choice.forced = !f->searched;
            choice.searched = f->searched;
        } else {
            // Up to four waves of tiles per image, beyond the core count.
            const i64 per_outer = std::max<i64>(64, 4 * cubes);
            const i64 k_units = ceil_div(K, 16);
            std::vector<std::pair<double, CubeBlocks>> rated;
            double best = std::numeric_limits<double>::max();
            for (i64 ks = 1; ks <= (split_k ? std::min<i64>(k_units, 8) : 1); ks *= 2) {
                if (ks > 1 && outer * ks > per_outer) break;
                for (i64 mb = 1; mb <= std::min<i64>(ceil_div(rows, row_unit), per_outer / ks); ++mb) {
                    for (i64 nb = 1; nb <= std::min<i64>(ceil_div(cols, 16), per_outer / (ks * mb)); ++nb) {
                        const CubeBlocks b{mb, nb, ks};
                        const double est = estimate(b, false);
                        rated.emplace_back(est, b);
                        best = std::min(best, est);
                    }
                }
            }
            // The quick Cube plan ranks only the blocks that move the fewest
            // bytes, and a larger L0C or L0B, whose blocks move fewer still,
            // can push out the block the smaller buffer ran fastest. So the
            // counts within kFullPlanWindow of the best are rated again by
            // the full plan, whose candidates include the smaller buffer's
            // (for a buffer that doubles: timing.cpp); rating every count by
            // the full plan costs several times the compile time.
            {
                const double cut = best * (1 + kFullPlanWindow);
                best = std::numeric_limits<double>::max();
                for (auto& [est, b] : rated) {
                    if (est <= cut) est = estimate(b, true);
                    best = std::min(best, est);
                }
            }
            // The least estimate; of equal ones (block counts that round to
            // the same tiles), the fewest tiles.
            i64 fewest = std::numeric_limits<i64>::max();
            for (const auto& [est, b] : rated)
                if (est <= best && count(b) < fewest) fewest = count(b), best_b = b;
            // Of as many tiles (the same waves), the shape that moves the
            // fewest bytes through the cores' ports, unless another is
            // estimated kEstimateMargin faster: the estimate spreads an
            // operand's L2 hits evenly over its readers and sees no other
            // kernel's traffic, so it underrates tiles that each read all
            // of A.
            {
                const auto port_bytes = [&](const CubeBlocks& b) {
                    const CubeWork w = tile_work(b);
                    return static_cast<double>(w.gm_in_bytes + w.out_bytes) * static_cast<double>(outer * count(b));
                };
                double least = port_bytes(best_b), least_est = best;
                const i64 tiles = count(best_b);
                for (const auto& [est, b] : rated) {
                    if (count(b) != tiles || est > best * (1 + kEstimateMargin)) continue;
                    const double bytes = port_bytes(b);
                    if (bytes < least * (1 - 1e-9) || (bytes <= least * (1 + 1e-9) && est < least_est))
                        least = bytes, least_est = est, best_b = b;
                }
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
            const auto runner_up = [&](auto kind) {
                std::optional<std::pair<double, CubeBlocks>> r;
                for (const auto& [est, b] : rated)
                    if (kind(b) && est <= best * (1 + kRunnerUpBand) &&
                        (!r || est < r->first || (est == r->first && count(b) < count(r->second))))
                        r = std::make_pair(est, b);
                return r;
            };
            choice.node = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
            choice.dims = fmt::format("{} {}x{}x{}x{} {}", rows_name, outer, rows, cols, K, split_k);
            const auto add = [&](const std::optional<std::pair<double, CubeBlocks>>& r) {
                if (!r) return;
                const TilingChoice::Blocks b{static_cast<int>(r->second.m), static_cast<int>(r->second.n),
                                             static_cast<int>(r->second.k)};
                for (const auto& o : choice.runners_up)
                    if (o.m == b.m && o.n == b.n && o.k == b.k) return;
                choice.runners_up.push_back(b);
            };
            add(runner_up([&](const CubeBlocks& b) { return b.m > best_b.m; }));
            add(runner_up([&](const CubeBlocks& b) { return count(b) > count(best_b); }));
            add(runner_up([&](const CubeBlocks& b) { return count(b) < count(best_b); }));
            if (best_b.n > 1) add(runner_up([&](const CubeBlocks& b) { return b.n == 1 && b.m > 1; }));
        }
        choice.node = g_.nodes[static_cast<std::size_t>(k.nodes[0])].name;
        choice.chosen = {static_cast<int>(best_b.m), static_cast<int>(best_b.n), static_cast<int>(best_b.k)};
        const i64 tiles = outer * best_b.m * best_b.n * best_b.k;
        choice.est_cycles = static_cast<double>(ceil_div(tiles, cubes)) * tile_cycles(best_b, tiles, true);
        // The kernel's tasks are planned where this estimate put them: its
        // cores streaming, its shared operand bytes warm (planned_blocking).
        {
            CubeWork w = tile_work(best_b);
            wave_blocks(best_b, w);
            cube_where_ = CubeWhere{static_cast<int>(std::min<i64>(tiles * group, cubes)), shared_share(w, tiles),
                                    w.wave_a_blocks, w.wave_b_blocks};
        }
        choice.shape = fmt::format("{} {} x {} {}{}{}", best_b.m, rows_name, best_b.n, cols_name,
                                   best_b.k > 1 ? fmt::format(" x {} K blocks (atomic-add)", best_b.k) : std::string(),
                                   outer > 1 ? fmt::format(" x {} batch", outer) : std::string());
        return best_b;
    }

    TileTask cube_task(int ki, std::string label) const {
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
    CubeBlocking planned_blocking(const KernelParams& p, const CubeWork& w) {
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
    Space out_space(Space dst, std::uint64_t out_bytes) const {
        return dst == Space::ub && out_bytes * 2 > static_cast<std::uint64_t>(chip_.buffers.ub_kb) * 1024 ? Space::l2 : dst;
    }

    void finish_cube(TileTask& t, Space dst, CubeWork w, Space src = Space::hbm) {
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
        if (tasks_.size() >= kMaxCompiledTasks) too_many_tasks(plan_.kernels[static_cast<std::size_t>(t.kernel)].name, tasks_.size() + 1);
        tasks_.push_back(std::move(t));
    }

    // ---- Vector ------------------------------------------------------------
    i64 vector_tiles(const Kernel& k, std::uint64_t bytes) {
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
    double vector_tile_cycles(const Kernel& k, std::uint64_t bytes, i64 n) const {
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
    i64 dispatch_bounded_tiles(const Kernel& k, std::uint64_t bytes, i64 tiles) const {
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

    // How a Cube kernel will be cut, asked before it is tiled (a producer
    // pipelining into it): its tile count and one tile's estimate.
    struct CubeCut {
        i64 tiles = 0;
        double tile_cycles = 0;
    };
    void dry_result(const TilingChoice& choice, i64 tiles) {
        const i64 waves = ceil_div(tiles, std::max(1, chip_.cube.count));
        *dry_cut_ = CubeCut{tiles, choice.est_cycles / static_cast<double>(std::max<i64>(1, waves))};
    }
    std::optional<CubeCut> cube_cut(int ki) {
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

    // A Vector kernel that feeds a Cube kernel (an input FormatConvert, a
    // softmax before p·v) in one wave finishes all its tiles together, and
    // the Cube waits for them. Cut into w waves (row order), its rows are
    // ready a wave at a time; the Cube kernel's waves (its own tiling, asked
    // ahead: cube_cut) each start when the rows they read are ready and the
    // wave before has run. The w with the earliest Cube end wins: more waves
    // let a Cube kernel of several waves start sooner, but each tile pays
    // its start and latency again, and a Cube kernel of one wave waits for
    // its last rows either way.
    i64 producer_waves(const Kernel& k, std::uint64_t bytes, i64 tiles) {
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
                const double ready = std::max(static_cast<double>(ready_waves) * small,
                                              static_cast<double>(ready_tiles) * interval + small);
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

    [[noreturn]] void too_many_tasks(const std::string& kernel, std::uint64_t tasks) const {
        throw InputError(fmt::format("{}: kernel {}: the graph would compile to {} or more tasks, more than the limit of {}; "
                                     "use a smaller batch or smaller shapes",
                                     g_.file, kernel, tasks, kMaxCompiledTasks));
    }

    // The share of a kernel's input bytes that an earlier kernel wrote and
    // the write-back L2 still holds (the tensor fits half of it): those
    // loads hit L2. Graph inputs and weights come from HBM the first time.
    double warm_input_share(const Kernel& k) const {
        const double l2 = timing::l2_capacity_bytes(chip_);
        double all = 0, warm = 0;
        for (int in : k.inputs) {
            const auto bytes = static_cast<double>(mem_.bytes(in));
            all += bytes;
            if (!T(in).is_const && producer_kernel(in) >= 0 && bytes <= l2 / 2) warm += bytes;
        }
        return all > 0 ? warm / all : 0.0;
    }

    // Cube kernels of the same kind that multiply the same input by
    // constant weights of the same shape into outputs of the same shape
    // (this one included): nothing orders them, so they run side by side.
    i64 kernels_alike(const Kernel& k) const {
        if (k.inputs.size() < 2 || !T(k.inputs[1]).is_const) return 1;
        i64 n = 0;
        for (const Kernel& o : plan_.kernels)
            if (o.core == CoreType::cube && o.kind == k.kind && o.inputs.size() >= 2 && o.inputs[0] == k.inputs[0] &&
                T(o.inputs[1]).is_const && T(o.inputs[1]).shape == T(k.inputs[1]).shape &&
                T(o.output).shape == T(k.output).shape)
                ++n;
        return std::max<i64>(1, n);
    }

    int producer_kernel(int t) const {
        for (std::size_t k = 0; k < plan_.kernels.size(); ++k)
            if (plan_.kernels[k].output == t) return static_cast<int>(k);
        // Through a view (Reshape alias) the data is still the source's.
        const Tensor& tt = T(t);
        if (tt.producer >= 0) {
            const Node& n = g_.nodes[static_cast<std::size_t>(tt.producer)];
            if (n.op == OpType::Reshape) return producer_kernel(n.inputs[0]);
        }
        return -1;
    }

    TileTask vector_task(int ki, std::string label, npusim::Kernel type = npusim::Kernel::vector) const {
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
    void plan_vector_tasks(const Kernel& k, std::size_t first) {
        int n = 0;
        for (std::size_t i = first; i < tasks_.size(); ++i) n += tasks_[i].core == CoreType::vector;
        const double warm = warm_input_share(k);
        for (std::size_t i = first; i < tasks_.size(); ++i) {
            TileTask& t = tasks_[i];
            if (t.core != CoreType::vector || t.type == npusim::Kernel::program || t.remote.dst_rank >= 0 ||
                !t.wait_memory.empty())
                continue;
            const VectorWork vw{t.params.bytes, t.params.out_bytes, t.params.cycles_per_repeat,
                                t.type == npusim::Kernel::copy, t.params.dtype, t.params.row_bytes,
                                t.params.src, t.params.dst, warm};
            const int active = vector_streams(vw, chip_, n);
            t.est_cycles = vector_task_cycles(vw, chip_, active);
            const std::uint64_t chunk = vector_task_chunk(vw, chip_, active);  // at most UB
            t.params.ub_chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk, 0xffffffffu));
        }
    }

    void finish_vector(TileTask& t, double cycles_per_out_repeat) {
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
        t.params.cycles_per_repeat = t.type == npusim::Kernel::copy ? 1.0 : std::max(0.01, cycles_per_out_repeat * out_per_in);
        if (t.type == npusim::Kernel::copy) t.params.out_bytes = t.params.bytes;
        // Its estimate and UB chunk plan come when the kernel's tiles are all
        // known (plan_vector_tasks).
        if (tasks_.size() >= kMaxCompiledTasks) too_many_tasks(plan_.kernels[static_cast<std::size_t>(t.kernel)].name, tasks_.size() + 1);
        tasks_.push_back(std::move(t));
    }

    // Bytes of one independent row of a row op over trailing axes (Softmax,
    // LayerNorm, a ReduceSum of the last axes): each row starts a new V
    // repeat, so short rows waste lanes. 0 = contiguous work (other axes,
    // element-wise, pools, conversions).
    std::uint64_t row_bytes(const Node& n, const Tensor& in) const {
        const Shape& s = in.shape;
        const i64 rank = static_cast<i64>(s.size());
        if (rank == 0) return 0;
        const auto from_axis = [&](i64 a) { return a < 0 ? a + rank : a; };
        i64 first = rank;  // rows span axes [first, rank)
        switch (n.op) {
            case OpType::Softmax:
            case OpType::TopK:
            case OpType::ArgMax:
                if (from_axis(n.attr_int("axis", -1)) == rank - 1) first = rank - 1;
                break;
            case OpType::LayerNorm: first = from_axis(n.attr_int("axis", -1)); break;
            case OpType::ReduceSum: {
                const auto axes = n.attr_ints("axes", {});
                std::vector<bool> reduced(s.size(), axes.empty());
                for (const auto a : axes) reduced[static_cast<std::size_t>(from_axis(a))] = true;
                while (first > 0 && reduced[static_cast<std::size_t>(first - 1)]) --first;
                for (std::size_t d = 0; d < static_cast<std::size_t>(first); ++d)
                    if (reduced[d]) return 0;  // not a suffix: reduces across rows
                break;
            }
            default: return 0;
        }
        if (first >= rank) return 0;
        // A fractal (NZ) tensor pads its last axis to 16 columns.
        i64 elts = in.layout == Layout::FRACTAL_NZ ? ceil_div(s.back(), 16) * 16 : s.back();
        for (i64 d = first; d < rank - 1; ++d) elts *= s[static_cast<std::size_t>(d)];
        return static_cast<std::uint64_t>(elts) * static_cast<std::uint64_t>(dtype_bytes(in.dtype));
    }

    // Element-wise chains and transposes: equal slices of the output storage;
    // same-shaped inputs read the same slice of theirs.
    void elementwise(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const int out = k.output;
        const std::uint64_t P = mem_.bytes(out);
        const i64 tiles = vector_tiles(k, P);
        choice.forced = forced(k) != nullptr;
        choice.shape = fmt::format("{} slices of {} KB", tiles, ceil_div(static_cast<i64>(P), tiles * 1024));
        const std::uint64_t chunk = (P / static_cast<std::uint64_t>(tiles) + 511) / 512 * 512;
        int i = 0;
        for (std::uint64_t lo = 0; lo < P; lo += chunk, ++i) {
            const std::uint64_t hi = std::min(P, lo + chunk);
            TileTask t = vector_task(ki, fmt::format("s{}", i));
            std::uint64_t in_bytes = 0;
            for (int in : k.inputs) {
                const Tensor& it = T(in);
                if (k.kind == KernelKind::elementwise && it.shape == T(out).shape && it.layout == T(out).layout) {
                    t.reads.push_back(mem_.physical(in, lo, hi));
                    in_bytes += hi - lo;
                } else {
                    // Broadcast operands and transposes read scattered data:
                    // name all of it (safe for sync), stream a share of it.
                    t.reads.push_back(mem_.physical(in, 0, mem_.bytes(in)));
                    in_bytes += it.is_const ? std::min<std::uint64_t>(mem_.bytes(in), hi - lo)
                                            : mem_.bytes(in) * (hi - lo) / P;
                }
            }
            t.writes.push_back(mem_.physical(out, lo, hi));
            t.params.bytes = in_bytes;
            t.params.out_bytes = hi - lo;
            t.params.dtype = T(k.inputs[0]).dtype;  // contiguous: lanes by the input's elements
            finish_vector(t, k.cycles_per_repeat);
        }
    }

    // A Vector kernel fused behind a Cube kernel: one tile per Cube tile,
    // reading it in place (UB / L2) and writing the same block.
    void fused_vector(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const int c = k.fused_with;
        const int first = first_tile_[static_cast<std::size_t>(c)], n = tile_count_[static_cast<std::size_t>(c)];
        const Space in_space = n > 0 ? tasks_[static_cast<std::size_t>(first)].params.dst : Space::l2;
        choice.shape = fmt::format("{} tiles, one per Cube tile of {} (fused, in {})", n,
                                   plan_.kernels[static_cast<std::size_t>(c)].name, to_string(in_space));
        const double out_per_in = static_cast<double>(mem_.bytes(k.output)) /
                                  static_cast<double>(std::max<std::uint64_t>(1, mem_.bytes(plan_.kernels[static_cast<std::size_t>(c)].output)));
        for (int i = 0; i < n; ++i) {
            const TileTask& ct = tasks_[static_cast<std::size_t>(first + i)];
            TileTask t = vector_task(ki, ct.label);
            t.paired = first + i;
            t.reads = ct.writes;
            add_consts(k, 1, t.reads);
            for (const Region& r : ct.writes) {
                // The same place in the output, scaled by its element size (row by row).
                const auto scaled = [&](std::uint64_t v) { return static_cast<std::uint64_t>(static_cast<double>(v) * out_per_in); };
                const auto off = r.addr - mem_.addr(plan_.kernels[static_cast<std::size_t>(c)].output);
                Region o = mem_.physical(k.output, scaled(off), scaled(off) + scaled(r.bytes));
                o.stride = scaled(r.stride);
                o.rows = r.rows;
                t.writes.push_back(o);
            }
            t.params.src = ct.params.dst;
            t.params.bytes = sum_bytes(ct.writes);
            t.params.out_bytes = sum_bytes(t.writes);
            t.params.dtype = T(plan_.kernels[static_cast<std::size_t>(c)].output).dtype;
            finish_vector(t, k.cycles_per_repeat);
        }
    }

    // Row blocks with all columns: FormatConvert, row-wise reductions
    // (Softmax, LayerNorm, ReduceSum over the last axis), pools (with halo
    // rows) and GlobalAvgPool (by channel blocks).
    void rowwise(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const Node& n = node(k);
        const int in = k.inputs[0], out = k.output;
        const Block ob = full_block(T(out)), ib = full_block(T(in));
        const i64 tiles = vector_tiles(k, mem_.bytes(in));
        // GlobalAvgPool and GroupNorm reduce over all rows: split by channels
        // (GroupNorm by whole groups).
        const bool gap = n.op == OpType::GlobalAvgPool || n.op == OpType::GroupNorm;
        const i64 channel_unit = n.op == OpType::GroupNorm
                                     ? std::max<i64>(1, ib.c1 / std::max<i64>(1, n.attr_int("groups", 1)))
                                     : c0_of(T(in));
        const auto image = [](const Tensor& t) {
            return t.shape.size() == 4 && (t.layout == Layout::NCHW || t.layout == Layout::NC1HWC0);
        };
        const bool in_image = image(T(in));
        const bool image_vs_matrix = n.op == OpType::FormatConvert && T(in).shape == T(out).shape &&
                                     T(in).shape.size() == 4 && in_image != image(T(out));
        // Split the batch first, then rows (channels for GlobalAvgPool).
        const i64 outer = ob.b1;
        // Rows (channel units) per image are the grain: the largest tile sets
        // the kernel's wave, so cut into the fewest tiles with that largest
        // tile (56 rows in 48 tiles have tiles of 2 rows, as 28 tiles do, and
        // the 20 more only cost dispatch and task starts).
        const i64 units = gap ? ceil_div(ob.c1, channel_unit) : ob.r1;
        i64 per = std::max<i64>(1, ceil_div(tiles, outer));
        if (!forced(k)) per = ceil_div(units, ceil_div(units, std::min(per, units)));
        const std::uint64_t row = row_bytes(n, T(in));
        choice.forced = forced(k) != nullptr;
        int i = 0;
        for (i64 b = 0; b < outer; ++b) {
            const auto parts = gap ? split(ob.c1, per, channel_unit) : split(ob.r1, per);
            for (const auto& [lo, hi] : parts) {
                TileTask t = vector_task(ki, fmt::format("n{}/{}{}-{}", b, gap ? "c" : "r", lo, hi));
                Block rb{b, b + 1, lo, hi, 0, ib.c1}, wb{b, b + 1, lo, hi, 0, ob.c1};
                if (gap) {
                    rb = Block{b, b + 1, 0, ib.r1, lo, hi};
                    wb = Block{b, b + 1, 0, ob.r1, lo, hi};
                } else if (n.op == OpType::MaxPool || n.op == OpType::AvgPool) {
                    const auto kk = n.attr_ints("kernel", {2, 2});
                    const auto st = n.attr_ints("stride", kk);
                    const auto pd = n.attr_ints("pad", {0, 0});
                    rb.r0 = std::max<i64>(0, lo * st[0] - pd[0]);
                    rb.r1 = std::min<i64>(ib.r1, (hi - 1) * st[0] - pd[0] + kk[0]);
                } else if (ib.r1 != ob.r1) {
                    rb = Block{b, b + 1, 0, ib.r1, 0, ib.c1};  // reduces rows: reads them all
                }
                std::vector<Block> read_blocks{rb};
                if (!gap && image_vs_matrix) {
                    // A 4-D tensor is (N, H rows, C columns) in an image
                    // layout and (N·C, H rows, W columns) in a matrix one:
                    // the tile's rows of one (n, c) plane, or of every c of
                    // one n, on the other side (heads converted to
                    // FRACTAL_NZ read every head's rows for one head's).
                    read_blocks.clear();
                    if (in_image) read_blocks.push_back(Block{b / ib.c1, b / ib.c1 + 1, lo, hi, b % ib.c1, b % ib.c1 + 1});
                    else
                        for (i64 c = 0; c < ob.c1; ++c)
                            read_blocks.push_back(Block{b * ob.c1 + c, b * ob.c1 + c + 1, lo, hi, 0, ib.c1});
                }
                for (const Block& r : read_blocks) mem_.regions(in, r, t.reads);
                mem_.regions(out, wb, t.writes);
                add_consts(k, 1, t.reads);
                t.params.bytes = sum_bytes(t.reads);
                t.params.out_bytes = sum_bytes(t.writes);
                t.params.dtype = T(in).dtype;
                t.params.row_bytes = row;
                finish_vector(t, k.cycles_per_repeat);
                ++i;
            }
        }
        choice.shape = fmt::format("{} tiles ({} per image) over {}", i, per, gap ? "channels" : "rows");
    }

    // Concat: each input copied into its place in the output.
    // Each input copied into its place in the output, in row blocks: the
    // kernel's tile count (vector_tiles over all its bytes) shared out by
    // each input's bytes, so a large input is not one long copy on one
    // core.
    // A join along W names the whole output per copy (the block model keeps
    // W whole), so those stay one copy per input and image.
    void concat(int ki, TilingChoice& choice) {
        const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
        const Node& n = node(k);
        const Tensor& ot = T(k.output);
        i64 axis = n.attr_int("axis", 1);
        if (axis < 0) axis += static_cast<i64>(ot.shape.size());
        std::uint64_t all = 0;
        for (int in : k.inputs) all += mem_.bytes(in);
        const i64 budget = vector_tiles(k, all);
        i64 offset = 0;
        int tiles = 0;
        for (int in : k.inputs) {
            const Block ib = full_block(T(in));
            const Shape& s = T(in).shape;
            const i64 extent = s[static_cast<std::size_t>(axis)];
            // A 4-D block is (N, H rows, C columns) with W whole.
            const bool four = s.size() == 4;
            const bool cols = four ? axis == 1 : axis == static_cast<i64>(s.size()) - 1;
            const bool rows = four ? axis == 2 : s.size() >= 2 && axis == static_cast<i64>(s.size()) - 2;
            const double share = all > 0 ? static_cast<double>(mem_.bytes(in)) / static_cast<double>(all) : 1.0;
            const i64 per_image = (cols || rows) ? std::clamp<i64>(static_cast<i64>(std::llround(
                                                                        static_cast<double>(budget) * share /
                                                                        static_cast<double>(std::max<i64>(1, ib.b1)))),
                                                                    1, ib.r1)
                                                 : 1;
            for (i64 b = 0; b < ib.b1; ++b) {
                for (const auto& [r0, r1] : split(ib.r1, per_image)) {
                    TileTask t = vector_task(ki, per_image > 1 ? fmt::format("{}/n{}/r{}-{}", T(in).name, b, r0, r1)
                                                               : fmt::format("{}/n{}", T(in).name, b),
                                             npusim::Kernel::copy);
                    Block rb = ib, wb = full_block(ot);
                    rb.b0 = wb.b0 = b;
                    rb.b1 = wb.b1 = b + 1;
                    if (cols) {
                        wb.c0 = offset;
                        wb.c1 = offset + extent;
                        rb.r0 = wb.r0 = r0;
                        rb.r1 = wb.r1 = r1;
                    } else if (rows) {
                        rb.r0 = r0;
                        rb.r1 = r1;
                        wb.r0 = offset + r0;
                        wb.r1 = offset + r1;
                    }
                    mem_.regions(in, rb, t.reads);
                    mem_.regions(k.output, wb, t.writes);
                    t.params.bytes = sum_bytes(t.reads);
                    finish_vector(t, 0);
                    ++tiles;
                }
            }
            offset += extent;
        }
        choice.shape = fmt::format("{} copies", tiles);
    }

    const Graph& g_;
    const KernelPlan& plan_;
    const MemoryPlan& mem_;
    const ChipParams& full_chip_;
    ChipParams chip_;  // the kernel's view: its core group's cores only
    const CompileOptions& opt_;
    std::vector<int> first_tile_;
    std::vector<int> tile_count_;
    std::vector<int> k_parts_;  // a Cube kernel's split-K parts per output block
    const std::vector<int> capacity_;  // capacity_dispatches: row table k is the k-th one's
    std::vector<TileTask> tasks_;
    struct {
        bool valid = false;
        timing::MatmulShape s;
        CubeBlocking b;
    } blocking_key_;  // the last shape planned_blocking planned (this kernel), and its plan
    struct CubeWhere {
        int active = 0;     // cores the kernel's tiles keep streaming
        double shared = 0;  // share of a tile's loads other tiles fetched first
        std::uint64_t wave_a_blocks = 0, wave_b_blocks = 0;  // distinct blocks of its wave (CubeWork)
    };
    std::optional<CubeWhere> cube_where_;  // set by choose_cube for the kernel being tiled
    std::optional<CubeCut>* dry_cut_ = nullptr;  // cube_cut in progress: choose only, emit nothing
};

}  // namespace

std::vector<TileTask> tile_kernels(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem, const ChipParams& chip,
                                   const CompileOptions& opt, std::vector<TilingChoice>& choices) {
    return Tiler(g, plan, mem, chip, opt).run(choices);
}

}  // namespace npusim::compiler
