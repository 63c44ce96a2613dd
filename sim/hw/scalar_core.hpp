// Scalar core: fetches descriptors from the streams in order, resolves
// counting events, and dispatches each task to a free core of its type
// (or its pinned core), paying dispatch_cycles of scalar time per task.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <systemc>

#include "hw/ai_core.hpp"
#include "hw/sim_context.hpp"
#include "hw/wake_queue.hpp"

namespace npusim {

struct EventState {
    std::uint32_t signals = 0;
    bool fired = false;
    std::uint32_t fired_by = 0;  // task whose signal completed the count
    std::uint64_t fired_ps = 0;
    std::vector<std::uint32_t> waiting_streams;
};

class ScalarCore : public sc_core::sc_module, public CoreListener {
public:
    ScalarCore(sc_core::sc_module_name name, SimContext& ctx);
    void attach_cores(std::vector<AiCore*> cube, std::vector<AiCore*> vector);

    void task_finished(CoreType type, int core, std::uint32_t task) override;

    std::uint64_t busy_ps() const { return busy_ps_; }
    std::uint64_t dispatched() const { return dispatched_; }
    std::uint64_t tasks_done() const { return done_; }
    const std::vector<EventState>& events() const { return events_; }
    // A one-line reason why the run cannot finish; "" if every task ran.
    std::string deadlock_report() const;

private:
    struct Stream {
        std::vector<std::uint32_t> tasks;
        std::size_t head = 0;           // next task to issue
        std::uint32_t pending_waits = 0;  // unfired events the head waits for
    };
    struct Action {
        std::uint32_t task;
        std::uint16_t slot;
        bool scalar_work_done;  // a scalar-kernel task finished its cycles
    };
    // Ready streams: higher priority first, then the order they became ready.
    using ReadyKey = std::tuple<std::int32_t, std::uint64_t, std::uint32_t>;

    void wake();
    void advance_head(std::uint32_t stream);
    void try_dispatch();
    bool claim_core(const Task& t, AiCore*& core);
    void signal(std::uint32_t task);
    void emit_flows(std::uint32_t task);

    SimContext& ctx_;
    std::vector<AiCore*> cube_, vector_;
    std::vector<std::set<int>> free_cores_;  // per CoreType: cube, vector
    std::vector<Stream> streams_;
    std::vector<EventState> events_;
    std::set<ReadyKey> ready_;
    std::uint64_t ready_seq_ = 0;
    std::vector<bool> slot_busy_;
    std::vector<AiCore*> slot_core_;
    std::vector<int> slot_tid_;
    sc_core::sc_event wake_ev_;
    WakeQueue<Action> agenda_;
    std::uint64_t busy_ps_ = 0;
    std::uint64_t dispatched_ = 0;
    std::uint64_t done_ = 0;
    std::uint64_t next_flow_id_ = 1;
};

}  // namespace npusim
