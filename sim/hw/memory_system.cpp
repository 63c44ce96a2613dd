#include "hw/memory_system.hpp"
#include "common/arith.hpp"

#include "hw/address_map.hpp"
#include "chip/timing.hpp"

#include <algorithm>
#include <cmath>

#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
double gbps_to_bytes_per_ps(double gbps) { return gbps / 1000.0; }
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

void TransferRequest::add_span(const AddressMap* map, std::uint64_t offset, std::uint64_t len) {
    if (len == 0) return;
    if (n_spans > 0) {  // continues the last span of the same map: one walk
        MappedSpan& last = spans[static_cast<std::size_t>(n_spans - 1)];
        if (last.map == map && last.offset + last.len == offset) {
            last.len += len;
            return;
        }
    }
    if (n_spans < kMaxSpans) spans[static_cast<std::size_t>(n_spans++)] = MappedSpan{map, offset, len};
}

namespace {
L2Geometry l2_geometry(const L2Params& l2) {
    L2Geometry g;
    g.capacity_bytes = static_cast<std::uint64_t>(l2.size_mb * 1024.0 * 1024.0);
    g.line_bytes = static_cast<std::uint64_t>(l2.line_bytes);
    g.ways = static_cast<std::uint64_t>(l2.ways);
    g.slices = static_cast<std::uint64_t>(l2.slices);
    g.slice_block_bytes = static_cast<std::uint64_t>(l2.region_kb) * 1024;
    g.slice_interleave_bytes = static_cast<std::uint64_t>(l2.interleave_bytes);
    return g;
}
}  // namespace

MemorySystem::MemorySystem(sc_core::sc_module_name name, WakeScheduler& scheduler, const ChipParams& chip, TraceWriter* trace, int trace_pid)
    : sc_core::sc_module(name),
      scheduler_(scheduler),
      hbm_(chip.hbm),
      l2_bw_(gbps_to_bytes_per_ps(chip.l2.bandwidth_gbps)),
      l2_(l2_geometry(chip.l2)),
      hbm_bytes_per_ps_(gbps_to_bytes_per_ps(chip.hbm.bandwidth_gbps)),
      l2_bytes_per_ps_(gbps_to_bytes_per_ps(chip.l2.bandwidth_gbps)),
      l2_slice_bytes_per_ps_(gbps_to_bytes_per_ps(chip.l2.bandwidth_gbps) / std::max(1, chip.l2.slices)),
      l2_latency_ps_(ns_to_ps(chip.l2.latency_ns)),
      eager_writeback_(chip.l2.eager_writeback),
      clean_chunk_bytes_(static_cast<std::uint64_t>(std::max(1, chip.hbm.channels)) *
                         static_cast<std::uint64_t>(std::max(1, chip.hbm.interleave_bytes))),
      // Just under what a write-only HBM moves: a chunk alone does not
      // count as HBM-bound time.
      clean_cap_bytes_per_ps_(0.999 * gbps_to_bytes_per_ps(chip.hbm.bandwidth_gbps) * timing::hbm_efficiency(chip.hbm, 1.0)),
      trace_(trace),
      trace_pid_(trace_pid) {}

MemorySystem::Split MemorySystem::account(const TransferRequest& req, bool take_busiest) {
    Split s;
    if (req.space == Space::l2 && !req.write && req.n_spans > 0) return account_l2_read(req, take_busiest);
    if (req.space == Space::l2) {
        // Explicitly L2-resident data: never leaves the cache, spread over
        // all slices.
        s.l2 = req.bytes;
        if (req.write) traffic_.l2_write_bytes += req.bytes;
        else traffic_.l2_hit_bytes += req.bytes;
    } else if (req.write && !req.has_addresses()) {
        // Unknown addresses: a stream the L2 does not keep, straight to HBM.
        s.hbm = req.bytes;
        traffic_.hbm_write_bytes += req.bytes;
    } else if (req.write) {
        // Write-back, write-allocate: the bytes stop in L2; HBM sees them
        // when their lines are evicted.
        std::uint64_t covered = 0;
        s.dirty = l2_.access_ranges(true,
                                    [&](const auto& f) {
                                        req.for_each_range([&](std::uint64_t addr, std::uint64_t n, bool) {
                                            f(addr, n);
                                            covered += n;
                                        });
                                    })
                      .dirty_evicted_bytes;
        if (take_busiest) s.busiest = l2_.take_busiest_slice_bytes();
        s.l2 = req.bytes;
        s.busiest += req.bytes - std::min(req.bytes, covered);  // untracked tail: one slice at worst
        traffic_.l2_write_bytes += req.bytes;
    } else {
        const L2Access a = l2_.access_ranges(false, [&](const auto& f) {
            req.for_each_range([&](std::uint64_t addr, std::uint64_t n, bool) { f(addr, n); });
        });
        std::uint64_t hit = a.hit_bytes;
        const std::uint64_t fill = a.fill_bytes;
        s.dirty = a.dirty_evicted_bytes;
        if (take_busiest) s.busiest = l2_.take_busiest_slice_bytes();
        hit = std::min(hit, req.bytes);  // merged tail ranges may overcount
        s.l2 = hit;
        s.hbm = req.bytes - hit;
        // HBM moves the missed lines whole, also the parts no one asked for
        // (which later reads then hit).
        s.overfill = req.has_addresses() && fill > s.hbm ? fill - s.hbm : 0;
        traffic_.l2_hit_bytes += hit;
        traffic_.l2_miss_bytes += s.hbm;
        traffic_.hbm_read_bytes += s.hbm + s.overfill;
    }
    return s;
}

// A task that reads an L2-resident operand beside one in GM (attention's
// probabilities beside V from the KV cache): the resident regions never
// leave L2, the GM ones go through the L2 model and their misses come from
// HBM (with nothing missed: as a resident read, plus the looked-up bytes'
// slices).
MemorySystem::Split MemorySystem::account_l2_read(const TransferRequest& req, bool take_busiest) {
    Split s;
    const L2Access a = l2_.access_ranges(false, [&](const auto& f) {
        req.for_each_range([&](std::uint64_t addr, std::uint64_t n, bool in_hbm) {
            if (in_hbm) f(addr, n);
        });
    });
    s.dirty = a.dirty_evicted_bytes;
    if (take_busiest) s.busiest = l2_.take_busiest_slice_bytes();
    s.hbm = std::min(a.miss_bytes, req.bytes);
    s.l2 = req.bytes - s.hbm;
    s.overfill = a.fill_bytes > s.hbm ? a.fill_bytes - s.hbm : 0;
    traffic_.l2_hit_bytes += s.l2;
    traffic_.l2_miss_bytes += s.hbm;
    traffic_.hbm_read_bytes += s.hbm + s.overfill;
    return s;
}

MemorySystem::Served MemorySystem::transfer(const TransferRequest& req, TransferClient* client, std::uint64_t tag) {
    const Split s = account(req);
    start(s, req.write, req.cap_bytes_per_ps, req.l2_cap_bytes_per_ps > 0 ? req.l2_cap_bytes_per_ps : req.cap_bytes_per_ps,
          client, tag);
    return Served{s.l2, s.hbm};
}

MemorySystem::Batch MemorySystem::prepare_batch(const std::vector<TransferRequest>& parts) {
    Batch b;
    // The batch's busiest slice is taken over all its parts' accesses at
    // once: its parts spread over slices a single part does not reach.
    for (const TransferRequest& r : parts) {
        const Split s = account(r, false);
        b.hbm += s.hbm, b.l2 += s.l2, b.busiest += s.busiest, b.dirty += s.dirty, b.overfill += s.overfill;
        b.write = b.write || r.write;
        b.parts.emplace_back(s.hbm, s.l2);
    }
    b.busiest += l2_.take_busiest_slice_bytes();
    return b;
}

void MemorySystem::start_batch(const Batch& b, double cap, double l2_cap, TransferClient* client, std::uint64_t tag) {
    start(Split{b.hbm, b.l2, b.busiest, b.dirty, b.overfill}, b.write, cap, l2_cap, client, tag);
}

void MemorySystem::start(const Split& s, bool write, double cap, double l2_cap, TransferClient* client, std::uint64_t tag) {
    const std::uint32_t slot = slots_.acquire();
    ++traffic_.transfers;
    Pending& p = slots_[slot];
    p.client = client;
    p.tag = tag;
    p.cap = cap;
    p.l2_cap = l2_cap;
    p.write_back = false;
    p.clean = false;
    p.latency_ps = l2_latency_ps_;
    // A part on few slices moves no faster than those slices.
    if (s.l2 > 0 && s.busiest > 0)
        p.l2_cap = std::min(p.l2_cap, l2_slice_bytes_per_ps_ * static_cast<double>(s.l2) /
                                          static_cast<double>(std::min(s.busiest, s.l2)));
    // The engine walks its addresses in order: misses from HBM at the
    // port's miss rate, then hits from L2 at the core's L2 rate.
    traffic_.l2_served_bytes += s.l2;
    if (s.hbm > 0) {
        p.l2_bytes = s.l2;
        // The port still takes only its own bytes at its rate: the whole
        // lines move as much faster.
        if (s.overfill > 0) p.cap *= static_cast<double>(s.hbm + s.overfill) / static_cast<double>(s.hbm);
        start_hbm(slot, s.hbm + s.overfill, write);
    } else {
        p.l2_bytes = 0;
        start_l2(slot, s.l2);
    }
    if (s.dirty > 0) write_back(s.dirty);
    maybe_clean();
    rearm();
    emit_counters();
}

void MemorySystem::landed_write(std::uint64_t addr, std::uint64_t bytes) {
    const L2Access a = l2_.write(addr, bytes);
    l2_.take_busiest_slice_bytes();  // no share of L2 bandwidth to cap
    traffic_.l2_write_bytes += bytes;
    if (a.dirty_evicted_bytes > 0) write_back(a.dirty_evicted_bytes);
    maybe_clean();
    rearm();
}

void MemorySystem::landed_write_at(std::uint64_t land_ps, std::uint64_t addr, std::uint64_t bytes) {
    landings_.push(Landing{land_ps, landing_seq_++, addr, bytes});
    rearm();
}

void MemorySystem::write_back(std::uint64_t bytes, bool clean) {
    (clean ? traffic_.clean_bytes : traffic_.dirty_eviction_bytes) += bytes;
    traffic_.hbm_write_bytes += bytes;
    const std::uint32_t slot = slots_.acquire();
    Pending& p = slots_[slot];
    p.client = nullptr;
    p.tag = 0;
    p.l2_bytes = 0;
    p.write_back = true;
    p.clean = clean;
    p.cap = p.l2_cap = clean ? clean_cap_bytes_per_ps_ : hbm_bytes_per_ps_;  // the write buffer drains at HBM's pace
    p.latency_ps = 0;
    start_hbm(slot, bytes, true, clean);
}

void MemorySystem::maybe_clean() {
    if (!eager_writeback_ || cleaning_ || stream_done_ || !hbm_.idle() || !l2_.any_filling_set() || l2_.dirty_lines() == 0)
        return;
    const std::uint64_t bytes = l2_.clean(clean_chunk_bytes_);
    if (bytes == 0) return;
    cleaning_ = true;
    write_back(bytes, true);
}

void MemorySystem::start_hbm(std::uint32_t slot, std::uint64_t bytes, bool write, bool background) {
    slots_[slot].latency_ps = UINT64_MAX;  // set from the load when the part ends
    hbm_.add(now_ps(), bytes, write, slots_[slot].cap, slot, background);
}

void MemorySystem::start_l2(std::uint32_t slot, std::uint64_t bytes) {
    l2_bw_.add(now_ps(), static_cast<double>(bytes), slots_[slot].l2_cap, slot);
}

void MemorySystem::part_done(std::uint32_t slot) {
    Pending& p = slots_[slot];
    if (p.write_back) {
        if (p.clean) cleaning_ = false;
        slots_.release(slot);
        return;
    }
    if (p.latency_ps == UINT64_MAX) p.latency_ps = hbm_.latency_ps();  // the HBM part ended
    if (p.l2_bytes > 0) {
        const std::uint64_t b = p.l2_bytes;
        p.l2_bytes = 0;
        start_l2(slot, b);
        return;
    }
    deliveries_.push(Delivery{now_ps() + p.latency_ps, delivery_seq_++, slot});
    p.client->transfer_drained(p.tag);
}

void MemorySystem::wake(std::uint64_t) {
    const std::uint64_t now = now_ps();
    if (now == armed_ps_) armed_ps_ = UINT64_MAX;
    if (hbm_.next_finish_ps() <= now) {
        hbm_.pop_finished(now, finished_);
        for (std::uint64_t slot : finished_) {
            count_event(EventKind::hbm_flow);
            part_done(static_cast<std::uint32_t>(slot));
        }
    }
    if (l2_bw_.next_finish_ps() <= now) {
        l2_bw_.pop_finished(now, finished_);
        for (std::uint64_t slot : finished_) {
            count_event(EventKind::l2_flow);
            part_done(static_cast<std::uint32_t>(slot));
        }
    }
    while (!deliveries_.empty() && deliveries_.top().t <= now) {
        const std::uint32_t slot = deliveries_.top().slot;
        deliveries_.pop();
        count_event(EventKind::delivery);
        const Pending p = slots_[slot];
        slots_.release(slot);
        p.client->transfer_done(p.tag);
    }
    while (!landings_.empty() && landings_.top().t <= now) {
        const Landing l = landings_.top();
        landings_.pop();
        landed_write(l.addr, l.bytes);
    }
    maybe_clean();
    rearm();
    emit_counters();
}

void MemorySystem::rearm() {
    std::uint64_t next = std::min(hbm_.next_finish_ps(), l2_bw_.next_finish_ps());
    if (!deliveries_.empty()) next = std::min(next, deliveries_.top().t);
    if (!landings_.empty()) next = std::min(next, landings_.top().t);
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
    // Share of the run the tier's bandwidth was the limit (demand above it).
    s.set("units.hbm.bound_fraction", span.utilization(static_cast<double>(hbm_.saturated_ps())));
    s.set("units.l2.bound_fraction", span.utilization(static_cast<double>(l2_bw_.saturated_ps())));
    s.set("memory.l2.hit_bytes", m.l2_hit_bytes);
    s.set("memory.l2.miss_bytes", m.l2_miss_bytes);
    s.set("memory.l2.write_bytes", m.l2_write_bytes);
    const L2Counters& c = l2_.counters();
    s.set("memory.l2.hits", c.hits);
    s.set("memory.l2.misses", c.misses);
    s.set("memory.l2.write_hits", c.write_hits);
    s.set("memory.l2.write_misses", c.write_misses);
    s.set("memory.l2.evictions", c.evictions);
    s.set("memory.l2.dirty_evictions", c.dirty_evictions);
    s.set("memory.l2.dirty_eviction_bytes", m.dirty_eviction_bytes);
    s.set("memory.l2.clean_bytes", m.clean_bytes);
    s.set("memory.l2.dirty_resident_bytes", l2_.dirty_lines() * l2_.line_bytes());
    const double reads = static_cast<double>(m.l2_hit_bytes + m.l2_miss_bytes);
    s.set("memory.l2.hit_rate", reads > 0 ? static_cast<double>(m.l2_hit_bytes) / reads : 0.0);
    s.set("memory.transfers", m.transfers);
    const double l2_cap = l2_bytes_per_ps_ * total_ps;
    s.set("units.l2.utilization", l2_cap > 0 ? static_cast<double>(m.l2_served_bytes) / l2_cap : 0.0);
}

}  // namespace npusim
