#include "hw/scalar_core.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trace/trace_writer.hpp"

namespace npusim {

ScalarCore::ScalarCore(sc_core::sc_module_name name, SimContext& ctx)
    : sc_core::sc_module(name),
      ctx_(ctx),
      free_cores_(2),
      streams_(ctx.stream.streams.size()),
      events_(ctx.stream.events.size()),
      slot_busy_(static_cast<std::size_t>(ctx.chip.scalar.count), false),
      slot_core_(static_cast<std::size_t>(ctx.chip.scalar.count), nullptr),
      slot_tid_(static_cast<std::size_t>(ctx.chip.scalar.count), 0),
      agenda_(wake_ev_) {
    SC_HAS_PROCESS(ScalarCore);
    SC_METHOD(wake);
    sensitive << wake_ev_;
    dont_initialize();
    for (std::uint32_t i = 0; i < ctx_.stream.tasks.size(); ++i) streams_[ctx_.stream.tasks[i].stream].tasks.push_back(i);
    if (ctx_.tracing)
        for (std::size_t s = 0; s < slot_tid_.size(); ++s) {
            slot_tid_[s] = ctx_.next_tid++;
            ctx_.trace->thread(ctx_.trace_pid, slot_tid_[s], fmt::format("scalar{}", s), slot_tid_[s]);
        }
    // Kick off at time 0 once the simulation starts.
    agenda_.at(0, Action{UINT32_MAX, 0, false});
}

void ScalarCore::attach_cores(std::vector<AiCore*> cube, std::vector<AiCore*> vector) {
    cube_ = std::move(cube);
    vector_ = std::move(vector);
    for (std::size_t i = 0; i < cube_.size(); ++i) free_cores_[0].insert(static_cast<int>(i));
    for (std::size_t i = 0; i < vector_.size(); ++i) free_cores_[1].insert(static_cast<int>(i));
}

void ScalarCore::advance_head(std::uint32_t s) {
    Stream& st = streams_[s];
    if (st.head >= st.tasks.size()) return;
    const std::uint32_t t = st.tasks[st.head];
    const Task& task = ctx_.stream.tasks[t];
    ctx_.timing[t].head_ps = now_ps();
    st.pending_waits = 0;
    std::uint64_t released = now_ps();
    for (EventIndex e : task.wait) {
        if (events_[e].fired) {
            released = std::max(released, events_[e].fired_ps);
        } else {
            ++st.pending_waits;
            events_[e].waiting_streams.push_back(s);
        }
    }
    if (st.pending_waits == 0) {
        ctx_.timing[t].released_ps = released;
        ready_.emplace(-task.priority, ready_seq_++, s);
    }
}

bool ScalarCore::claim_core(const Task& t, AiCore*& core) {
    core = nullptr;
    if (t.core_type == CoreType::scalar) return true;
    const int type = t.core_type == CoreType::cube ? 0 : 1;
    std::set<int>& free = free_cores_[type];
    if (free.empty()) return false;
    int idx = *free.begin();
    if (t.core >= 0) {
        if (!free.count(t.core)) return false;
        idx = t.core;
    }
    free.erase(idx);
    core = (type == 0 ? cube_ : vector_)[static_cast<std::size_t>(idx)];
    return true;
}

void ScalarCore::try_dispatch() {
    for (std::size_t slot = 0; slot < slot_busy_.size(); ++slot) {
        if (slot_busy_[slot]) continue;
        // The first ready stream whose head can get a core.
        auto it = ready_.begin();
        AiCore* core = nullptr;
        for (; it != ready_.end(); ++it) {
            const Stream& st = streams_[std::get<2>(*it)];
            if (claim_core(ctx_.stream.tasks[st.tasks[st.head]], core)) break;
        }
        if (it == ready_.end()) return;
        const std::uint32_t s = std::get<2>(*it);
        ready_.erase(it);
        const std::uint32_t t = streams_[s].tasks[streams_[s].head++];
        const Task& task = ctx_.stream.tasks[t];
        slot_busy_[slot] = true;
        slot_core_[slot] = core;
        ++dispatched_;
        std::uint64_t cycles = static_cast<std::uint64_t>(ctx_.chip.scalar.dispatch_cycles);
        if (task.core_type == CoreType::scalar) {
            ctx_.timing[t].start_ps = now_ps();
            ctx_.timing[t].trace_tid = slot_tid_[slot];
            cycles += task.params.cycles;
        }
        const std::uint64_t dur = ctx_.cycles_to_ps(static_cast<double>(cycles));
        busy_ps_ += dur;
        if (ctx_.tracing)
            ctx_.trace->complete(ctx_.trace_pid, slot_tid_[slot], fmt::format("dispatch {}", task.id), "dispatch",
                                 now_ps(), dur, fmt::format(R"("id":"{}")", json_escape(task.id)));
        agenda_.at(now_ps() + dur, Action{t, static_cast<std::uint16_t>(slot), task.core_type == CoreType::scalar});
        advance_head(s);
    }
}

void ScalarCore::wake() {
    agenda_.run_due([this](const Action& a) {
        if (a.task == UINT32_MAX) {  // start of simulation
            for (std::uint32_t s = 0; s < streams_.size(); ++s) advance_head(s);
            return;
        }
        slot_busy_[a.slot] = false;
        if (a.scalar_work_done) {
            TaskTiming& tm = ctx_.timing[a.task];
            tm.end_ps = now_ps();
            tm.done = true;
            ++done_;
            emit_flows(a.task);
            signal(a.task);
        } else {
            AiCore* core = slot_core_[a.slot];
            core->start(a.task);
            emit_flows(a.task);
        }
    });
    try_dispatch();
}

void ScalarCore::task_finished(CoreType type, int core, std::uint32_t task) {
    free_cores_[type == CoreType::cube ? 0 : 1].insert(core);
    ++done_;
    signal(task);
    try_dispatch();
}

void ScalarCore::signal(std::uint32_t task) {
    for (EventIndex e : ctx_.stream.tasks[task].signal) {
        EventState& ev = events_[e];
        if (ev.fired) continue;  // extra signals after firing are harmless
        if (++ev.signals < ctx_.stream.events[e].count) continue;
        ev.fired = true;
        ev.fired_by = task;
        ev.fired_ps = now_ps();
        for (std::uint32_t s : ev.waiting_streams) {
            Stream& st = streams_[s];
            if (--st.pending_waits == 0) {
                const std::uint32_t head = st.tasks[st.head];
                ctx_.timing[head].released_ps = now_ps();
                ready_.emplace(-ctx_.stream.tasks[head].priority, ready_seq_++, s);
            }
        }
        ev.waiting_streams.clear();
        ev.waiting_streams.shrink_to_fit();
    }
}

void ScalarCore::emit_flows(std::uint32_t task) {
    if (!ctx_.tracing) return;
    const TaskTiming& to = ctx_.timing[task];
    for (EventIndex e : ctx_.stream.tasks[task].wait) {
        const EventState& ev = events_[e];
        const TaskTiming& from = ctx_.timing[ev.fired_by];
        // Inside the signalling slice, at its last picosecond.
        const std::uint64_t ts = from.end_ps > from.start_ps ? from.end_ps - 1 : from.end_ps;
        ctx_.trace->flow(next_flow_id_++, ctx_.trace_pid, from.trace_tid, ts, ctx_.trace_pid, to.trace_tid, to.start_ps);
    }
}

std::string ScalarCore::deadlock_report() const {
    if (done_ == ctx_.stream.tasks.size()) return {};
    const TaskStream& ts = ctx_.stream;
    const std::uint64_t stuck = ts.tasks.size() - done_;
    for (std::uint32_t s = 0; s < streams_.size(); ++s) {
        const Stream& st = streams_[s];
        if (st.head >= st.tasks.size() || st.pending_waits == 0) continue;
        const Task& t = ts.tasks[st.tasks[st.head]];
        for (EventIndex e : t.wait) {
            if (events_[e].fired) continue;
            // Who could still signal it?
            std::string signallers;
            int listed = 0;
            for (const Task& other : ts.tasks) {
                if (std::find(other.signal.begin(), other.signal.end(), e) == other.signal.end()) continue;
                if (listed++ < 3) signallers += (signallers.empty() ? "" : ", ") + fmt::format("'{}'", other.id);
            }
            const std::string who = listed == 0 ? "no task signals it"
                                                : fmt::format("signalled by {}{}, which never completed enough", signallers,
                                                              listed > 3 ? " ..." : "");
            return fmt::format("deadlock: task '{}' ({}:{}, stream '{}') waits for event '{}' ({} of {} signals; {}); {} task(s) never ran",
                               t.id, ts.file, t.line, ts.streams[s], ts.events[e].id, events_[e].signals,
                               ts.events[e].count, who, stuck);
        }
    }
    return fmt::format("deadlock: {} task(s) never ran", stuck);
}

}  // namespace npusim
