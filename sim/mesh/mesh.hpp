// The supernode mesh (docs/design.md §1.3, §2 Links): every rank has `planes` link
// planes, each with an egress queue and an ingress queue of its own
// bandwidth. A memory-semantic write is cut into DataBlocks; block addresses
// hash to planes, and each plane's share of one write travels as one chunk:
//
//   egress start = max(issue, sender plane free)          FIFO per sender plane
//   head arrives = egress start + latency (+ jitter),     never before the previous
//                                                         chunk of that sender plane
//   lands        = end of the earliest free slot of the receiver plane that starts
//                  at or after the arrival (and not before the previous chunk of
//                  the same sender plane lands) and lasts bytes / bandwidth
//
// so a single write on idle planes lands latency + share/bandwidth after it
// is issued. The receiver plane serves chunks in arrival order; a chunk
// posted later that arrives earlier may use a gap before one posted earlier.
// All blocks of a chunk land together, atomically; chunks of one write on
// different planes land independently (writes are unordered across planes,
// FIFO within one). Writes a rank makes into its own GM skip the planes.
//
// Writes are posted in simulated-time order (the kernel API brings a core's
// time up to date first), so the times are computed when a write is posted
// and handed to the functional memory: no SystemC process or event per chunk.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "chip/chip_params.hpp"
#include "mesh/global_memory.hpp"

namespace npusim {

class Stats;
struct RunSpan;
class TraceWriter;

enum class WriteKind : std::uint8_t {
    data,          // payload only: ceil(bytes / block) blocks, no flag
    data_as_flag,  // every block carries block-8 B of payload and the 8 B flag
    flag,          // one block (e.g. a 32 B {flag, count} status), carries the flag
};

struct WriteRequest {
    int src_rank = 0;
    int dst_rank = 0;
    Addr addr = 0;            // block-aligned for data and data_as_flag
    std::uint64_t bytes = 0;  // payload bytes (flag: bytes written in the block)
    WriteKind kind = WriteKind::data;
    std::uint64_t flag = 0;
};

// Blocks and wire bytes of a write (also used by tests and the kernel API).
std::uint32_t write_blocks(const WriteRequest& w, std::uint32_t block_bytes);
std::uint64_t write_wire_bytes(const WriteRequest& w, std::uint32_t block_bytes);

struct PostedWrite {
    std::uint64_t left_ps = 0;  // the last byte has left the sender's planes
    std::uint64_t land_ps = 0;  // the last block has landed
};

class Mesh : public sc_core::sc_module {
public:
    // `trace` may be null; ranks below `traced_ranks` get plane tracks
    // (pid = rank + 1, tid 1000 + plane for egress, 2000 + plane for ingress).
    Mesh(sc_core::sc_module_name name, const ChipParams& chip, GlobalMemory& memory, TraceWriter* trace,
         int traced_ranks);

    // A write to another rank whose first byte may leave at t_ps (>= the
    // issue time of every write posted before it).
    PostedWrite post(const WriteRequest& w, std::uint64_t t_ps);
    // A write into the sender's own GM (no planes); lands at land_ps.
    void post_local(const WriteRequest& w, std::uint64_t land_ps);

    int plane_of(int rank, Addr addr) const;  // plane of the block at addr of rank's GM
    std::uint64_t writes() const { return writes_; }
    std::uint64_t chunks() const { return chunks_; }
    // mesh.planes.<p>.*, mesh.links.r<rank>.p<plane>.*, the mesh totals and
    // units.mesh.utilization (bytes over every plane's bandwidth for the span).
    void report(Stats& s, const RunSpan& span) const;

private:
    struct Interval {
        std::uint64_t start, end;
    };
    struct Link {
        std::uint64_t free_ps = 0;          // egress: FIFO busy until
        std::vector<Interval> busy;         // ingress: reserved slots, sorted, merged
        std::size_t head = 0;               // ingress: slots before this are past
        std::uint64_t bytes = 0;
        std::uint64_t busy_ps = 0;
        std::uint64_t chunks = 0;
    };

    // Earliest slot of `dur` at or after `from` on an ingress link; reserves it.
    static std::uint64_t reserve(Link& in, std::uint64_t from, std::uint64_t dur, std::uint64_t now);
    Link& egress(int rank, int plane) { return egress_[static_cast<std::size_t>(rank * planes_ + plane)]; }
    Link& ingress(int rank, int plane) { return ingress_[static_cast<std::size_t>(rank * planes_ + plane)]; }
    void trace_slice(int rank, bool tx, int plane, std::uint64_t start_ps, std::uint64_t dur_ps, int peer,
                     std::uint64_t bytes);

    const ChipParams& chip_;
    GlobalMemory& memory_;
    TraceWriter* trace_;
    int traced_ranks_;
    int ranks_, planes_;
    std::uint32_t block_;
    bool mix_;
    double ps_per_byte_;
    std::uint64_t latency_ps_;
    std::uint64_t jitter_bound_ps_;
    std::uint64_t seed_;

    std::vector<Link> egress_, ingress_;
    std::vector<char> track_named_;  // per traced (rank, direction, plane)
    std::vector<std::uint64_t> plane_bytes_;  // scratch: a write's share per plane
    std::vector<std::uint64_t> plane_land_;   // scratch: when that share lands
    std::vector<std::uint8_t> block_plane_;   // scratch: each block's plane
    struct Order {
        std::uint64_t arrival_ps = 0, land_ps = 0;
    };
    std::vector<Order> order_;  // per (sender, plane, receiver): the last chunk

    std::uint64_t writes_ = 0, local_writes_ = 0, chunks_ = 0, chunk_seq_ = 0;
    std::uint64_t local_bytes_ = 0;
};

}  // namespace npusim
