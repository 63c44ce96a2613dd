#include "collective/alpha_beta_bound.hpp"

#include <algorithm>

namespace npusim::collective {

AlphaBetaBound alpha_beta_bound(const CollectivePlan& plan, const ChipParams& chip) {
    const InterconnectParams& ic = chip.interconnect;
    AlphaBetaBound b;
    b.steps = plan.steps;
    b.latency_ns = ic.plane_latency_ns;
    const std::uint64_t blocks =
        plan.sent_blocks.empty() ? 0 : *std::max_element(plan.sent_blocks.begin(), plan.sent_blocks.end());
    b.wire_bytes = blocks * static_cast<std::uint64_t>(ic.datablock_bytes);
    b.rank_bandwidth_gbps = ic.planes * ic.plane_bandwidth_gbps;
    // GB/s = bytes per ns.
    b.bandwidth_ns = static_cast<double>(b.wire_bytes) / b.rank_bandwidth_gbps;
    b.bound_ns = b.steps * b.latency_ns + b.bandwidth_ns;
    return b;
}

double textbook_bytes_per_rank(CollectiveWorkload::Op op, int ranks, std::uint64_t bytes) {
    const double share = static_cast<double>(ranks - 1) / ranks * static_cast<double>(bytes);
    return op == CollectiveWorkload::Op::allreduce ? 2 * share : share;
}

}  // namespace npusim::collective
