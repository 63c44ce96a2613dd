#include "hw/wake_scheduler.hpp"

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
    // Sift up from the new leaf, moving parents down into the hole.
    const Entry e{t_ps, seq_++, &w, action};
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!e.before(heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
    }
    heap_[i] = e;
    // While running, the loop below picks up actions for now and arms for
    // the next one when it ends.
    if (!running_ && t_ps < armed_ps_) arm(t_ps, now);
}

WakeScheduler::Entry WakeScheduler::pop() {
    const Entry top = heap_.front();
    const Entry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    // Sift the last entry down from the root.
    std::size_t i = 0;
    for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
        if (!heap_[child].before(last)) break;
        heap_[i] = heap_[child];
        i = child;
    }
    heap_[i] = last;
    return top;
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
    while (!heap_.empty() && heap_.front().t <= now) {
        const Entry e = pop();
        e.w->wake(e.action);
    }
    detail::running_now_ps = kNever;
    running_ = false;
    if (!heap_.empty()) arm(heap_.front().t, now);
}

}  // namespace npusim
