// What a collective run adds to its stats (collective.*) and its summary
// line: the plan's volumes next to the alpha-beta bound (docs/collectives.md).
#pragma once
#include <string>

#include "chip/chip_params.hpp"
#include "collective/collective_plan.hpp"

namespace npusim {
class Stats;
}

namespace npusim::collective {

// collective.{op,algorithm,ranks,slices,copy_cores,reduce_cores,steps,step_latency_ns,bytes,
// sent_bytes_per_rank,textbook_bytes_per_rank,wire_bytes_per_rank,
// rank_bandwidth_gbps,bandwidth_ns,bound_ns,efficiency};
// efficiency = bound_ns / total_ns (0 when total_ns is 0).
void report_collective(const CollectivePlan& plan, const ChipParams& chip, double total_ns, Stats& stats);

// "  collective   allreduce ring over 8 ranks, 14 steps, 96 slices per chunk on
//  24 copy + 24 reduce cores; alpha-beta bound 622.7 us = 100.6% of the time\n"
std::string collective_summary(const CollectivePlan& plan, const ChipParams& chip, double total_ns);

}  // namespace npusim::collective
