// What the framework host needs to know about the ops of a compiled graph
// (docs/host.md), taken from the graph as read (before the passes rewrote it)
// and the compiled stream: one entry per compiled kernel, in the compiler's
// (topological) order. The host plans from this alone: it never reads the
// graph file again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/tiling_choice.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

// Work of one graph node if a host CPU thread runs it (hetero mode).
struct NodeWork {
    double flops = 0;
    double bytes = 0;  // inputs read + output written
};
NodeWork node_work(const Graph& g, const Node& n);

// A tensor a node reads: its size and who made it.
struct OpInput {
    std::uint64_t bytes = 0;
    bool computed = false;  // made by a node, not a graph input or constant (those are known on the host)
    int op = -1;            // the op holding that node; -1 if none (a graph input, or a node a pass folded away)
};

struct OpNode {
    std::string name;
    bool cpu_label = false;        // "device": "cpu" in the graph file
    std::vector<OpInput> inputs;
    // Value-dependent (Reshape with a shape tensor, ReduceSum with an axes
    // tensor made on the device): index into `inputs` of that tensor, else -1.
    int value_input = -1;
    // Compute-dependent (Unique, NonZero): the output shape is known only
    // after the op ran; shape_bytes is that shape's size (8 B per dimension).
    bool compute_dependent = false;
    std::uint64_t shape_bytes = 0;
    NodeWork work;
    std::uint64_t out_bytes = 0;   // its (first) output
    std::vector<int> readers;      // ops of the nodes reading that output (-1: a node in no op)
};

struct CompiledOp {
    std::string name;                  // the kernel's name: its graph nodes joined by '+'
    std::string type;                  // op type of its first node; "FormatConvert" if compiler-inserted
    std::vector<OpNode> nodes;         // none for a compiler-inserted FormatConvert
    std::vector<std::uint32_t> tasks;  // its tasks in the compiled stream, in stream order (none: a view)
    std::vector<int> deps;             // ops whose outputs its nodes read (graph edges), ascending
};

struct OpTable {
    std::string graph_file;
    std::vector<std::string> node_names;  // every node of the graph, in file order
    std::vector<CompiledOp> ops;
    std::uint64_t resident_bytes = 0;     // graph inputs and weights
};

// `kernels`: the tiling choices, one per kernel in kernel order; `stream`
// the compiled stream whose tasks carry their kernel's name as `op`.
OpTable make_op_table(const Graph& g, const std::vector<TilingChoice>& kernels, const TaskStream& stream);

}  // namespace npusim::compiler
