// Plain description of one die, resolved from the chip section of the run
// document. Hardware modules see only this struct, never JSON.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace npusim {

enum class CoreLayout { coupled, split };

struct CubeParams {
    int count = 0;
    int shape_m = 16, shape_k = 16, shape_n = 16;  // fp16 fractal; int8 doubles k
    double gm_bytes_per_cycle = 32;                 // the core's GM port for L2 misses (HBM)
    double l2_read_bytes_per_cycle = 110;           // the same port for L2 hits, reads
    double l2_write_bytes_per_cycle = 86;           // and writes into L2
    double l1_to_l0_bytes_per_cycle = 512;          // MTE1
    double fixpipe_bytes_per_cycle = 128;           // L0C -> L1/UB (on-core)
    int task_start_cycles = 64;                     // kernel entry on the core
    bool mte2_nd2nz = false;                        // MTE2 makes plain (ND) operands fractal on the way into L1
    bool fixpipe_nz2nd = false;                     // FixPipe writes results plain (ND) on the way out of L0C
};

struct VectorParams {
    int count = 0;
    int repeat_bytes = 256;           // one V repeat
    double gm_bytes_per_cycle = 32;   // the core's GM port for L2 misses (HBM)
    double l2_read_bytes_per_cycle = 110;  // the same port for L2 hits, reads
    double l2_write_bytes_per_cycle = 86;  // and writes into L2
    double ub_bytes_per_cycle = 128;  // on-core moves into/out of UB
    int tile_kb = 32;                 // per-instruction chunk moved through UB
    int max_repeats = 255;            // repeats one vector instruction may run
    double issue_cycles = 16;         // V-pipe cycles per instruction beyond its repeats
    int task_start_cycles = 64;
};

struct ScalarParams {
    int count = 1;
    int dispatch_cycles = 32;  // per task, serial on a scalar core
    // Tasks a core's own queue holds beside the one it runs: the scalar core
    // fills it while the core works, so dispatch overlaps execution.
    int queue_depth = 2;
};

struct BufferParams {
    int ub_kb = 192;
    int l1_kb = 512;
    int l0a_kb = 64;
    int l0b_kb = 64;
    int l0c_kb = 128;
};

struct L2Params {
    double size_mb = 192;
    double bandwidth_gbps = 5000;  // aggregate, all cores
    double latency_ns = 100;
    int region_kb = 4;             // tag block: one tag covers this many bytes of lines
    int interleave_bytes = 512;    // slice interleave: consecutive units of this size on consecutive slices
    int line_bytes = 512;          // cache line: unit of tags, fills and dirty write-backs
    int ways = 16;                 // associativity (a power of two)
    int slices = 16;               // banks, each bandwidth_gbps / slices; lines hashed to slices
    bool eager_writeback = true;   // write dirty lines back while HBM is idle
};

struct HbmParams {
    double bandwidth_gbps = 1600;
    double latency_ns = 300;
    double size_gb = 64;
    int channels = 32;             // independent channels, each bandwidth_gbps / channels
    int interleave_bytes = 512;    // consecutive blocks of this size go to consecutive channels
    double efficiency = 0.92;      // streaming share of peak left by refresh and row switches
    double turnaround_ns = 8;      // idle time when a channel switches read <-> write
    int write_batch_bytes = 4096;  // writes a channel drains per direction switch
};

// The supernode mesh (docs/design.md §1.3, §2 Links): dies ("ranks") joined by
// memory-semantic link planes. ranks = 1 is a single die without a mesh.
// One tier of the supernode mesh (docs/design.md §2, Links): ranks of one
// node reach each other through the node's switches, ranks of different
// nodes also through the switch tier between nodes.
struct LinkTier {
    double latency_ns = 1000;           // first byte out to first byte in, per plane
    double plane_bandwidth_gbps = 28;   // per plane and direction, end to end
};

struct InterconnectParams {
    int ranks = 1;                      // dies in the supernode
    int planes = 7;                     // parallel link planes per rank
    int node_size = 8;                  // ranks per node: ranks r and s share a node if r / node_size == s / node_size
    LinkTier intra_node{500, 28};       // between ranks of one node
    LinkTier inter_node{1000, 28};      // between nodes, through the switch tier
    int datablock_bytes = 512;          // atomic delivery unit
    int header_bytes = 32;              // on the wire with every DataBlock
    int ingress_buffer_bytes = 65536;   // per receiver plane: what may wait there to land (credits)
    std::string plane_hash = "mix";     // block address -> plane: "mix" or "modulo"
    std::int64_t reorder_seed = 0;      // 0: no jitter; else deterministic per-chunk jitter
    double reorder_jitter_ns = -1;      // jitter bound; < 0 means the tier's latency_ns

    bool same_node(int a, int b) const { return a / node_size == b / node_size; }
    const LinkTier& tier(int src, int dst) const { return same_node(src, dst) ? intra_node : inter_node; }
    // Tiers some pair of ranks uses (a system of one node has no inter-node pair).
    bool uses_intra() const { return ranks > 1 && node_size > 1; }
    bool uses_inter() const { return ranks > node_size; }
    // The shortest and longest latency any pair of ranks sees.
    double min_latency_ns() const {
        if (uses_intra() && uses_inter()) return intra_node.latency_ns < inter_node.latency_ns ? intra_node.latency_ns : inter_node.latency_ns;
        return uses_inter() ? inter_node.latency_ns : intra_node.latency_ns;
    }
    double max_latency_ns() const {
        if (uses_intra() && uses_inter()) return intra_node.latency_ns > inter_node.latency_ns ? intra_node.latency_ns : inter_node.latency_ns;
        return uses_inter() ? inter_node.latency_ns : intra_node.latency_ns;
    }
};

// Costs of the kernel API (hw/aiv_core) that are not bandwidth or memory
// latency: fixed instruction overheads, polling, barriers. A DataCopy's
// fixed cost is split into what happens physically (docs/supernode.md "What a
// DataCopy costs"); its bytes and latency come from the die's memory system.
struct KernelCostParams {
    double sync_all_ns = 2500;          // SyncAll of all AIV cores of a die
    double flag_poll_ns = 500;          // one poll of a flag in GM (read + compare)
    double descriptor_issue_ns = 50;    // MTE: descriptor fetch, decode, address translation before the first byte
    double completion_ns = 50;          // MTE: last byte arrived -> the instruction reports done
    double flag_handshake_ns = 20;      // SetFlag/WaitFlag: a pipe (or the scalar) sees another pipe's done
    double issue_cycles = 20;           // scalar cycles to issue one MTE or vector instruction
    double scalar_loop_cycles = 8;      // one iteration of a scalar loop over UB data
};

// Host runtime (docs/design.md §1.2, sim/host): per-op framework costs in µs,
// static-shape and dynamic-shape variants; see docs/host.md.
struct HostStageCosts {
    double frontend_us = 4, frontend_dynamic_us = 5;  // framework frontend on the caller thread
    double prepare_us = 2, infer_us = 3, resize_us = 4, alloc_us = 2, launch_us = 6, free_us = 0.5;
    double prepare_dynamic_us = 3, infer_dynamic_us = 8, resize_dynamic_us = 12, alloc_dynamic_us = 4,
           launch_dynamic_us = 8, free_dynamic_us = 1;
};

struct HostParams {
    int threads = 8;                  // host threads the runtime may use
    HostStageCosts costs;             // every op type ...
    // ... unless overridden here: op type -> {"resize_us": 10, ...} (sparse).
    std::map<std::string, std::map<std::string, double>> op_costs;
    double cpu_gflops_per_thread = 50;  // CPU subgraph cost model (hetero)
    double cpu_gbps_per_thread = 10;
    double cpu_op_overhead_us = 5;
    int descriptor_bytes = 64;        // one task descriptor
    int param_block_bytes = 256;      // its parameter block
    double link_gbps = 25;            // host <-> device link
    double submit_latency_us = 1;     // per submission (doorbell, runtime call)
    double copy_latency_us = 8;       // per device<->host copy call
    double sync_latency_us = 3;       // device done -> host thread sees it
    // Serial costs pipelining cannot hide (docs/host.md, "Serial costs").
    double queue_push_us = 0.3;       // hand a task to a stage's queue (lock, enqueue, notify)
    double queue_pop_us = 0.2;        // take a task from it
    std::string worker_wait = "sleep";  // idle workers: "sleep" (off core, woken) or "spin" (on core)
    double wake_latency_us = 5;       // sleeping worker: push -> running
    double spin_latency_us = 0.1;     // spinning worker: push -> seen
    int launch_queue_depth = 4096;    // launch queue capacity; a full queue blocks the pusher
    int cores = 8;                    // host cores the busy host threads share
    double pool_segment_mb = 2;       // the device pool reserves memory in segments of this size
    double pool_grow_us = 10;         // reserving one more segment from the driver (on the launch thread)
};

struct ChipParams {
    std::string name;
    double clock_ghz = 1.0;
    CoreLayout layout = CoreLayout::split;
    CubeParams cube;
    VectorParams vector;
    ScalarParams scalar;
    BufferParams buffers;
    L2Params l2;
    HbmParams hbm;
    HostParams host;
    InterconnectParams interconnect;
    KernelCostParams kernel;

    // Picoseconds per core cycle (not an integer in general).
    double ps_per_cycle() const { return 1000.0 / clock_ghz; }
};

}  // namespace npusim
