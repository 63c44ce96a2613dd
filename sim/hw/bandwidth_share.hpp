// Max-min fair sharing of one bandwidth resource (HBM, L2, a link plane)
// among concurrent transfers, each also capped by its own engine's rate.
//
// Fluid model: between changes every flow moves at a constant rate; the
// water level L gives each flow min(cap, L) with the sum at most the
// capacity. Flows with the same cap always share one rate, so each cap class
// is a processor-sharing queue with a virtual clock: adding or finishing a
// flow costs O(classes + log flows), not O(flows). Plain C++, no SystemC.
#pragma once
#include <cstdint>
#include <queue>
#include <vector>

namespace npusim {

class BandwidthShare {
public:
    // capacity in bytes per picosecond (GB/s / 1000).
    explicit BandwidthShare(double capacity_bytes_per_ps);

    // Starts a flow of `bytes` at time now; `cap` is its engine's own limit
    // (bytes/ps). `token` is returned by pop_finished.
    void add(std::uint64_t now_ps, double bytes, double cap_bytes_per_ps, std::uint64_t token);

    // Earliest time a flow finishes, or UINT64_MAX when idle.
    std::uint64_t next_finish_ps() {
        if (dirty_) rebalance();
        return next_finish_;
    }

    // Advances to now and returns the tokens of flows done by then, in
    // finishing order (ties by start order).
    void pop_finished(std::uint64_t now_ps, std::vector<std::uint64_t>& tokens);

    std::size_t active() const { return active_; }
    double capacity() const { return capacity_; }
    // Changes the capacity from now on (HBM efficiency with the traffic mix).
    void set_capacity(std::uint64_t now_ps, double capacity_bytes_per_ps);
    // Aggregate rate of all active flows (bytes/ps), for bandwidth counters.
    double current_rate();
    // Time (up to the last flow's start or end) during which the capacity
    // bound: the flows wanted more than it, so some moved below their own
    // caps. A resource that never binds cannot speed a run up by growing.
    std::uint64_t saturated_ps() const { return saturated_ps_; }
    // The same up to `now_ps`: the share's state holds from its last event on.
    std::uint64_t saturated_ps(std::uint64_t now_ps) const {
        return saturated_ps_ + (saturated_ && now_ps > last_ps_ ? now_ps - last_ps_ : 0);
    }

private:
    struct Flow {
        // Constructed in place (emplace): built on the stack and copied it
        // cost a store-forwarding stall per flow (profiled).
        Flow(double f, std::uint64_t s, std::uint64_t t) : finish_v(f), seq(s), token(t) {}
        double finish_v;  // class virtual clock value at which it is done
        std::uint64_t seq;
        std::uint64_t token;
        bool operator>(const Flow& o) const {
            return finish_v != o.finish_v ? finish_v > o.finish_v : seq > o.seq;
        }
    };
    struct CapClass {
        double cap = 0;
        double rate = 0;       // current per-flow rate
        double virtual_v = 0;  // bytes served to each flow of the class so far
        std::priority_queue<Flow, std::vector<Flow>, std::greater<Flow>> flows;
    };

    void advance(std::uint64_t now_ps);
    void rebalance();  // also refreshes next_finish_
    std::uint64_t compute_next_finish() const;
    CapClass& class_for(double cap);

    double capacity_;
    std::uint64_t last_ps_ = 0;
    std::uint64_t seq_ = 0;
    std::size_t active_ = 0;
    std::uint64_t next_finish_ = UINT64_MAX;
    // Flows changed since the last rebalance. Rates matter only once time
    // moves on or someone asks for the next finish, so several flows
    // starting and ending at one instant cost one rebalance, not one each.
    bool dirty_ = false;
    bool saturated_ = false;  // as of the last rebalance
    std::uint64_t saturated_ps_ = 0;
    // The classes with flows, sorted by cap, ascending. A class that runs
    // empty leaves (its heap's storage kept in spare_ for the next new
    // cap): engines' caps vary from transfer to transfer (an L2 part is
    // capped by the slices it covers), and every event walked the dozens
    // of empty classes a die had gathered.
    std::vector<CapClass> classes_, spare_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> done_;  // reused buffer
};

}  // namespace npusim
