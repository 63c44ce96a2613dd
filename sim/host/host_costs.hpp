// What the framework host pays per op beyond the stage costs of
// chip/host_costs.hpp: the CPU cost model of hetero mode and the host link.
// Plain C++, no SystemC.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "chip/host_costs.hpp"

namespace npusim::compiler {
struct Graph;
struct Node;
}  // namespace npusim::compiler

namespace npusim::host {

// Work of one graph node run on a host CPU thread (hetero mode).
struct CpuWork {
    double flops = 0;
    double bytes = 0;  // inputs read + output written
};
CpuWork cpu_work(const compiler::Graph& g, const compiler::Node& n);
// overhead + max(compute, memory) on one thread, in µs.
double cpu_time_us(const HostParams& p, const CpuWork& w);

// Host link: latency + bytes at link_gbps, in µs.
double link_time_us(double latency_us, double bytes, double gbps);

inline std::uint64_t us_to_ps(double us) { return us <= 0 ? 0 : static_cast<std::uint64_t>(us * 1e6 + 0.5); }

}  // namespace npusim::host
