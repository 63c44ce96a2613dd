// The MoE Combine kernels (the reverse all-to-all of the Dispatch), written
// against the AIV kernel API like the Dispatch: every expert output row on a
// rank goes back to the rank its token came from, into the slot of its
// (token, k) pair; the source rank sums each token's top_k rows, each
// weighted by its gate. docs/supernode.md "The MoE layer" walks through both
// variants.
#pragma once
#include <utility>
#include <vector>

#include "hw/aiv_core.hpp"
#include "moe/combine_layout.hpp"
#include "moe/dispatch.hpp"

namespace npusim {

// Per rank of the group, for every row of its expert outputs (dense by
// local expert, then source rank): the source rank and the (token, k) pair
// on it. A function of the Dispatch alone: the Combines of every rank that
// return the same Dispatch's tokens share one (moe_programs.cpp).
struct CombineRows {
    std::vector<std::vector<std::int32_t>> src, pair;
    explicit CombineRows(const DispatchContext& d);
};

// What every instance shares: the routing of the Dispatch it returns the
// tokens of (its context and rows, for where each row came from) and the layout.
struct CombineContext {
    const DispatchContext& dispatch;
    const MoeOp& params;  // the Combine's own (variant, rows, tensors, flag)
    const CombineLayout& layout;
    const CombineRows& rows;

    CombineContext(const DispatchContext& d, const MoeOp& p, const CombineLayout& l, const CombineRows& r)
        : dispatch(d), params(p), layout(l), rows(r) {}

    // This core's equal share [first, second) of `rows` (the same split as
    // the optimized Dispatch's reorder).
    static std::pair<int, int> share(int rows, int core, int cores);
};

// Baseline (BSP): rows out, fence + SyncAll, a {flag, count} status per
// (expert, source rank), wait for every expert's status, SyncAll, then each
// core reads its tokens' top_k rows and sums them.
void combine_baseline(AivCore& k, const CombineContext& ctx);

// Optimized: the watches on the own tokens' slots are set first; rows go
// out as Data-as-Flag blocks; after each row the core accumulates whatever
// of its tokens' rows has landed, and writes a token out as soon as its
// top_k rows are in. No status blocks, no SyncAll.
void combine_optimized(AivCore& k, const CombineContext& ctx);

}  // namespace npusim
