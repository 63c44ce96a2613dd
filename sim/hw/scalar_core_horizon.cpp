// ScalarCore::post_bound: how soon the die can next post a write to
// another die, from what is dispatched and what waits for what.
#include <algorithm>
#include <cmath>
#include <functional>

#include "hw/scalar_core.hpp"

namespace npusim {

std::uint64_t ScalarCore::task_floor_ps(std::uint32_t task) const {
    const PostHorizon& h = *horizon_;
    if (h.flags[task] & PostHorizon::rows_dependent) {
        // A MatMul with no rows on this rank runs no tile (CubeCore::plan).
        const Task& t = ctx_.stream.tasks[task];
        const double rows =
            static_cast<double>(t.params.m) * valid_row_share(t.params, ctx_.stream.row_tables, ctx_.place.rank);
        if (std::llround(rows) == 0 && t.core_type != CoreType::scalar)
            return std::uint64_t{h.start_ns[t.core_type == CoreType::cube ? 0 : 1]} * 1000;
    }
    return std::uint64_t{h.floor_ns[task]} * 1000;
}

std::uint64_t ScalarCore::post_bound(std::uint64_t base, std::uint64_t cap, std::uint64_t below,
                                     HorizonScratch& s) const {
    if (!horizon_ || posting_in_flight_ > 0) return base;
    const PostHorizon& h = *horizon_;
    s.begin(events_.size(), streams_.size());
    const auto type_of = [](CoreType t) { return t == CoreType::cube ? 0 : t == CoreType::vector ? 1 : -1; };
    const auto signals_of = [&](std::uint32_t b, std::uint32_t e, std::uint64_t end, std::uint64_t work, int type,
                                int core) {
        for (std::uint32_t i = b; i < e; ++i)
            if (!events_[signals_[i]].fired) s.add(signals_[i], end, work, type, core);
    };
    // Dispatched, not finished: each ends no sooner than its dispatch + its
    // floor, on the core it went to.
    const auto in_flight = [&](const Running& r, int type, int core) {
        const std::uint64_t end = std::max(base, ctx_.timing[r.task].dispatch_ps + task_floor_ps(r.task));
        signals_of(r.signal_begin, r.signal_end, end, end - base, type, core);
    };
    for (int ti = 0; ti < 2; ++ti)
        for (std::size_t c = 0; c < queues_[ti].size(); ++c) {
            const CoreQueue& q = queues_[ti][c];
            for (std::uint32_t k = 0; k < q.size; ++k)
                in_flight(q.ring[(q.front + k) % queue_capacity_], ti, static_cast<int>(c));
        }
    for (std::size_t slot = 0; slot < slot_busy_.size(); ++slot)
        if (slot_busy_[slot]) {
            const AiCore* core = slot_core_[slot];
            in_flight(slot_running_[slot], core ? type_of(core->type()) : -1, core ? core->index() : -1);
        }
    const double cores[2] = {static_cast<double>(std::max<std::size_t>(1, cube_.size())),
                             static_cast<double>(std::max<std::size_t>(1, vector_.size()))};
    // An event that has not fired fires no sooner than the first of the
    // tasks that can still signal it ends; when it needs every one of them,
    // no sooner than their floors spread over the cores they can run on. Tasks not
    // reached (their stream starts at `cap` or later) end after `cap`.
    const auto fires = [&](EventIndex e) -> std::uint64_t {
        const EventState& ev = events_[e];
        if (ev.fired || h.unordered[e]) return base;
        const std::uint32_t needed = ev.count - ev.signals;
        if (!s.seen(e) || s.signallers[e] < needed) return cap;
        std::uint64_t t = s.min_end[e];
        if (s.signallers[e] == needed)
            for (int ti = 0; ti < 2; ++ti) t = std::max(t, base + s.spread_ps(e, ti, cores[ti]));
        return std::min(t, cap);
    };
    // The tasks not dispatched, in task order (every event's signallers
    // before its waiters), each stream in its own order.
    std::vector<std::size_t>& cursor = s.cursor;
    for (std::uint32_t st = 0; st < streams_.size(); ++st) {
        s.stream_start[st] = base;
        cursor[st] = streams_[st].head;
        if (cursor[st] < streams_[st].end) s.heads.emplace_back(descs_[cursor[st]].task, st);
    }
    std::make_heap(s.heads.begin(), s.heads.end(), std::greater<>());
    std::uint64_t bound = cap;
    while (!s.heads.empty()) {
        std::pop_heap(s.heads.begin(), s.heads.end(), std::greater<>());
        const std::uint32_t task = s.heads.back().first, st = s.heads.back().second;
        s.heads.pop_back();
        const Desc& d = descs_[cursor[st]];
        // Dispatched no sooner than the descriptor before it on its stream.
        std::uint64_t start = s.stream_start[st];
        for (std::uint32_t w = d.wait_begin; w < d.wait_end && start < cap; ++w)
            start = std::max(start, fires(waits_[w]));
        if (start >= cap) continue;  // the rest of this stream too
        if (posts(task)) {
            bound = std::min(bound, start);
            if (bound < below) return bound;
        }
        const std::uint64_t floor = task_floor_ps(task);
        signals_of(d.signal_begin, d.signal_end, start + floor, floor, type_of(d.type), d.core);
        s.stream_start[st] = start;
        if (++cursor[st] < streams_[st].end) {
            s.heads.emplace_back(descs_[cursor[st]].task, st);
            std::push_heap(s.heads.begin(), s.heads.end(), std::greater<>());
        }
    }
    return bound;
}

}  // namespace npusim
