// One AIV core's part of the MoE layer. Between the Dispatch and the Combine
// the rank's Cube cores run the expert GEMMs, a task stream of the die
// (moe/expert_stream.hpp); the two meet through flags in the rank's own GM:
//   Dispatch -> GEMMs  the ready blocks (LayerLayout::ready) the GEMM tasks
//                      wait on. Optimized: each core flags the experts its
//                      reorder share touched as soon as its share is in the
//                      OutputBuffer; baseline: core 0 flags every expert once
//                      the whole Dispatch of the die has ended (SyncAll).
//   GEMMs -> Combine   the done block the stream's last task writes.
#include "moe/combine.hpp"

namespace npusim {

void moe_layer_kernel(AivCore& k, const LayerContext& ctx) {
    const MoeParams& p = ctx.dispatch.params;
    const LayerLayout& L = ctx.layout;
    const int r = k.rank(), c = k.core(), epr = p.experts_per_rank;
    if (p.variant == MoeParams::Variant::baseline) {
        dispatch_baseline(k, ctx.dispatch);
        k.sync_all();
        if (c == 0)
            for (int le = 0; le < epr; ++le) k.set_flag(r, L.ready(le, 0), LayerLayout::kReadyFlag);
        k.pipe_barrier();
        k.timestamp("ready");
        k.wait_flag(L.done(), LayerLayout::kDoneFlag);
        k.timestamp("experts");
        combine_baseline(k, ctx);
        return;
    }
    dispatch_optimized(k, ctx.dispatch);
    // The flags go out on MTE3 behind this core's last OutputBuffer writes.
    const int rows = static_cast<int>(ctx.row_src[static_cast<std::size_t>(r)].size());
    const auto [n0, n1] = LayerContext::share(rows, c, k.cores());
    for (int le = 0; le < epr && n0 < n1; ++le) {
        const auto [a, b] = ctx.expert_rows(r, le);
        if (n0 < b && n1 > a) k.set_flag(r, L.ready(le, c), LayerLayout::kReadyFlag);
    }
    k.pipe_barrier();
    k.timestamp("ready");
    combine_optimized(k, ctx);  // waits for the experts after setting its watches
}

}  // namespace npusim
