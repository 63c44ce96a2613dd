// Scalar core: fetches descriptors from the streams in order, resolves
// counting events, and dispatches each task into the task queue of a core
// of its type (or its pinned core), paying dispatch_cycles of scalar time
// per task. A core's queue holds queue_depth tasks beside the one it runs,
// so dispatch overlaps the core's work; a core takes its next task from
// its queue the moment it finishes one.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <systemc>

#include "hw/ai_core.hpp"
#include "hw/post_horizon.hpp"
#include "hw/sim_context.hpp"
#include "hw/slot_pool.hpp"
#include "engine/wake_scheduler.hpp"

namespace npusim {

class Stats;
struct RunSpan;

struct EventState {
    std::uint32_t signals = 0;
    std::uint32_t count = 1;     // signals it needs (its declaration's count)
    std::uint32_t fired_by = 0;  // task whose signal completed the count
    bool fired = false;
    std::uint64_t fired_ps = 0;
    // Streams whose head waits for it, in the order they started waiting:
    // a list through ScalarCore's waiter pool (a vector per event cost a
    // malloc and a free per wait).
    std::uint32_t first_waiter = UINT32_MAX, last_waiter = UINT32_MAX;
};

// What the scalar core needs of a stream's descriptors, packed and laid out
// stream by stream, so walking a stream reads memory in order. It is read
// only, so the ranks of a System that run one stream share one rather than
// each holding ~70 B per task.
struct DescriptorTable {
    struct Desc {
        std::uint32_t task;
        std::int32_t priority;
        std::int32_t core;        // pinned core or -1
        CoreType type;
        std::uint32_t wait_begin;  // into waits
        std::uint32_t wait_end;
        std::uint32_t signal_begin;  // into signals
        std::uint32_t signal_end;
        std::uint64_t scalar_cycles;
    };
    explicit DescriptorTable(const TaskStream& ts);
    std::vector<Desc> descs;
    std::vector<EventIndex> waits;
    std::vector<EventIndex> signals;
    std::vector<std::size_t> stream_begin;  // per stream, its first descriptor; then descs.size()
};

// How long the host had been at work when it signalled an event from
// outside the die: since `since_ps`, after device task `after_task` ended
// (UINT32_MAX: none; the host was busy from the start).
struct HostGate {
    std::uint64_t since_ps = 0;
    std::uint32_t after_task = UINT32_MAX;
    int thread = -1;  // the host thread whose wait ended there (-1: unknown)
};

class ScalarCore : public sc_core::sc_module, public CoreListener, private Wakeable {
public:
    // `table`: the stream's descriptors, shared with other dies that run it
    // (null: the core packs its own).
    ScalarCore(sc_core::sc_module_name name, SimContext& ctx, std::shared_ptr<const DescriptorTable> table = nullptr);
    void attach_cores(std::vector<AiCore*> cube, std::vector<AiCore*> vector);

    void task_finished(CoreType type, int core, std::uint32_t task) override;

    // A signal from outside the die (the host runtime launching a kernel):
    // counts like a task's signal. Call from a SystemC process.
    void signal_external(EventIndex e, HostGate gate = {});
    // A memory wait of stream `stream`'s head came true: its last block
    // lands at fire_ps (>= now). Called from a GM watch (Die::watch_fired).
    void memory_ready(std::uint32_t stream, std::uint64_t fire_ps);
    // The scalar core's unit number in GM watches (Watcher).
    static constexpr int kWatchUnit = 0;
    // Called whenever an event fires, e.g. so the host sees a kernel end.
    std::function<void(EventIndex)> on_event_fired;

    std::uint64_t busy_ps() const { return busy_ps_; }
    std::uint64_t dispatched() const { return dispatched_; }
    std::uint64_t tasks_done() const { return done_; }
    const std::vector<EventState>& events() const { return events_; }
    // Per event, the host's gate when it signalled it (empty: no host).
    const std::vector<HostGate>& host_gates() const { return host_gates_; }
    // units.scalar.{count,busy_cycles,utilization}, tasks.dispatched and
    // events.{fired,signals}.
    void report(Stats& s, const RunSpan& span) const;
    // A one-line reason why the run cannot finish; "" if every task ran.
    std::string deadlock_report() const;

    // In a System: what this stream's tasks tell of when the die can next
    // post a write to another die (null: nothing; post_bound says `base`).
    void set_post_horizon(std::shared_ptr<const PostHorizon> h) { horizon_ = std::move(h); }
    // A time no sooner than `base` (no action of the die is due before it)
    // before which no task of this die posts a write to another die, as
    // long as nothing lands in the die meanwhile: `base` while a task that
    // may post is dispatched; else the earliest a task that may post can be
    // dispatched, each task it waits for taking at least its floor on its
    // core and the die's cores of a type running in parallel at most.
    // `cap` when no such task can be dispatched sooner; returns as soon as
    // one can be dispatched before `below`.
    std::uint64_t post_bound(std::uint64_t base, std::uint64_t cap, std::uint64_t below, HorizonScratch& s) const;

private:
    using Desc = DescriptorTable::Desc;
    // The signal list of the task running on a core or dispatch slot, kept
    // where the finish looks first (the task's own descriptor is cold by
    // then: a cache miss per task in the profile).
    struct Running {
        std::uint32_t signal_begin = 0, signal_end = 0;
        std::uint32_t task = 0;
    };
    // One core's task queue: a ring of the tasks dispatched to it, the
    // front one running; `claimed` also counts tasks still in dispatch.
    struct CoreQueue {
        std::vector<Running> ring;  // capacity 1 + queue_depth
        std::uint32_t front = 0, size = 0;
        std::uint32_t claimed = 0;
    };
    struct Stream {
        std::size_t begin = 0, end = 0;   // its descriptors in descs_
        std::size_t head = 0;             // next descriptor to issue
        std::uint32_t pending_waits = 0;  // unfired events and unlanded memory waits the head waits for
    };
    // Scheduler actions: a dispatch slot's work ended; `scalar_done` when it
    // ran a scalar-kernel task's own cycles. kStart begins the streams.
    static constexpr std::uint64_t kStart = ~std::uint64_t{0};
    // | stream: one of the stream head's memory waits has landed.
    static constexpr std::uint64_t kMemory = std::uint64_t{1} << 62;
    static std::uint64_t slot_done(std::uint32_t task, std::uint16_t slot, bool scalar_done) {
        return task | std::uint64_t{slot} << 32 | std::uint64_t{scalar_done} << 48;
    }
    // A ready stream head. Order: higher priority first, then the order the
    // heads became ready, packed into one key so a heap step is one compare:
    // high 32 bits 0x7fffffff - priority, low 32 bits the ready sequence
    // (at most one per task, and task indices are 32-bit).
    // The task and its signal list ride along, so dispatch need not reload
    // the head's descriptor (cold by then: a cache miss per task).
    struct ReadyHead {
        std::uint64_t key;
        std::uint32_t stream;
        std::uint32_t task;
        std::uint32_t signal_begin, signal_end;
        bool operator>(const ReadyHead& o) const { return key > o.key; }
        bool operator<(const ReadyHead& o) const { return key < o.key; }
    };
    static std::uint64_t ready_key(std::int32_t priority, std::uint64_t seq) {
        return static_cast<std::uint64_t>(std::int64_t{0x7fffffff} - priority) << 32 | (seq & 0xffffffffu);
    }
    // Ready stream heads grouped by the core they need: any core of a type,
    // or one pinned core. Dispatch takes the best head whose core is free.
    struct ReadyQueue {
        CoreType type = CoreType::vector;
        int core = -1;
        std::priority_queue<ReadyHead, std::vector<ReadyHead>, std::greater<ReadyHead>> heads;
    };

    void wake(std::uint64_t action) override;
    void advance_head(std::uint32_t stream);
    void make_ready(std::uint32_t stream);
    void try_dispatch();
    bool core_available(const ReadyQueue& q) const;
    AiCore* claim_core(const ReadyQueue& q);
    void set_claimed(int type, std::size_t core, std::uint32_t claimed);
    void signal(const Running& r, std::uint32_t task);
    void signal_event(EventIndex e, std::uint32_t by_task);
    void emit_flows(std::uint32_t task);
    void watch_memory(std::uint32_t stream, const Task& t);
    void release_wait(std::uint32_t stream);
    void post_local_write(const Task& t);
    std::string memory_deadlock(const Task& t, std::uint32_t stream) const;

    SimContext& ctx_;
    std::vector<AiCore*> cube_, vector_;
    // Per type (cube, vector), as bit sets, lowest index first: cores whose
    // queue has room, and cores with nothing dispatched to them.
    std::vector<std::vector<std::uint64_t>> room_cores_, idle_cores_;
    std::uint32_t queue_capacity_ = 1;  // running + queued per core
    std::vector<Stream> streams_;
    std::vector<EventState> events_;
    std::vector<HostGate> host_gates_;
    std::vector<ReadyQueue> ready_;          // indexed by queue_index()
    std::vector<std::uint32_t> ready_used_;  // queues that ever held a head
    std::uint64_t ready_seq_ = 0;
    // Traced: tasks ready and waiting for a core, per type (a queue-depth counter).
    std::array<std::uint32_t, 3> ready_count_{};
    void count_ready(CoreType type, int delta);
    std::size_t queue_index(const Desc& d) const;
    std::shared_ptr<const DescriptorTable> table_;
    const Desc* descs_;  // table_'s arrays, read on every dispatch
    const EventIndex* waits_;
    const EventIndex* signals_;
    std::vector<CoreQueue> queues_[2];    // per cube / vector core
    std::vector<Running> slot_running_;   // per dispatch slot (scalar-kernel tasks)
    struct Waiter {
        std::uint32_t stream;
        std::uint32_t next;  // UINT32_MAX ends the list
    };
    SlotPool<Waiter> waiters_;  // list nodes
    std::vector<std::uint8_t> slot_busy_;  // bytes: vector<bool>'s bit updates showed in the profile
    std::vector<AiCore*> slot_core_;
    std::vector<int> slot_tid_;
    std::uint64_t busy_ps_ = 0;
    std::uint64_t dispatched_ = 0;
    std::uint64_t done_ = 0;
    void count_done();  // one more task finished
    std::uint64_t next_flow_id_ = 1;
    std::shared_ptr<const PostHorizon> horizon_;
    std::uint32_t posting_in_flight_ = 0;  // dispatched tasks that may post a write to another die
    bool posts(std::uint32_t task) const { return horizon_ && (horizon_->flags[task] & PostHorizon::posts); }
    std::uint64_t task_floor_ps(std::uint32_t task) const;
};

}  // namespace npusim
