// The die's global memory: a set-associative write-back L2 (hw/l2_cache)
// in front of HBM (hw/hbm). Every transfer that leaves a core competes here
// for L2 or HBM bandwidth with every other core's transfers (max-min fair
// share, each transfer also capped by its engine and by the L2 slices or HBM
// channels its addresses cover), then pays the tier's latency. Dirty lines
// the L2 evicts go to HBM as background writes that take HBM bandwidth but
// hold up no core. While HBM is idle the L2 writes its oldest dirty lines
// back early (eager write-back, chip.l2.eager_writeback), so dirty data
// made in compute-bound phases does not meet a later bandwidth-bound one.
#pragma once
#include <array>
#include <cstdint>
#include <queue>
#include <vector>

#include <systemc>

#include "hw/bandwidth_share.hpp"
#include "chip/chip_params.hpp"
#include "hw/hbm.hpp"
#include "hw/l2_cache.hpp"
#include "hw/slot_pool.hpp"
#include "engine/wake_scheduler.hpp"
#include "tasks/task.hpp"

namespace npusim {

class Stats;
struct RunSpan;
class TraceWriter;

struct TransferClient {
    // The bytes have left the engine's queue: it may issue its next transfer.
    virtual void transfer_drained(std::uint64_t tag) = 0;
    // The data has arrived (after the tier's latency).
    virtual void transfer_done(std::uint64_t tag) = 0;
    virtual ~TransferClient() = default;
};

// One address range of a transfer, for the L2 hit model.
// No member initialisers: a transfer carries arrays of these, only the
// first n_ranges / n_spans set (zeroing the rest per tile showed in the profile).
struct AddrRange {
    std::uint64_t addr;
    std::uint64_t bytes;
};

class AddressMap;

// Bytes [offset, offset+len) of a task's input or output stream, whose
// address ranges the memory system walks when the transfer starts (the
// map lives as long as the task, so nothing is copied per tile).
struct MappedSpan {
    const AddressMap* map;
    std::uint64_t offset;
    std::uint64_t len;
};

struct TransferRequest {
    bool write = false;        // core -> memory
    Space space = Space::hbm;  // hbm (through the L2 hit model) or l2 (resident)
    std::uint64_t bytes = 0;
    // Where the bytes live, for the L2 hit model: spans of a task's address
    // map (every range they cover is looked up) and explicit ranges. None
    // = unknown addresses (streamed, never reused). Explicit ranges beyond
    // the first kMaxRanges are kept only if they continue the last one;
    // otherwise their bytes count as misses.
    static constexpr int kMaxRanges = 8;
    static constexpr int kMaxSpans = 2;  // a Cube step's A and B
    // Only the first n_ranges / n_spans are set.
    std::array<AddrRange, kMaxRanges> ranges;
    int n_ranges = 0;
    std::array<MappedSpan, kMaxSpans> spans;
    int n_spans = 0;
    void add_range(std::uint64_t addr, std::uint64_t bytes);
    void add_span(const AddressMap* map, std::uint64_t offset, std::uint64_t len);
    bool has_addresses() const { return n_ranges > 0 || n_spans > 0; }
    // Calls f(addr, bytes, in_hbm) for every address range, spans first;
    // in_hbm: a span's range whose region is listed in HBM.
    template <class F>
    void for_each_range(F&& f) const;
    double cap_bytes_per_ps = 0;     // the issuing engine's own limit (HBM part: misses)
    double l2_cap_bytes_per_ps = 0;  // its limit for bytes served by L2 (0: cap_bytes_per_ps)
};

struct MemoryTraffic {
    std::uint64_t hbm_read_bytes = 0;
    std::uint64_t hbm_write_bytes = 0;
    std::uint64_t l2_hit_bytes = 0;
    std::uint64_t l2_miss_bytes = 0;
    std::uint64_t l2_write_bytes = 0;
    std::uint64_t l2_served_bytes = 0;  // moved through L2 bandwidth
    std::uint64_t dirty_eviction_bytes = 0;  // L2 write-backs (part of hbm_write_bytes)
    std::uint64_t clean_bytes = 0;  // eager write-backs while HBM was idle (part of hbm_write_bytes)
    std::uint64_t transfers = 0;
};

class MemorySystem : public sc_core::sc_module, private Wakeable {
public:
    MemorySystem(sc_core::sc_module_name name, WakeScheduler& scheduler, const ChipParams& chip, TraceWriter* trace, int trace_pid);

    // Returns the bytes the L2 serves (hits) and those from HBM (misses) of
    // a read; of a write, those written to L2 and those written through.
    struct Served {
        std::uint64_t l2 = 0, hbm = 0;
    };
    Served transfer(const TransferRequest& req, TransferClient* client, std::uint64_t tag);
    // Many transfers of one engine as one flow (a long run of a task's
    // tiles in closed form, hw/ai_core): prepare_batch runs each part's
    // addresses through the L2 model and says how many bytes come from HBM
    // and from L2; start_batch then moves them as one transfer at the given
    // caps (HBM part, L2 part).
    struct Batch {
        std::uint64_t hbm = 0, l2 = 0, busiest = 0, dirty = 0, overfill = 0;
        bool write = false;
        // Each part's bytes from HBM and from L2, in the order given.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
    };
    Batch prepare_batch(const std::vector<TransferRequest>& parts);
    void start_batch(const Batch& b, double cap, double l2_cap, TransferClient* client, std::uint64_t tag);
    // How long after its last byte moves a transfer's data arrives: from
    // HBM (at today's load) or from L2.
    std::uint64_t hbm_latency_ps() { return hbm_.latency_ps(); }
    // Time up to `now_ps` during which the HBM (L2) share bound its flows.
    std::uint64_t hbm_saturated_ps(std::uint64_t now_ps) const { return hbm_.saturated_ps(now_ps); }
    std::uint64_t l2_saturated_ps(std::uint64_t now_ps) const { return l2_bw_.saturated_ps(now_ps); }
    std::uint64_t l2_latency_ps() const { return l2_latency_ps_; }
    // A write that arrives from outside the die's cores (a remote rank's
    // memory-semantic write landing in this die's GM): the write-back L2
    // allocates its lines, so the die's cores then hit them; lines it evicts
    // go to HBM in the background. No share of L2 bandwidth: the mesh's
    // ingress (at most a few hundred GB/s) is far below it.
    void landed_write(std::uint64_t addr, std::uint64_t bytes);
    // The same for a write that lands at land_ps (>= now): applied then, in
    // this die's own time (a remote rank posts it ahead of its landing).
    void landed_write_at(std::uint64_t land_ps, std::uint64_t addr, std::uint64_t bytes);

    // The die's stream has finished: no more eager write-back (the run's
    // end is its last task; cleaning after it would only add events).
    void stream_done() { stream_done_ = true; }

    const MemoryTraffic& traffic() const { return traffic_; }
    // memory.hbm.*, memory.l2.*, memory.transfers and the share of each
    // tier's bandwidth used over the span (units.hbm, units.l2).
    void report(Stats& s, const RunSpan& span) const;

private:
    struct Pending {
        TransferClient* client;
        std::uint64_t tag;
        std::uint64_t l2_bytes;   // second part, started when the first ends
        std::uint64_t latency_ps;
        double cap;               // HBM part
        double l2_cap;            // engine and slice cap of the L2 part
        bool write_back = false;  // an L2 eviction's write: nobody waits for it
        bool clean = false;       // an eager write-back chunk
    };
    struct Delivery {
        std::uint64_t t;
        std::uint64_t seq;
        std::uint32_t slot;
        bool operator>(const Delivery& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };

    struct Landing {
        std::uint64_t t, seq, addr, bytes;
        bool operator>(const Landing& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };

    // A transfer's bytes by where they come from, after the L2 model.
    // hbm: bytes the port takes from HBM; overfill: the rest of the missed
    // lines, which HBM moves into L2 beside them.
    struct Split {
        std::uint64_t hbm = 0, l2 = 0, busiest = 0, dirty = 0, overfill = 0;
    };
    // take_busiest: read the L2's busiest-slice count now (a batch reads it
    // once for all its parts).
    Split account(const TransferRequest& req, bool take_busiest = true);
    // A read of space l2 whose regions name HBM for some of its bytes.
    Split account_l2_read(const TransferRequest& req, bool take_busiest);
    void start(const Split& s, bool write, double cap, double l2_cap, TransferClient* client, std::uint64_t tag);

    void wake(std::uint64_t) override;
    void start_hbm(std::uint32_t slot, std::uint64_t bytes, bool write, bool background = false);
    void start_l2(std::uint32_t slot, std::uint64_t bytes);
    void write_back(std::uint64_t bytes, bool clean = false);
    // One eager write-back chunk, if HBM is idle and no chunk is in flight.
    void maybe_clean();
    void part_done(std::uint32_t slot);
    void rearm();
    void emit_counters();

    // One wake for both kinds of due work: a flow finishing its bytes and a
    // finished transfer's latency running out.
    WakeScheduler& scheduler_;
    std::uint64_t armed_ps_ = UINT64_MAX;  // earliest wake posted
    // Finished transfers waiting out their latency, which grows with HBM
    // load and so is not in finishing order: a heap by (time, seq).
    std::priority_queue<Delivery, std::vector<Delivery>, std::greater<Delivery>> deliveries_;
    std::uint64_t delivery_seq_ = 0;
    // Remote writes posted ahead of their landing, by (time, seq).
    std::priority_queue<Landing, std::vector<Landing>, std::greater<Landing>> landings_;
    std::uint64_t landing_seq_ = 0;
    std::vector<std::uint64_t> finished_;  // reused buffer
    Hbm hbm_;
    BandwidthShare l2_bw_;
    L2Cache l2_;
    double hbm_bytes_per_ps_, l2_bytes_per_ps_;  // each tier's peak bandwidth
    double l2_slice_bytes_per_ps_;
    std::uint64_t l2_latency_ps_;
    bool eager_writeback_;
    std::uint64_t clean_chunk_bytes_;  // one interleave block per HBM channel
    double clean_cap_bytes_per_ps_;
    bool cleaning_ = false;
    bool stream_done_ = false;
    SlotPool<Pending> slots_;
    MemoryTraffic traffic_;
    TraceWriter* trace_;
    int trace_pid_;
    double last_hbm_gbps_ = -1, last_l2_gbps_ = -1;
};

}  // namespace npusim
