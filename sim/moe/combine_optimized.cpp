// Optimized MoE Combine (fine-grained, out-of-order), the mirror of the
// optimized Dispatch:
//   watch    before the experts end, each core registers watches on the
//            Combine slots of its equal share of the rank's tokens (top_k
//            slots per token);
//   send     once the rank's expert stream has flagged its end, each core
//            sends its share of the OutputBuffer rows back to their source
//            ranks as Data-as-Flag blocks (bf16 payload + 8 B flag in every
//            512 B block); after each row it polls once and accumulates
//            whatever of its tokens' rows has landed (gate-weighted, fp32);
//   sum      the rest of its rows in landing order; a token's result goes
//            out as soon as its top_k rows are in.
// No status blocks and no SyncAll: the flag in every block says the row is there.
#include "moe/combine.hpp"

namespace npusim {

namespace {
// Vector cost per 256 B repeat (properties of the kernel, not fitted).
constexpr double kUnpackAccumulateCyclesPerRepeat = 3;  // strip the flags, multiply by the gate, add in fp32
}  // namespace

void combine_optimized(AivCore& k, const CombineContext& ctx) {
    const MoeOp& p = ctx.params;
    const DispatchContext& d = ctx.dispatch;
    const CombineLayout& L = ctx.layout;
    const int me = k.rank(), r = d.local(me), c = k.core(), C = k.cores(), K = p.top_k;
    const std::uint64_t flag = L.flag;
    const auto& srcs = ctx.rows.src[static_cast<std::size_t>(r)];
    const auto& pairs = ctx.rows.pair[static_cast<std::size_t>(r)];

    // watch: the slots of this core's tokens [t0, t1), tagged by pair.
    const int t0 = c * p.batch / C, t1 = (c + 1) * p.batch / C;
    for (int q = t0 * K; q < t1 * K; ++q) k.watch_blocks(L.slot(q), L.data_blocks, flag, static_cast<std::uint64_t>(q));
    std::vector<int> landed(static_cast<std::size_t>(t1 - t0), 0);
    k.timestamp("combine_watch");

    // Accumulate one landed row: window -> UB -> weighted add; a token whose
    // top_k rows are all in goes out.
    const int expected = (t1 - t0) * K;
    int got = 0;
    auto accumulate = [&](std::uint64_t tag) {
        const int q = static_cast<int>(tag), t = q / K;
        const PipeTime in_ub = k.read(L.slot(q), L.slot_bytes());
        const PipeTime sum = k.vector(L.slot_bytes(), kUnpackAccumulateCyclesPerRepeat, in_ub);
        if (++landed[static_cast<std::size_t>(t - t0)] == K)
            k.store(p.out_addr + static_cast<Addr>(t) * p.out_row_bytes(), p.out_row_bytes(), sum);
        ++got;
    };

    // send: this core's share of the expert output rows.
    const auto [n0, n1] = CombineContext::share(static_cast<int>(srcs.size()), c, C);
    std::uint64_t tag = 0;
    for (int row = n0; row < n1; ++row) {
        const PipeTime in_ub = k.load(p.in_addr + static_cast<Addr>(d.row_of(r, row)) * L.row_bytes, L.row_bytes);
        const PipeTime packed = k.vector(L.slot_bytes(), kPackCyclesPerRepeat, in_ub);
        k.write_data_as_flag(d.global(me, srcs[static_cast<std::size_t>(row)]), L.slot(pairs[static_cast<std::size_t>(row)]),
                             L.row_bytes, flag, packed);
        while (got < expected && k.poll_ready(tag)) accumulate(tag);
    }
    k.timestamp("combine_send");

    while (got < expected) accumulate(k.next_ready());
    k.pipe_barrier();
    k.timestamp("combine_sum");
}

}  // namespace npusim
