// What a System reports after its run (docs/statistics.md): every die's
// figures merged, the per-rank lines, the programs' phases over every rank,
// the mesh and the functional memory.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/critical_path.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "stats/stats_schema.hpp"
#include "system/system.hpp"
#include "tasks/stream_footprint.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {

// The programs' phase stamps of every die, as one profile over the ranks.
PhaseProfile all_phases(const System& sys) {
    PhaseProfile all(sys.ranks(), sys.die(0).vector_cores());
    for (int r = 0; r < sys.ranks(); ++r)
        if (const ProgramRuntime* p = sys.die(r).programs()) all.absorb(p->profile(), 0, r);
    return all;
}

// Each op over the ranks (docs/statistics.md, rank_ops): its earliest start
// and latest end on any rank, and its mean span per rank (first task start
// to last task end on that rank) — the per-op view of a whole system.
std::string rank_ops_json(const System& sys) {
    struct Op {
        std::uint64_t start = UINT64_MAX, end = 0;
        double span_sum = 0;
        int ranks = 0;
        std::uint64_t tasks = 0;
    };
    std::map<std::string, Op> ops;
    std::vector<std::string> order;
    for (int r = 0; r < sys.ranks(); ++r) {
        const SimContext& c = sys.die(r).context();
        std::map<NameIndex, std::pair<std::uint64_t, std::uint64_t>> spans;
        for (std::size_t i = 0; i < c.stream.tasks.size(); ++i) {
            const TaskTiming& t = c.timing[i];
            if (!t.done) continue;
            auto [it, fresh] = spans.emplace(c.stream.tasks[i].op, std::make_pair(t.start_ps, t.end_ps));
            if (!fresh) {
                it->second.first = std::min(it->second.first, t.start_ps);
                it->second.second = std::max(it->second.second, t.end_ps);
            }
        }
        for (const auto& [name, span] : spans) {
            const std::string& n = c.stream.name(name);
            auto [it, fresh] = ops.emplace(n, Op{});
            if (fresh) order.push_back(n);
            Op& o = it->second;
            o.start = std::min(o.start, span.first);
            o.end = std::max(o.end, span.second);
            o.span_sum += static_cast<double>(span.second - span.first);
            ++o.ranks;
        }
    }
    std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
        return ops[a].start != ops[b].start ? ops[a].start < ops[b].start : a < b;
    });
    std::string out = "[";
    for (const std::string& n : order) {
        const Op& o = ops[n];
        out += fmt::format(R"({}{{"name":"{}","ranks":{},"start_ns":{:.3f},"end_ns":{:.3f},"mean_ns":{:.3f}}})",
                           out.size() > 1 ? "," : "", json_escape(n), o.ranks, static_cast<double>(o.start) / 1000.0,
                           static_cast<double>(o.end) / 1000.0, o.span_sum / o.ranks / 1000.0);
    }
    return out + "]";
}

// The dies' values of each key merged by its schema rule (stats_schema.hpp):
// sums, maxima and means over the ranks that report the key.
// Keys the System computes for itself (`whole`) are left to it.
class RankMerger {
public:
    void add(const std::string& key, const Stats::Value& v) {
        switch (stat_spec(key).merge) {
            case RankMerge::sum: ints_[key] += as<std::int64_t>(key, v); break;
            case RankMerge::max: {
                const std::int64_t x = as<std::int64_t>(key, v);
                const auto [it, fresh] = ints_.emplace(key, x);
                if (!fresh) it->second = std::max(it->second, x);
                break;
            }
            case RankMerge::mean: {
                auto& acc = doubles_[key];
                acc.first += as<double>(key, v);
                ++acc.second;
                break;
            }
            case RankMerge::last_rank:
            case RankMerge::whole: break;
        }
    }
    void report(Stats& s) const {
        for (const auto& [key, v] : ints_) s.set(key, v);
        for (const auto& [key, acc] : doubles_) s.set(key, acc.first / acc.second);
    }

private:
    // A value of the type its rule merges: a row whose rule does not fit the
    // value the writer sets is a programming error.
    template <class T>
    static const T& as(const std::string& key, const Stats::Value& v) {
        if (const T* x = std::get_if<T>(&v)) return *x;
        throw std::logic_error("stats key '" + key + "': its rank merge rule '" + to_string(stat_spec(key).merge) +
                               "' does not fit its value (sim/stats/stats_keys*.cpp)");
    }

    std::map<std::string, std::int64_t> ints_;
    std::map<std::string, std::pair<double, int>> doubles_;  // sum and how many ranks reported it
};

bool any_programs(const System& sys) {
    for (int r = 0; r < sys.ranks(); ++r)
        if (sys.die(r).programs()) return true;
    return false;
}

}  // namespace

void System::report_events(Stats& s) const {
    s.set("engine.events", events_.total());
    for (std::size_t i = 0; i < kEventKinds; ++i)
        s.set(fmt::format("engine.events_by.{}", kEventKindNames[i]), events_.by[i]);
}

void System::collect(Stats& s) const {
    if (ranks() == 1) {
        dies_[0]->collect(s);
        if (any_programs(*this)) {
            mesh_->report(s, RunSpan{end_ps(), chip_.ps_per_cycle()});
            memory_->report(s);
            report_critical_path(s, {&dies_[0]->context()}, critical_path());
            report_events(s);
        }
        return;
    }
    const std::uint64_t end = end_ps();
    const RunSpan span{end, chip_.ps_per_cycle()};
    RankMerger merged;
    const int last = last_rank();
    std::uint64_t min_rank_end = UINT64_MAX, sum_rank_end = 0;
    std::map<const TaskStream*, std::uint64_t> addressed;  // ranks share compiled streams
    for (const auto& d : dies_) {
        const TaskStream* stream = &d->context().stream;
        if (!addressed.count(stream)) addressed[stream] = gm_addressed_bytes(*stream);
        Stats one;
        d->collect(one, end, addressed[stream]);
        for (const auto& [key, v] : one.values()) merged.add(key, v);
        if (d->rank() == last)
            for (const auto& [key, text] : one.json_values())
                if (stat_spec(key).merge == RankMerge::last_rank) s.set_json(key, text);
        const std::string r = fmt::format("ranks.r{}.", d->rank());
        s.set(r + "total_ns", static_cast<double>(d->end_ps()) / 1000.0);
        s.set(r + "tasks", static_cast<std::uint64_t>(d->context().stream.tasks.size()));
        // A die without Cube (Vector) cores reports no units.cube.* (units.vector.*).
        s.set(r + "cube_utilization", one.number_or("units.cube.utilization", 0));
        s.set(r + "vector_utilization", one.number_or("units.vector.utilization", 0));
        s.set(r + "hbm_bytes", static_cast<std::uint64_t>(one.number("memory.hbm.read_bytes") + one.number("memory.hbm.write_bytes")));
        s.set(r + "hbm_addressed_bytes", static_cast<std::uint64_t>(one.number("memory.hbm.addressed_bytes")));
        min_rank_end = std::min(min_rank_end, d->end_ps());
        sum_rank_end += d->end_ps();
    }
    merged.report(s);
    // What the whole system did, not a sum over ranks.
    s.set("total_ps", end);
    s.set("total_ns", static_cast<double>(end) / 1000.0);
    s.set("total_cycles", span.cycles(static_cast<double>(end)));
    s.set("clock_ghz", chip_.clock_ghz);
    s.set("ranks.count", ranks());
    s.set("ranks.last", last);
    s.set("ranks.end_min_ns", static_cast<double>(min_rank_end) / 1000.0);
    s.set("ranks.end_mean_ns", static_cast<double>(sum_rank_end) / 1000.0 / ranks());
    if (any_programs(*this)) all_phases(*this).report(s, "phases");
    s.set_json("rank_ops", rank_ops_json(*this));
    std::vector<const SimContext*> contexts;
    for (int r = 0; r < ranks(); ++r) contexts.push_back(&die(r).context());
    report_critical_path(s, contexts, critical_path());
    mesh_->report(s, span);
    memory_->report(s);
    report_events(s);
    s.set("engine.windows", windows());
}

std::string System::phase_csv() const { return all_phases(*this).csv(); }

std::vector<PathSegment> System::critical_path() const {
    std::vector<std::vector<PathSegment>> pieces;  // last piece first
    int rank = last_rank();
    std::uint32_t from = UINT32_MAX;
    std::uint64_t until = ~0ULL;
    std::size_t guard = 0;
    for (int r = 0; r < ranks(); ++r) guard += die(r).context().stream.tasks.size();
    for (std::size_t step = 0; step <= guard; ++step) {
        CrossRank leave;
        std::vector<PathSegment> piece = die(rank).critical_path_from(from, until, &leave);
        if (leave.rank < 0) {
            pieces.push_back(std::move(piece));
            break;
        }
        // The flag or data on its way: from the writer's task (or the time
        // it landed, for a writer still running then) to the release.
        const TaskTiming& wt = die(leave.rank).context().timing[leave.task];
        const std::uint64_t sent = std::min(wt.end_ps, leave.at_ps);
        const std::uint32_t waiter = piece.empty() ? UINT32_MAX : piece.front().task;
        PathSegment mesh{waiter, PathKind::mesh, sent, leave.at_ps, {}, "memory", {}, {}, rank};
        mesh.after = fmt::format("write of rank {} task {} landed", leave.rank,
                                 die(leave.rank).context().stream.tasks[leave.task].id);
        piece.insert(piece.begin(), mesh);
        pieces.push_back(std::move(piece));
        rank = leave.rank;
        from = leave.task;
        until = sent;
    }
    std::vector<PathSegment> path;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it)
        for (PathSegment& p : *it)
            if (p.end_ps > p.start_ps) path.push_back(std::move(p));
    return path;
}

void System::trace_critical_path() {
    if (ranks() == 1) {
        die(0).trace_critical_path();
        return;
    }
    // A process of its own after the dies' (pid = rank + 1), whichever
    // ranks are traced: the path crosses ranks, each slice names its rank.
    TraceWriter* trace = trace_;
    if (!trace) return;
    const int pid = ranks() + 1;
    trace->process(pid, "critical path (all ranks)", -1);
    trace->thread(pid, 1, "critical path", -1);
    for (const PathSegment& p : critical_path())
        trace_path_segment(*trace, pid, 1, die(p.rank).context(), p, fmt::format("r{} ", p.rank));
}

void System::trace_fabric() {
    TraceWriter* trace = trace_;
    if (!trace) return;
    mesh_->trace_link_counters();
    // Ids apart from the dies' own (rank << 40 onwards): bit 62 set.
    std::uint64_t id = std::uint64_t{1} << 62;
    for (const int rank : traced_) {
        const SimContext& to = die(rank).context();
        for (std::uint32_t i = 0; i < to.stream.tasks.size(); ++i) {
            const TaskTiming& w = to.timing[i];
            if (!w.done || w.mem_rank < 0 || w.mem_task == UINT32_MAX || !traced(w.mem_rank)) continue;
            const SimContext& from = die(w.mem_rank).context();
            const TaskTiming& f = from.timing[w.mem_task];
            if (!f.done) continue;
            const bool by_op = trace->filters_ops();
            const std::string from_op = by_op ? from.stream.label(from.stream.tasks[w.mem_task]) : std::string(),
                              to_op = by_op ? to.stream.label(to.stream.tasks[i]) : std::string();
            trace->flow(id++, {from.trace_pid, f.trace_tid, f.start_ps, f.end_ps, from_op},
                        {to.trace_pid, w.trace_tid, w.start_ps, w.end_ps, to_op}, "landed", "memory");
        }
    }
}

}  // namespace npusim
