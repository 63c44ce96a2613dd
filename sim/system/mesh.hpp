// The supernode mesh (docs/design.md §1.3, §2 Links): every rank has `planes`
// link planes, each with an egress queue and an ingress queue. Ranks come in
// nodes of `node_size`; a write inside a node uses the intra_node tier, a
// write between nodes the inter_node tier (through the switch tier, which is
// non-blocking: contention is at the two ends only). A memory-semantic write
// is cut into DataBlocks, each with `header_bytes` on the wire; block
// addresses hash to planes, and each plane's share of one write travels as
// one chunk of d = (payload + headers) / tier bandwidth:
//
//   egress start = max(issue, sender plane free)          FIFO per sender plane
//   head arrives = egress start + tier latency (+ jitter), never before the previous
//                                                         chunk of that sender plane
//   lands        = end of the earliest free slot of the receiver plane that starts
//                  at or after the arrival (and not before the previous chunk of
//                  the same sender plane lands) and lasts d
//   leaves       = egress start + d, or later if the receiver cannot take it:
//                  the chunk's last byte may reach the receiver plane only when
//                  what is still to drain there up to its landing, itself
//                  included, fits ingress_buffer_bytes (credit back-pressure;
//                  the sender plane is held, and with it the MTE3 behind it)
//
// so a single write on idle planes lands latency + share/bandwidth after it
// is issued, and an N-to-1 incast runs at the receiver's rate: its senders
// are held while the receiver's buffer is full. The receiver plane serves
// chunks in arrival order; a chunk posted later that arrives earlier may use
// a gap before one posted earlier. All blocks of a chunk land together,
// atomically; chunks of one write on different planes land independently
// (writes are unordered across planes, FIFO within one). Writes a rank makes
// into its own GM skip the planes.
//
// Writes are posted in simulated-time order (the kernel API brings a core's
// time up to date first), so the times are computed when a write is posted
// and handed to the functional memory: no SystemC process or event per chunk.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "chip/chip_params.hpp"
#include "hw/fabric.hpp"
#include "system/global_memory.hpp"

namespace npusim {

class Stats;
struct RunSpan;
class TraceWriter;

// The two tiers of the mesh, in the order of their stats and trace tracks.
enum class MeshTier : std::uint8_t { intra, inter };
constexpr int kMeshTiers = 2;
const char* to_string(MeshTier t);  // "intra", "inter"

class Mesh : public sc_core::sc_module {
public:
    // `trace` may be null; the ranks in `traced` get plane tracks per tier
    // (pid = rank + 1; tid 1000 + 100 * tier + plane for egress, 2000 + 100
    // * tier + plane for ingress; named like "inter.plane3.tx") and, after
    // the run (trace_link_counters), a counter of each tier's egress rate.
    Mesh(sc_core::sc_module_name name, const ChipParams& chip, GlobalMemory& memory, TraceWriter* trace,
         const std::vector<int>& traced);
    // Counters "intra tx (GB/s)", "inter tx (GB/s)" on each traced rank: the
    // summed rate of its chunks in flight on the tier's planes.
    void trace_link_counters();

    // A write to another rank whose first byte may leave at t_ps (>= the
    // issue time of every write posted before it).
    PostedWrite post(const WriteRequest& w, std::uint64_t t_ps);
    // A write into the sender's own GM (no planes); lands at land_ps.
    void post_local(const WriteRequest& w, std::uint64_t land_ps);

    int plane_of(int rank, Addr addr) const;  // plane of the block at addr of rank's GM
    MeshTier tier_of(int src_rank, int dst_rank) const;
    // How long senders' planes were held by full receivers, in total.
    std::uint64_t backpressure_ps() const;
    std::uint64_t writes() const { return writes_; }
    std::uint64_t chunks() const { return chunks_; }
    // mesh.planes.<p>.*, mesh.links.r<rank>.p<plane>.*, mesh.tiers.<tier>.*,
    // the mesh totals and units.mesh.utilization (the share of the span every
    // sender plane was busy sending).
    void report(Stats& s, const RunSpan& span) const;

private:
    struct Interval {
        std::uint64_t start, end;
    };
    struct Link {
        std::uint64_t free_ps = 0;          // egress: FIFO busy until
        std::vector<Interval> busy;         // ingress: reserved slots, sorted, merged
        std::size_t head = 0;               // ingress: slots before this are past
        std::uint64_t bytes = 0;            // payload as carried (32 B beats), without headers
        std::uint64_t busy_ps = 0;
        std::uint64_t held_ps = 0;          // egress: held by full receivers
        std::uint64_t chunks = 0;
    };
    struct TierSpec {
        double ps_per_byte = 0;
        std::uint64_t latency_ps = 0, jitter_bound_ps = 0, buffer_ps = 0;
    };
    struct TierCount {
        std::uint64_t writes = 0, chunks = 0, bytes = 0, wire_bytes = 0, held_ps = 0, held_chunks = 0;
    };

    // Earliest slot of `dur` at or after `from` on an ingress link; reserves it.
    static std::uint64_t reserve(Link& in, std::uint64_t from, std::uint64_t dur, std::uint64_t now);
    // Earliest time from which at most `budget` of the slots reserved on an
    // ingress link before `land` is still to drain.
    static std::uint64_t drained_to_budget(const Link& in, std::uint64_t land, std::uint64_t budget);
    Link& egress(int rank, int plane) { return egress_[static_cast<std::size_t>(rank * planes_ + plane)]; }
    Link& ingress(int rank, int plane) { return ingress_[static_cast<std::size_t>(rank * planes_ + plane)]; }
    void trace_slice(int rank, bool tx, MeshTier tier, int plane, const char* what, std::uint64_t start_ps,
                     std::uint64_t dur_ps, int peer, std::uint64_t bytes);

    GlobalMemory& memory_;
    TraceWriter* trace_;
    std::vector<char> traced_;  // per rank
    // Per traced (rank, tier): the chunks sent, for the rate counters.
    struct Chunk {
        std::uint64_t start_ps, end_ps, bytes;
    };
    std::vector<std::vector<Chunk>> sent_;
    int ranks_, planes_, node_size_;
    std::uint32_t block_, header_;
    bool mix_;
    TierSpec tiers_[kMeshTiers];
    std::uint64_t seed_;

    std::vector<Link> egress_, ingress_;
    std::vector<char> track_named_;  // per (rank, tier, direction, plane) of traced ranks
    std::vector<std::uint64_t> plane_bytes_;  // scratch: a write's share per plane
    std::vector<std::uint64_t> plane_land_;   // scratch: when that share lands
    std::vector<std::uint32_t> plane_blocks_; // scratch: blocks in that share
    std::vector<std::uint8_t> block_plane_;   // scratch: each block's plane
    struct Order {
        std::uint64_t arrival_ps = 0, land_ps = 0;
    };
    std::vector<Order> order_;  // per (sender, plane, receiver): the last chunk

    std::uint64_t writes_ = 0, local_writes_ = 0, chunks_ = 0, chunk_seq_ = 0;
    std::uint64_t local_bytes_ = 0;
    TierCount tier_count_[kMeshTiers];
};

}  // namespace npusim
