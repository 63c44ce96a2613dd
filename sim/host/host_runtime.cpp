#include "host/host_runtime.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "host/host_costs.hpp"
#include "hw/die.hpp"
#include "stats/intervals.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim::host {

HostRuntime::HostRuntime(sc_core::sc_module_name name, const RuntimeOptions& opt, const HostParams& params,
                         const HostPlan& plan, const GatedStream& gated, Die& die, TraceWriter* trace)
    : sc_core::sc_module(name),
      opt_(opt),
      p_(params),
      plan_(plan),
      gated_(gated),
      die_(die),
      trace_(trace),
      tracing_(trace && trace->enabled()),
      scheduler_(die.scheduler()),
      done_(plan.ops.size(), 0),
      done_ps_(plan.ops.size(), 0),
      op_of_end_(die.context().stream.events.size(), -1),
      watched_(die.context().stream.events.size(), 0),
      buffer_addr_(plan.ops.size(), 0),
      buffer_live_(plan.ops.size(), 0),
      spin_(params.worker_wait == "spin") {

    std::vector<std::pair<std::string, std::deque<Job>*>> layout;
    switch (opt_.mode) {
        case Mode::off:
        case Mode::sync: layout = {{"main", &front_q_}}; break;
        case Mode::async: layout = {{"runner", &front_q_}, {"launch", &launch_q_}}; break;
        case Mode::pipeline:
        case Mode::hetero:
            layout = {{"infer", &front_q_}, {"resize", &resize_q_}, {"launch", &launch_q_}};
            break;
    }
    if (opt_.mode == Mode::async) launch_ = 1;
    if (opt_.mode == Mode::pipeline || opt_.mode == Mode::hetero) {
        resize_ = 1;
        launch_ = 2;
    }
    if (opt_.mode == Mode::hetero)
        for (int i = 0; i < p_.threads - 3; ++i) layout.emplace_back(fmt::format("cpu{}", i), &cpu_q_);
    for (std::size_t i = 0; i < layout.size(); ++i) {
        Thread t;
        t.name = layout[i].first;
        t.queue = layout[i].second;
        t.tid = static_cast<int>(i) + 1;
        threads_.push_back(std::move(t));
    }
    if (tracing_) {
        trace_->process(kTracePid, "host", 1);
        for (const Thread& t : threads_) trace_->thread(kTracePid, t.tid, "host " + t.name, t.tid);
    }

    for (std::size_t o = 0; o < plan_.ops.size(); ++o) {
        if (gated_.end_event[o] != kNoEvent) {
            op_of_end_[gated_.end_event[o]] = static_cast<int>(o);
            watched_[gated_.end_event[o]] = 1;
        }
        for (EventIndex e : gated_.cpu_waits[o]) watched_[e] = 1;
    }
    die_.scalar().on_event_fired = [this](EventIndex e) { on_fired(e); };
    if (!plan_.ops.empty()) front_q_.push_back(Job{JobKind::front, next_front_++});
    scheduler_.at(0, *this, kReevaluate);
}

double HostRuntime::cost(int op, Stage s) const {
    return stage_cost_us(p_, plan_.ops[static_cast<std::size_t>(op)].type, s, opt_.dynamic_shapes);
}

// ---------------------------------------------------------------------------
// Steps of each job.

// The breakdown group of a stage (docs/host.md, "Where host time goes");
// sync and copy are grouped by the step that needs them.
static std::string bucket_of(const std::string& stage) {
    if (stage == "prepare" || stage == "infer") return "infer";
    if (stage == "alloc" || stage == "launch" || stage == "submit" || stage == "free") return "launch";
    if (stage == "push" || stage == "pop" || stage == "wake") return "queue";
    if (stage == "frontend" || stage == "resize" || stage == "cpu") return stage;
    return {};
}

void HostRuntime::add_timed(std::vector<Step>& v, const char* stage, double us, int op, std::function<void()> done) {
    Step s;
    s.stage = stage;
    s.dur_ps = us_to_ps(us);
    s.done = std::move(done);
    s.label = fmt::format("{} {}", stage, plan_.ops[static_cast<std::size_t>(op)].name);
    s.bucket = bucket_of(s.stage);
    // A sleeping thread being woken, or waiting out the device's completion
    // notice, is off its core; a spinning one polls on it.
    if (!spin_ && (s.stage == "wake" || s.stage == "sync")) s.on_core = false;
    v.push_back(std::move(s));
}

void HostRuntime::add_wait(std::vector<Step>& v, WaitKind w, int op) {
    Step s;
    s.wait = w;
    const std::string& name = plan_.ops[static_cast<std::size_t>(op)].name;
    switch (w) {
        case WaitKind::drain:
            s.stage = "drain";
            s.label = "drain before " + name;
            break;
        case WaitKind::op_done:
            s.stage = "wait";
            s.label = "wait for " + name;
            break;
        case WaitKind::queue_space:
            s.stage = "queue_full";
            s.label = "queue full before " + name;
            s.bucket = "queue";
            break;
        default:
            s.stage = "inputs";
            s.label = "inputs of " + name;
            break;
    }
    if (w == WaitKind::drain) s.bucket = "drain";
    if (w == WaitKind::op_done) s.bucket = "wait";
    v.push_back(std::move(s));
}

// Handing a job to another thread's queue: a full queue on the launch path
// blocks the pusher first (back-pressure), then the push itself costs
// queue_push_us. The CPU workers' queue is not bounded.
void HostRuntime::push_steps(std::vector<Step>& v, int thread, const Job& j) {
    if (thread >= 0) {
        add_wait(v, WaitKind::queue_space, j.op);
        v.back().target = thread;
        v.back().label = fmt::format("{} queue full before {}", threads_[static_cast<std::size_t>(thread)].name,
                                     plan_.ops[static_cast<std::size_t>(j.op)].name);
    }
    add_timed(v, "push", p_.queue_push_us, j.op, [this, thread, j] { push(thread, j); });
}

// Value-dependent op: every queue drains and every issued kernel ends, then
// the value is copied to the host (docs/design.md §1.2).
void HostRuntime::drain_steps(std::vector<Step>& v, int op) {
    const HostOp& h = plan_.ops[static_cast<std::size_t>(op)];
    add_wait(v, WaitKind::drain, op);
    add_timed(v, "sync", p_.sync_latency_us, op);
    v.back().bucket = "drain";
    if (!h.value_on_host) {
        add_timed(v, "copy", link_time_us(p_.copy_latency_us, static_cast<double>(h.value_bytes), p_.link_gbps), op,
                  [this, b = h.value_bytes] {
                      ++copies_;
                      copied_bytes_ += b;
                  });
        v.back().bucket = "drain";
    }
}

// Compute-dependent op: the scheduling thread waits for its kernel, then
// copies the output shape back.
void HostRuntime::after_compute_steps(std::vector<Step>& v, int op) {
    const HostOp& h = plan_.ops[static_cast<std::size_t>(op)];
    add_wait(v, WaitKind::op_done, op);
    if (h.on_cpu) return;  // ran on a host thread: the shape is already here
    add_timed(v, "sync", p_.sync_latency_us, op);
    v.back().bucket = "wait";
    add_timed(v, "copy", link_time_us(p_.copy_latency_us, static_cast<double>(h.shape_bytes), p_.link_gbps), op,
              [this, b = h.shape_bytes] {
                  ++copies_;
                  copied_bytes_ += b;
              });
    v.back().bucket = "wait";
}

void HostRuntime::free_steps(std::vector<Step>& v, int op) {
    for (int f : plan_.ops[static_cast<std::size_t>(op)].frees)
        add_timed(v, "free", cost(op, Stage::free), op, [this, f] {
            if (!buffer_live_[static_cast<std::size_t>(f)]) return;  // e.g. a CPU op's output: host memory
            pool_.free(buffer_addr_[static_cast<std::size_t>(f)]);
            buffer_live_[static_cast<std::size_t>(f)] = 0;
            if (tracing_) trace_->counter(kTracePid, "device memory MB", now_ps(), static_cast<double>(pool_.in_use()) / 1048576.0);
        });
}

// Allocation, the launch call, one submission per batch of descriptors
// (each releases its tasks on the device), then the frees — all on one
// thread, in program order.
void HostRuntime::launch_steps(std::vector<Step>& v, int op) {
    const HostOp& h = plan_.ops[static_cast<std::size_t>(op)];
    add_timed(v, "alloc", cost(op, Stage::alloc), op, [this, op] {
        const HostOp& hh = plan_.ops[static_cast<std::size_t>(op)];
        if (!hh.out_bytes) return;
        buffer_addr_[static_cast<std::size_t>(op)] = pool_.allocate(hh.out_bytes);
        buffer_live_[static_cast<std::size_t>(op)] = 1;
        // The pool reserves whole segments from the driver; outgrowing them
        // costs a driver allocation call (the next step).
        const auto seg = static_cast<std::uint64_t>(p_.pool_segment_mb * 1048576.0);
        const std::uint64_t need = seg ? (pool_.reserved() + seg - 1) / seg * seg : pool_.reserved();
        grew_ = need > pool_segments_bytes_;
        if (grew_) {
            pool_segments_bytes_ = need;
            ++pool_grows_;
        }
        if (tracing_) trace_->counter(kTracePid, "device memory MB", now_ps(), static_cast<double>(pool_.in_use()) / 1048576.0);
    });
    add_timed(v, "alloc", 0, op);
    v.back().label = "grow pool " + h.name;
    v.back().dur_at_start = [this] { return grew_ ? us_to_ps(p_.pool_grow_us) : 0; };
    add_timed(v, "launch", cost(op, Stage::launch), op, [this] {
        ++launches_;
        first_launch_ps_ = std::min(first_launch_ps_, now_ps());
    });
    const auto& batches = gated_.batches[static_cast<std::size_t>(op)];
    const double per = static_cast<double>(p_.descriptor_bytes + p_.param_block_bytes);
    for (std::size_t b = 0; b < batches.size(); ++b) {
        const std::uint32_t n = batches[b].second;
        add_timed(v, "submit", link_time_us(p_.submit_latency_us, per * n, p_.link_gbps), op, [this, op, b, n, per] {
            ++submissions_;
            descriptors_ += n;
            submitted_bytes_ += static_cast<std::uint64_t>(per * n);
            const int launcher = launch_ < 0 ? front_ : launch_;
            const Thread& th = threads_[static_cast<std::size_t>(launcher)];
            submits_.push_back(Submit{op, b, th.tid, th.step_start, now_ps()});
            // The device work follows the launching thread's time (its stages
            // split the host part of the critical path).
            die_.scalar().signal_external(gated_.batches[static_cast<std::size_t>(op)][b].first,
                                          HostGate{gate_.since_ps, gate_.after_task, launcher});
        });
        v.back().label = fmt::format("submit {} [{}/{}] {} desc", h.name, b + 1, batches.size(), n);
    }
    free_steps(v, op);
}

void HostRuntime::start_job(Thread& t, const Job& j, bool woken) {
    t.job = j;
    t.has_job = true;
    t.steps.clear();
    t.step = 0;
    t.job_start = now_ps();
    const int op = j.op;
    const HostOp& h = plan_.ops[static_cast<std::size_t>(op)];
    auto& v = t.steps;
    // A job taken from a queue: a thread that had gone idle is woken first.
    if (j.kind != JobKind::front) {
        if (woken) {
            add_timed(v, "wake", spin_ ? p_.spin_latency_us : p_.wake_latency_us, op, [this] { ++wakeups_; });
        }
        add_timed(v, "pop", p_.queue_pop_us, op);
    }
    switch (j.kind) {
        case JobKind::front: {
            // The framework frontend runs on the caller thread for every op.
            add_timed(v, "frontend", cost(op, Stage::frontend), op);
            if (h.on_cpu) {
                // A CPU-subgraph op skips the device launch path (prepare,
                // InferShape, Resize, Launch): its CPU kernel does its own
                // shape work inside cpu.op_overhead_us.
                if (h.value_dependent) drain_steps(v, op);
                push_steps(v, -1, Job{JobKind::cpu, op});
                if (h.compute_dependent) after_compute_steps(v, op);
                break;
            }
            add_timed(v, "prepare", cost(op, Stage::prepare), op);
            if (h.value_dependent) drain_steps(v, op);
            add_timed(v, "infer", cost(op, Stage::infer), op);
            if (resize_ < 0) add_timed(v, "resize", cost(op, Stage::resize), op);
            if (resize_ >= 0) {
                push_steps(v, resize_, Job{JobKind::resize, op});
            } else if (!h.on_device()) {
                add_timed(v, "enqueue", 0, op, [this, op] { mark_done(op); });
            } else if (launch_ >= 0) {
                push_steps(v, launch_, Job{JobKind::launch, op});
            } else {
                launch_steps(v, op);
            }
            if (h.compute_dependent) after_compute_steps(v, op);
            break;
        }
        case JobKind::resize:
            add_timed(v, "resize", cost(op, Stage::resize), op);
            if (h.on_device()) push_steps(v, launch_, Job{JobKind::launch, op});
            else add_timed(v, "enqueue", 0, op, [this, op] { mark_done(op); });
            break;
        case JobKind::launch: launch_steps(v, op); break;
        case JobKind::cpu: {
            add_wait(v, WaitKind::cpu_inputs, op);
            if (h.d2h_bytes) {
                add_timed(v, "copy", link_time_us(p_.copy_latency_us, static_cast<double>(h.d2h_bytes), p_.link_gbps), op,
                          [this, b = h.d2h_bytes] {
                              ++copies_;
                              copied_bytes_ += b;
                          });
                v.back().bucket = "cpu";
            }
            add_timed(v, "cpu", h.cpu_us, op, [this] {
                ++cpu_ops_run_;  // its compute interval is taken in wake()
            });
            if (h.h2d_bytes) {
                add_timed(v, "copy", link_time_us(p_.copy_latency_us, static_cast<double>(h.h2d_bytes), p_.link_gbps), op,
                          [this, b = h.h2d_bytes] {
                              ++copies_;
                              copied_bytes_ += b;
                          });
                v.back().bucket = "cpu";
            }
            add_timed(v, "signal", 0, op, [this, op] {
                for (const auto& [e, n] : gated_.cpu_signals[static_cast<std::size_t>(op)])
                    for (std::uint32_t i = 0; i < n; ++i) die_.scalar().signal_external(e, gate_);
                mark_done(op);
            });
            free_steps(v, op);
            break;
        }
    }
}

void HostRuntime::finish_job(Thread& t) {
    const std::uint64_t now = now_ps();
    if (tracing_ && now > t.job_start) {
        static const char* kinds[] = {"front", "resize", "launch", "cpu"};
        const HostOp& h = plan_.ops[static_cast<std::size_t>(t.job.op)];
        trace_->complete(kTracePid, t.tid, h.name, "host.op", t.job_start, now - t.job_start,
                         fmt::format(R"("op":"{}","type":"{}","job":"{}")", json_escape(h.name), h.type,
                                     kinds[static_cast<int>(t.job.kind)]));
    }
    if (t.job.kind == JobKind::front && next_front_ < static_cast<int>(plan_.ops.size()))
        front_q_.push_back(Job{JobKind::front, next_front_++});
    t.has_job = false;
    t.steps.clear();
    t.step = 0;
}

void HostRuntime::push(int thread, const Job& j) {
    if (thread < 0) {  // the CPU workers' shared queue
        cpu_q_.push_back(j);
        return;
    }
    std::deque<Job>* q = threads_[static_cast<std::size_t>(thread)].queue;
    q->push_back(j);
    if (tracing_)
        trace_->counter(kTracePid, fmt::format("{} queue", threads_[static_cast<std::size_t>(thread)].name), now_ps(),
                        static_cast<double>(q->size()));
}

void HostRuntime::mark_done(int op) {
    if (done_[static_cast<std::size_t>(op)]) return;
    done_[static_cast<std::size_t>(op)] = 1;
    done_ps_[static_cast<std::size_t>(op)] = now_ps();
    ++ops_done_;
}

// ---------------------------------------------------------------------------
// The engine.

bool HostRuntime::satisfied(const Step& s, int op) const {
    switch (s.wait) {
        case WaitKind::none: return true;
        case WaitKind::drain:
            for (int j = 0; j < op; ++j)
                if (!done_[static_cast<std::size_t>(j)]) return false;
            return true;
        case WaitKind::op_done: return done_[static_cast<std::size_t>(op)] != 0;
        case WaitKind::cpu_inputs:
            for (EventIndex e : gated_.cpu_waits[static_cast<std::size_t>(op)])
                if (!die_.scalar().events()[e].fired) return false;
            return true;
        case WaitKind::queue_space:
            return threads_[static_cast<std::size_t>(s.target)].queue->size() < static_cast<std::size_t>(p_.launch_queue_depth);
    }
    return true;
}

// A spinning thread polls on a core whenever it is not running a timed step,
// until the host has seen every op through.
bool HostRuntime::spinning(const Thread& t) const { return spin_ && !t.timed && ops_done_ < plan_.ops.size(); }

void HostRuntime::account(const Thread& t, const std::string& bucket, std::uint64_t ps) {
    if (bucket.empty() || ps == 0) return;
    breakdown_ps_[bucket] += ps;
    const auto i = static_cast<std::size_t>(&t - threads_.data());
    if (spans_.size() <= i) spans_.resize(threads_.size());
    const std::uint64_t now = now_ps();
    auto& v = spans_[i];
    if (!v.empty() && v.back().stage == bucket && v.back().end_ps == now - ps) v.back().end_ps = now;
    else v.push_back(HostSpan{now - ps, now, bucket});
}

// Posts the end of t's running step: its remaining work at the current speed
// (off-core steps always run at full speed).
void HostRuntime::schedule_end(Thread& t) {
    const Step& s = t.steps[t.step];
    const double rate = s.on_core ? rate_ : 1.0;
    const auto left = static_cast<std::uint64_t>(std::ceil(t.remaining_ps / rate - 1e-6));
    ++t.gen;
    scheduler_.at(now_ps() + left, *this, (t.gen << kThreadBits) | static_cast<std::uint64_t>(&t - threads_.data() + 1));
}

// Processor sharing of chip.host.cores: every on-core step (and every
// spinning waiter) gets an equal share; with more of them than cores each
// runs at cores / demand of full speed. Called once the host has settled at
// the current time; reschedules the running steps only when the speed
// changed, so an uncontended host keeps its exact step ends.
void HostRuntime::rebalance() {
    const std::uint64_t now = now_ps();
    std::size_t demand = 0;
    for (const Thread& t : threads_) demand += (t.timed && t.steps[t.step].on_core) || spinning(t);
    peak_demand_ = std::max(peak_demand_, demand);
    const double rate = demand > static_cast<std::size_t>(p_.cores) ? static_cast<double>(p_.cores) / static_cast<double>(demand) : 1.0;
    if (rate_ < 1.0) oversubscribed_ps_ += now - rate_since_ps_;
    rate_since_ps_ = now;
    if (rate == rate_) return;
    for (Thread& t : threads_) {
        if (!t.timed || !t.steps[t.step].on_core) continue;
        t.remaining_ps = std::max(0.0, t.remaining_ps - static_cast<double>(now - t.last_ps) * rate_);
        t.last_ps = now;
    }
    rate_ = rate;
    for (Thread& t : threads_)
        if (t.timed && t.steps[t.step].on_core) schedule_end(t);
}

bool HostRuntime::advance(Thread& t) {
    bool any = false;
    const std::uint64_t now = now_ps();
    for (;;) {
        if (t.timed) return any;
        if (!t.has_job) {
            if (t.queue->empty()) {
                t.idle = true;  // asleep (or spinning) until a push
                return any;
            }
            const Job j = t.queue->front();
            t.queue->pop_front();
            if (tracing_ && t.queue != &front_q_ && t.queue != &cpu_q_)
                trace_->counter(kTracePid, t.name + " queue", now, static_cast<double>(t.queue->size()));
            start_job(t, j, t.idle);
            t.idle = false;
            any = true;
        }
        if (t.step == t.steps.size()) {
            finish_job(t);
            any = true;
            continue;
        }
        Step& s = t.steps[t.step];
        if (s.wait != WaitKind::none) {
            if (!t.waiting) {
                t.waiting = true;
                t.wait_start = now;
                if (s.wait == WaitKind::drain) ++drains_;
                if (s.wait == WaitKind::op_done) ++waits_;
                if (tracing_ && s.wait != WaitKind::cpu_inputs)
                    trace_->instant(kTracePid, t.tid, s.label, now,
                                    fmt::format(R"("op":"{}")", json_escape(plan_.ops[static_cast<std::size_t>(t.job.op)].name)));
            }
            if (!satisfied(s, t.job.op)) return any;
            const std::uint64_t waited = now - t.wait_start;
            if (s.wait == WaitKind::drain) drain_ps_ += waited;
            if (s.wait == WaitKind::op_done) wait_ps_ += waited;
            if (waited > 0) gate_ = HostGate{now, last_fired_by_, static_cast<int>(&t - threads_.data())};
            if (s.wait == WaitKind::queue_space && waited > 0) {
                ++queue_full_waits_;
                queue_full_ps_ += waited;
            }
            account(t, s.bucket, waited);
            if (tracing_ && waited > 0)
                trace_->complete(kTracePid, t.tid, s.label, "host." + s.stage, t.wait_start, waited,
                                 fmt::format(R"("op":"{}")", json_escape(plan_.ops[static_cast<std::size_t>(t.job.op)].name)));
            t.waiting = false;
            ++t.step;
            any = true;
            continue;
        }
        if (s.dur_at_start) s.dur_ps = s.dur_at_start();
        if (s.dur_ps == 0) {
            const auto fn = s.done;
            ++t.step;
            if (fn) fn();
            any = true;
            continue;
        }
        t.timed = true;
        t.step_start = now;
        t.remaining_ps = static_cast<double>(s.dur_ps);
        t.last_ps = now;
        schedule_end(t);
        return true;
    }
}

void HostRuntime::progress() {
    for (bool changed = true; changed;) {
        changed = false;
        for (Thread& t : threads_) changed = advance(t) || changed;
    }
    rebalance();
}

void HostRuntime::wake(std::uint64_t action) {
    count_event(EventKind::host);
    if (action != kReevaluate) {
        Thread& t = threads_[static_cast<std::size_t>((action & ((1u << kThreadBits) - 1)) - 1)];
        if ((action >> kThreadBits) != t.gen || !t.timed) return;  // rescheduled since: stale
        const Step& s = t.steps[t.step];
        const std::uint64_t now = now_ps();
        const std::uint64_t dur = now - t.step_start;
        t.timed = false;
        t.busy_ps += dur;
        t.stage_ps[s.stage] += dur;
        stage_ps_[s.stage] += dur;
        account(t, s.bucket, dur);
        if (s.stage == "cpu") cpu_busy_.emplace_back(t.step_start, now);
        if (now >= host_end_ps_) end_thread_ = static_cast<int>(&t - threads_.data());
        host_end_ps_ = std::max(host_end_ps_, now);
        if (tracing_)
            trace_->complete(kTracePid, t.tid, s.label, "host." + s.stage, t.step_start, dur,
                             fmt::format(R"("op":"{}")", json_escape(plan_.ops[static_cast<std::size_t>(t.job.op)].name)));
        const auto fn = s.done;
        ++t.step;
        if (fn) fn();
    }
    progress();
}

void HostRuntime::on_fired(EventIndex e) {
    if (e >= watched_.size() || !watched_[e]) return;
    last_fired_by_ = die_.scalar().events()[e].fired_by;
    if (op_of_end_[e] >= 0) mark_done(op_of_end_[e]);
    scheduler_.at(now_ps(), *this, kReevaluate);
}

// ---------------------------------------------------------------------------
// After the run.

void HostRuntime::end_critical_path() {
    spans_.resize(threads_.size());
    die_.set_host_tail(HostTail{host_end_ps_, gate_, end_thread_, std::move(spans_)});
}

bool HostRuntime::finished() const { return ops_done_ == plan_.ops.size(); }

std::string HostRuntime::stall_report() const {
    if (finished()) return {};
    for (const Thread& t : threads_)
        if (t.has_job && t.step < t.steps.size())
            return fmt::format("host runtime stalled: thread '{}' at '{}' ({} of {} ops done)", t.name, t.steps[t.step].label,
                               ops_done_, plan_.ops.size());
    return fmt::format("host runtime stalled: {} of {} ops done", ops_done_, plan_.ops.size());
}

void HostRuntime::emit_flows() {
    if (!tracing_) return;
    const SimContext& ctx = die_.context();
    std::uint64_t id = std::uint64_t(1) << 40;  // apart from the die's flow ids
    for (const Submit& s : submits_) {
        const auto& tasks = gated_.batch_tasks[static_cast<std::size_t>(s.op)][s.batch];
        const TaskTiming* first = nullptr;
        std::uint32_t first_task = 0;
        for (std::uint32_t t : tasks) {
            const TaskTiming& tm = ctx.timing[t];
            if (tm.done && (!first || tm.start_ps < first->start_ps)) first = &tm, first_task = t;
        }
        if (!first) continue;
        const std::string op = ctx.stream.label(ctx.stream.tasks[first_task]);
        trace_->flow(id++, {kTracePid, s.tid, s.start_ps, s.end_ps},
                     {ctx.trace_pid, first->trace_tid, first->start_ps, first->end_ps, op});
    }
}

void HostRuntime::collect(Stats& s) const {
    const SimContext& ctx = die_.context();
    std::vector<Interval> busy;
    std::uint64_t device_end = 0;
    for (const TaskTiming& t : ctx.timing) {
        if (!t.done) continue;
        busy.emplace_back(t.start_ps, t.end_ps);
        device_end = std::max(device_end, t.end_ps);
    }
    const auto device = merge_intervals(std::move(busy));
    const std::uint64_t device_busy = total_length(device);
    const std::uint64_t e2e = std::max(host_end_ps_, device_end);
    const double ps_per_cycle = ctx.chip.ps_per_cycle();
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; };

    s.set("host.mode", to_string(opt_.mode));
    s.set("host.dynamic_shapes", opt_.dynamic_shapes ? 1 : 0);
    s.set("host.submit_batch", static_cast<std::uint64_t>(opt_.submit_batch));
    s.set("host.end_to_end_ns", ns(e2e));
    s.set("host.end_to_end_cycles", static_cast<std::int64_t>(std::llround(static_cast<double>(e2e) / ps_per_cycle)));
    s.set("host.host_end_ns", ns(host_end_ps_));
    s.set("host.device_end_ns", ns(device_end));
    s.set("host.first_launch_ns", first_launch_ps_ == UINT64_MAX ? 0.0 : ns(first_launch_ps_));
    s.set("host.device_busy_ns", ns(device_busy));
    s.set("host.device_idle_fraction", e2e ? 1.0 - static_cast<double>(device_busy) / static_cast<double>(e2e) : 0.0);
    s.set("host.ops", static_cast<std::uint64_t>(plan_.ops.size()));
    s.set("host.views", static_cast<std::uint64_t>(plan_.views));
    s.set("host.cpu_ops", cpu_ops_run_);
    s.set("host.value_dependent_ops", static_cast<std::uint64_t>(plan_.value_dependent));
    s.set("host.compute_dependent_ops", static_cast<std::uint64_t>(plan_.compute_dependent));
    s.set("host.drains", drains_);
    s.set("host.drain_ns", ns(drain_ps_));
    s.set("host.waits", waits_);
    s.set("host.wait_ns", ns(wait_ps_));
    s.set("host.launches", launches_);
    s.set("host.submissions", submissions_);
    s.set("host.descriptors", descriptors_);
    s.set("host.submitted_bytes", submitted_bytes_);
    s.set("host.copies", copies_);
    s.set("host.copied_bytes", copied_bytes_);
    s.set("host.peak_device_memory_bytes", plan_.resident_bytes + pool_.peak_in_use());
    s.set("host.memory.resident_bytes", plan_.resident_bytes);
    pool_.report(s, "host.memory.");
    s.set("host.threads.count", static_cast<std::uint64_t>(threads_.size()));
    for (const Thread& t : threads_) {
        s.set("host.threads." + t.name + ".busy_ns", ns(t.busy_ps));
        s.set("host.threads." + t.name + ".utilization", e2e ? static_cast<double>(t.busy_ps) / static_cast<double>(e2e) : 0.0);
        for (const auto& [stage, ps] : t.stage_ps) s.set("host.threads." + t.name + ".stages." + stage + "_ns", ns(ps));
    }
    for (const auto& [stage, ps] : stage_ps_) s.set("host.stages." + stage + ".busy_ns", ns(ps));
    // Where host time goes: thread time per stage group, waits included
    // (docs/host.md, "Where host time goes"); every group, zero or not.
    for (const char* b : kBreakdown) {
        const auto it = breakdown_ps_.find(b);
        s.set(std::string("host.breakdown.") + b + "_ns", ns(it == breakdown_ps_.end() ? 0 : it->second));
    }
    s.set("host.worker_wait", p_.worker_wait);
    s.set("host.wakeups", wakeups_);
    s.set("host.queue_full_waits", queue_full_waits_);
    s.set("host.queue_full_ns", ns(queue_full_ps_));
    s.set("host.memory.pool_grows", pool_grows_);
    s.set("host.memory.pool_segments_bytes", pool_segments_bytes_);
    s.set("host.cores.count", static_cast<std::uint64_t>(p_.cores));
    s.set("host.cores.peak_demand", static_cast<std::uint64_t>(peak_demand_));
    s.set("host.cores.oversubscribed_ns", ns(oversubscribed_ps_));
    if (opt_.mode == Mode::hetero) {
        const auto cpu = merge_intervals(cpu_busy_);
        s.set("host.cpu.busy_ns", ns(total_length(cpu)));
        s.set("host.cpu.device_overlap_ns", ns(intersection_length(cpu, device)));
    }
}

}  // namespace npusim::host
