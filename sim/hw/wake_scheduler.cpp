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
    // Sift up from the new leaf, moving parents down into the hole. The
    // entry is written field by field into its final slot: built on the
    // stack and copied, it cost a store-forwarding stall (profiled).
    const std::uint64_t seq = seq_++;
    std::size_t i = heap_.size();
    heap_.emplace_back();
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        const Entry& p = heap_[parent];
        if (!(t_ps < p.t || (t_ps == p.t && seq < p.seq))) break;
        heap_[i] = p;
        i = parent;
    }
    Entry& e = heap_[i];
    e.t = t_ps;
    e.seq = seq;
    e.w = &w;
    e.action = action;
    // While running, the loop below picks up actions for now and arms for
    // the next one when it ends.
    if (!running_ && t_ps < armed_ps_) arm(t_ps, now);
}

void WakeScheduler::pop() {
    const std::size_t n = heap_.size() - 1;
    if (n == 0) {
        heap_.pop_back();
        return;
    }
    // Sift the last entry down from the root, then drop the last slot.
    const std::uint64_t t = heap_[n].t, seq = heap_[n].seq;
    std::size_t i = 0;
    for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
        const Entry& c = heap_[child];
        if (!(c.t < t || (c.t == t && c.seq < seq))) break;
        heap_[i] = c;
        i = child;
    }
    heap_[i] = heap_[n];
    heap_.pop_back();
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
        Wakeable* w = heap_.front().w;
        const std::uint64_t action = heap_.front().action;
        pop();
        w->wake(action);
    }
    detail::running_now_ps = kNever;
    running_ = false;
    if (!heap_.empty()) arm(heap_.front().t, now);
}

}  // namespace npusim
