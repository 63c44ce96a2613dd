// The framework host of kernel-by-kernel execution (docs/design.md §1.2) as a
// SystemC module on the device's time base: host threads run each op's
// input preparation, InferShape, Resize and Launch (allocation, launch call,
// descriptor submission, free) in the arrangement of the host mode, release
// the op's device tasks by signalling their launch events, and watch the
// op's completion event. Value-dependent ops drain the queues and copy a
// value back before InferShape; compute-dependent ops make the scheduling
// thread wait for their kernel. In hetero mode CPU-subgraph ops run on
// host worker threads. Like the die's modules: actions posted to the die's
// WakeScheduler, never clocked. Trace: process "host" (pid 2), one track
// per host thread.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <systemc>

#include "host/host_costs.hpp"
#include "hw/critical_path.hpp"
#include "host/host_plan.hpp"
#include "host/memory_pool.hpp"
#include "host/stream_gating.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/scalar_core.hpp"

namespace npusim {
class Die;
class Stats;
class TraceWriter;
}  // namespace npusim

namespace npusim::host {

// A host mode and the workload keys the runtime reads; the keys start at
// their schema defaults (config/schema.cpp), so no default is written here.
struct RuntimeOptions {
    Mode mode = Mode::sync;  // a runtime exists only when the mode is not off
    bool dynamic_shapes = default_workload_params("graph").graph.dynamic_shapes;
    std::uint32_t submit_batch = default_workload_params("graph").graph.submit_batch;
};

class HostRuntime : public sc_core::sc_module, private Wakeable {
public:
    static constexpr int kTracePid = 2;
    // The host-time breakdown groups, in the order of an op's life (stats host.breakdown.*).
    static constexpr const char* kBreakdown[] = {"frontend", "infer", "resize", "launch", "queue", "drain", "wait", "cpu"};

    // `die` must outlive this module; its scalar core's on_event_fired is taken.
    HostRuntime(sc_core::sc_module_name name, const RuntimeOptions& opt, const HostParams& params, const HostPlan& plan,
                const GatedStream& gated, Die& die, TraceWriter* trace);

    // After the run: true when every op went through the host.
    bool finished() const;
    std::string stall_report() const;
    // Flow arrows from each submission to the first task it released (after the run).
    void emit_flows();
    std::uint64_t host_end_ps() const { return host_end_ps_; }
    // Hands the die where the host's own work ends the run (critical path).
    void end_critical_path();
    void collect(Stats& s) const;

private:
    enum class JobKind { front, resize, launch, cpu };
    struct Job {
        JobKind kind;
        int op;
    };
    enum class WaitKind { none, drain, op_done, cpu_inputs, queue_space };
    struct Step {
        std::string stage;          // "frontend", "prepare", ..., or the wait's kind
        std::uint64_t dur_ps = 0;
        WaitKind wait = WaitKind::none;
        bool on_core = true;        // takes a host core while it runs (a sleeping wake-up or sync does not)
        std::function<void()> done;  // at the end of the step
        std::function<std::uint64_t()> dur_at_start;  // when set: the duration, known only when the step starts
        std::string label;          // trace slice name
        std::string bucket;         // host-time breakdown group (empty: not counted)
        int target = -1;            // queue_space: the thread whose queue must have room
    };
    struct Thread {
        std::string name;
        int tid = 0;
        std::deque<Job>* queue = nullptr;
        std::vector<Step> steps;
        std::size_t step = 0;
        bool has_job = false;
        bool timed = false;         // a timed step is running
        bool waiting = false;       // a wait step has started
        bool idle = false;          // found its queue empty: the next pop pays a wake-up
        std::uint64_t wait_start = 0, step_start = 0, job_start = 0;
        Job job{JobKind::front, -1};
        std::uint64_t busy_ps = 0;
        std::map<std::string, std::uint64_t> stage_ps;  // busy time per stage
        // Processor sharing: work left of the running step at full speed,
        // when it was last brought up to date, and the generation of its
        // pending end action (older ones are stale).
        double remaining_ps = 0;
        std::uint64_t last_ps = 0;
        std::uint64_t gen = 0;
    };
    // Scheduler actions: kReevaluate, or (generation << kThreadBits) | (thread + 1)
    // when thread's timed step is due to end.
    static constexpr std::uint64_t kReevaluate = 0;
    static constexpr int kThreadBits = 11;  // chip.host.threads <= 1024

    void wake(std::uint64_t action) override;
    void progress();
    bool advance(Thread& t);
    void start_job(Thread& t, const Job& j, bool woken);
    void finish_job(Thread& t);
    void push(int thread, const Job& j);
    bool satisfied(const Step& s, int op) const;
    bool spinning(const Thread& t) const;
    void schedule_end(Thread& t);
    void rebalance();
    // Thread time of a stage group, ending now on thread t (stats, and the
    // critical path's host stages).
    void account(const Thread& t, const std::string& bucket, std::uint64_t ps);
    void on_fired(EventIndex e);
    void mark_done(int op);

    // Step builders.
    void add_timed(std::vector<Step>& v, const char* stage, double us, int op, std::function<void()> done = {});
    void add_wait(std::vector<Step>& v, WaitKind w, int op);
    void push_steps(std::vector<Step>& v, int thread, const Job& j);
    void drain_steps(std::vector<Step>& v, int op);
    void launch_steps(std::vector<Step>& v, int op);
    void after_compute_steps(std::vector<Step>& v, int op);
    void free_steps(std::vector<Step>& v, int op);
    double cost(int op, Stage s) const;

    RuntimeOptions opt_;
    const HostParams& p_;
    const HostPlan& plan_;
    const GatedStream& gated_;
    Die& die_;
    TraceWriter* trace_ = nullptr;
    bool tracing_ = false;

    std::vector<Thread> threads_;
    std::deque<Job> front_q_, resize_q_, launch_q_, cpu_q_;
    int front_ = 0, resize_ = -1, launch_ = -1;  // thread indices; -1 = done inline by the front thread
    WakeScheduler& scheduler_;

    std::vector<char> done_;                 // per op
    std::vector<std::uint64_t> done_ps_;
    std::vector<int> op_of_end_;             // per event: op whose end event it is, or -1
    std::vector<char> watched_;              // per event: the host cares when it fires
    std::vector<std::uint64_t> buffer_addr_; // per op: pool address of its output
    std::vector<char> buffer_live_;
    int next_front_ = 0;                     // next op for the front thread
    std::size_t ops_done_ = 0;
    MemoryPool pool_;

    // Statistics.
    std::uint64_t host_end_ps_ = 0;
    std::uint64_t drains_ = 0, waits_ = 0, drain_ps_ = 0, wait_ps_ = 0;
    std::uint64_t launches_ = 0, submissions_ = 0, descriptors_ = 0, submitted_bytes_ = 0;
    std::uint64_t copies_ = 0, copied_bytes_ = 0, cpu_ops_run_ = 0;
    std::map<std::string, std::uint64_t> stage_ps_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> cpu_busy_;  // CPU-op compute intervals
    struct Submit {
        int op;
        std::size_t batch;
        int tid;
        std::uint64_t start_ps, end_ps;  // the submit slice
    };
    std::vector<Submit> submits_;           // for trace flows
    // Serial costs: back-pressure of the launch queue, wake-ups, host cores.
    std::uint64_t queue_full_waits_ = 0, queue_full_ps_ = 0, wakeups_ = 0, pool_grows_ = 0;
    std::uint64_t pool_segments_bytes_ = 0;  // what the pool has reserved from the driver
    bool grew_ = false;                      // the last allocation grew the pool
    bool spin_ = false;                      // chip.host.worker_wait = spin
    double rate_ = 1;                        // speed of an on-core step: min(1, cores / demand)
    std::uint64_t rate_since_ps_ = 0, oversubscribed_ps_ = 0;
    std::size_t peak_demand_ = 0;
    std::vector<std::vector<HostSpan>> spans_;  // per thread, in time order
    int end_thread_ = -1;                       // the thread that finished last
    std::map<std::string, std::uint64_t> breakdown_ps_;  // thread time per host stage group (stats, summary)
    std::uint64_t first_launch_ps_ = UINT64_MAX;
    // Critical path: the host has been at work since gate_.since_ps, when a
    // wait for the device ended with task gate_.after_task (the one that
    // set the last watched event).
    npusim::HostGate gate_;
    std::uint32_t last_fired_by_ = UINT32_MAX;
};

}  // namespace npusim::host
