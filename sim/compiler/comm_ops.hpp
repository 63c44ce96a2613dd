// What the communication ops of a graph mean on one rank of a supernode
// (docs/graph-format.md, "Graphs that span ranks"): the group a node runs
// in, the routing a Dispatch draws (workload.routing) and the shapes that
// follow from it — how many tokens this rank receives, per local expert —
// and which Dispatch a Combine returns the tokens of. Plain C++.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include "collective/routing.hpp"
#include "compiler/graph.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

// A malformed communication node (shape_inference turns it into the node's error).
struct CommError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

bool is_comm_op(OpType op);  // AllReduce, AllGather, ReduceScatter, AllToAll, Dispatch, Combine

// The ranks a node communicates among, seen from g.spmd.rank: `size`
// consecutive ranks from `base`, this rank being base + index. attrs.group
// is "all" (the default) or a list naming one block of consecutive ranks,
// aligned to its size; every such block of the chip's ranks is a group.
struct CommGroup {
    int size = 1, base = 0, index = 0;
};
CommGroup comm_group(const Graph& g, const Node& n);

// A Dispatch's routing over its group (attrs.experts; top_k from its index
// input's last dimension, batch from its token input's rows).
std::shared_ptr<const Routing> dispatch_routing(const Graph& g, const Node& dispatch);
// The routing a Dispatch draws: workload.routing, its seed replaced by attrs.seed.
RoutingSpec routing_spec(const Graph& g, const Node& dispatch);
// A Dispatch's attrs.capacity: rows per local expert in its output on every
// rank (a static buffer; "max": the most any rank of the group receives for
// one local expert), or 0: the rows packed, as many as this rank receives.
int dispatch_capacity(const Graph& g, const Node& dispatch);
// The Dispatch (node index) whose capacity layout tensor `tensor`'s rows
// follow (row by row from its output), or -1: every row holds data.
int masking_dispatch(const Graph& g, int tensor);
// The Dispatches with a capacity, in node order: the k-th has row table k of
// the compiled stream (TaskStream::row_tables), its tokens per local expert
// on every rank of the chip.
std::vector<int> capacity_dispatches(const Graph& g);
RowTable dispatch_row_table(const Graph& g, int dispatch);
// The node index of the Dispatch whose received tokens a Combine's first
// input holds (walking back through first inputs); CommError if none.
int dispatch_of(const Graph& g, const Node& combine);

// Output shape and dtype of a communication node or a GroupedMatMul.
Shape comm_shape(const Graph& g, const Node& n);
DType comm_dtype(const Graph& g, const Node& n);
// Rows per group of n's output (a Dispatch: per local expert), or empty.
std::vector<std::int64_t> row_groups(const Graph& g, const Node& n);
// Mean rows per group of n's output over every rank of its group (0: no
// groups); with a Dispatch capacity every group has that many rows.
double group_rows_mean(const Graph& g, const Node& n);

// "baseline" | "optimized": the node's attrs.variant, else the workload's.
bool comm_optimized(const Node& n, bool workload_optimized);

}  // namespace npusim::compiler
