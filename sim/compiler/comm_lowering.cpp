#include "compiler/comm_lowering.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "collective/moe_op.hpp"
#include "common/errors.hpp"
#include "compiler/comm_ops.hpp"

namespace npusim::compiler {

namespace {

const Tensor& tensor(const Graph& g, int t) { return g.tensors[static_cast<std::size_t>(t)]; }

// Calls of one op kind before node `n` (each Dispatch, each Combine of a
// graph writes its blocks with a flag value of its own).
std::uint64_t epoch_of(const Graph& g, int n) {
    std::uint64_t e = 1;
    for (int i = 0; i < n; ++i) e += g.nodes[static_cast<std::size_t>(i)].op == g.nodes[static_cast<std::size_t>(n)].op;
    return e;
}

int node_index(const Graph& g, const Node& n) { return static_cast<int>(&n - g.nodes.data()); }

MoeOp dispatch_op(const CommContext& c, const Node& n) {
    const Graph& g = c.g;
    const Tensor& x = tensor(g, n.inputs[0]);
    const Tensor& idx = tensor(g, n.inputs[1]);
    const Tensor& out = tensor(g, n.outputs[0]);
    MoeOp op;
    op.variant = comm_optimized(n, c.opt.comm_optimized) ? MoeOp::Variant::optimized : MoeOp::Variant::baseline;
    op.flag_in_block = c.opt.flag_in_block;
    op.batch = static_cast<int>(x.shape[0]);
    op.hidden = static_cast<int>(x.shape[1]);
    op.in_elt = static_cast<std::uint32_t>(dtype_bytes(x.dtype));
    op.out_elt = static_cast<std::uint32_t>(dtype_bytes(out.dtype));
    op.quantize = out.dtype != x.dtype;
    op.top_k = static_cast<int>(idx.shape[1]);
    op.experts = static_cast<int>(n.attr_int("experts", 1));
    op.group = comm_group(g, n).size;
    op.routing = g.spmd.routing;
    op.epoch = epoch_of(g, node_index(g, n));
    op.in_addr = c.mem.addr(n.inputs[0]);
    op.out_addr = c.mem.addr(n.outputs[0]);
    return op;
}

MoeOp combine_op(const CommContext& c, const Node& n, const MoeOp& dispatch) {
    const Graph& g = c.g;
    const Tensor& y = tensor(g, n.inputs[0]);
    const Tensor& out = tensor(g, n.outputs[0]);
    MoeOp op = dispatch;
    op.variant = comm_optimized(n, c.opt.comm_optimized) ? MoeOp::Variant::optimized : MoeOp::Variant::baseline;
    op.hidden = static_cast<int>(y.shape[1]);
    op.in_elt = static_cast<std::uint32_t>(dtype_bytes(y.dtype));
    op.out_elt = static_cast<std::uint32_t>(dtype_bytes(out.dtype));
    op.quantize = false;
    op.epoch = epoch_of(g, node_index(g, n));
    op.in_addr = c.mem.addr(n.inputs[0]);
    op.out_addr = c.mem.addr(n.outputs[0]);
    return op;
}

}  // namespace

std::vector<TileTask> lower_moe_op(const CommContext& c, const Kernel& k, int ki) {
    const Graph& g = c.g;
    const Node& n = g.nodes[static_cast<std::size_t>(k.nodes.front())];
    const bool dispatch = n.op == OpType::Dispatch;
    const MoeOp d = dispatch_op(c, dispatch ? n : g.nodes[static_cast<std::size_t>(dispatch_of(g, n))]);
    const MoeOp op = dispatch ? d : combine_op(c, n, d);
    const std::string args = dispatch ? d.to_args() : combine_program_args(op, d);
    const int blocks = std::max(1, c.chip.vector.count);
    // Each block moves its share of the rows twice through its port (in and
    // out of UB): the estimate the dispatcher balances with.
    const Tensor& moved = tensor(g, dispatch ? n.outputs[0] : n.inputs[0]);
    const double est = 2.0 * static_cast<double>(moved.bytes()) / blocks / std::max(1.0, c.chip.vector.gm_bytes_per_cycle);
    std::vector<TileTask> out;
    for (int b = 0; b < blocks; ++b) {
        TileTask t;
        t.kernel = ki;
        t.label = fmt::format("block{}", b);
        t.core = CoreType::vector;
        t.type = npusim::Kernel::program;
        t.pinned = b;
        t.program_name = dispatch ? kDispatchProgram : kCombineProgram;
        t.program_args = args;
        t.program_blocks = static_cast<std::uint32_t>(blocks);
        t.params.block = static_cast<std::uint32_t>(b);
        // Every block reads the op's inputs and writes its output: what comes
        // after waits for all of them.
        for (const int in : n.inputs) t.reads.push_back(c.mem.physical(in, 0, c.mem.bytes(in)));
        t.writes.push_back(c.mem.physical(n.outputs[0], 0, c.mem.bytes(n.outputs[0])));
        t.est_cycles = est;
        out.push_back(std::move(t));
    }
    return out;
}

std::vector<TileTask> lower_collective(const CommContext& c, const Kernel& k, int) {
    const Node& n = c.g.nodes[static_cast<std::size_t>(k.nodes.front())];
    throw InputError(fmt::format("{}: {} '{}': collectives in a graph are not lowered yet", c.g.file, to_string(n.op), n.name));
}

}  // namespace npusim::compiler
