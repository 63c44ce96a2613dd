// Baseline MoE Combine ("BSP", coarse-grained), the mirror of the baseline
// Dispatch: every phase ends in a barrier; rows are sent, then the statuses
// that say they have landed; the sums start once every expert has reported.
// Correct for every delivery order: a status leaves only after its sender's
// row writes were acknowledged (fence) on every core of the die (SyncAll).
#include "moe/combine.hpp"

namespace npusim {

namespace {
// Vector cost per 256 B repeat of a row: multiply by the gate and add into
// the fp32 accumulator (a property of the kernel, not fitted).
constexpr double kWeightedSumCyclesPerRepeat = 2;
}  // namespace

void combine_baseline(AivCore& k, const CombineContext& ctx) {
    const MoeOp& p = ctx.params;
    const DispatchContext& d = ctx.dispatch;
    const CombineLayout& L = ctx.layout;
    const int me = k.rank(), r = d.local(me), c = k.core(), C = k.cores(), R = p.ranks(), epr = p.experts_per_rank();
    const int E = d.routing.experts(), S = epr * R, K = p.top_k;
    const std::uint64_t flag = L.flag;
    const auto& srcs = ctx.rows.src[static_cast<std::size_t>(r)];
    const auto& pairs = ctx.rows.pair[static_cast<std::size_t>(r)];

    // send: this core's share of the expert output rows, each loaded into UB
    // (double-buffered) and written into its (token, k) slot on its source.
    const auto [n0, n1] = CombineContext::share(static_cast<int>(srcs.size()), c, C);
    k.scalar_loop(static_cast<std::uint64_t>(n1 - n0));
    for (int row = n0; row < n1; ++row) {
        const PipeTime in_ub = k.load(p.in_addr + static_cast<Addr>(d.row_of(r, row)) * L.row_bytes, L.row_bytes);
        k.write(d.global(me, srcs[static_cast<std::size_t>(row)]), L.slot(pairs[static_cast<std::size_t>(row)]), L.row_bytes,
                in_ub);
    }
    k.pipe_barrier();
    k.timestamp("combine_send");

    k.fence();
    k.sync_all();
    k.timestamp("combine_sync_send");

    // status: {flag, count} of each (local expert, source rank) of this core's share.
    const int j0 = c * S / C, j1 = (c + 1) * S / C;
    k.scalar_loop(static_cast<std::uint64_t>(j1 - j0));
    for (int j = j0; j < j1; ++j) k.set_flag(d.global(me, j % R), L.status(r * epr + j / R), flag);
    k.pipe_barrier();
    k.timestamp("combine_status");

    // wait: this core's share of the experts' statuses on this rank.
    const int e0 = c * E / C, e1 = (c + 1) * E / C;
    for (int e = e0; e < e1; ++e) k.wait_flag(L.status(e), flag);
    k.timestamp("combine_wait");
    k.sync_all();
    k.timestamp("combine_sync_wait");

    // sum: this core's tokens; each token's top_k rows are read from the
    // window, weighted and summed, and the bf16 result written out.
    const int t0 = c * p.batch / C, t1 = (c + 1) * p.batch / C;
    for (int t = t0; t < t1; ++t) {
        PipeTime rows = 0;
        for (int j = 0; j < K; ++j) rows = k.read(L.slot(t * K + j), L.row_bytes);
        const PipeTime sum = k.vector(static_cast<std::uint64_t>(K) * L.row_bytes, kWeightedSumCyclesPerRepeat, rows);
        k.store(p.out_addr + static_cast<Addr>(t) * p.out_row_bytes(), p.out_row_bytes(), sum);
    }
    k.pipe_barrier();
    k.timestamp("combine_sum");
}

}  // namespace npusim
