// Plain description of one die, resolved from the chip section of the run
// document. Hardware modules see only this struct, never JSON.
#pragma once
#include <cstdint>
#include <string>

namespace npusim {

enum class CoreLayout { coupled, split };

struct CubeParams {
    int count = 0;
    int shape_m = 16, shape_k = 16, shape_n = 16;  // fp16 fractal; int8 doubles k
    double gm_bytes_per_cycle = 32;                 // MTE2 / FixPipe port to L2
    double l1_to_l0_bytes_per_cycle = 512;          // MTE1
    double fixpipe_bytes_per_cycle = 128;           // L0C -> L1/UB (on-core)
    int task_start_cycles = 64;                     // kernel entry on the core
};

struct VectorParams {
    int count = 0;
    int repeat_bytes = 256;           // one V repeat
    double gm_bytes_per_cycle = 32;   // MTE2 / MTE3 port to L2
    double ub_bytes_per_cycle = 128;  // on-core moves into/out of UB
    int tile_kb = 32;                 // per-instruction chunk moved through UB
    int task_start_cycles = 64;
};

struct ScalarParams {
    int count = 1;
    int dispatch_cycles = 32;  // per task, serial on a scalar core
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
    int region_kb = 64;            // granularity of the recency (hit) model
};

struct HbmParams {
    double bandwidth_gbps = 1600;
    double latency_ns = 300;
    double size_gb = 64;
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

    // Picoseconds per core cycle (not an integer in general).
    double ps_per_cycle() const { return 1000.0 / clock_ghz; }
};

}  // namespace npusim
