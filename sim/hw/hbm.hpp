// HBM behind the L2: channels with address interleaving, a usable share of
// peak that falls when reads and writes mix (each read <-> write switch of a
// channel idles it for the turnaround), and a latency that grows with load.
//
// Still one fluid flow per transfer (BandwidthShare), never per burst:
// - the channels' aggregate rate is peak x efficiency(mix), re-set whenever
//   the mix of active read and write flows changes;
// - a transfer spread over few channels (a small one) is capped at what
//   those channels move: bytes x channel rate / bytes on its busiest channel;
// - latency = base + M/D/1 queueing wait of one interleave burst at the
//   offered load rho (active flows' caps over the channels' rate, at most
//   0.95): rho / (2 (1 - rho)) bursts.
#pragma once
#include <cstdint>
#include <vector>

#include "chip/chip_params.hpp"
#include "hw/bandwidth_share.hpp"

namespace npusim {

class Hbm {
public:
    explicit Hbm(const HbmParams& hbm);

    // Starts a flow of `bytes` (read or write) capped at the engine's
    // `cap` and at what the channels it covers can move. A `background`
    // flow (the L2's eager write-back) takes its share of bandwidth but
    // adds no queueing latency: the controller serves reads ahead of it.
    void add(std::uint64_t now_ps, std::uint64_t bytes, bool write, double cap_bytes_per_ps, std::uint32_t token,
             bool background = false);
    bool idle() const { return active_reads_ + active_writes_ == 0; }
    std::uint64_t next_finish_ps() { return share_.next_finish_ps(); }
    // Tokens of the flows done by now, in finishing order.
    void pop_finished(std::uint64_t now_ps, std::vector<std::uint64_t>& tokens);

    // Latency of an access finishing now: base plus queueing at the load.
    std::uint64_t latency_ps();
    double current_rate() { return share_.current_rate(); }
    std::uint64_t saturated_ps() const { return share_.saturated_ps(); }
    std::uint64_t saturated_ps(std::uint64_t now_ps) const { return share_.saturated_ps(now_ps); }
    double peak_bytes_per_ps() const { return peak_; }
    // Cap for `bytes` spread over the channels from their interleaving.
    double channel_cap(std::uint64_t bytes) const;

private:
    void refresh_capacity(std::uint64_t now_ps);

    HbmParams p_;
    double peak_;         // bytes/ps, all channels
    double channel_rate_; // bytes/ps, one channel
    std::uint64_t base_latency_ps_;
    double burst_ps_;     // one interleave block on one channel
    BandwidthShare share_;
    std::uint64_t active_reads_ = 0, active_writes_ = 0;
    double last_mix_ = 0;  // write fraction the capacity was last set for
    double demand_ = 0;    // sum of the active flows' caps (bytes/ps)
    std::vector<double> demand_of_;  // each active token's cap
    std::vector<std::uint64_t> raw_;  // reused buffer
};

}  // namespace npusim
