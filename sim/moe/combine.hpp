// The MoE Combine kernels (the reverse all-to-all of the Dispatch), written
// against the AIV kernel API like the Dispatch: every expert output row in a
// rank's OutputBuffer goes back to the rank its token came from, into the
// slot of its (token, k) pair; the source rank sums each token's top_k rows,
// each weighted by its gate. docs/supernode.md "The MoE layer" walks through
// both variants.
#pragma once
#include <utility>
#include <vector>

#include "kernel_api/aiv_core.hpp"
#include "moe/dispatch.hpp"
#include "moe/layer_layout.hpp"

namespace npusim {

// What every kernel instance of the layer shares, beyond the Dispatch's context.
struct LayerContext {
    const DispatchContext& dispatch;
    const LayerLayout& layout;
    // Per rank, for every OutputBuffer row (dense by local expert, then
    // source rank): the source rank and the (token, k) pair on it.
    std::vector<std::vector<std::int32_t>> row_src, row_pair;

    LayerContext(const DispatchContext& d, const LayerLayout& l);

    // OutputBuffer rows [first, second) of local expert `le` on `rank`.
    std::pair<int, int> expert_rows(int rank, int le) const;
    // The AIV cores [first, second) whose Dispatch reorder share of the
    // OutputBuffer overlaps those rows: in the optimized layer, expert le is
    // ready when each of them has flagged it.
    std::pair<int, int> ready_cores(int rank, int le) const;
    // This core's equal share [first, second) of the rank's OutputBuffer rows
    // (the same split as the optimized Dispatch's reorder).
    static std::pair<int, int> share(int rows, int core, int cores);
};

// Baseline (BSP): rows out, fence + SyncAll, a {flag, count} status per
// (expert, source rank), wait for every expert's status, SyncAll, then each
// core reads its tokens' top_k rows and sums them.
void combine_baseline(AivCore& k, const LayerContext& ctx);

// Optimized: the watches on the own tokens' slots are set before the experts
// end; rows go out as Data-as-Flag blocks; after each row the core
// accumulates whatever of its tokens' rows has landed, and writes a token out
// as soon as its top_k rows are in. No status blocks, no SyncAll.
void combine_optimized(AivCore& k, const LayerContext& ctx);

// One AIV core's part of the whole layer: the Dispatch, the ready flags the
// expert GEMM tasks wait on, the wait for the rank's expert stream, the Combine.
void moe_layer_kernel(AivCore& k, const LayerContext& ctx);

}  // namespace npusim
