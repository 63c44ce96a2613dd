#include "engine/wake_scheduler.hpp"

namespace npusim {

namespace {
constexpr std::uint64_t kNever = ~std::uint64_t{0};
}

WakeScheduler::WakeScheduler(sc_core::sc_module_name name) : sc_core::sc_module(name), armed_ps_(kNever) {
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
    if (hub_) hub_->arm(*this, t_ps);
    else ev_.notify(sc_core::sc_time::from_value(t_ps - now));
}

void WakeScheduler::attach(WakeHub& hub, int lane) {
    hub_ = &hub;
    lane_ = lane;
    if (head_ < queue_.size()) hub.arm(*this, queue_[head_].t);
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

void WakeScheduler::run_until(std::uint64_t end) {
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
    if (head_ < queue_.size()) arm(queue_[head_].t, detail::running_now_ps);
    else if (hub_) hub_->arm(*this, kNever);
}

// --- WakeHub ---------------------------------------------------------------------

WakeHub::WakeHub(sc_core::sc_module_name name) : sc_core::sc_module(name), armed_ps_(kNever) {
    SC_HAS_PROCESS(WakeHub);
    SC_METHOD(run);
    sensitive << ev_;
    dont_initialize();
}

void WakeHub::arm(WakeScheduler& s, std::uint64_t t_ps) {
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
    if (window_ps_ == 0) {
        while (!heap_.empty() && lanes_[heap_.front()].t <= now) lanes_[heap_.front()].s->run_due(now);
    } else {
        const std::uint64_t end = now + window_ps_;
        while (!heap_.empty() && lanes_[heap_.front()].t < end) lanes_[heap_.front()].s->run_until(end);
    }
    detail::running_now_ps = kNever;
    running_ = false;
    if (!heap_.empty()) notify(now);
}

}  // namespace npusim
