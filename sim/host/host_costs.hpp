// What the framework host pays per op (DESIGN §1.2): the per-stage cost
// table (static and dynamic shapes, per op type) and the CPU cost model of
// hetero mode. Plain C++, no SystemC.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hw/chip_params.hpp"

namespace npusim::compiler {
struct Graph;
struct Node;
}  // namespace npusim::compiler

namespace npusim::host {

// The host-side stages of one op in kernel-by-kernel execution.
enum class Stage { prepare, infer, resize, alloc, launch, free };
const char* to_string(Stage s);

// Keys of one op's cost entry: "prepare_us", "prepare_dynamic_us", ... .
const std::vector<std::string>& cost_keys();
// Op types an entry of chip.host.op_costs may name (graph ops + FormatConvert).
const std::vector<std::string>& cost_op_types();

// The built-in per-op-type table: the schema default of chip.host.op_costs.
const nlohmann::json& default_op_costs();
// Validates an op_costs object (InputError naming the key) and merges it
// over the built-in table, per op type and per key.
std::map<std::string, std::map<std::string, double>> resolve_op_costs(const nlohmann::json& v);

// Cost of one stage of an op of `op_type`, in µs: the op_costs entry if it
// has the key, else the chip-wide chip.host.<stage>[_dynamic]_us.
double stage_cost_us(const HostParams& p, const std::string& op_type, Stage s, bool dynamic);

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
