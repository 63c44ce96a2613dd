#include "collective/alpha_beta_bound.hpp"

#include <algorithm>

namespace npusim::collective {

AlphaBetaBound alpha_beta_bound(const CollectivePlan& plan, const ChipParams& chip) {
    const InterconnectParams& ic = chip.interconnect;
    const std::uint64_t block_wire = static_cast<std::uint64_t>(ic.datablock_bytes) + ic.header_bytes;
    AlphaBetaBound b;
    b.steps = plan.steps;
    const int n = plan.ranks;
    for (int r = 0; r < n; ++r) {
        std::uint64_t blocks = 0;
        double ns = 0;  // GB/s = bytes per ns
        for (int d = 0; d < n; ++d) {
            const std::uint64_t k = plan.blocks_to[static_cast<std::size_t>(r) * n + d];
            if (!k) continue;
            const LinkTier& tier = ic.tier(r, d);
            b.latency_ns = std::max(b.latency_ns, tier.latency_ns);
            blocks += k;
            ns += static_cast<double>(k * block_wire) / (ic.planes * tier.plane_bandwidth_gbps);
        }
        if (ns > b.bandwidth_ns || (ns == b.bandwidth_ns && blocks * block_wire > b.wire_bytes)) {
            b.bandwidth_ns = ns;
            b.wire_bytes = blocks * block_wire;
        }
    }
    b.rank_bandwidth_gbps = b.bandwidth_ns > 0 ? static_cast<double>(b.wire_bytes) / b.bandwidth_ns : 0;
    b.bound_ns = b.steps * b.latency_ns + b.bandwidth_ns;
    return b;
}

double textbook_bytes_per_rank(CollectiveWorkload::Op op, int ranks, std::uint64_t bytes) {
    const double share = static_cast<double>(ranks - 1) / ranks * static_cast<double>(bytes);
    return op == CollectiveWorkload::Op::allreduce ? 2 * share : share;
}

}  // namespace npusim::collective
