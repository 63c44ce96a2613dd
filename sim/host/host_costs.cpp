#include "host/host_costs.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::host {

double cpu_time_us(const HostParams& p, const CpuWork& w) {
    const double compute = w.flops / (p.cpu_gflops_per_thread * 1e3);  // GFLOP/s = 1e3 FLOP/µs
    const double memory = w.bytes / (p.cpu_gbps_per_thread * 1e3);     // GB/s = 1e3 B/µs
    return p.cpu_op_overhead_us + std::max(compute, memory);
}

double link_time_us(double latency_us, double bytes, double gbps) { return latency_us + bytes / (gbps * 1e3); }

}  // namespace npusim::host
