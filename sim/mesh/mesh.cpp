#include "mesh/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/wake_scheduler.hpp"
#include "mesh/plane_hash.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
std::uint64_t round_up(std::uint64_t v, std::uint64_t m) { return (v + m - 1) / m * m; }
}  // namespace

std::uint32_t write_blocks(const WriteRequest& w, std::uint32_t block_bytes) {
    switch (w.kind) {
        case WriteKind::flag: return 1;
        case WriteKind::data_as_flag:
            return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (w.bytes + block_bytes - 9) / (block_bytes - 8)));
        case WriteKind::data: break;
    }
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (w.bytes + block_bytes - 1) / block_bytes));
}

// Data: the payload in 32 B beats; Data-as-Flag: whole blocks (payload, padding
// and the flag at the block's end); flag: the bytes written, in 32 B beats.
std::uint64_t write_wire_bytes(const WriteRequest& w, std::uint32_t block_bytes) {
    switch (w.kind) {
        case WriteKind::flag: return std::min<std::uint64_t>(round_up(std::max<std::uint64_t>(w.bytes, 8), 32), block_bytes);
        case WriteKind::data_as_flag: return static_cast<std::uint64_t>(write_blocks(w, block_bytes)) * block_bytes;
        case WriteKind::data: break;
    }
    return round_up(std::max<std::uint64_t>(w.bytes, 1), 32);
}

Mesh::Mesh(sc_core::sc_module_name name, const ChipParams& chip, GlobalMemory& memory, TraceWriter* trace,
           int traced_ranks)
    : sc_core::sc_module(name),
      chip_(chip),
      memory_(memory),
      trace_(trace && trace->enabled() ? trace : nullptr),
      traced_ranks_(std::min(traced_ranks, chip.interconnect.ranks)),
      ranks_(chip.interconnect.ranks),
      planes_(chip.interconnect.planes),
      block_(static_cast<std::uint32_t>(chip.interconnect.datablock_bytes)),
      mix_(chip.interconnect.plane_hash == "mix"),
      ps_per_byte_(1000.0 / chip.interconnect.plane_bandwidth_gbps),
      latency_ps_(static_cast<std::uint64_t>(std::llround(chip.interconnect.plane_latency_ns * 1000.0))),
      jitter_bound_ps_(latency_ps_),
      seed_(static_cast<std::uint64_t>(chip.interconnect.reorder_seed)),
      egress_(static_cast<std::size_t>(ranks_ * planes_)),
      ingress_(static_cast<std::size_t>(ranks_ * planes_)),
      track_named_(static_cast<std::size_t>(std::max(traced_ranks_, 0) * 2 * planes_), 0),
      plane_bytes_(static_cast<std::size_t>(planes_), 0),
      plane_land_(static_cast<std::size_t>(planes_), 0),
      order_(static_cast<std::size_t>(ranks_) * planes_ * ranks_) {}

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

PostedWrite Mesh::post(const WriteRequest& w, std::uint64_t t_ps) {
    if (w.src_rank == w.dst_rank) throw std::logic_error("Mesh::post: a write to the sender's own GM is post_local");
    if (w.kind != WriteKind::flag && w.addr % block_ != 0)
        throw std::logic_error(fmt::format("Mesh::post: data write at {:#x} is not aligned to {} B blocks", w.addr, block_));
    ++writes_;
    const std::uint32_t nb = write_blocks(w, block_);
    const std::uint64_t first = w.addr / block_;
    const std::uint64_t now = sc_core::sc_time_stamp().value();

    // Each block's plane and each plane's share of the write, in wire bytes.
    std::fill(plane_bytes_.begin(), plane_bytes_.end(), 0);
    block_plane_.resize(nb);
    std::uint64_t left = write_wire_bytes(w, block_);
    const std::uint64_t per_block = w.kind == WriteKind::flag ? left : block_;
    for (std::uint32_t i = 0; i < nb; ++i) {
        const int p = plane_of_block(global_block(w.dst_rank, first + i), planes_, mix_);
        block_plane_[i] = static_cast<std::uint8_t>(p);
        const std::uint64_t b = w.kind == WriteKind::data ? std::min<std::uint64_t>(left, block_) : per_block;
        plane_bytes_[static_cast<std::size_t>(p)] += b;
        if (w.kind == WriteKind::data) left -= b;
    }

    PostedWrite out{t_ps, t_ps};
    for (int p = 0; p < planes_; ++p) {
        const std::uint64_t bytes = plane_bytes_[static_cast<std::size_t>(p)];
        if (bytes == 0) continue;
        const auto dur = static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) * ps_per_byte_));
        Link& e = egress(w.src_rank, p);
        const std::uint64_t start = std::max(t_ps, e.free_ps);
        e.free_ps = start + dur;
        e.bytes += bytes;
        e.busy_ps += dur;
        ++e.chunks;
        // FIFO within a plane: chunks from one sender to one receiver on one
        // plane arrive and land in the order they left.
        Order& order = order_[(static_cast<std::size_t>(w.src_rank) * planes_ + p) * ranks_ + w.dst_rank];
        std::uint64_t arrive = start + latency_ps_ + delivery_jitter_ps(seed_, chunk_seq_++, jitter_bound_ps_);
        arrive = std::max(arrive, order.arrival_ps);
        order.arrival_ps = arrive;
        Link& in = ingress(w.dst_rank, p);
        const std::uint64_t from = order.land_ps > dur ? std::max(arrive, order.land_ps - dur) : arrive;
        const std::uint64_t land = reserve(in, from, dur, now);
        order.land_ps = std::max(order.land_ps, land);
        in.bytes += bytes;
        in.busy_ps += dur;
        ++in.chunks;
        ++chunks_;
        out.left_ps = std::max(out.left_ps, start + dur);
        out.land_ps = std::max(out.land_ps, land);
        plane_land_[static_cast<std::size_t>(p)] = land;
        ++sim_events_total();
        if (trace_) {
            if (w.src_rank < traced_ranks_) trace_slice(w.src_rank, true, p, start, dur, w.dst_rank, bytes);
            if (w.dst_rank < traced_ranks_) trace_slice(w.dst_rank, false, p, land - dur, dur, w.src_rank, bytes);
        }
    }
    const bool has_flag = w.kind != WriteKind::data;
    for (std::uint32_t i = 0; i < nb; ++i)
        memory_.post_block(w.dst_rank, first + i, plane_land_[block_plane_[i]], has_flag, w.flag);
    return out;
}

void Mesh::post_local(const WriteRequest& w, std::uint64_t land_ps) {
    ++local_writes_;
    local_bytes_ += write_wire_bytes(w, block_);
    const std::uint32_t nb = write_blocks(w, block_);
    const std::uint64_t first = w.addr / block_;
    const bool has_flag = w.kind != WriteKind::data;
    for (std::uint32_t i = 0; i < nb; ++i) memory_.post_block(w.dst_rank, first + i, land_ps, has_flag, w.flag);
}

void Mesh::trace_slice(int rank, bool tx, int plane, std::uint64_t start_ps, std::uint64_t dur_ps, int peer,
                       std::uint64_t bytes) {
    const int tid = (tx ? 1000 : 2000) + plane;
    const std::size_t slot = static_cast<std::size_t>((rank * 2 + (tx ? 0 : 1)) * planes_ + plane);
    if (!track_named_[slot]) {
        track_named_[slot] = 1;
        trace_->thread(rank + 1, tid, fmt::format("plane{}.{}", plane, tx ? "tx" : "rx"), tid);
    }
    trace_->complete(rank + 1, tid, tx ? "chunk out" : "chunk in", "link", start_ps, dur_ps,
                     fmt::format(R"("{}":{},"bytes":{})", tx ? "dst" : "src", peer, bytes));
}

void Mesh::report(Stats& s, const RunSpan& span) const {
    const double total = static_cast<double>(std::max<std::uint64_t>(span.total_ps, 1));
    std::uint64_t bytes = 0, busiest = 0;
    double busiest_frac = 0;
    for (int p = 0; p < planes_; ++p) {
        std::uint64_t pb = 0, busy = 0, rx_busy = 0;
        for (int r = 0; r < ranks_; ++r) {
            const Link& e = egress_[static_cast<std::size_t>(r * planes_ + p)];
            const Link& i = ingress_[static_cast<std::size_t>(r * planes_ + p)];
            pb += e.bytes;
            busy += e.busy_ps;
            rx_busy += i.busy_ps;
            const std::uint64_t link_busy = std::max(e.busy_ps, i.busy_ps);
            if (link_busy > busiest) busiest = link_busy;
        }
        bytes += pb;
        const std::string key = fmt::format("mesh.planes.{}", p);
        s.set(key + ".bytes", pb);
        s.set(key + ".tx_busy_fraction", static_cast<double>(busy) / (total * ranks_));
        s.set(key + ".rx_busy_fraction", static_cast<double>(rx_busy) / (total * ranks_));
    }
    busiest_frac = static_cast<double>(busiest) / total;
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
    s.set("mesh.bytes", bytes);
    s.set("mesh.writes", writes_);
    s.set("mesh.chunks", chunks_);
    s.set("mesh.local_writes", local_writes_);
    s.set("mesh.local_bytes", local_bytes_);
    s.set("mesh.busiest_link_fraction", busiest_frac);
    const double cap = chip_.interconnect.plane_bandwidth_gbps / 1000.0 * total * planes_ * ranks_;
    s.set("units.mesh.utilization", cap > 0 ? static_cast<double>(bytes) / cap : 0.0);
}

}  // namespace npusim
