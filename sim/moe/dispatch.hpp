// The MoE Dispatch kernels, written against the AIV kernel API (one instance
// per AIV core of every rank). docs/supernode.md walks through both.
#pragma once
#include <vector>

#include "kernel_api/aiv_core.hpp"
#include "moe/dispatch_layout.hpp"
#include "moe/moe_params.hpp"
#include "moe/routing.hpp"

namespace npusim {

// What every kernel instance shares: the routing (the data the kernels would
// read from GM; reading it is costed in the kernels) and the layout.
struct DispatchContext {
    const MoeParams& params;
    const Routing& routing;
    const DispatchLayout& layout;
    // Per rank, the start of each (local expert, source rank) pair's tokens in
    // the dense OutputBuffer: offsets[rank][le * ranks + src], plus the total.
    std::vector<std::vector<std::int32_t>> offsets;

    DispatchContext(const MoeParams& p, const Routing& r, const DispatchLayout& l);
};

// Baseline (BSP): scalar address scan, token data, fence + SyncAll, status
// {flag, count} blocks, wait for statuses, SyncAll, cumSum, reorder.
void dispatch_baseline(AivCore& k, const DispatchContext& ctx);

// Optimized: vector top-K bitmap across cores, counts first, early cumSum,
// token data as Data-as-Flag blocks (or, with flag_in_block = false, data
// then a separate flag block), reorder each token as it lands, no SyncAll.
void dispatch_optimized(AivCore& k, const DispatchContext& ctx);

}  // namespace npusim
