#include "hw/hbm.hpp"

#include <algorithm>
#include <cmath>

#include "common/arith.hpp"
#include "chip/timing.hpp"

namespace npusim {

namespace {
constexpr std::uint64_t kWriteBit = 1ULL << 63;  // token flag: the flow is a write
// Utilisation above which the queueing term stops growing: past it the
// fluid share already stretches every flow, and the M/D/1 wait would
// diverge.
constexpr double kMaxRho = 0.95;
}  // namespace

Hbm::Hbm(const HbmParams& hbm)
    : p_(hbm),
      peak_(hbm.bandwidth_gbps / 1000.0),
      channel_rate_(peak_ / std::max(1, hbm.channels)),
      base_latency_ps_(ns_to_ps(hbm.latency_ns)),
      burst_ps_(hbm.interleave_bytes / channel_rate_),
      share_(peak_ * timing::hbm_efficiency(hbm, 0)) {}

double Hbm::channel_cap(std::uint64_t bytes) const {
    // Consecutive interleave blocks on consecutive channels: the busiest of
    // them holds ceil(blocks / channels) blocks (at most all the bytes).
    const std::uint64_t block = static_cast<std::uint64_t>(std::max(1, p_.interleave_bytes));
    const std::uint64_t channels = static_cast<std::uint64_t>(std::max(1, p_.channels));
    const std::uint64_t blocks = (bytes + block - 1) / block;
    const std::uint64_t busiest = std::min(bytes, (blocks + channels - 1) / channels * block);
    return busiest == 0 ? peak_ : channel_rate_ * static_cast<double>(bytes) / static_cast<double>(busiest);
}

void Hbm::refresh_capacity(std::uint64_t now_ps) {
    const std::uint64_t flows = active_reads_ + active_writes_;
    // The mix in eighths: a capacity change re-times every flow, so the
    // share changes only when the mix moves by a visible step.
    const double w = flows == 0 ? 0.0 : std::round(8.0 * static_cast<double>(active_writes_) / static_cast<double>(flows)) / 8.0;
    if (w == last_mix_) return;
    last_mix_ = w;
    share_.set_capacity(now_ps, peak_ * timing::hbm_efficiency(p_, w));
}

void Hbm::add(std::uint64_t now_ps, std::uint64_t bytes, bool write, double cap, std::uint32_t token, bool background) {
    (write ? active_writes_ : active_reads_) += 1;
    refresh_capacity(now_ps);
    const double c = std::min(cap, channel_cap(bytes));
    if (token >= demand_of_.size()) demand_of_.resize(token + 1, 0.0);
    demand_of_[token] = background ? 0.0 : c;
    demand_ += demand_of_[token];
    share_.add(now_ps, static_cast<double>(bytes), c, token | (write ? kWriteBit : 0));
}

void Hbm::pop_finished(std::uint64_t now_ps, std::vector<std::uint64_t>& tokens) {
    share_.pop_finished(now_ps, raw_);
    tokens.clear();
    for (std::uint64_t t : raw_) {
        (t & kWriteBit ? active_writes_ : active_reads_) -= 1;
        const std::uint64_t token = t & ~kWriteBit;
        demand_ -= demand_of_[token];
        tokens.push_back(token);
    }
    if (!raw_.empty()) refresh_capacity(now_ps);
    if (active_reads_ + active_writes_ == 0) demand_ = 0;  // no drift from rounding
}

std::uint64_t Hbm::latency_ps() {
    // Offered load: what the active flows would draw if nothing limited
    // them but their own caps, over what the channels deliver.
    const double rho = std::min(kMaxRho, std::max(0.0, demand_) / share_.capacity());
    return base_latency_ps_ + static_cast<std::uint64_t>(std::llround(burst_ps_ * rho / (2 * (1 - rho))));
}

}  // namespace npusim
