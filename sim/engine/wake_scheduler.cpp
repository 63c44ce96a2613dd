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
    ev_.notify(sc_core::sc_time::from_value(t_ps - now));
}

void WakeScheduler::run() {
    ++sim_activations_total();
    running_ = true;
    armed_ps_ = kNever;
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    detail::running_now_ps = now;
    while (head_ < queue_.size() && queue_[head_].t <= now) {
        Wakeable* w = queue_[head_].w;
        const std::uint64_t action = queue_[head_].action;
        pop();
        w->wake(action);
    }
    detail::running_now_ps = kNever;
    running_ = false;
    if (head_ < queue_.size()) arm(queue_[head_].t, now);
}

}  // namespace npusim
