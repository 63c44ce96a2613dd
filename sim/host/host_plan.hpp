// What the framework host does for each op of a compiled graph
// (docs/design.md §1.2): one host op per compiled kernel, in the compiler's (topological)
// order, with its cost-table op type, its device tasks, whether it is
// value- or compute-dependent, whether it runs on a CPU thread (hetero),
// and the device buffer it allocates and the buffers that die after it.
// Plain C++, no SystemC.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compiler/op_table.hpp"
#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "tasks/task.hpp"

namespace npusim::host {

using Mode = HostMode;  // workload.host_mode
const char* to_string(Mode m);
// Host threads a mode needs (hetero: 3 + at least one CPU worker).
int threads_needed(Mode m);

struct HostOp {
    std::string name;                  // the kernel's name: its graph nodes joined by '+'
    std::string type;                  // op type for the cost table (the kernel's first node)
    std::vector<std::uint32_t> tasks;  // its tasks in the compiled stream, in stream order
    bool on_cpu = false;               // hetero: the CPU subgraph runs it on a host thread
    // Value-dependent (Reshape with a shape tensor, ReduceSum with an axes
    // tensor): InferShape needs a tensor's value from the device.
    bool value_dependent = false;
    std::uint64_t value_bytes = 0;     // the value copied to the host
    bool value_on_host = false;        // produced by a CPU op: no copy
    // Compute-dependent (Unique, NonZero): its output shape is known only
    // after it ran.
    bool compute_dependent = false;
    std::uint64_t shape_bytes = 0;     // the output shape copied back
    // Device memory: the buffer it writes (allocated at its launch) and the
    // ops whose buffers it is the last reader of (freed after its launch).
    std::uint64_t out_bytes = 0;
    std::vector<int> frees;
    // Hetero CPU ops: run time on one thread and the operands that cross the link.
    double cpu_us = 0;
    std::uint64_t d2h_bytes = 0, h2d_bytes = 0;

    bool on_device() const { return !on_cpu && !tasks.empty(); }
};

struct HostPlan {
    std::vector<HostOp> ops;
    std::uint64_t resident_bytes = 0;  // graph inputs and weights, on the device throughout
    std::size_t value_dependent = 0, compute_dependent = 0, cpu_ops = 0, views = 0;
};

// `ops` and `stream` come from the compiled result; `cpu_nodes` are the
// node names labelled for the CPU besides "device": "cpu" (only used when
// `hetero`). InputError for a CPU label on a node fused with NPU nodes, or a
// name that is not a node.
HostPlan make_plan(const compiler::OpTable& ops, const TaskStream& stream, const std::vector<std::string>& cpu_nodes,
                   bool hetero, const HostParams& params);

}  // namespace npusim::host
