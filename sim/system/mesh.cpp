#include "system/mesh.hpp"

#include <algorithm>
#include <string_view>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "engine/wake_scheduler.hpp"
#include "system/plane_hash.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

const char* to_string(MeshTier t) { return t == MeshTier::intra ? "intra" : "inter"; }

Mesh::Mesh(sc_core::sc_module_name name, const ChipParams& chip, GlobalMemory& memory, TraceWriter* trace,
           const std::vector<int>& traced)
    : sc_core::sc_module(name),
      memory_(memory),
      trace_(trace && trace->enabled() ? trace : nullptr),
      traced_(static_cast<std::size_t>(chip.interconnect.ranks), 0),
      ranks_(chip.interconnect.ranks),
      planes_(chip.interconnect.planes),
      node_size_(std::max(chip.interconnect.node_size, 1)),
      block_(static_cast<std::uint32_t>(chip.interconnect.datablock_bytes)),
      header_(static_cast<std::uint32_t>(chip.interconnect.header_bytes)),
      mix_(chip.interconnect.plane_hash == "mix"),
      seed_(static_cast<std::uint64_t>(chip.interconnect.reorder_seed)),
      egress_(static_cast<std::size_t>(ranks_ * planes_)),
      ingress_(static_cast<std::size_t>(ranks_ * planes_)),
      track_named_(trace_ ? static_cast<std::size_t>(ranks_ * kMeshTiers * 2 * planes_) : 0, 0),
      plane_bytes_(static_cast<std::size_t>(planes_), 0),
      plane_land_(static_cast<std::size_t>(planes_), 0),
      plane_blocks_(static_cast<std::size_t>(planes_), 0),
      order_(static_cast<std::size_t>(ranks_) * planes_ * ranks_) {
    for (const int r : traced)
        if (trace_ && r >= 0 && r < ranks_) traced_[static_cast<std::size_t>(r)] = 1;
    if (trace_) sent_.resize(static_cast<std::size_t>(ranks_ * kMeshTiers));
    const InterconnectParams& ic = chip.interconnect;
    for (const MeshTier t : {MeshTier::intra, MeshTier::inter}) {
        const LinkTier& p = t == MeshTier::intra ? ic.intra_node : ic.inter_node;
        TierSpec& spec = tiers_[static_cast<int>(t)];
        spec.ps_per_byte = 1000.0 / p.plane_bandwidth_gbps;
        spec.latency_ps = ns_to_ps(p.latency_ns);
        spec.jitter_bound_ps = ic.reorder_jitter_ns < 0 ? spec.latency_ps : ns_to_ps(ic.reorder_jitter_ns);
        // The ingress buffer in drain time at this tier's rate.
        spec.buffer_ps = static_cast<std::uint64_t>(std::floor(static_cast<double>(ic.ingress_buffer_bytes) * spec.ps_per_byte));
    }
}

MeshTier Mesh::tier_of(int src_rank, int dst_rank) const {
    return src_rank / node_size_ == dst_rank / node_size_ ? MeshTier::intra : MeshTier::inter;
}

std::uint64_t Mesh::backpressure_ps() const { return tier_count_[0].held_ps + tier_count_[1].held_ps; }

int Mesh::plane_of(int rank, Addr addr) const { return plane_of_block(global_block(rank, addr / block_), planes_, mix_); }

std::uint64_t Mesh::reserve(Link& in, std::uint64_t from, std::uint64_t dur, std::uint64_t now) {
    auto& iv = in.busy;
    // Slots that ended by now can never be used again.
    while (in.head < iv.size() && iv[in.head].end <= now) ++in.head;
    if (in.head > 64 && in.head * 2 > iv.size()) {
        iv.erase(iv.begin(), iv.begin() + static_cast<std::ptrdiff_t>(in.head));
        in.head = 0;
    }
    // First interval that ends after `from`.
    auto it = std::upper_bound(iv.begin() + static_cast<std::ptrdiff_t>(in.head), iv.end(), from,
                               [](std::uint64_t t, const Interval& x) { return t < x.end; });
    std::uint64_t start = from;
    while (it != iv.end() && it->start < start + dur) {
        start = std::max(start, it->end);
        ++it;
    }
    const std::uint64_t end = start + dur;
    // Insert [start, end) before `it`, merging with touching neighbours.
    const bool join_prev = it != iv.begin() + static_cast<std::ptrdiff_t>(in.head) && std::prev(it)->end == start;
    const bool join_next = it != iv.end() && it->start == end;
    if (join_prev && join_next) {
        std::prev(it)->end = it->end;
        iv.erase(it);
    } else if (join_prev) {
        std::prev(it)->end = end;
    } else if (join_next) {
        it->start = start;
    } else {
        iv.insert(it, Interval{start, end});
    }
    return end;
}

std::uint64_t Mesh::drained_to_budget(const Link& in, std::uint64_t land, std::uint64_t budget) {
    const auto& iv = in.busy;
    const auto first = iv.begin() + static_cast<std::ptrdiff_t>(in.head);
    // Slots that start before `land`, walked back from it.
    auto it = std::lower_bound(first, iv.end(), land, [](const Interval& x, std::uint64_t t) { return x.start < t; });
    while (it != first) {
        --it;
        const std::uint64_t len = std::min(it->end, land) - it->start;
        if (len >= budget) return std::min(it->end, land) - budget;
        budget -= len;
    }
    return 0;
}

PostedWrite Mesh::post(const WriteRequest& w, std::uint64_t t_ps) {
    if (w.src_rank == w.dst_rank) throw std::logic_error("Mesh::post: a write to the sender's own GM is post_local");
    if (w.kind != WriteKind::flag && w.addr % block_ != 0)
        throw std::logic_error(fmt::format("Mesh::post: data write at {:#x} is not aligned to {} B blocks", w.addr, block_));
    ++writes_;
    const std::uint32_t nb = write_blocks(w, block_);
    const std::uint64_t first = w.addr / block_;
    const std::uint64_t now = now_ps();

    const MeshTier tier = tier_of(w.src_rank, w.dst_rank);
    const TierSpec& spec = tiers_[static_cast<int>(tier)];
    TierCount& count = tier_count_[static_cast<int>(tier)];
    ++count.writes;

    // Each block's plane and each plane's share of the write, in wire bytes
    // (headers included: they take link time like payload).
    std::fill(plane_bytes_.begin(), plane_bytes_.end(), 0);
    std::fill(plane_blocks_.begin(), plane_blocks_.end(), 0);
    block_plane_.resize(nb);
    std::uint64_t left = write_wire_bytes(w, block_);
    const std::uint64_t per_block = w.kind == WriteKind::flag ? left : block_;
    for (std::uint32_t i = 0; i < nb; ++i) {
        const int p = plane_of_block(global_block(w.dst_rank, first + i), planes_, mix_);
        block_plane_[i] = static_cast<std::uint8_t>(p);
        const std::uint64_t b = w.kind == WriteKind::data ? std::min<std::uint64_t>(left, block_) : per_block;
        plane_bytes_[static_cast<std::size_t>(p)] += b + header_;
        ++plane_blocks_[static_cast<std::size_t>(p)];
        if (w.kind == WriteKind::data) left -= b;
    }

    PostedWrite out{t_ps, t_ps};
    for (int p = 0; p < planes_; ++p) {
        const std::uint64_t wire = plane_bytes_[static_cast<std::size_t>(p)];
        if (wire == 0) continue;
        const std::uint64_t payload = wire - static_cast<std::uint64_t>(plane_blocks_[static_cast<std::size_t>(p)]) * header_;
        const auto dur = static_cast<std::uint64_t>(std::ceil(static_cast<double>(wire) * spec.ps_per_byte));
        Link& e = egress(w.src_rank, p);
        const std::uint64_t start = std::max(t_ps, e.free_ps);
        // FIFO within a plane: chunks from one sender to one receiver on one
        // plane arrive and land in the order they left.
        Order& order = order_[(static_cast<std::size_t>(w.src_rank) * planes_ + p) * ranks_ + w.dst_rank];
        std::uint64_t arrive = start + spec.latency_ps + delivery_jitter_ps(seed_, chunk_seq_++, spec.jitter_bound_ps);
        arrive = std::max(arrive, order.arrival_ps);
        order.arrival_ps = arrive;
        Link& in = ingress(w.dst_rank, p);
        const std::uint64_t from = order.land_ps > dur ? std::max(arrive, order.land_ps - dur) : arrive;
        const std::uint64_t land = reserve(in, from, dur, now);
        order.land_ps = std::max(order.land_ps, land);
        // Credits: the last byte (arriving at arrive + dur unheld) may enter the
        // receiver plane only once what drains there before `land` fits its
        // buffer; until then the sender plane is held.
        const std::uint64_t admit = drained_to_budget(in, land, spec.buffer_ps);
        const std::uint64_t held = admit > arrive + dur ? admit - (arrive + dur) : 0;
        const std::uint64_t leaves = start + dur + held;
        e.free_ps = leaves;
        e.bytes += payload;
        in.bytes += payload;
        e.busy_ps += dur;
        e.held_ps += held;
        ++e.chunks;
        in.busy_ps += dur;
        ++in.chunks;
        ++chunks_;
        ++count.chunks;
        count.wire_bytes += wire;
        count.held_ps += held;
        if (held) ++count.held_chunks;
        out.left_ps = std::max(out.left_ps, leaves);
        out.land_ps = std::max(out.land_ps, land);
        plane_land_[static_cast<std::size_t>(p)] = land;
        count_event(EventKind::mesh_chunk);
        if (trace_) {
            if (traced_[static_cast<std::size_t>(w.src_rank)]) {
                trace_slice(w.src_rank, true, tier, p, "chunk out", start, dur, w.dst_rank, wire);
                if (held) trace_slice(w.src_rank, true, tier, p, "held by receiver", start + dur, held, w.dst_rank, wire);
            }
            if (traced_[static_cast<std::size_t>(w.dst_rank)]) trace_slice(w.dst_rank, false, tier, p, "chunk in", land - dur, dur, w.src_rank, wire);
        }
    }
    count.bytes += write_wire_bytes(w, block_);
    const bool has_flag = w.kind != WriteKind::data;
    for (std::uint32_t i = 0; i < nb; ++i)
        memory_.post_block(w.dst_rank, first + i, plane_land_[block_plane_[i]], has_flag, w.flag, Writer{w.src_rank, w.task});
    return out;
}

void Mesh::post_local(const WriteRequest& w, std::uint64_t land_ps) {
    ++local_writes_;
    local_bytes_ += write_wire_bytes(w, block_);
    const std::uint32_t nb = write_blocks(w, block_);
    const std::uint64_t first = w.addr / block_;
    const bool has_flag = w.kind != WriteKind::data;
    for (std::uint32_t i = 0; i < nb; ++i)
        memory_.post_block(w.dst_rank, first + i, land_ps, has_flag, w.flag, Writer{w.src_rank, w.task});
}

void Mesh::trace_slice(int rank, bool tx, MeshTier tier, int plane, const char* what, std::uint64_t start_ps,
                       std::uint64_t dur_ps, int peer, std::uint64_t bytes) {
    const int t = static_cast<int>(tier);
    const int tid = (tx ? 1000 : 2000) + 100 * t + plane;
    const std::size_t slot = static_cast<std::size_t>(((rank * kMeshTiers + t) * 2 + (tx ? 0 : 1)) * planes_ + plane);
    if (!track_named_[slot]) {
        track_named_[slot] = 1;
        trace_->thread(rank + 1, tid, fmt::format("{}.plane{}.{}", to_string(tier), plane, tx ? "tx" : "rx"), tid);
    }
    trace_->complete(rank + 1, tid, what, "link", start_ps, dur_ps,
                     fmt::format(R"("{}":{},"bytes":{})", tx ? "dst" : "src", peer, bytes));
    if (tx && dur_ps > 0 && std::string_view(what) == "chunk out")
        sent_[static_cast<std::size_t>(rank * kMeshTiers + t)].push_back({start_ps, start_ps + dur_ps, bytes});
}

void Mesh::trace_link_counters() {
    if (!trace_) return;
    for (int rank = 0; rank < ranks_; ++rank)
        for (int t = 0; t < kMeshTiers; ++t) {
            auto& chunks = sent_[static_cast<std::size_t>(rank * kMeshTiers + t)];
            if (chunks.empty()) continue;
            // Rate changes at each chunk's start and end (bytes per ps).
            struct Step {
                std::uint64_t t;
                double rate;
                int in_flight;
            };
            std::vector<Step> steps;
            for (const Chunk& c : chunks) {
                const double rate = static_cast<double>(c.bytes) / static_cast<double>(c.end_ps - c.start_ps);
                steps.push_back({c.start_ps, rate, 1});
                steps.push_back({c.end_ps, -rate, -1});
            }
            std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.t < b.t; });
            const std::string name = fmt::format("{} tx (GB/s)", to_string(static_cast<MeshTier>(t)));
            double rate = 0;
            int in_flight = 0;
            for (std::size_t i = 0; i < steps.size(); ++i) {
                rate += steps[i].rate;
                in_flight += steps[i].in_flight;
                if (in_flight == 0) rate = 0;  // no rounding residue on an idle link
                if (i + 1 < steps.size() && steps[i + 1].t == steps[i].t) continue;
                trace_->counter(rank + 1, name, steps[i].t, rate * 1000.0);  // B/ps -> GB/s
            }
            std::vector<Chunk>().swap(chunks);
        }
}

void Mesh::report(Stats& s, const RunSpan& span) const {
    const double total = static_cast<double>(std::max<std::uint64_t>(span.total_ps, 1));
    std::uint64_t bytes = 0, busiest = 0, tx_busy = 0;
    for (int p = 0; p < planes_; ++p) {
        std::uint64_t pb = 0, busy = 0, rx_busy = 0, held = 0;
        for (int r = 0; r < ranks_; ++r) {
            const Link& e = egress_[static_cast<std::size_t>(r * planes_ + p)];
            const Link& i = ingress_[static_cast<std::size_t>(r * planes_ + p)];
            pb += e.bytes;
            busy += e.busy_ps;
            rx_busy += i.busy_ps;
            held += e.held_ps;
            const std::uint64_t link_busy = std::max(e.busy_ps, i.busy_ps);
            if (link_busy > busiest) busiest = link_busy;
        }
        bytes += pb;
        tx_busy += busy;
        const std::string key = fmt::format("mesh.planes.{}", p);
        s.set(key + ".bytes", pb);
        s.set(key + ".tx_busy_fraction", static_cast<double>(busy) / (total * ranks_));
        s.set(key + ".rx_busy_fraction", static_cast<double>(rx_busy) / (total * ranks_));
        s.set(key + ".tx_held_ns", static_cast<double>(held) / 1000.0);
    }
    // Per link (rank, plane, direction).
    for (int r = 0; r < ranks_; ++r)
        for (int p = 0; p < planes_; ++p) {
            const Link& e = egress_[static_cast<std::size_t>(r * planes_ + p)];
            const Link& i = ingress_[static_cast<std::size_t>(r * planes_ + p)];
            const std::string key = fmt::format("mesh.links.r{}.p{}", r, p);
            s.set(key + ".tx_bytes", e.bytes);
            s.set(key + ".rx_bytes", i.bytes);
            s.set(key + ".tx_busy_ns", static_cast<double>(e.busy_ps) / 1000.0);
            s.set(key + ".rx_busy_ns", static_cast<double>(i.busy_ps) / 1000.0);
        }
    // Per tier: what crossed it, its headers and how long receivers held its senders.
    std::uint64_t wire = 0, held = 0;
    for (const MeshTier t : {MeshTier::intra, MeshTier::inter}) {
        const TierCount& c = tier_count_[static_cast<int>(t)];
        const std::string key = fmt::format("mesh.tiers.{}", to_string(t));
        s.set(key + ".writes", c.writes);
        s.set(key + ".chunks", c.chunks);
        s.set(key + ".bytes", c.bytes);
        s.set(key + ".wire_bytes", c.wire_bytes);
        s.set(key + ".header_bytes", c.wire_bytes - c.bytes);
        s.set(key + ".backpressure_ns", static_cast<double>(c.held_ps) / 1000.0);
        s.set(key + ".held_chunks", c.held_chunks);
        wire += c.wire_bytes;
        held += c.held_ps;
    }
    s.set("mesh.bytes", bytes);
    s.set("mesh.wire_bytes", wire);
    s.set("mesh.header_bytes", wire - bytes);
    s.set("mesh.header_overhead", wire > 0 ? static_cast<double>(wire - bytes) / static_cast<double>(wire) : 0.0);
    s.set("mesh.backpressure_ns", static_cast<double>(held) / 1000.0);
    s.set("mesh.writes", writes_);
    s.set("mesh.chunks", chunks_);
    s.set("mesh.local_writes", local_writes_);
    s.set("mesh.local_bytes", local_bytes_);
    s.set("mesh.busiest_link_fraction", static_cast<double>(busiest) / total);
    s.set("units.mesh.utilization", static_cast<double>(tx_busy) / (total * planes_ * ranks_));
}

}  // namespace npusim
