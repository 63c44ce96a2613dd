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
#include "compiler/op_table.hpp"

namespace npusim::host {

// Work of one graph node run on a host CPU thread (hetero mode); the
// compiler works it out with the op table (compiler::node_work).
using CpuWork = compiler::NodeWork;
// overhead + max(compute, memory) on one thread, in µs.
double cpu_time_us(const HostParams& p, const CpuWork& w);

// Host link: latency + bytes at link_gbps, in µs.
double link_time_us(double latency_us, double bytes, double gbps);

inline std::uint64_t us_to_ps(double us) { return us <= 0 ? 0 : static_cast<std::uint64_t>(us * 1e6 + 0.5); }

}  // namespace npusim::host
