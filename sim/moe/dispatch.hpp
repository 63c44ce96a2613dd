// The MoE Dispatch kernels, written against the AIV kernel API (one program
// task per AIV core of every rank). docs/supernode.md walks through both.
#pragma once
#include <vector>

#include "collective/routing.hpp"
#include "hw/aiv_core.hpp"
#include "moe/dispatch_layout.hpp"
#include "collective/moe_op.hpp"

namespace npusim {

// Vector cost per 256 B repeat of the sequences several kernels run
// (properties of the kernels, not fitted; one definition, so that the
// sources compile together in a unity batch).
constexpr double kQuantizeCyclesPerRepeat = 3;  // a token to int8: absolute max, scale, convert
constexpr double kPackCyclesPerRepeat = 1;      // 504 B payload pieces + flag into 512 B blocks

// What every instance shares: the routing (the data the kernels would read
// from GM; reading it is costed in the kernels) and the layout. Ranks are
// those of the op's group: a core on global rank g is rank local(g) of it.
struct DispatchContext {
    const MoeOp& params;
    const Routing& routing;
    const DispatchLayout& layout;
    // Per rank of the group, the start of each (local expert, source rank)
    // pair's tokens in the dense output: offsets[rank][le * ranks + src], plus the total.
    std::vector<std::vector<std::int32_t>> offsets;

    DispatchContext(const MoeOp& p, const Routing& r, const DispatchLayout& l);
    // Row of the received tensor that holds dense row `dense` of group rank
    // `rank` (with a capacity, each local expert's rows start at le x capacity).
    std::int64_t row_of(int rank, std::int64_t dense) const;
    int local(int global_rank) const { return global_rank % params.group; }
    // The global rank of the group's rank `local`, seen from a core on `self`.
    int global(int self, int local_rank) const { return self - self % params.group + local_rank; }
};

// Baseline (BSP): scalar address scan, token data, fence + SyncAll, status
// {flag, count} blocks, wait for statuses, SyncAll, cumSum, reorder.
void dispatch_baseline(AivCore& k, const DispatchContext& ctx);

// Optimized: vector top-K bitmap across cores, counts first, early cumSum,
// token data as Data-as-Flag blocks (or, with flag_in_block = false, data
// then a separate flag block), reorder each token as it lands, no SyncAll.
void dispatch_optimized(AivCore& k, const DispatchContext& ctx);

}  // namespace npusim
