#include "hw/op_profile.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <string>
#include <set>

#include <nlohmann/json.hpp>

#include "stats/stats.hpp"

namespace npusim {

double task_flops(const Task& t, double rows_share) {
    const KernelParams& p = t.params;
    const auto rows = [&](std::uint64_t n) { return std::llround(static_cast<double>(n) * rows_share); };
    switch (t.kernel) {
        case Kernel::matmul:
            return 2.0 * static_cast<double>(rows(p.m)) * static_cast<double>(p.n) * static_cast<double>(p.k);
        case Kernel::vector:
            return static_cast<double>(p.bytes) / dtype_bytes(p.dtype) * rows_share;
        default: return 0;
    }
}

namespace {

struct OpRow {
    std::uint64_t start = UINT64_MAX, end = 0;
    std::uint64_t tasks = 0, busy = 0, compute = 0, transfer = 0, wait = 0, bytes = 0;
    double flops = 0;
    std::set<std::pair<int, int>> cores;  // (core type, index)
    std::array<std::uint64_t, kBoundByCount> by_bound{};  // task time by what held it
};

// What bound an op, from its tasks' pipe times: `sync` when its cores sat
// idle for over half of its span and its tasks spent longer waiting on
// events inside that span than they ran (its inputs set its pace);
// `latency` when no pipe was busy for half of the tasks' run (start-up,
// fill and drain, tier latency); else `memory` or `compute`, whichever
// pipe class was busier.
const char* bound(const OpRow& r) {
    const double capacity = static_cast<double>(r.end - r.start) * static_cast<double>(r.cores.size());
    if (2.0 * static_cast<double>(r.busy) < capacity && r.wait > r.busy) return "sync";
    if (2 * std::max(r.compute, r.transfer) < r.busy) return "latency";
    return r.transfer > r.compute ? "memory" : "compute";
}

// The resource that held the op's tasks longest (hw/bound_by.hpp); a
// `sync`-bound op waited on its inputs instead.
std::string resource(const OpRow& r) {
    if (std::string(bound(r)) == "sync") return "sync wait";
    std::size_t best = 0;
    for (std::size_t b = 1; b < r.by_bound.size(); ++b)
        if (r.by_bound[b] > r.by_bound[best]) best = b;
    return r.by_bound[best] ? to_string(static_cast<BoundBy>(best)) : "none";
}

}  // namespace

void report_ops(Stats& s, const SimContext& ctx) {
    const TaskStream& ts = ctx.stream;
    // Rows by interned op name; a task without one counts under its kernel
    // (after the names, one row per kernel).
    std::vector<OpRow> by_index(ts.names.size() + kKernels);
    auto row_of = [&](const Task& t) -> OpRow& {
        return by_index[t.op ? t.op : ts.names.size() + static_cast<std::size_t>(t.kernel)];
    };
    for (std::size_t i = 0; i < ts.tasks.size(); ++i) {
        const Task& t = ts.tasks[i];
        const TaskTiming& tm = ctx.timing[i];
        if (!tm.done) continue;
        OpRow& r = row_of(t);
        r.start = std::min(r.start, tm.start_ps);
        r.end = std::max(r.end, tm.end_ps);
        ++r.tasks;
        r.busy += tm.end_ps - tm.start_ps;
        r.compute += tm.compute_ps;
        r.transfer += tm.transfer_ps;
        r.bytes += tm.bytes;
        r.flops += task_flops(t, t.params.rows_table ? valid_row_share(t.params, ts.row_tables, ctx.place.rank) : 1.0);
        r.by_bound[static_cast<std::size_t>(tm.bound)] += tm.end_ps - tm.start_ps;
        r.cores.emplace(static_cast<int>(t.core_type), t.core_type == CoreType::scalar ? 0 : tm.core);
    }
    // Event waits inside each op's span (waits before it began are the
    // dataflow's order, not a stretch of the op).
    for (std::size_t i = 0; i < ts.tasks.size(); ++i) {
        const Task& t = ts.tasks[i];
        const TaskTiming& tm = ctx.timing[i];
        if (!tm.done || tm.released_ps <= tm.head_ps) continue;
        OpRow& r = row_of(t);
        const std::uint64_t from = std::max(tm.head_ps, r.start), to = std::min(tm.released_ps, r.end);
        r.wait += to > from ? to - from : 0;
    }
    // Longest busy time first, then by name: the same order whatever order
    // the names were interned in.
    std::map<std::string, const OpRow*> named;
    for (std::size_t k = 0; k < by_index.size(); ++k) {
        if (by_index[k].tasks == 0) continue;
        const std::string name = k < ts.names.size() ? ts.names[k] : to_string(static_cast<Kernel>(k - ts.names.size()));
        const OpRow*& slot = named[name];
        if (!slot) slot = &by_index[k];
        else {  // an op named like a kernel: one row
            OpRow& merged = by_index[k];
            const OpRow& other = *slot;
            merged.start = std::min(merged.start, other.start);
            merged.end = std::max(merged.end, other.end);
            merged.tasks += other.tasks;
            merged.busy += other.busy;
            merged.compute += other.compute;
            merged.transfer += other.transfer;
            merged.wait += other.wait;
            merged.bytes += other.bytes;
            merged.flops += other.flops;
            for (std::size_t b = 0; b < merged.by_bound.size(); ++b) merged.by_bound[b] += other.by_bound[b];
            merged.cores.insert(other.cores.begin(), other.cores.end());
            slot = &merged;
        }
    }
    std::vector<std::pair<std::string, const OpRow*>> order(named.begin(), named.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->busy > b.second->busy; });
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; };
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& [name, r] : order)
        ops.push_back({{"name", name},
                       {"start_ns", ns(r->start)},
                       {"end_ns", ns(r->end)},
                       {"tasks", r->tasks},
                       {"cores", r->cores.size()},
                       {"busy_ns", ns(r->busy)},
                       {"compute_ns", ns(r->compute)},
                       {"transfer_ns", ns(r->transfer)},
                       {"event_wait_ns", ns(r->wait)},
                       {"bytes", r->bytes},
                       {"flops", static_cast<std::uint64_t>(std::llround(r->flops))},  // a count
                       {"bound", bound(*r)},
                       {"resource", resource(*r)}});
    s.set_json("ops", ops.dump());

    // The chip's roofs: every Cube core doing a fractal MAC per cycle (two
    // FLOPs each), every Vector lane an op per cycle, and the peak GM rates.
    const ChipParams& c = ctx.chip;
    const double hz = c.clock_ghz * 1e9;
    const nlohmann::json roof = {
        {"cube_flops_per_s", 2.0 * c.cube.count * c.cube.shape_m * c.cube.shape_k * c.cube.shape_n * hz},
        {"vector_flops_per_s", c.vector.count * (c.vector.repeat_bytes / 2.0) * hz},
        {"hbm_bytes_per_s", c.hbm.bandwidth_gbps * 1e9},
        {"l2_bytes_per_s", c.l2.bandwidth_gbps * 1e9}};
    s.set_json("roofline", roof.dump());
}

}  // namespace npusim
