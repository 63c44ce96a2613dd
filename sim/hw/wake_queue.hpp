// A module's own agenda: timed actions behind one sc_event. The module
// computes when it next needs to wake and notifies its event for then —
// one SystemC activation per due time, never a clocked process.
#pragma once
#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

#include <systemc>

namespace npusim {

inline std::uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// Every simulation event the model processes (agenda actions here, flow
// completions in the memory system), for the benchmark's event rate.
inline std::uint64_t& sim_events_total() {
    static std::uint64_t n = 0;
    return n;
}

// SystemC process activations of the model's modules (each wake method).
inline std::uint64_t& sim_activations_total() {
    static std::uint64_t n = 0;
    return n;
}

template <class Action>
class WakeQueue {
public:
    explicit WakeQueue(sc_core::sc_event& ev) : ev_(ev) {}

    void at(std::uint64_t t_ps, const Action& a) {
        heap_.push(Item{t_ps, seq_++, a});
        arm(t_ps);
    }

    // Call from the module's method: runs every action due now, in time then
    // insertion order, then re-arms for the next one.
    template <class Fn>
    void run_due(Fn&& fn) {
        ++sim_activations_total();
        armed_ = kNever;
        const std::uint64_t now = now_ps();
        while (!heap_.empty() && heap_.top().t <= now) {
            const Action a = heap_.top().action;
            heap_.pop();
            ++sim_events_total();
            fn(a);
        }
        if (!heap_.empty()) arm(heap_.top().t);
    }

    bool empty() const { return heap_.empty(); }

private:
    static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
    struct Item {
        std::uint64_t t;
        std::uint64_t seq;
        Action action;
        bool operator>(const Item& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };

    void arm(std::uint64_t t_ps) {
        if (t_ps >= armed_) return;  // an earlier wake is already pending
        armed_ = t_ps;
        const std::uint64_t now = now_ps();
        ev_.notify(sc_core::sc_time::from_value(t_ps > now ? t_ps - now : 0));
    }

    sc_core::sc_event& ev_;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap_;
    std::uint64_t seq_ = 0;
    std::uint64_t armed_ = kNever;
};

}  // namespace npusim
