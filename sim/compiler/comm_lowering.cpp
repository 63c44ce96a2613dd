#include "compiler/comm_lowering.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collective/collective_plan.hpp"
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
    op.routing = routing_spec(g, n);
    op.capacity = dispatch_capacity(g, n);
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

namespace {

// Where a graph's collectives land their messages: a workspace per node at
// the same address on every rank (peers write into it), above every tensor.
constexpr std::uint64_t kLandingBase = 0x300000000000ULL;
constexpr std::uint64_t kLandingStride = 1ULL << 38;  // 256 GB per collective node

CollectiveWorkload::Op op_of(OpType op) {
    switch (op) {
        case OpType::AllGather: return CollectiveWorkload::Op::allgather;
        case OpType::ReduceScatter: return CollectiveWorkload::Op::reduce_scatter;
        case OpType::AllToAll: return CollectiveWorkload::Op::alltoall;
        default: return CollectiveWorkload::Op::allreduce;
    }
}

CollectiveWorkload::Dtype dtype_of(DType d) {
    switch (d) {
        case DType::bf16: return CollectiveWorkload::Dtype::bf16;
        case DType::fp32: return CollectiveWorkload::Dtype::fp32;
        case DType::int8: return CollectiveWorkload::Dtype::int8;
        default: return CollectiveWorkload::Dtype::fp16;
    }
}

std::vector<std::string> strings(const nlohmann::json& j) {
    std::vector<std::string> out;
    for (const auto& e : j) out.push_back(e.get<std::string>());
    return out;
}

// One line of the collective's plan as a tile task of kernel `ki`.
TileTask step_task(const nlohmann::json& j, int ki, std::uint64_t buffer, std::uint64_t buffer_bytes) {
    TileTask t;
    t.kernel = ki;
    t.label = j["id"].get<std::string>();
    const std::string kernel = j["kernel"].get<std::string>();
    t.type = kernel == "copy" ? npusim::Kernel::copy : kernel == "vector" ? npusim::Kernel::vector : npusim::Kernel::scalar;
    t.core = kernel == "scalar" ? CoreType::scalar : CoreType::vector;
    if (j.contains("core")) t.pinned = j["core"].get<int>();
    t.own_wait = strings(j["wait"]);
    t.own_signal = strings(j["signal"]);
    const auto& p = j["params"];
    KernelParams& kp = t.params;
    if (p.contains("bytes")) kp.bytes = p["bytes"].get<std::uint64_t>();
    kp.out_bytes = p.value("out_bytes", kp.bytes);
    kp.cycles = p.value("cycles", std::uint64_t{0});
    if (p.contains("cycles_per_repeat")) kp.cycles_per_repeat = p["cycles_per_repeat"].get<double>();
    if (p.contains("dtype")) {
        const std::string d = p["dtype"].get<std::string>();
        kp.dtype = d == "bf16" ? DType::bf16 : d == "fp32" ? DType::fp32 : d == "int8" ? DType::int8 : DType::fp16;
    }
    if (p.contains("addr")) kp.addr = p["addr"].get<std::uint64_t>(), kp.has_addr = true;
    if (p.contains("out_addr")) kp.out_addr = p["out_addr"].get<std::uint64_t>(), kp.has_out_addr = true;
    for (const auto& r : p.value("reads", nlohmann::json::array()))
        t.reads.push_back(Region{Space::hbm, r["addr"].get<std::uint64_t>(), r["bytes"].get<std::uint64_t>()});
    // A reduction writes its chunk of the buffer.
    if (t.type == npusim::Kernel::vector && kp.has_out_addr) t.writes.push_back(Region{Space::hbm, kp.out_addr, kp.out_bytes});
    if (p.contains("dst_rank")) {
        t.remote.dst_rank = p["dst_rank"].get<int>();
        t.remote.addr = p["dst_addr"].get<std::uint64_t>();
        if (p.contains("flag")) t.remote.flag = p["flag"].get<std::uint64_t>(), t.remote.has_flag = true;
    }
    for (const auto& m : j.value("wait_memory", nlohmann::json::array()))
        t.wait_memory.push_back(MemoryWait{m["addr"].get<std::uint64_t>(), m["value"].get<std::uint64_t>(),
                                           m.value("blocks", std::uint32_t{1})});
    // The rank's end: what reads the result waits for it.
    if (t.type == npusim::Kernel::scalar) t.writes.push_back(Region{Space::hbm, buffer, buffer_bytes});
    t.est_cycles = static_cast<double>(kp.bytes) / 32.0;
    return t;
}

}  // namespace

std::vector<TileTask> lower_collective(const CommContext& c, const Kernel& k, int ki) {
    const Graph& g = c.g;
    const Node& n = g.nodes[static_cast<std::size_t>(k.nodes.front())];
    const CommGroup grp = comm_group(g, n);
    const int x = n.inputs[0], y = n.outputs[0];
    CollectiveWorkload w;
    w.op = op_of(n.op);
    w.algorithm = n.attrs.count("algorithm") && n.attrs.at("algorithm").s == "mesh" ? CollectiveWorkload::Algorithm::mesh
                                                                                      : CollectiveWorkload::Algorithm::ring;
    // The buffer of N chunks: the output of an AllGather, the input of the others.
    const bool gather = n.op == OpType::AllGather;
    w.bytes = tensor(g, gather ? y : x).bytes();
    w.dtype = dtype_of(tensor(g, x).dtype);
    collective::CollectivePlace at;
    for (int r = 0; r < grp.size; ++r) at.group.push_back(grp.base + r);
    at.rank = grp.index;
    at.buffer = c.mem.addr(gather ? y : x);
    at.own = gather ? c.mem.addr(x) : ~0ULL;
    std::uint64_t ordinal = 0;
    for (const Node& m : g.nodes) {
        if (&m == &n) break;
        ordinal += is_comm_op(m.op) && m.op != OpType::Dispatch && m.op != OpType::Combine;
    }
    at.landing = kLandingBase + ordinal * kLandingStride;
    if (collective::landing_bytes(w, c.chip, grp.size) > kLandingStride)
        throw InputError(fmt::format("{}: {} '{}': its messages need more than {} GB of landing space", g.file, to_string(n.op),
                                     n.name, kLandingStride >> 30));
    const collective::CollectivePlan plan = collective::plan_collective(w, c.chip, at);
    std::vector<TileTask> out;
    for (const std::string& line : plan.lines) out.push_back(step_task(nlohmann::json::parse(line), ki, c.mem.addr(y), c.mem.bytes(y)));
    // A rank with no done step (a reduce-scatter): its last reductions write the result.
    return out;
}

}  // namespace npusim::compiler
