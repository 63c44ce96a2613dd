// Baseline MoE Dispatch ("BSP", coarse-grained), after the vendor kernel
// (docs/hardware-facts.md): every phase ends in a barrier, token data and counts
// are sent and then checked together, cumSum runs after all data arrived,
// then the reorder. Correct for every delivery order: the status flags leave
// only after the sender has seen its data writes acknowledged (fence) and all
// cores of the die passed SyncAll.
#include "moe/dispatch.hpp"

namespace npusim {

void dispatch_baseline(AivCore& k, const DispatchContext& ctx) {
    const MoeOp& p = ctx.params;
    const Routing& route = ctx.routing;
    const DispatchLayout& L = ctx.layout;
    const int me = k.rank(), r = ctx.local(me), c = k.core(), C = k.cores(), R = p.ranks(), epr = p.experts_per_rank();
    const int P = route.pairs(), E = route.experts(), S = epr * R;
    const std::uint64_t flag = L.flag;
    auto rank_of = [&](int e) { return ctx.global(me, e / epr); };

    // addr: this core sends pairs [lo, hi) in token order; a pair's slot is
    // the number of earlier pairs of the rank with the same expert, so the
    // core scans the expert ids from the start (scalar loop, per-expert
    // counters in UB).
    const int lo = c * P / C, hi = (c + 1) * P / C;
    k.wait(k.copy_in(static_cast<std::uint64_t>(hi) * 4));
    k.scalar_loop(static_cast<std::uint64_t>(hi));
    k.timestamp("addr");

    // send: each token is loaded into UB once (double-buffered) and written
    // to each of its experts' windows (memory-semantic MTE3 writes).
    int loaded = -1;
    PipeTime in_ub = 0;
    for (int q = lo; q < hi; ++q) {
        const int t = q / p.top_k, e = route.expert(r, q);
        if (t != loaded) {
            in_ub = k.load(p.in_addr + static_cast<Addr>(t) * p.in_row_bytes(), p.in_row_bytes());
            if (p.quantize) in_ub = k.vector(p.in_row_bytes(), kQuantizeCyclesPerRepeat, in_ub);
            loaded = t;
        }
        k.write(rank_of(e), L.slot(e % epr, r, route.slot(r, q)), L.token_bytes, in_ub);
    }
    k.pipe_barrier();
    k.timestamp("send");

    // Every data write acknowledged, on every core of the die.
    k.fence();
    k.sync_all();
    k.timestamp("sync_send");

    // status: {flag, count} per (expert, this rank) for this core's experts,
    // counts from a full scalar pass over the expert ids.
    const int e0 = c * E / C, e1 = (c + 1) * E / C;
    k.scalar_loop(static_cast<std::uint64_t>(P));
    for (int e = e0; e < e1; ++e) k.set_flag(rank_of(e), L.status(e % epr, r), flag);
    k.pipe_barrier();
    k.timestamp("status");

    // wait: this core's share of the (local expert, source rank) statuses.
    const int j0 = c * S / C, j1 = (c + 1) * S / C;
    for (int j = j0; j < j1; ++j) k.wait_flag(L.status(j / R, j % R), flag);
    k.timestamp("wait");
    k.sync_all();
    k.timestamp("sync_wait");

    // cumsum: gather every count (one strided read of the status blocks) and
    // prefix-sum up to this core's pairs.
    k.wait(k.read_strided(L.status(0, 0), 32, static_cast<std::uint32_t>(S), L.block));
    k.scalar_loop(static_cast<std::uint64_t>(S));
    k.timestamp("cumsum");

    // reorder: copy this core's pairs' tokens from the window (sparse by
    // expert) to the OutputBuffer (dense by expert), double-buffered.
    const auto& off = ctx.offsets[static_cast<std::size_t>(r)];
    for (int j = j0; j < j1; ++j) {
        const int le = j / R, src = j % R;
        const int n = route.count(src, r * epr + le);
        for (int i = 0; i < n; ++i) {
            const Addr row = p.out_addr + static_cast<Addr>(ctx.row_of(r, off[static_cast<std::size_t>(j)] + i)) * p.out_row_bytes();
            k.store(row, p.out_row_bytes(), k.read(L.slot(le, src, i), L.token_bytes));
        }
    }
    k.pipe_barrier();
    k.timestamp("reorder");
}

}  // namespace npusim
