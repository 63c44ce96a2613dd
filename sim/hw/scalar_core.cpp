#include "hw/scalar_core.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "chip/timing.hpp"
#include "hw/memory_system.hpp"
#include "hw/fabric.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

DescriptorTable::DescriptorTable(const TaskStream& ts) {
    // Stream-major packed descriptors: count per stream, then fill.
    const auto& tasks = ts.tasks;
    stream_begin.assign(ts.streams.size() + 1, 0);
    for (const Task& t : tasks) ++stream_begin[t.stream + 1];
    for (std::size_t s = 0; s < ts.streams.size(); ++s) stream_begin[s + 1] += stream_begin[s];
    std::vector<std::size_t> fill(stream_begin.begin(), stream_begin.end() - 1);
    descs.resize(tasks.size());
    std::size_t n_waits = 0, n_signals = 0;
    for (const Task& t : tasks) {
        n_waits += t.wait.size();
        n_signals += t.signal.size();
    }
    waits.reserve(n_waits);
    signals.reserve(n_signals);
    // Waits are appended per stream in stream order to keep them in step.
    std::vector<std::uint32_t> order(tasks.size());
    for (std::uint32_t i = 0; i < tasks.size(); ++i) order[fill[tasks[i].stream]++] = i;
    for (std::size_t d = 0; d < order.size(); ++d) {
        const Task& t = tasks[order[d]];
        Desc& desc = descs[d];
        desc.task = order[d];
        desc.priority = t.priority;
        desc.core = t.core;
        desc.type = t.core_type;
        desc.scalar_cycles = t.params.cycles;
        desc.wait_begin = static_cast<std::uint32_t>(waits.size());
        waits.insert(waits.end(), t.wait.begin(), t.wait.end());
        desc.wait_end = static_cast<std::uint32_t>(waits.size());
        desc.signal_begin = static_cast<std::uint32_t>(signals.size());
        signals.insert(signals.end(), t.signal.begin(), t.signal.end());
        desc.signal_end = static_cast<std::uint32_t>(signals.size());
    }
}

ScalarCore::ScalarCore(sc_core::sc_module_name name, SimContext& ctx, std::shared_ptr<const DescriptorTable> table)
    : sc_core::sc_module(name),
      ctx_(ctx),
      room_cores_(2),
      idle_cores_(2),
      queue_capacity_(1 + static_cast<std::uint32_t>(std::max(0, ctx.chip.scalar.queue_depth))),
      streams_(ctx.stream.streams.size()),
      events_(ctx.stream.events.size()),
      table_(table ? std::move(table) : std::make_shared<const DescriptorTable>(ctx.stream)),
      descs_(table_->descs.data()),
      waits_(table_->waits.data()),
      signals_(table_->signals.data()),
      slot_busy_(static_cast<std::size_t>(ctx.chip.scalar.count), 0),
      slot_core_(static_cast<std::size_t>(ctx.chip.scalar.count), nullptr),
      slot_tid_(static_cast<std::size_t>(ctx.chip.scalar.count), 0) {
    if (table_->descs.size() != ctx_.stream.tasks.size() || table_->stream_begin.size() != streams_.size() + 1)
        throw std::logic_error("ScalarCore: descriptor table of another stream");
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        streams_[s].begin = streams_[s].head = table_->stream_begin[s];
        streams_[s].end = table_->stream_begin[s + 1];
    }
    for (std::size_t e = 0; e < events_.size(); ++e) events_[e].count = ctx_.stream.events[e].count;
    slot_running_.resize(slot_busy_.size());
    if (ctx_.tracing)
        for (std::size_t s = 0; s < slot_tid_.size(); ++s) {
            slot_tid_[s] = ctx_.next_tid++;
            ctx_.trace->thread(ctx_.trace_pid, slot_tid_[s], fmt::format("scalar{}", s), slot_tid_[s]);
        }
    // Flow ids are unique across the trace: each rank of a System has its own range.
    next_flow_id_ = (static_cast<std::uint64_t>(ctx_.place.rank) << 40) + 1;
    // Kick off at time 0 once the simulation starts.
    ctx_.scheduler->at(0, *this, kStart);
}

void ScalarCore::attach_cores(std::vector<AiCore*> cube, std::vector<AiCore*> vector) {
    cube_ = std::move(cube);
    vector_ = std::move(vector);
    const std::size_t counts[2] = {cube_.size(), vector_.size()};
    for (int type = 0; type < 2; ++type) {
        const std::size_t n = counts[type];
        room_cores_[type].assign((n + 63) / 64, 0);
        idle_cores_[type].assign((n + 63) / 64, 0);
        queues_[type].assign(n, CoreQueue{std::vector<Running>(queue_capacity_), 0, 0, 0});
        for (std::size_t i = 0; i < n; ++i) {
            room_cores_[type][i / 64] |= 1ULL << (i % 64);
            idle_cores_[type][i / 64] |= 1ULL << (i % 64);
        }
    }
    ready_.resize(3 + cube_.size() + vector_.size());
    ready_[0].type = CoreType::scalar;
    ready_[1].type = CoreType::cube;
    ready_[2].type = CoreType::vector;
    for (std::size_t i = 0; i < cube_.size(); ++i) ready_[3 + i] = ReadyQueue{CoreType::cube, static_cast<int>(i), {}};
    for (std::size_t i = 0; i < vector_.size(); ++i)
        ready_[3 + cube_.size() + i] = ReadyQueue{CoreType::vector, static_cast<int>(i), {}};
}

void ScalarCore::advance_head(std::uint32_t s) {
    Stream& st = streams_[s];
    if (st.head >= st.end) return;
    const Desc& d = descs_[st.head];
    const std::uint32_t t = d.task;
    // Each stream is walked in order but 72 of them interleave, too many for
    // the hardware prefetcher. Fetch what the next head will touch (its
    // timing record, and the task descriptor its core reads when it starts,
    // often long after) and the packed descriptor after it, so those cache
    // misses are off the event path.
    // The part a core reads: Task's leading fields, up to core_type.
    const Task& task = ctx_.stream.tasks[t];
    const auto hot_begin = reinterpret_cast<std::uintptr_t>(&task);
    const auto hot_end = reinterpret_cast<std::uintptr_t>(&task.core_type) + 1;
    for (std::uintptr_t line = hot_begin & ~std::uintptr_t{63}; line < hot_end; line += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(line));
    if (st.head + 1 < st.end) {
        __builtin_prefetch(&ctx_.timing[descs_[st.head + 1].task]);
        if (st.head + 2 < st.end) __builtin_prefetch(&descs_[st.head + 2]);
    }
    ctx_.timing[t].head_ps = now_ps();
    st.pending_waits = 0;
    std::uint64_t released = now_ps();
    for (std::uint32_t w = d.wait_begin; w < d.wait_end; ++w) {
        const EventIndex e = waits_[w];
        if (events_[e].fired) {
            released = std::max(released, events_[e].fired_ps);
        } else {
            ++st.pending_waits;
            const std::uint32_t node = waiters_.acquire();
            waiters_[node] = Waiter{s, UINT32_MAX};
            EventState& ev = events_[e];
            if (ev.last_waiter == UINT32_MAX) ev.first_waiter = node;
            else waiters_[ev.last_waiter].next = node;
            ev.last_waiter = node;
        }
    }
    if (!task.wait_memory.empty()) watch_memory(s, task);
    if (st.pending_waits == 0) {
        ctx_.timing[t].released_ps = released;
        make_ready(s);
    }
}

void ScalarCore::watch_memory(std::uint32_t s, const Task& t) {
    Fabric& fabric = *ctx_.place.fabric;
    for (const MemoryWait& w : t.wait_memory) {
        ++streams_[s].pending_waits;
        std::uint64_t fire_ps = 0;
        // Landed already, or posted and landing later: wake then; else the
        // write that completes it calls memory_ready.
        if (fabric.watch(ctx_.place.rank, kWatchUnit, w.addr, w.blocks, w.value, s, fire_ps)) memory_ready(s, fire_ps);
    }
}

void ScalarCore::memory_ready(std::uint32_t stream, std::uint64_t fire_ps) {
    ctx_.scheduler->at(std::max(fire_ps, now_ps()), *this, kMemory | stream);
}

void ScalarCore::release_wait(std::uint32_t s) {
    Stream& st = streams_[s];
    if (--st.pending_waits == 0) {
        const std::uint32_t task = descs_[st.head].task;
        TaskTiming& tm = ctx_.timing[task];
        tm.released_ps = now_ps();
        // The memory wait that came true last: who wrote its last block.
        Writer last;
        for (const MemoryWait& w : ctx_.stream.tasks[task].wait_memory) {
            const Writer by = ctx_.place.fabric->writer_of(ctx_.place.rank, w.addr, w.blocks);
            if (by.rank >= 0 && by.land_ps >= last.land_ps) last = by;
        }
        tm.mem_rank = last.rank;
        tm.mem_task = last.task;
        make_ready(s);
    }
}

void ScalarCore::post_local_write(const Task& t) {
    // A copy into this rank's own GM lands when its last byte is stored.
    WriteRequest w;
    w.src_rank = w.dst_rank = ctx_.place.rank;
    w.addr = t.remote.addr;
    w.bytes = t.params.bytes;
    w.kind = t.remote.has_flag ? WriteKind::data_as_flag : WriteKind::data;
    w.flag = t.remote.flag;
    w.task = static_cast<std::uint32_t>(&t - ctx_.stream.tasks.data());
    ctx_.place.fabric->post_local(w, now_ps());
}

std::size_t ScalarCore::queue_index(const Desc& d) const {
    // [scalar][cube any][vector any][cube 0..n-1][vector 0..m-1]
    if (d.type == CoreType::scalar) return 0;
    const bool cube = d.type == CoreType::cube;
    if (d.core < 0) return cube ? 1 : 2;
    return 3 + (cube ? 0 : cube_.size()) + static_cast<std::size_t>(d.core);
}

void ScalarCore::make_ready(std::uint32_t s) {
    const Desc& d = descs_[streams_[s].head];
    const std::size_t q = queue_index(d);
    if (ready_[q].heads.empty() && std::find(ready_used_.begin(), ready_used_.end(), q) == ready_used_.end())
        ready_used_.push_back(static_cast<std::uint32_t>(q));
    ready_[q].heads.push(ReadyHead{ready_key(d.priority, ready_seq_++), s, d.task, d.signal_begin, d.signal_end});
    if (ctx_.tracing) count_ready(d.type, 1);
}

void ScalarCore::count_ready(CoreType type, int delta) {
    std::uint32_t& n = ready_count_[static_cast<std::size_t>(type)];
    n = static_cast<std::uint32_t>(static_cast<int>(n) + delta);
    static constexpr const char* kNames[] = {"ready tasks (cube)", "ready tasks (vector)", "ready tasks (scalar)"};  // CoreType order
    ctx_.trace->counter(ctx_.trace_pid, kNames[static_cast<std::size_t>(type)], now_ps(), n);
}

bool ScalarCore::core_available(const ReadyQueue& q) const {
    if (q.type == CoreType::scalar) return true;
    const int type = q.type == CoreType::cube ? 0 : 1;
    const auto& room = room_cores_[type];
    if (q.core >= 0) return room[static_cast<std::size_t>(q.core) / 64] >> (q.core % 64) & 1;
    // An unpinned task goes to an idle core only: queued behind a busy one
    // it would be bound to that core while another may free up first.
    for (std::uint64_t w : idle_cores_[type])
        if (w) return true;
    return false;
}

AiCore* ScalarCore::claim_core(const ReadyQueue& q) {
    if (q.type == CoreType::scalar) return nullptr;
    const int type = q.type == CoreType::cube ? 0 : 1;
    int idx = q.core;
    // Unpinned: the lowest idle core (core_available saw one).
    for (std::size_t w = 0; w < idle_cores_[type].size() && idx < 0; ++w)
        if (idle_cores_[type][w]) idx = static_cast<int>(w * 64) + __builtin_ctzll(idle_cores_[type][w]);
    const auto i = static_cast<std::size_t>(idx);
    set_claimed(type, i, queues_[type][i].claimed + 1);
    return (type == 0 ? cube_ : vector_)[i];
}

void ScalarCore::set_claimed(int type, std::size_t core, std::uint32_t claimed) {
    queues_[type][core].claimed = claimed;
    const std::uint64_t bit = 1ULL << (core % 64);
    std::uint64_t& room = room_cores_[type][core / 64];
    std::uint64_t& idle = idle_cores_[type][core / 64];
    room = claimed < queue_capacity_ ? room | bit : room & ~bit;
    idle = claimed == 0 ? idle | bit : idle & ~bit;
}

void ScalarCore::try_dispatch() {
    for (std::size_t slot = 0; slot < slot_busy_.size(); ++slot) {
        if (slot_busy_[slot]) continue;
        // The best ready head, over the queues whose core is free.
        ReadyQueue* best = nullptr;
        for (std::uint32_t q : ready_used_) {
            ReadyQueue& rq = ready_[q];
            if (rq.heads.empty() || !core_available(rq)) continue;
            if (!best || rq.heads.top() < best->heads.top()) best = &rq;
        }
        if (!best) return;
        const ReadyHead head = best->heads.top();
        const std::uint32_t s = head.stream, t = head.task;
        best->heads.pop();
        if (ctx_.tracing) count_ready(best->type, -1);
        AiCore* core = claim_core(*best);
        const std::size_t desc = streams_[s].head++;
        slot_busy_[slot] = 1;
        slot_core_[slot] = core;
        ++dispatched_;
        std::uint64_t cycles = static_cast<std::uint64_t>(timing::dispatch_cycles(ctx_.chip));
        const bool on_scalar = best->type == CoreType::scalar;
        const Running run{head.signal_begin, head.signal_end, t};
        if (run.signal_begin != run.signal_end) __builtin_prefetch(&events_[signals_[run.signal_begin]]);
        ctx_.timing[t].dispatch_ps = now_ps();
        if (on_scalar) {
            ctx_.timing[t].start_ps = now_ps();
            ctx_.timing[t].trace_tid = slot_tid_[slot];
            cycles += descs_[desc].scalar_cycles;
        }
        slot_running_[slot] = run;
        if (posts(t)) ++posting_in_flight_;
        const std::uint64_t dur = ctx_.cycles_to_ps(static_cast<double>(cycles));
        busy_ps_ += dur;
        if (ctx_.tracing) {
            const std::string& id = ctx_.stream.tasks[t].id;
            ctx_.trace->complete(ctx_.trace_pid, slot_tid_[slot], fmt::format("dispatch {}", id), "dispatch", now_ps(), dur,
                                 fmt::format(R"("id":"{}")", json_escape(id)));
        }
        ctx_.scheduler->at(now_ps() + dur, *this, slot_done(t, static_cast<std::uint16_t>(slot), on_scalar));
        advance_head(s);
    }
}

void ScalarCore::wake(std::uint64_t action) {
    count_event(EventKind::scalar);
    if (action == kStart) {
        for (std::uint32_t s = 0; s < streams_.size(); ++s) advance_head(s);
    } else if (action & kMemory) {
        release_wait(static_cast<std::uint32_t>(action & ~kMemory));
    } else {
        const auto task = static_cast<std::uint32_t>(action);
        const auto slot = static_cast<std::uint16_t>(action >> 32);
        slot_busy_[slot] = 0;
        if (action >> 48 & 1) {  // a scalar-kernel task's cycles are done
            TaskTiming& tm = ctx_.timing[task];
            tm.end_ps = now_ps();
            tm.done = true;
            count_done();
            emit_flows(task);
            signal(slot_running_[slot], task);
        } else {
            // Into the core's queue; an idle core starts it at once.
            AiCore* core = slot_core_[slot];
            CoreQueue& q = queues_[core->type() == CoreType::cube ? 0 : 1][static_cast<std::size_t>(core->index())];
            q.ring[(q.front + q.size) % queue_capacity_] = slot_running_[slot];
            if (q.size++ == 0) core->start(task);
        }
    }
    try_dispatch();
}

void ScalarCore::count_done() {
    if (++done_ == ctx_.stream.tasks.size() && ctx_.memory) ctx_.memory->stream_done();
}

void ScalarCore::task_finished(CoreType type, int core, std::uint32_t task) {
    const int ti = type == CoreType::cube ? 0 : 1;
    const auto c = static_cast<std::size_t>(core);
    CoreQueue& q = queues_[ti][c];
    const Running done = q.ring[q.front];
    q.front = (q.front + 1) % queue_capacity_;
    --q.size;
    set_claimed(ti, c, q.claimed - 1);
    if (posts(task)) --posting_in_flight_;
    count_done();
    emit_flows(task);  // now that both ends of each arrow are known
    if (ctx_.place.fabric) {  // (the descriptor is cold here: read only in a System)
        const Task& t = ctx_.stream.tasks[task];
        if (t.remote.dst_rank == ctx_.place.rank) post_local_write(t);
    }
    // The next queued task starts without waiting for the scalar core.
    if (q.size > 0) {
        const std::uint32_t next = q.ring[q.front].task;
        (ti == 0 ? cube_ : vector_)[c]->start(next);
    }
    signal(done, task);
    try_dispatch();
}

void ScalarCore::signal(const Running& r, std::uint32_t task) {
    for (std::uint32_t i = r.signal_begin; i < r.signal_end; ++i) signal_event(signals_[i], task);
}

void ScalarCore::signal_external(EventIndex e, HostGate gate) {
    if (host_gates_.empty()) host_gates_.resize(events_.size());
    if (!events_[e].fired) host_gates_[e] = gate;
    signal_event(e, UINT32_MAX);
    try_dispatch();
}

void ScalarCore::signal_event(EventIndex e, std::uint32_t by_task) {
    EventState& ev = events_[e];
    if (ev.fired) return;  // extra signals after firing are harmless
    if (++ev.signals < ev.count) return;
    ev.fired = true;
    ev.fired_by = by_task;
    ev.fired_ps = now_ps();
    for (std::uint32_t node = ev.first_waiter; node != UINT32_MAX;) {
        const std::uint32_t s = waiters_[node].stream;
        waiters_.release(node);
        node = waiters_[node].next;  // a released node keeps its contents until reused
        release_wait(s);
    }
    ev.first_waiter = ev.last_waiter = UINT32_MAX;
    if (on_event_fired) on_event_fired(e);
}

void ScalarCore::emit_flows(std::uint32_t task) {
    if (!ctx_.tracing) return;
    const TaskTiming& to = ctx_.timing[task];
    for (EventIndex e : ctx_.stream.tasks[task].wait) {
        const EventState& ev = events_[e];
        if (ev.fired_by == UINT32_MAX) continue;  // released by the host
        const TaskTiming& from = ctx_.timing[ev.fired_by];
        const bool by_op = ctx_.trace->filters_ops();
        const std::string from_op = by_op ? ctx_.stream.label(ctx_.stream.tasks[ev.fired_by]) : std::string(),
                          to_op = by_op ? ctx_.stream.label(ctx_.stream.tasks[task]) : std::string();
        ctx_.trace->flow(next_flow_id_++, {ctx_.trace_pid, from.trace_tid, from.start_ps, from.end_ps, from_op},
                         {ctx_.trace_pid, to.trace_tid, to.start_ps, to.end_ps, to_op});
    }
}

std::string ScalarCore::deadlock_report() const {
    if (done_ == ctx_.stream.tasks.size()) return {};
    const TaskStream& ts = ctx_.stream;
    const std::uint64_t stuck = ts.tasks.size() - done_;
    for (std::uint32_t s = 0; s < streams_.size(); ++s) {
        const Stream& st = streams_[s];
        if (st.head >= st.end || st.pending_waits == 0) continue;
        const Task& t = ts.tasks[descs_[st.head].task];
        if (!t.wait_memory.empty()) {
            const std::string m = memory_deadlock(t, s);
            if (!m.empty()) return m;
        }
        for (EventIndex e : t.wait) {
            if (events_[e].fired) continue;
            // Who could still signal it, and did they run?
            std::string signallers;
            int listed = 0, ran = 0;
            for (std::uint32_t i = 0; i < ts.tasks.size(); ++i) {
                const Task& other = ts.tasks[i];
                if (std::find(other.signal.begin(), other.signal.end(), e) == other.signal.end()) continue;
                ran += ctx_.timing[i].done ? 1 : 0;
                if (listed++ < 3) signallers += (signallers.empty() ? "" : ", ") + fmt::format("'{}'", other.id);
            }
            std::string who;
            if (listed == 0) who = "no task signals it";
            else if (static_cast<std::uint32_t>(listed) < ts.events[e].count)
                who = fmt::format("only {} task(s) signal it: {}{}", listed, signallers, listed > 3 ? " ..." : "");
            else
                who = fmt::format("signalled by {}{}; {} of them never ran", signallers, listed > 3 ? " ..." : "", listed - ran);
            return fmt::format("deadlock: task '{}' ({}:{}, stream '{}') waits for event '{}' ({} of {} signals; {}); {} task(s) never ran",
                               t.id, ts.file, t.line, ts.streams[s], ts.events[e].id, events_[e].signals,
                               ts.events[e].count, who, stuck);
        }
    }
    return fmt::format("deadlock: {} task(s) never ran", stuck);
}

std::string ScalarCore::memory_deadlock(const Task& t, std::uint32_t s) const {
    const Fabric& fabric = *ctx_.place.fabric;
    const int rank = ctx_.place.rank;
    const std::uint64_t block = fabric.block_bytes();
    for (const MemoryWait& w : t.wait_memory) {
        const std::uint64_t first = w.addr / block;
        for (std::uint32_t b = 0; b < w.blocks; ++b) {
            std::uint64_t flag = 0;
            const bool written = fabric.block_written(rank, (first + b) * block, flag);
            if (written && flag == w.value) continue;
            const std::string held = written ? fmt::format("it holds flag {}", flag) : std::string("nothing ever wrote it");
            return fmt::format("deadlock: task '{}' ({}:{}, rank {}, stream '{}') waits for memory: block {:#x} of rank "
                               "{}'s GM to carry flag {} ({} of the {} block(s) from {:#x}); {}; {} task(s) of rank {} "
                               "never ran",
                               t.id, ctx_.stream.file, t.line, rank, ctx_.stream.streams[s],
                               (first + b) * block, rank, w.value, b + 1, w.blocks, w.addr, held,
                               ctx_.stream.tasks.size() - done_, rank);
        }
    }
    return {};
}

void ScalarCore::report(Stats& s, const RunSpan& span) const {
    const int count = ctx_.chip.scalar.count;
    s.set("units.scalar.count", count);
    s.set("units.scalar.busy_cycles", span.cycles(static_cast<double>(busy_ps_)));
    s.set("units.scalar.utilization", span.utilization(static_cast<double>(busy_ps_), count));
    s.set("tasks.dispatched", dispatched_);
    std::uint64_t signals = 0, fired = 0;
    for (const EventState& e : events_) {
        signals += e.signals;
        fired += e.fired ? 1 : 0;
    }
    s.set("events.fired", fired);
    s.set("events.signals", signals);
}

}  // namespace npusim
