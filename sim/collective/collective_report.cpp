#include "collective/collective_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "collective/alpha_beta_bound.hpp"
#include "stats/stats.hpp"

namespace npusim::collective {

void report_collective(const CollectivePlan& plan, const ChipParams& chip, double total_ns, Stats& s) {
    const AlphaBetaBound b = alpha_beta_bound(plan, chip);
    s.set("collective.op", to_string(plan.workload.op));
    s.set("collective.algorithm", to_string(plan.workload.algorithm));
    s.set("collective.ranks", plan.ranks);
    s.set("collective.slices", plan.slices);
    s.set("collective.copy_cores", plan.senders);
    s.set("collective.reduce_cores", plan.reducers);
    s.set("collective.steps", plan.steps);
    s.set("collective.step_latency_ns", b.latency_ns);
    s.set("collective.bytes", plan.workload.bytes);
    s.set("collective.sent_bytes_per_rank", *std::max_element(plan.sent_bytes.begin(), plan.sent_bytes.end()));
    s.set("collective.textbook_bytes_per_rank",
          textbook_bytes_per_rank(plan.workload.op, plan.ranks, plan.workload.bytes));
    s.set("collective.wire_bytes_per_rank", b.wire_bytes);
    s.set("collective.rank_bandwidth_gbps", b.rank_bandwidth_gbps);
    s.set("collective.bandwidth_ns", b.bandwidth_ns);
    s.set("collective.bound_ns", b.bound_ns);
    s.set("collective.efficiency", total_ns > 0 ? b.bound_ns / total_ns : 0.0);
}

std::string collective_summary(const CollectivePlan& plan, const ChipParams& chip, double total_ns) {
    const AlphaBetaBound b = alpha_beta_bound(plan, chip);
    return fmt::format(
        "  collective   {} {} over {} ranks, {} steps, {} slices per chunk on {} copy + {} reduce cores; "
        "alpha-beta bound {:.1f} us = {:.1f}% of the time\n",
        to_string(plan.workload.op), to_string(plan.workload.algorithm), plan.ranks, plan.steps, plan.slices,
        plan.senders, plan.reducers, b.bound_ns / 1000, total_ns > 0 ? 100 * b.bound_ns / total_ns : 0.0);
}

}  // namespace npusim::collective
