#include "engine/wake_scheduler.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace npusim {

namespace {
constexpr std::uint64_t kNever = ~std::uint64_t{0};
}

WakeScheduler::WakeScheduler(sc_core::sc_module_name name, Kernel kernel)
    : sc_core::sc_module(name), armed_ps_(kNever), alone_(kernel == Kernel::alone) {
    if (alone_) return;
    SC_HAS_PROCESS(WakeScheduler);
    SC_METHOD(run);
    sensitive << ev_;
    dont_initialize();
}

void WakeScheduler::at(std::uint64_t t_ps, Wakeable& w, std::uint64_t action) {
    const std::uint64_t now = now_ps();
    if (t_ps < now) t_ps = now;
    // Never before what this lane has already run (another lane's action
    // within a hub window may run at an earlier time than this lane's).
    if (t_ps < done_ps_) t_ps = done_ps_;
    // Insert from the back, after every entry not later than it (so
    // same-time actions run in post order). Written field by field into its
    // slot: built on the stack and copied, it cost a store-forwarding stall
    // (profiled).
    std::size_t i = queue_.size();
    queue_.emplace_back();
    while (i > head_ && t_ps < queue_[i - 1].t) {
        queue_[i] = queue_[i - 1];
        --i;
    }
    Entry& e = queue_[i];
    e.t = t_ps;
    e.w = &w;
    e.action = action;
    // While running, the loop below picks up actions for now and arms for
    // the next one when it ends.
    if (!running_ && t_ps < armed_ps_) arm(t_ps, now);
}

void WakeScheduler::pop() {
    if (++head_ == queue_.size()) {
        queue_.clear();
        head_ = 0;
    } else if (head_ >= 256 && 2 * head_ >= queue_.size()) {
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
    }
}

void WakeScheduler::arm(std::uint64_t t_ps, std::uint64_t now) {
    armed_ps_ = t_ps;
    if (alone_) return;  // run_alone() takes the next action itself
    if (hub_) hub_->arm(*this, t_ps);
    else ev_.notify(sc_core::sc_time::from_value(t_ps - now));
}

void WakeScheduler::attach(WakeHub& hub, int lane) {
    hub_ = &hub;
    lane_ = lane;
    hub.arm(*this, head_ < queue_.size() ? queue_[head_].t : kNever);  // known to the hub even while idle
}

std::uint64_t WakeScheduler::next_ps() const { return head_ < queue_.size() ? queue_[head_].t : kNever; }

void WakeScheduler::run() {
    ++sim_activations_total();
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    detail::running_now_ps = now;
    run_due(now);
    detail::running_now_ps = kNever;
}

void WakeScheduler::run_due(std::uint64_t now) {
    running_ = true;
    done_ps_ = now;
    armed_ps_ = kNever;
    while (head_ < queue_.size() && queue_[head_].t <= now) {
        Wakeable* w = queue_[head_].w;
        const std::uint64_t action = queue_[head_].action;
        pop();
        w->wake(action);
    }
    running_ = false;
    if (head_ < queue_.size()) arm(queue_[head_].t, now);
    else if (hub_) hub_->arm(*this, kNever);
}

std::uint64_t WakeScheduler::run_alone() {
    if (!alone_ || hub_)
        throw std::logic_error("WakeScheduler::run_alone: a scheduler built to run alone, not attached");
    struct Restore {  // also when an action throws
        EventCounts events;
        ~Restore() {
            detail::running_now_ps = kNever;
            sim_event_counts() = events;
        }
    } restore{sim_event_counts()};
    std::uint64_t last = 0;
    while (head_ < queue_.size()) {
        last = queue_[head_].t;
        detail::running_now_ps = last;
        run_due(last);
    }
    return last;
}

void WakeScheduler::run_window(std::uint64_t end) {
    running_ = true;
    armed_ps_ = kNever;
    while (head_ < queue_.size() && queue_[head_].t < end) {
        Wakeable* w = queue_[head_].w;
        const std::uint64_t action = queue_[head_].action;
        detail::running_now_ps = done_ps_ = queue_[head_].t;
        pop();
        w->wake(action);
    }
    running_ = false;
}

// The hub took this lane out of its heap for the window; an action queued
// for it at the window's end may have put it back already.
void WakeScheduler::rearm() {
    if (head_ < queue_.size() && queue_[head_].t < armed_ps_) arm(queue_[head_].t, detail::running_now_ps);
}

// --- WakeHub ---------------------------------------------------------------------

namespace {
// 1 on the hub's second thread, 0 elsewhere: which of WakeHub::pos_ is ours.
thread_local int t_hub_thread = 0;

// A spin-wait hint to the core (x86's PAUSE), nothing elsewhere.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Waits until ready(): the other thread is usually a few microseconds from
// it, so spin first and give the core away only after that (a yield per
// check cost more system time than the wait itself).
template <class F>
void wait_until(F&& ready) {
    for (int i = 0; !ready(); ++i) {
        if (i < 4096) cpu_relax();
        else std::this_thread::yield();
    }
}
}  // namespace

// The second thread: it runs its lanes of a window when the SystemC thread
// hands them over, and waits (spinning briefly, then on a condition
// variable) for the next window in between.
struct WakeHub::Worker {
    explicit Worker(WakeHub& hub) : thread([this, &hub] { loop(hub); }) {}
    ~Worker() {
        {
            std::lock_guard<std::mutex> lk(m);
            quit = true;
        }
        cv.notify_one();
        thread.join();
    }

    // The SystemC thread's side.
    void start(std::uint64_t end_) {
        end = end_;
        error = nullptr;
        {
            std::lock_guard<std::mutex> lk(m);
            go.fetch_add(1, std::memory_order_release);
        }
        cv.notify_one();
    }
    void wait() {
        wait_until([&] { return done.load(std::memory_order_acquire) == go.load(std::memory_order_relaxed); });
    }

    void loop(WakeHub& hub) {
        t_hub_thread = 1;
        std::uint64_t seen = 0;
        for (;;) {
            for (int spin = 0; spin < 4096 && go.load(std::memory_order_acquire) == seen; ++spin) cpu_relax();
            if (go.load(std::memory_order_acquire) == seen) {
                std::unique_lock<std::mutex> lk(m);
                cv.wait(lk, [&] { return quit || go.load(std::memory_order_acquire) != seen; });
                if (quit) return;
            }
            seen = go.load(std::memory_order_acquire);
            const EventCounts before = sim_event_counts();
            try {
                hub.run_lanes(1, end);
            } catch (...) {
                error = std::current_exception();
                hub.pos_[1].store(kNoLane, std::memory_order_release);  // never hold up the other thread
            }
            events = sim_event_counts() - before;
            done.store(seen, std::memory_order_release);
        }
    }

    std::mutex m;
    std::condition_variable cv;
    bool quit = false;
    std::atomic<std::uint64_t> go{0}, done{0};
    std::uint64_t end = 0;
    std::exception_ptr error;
    EventCounts events;        // counted on this thread during the last window
    std::thread thread;        // last: starts once the rest is built
};

WakeHub::WakeHub(sc_core::sc_module_name name) : sc_core::sc_module(name), armed_ps_(kNever) {
    SC_HAS_PROCESS(WakeHub);
    SC_METHOD(run);
    sensitive << ev_;
    dont_initialize();
}

WakeHub::~WakeHub() = default;

void WakeHub::serialize() {
    if (!parallel_) return;
    const int me = t_hub_thread;
    const std::size_t p = pos_[me].load(std::memory_order_relaxed);
    wait_until([&] { return pos_[1 - me].load(std::memory_order_acquire) >= p; });
}

void WakeHub::arm(WakeScheduler& s, std::uint64_t t_ps) {
    if (in_window_)
        throw std::logic_error("WakeHub: a die acted on another die's scheduler inside a window (a cross-die effect not "
                               "queued for the window's end)");
    const auto lane = static_cast<std::uint32_t>(s.lane());
    if (lane >= lanes_.size()) lanes_.resize(lane + 1);
    lanes_[lane].s = &s;
    place(lane, t_ps);
    if (!running_ && !heap_.empty()) notify(now_ps());
}

void WakeHub::sift_up(std::uint32_t i) {
    while (i > 0) {
        const std::uint32_t parent = (i - 1) / 2;
        if (!before(heap_[i], heap_[parent])) break;
        std::swap(heap_[i], heap_[parent]);
        lanes_[heap_[i]].pos = i;
        lanes_[heap_[parent]].pos = parent;
        i = parent;
    }
}

void WakeHub::sift_down(std::uint32_t i) {
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
        const std::uint32_t l = 2 * i + 1, r = l + 1;
        std::uint32_t best = i;
        if (l < n && before(heap_[l], heap_[best])) best = l;
        if (r < n && before(heap_[r], heap_[best])) best = r;
        if (best == i) return;
        std::swap(heap_[i], heap_[best]);
        lanes_[heap_[i]].pos = i;
        lanes_[heap_[best]].pos = best;
        i = best;
    }
}

void WakeHub::place(std::uint32_t lane, std::uint64_t t) {
    Lane& l = lanes_[lane];
    const bool in_heap = l.t != kNever;
    if (t == kNever) {
        if (!in_heap) return;
        const std::uint32_t i = l.pos;
        l.t = kNever;
        const std::uint32_t last = heap_.back();
        heap_.pop_back();
        if (last == lane) return;
        heap_[i] = last;
        lanes_[last].pos = i;
        sift_down(i);
        sift_up(lanes_[last].pos);
        return;
    }
    if (!in_heap) {
        l.t = t;
        l.pos = static_cast<std::uint32_t>(heap_.size());
        heap_.push_back(lane);
        sift_up(l.pos);
        return;
    }
    const std::uint64_t old = l.t;
    l.t = t;
    if (t < old) sift_up(l.pos);
    else sift_down(l.pos);
}

void WakeHub::run_window(std::uint64_t end) {
    // The due lanes in (time, lane) order, the order they run in on one thread.
    due_.clear();
    while (!heap_.empty() && lanes_[heap_.front()].t < end) {
        const std::uint32_t lane = heap_.front();
        due_.push_back(lane);
        place(lane, kNever);
    }
    // Lanes below `half` run on this thread, the others on the second (a
    // die's programs stay on one thread: their fibers never migrate; every
    // lane is known from attach on, so `half` never changes).
    const auto half = static_cast<std::uint32_t>(threads_ < 2 ? lanes_.size() : lanes_.size() / 2);
    for (auto& m : mine_) m.clear();
    for (std::size_t p = 0; p < due_.size(); ++p) mine_[due_[p] < half ? 0 : 1].push_back(p);
    in_window_ = true;
    if (mine_[1].empty()) {
        run_lanes(0, end);
    } else {
        if (!worker_) worker_ = std::make_unique<Worker>(*this);
        for (int k = 0; k < 2; ++k) pos_[k].store(mine_[k].empty() ? kNoLane : mine_[k].front(), std::memory_order_relaxed);
        parallel_ = true;
        worker_->start(end);
        std::exception_ptr mine;
        try {
            run_lanes(0, end);
        } catch (...) {
            mine = std::current_exception();
            pos_[0].store(kNoLane, std::memory_order_release);
        }
        worker_->wait();
        parallel_ = false;
        sim_event_counts() += worker_->events;
        if (mine) std::rethrow_exception(mine);
        if (worker_->error) std::rethrow_exception(worker_->error);
    }
    in_window_ = false;
}

void WakeHub::run_lanes(int thread, std::uint64_t end) {
    std::atomic<std::size_t>& pos = pos_[thread];
    for (std::size_t p : mine_[thread]) {
        pos.store(p, std::memory_order_release);
        lanes_[due_[p]].s->run_window(end);
    }
    pos.store(kNoLane, std::memory_order_release);
}

void WakeHub::notify(std::uint64_t now) {
    const std::uint64_t t = lanes_[heap_.front()].t;
    if (t >= armed_ps_) return;
    armed_ps_ = t;
    ev_.notify(sc_core::sc_time::from_value(t > now ? t - now : 0));
}

void WakeHub::run() {
    ++sim_activations_total();
    running_ = true;
    armed_ps_ = kNever;
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    detail::running_now_ps = now;
    ++windows_run_;
    if (window_ps_ == 0) {
        while (!heap_.empty() && lanes_[heap_.front()].t <= now) lanes_[heap_.front()].s->run_due(now);
        if (listener_) listener_->window_over();  // links without latency: what the dies did to each other, now
    } else {
        const std::uint64_t cell_end = (now / window_ps_ + 1) * window_ps_;
        run_window(listener_ ? listener_->window_end(now, cell_end) : cell_end);
        detail::running_now_ps = now;
        if (listener_) listener_->window_over();
        for (std::uint32_t lane : due_) lanes_[lane].s->rearm();
    }
    detail::running_now_ps = kNever;
    running_ = false;
    if (!heap_.empty()) notify(now);
}

}  // namespace npusim
