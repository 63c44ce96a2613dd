// The alpha-beta bound of a collective (docs/collectives.md): every
// dependent step pays the link latency once (alpha) and each rank's bytes on
// the wire, headers included, drain at its egress bandwidth, all planes
// together, each message at its tier's rate (beta).
// Compute, MTE reads and flag handshakes are left out on purpose: the
// distance from the bound is what they cost. Slices in flight overlap one
// step's latency with another's bytes, so a large message may come in a
// little under steps x latency; never under the bandwidth term.
#pragma once
#include <cstdint>
#include <string>

#include "chip/chip_params.hpp"
#include "collective/collective_plan.hpp"

namespace npusim::collective {

struct AlphaBetaBound {
    int steps = 0;
    double latency_ns = 0;             // per step: the slowest tier any message of the plan crosses
    std::uint64_t wire_bytes = 0;      // the busiest rank's egress: blocks x (datablock_bytes + header_bytes)
    double rank_bandwidth_gbps = 0;    // what it drains at: planes x its tiers' plane bandwidth
    double bandwidth_ns = 0;           // its wire bytes over that: no schedule beats this
    double bound_ns = 0;               // steps x latency + bandwidth_ns
};

AlphaBetaBound alpha_beta_bound(const CollectivePlan& plan, const ChipParams& chip);

// Payload each rank sends by the textbook (before padding and blocks):
// allreduce 2(N-1)/N x bytes; allgather, reduce_scatter, alltoall (N-1)/N x bytes.
double textbook_bytes_per_rank(CollectiveWorkload::Op op, int ranks, std::uint64_t bytes);

}  // namespace npusim::collective
