// Optimized MoE Dispatch (fine-grained, out-of-order; docs/design.md §1.3):
//   bitmap   the cores split the experts; each builds, with vector compares
//            over the rank's expert ids, the token bitmap and count of its
//            experts; they meet through GM flags (no SyncAll); each core then
//            takes an equal slice of the rank's (token, k) pairs and finds
//            every pair's window slot by a popcount of its expert's bitmap
//            (vector, no scalar scan);
//   counts   the {flag, count} status of each expert goes out first;
//   cumsum   each core waits for its share of the statuses addressed to this
//            rank, the cores exchange partial sums through GM flags, and
//            every core knows where each expected token goes in the
//            OutputBuffer before any token data arrives (early cumSum); it
//            watches the window slots of an equal share of the tokens;
//   send     token data, as Data-as-Flag blocks (payload + 8 B flag in every
//            512 B block): each token is loaded and packed once and written
//            to each of its experts; after each token the core polls once and
//            reorders whatever of its share has landed;
//   reorder  the rest of its share, in landing order.
// With flag_in_block = false the token goes as plain data and the scalar
// stores a flag into a separate block right after issuing it, with no
// barrier in between: the flag can overtake the data on another plane, the
// receiver trusts the flag and reads data that has not landed (the memory
// model counts it).
#include "moe/dispatch.hpp"

#include <algorithm>

namespace npusim {

namespace {
// Vector cost of the algorithms (cycles per 256 B repeat of the instruction
// sequences; properties of the kernel, not fitted).
constexpr double kBitmapCyclesPerRepeat = 2;  // compare ids with the expert, select into the bitmap
constexpr double kGatherCyclesPerRepeat = 1;  // masked popcount of a bitmap below a token
}  // namespace

void dispatch_optimized(AivCore& k, const DispatchContext& ctx) {
    const MoeOp& p = ctx.params;
    const Routing& route = ctx.routing;
    const DispatchLayout& L = ctx.layout;
    const int me = k.rank(), r = ctx.local(me), c = k.core(), C = k.cores(), R = p.ranks(), epr = p.experts_per_rank();
    const int B = p.batch, P = route.pairs(), E = route.experts(), S = epr * R;
    const std::uint64_t flag = L.flag;
    const bool daf = L.data_as_flag;
    auto rank_of = [&](int e) { return ctx.global(me, e / epr); };

    // --- bitmap: this core's experts (a B-bit token bitmap and a count each).
    const int e0 = c * E / C, e1 = (c + 1) * E / C;
    const std::uint64_t bitmap_bytes = (static_cast<std::uint64_t>(B) + 7) / 8;
    PipeTime h = k.copy_in(static_cast<std::uint64_t>(P) * 4);
    for (int e = e0; e < e1; ++e) h = k.vector(static_cast<std::uint64_t>(P) * 4, kBitmapCyclesPerRepeat, h);
    h = k.copy_out(static_cast<std::uint64_t>(e1 - e0) * (bitmap_bytes + 32), h);
    k.cross_core_set(0, flag, h);
    k.cross_core_wait_all(0, flag);
    // This core's pairs [q0, q1) in token order: their experts' bitmaps, and
    // each pair's slot = popcount of its expert's bitmap below the token.
    const int q0 = c * P / C, q1 = (c + 1) * P / C;
    h = k.copy_in(static_cast<std::uint64_t>(q1 - q0) * bitmap_bytes);
    k.wait(k.vector(static_cast<std::uint64_t>(q1 - q0) * bitmap_bytes * 8, kGatherCyclesPerRepeat, h));
    k.timestamp("bitmap");

    // --- counts first.
    for (int e = e0; e < e1; ++e) k.set_flag(rank_of(e), L.status(e % epr, r), flag);
    k.pipe_barrier();
    k.timestamp("counts");

    // --- early cumSum, then watch this core's share of the tokens.
    const int j0 = c * S / C, j1 = (c + 1) * S / C;
    for (int j = j0; j < j1; ++j) k.wait_flag(L.status(j / R, j % R), flag);
    k.scalar_loop(static_cast<std::uint64_t>(j1 - j0));
    k.cross_core_set(1, flag, k.copy_out(32));  // partial sum, then its flag
    k.cross_core_wait_all(1, flag);
    k.wait(k.copy_in(static_cast<std::uint64_t>(C) * 32));
    k.scalar_loop(static_cast<std::uint64_t>(C));
    const auto& off = ctx.offsets[static_cast<std::size_t>(r)];
    const int N = off.back();
    const int n0 = static_cast<int>(static_cast<std::int64_t>(c) * N / C);
    const int n1 = static_cast<int>(static_cast<std::int64_t>(c + 1) * N / C);
    int j = static_cast<int>(std::upper_bound(off.begin(), off.end(), n0) - off.begin()) - 1;
    k.scalar_loop(static_cast<std::uint64_t>(n1 - n0));
    for (int pos = n0; pos < n1; ++pos) {
        while (off[static_cast<std::size_t>(j) + 1] <= pos) ++j;
        const int le = j / R, src = j % R, i = pos - off[static_cast<std::size_t>(j)];
        const std::uint64_t tag = (static_cast<std::uint64_t>(le) * R + src) * B + i;
        if (daf) k.watch_blocks(L.slot(le, src, i), L.data_blocks, flag, tag);
        else k.watch_flag(L.flag_block(le, src, i), flag, tag);
    }
    k.timestamp("cumsum");

    // Reorder one landed token: window -> UB (-> strip the flags) -> its row of the output.
    int received = 0;
    auto reorder = [&](std::uint64_t tag) {
        const int i = static_cast<int>(tag % B);
        const int pair = static_cast<int>(tag / B);
        const Addr slot = L.slot(pair / R, pair % R, i);
        PipeTime t;
        if (daf) t = k.vector(L.data_bytes(), kPackCyclesPerRepeat, k.read(slot, L.data_bytes()));
        else t = k.read(slot, L.token_bytes);
        const Addr row = p.out_addr + static_cast<Addr>(ctx.row_of(r, off[static_cast<std::size_t>(pair)] + i)) * p.out_row_bytes();
        k.store(row, p.out_row_bytes(), t);
        ++received;
    };

    // --- send: each token loaded and packed once (double-buffered), written
    // to each of its experts; after each token, reorder what has landed.
    std::uint64_t tag = 0;
    PipeTime ready = 0;
    for (int q = q0; q < q1; ++q) {
        const int t = q / p.top_k, e = route.expert(r, q);
        if (q == q0 || q % p.top_k == 0) {
            ready = k.load(p.in_addr + static_cast<Addr>(t) * p.in_row_bytes(), p.in_row_bytes());
            if (p.quantize) ready = k.vector(p.in_row_bytes(), kQuantizeCyclesPerRepeat, ready);
            if (daf) ready = k.vector(L.data_bytes(), kPackCyclesPerRepeat, ready);
        }
        const Addr slot = L.slot(e % epr, r, route.slot(r, q));
        if (daf) {
            k.write_data_as_flag(rank_of(e), slot, L.token_bytes, flag, ready);
        } else {
            // The bug this variant exists to show: the flag is stored by the
            // scalar right after the data's DataCopy is issued, with no
            // pipe barrier, into a block of its own.
            k.write(rank_of(e), slot, L.token_bytes, ready);
            k.scalar_set_flag(rank_of(e), slot + L.data_bytes(), flag);
        }
        const bool token_done = q + 1 == q1 || (q + 1) / p.top_k != t;
        if (token_done)
            while (received < n1 - n0 && k.poll_ready(tag)) reorder(tag);
    }
    k.timestamp("send");

    while (received < n1 - n0) reorder(k.next_ready());
    k.pipe_barrier();
    k.timestamp("reorder");
}

}  // namespace npusim
