#include "hw/critical_path.hpp"

#include <map>

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chip/timing.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

const char* to_string(PathKind k) {
    switch (k) {
        case PathKind::compute: return "compute";
        case PathKind::data_movement: return "data_movement";
        case PathKind::dispatch: return "dispatch";
        case PathKind::host: return "host";
        case PathKind::mesh: return "mesh";
        case PathKind::idle: return "idle";
        case PathKind::sync: return "sync";
    }
    return "?";
}

namespace {

// Segments are found from the end backwards; `add` keeps only those with a
// duration, and `after` says why the step found last had to wait for the
// one the walk goes to next.
class Walk {
public:
    explicit Walk(int rank = 0, std::uint64_t until = ~0ULL) : rank_(rank), until_(until) {}
    void add(std::uint32_t task, PathKind kind, std::uint64_t start, std::uint64_t end, const std::string& phase = {}) {
        end = std::min(end, until_);
        if (end <= start) return;
        // Waiting for dispatch, then dispatching: one segment.
        if (!segs_.empty() && segs_.back().task == task && segs_.back().kind == kind && segs_.back().start_ps == end &&
            segs_.back().phase == phase) {
            segs_.back().start_ps = start;
            return;
        }
        segs_.push_back(PathSegment{task, kind, start, end, {}, {}, {}, phase, rank_});
    }
    // Host time [start, end) of one thread, split by its stage spans (from
    // the end backwards, as the walk goes); time in no span is "idle" (the
    // thread waited for work from another host thread).
    void add_host(std::uint64_t start, std::uint64_t end, const std::vector<HostSpan>* spans) {
        if (end <= start) return;
        if (!spans) {
            segs_.push_back(PathSegment{UINT32_MAX, PathKind::host, start, end, {}, {}, {}, {}, rank_});
            return;
        }
        auto it = std::lower_bound(spans->begin(), spans->end(), end,
                                   [](const HostSpan& h, std::uint64_t t) { return h.start_ps < t; });
        std::uint64_t at = end;
        while (at > start) {
            if (it == spans->begin()) {
                host(start, at, "idle");
                break;
            }
            const HostSpan& h = *--it;
            if (h.end_ps <= start) {
                host(start, at, "idle");
                break;
            }
            if (h.end_ps < at) host(h.end_ps, at, "idle");
            const std::uint64_t lo = std::max(h.start_ps, start), hi = std::min(h.end_ps, at);
            if (hi > lo) host(lo, hi, h.stage);
            at = std::min(at, lo);
        }
    }
    void after(std::string why) {
        if (!segs_.empty() && segs_.back().after.empty()) segs_.back().after = std::move(why);
    }
    void waited(std::uint32_t task, std::string event) {
        if (!segs_.empty() && segs_.back().task == task) segs_.back().waited = std::move(event);
    }
    std::vector<PathSegment> done() {
        std::reverse(segs_.begin(), segs_.end());
        return std::move(segs_);
    }

private:
    void host(std::uint64_t start, std::uint64_t end, const std::string& stage) {
        if (end <= start) return;
        if (!segs_.empty() && segs_.back().kind == PathKind::host && segs_.back().task == UINT32_MAX &&
            segs_.back().stage == stage && segs_.back().start_ps == end) {
            segs_.back().start_ps = start;
            return;
        }
        segs_.push_back(PathSegment{UINT32_MAX, PathKind::host, start, end, {}, {}, stage, {}, rank_});
    }
    std::vector<PathSegment> segs_;
    int rank_;
    std::uint64_t until_;
};

PathKind run_kind(const TaskTiming& t) { return t.transfer_ps > t.compute_ps ? PathKind::data_movement : PathKind::compute; }

// A program task's run, phase by phase (its timestamps): in each phase the
// time its core waited on the mesh (flags, landings), in SyncAll and for its
// own DataCopies, the rest its own work. Added last first, as the walk goes.
void add_program_task(Walk& walk, std::uint32_t task, const TaskTiming& t, const std::vector<PhaseSpan>& spans,
                      const ProgramRuntime& rt) {
    std::uint64_t end = t.end_ps;
    const auto name = [&](int phase) { return rt.profile().phases()[static_cast<std::size_t>(phase)]; };
    std::size_t i = spans.size();
    if (i > 0 && spans.back().end_ps < end) walk.add(task, PathKind::compute, spans.back().end_ps, end, "end");
    while (i > 0) {
        const PhaseSpan& p = spans[--i];
        const std::uint64_t begin = i > 0 ? spans[i - 1].end_ps : t.start_ps;
        if (p.end_ps < begin) continue;
        const std::uint64_t dur = p.end_ps - begin, sync = std::min(p.sync_ps, dur), mesh = std::min(p.mesh_ps, dur - sync);
        const std::uint64_t mem = std::min(p.memory_ps, dur - sync - mesh);
        const std::string phase = name(p.phase);
        std::uint64_t at = p.end_ps;
        walk.add(task, PathKind::sync, at - sync, at, phase);
        at -= sync;
        walk.add(task, PathKind::mesh, at - mesh, at, phase);
        at -= mesh;
        walk.add(task, PathKind::data_movement, at - mem, at, phase);
        at -= mem;
        walk.add(task, PathKind::compute, begin, at, phase);
    }
    if (spans.empty()) walk.add(task, PathKind::compute, t.start_ps, t.end_ps);
}

}  // namespace

std::vector<PathSegment> critical_path(const SimContext& ctx, const ScalarCore& scalar, const HostTail& tail) {
    return critical_path(PathWalk{ctx, scalar, nullptr, tail});
}

std::vector<PathSegment> critical_path(const PathWalk& w) {
    const SimContext& ctx = w.ctx;
    const ScalarCore& scalar = w.scalar;
    const HostTail& tail = w.tail;
    const auto& tasks = ctx.stream.tasks;
    const auto& timing = ctx.timing;
    const auto& events = scalar.events();
    const auto& gates = scalar.host_gates();
    Walk walk(ctx.place.rank, w.until_ps);
    std::uint64_t device_end = 0;
    std::uint32_t last = UINT32_MAX;
    for (std::uint32_t i = 0; i < tasks.size(); ++i)
        if (timing[i].done && (last == UINT32_MAX || timing[i].end_ps > device_end)) {
            device_end = timing[i].end_ps;
            last = i;
        }
    if (w.from != UINT32_MAX) {
        last = w.from;
        device_end = timing[last].end_ps;
    }
    // Each program task's phase spans, in order.
    std::map<std::uint32_t, std::vector<PhaseSpan>> phases;
    if (w.programs)
        for (const PhaseSpan& p : w.programs->spans()) phases[p.task].push_back(p);
    // The previous task of each task's stream (a task reaches its stream's
    // head when that one is dispatched).
    std::vector<std::uint32_t> prev_in_stream(tasks.size(), UINT32_MAX);
    {
        std::vector<std::uint32_t> tail_of(ctx.stream.streams.size(), UINT32_MAX);
        for (std::uint32_t i = 0; i < tasks.size(); ++i) {
            prev_in_stream[i] = tail_of[tasks[i].stream];
            tail_of[tasks[i].stream] = i;
        }
    }
    const std::uint64_t dispatch_ps = ctx.cycles_to_ps(static_cast<double>(timing::dispatch_cycles(ctx.chip)));
    auto id = [&](std::uint32_t t) { return tasks[t].id; };

    // Host work reaching back to the device task it followed (or to 0).
    // Returns the task to continue from, or UINT32_MAX.
    auto spans_of = [&](int thread) -> const std::vector<HostSpan>* {
        return thread >= 0 && static_cast<std::size_t>(thread) < tail.spans.size() ? &tail.spans[static_cast<std::size_t>(thread)]
                                                                                    : nullptr;
    };
    auto host_back = [&](std::uint64_t at, const HostGate& g) {
        const bool after = g.after_task != UINT32_MAX && timing[g.after_task].end_ps <= at;
        walk.add_host(after ? timing[g.after_task].end_ps : 0, at, spans_of(g.thread));
        if (after) walk.after("device task " + id(g.after_task));
        return after ? g.after_task : UINT32_MAX;
    };

    // The event that released a task (when it waited for one), as a note.
    auto note_release = [&](std::uint32_t t) {
        if (timing[t].released_ps <= timing[t].head_ps) return;
        for (EventIndex w : tasks[t].wait)
            if (events[w].fired && events[w].fired_ps == timing[t].released_ps) {
                walk.waited(t, ctx.stream.events[w].id);
                return;
            }
    };

    std::uint32_t task = last;
    if (tail.end_ps > device_end) {
        walk.add_host(device_end, tail.end_ps, spans_of(tail.end_thread));
        task = host_back(device_end, tail.gate);
    }
    // Each step moves back in time; the bound only guards a broken record.
    enum class At { end, dispatch } at = At::end;
    for (std::size_t guard = 0; task != UINT32_MAX && guard < 4 * tasks.size() + 8; ++guard) {
        const TaskTiming& t = timing[task];
        if (at == At::end) {
            const bool on_scalar = tasks[task].core_type == CoreType::scalar;  // dispatched and run there
            if (tasks[task].kernel == Kernel::program && w.programs) add_program_task(walk, task, t, phases[task], *w.programs);
            else walk.add(task, on_scalar ? PathKind::compute : run_kind(t), t.start_ps, t.end_ps);
            at = At::dispatch;
            if (on_scalar) continue;
            const std::uint32_t p = t.prev_on_core;
            if (p != UINT32_MAX && timing[p].end_ps == t.start_ps && t.start_ps > t.dispatch_ps + dispatch_ps) {
                // The core was busy: note the event that had released the task anyway.
                note_release(task);
                walk.after("core busy with " + id(p));
                task = p;
                at = At::end;
                continue;
            }
            walk.add(task, PathKind::dispatch, t.dispatch_ps, t.start_ps);
            continue;
        }
        // At its dispatch. An unpinned task waits for an idle core: ready
        // before the task before it on that core ended, it was late because
        // that core was busy (then for the scalar core's dispatch slot).
        if (const std::uint32_t p = t.prev_on_core;
            p != UINT32_MAX && tasks[task].core < 0 && timing[p].end_ps <= t.dispatch_ps &&
            timing[p].end_ps > std::max(t.released_ps, t.head_ps)) {
            walk.add(task, PathKind::dispatch, timing[p].end_ps, t.dispatch_ps);
            note_release(task);  // the event that had released it, behind the core's task
            walk.after("core busy with " + id(p));
            task = p;
            at = At::end;
            continue;
        }
        // Else first the scalar core or a core's queue, then what made it ready.
        walk.add(task, PathKind::dispatch, t.released_ps, t.dispatch_ps);
        at = At::end;
        EventIndex e = UINT32_MAX;  // the event that released it, if it waited
        if (t.released_ps > t.head_ps)
            for (EventIndex w : tasks[task].wait)
                if (events[w].fired && events[w].fired_ps == t.released_ps) {
                    e = w;
                    break;
                }
        if (e != UINT32_MAX) {
            walk.waited(task, ctx.stream.events[e].id);
            if (events[e].fired_by == UINT32_MAX) {  // the host released it
                walk.after("host");
                task = host_back(t.released_ps, e < gates.size() ? gates[e] : HostGate{});
                continue;
            }
            task = events[e].fired_by;
            walk.after("event " + ctx.stream.events[e].id + " set by " + id(task));
            continue;
        }
        // A memory wait released it: the data or flag a rank wrote landed
        // then. In a System the path goes on at the writer, on its rank.
        if (t.released_ps > t.head_ps && !tasks[task].wait_memory.empty()) {
            walk.waited(task, "memory");
            if (w.leave && t.mem_rank >= 0 && t.mem_task != UINT32_MAX) {
                *w.leave = CrossRank{t.mem_rank, t.mem_task, t.released_ps};
                break;
            }
            walk.add(task, PathKind::mesh, t.head_ps, t.released_ps);
            walk.after("memory wait (a flag landing from the mesh)");
        }
        // It reached its stream's head when the previous task was dispatched.
        const std::uint32_t prev = t.head_ps > 0 ? prev_in_stream[task] : UINT32_MAX;
        if (prev != UINT32_MAX) walk.after("stream order after " + id(prev));
        task = prev;
        at = At::dispatch;
    }
    std::vector<PathSegment> path = walk.done();
    if (w.leave && w.leave->rank >= 0) return path;  // the System goes on at the writer
    // Contiguous to 0 by construction; whatever a broken record leaves is idle.
    const std::uint64_t first = path.empty() ? 0 : path.front().start_ps;
    if (first > 0) path.insert(path.begin(), PathSegment{UINT32_MAX, PathKind::idle, 0, first, {}, {}, {}, {}, ctx.place.rank});
    return path;
}

// The resource a segment of the path spent its time on: a task's own
// (hw/bound_by.hpp) for its compute and data movement, else its kind's.
std::string segment_resource(const PathSegment& p, const SimContext& ctx) {
    switch (p.kind) {
        case PathKind::compute:
        case PathKind::data_movement: {
            const BoundBy b = p.task != UINT32_MAX ? ctx.timing[p.task].bound : BoundBy::none;
            return b == BoundBy::none ? std::string(to_string(p.kind)) : std::string(to_string(b));
        }
        case PathKind::sync: return "sync wait";
        default: return to_string(p.kind);  // dispatch, host, mesh, idle
    }
}

void report_critical_path(Stats& s, const SimContext& ctx, const std::vector<PathSegment>& path) {
    report_critical_path(s, std::vector<const SimContext*>{&ctx}, path);
}

void report_critical_path(Stats& s, const std::vector<const SimContext*>& contexts, const std::vector<PathSegment>& path) {
    // A long run's path has as many segments as tasks; the file keeps the
    // first ones and says how many it left out (by_kind covers them all).
    constexpr std::size_t kMaxSegments = 10000;
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; };
    std::array<std::uint64_t, 7> by_kind{};
    std::map<std::string, std::uint64_t> host_stages, by_resource;
    nlohmann::json segs = nlohmann::json::array();
    for (const PathSegment& p : path) {
        by_kind[static_cast<std::size_t>(p.kind)] += p.end_ps - p.start_ps;
        const SimContext& on = *contexts[contexts.size() > 1 ? static_cast<std::size_t>(p.rank) : 0];
        const std::string resource = segment_resource(p, on);
        by_resource[resource] += p.end_ps - p.start_ps;
        if (!p.stage.empty()) host_stages[p.stage] += p.end_ps - p.start_ps;
        if (segs.size() >= kMaxSegments) continue;
        nlohmann::json j = {{"kind", to_string(p.kind)}, {"resource", resource}, {"start_ns", ns(p.start_ps)}, {"end_ns", ns(p.end_ps)}};
        const SimContext& ctx = *contexts[contexts.size() > 1 ? static_cast<std::size_t>(p.rank) : 0];
        if (p.task != UINT32_MAX) {
            const Task& t = ctx.stream.tasks[p.task];
            j["task"] = t.id;
            j["op"] = ctx.stream.label(t);
        } else {
            j["task"] = nullptr;
            j["op"] = nullptr;
        }
        if (contexts.size() > 1) j["rank"] = p.rank;
        if (!p.phase.empty()) j["phase"] = p.phase;
        if (!p.after.empty()) j["after"] = p.after;
        if (!p.waited.empty()) j["waited"] = p.waited;
        if (!p.stage.empty()) j["stage"] = p.stage;
        segs.push_back(std::move(j));
    }
    nlohmann::json kinds = nlohmann::json::object();
    for (std::size_t k = 0; k < by_kind.size(); ++k)
        if (by_kind[k]) kinds[to_string(static_cast<PathKind>(k))] = ns(by_kind[k]);
    nlohmann::json resources = nlohmann::json::object();
    for (const auto& [r, ps] : by_resource) resources[r] = ns(ps);
    // The same, most first, each with its share and the key that sets it.
    std::vector<std::pair<std::uint64_t, std::string>> order;
    for (const auto& [r, ps] : by_resource) order.emplace_back(ps, r);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const double end_ps = path.empty() ? 0.0 : static_cast<double>(path.back().end_ps);
    nlohmann::json binds = nlohmann::json::array();
    for (const auto& [ps, r] : order)
        binds.push_back({{"resource", r}, {"ns", ns(ps)}, {"share", end_ps > 0 ? static_cast<double>(ps) / end_ps : 0.0},
                         {"key", resource_key(r)}});
    nlohmann::json cp = {{"total_ns", ns(path.empty() ? 0 : path.back().end_ps)},
                         {"by_kind", kinds},
                         {"by_resource", resources},
                         {"binds", binds},
                         {"segments", segs},
                         {"segments_omitted", path.size() - segs.size()}};
    if (contexts.size() > 1) {  // the ranks the path runs on, most time first (--trace-ranks critical)
        std::map<int, std::uint64_t> on_rank;
        for (const PathSegment& p : path)
            if (p.kind != PathKind::idle) on_rank[p.rank] += p.end_ps - p.start_ps;
        std::vector<std::pair<int, std::uint64_t>> by_time(on_rank.begin(), on_rank.end());
        std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& [rank, ps] : by_time) ranks.push_back({{"rank", rank}, {"ns", ns(ps)}});
        cp["ranks"] = ranks;
    }
    if (!host_stages.empty()) {
        nlohmann::json hs = nlohmann::json::object();
        for (const auto& [stage, ps] : host_stages) hs[stage] = ns(ps);
        cp["host_stages"] = hs;
    }
    s.set_json("critical_path", cp.dump());
}

void trace_critical_path(TraceWriter& trace, int pid, int tid, const SimContext& ctx,
                         const std::vector<PathSegment>& path) {
    trace.thread(pid, tid, "critical path", -1);
    for (const PathSegment& p : path) trace_path_segment(trace, pid, tid, ctx, p, "");
}

void trace_path_segment(TraceWriter& trace, int pid, int tid, const SimContext& ctx, const PathSegment& p,
                        const std::string& prefix) {
    std::string name = to_string(p.kind), args = fmt::format(R"("kind":"{}")", to_string(p.kind));
    if (p.task != UINT32_MAX) {
        const Task& t = ctx.stream.tasks[p.task];
        name = fmt::format("{} {}", ctx.stream.label(t), to_string(p.kind));
        args += fmt::format(R"(,"task":"{}")", json_escape(t.id));
    }
    if (!p.after.empty()) args += fmt::format(R"(,"after":"{}")", json_escape(p.after));
    if (!p.waited.empty()) args += fmt::format(R"(,"waited":"{}")", json_escape(p.waited));
    if (!p.phase.empty()) {
        name = fmt::format("{} {}", p.phase, to_string(p.kind));
        args += fmt::format(R"(,"phase":"{}")", json_escape(p.phase));
    }
    if (!p.stage.empty()) {
        name = "host " + p.stage;
        args += fmt::format(R"(,"stage":"{}")", json_escape(p.stage));
    }
    trace.complete(pid, tid, prefix + name, "critical_path", p.start_ps, p.end_ps - p.start_ps, args);
}

}  // namespace npusim
