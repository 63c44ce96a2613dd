// Fused attention cut into tiles (flash-attention style): per query block
// of one head, q·kᵀ on a Cube core into the score workspace, the online
// softmax on the Vector core beside it, p·v on the same Cube core.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "compiler/attention_layout.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {
namespace {

// Calls f(u, b, m0, m1) for query block [m0, m1) of head b, u counting
// the blocks in the order their tasks are emitted.
template <class F>
void each_query_block(i64 batch, const std::vector<std::pair<i64, i64>>& blocks, F f) {
    std::size_t u = 0;
    for (i64 b = 0; b < batch; ++b)
        for (const auto& [m0, m1] : blocks) f(u++, b, m0, m1);
}

}  // namespace

// What the query-block choice and the three task loops share.
struct Tiler::AttentionShape {
    int q = -1, kt = -1, v = -1, mask = -1, ws = -1;
    int q_rope = -1, k_rope = -1;  // BSND: the rope parts of q and k, apart (MLA)
    bool k_t = false, causal = false, coupled = false;
    bool seq_major = false;                          // q, k, v and the output in BSND (compiler/attention_layout.hpp)
    i64 S = 0, D = 0, Sk = 0, Dv = 0, Dr = 0;        // Dr: the rope parts' columns
    i64 batch = 1, kb = 1, vb = 1, mb = 1, krb = 1;  // heads of q, k, v, the mask and k's rope part
    int e = 0, me = 0;                      // element bytes of q and the mask
    DType dtype = DType::fp16;              // q's
    i64 ub = 0, l0c = 0;
    Space score_space = Space::l2, prob_space = Space::l2;

    // Causal: query row m (position Sk - S + m) sees keys up to its own;
    // a query block runs over the keys its last row sees.
    i64 keys(i64 m1) const { return causal ? std::min(Sk, Sk - S + m1) : Sk; }
    // The head of k / v / mask a query head reads (shared heads: grouped queries, broadcast masks).
    i64 head(i64 b, i64 of) const { return of == batch ? b : of <= 1 ? 0 : b / std::max<i64>(1, batch / of); }
    // Key block: Br x Bc fp32 scores double-buffered in L0C, and in UB with
    // their fp16 probabilities and exp temporaries.
    i64 key_block(i64 br) const {
        const i64 by_l0c = l0c / 2 / (br * 4), by_ub = ub / 2 / (br * (4 + 2 + me));
        return std::max<i64>(16, std::min<i64>(Sk, std::min(by_l0c, by_ub) / 16 * 16));
    }
    double softmax_cycles_per_repeat(i64 br) const {
        const i64 nkb = ceil_div(Sk, key_block(br));
        // softmax (max, exp, sum, divide: 6), the scale (1), the mask (1);
        // per key block after the first the running max / sum update and
        // the rescale and accumulation of the Br x Dv partial output, and
        // the final normalisation, in repeats of the Br x Sk scores.
        return 6.0 + 1.0 + (mask >= 0 ? 1.0 : 0.0) +
               (3.0 * static_cast<double>(nkb - 1) + 1.0) * static_cast<double>(Dv) / static_cast<double>(Sk);
    }
    // One query block's Cube step: br x n x k, A (br x k) and B (k x n)
    // read from GM, the fp16 result written (QK^T: n = Sk, k = D;
    // PV: n = Dv, k = Sk).
    CubeWork cube_work(i64 br, i64 n, i64 k) const { return gemm_work(br, n, k, e, dtype); }
    CubeWork qk_work(i64 br) const { return cube_work(br, Sk, D + Dr); }
    CubeWork pv_work(i64 br) const { return cube_work(br, Dv, Sk); }
    VectorWork softmax_work(i64 br) const {
        VectorWork w;
        w.in_bytes = static_cast<std::uint64_t>(br * Sk * (e + me));
        w.out_bytes = static_cast<std::uint64_t>(br * Sk * e);
        w.cycles_per_repeat = softmax_cycles_per_repeat(br) * static_cast<double>(e) / static_cast<double>(e + me);
        w.dtype = dtype;
        w.row_bytes = static_cast<std::uint64_t>(Sk * e);
        return w;
    }
    DType cube_dtype() const { return dtype == DType::int8 ? DType::int8 : DType::fp16; }
};

Tiler::AttentionShape Tiler::attention_shape(const Kernel& k) const {
    const Node& n = node(k);
    AttentionShape a;
    // MLAttention: the values are the latent cache's first v_dim columns
    // (read again from it for p·v: the same bytes, L2-resident by then).
    const bool mla = n.op == OpType::MLAttention;
    a.q = k.inputs[0], a.kt = k.inputs[1], a.v = mla ? k.inputs[1] : k.inputs[2];
    a.seq_major = seq_major(n);
    a.mask = !mla && !a.seq_major && k.inputs.size() > 3 ? k.inputs[3] : -1;
    if (a.seq_major && k.inputs.size() == 5) a.q_rope = k.inputs[3], a.k_rope = k.inputs[4];
    a.ws = k.workspace;
    a.k_t = !mla && !a.seq_major && n.attr_int("k_transposed", 1) != 0;
    a.causal = n.attr_int("causal", 0) != 0;
    const AttentionDims q = attention_dims(T(a.q).shape, a.seq_major), v = attention_dims(T(a.v).shape, a.seq_major);
    a.S = q.seq, a.D = q.d, a.Sk = v.seq;
    a.Dv = mla ? n.attr_int("v_dim", a.D) : v.d;
    a.batch = q.heads, a.kb = attention_dims(T(a.kt).shape, a.seq_major).heads, a.vb = v.heads;
    a.mb = a.mask >= 0 ? attention_dims(T(a.mask).shape, false).heads : 1;
    if (a.q_rope >= 0) {
        a.Dr = attention_dims(T(a.q_rope).shape, true).d;
        a.krb = attention_dims(T(a.k_rope).shape, true).heads;
    }
    a.e = dtype_bytes(T(a.q).dtype);
    a.me = a.mask >= 0 ? dtype_bytes(T(a.mask).dtype) : 0;
    a.dtype = T(a.q).dtype;
    a.coupled = chip_.layout == CoreLayout::coupled;
    a.ub = static_cast<i64>(chip_.buffers.ub_kb) * 1024, a.l0c = static_cast<i64>(chip_.buffers.l0c_kb) * 1024;
    return a;
}

// ---- Cube + Vector: fused attention (flash-attention style) ---------------
// Per query block of Br rows of one head: q·kᵀ on a Cube core into the
// score workspace (UB on coupled parts, L2 on split ones: never HBM), the
// softmax on the Vector core beside it (scale, mask, the online rescale
// of each key block after the first), p·v on the same Cube core. Key
// blocks of Bc columns are what one Cube / Vector step holds (L0C, UB);
// the tasks carry the whole key range of their query block.
void Tiler::attention(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    AttentionShape a = attention_shape(k);
    const i64 br = attention_query_block(k, a, choice);
    const auto blocks = split_ranges(a.S, ceil_div(a.S, br), 16);
    // Cube -> Vector in place in UB when two score tiles fit (else L2),
    // Vector -> Cube into L1 when the probabilities fit beside the
    // Cube's own double-buffered blocks.
    a.score_space = a.coupled && 2 * br * a.Sk * a.e <= a.ub ? Space::ub : Space::l2;
    a.prob_space =
        a.coupled && 2 * br * a.Sk * a.e <= static_cast<i64>(chip_.buffers.l1_kb) * 1024 / 2 ? Space::l1 : Space::l2;
    std::vector<int> qk_task, softmax_task;
    // All q·kᵀ tiles, then all softmaxes, then all p·v: each core type's
    // tiles of the kernel are placed together, the Cube runs ahead.
    attention_qk(ki, a, blocks, qk_task);
    attention_softmax(ki, a, blocks, qk_task, softmax_task);
    attention_pv(ki, a, blocks, softmax_task);
}

// Query block: the least estimated time over whole waves of blocks,
// Cube (q·kᵀ then p·v) and Vector (softmax) overlapping across blocks.
i64 Tiler::attention_query_block(const Kernel& k, const AttentionShape& a, TilingChoice& choice) const {
    const int cubes = std::max(1, chip_.cube.count), vectors = std::max(1, chip_.vector.count);
    i64 br = 16;
    double best = std::numeric_limits<double>::infinity();
    const ForcedTiling* f = forced(k);
    for (i64 cand = 16; cand <= 256; cand *= 2) {
        if (cand > 16 && cand >= a.S + 16) break;
        const i64 units = a.batch * ceil_div(a.S, cand);
        const int active = static_cast<int>(std::min<i64>(units, cubes));
        const double cube =
            cube_task_cycles(a.qk_work(cand), chip_, active) + cube_task_cycles(a.pv_work(cand), chip_, active);
        const double vec =
            vector_task_cycles(a.softmax_work(cand), chip_, vector_streams(a.softmax_work(cand), chip_, units));
        const double waves = std::max(static_cast<double>(ceil_div(units, cubes)) * cube,
                                      static_cast<double>(ceil_div(units, vectors)) * vec);
        const double dispatch = static_cast<double>(3 * units) * timing::dispatch_interval_cycles(chip_);
        const double t = std::max(waves, dispatch) + vec + cube / 2;  // filling and draining the pipeline
        if (t < best) {
            best = t;
            br = cand;
        }
    }
    if (f && f->m_blocks > 0)
        br = std::max<i64>(16, ceil_div(ceil_div(a.S, f->m_blocks), 16) * 16);  // forced query blocks
    choice.forced = f != nullptr;
    const i64 bc = a.key_block(br), nkb = ceil_div(a.Sk, bc);
    choice.est_cycles = best;
    choice.shape = fmt::format(
        "{} query blocks of {} rows x {} heads, {} key block(s) of {} (online softmax); "
        "scores in {}",
        ceil_div(a.S, br), br, a.batch, nkb, bc, a.coupled ? "UB / L1" : "L2");
    return br;
}

// A block of q, k, v or the output as attention's matrices, in the layout
// the node reads them in.
void Tiler::operand_regions(const AttentionShape& a, int t, const Block& b, std::vector<Region>& out) const {
    if (a.seq_major) mem_.seq_major_regions(t, b, out);
    else mem_.matrix_regions(t, b, out);
}

// q·kᵀ of each query block into the score workspace.
void Tiler::attention_qk(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                         std::vector<int>& qk_task) {
    each_query_block(a.batch, blocks, [&](std::size_t, i64 b, i64 m0, i64 m1) {
        TileTask t = cube_task(ki, fmt::format("h{}/q{}-{}/qk", b, m0, m1));
        const i64 sk = a.keys(m1);
        operand_regions(a, a.q, Block{b, b + 1, m0, m1, 0, a.D}, t.reads);
        const i64 hk = a.head(b, a.kb);
        operand_regions(a, a.kt, a.k_t ? Block{hk, hk + 1, 0, a.D, 0, sk} : Block{hk, hk + 1, 0, sk, 0, a.D}, t.reads);
        if (a.q_rope >= 0) {
            const i64 hr = a.head(b, a.krb);
            operand_regions(a, a.q_rope, Block{b, b + 1, m0, m1, 0, a.Dr}, t.reads);
            operand_regions(a, a.k_rope, Block{hr, hr + 1, 0, sk, 0, a.Dr}, t.reads);
        }
        mem_.matrix_regions(a.ws, Block{b, b + 1, m0, m1, 0, sk}, t.writes);
        t.params.m = static_cast<std::uint64_t>(m1 - m0);
        t.params.n = static_cast<std::uint64_t>(sk);
        t.params.k = static_cast<std::uint64_t>(a.D + a.Dr);
        t.params.dtype = a.cube_dtype();
        qk_task.push_back(static_cast<int>(tasks_.size()));
        finish_cube(t, a.score_space, a.cube_work(m1 - m0, sk, a.D + a.Dr));
        tasks_.back().params.dst = a.score_space;
        for (Region& r : tasks_.back().writes) r.space = a.score_space;
    });
}

// The softmax of each query block's scores, in place on the Vector core.
void Tiler::attention_softmax(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                              const std::vector<int>& qk_task, std::vector<int>& softmax_task) {
    each_query_block(a.batch, blocks, [&](std::size_t u, i64 b, i64 m0, i64 m1) {
        TileTask t = vector_task(ki, fmt::format("h{}/q{}-{}/softmax", b, m0, m1));
        t.paired = qk_task[u];
        t.reads = tasks_[static_cast<std::size_t>(t.paired)].writes;
        std::uint64_t mask_bytes = 0;
        if (a.mask >= 0) {
            const i64 hm = a.head(b, a.mb);
            const Shape& ms = T(a.mask).shape;
            const i64 mrows = ms.size() >= 2 ? ms[ms.size() - 2] : 1;
            // A mask broadcast over query rows is one row for all of them.
            const std::size_t before = t.reads.size();
            mem_.matrix_regions(
                a.mask, mrows == 1 ? Block{hm, hm + 1, 0, 1, 0, ms.back()} : Block{hm, hm + 1, m0, m1, 0, ms.back()},
                t.reads);
            for (std::size_t r = before; r < t.reads.size(); ++r) mask_bytes += t.reads[r].total();
        }
        // In place: the probabilities overwrite the scores.
        const i64 sk = a.keys(m1);
        mem_.matrix_regions(a.ws, Block{b, b + 1, m0, m1, 0, sk}, t.writes);
        for (Region& r : t.writes) r.space = a.prob_space;
        t.params.src = a.score_space;
        t.params.dst = a.prob_space;
        t.params.bytes = static_cast<std::uint64_t>((m1 - m0) * sk * a.e) + mask_bytes;
        t.params.out_bytes = static_cast<std::uint64_t>((m1 - m0) * sk * a.e);
        t.params.dtype = a.dtype;
        t.params.row_bytes = static_cast<std::uint64_t>(sk * a.e);
        softmax_task.push_back(static_cast<int>(tasks_.size()));
        finish_vector(t, a.softmax_cycles_per_repeat(m1 - m0));
    });
}

// p·v of each query block into the output.
void Tiler::attention_pv(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                         const std::vector<int>& softmax_task) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    each_query_block(a.batch, blocks, [&](std::size_t u, i64 b, i64 m0, i64 m1) {
        TileTask t = cube_task(ki, fmt::format("h{}/q{}-{}/pv", b, m0, m1));
        t.paired = softmax_task[u];
        t.reads = tasks_[static_cast<std::size_t>(t.paired)].writes;
        const i64 hv = a.head(b, a.vb), sk = a.keys(m1);
        operand_regions(a, a.v, Block{hv, hv + 1, 0, sk, 0, a.Dv}, t.reads);
        operand_regions(a, k.output, Block{b, b + 1, m0, m1, 0, a.Dv}, t.writes);
        t.params.m = static_cast<std::uint64_t>(m1 - m0);
        t.params.n = static_cast<std::uint64_t>(a.Dv);
        t.params.k = static_cast<std::uint64_t>(sk);
        t.params.dtype = a.cube_dtype();
        // p in L1 already (coupled): only v streams in; else both from L2.
        if (a.prob_space == Space::l1) t.params.a_bytes = 1;
        finish_cube(t, Space::hbm, a.cube_work(m1 - m0, a.Dv, sk), a.prob_space == Space::l1 ? Space::hbm : Space::l2);
    });
}

}  // namespace npusim::compiler
