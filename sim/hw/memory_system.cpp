#include "hw/memory_system.hpp"

#include <algorithm>
#include <cmath>

#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
double gbps_to_bytes_per_ps(double gbps) { return gbps / 1000.0; }
std::uint64_t ns_to_ps(double ns) { return static_cast<std::uint64_t>(std::llround(ns * 1000.0)); }
}  // namespace

void TransferRequest::add_range(std::uint64_t addr, std::uint64_t n) {
    if (n == 0) return;
    if (n_ranges < kMaxRanges) {
        ranges[static_cast<std::size_t>(n_ranges++)] = AddrRange{addr, n};
        return;
    }
    AddrRange& last = ranges[kMaxRanges - 1];
    if (last.addr + last.bytes == addr) last.bytes += n;
}

MemorySystem::MemorySystem(sc_core::sc_module_name name, WakeScheduler& scheduler, const ChipParams& chip, TraceWriter* trace, int trace_pid)
    : sc_core::sc_module(name),
      scheduler_(scheduler),
      hbm_(gbps_to_bytes_per_ps(chip.hbm.bandwidth_gbps)),
      l2_bw_(gbps_to_bytes_per_ps(chip.l2.bandwidth_gbps)),
      l2_(static_cast<std::uint64_t>(chip.l2.size_mb * 1024.0 * 1024.0),
          static_cast<std::uint64_t>(chip.l2.region_kb) * 1024),
      hbm_bytes_per_ps_(gbps_to_bytes_per_ps(chip.hbm.bandwidth_gbps)),
      l2_bytes_per_ps_(gbps_to_bytes_per_ps(chip.l2.bandwidth_gbps)),
      hbm_latency_ps_(ns_to_ps(chip.hbm.latency_ns)),
      l2_latency_ps_(ns_to_ps(chip.l2.latency_ns)),
      trace_(trace),
      trace_pid_(trace_pid) {}

void MemorySystem::transfer(const TransferRequest& req, TransferClient* client, std::uint64_t tag) {
    const std::uint32_t slot = slots_.acquire();
    ++traffic_.transfers;
    Pending& p = slots_[slot];
    p.client = client;
    p.tag = tag;
    p.cap = req.cap_bytes_per_ps;
    p.l2_cap = req.l2_cap_bytes_per_ps > 0 ? req.l2_cap_bytes_per_ps : req.cap_bytes_per_ps;

    std::uint64_t hbm_bytes = 0, l2_bytes = 0;
    if (req.space == Space::l2) {
        // Explicitly L2-resident data: never leaves the cache.
        l2_bytes = req.bytes;
        if (req.write) traffic_.l2_write_bytes += req.bytes;
        else traffic_.l2_hit_bytes += req.bytes;
    } else if (req.write) {
        // Write-allocate in L2; the bytes still cost HBM write bandwidth.
        for (int i = 0; i < req.n_ranges; ++i) l2_.write(req.ranges[i].addr, req.ranges[i].bytes);
        hbm_bytes = req.bytes;
        traffic_.hbm_write_bytes += req.bytes;
        traffic_.l2_write_bytes += req.bytes;
    } else {
        std::uint64_t hit = 0;
        for (int i = 0; i < req.n_ranges; ++i) hit += l2_.read(req.ranges[i].addr, req.ranges[i].bytes);
        hit = std::min(hit, req.bytes);  // merged tail ranges may overcount
        l2_bytes = hit;
        hbm_bytes = req.bytes - hit;
        traffic_.l2_hit_bytes += hit;
        traffic_.l2_miss_bytes += hbm_bytes;
        traffic_.hbm_read_bytes += hbm_bytes;
    }
    p.latency_tier = hbm_bytes > 0 ? Tier::hbm : Tier::l2;
    p.latency_ps = hbm_bytes > 0 ? hbm_latency_ps_ : l2_latency_ps_;
    // The engine walks its addresses in order: misses from HBM at the
    // port's miss rate, then hits from L2 at the core's L2 rate.
    traffic_.l2_served_bytes += l2_bytes;
    if (hbm_bytes > 0) {
        p.l2_bytes = l2_bytes;
        start_part(slot, Tier::hbm, hbm_bytes);
    } else {
        p.l2_bytes = 0;
        start_part(slot, Tier::l2, l2_bytes);
    }
    rearm();
    emit_counters();
}

void MemorySystem::start_part(std::uint32_t slot, Tier tier, std::uint64_t bytes) {
    BandwidthShare& share = tier == Tier::hbm ? hbm_ : l2_bw_;
    const Pending& p = slots_[slot];
    share.add(now_ps(), static_cast<double>(bytes), tier == Tier::hbm ? p.cap : p.l2_cap, slot);
}

void MemorySystem::part_done(std::uint32_t slot) {
    Pending& p = slots_[slot];
    if (p.l2_bytes > 0) {
        const std::uint64_t b = p.l2_bytes;
        p.l2_bytes = 0;
        start_part(slot, Tier::l2, b);
        return;
    }
    deliveries_[static_cast<std::size_t>(p.latency_tier)].push_back(Delivery{now_ps() + p.latency_ps, delivery_seq_++, slot});
    p.client->transfer_drained(p.tag);
}

void MemorySystem::wake(std::uint64_t) {
    const std::uint64_t now = now_ps();
    if (now == armed_ps_) armed_ps_ = UINT64_MAX;
    for (BandwidthShare* share : {&hbm_, &l2_bw_}) {
        if (share->next_finish_ps() > now) continue;
        share->pop_finished(now, finished_);
        for (std::uint64_t slot : finished_) {
            ++sim_events_total();
            part_done(static_cast<std::uint32_t>(slot));
        }
    }
    for (const Delivery* d = next_delivery(); d && d->t <= now; d = next_delivery()) {
        const std::uint32_t slot = d->slot;
        deliveries_[d == &deliveries_[0].front() ? 0 : 1].pop_front();
        ++sim_events_total();
        const Pending p = slots_[slot];
        slots_.release(slot);
        p.client->transfer_done(p.tag);
    }
    rearm();
    emit_counters();
}

const MemorySystem::Delivery* MemorySystem::next_delivery() const {
    const Delivery* best = nullptr;
    for (const auto& q : deliveries_)
        if (!q.empty() && (!best || q.front().t < best->t || (q.front().t == best->t && q.front().seq < best->seq)))
            best = &q.front();
    return best;
}

void MemorySystem::rearm() {
    std::uint64_t next = std::min(hbm_.next_finish_ps(), l2_bw_.next_finish_ps());
    if (const Delivery* d = next_delivery()) next = std::min(next, d->t);
    // An earlier pending wake stays; if flows slowed down since, that wake
    // finds nothing due and re-posts — cheaper than cancelling every time.
    if (next >= armed_ps_) return;
    armed_ps_ = next;
    scheduler_.at(next, *this, 0);
}

void MemorySystem::emit_counters() {
    if (!trace_ || !trace_->enabled()) return;
    const double hbm = hbm_.current_rate() * 1000.0, l2 = l2_bw_.current_rate() * 1000.0;
    if (hbm != last_hbm_gbps_) {
        trace_->counter(trace_pid_, "HBM bandwidth (GB/s)", now_ps(), hbm);
        last_hbm_gbps_ = hbm;
    }
    if (l2 != last_l2_gbps_) {
        trace_->counter(trace_pid_, "L2 bandwidth (GB/s)", now_ps(), l2);
        last_l2_gbps_ = l2;
    }
}

void MemorySystem::report(Stats& s, const RunSpan& span) const {
    const MemoryTraffic& m = traffic_;
    const double total_ps = static_cast<double>(span.total_ps);
    s.set("memory.hbm.read_bytes", m.hbm_read_bytes);
    s.set("memory.hbm.write_bytes", m.hbm_write_bytes);
    const double hbm_bytes = static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes);
    const double hbm_cap = hbm_bytes_per_ps_ * total_ps;
    s.set("units.hbm.utilization", hbm_cap > 0 ? hbm_bytes / hbm_cap : 0.0);
    s.set("memory.l2.hit_bytes", m.l2_hit_bytes);
    s.set("memory.l2.miss_bytes", m.l2_miss_bytes);
    s.set("memory.l2.write_bytes", m.l2_write_bytes);
    const double reads = static_cast<double>(m.l2_hit_bytes + m.l2_miss_bytes);
    s.set("memory.l2.hit_rate", reads > 0 ? static_cast<double>(m.l2_hit_bytes) / reads : 0.0);
    s.set("memory.transfers", m.transfers);
    const double l2_cap = l2_bytes_per_ps_ * total_ps;
    s.set("units.l2.utilization", l2_cap > 0 ? static_cast<double>(m.l2_served_bytes) / l2_cap : 0.0);
}

}  // namespace npusim
