#include "compiler/comm_ops.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"

namespace npusim::compiler {

namespace {

const Tensor& input(const Graph& g, const Node& n, std::size_t i) {
    if (i >= n.inputs.size()) throw CommError(fmt::format("{} needs input {}", to_string(n.op), i));
    return g.tensors[static_cast<std::size_t>(n.inputs[i])];
}

void need_inputs(const Node& n, std::size_t count, const char* what) {
    if (n.inputs.size() != count)
        throw CommError(fmt::format("{} takes {} input(s) ({}), got {}", to_string(n.op), count, what, n.inputs.size()));
}

const char* algorithm_of(const Node& n) {
    const auto it = n.attrs.find("algorithm");
    if (it == n.attrs.end()) return "ring";
    if (it->second.s == "ring") return "ring";
    if (it->second.s == "mesh") return "mesh";
    throw CommError(fmt::format("attrs.algorithm: expected \"ring\" or \"mesh\", got \"{}\"{}", it->second.s,
                                did_you_mean(it->second.s, {"ring", "mesh"})));
}

}  // namespace

bool is_comm_op(OpType op) {
    switch (op) {
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll:
        case OpType::Dispatch:
        case OpType::Combine: return true;
        default: return false;
    }
}

CommGroup comm_group(const Graph& g, const Node& n) {
    const int ranks = g.spmd.ranks;
    if (ranks < 2)
        throw CommError(fmt::format("{} communicates across ranks, but the chip has {} rank (chip.interconnect.ranks); run "
                                    "it on 2 or more: --set chip.interconnect.ranks=N on a chip with a mesh (e.g. "
                                    "configs/chips/a3-supernode.json)",
                                    to_string(n.op), ranks));
    CommGroup c;
    c.size = ranks;
    const auto it = n.attrs.find("group");
    if (it != n.attrs.end()) {
        const Attr& a = it->second;
        if (a.kind == Attr::Kind::string) {
            if (a.s != "all")
                throw CommError(fmt::format("attrs.group: expected \"all\" or a list of ranks, got \"{}\"{}", a.s,
                                            did_you_mean(a.s, {"all"})));
        } else {
            const auto& l = a.list;
            if (l.empty()) throw CommError("attrs.group: an empty list of ranks");
            for (std::size_t i = 0; i < l.size(); ++i) {
                if (l[i] < 0 || l[i] >= ranks)
                    throw CommError(fmt::format("attrs.group[{}]: rank {} does not exist: the chip has {} ranks (0..{})", i,
                                                l[i], ranks, ranks - 1));
                if (i > 0 && l[i] != l[i - 1] + 1)
                    throw CommError(fmt::format("attrs.group: ranks {} and {} are not consecutive: a group is a block of "
                                                "consecutive ranks (each block of its size forms a group)",
                                                l[i - 1], l[i]));
            }
            const auto size = static_cast<int>(l.size());
            if (ranks % size != 0 || l.front() % size != 0)
                throw CommError(fmt::format("attrs.group: a block of {} ranks from rank {} does not tile the chip's {} ranks "
                                            "(the block must start at a multiple of its size, which must divide the ranks)",
                                            size, l.front(), ranks));
            c.size = size;
        }
    }
    c.base = g.spmd.rank / c.size * c.size;
    c.index = g.spmd.rank - c.base;
    return c;
}

std::shared_ptr<const Routing> dispatch_routing(const Graph& g, const Node& n) {
    need_inputs(n, 2, "tokens [B, H], top-k expert indices [B, K]");
    const Tensor& x = input(g, n, 0);
    const Tensor& idx = input(g, n, 1);
    if (x.shape.size() != 2) throw CommError(fmt::format("input '{}' {} must be 2-D [tokens, hidden]", x.name, to_string(x.shape)));
    if (idx.shape.size() != 2 || idx.shape[0] != x.shape[0])
        throw CommError(fmt::format("input '{}' {} must be [tokens, top_k] with the {} tokens of '{}'", idx.name,
                                    to_string(idx.shape), x.shape[0], x.name));
    const auto e = n.attrs.find("experts");
    if (e == n.attrs.end()) throw CommError("attrs.experts: missing (the number of experts the tokens are routed over)");
    const std::int64_t experts = e->second.i, top_k = idx.shape[1], batch = x.shape[0];
    const CommGroup grp = comm_group(g, n);  // first: on one rank nothing else matters
    if (experts < 1 || experts > 4096) throw CommError(fmt::format("attrs.experts: expected 1..4096, got {}", experts));
    if (top_k > experts)
        throw CommError(fmt::format("top-k {} (the last dimension of '{}') is larger than attrs.experts = {}", top_k, idx.name,
                                    experts));
    if (batch > 65535) throw CommError(fmt::format("input '{}': {} tokens per rank; at most 65535", x.name, batch));
    const int slots = static_cast<int>(experts) + g.spmd.routing.redundant_experts;
    if (slots % grp.size != 0)
        throw CommError(fmt::format("attrs.experts: {} experts{} do not divide across the {} ranks of its group", experts,
                                    g.spmd.routing.redundant_experts
                                        ? fmt::format(" + {} redundant copies (workload.routing.redundant_experts)",
                                                      g.spmd.routing.redundant_experts)
                                        : std::string(),
                                    grp.size));
    return Routing::shared(routing_spec(g, n), grp.size, static_cast<int>(batch), static_cast<int>(top_k),
                           static_cast<int>(experts));
}

RoutingSpec routing_spec(const Graph& g, const Node& dispatch) {
    RoutingSpec spec = g.spmd.routing;
    const std::int64_t seed = dispatch.attr_int("seed", -1);
    if (dispatch.attrs.count("seed")) {
        if (seed < 0) throw CommError(fmt::format("attrs.seed: expected a non-negative integer, got {}", seed));
        spec.seed = static_cast<std::uint64_t>(seed);
    }
    return spec;
}

int dispatch_capacity(const Graph& g, const Node& n) {
    const auto it = n.attrs.find("capacity");
    if (it == n.attrs.end()) return 0;
    const auto r = dispatch_routing(g, n);
    int most = 0, at_rank = 0, at_expert = 0;
    for (int rank = 0; rank < r->ranks(); ++rank)
        for (int le = 0; le < r->experts_per_rank(); ++le)
            if (r->received(rank, le) > most) most = r->received(rank, le), at_rank = rank, at_expert = le;
    if (it->second.kind == Attr::Kind::string) return std::max(most, 1);  // "max"
    if (it->second.i < 1 || it->second.i < most)
        throw CommError(fmt::format("attrs.capacity: {} rows per local expert, but rank {} of the group receives {} tokens "
                                    "for its local expert {} (\"max\" sizes it to the routing)",
                                    it->second.i, at_rank, most, at_expert));
    return static_cast<int>(it->second.i);
}

std::vector<int> capacity_dispatches(const Graph& g) {
    std::vector<int> out;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].op == OpType::Dispatch && g.nodes[i].attrs.count("capacity")) out.push_back(static_cast<int>(i));
    return out;
}

RowTable dispatch_row_table(const Graph& g, int dispatch) {
    const Node& n = g.nodes[static_cast<std::size_t>(dispatch)];
    const auto r = dispatch_routing(g, n);
    RowTable t;
    t.id = n.name;
    for (int rank = 0; rank < g.spmd.ranks; ++rank) {
        std::vector<std::uint32_t> rows;
        for (int le = 0; le < r->experts_per_rank(); ++le)
            rows.push_back(static_cast<std::uint32_t>(r->received(rank % r->ranks(), le)));
        t.per_rank.push_back(std::move(rows));
    }
    return t;
}

int masking_dispatch(const Graph& g, int tensor) {
    for (std::size_t steps = 0; tensor >= 0 && steps <= g.nodes.size(); ++steps) {
        const Tensor& t = g.tensors[static_cast<std::size_t>(tensor)];
        if (t.row_groups.empty() || t.producer < 0) return -1;
        const Node& n = g.nodes[static_cast<std::size_t>(t.producer)];
        if (n.op == OpType::Dispatch) return dispatch_capacity(g, n) > 0 ? t.producer : -1;
        tensor = n.inputs.empty() ? -1 : n.inputs[0];
    }
    return -1;
}

int dispatch_of(const Graph& g, const Node& combine) {
    int t = combine.inputs.empty() ? -1 : combine.inputs[0];
    for (std::size_t steps = 0; t >= 0 && steps <= g.nodes.size(); ++steps) {
        const int p = g.tensors[static_cast<std::size_t>(t)].producer;
        if (p < 0) break;
        const Node& n = g.nodes[static_cast<std::size_t>(p)];
        if (n.op == OpType::Dispatch) return p;
        t = -1;
        for (const int in : n.inputs)
            if (!g.tensors[static_cast<std::size_t>(in)].is_const) {
                t = in;
                break;
            }
    }
    throw CommError("its first input does not come from a Dispatch (a Combine returns the tokens a Dispatch sent: "
                    "Dispatch -> experts -> Combine)");
}

Shape comm_shape(const Graph& g, const Node& n) {
    switch (n.op) {
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll: {
            need_inputs(n, 1, "x");
            algorithm_of(n);
            const CommGroup grp = comm_group(g, n);
            Shape s = input(g, n, 0).shape;
            if (s.empty()) throw CommError("input must have at least one dimension");
            if (n.op == OpType::AllGather) s[0] *= grp.size;
            if ((n.op == OpType::ReduceScatter || n.op == OpType::AllToAll) && s[0] % grp.size != 0)
                throw CommError(fmt::format("input '{}' {}: its first dimension must divide into the {} ranks of the group",
                                            input(g, n, 0).name, to_string(s), grp.size));
            if (n.op == OpType::ReduceScatter) s[0] /= grp.size;
            return s;
        }
        case OpType::Dispatch: {
            const auto r = dispatch_routing(g, n);
            const CommGroup grp = comm_group(g, n);
            const int cap = dispatch_capacity(g, n);
            if (cap > 0) return {static_cast<std::int64_t>(cap) * r->experts_per_rank(), input(g, n, 0).shape[1]};
            return {r->received(grp.index), input(g, n, 0).shape[1]};
        }
        case OpType::Combine: {
            need_inputs(n, 2, "expert outputs [received, H], top-k weights [B, K]");
            const CommGroup own = comm_group(g, n);  // first: on one rank nothing else matters
            const Node& d = g.nodes[static_cast<std::size_t>(dispatch_of(g, n))];
            // A Combine returns the tokens over its Dispatch's group: a group of
            // its own may only say the same.
            if (const int theirs = comm_group(g, d).size; n.attrs.count("group") && own.size != theirs)
                throw CommError(
                    fmt::format("attrs.group: {} ranks, but Dispatch '{}' sent the tokens over {}: a Combine "
                                "returns them over its Dispatch's group (leave attrs.group out to follow it)",
                                own.size, d.name, theirs));
            const auto r = dispatch_routing(g, d);
            const Tensor& y = input(g, n, 0);
            const int cap = dispatch_capacity(g, d);
            const std::int64_t received =
                cap > 0 ? static_cast<std::int64_t>(cap) * r->experts_per_rank() : r->received(comm_group(g, d).index);
            if (y.shape.size() != 2 || y.shape[0] != received)
                throw CommError(fmt::format("input '{}' {} must be [{}, hidden]: the {} tokens Dispatch '{}' delivered here",
                                            y.name, to_string(y.shape), received, received, d.name));
            const Tensor& w = input(g, n, 1);
            if (w.shape.size() != 2 || w.shape[0] != r->batch() || w.shape[1] != r->top_k())
                throw CommError(fmt::format("input '{}' {} must be the top-k weights [{}, {}] of Dispatch '{}'", w.name,
                                            to_string(w.shape), r->batch(), r->top_k(), d.name));
            return {r->batch(), y.shape[1]};
        }
        case OpType::GroupedMatMul: {
            need_inputs(n, 2, "x [rows, K] in groups, weights [groups, K, N]");
            const Tensor& x = input(g, n, 0);
            const Tensor& w = input(g, n, 1);
            if (x.row_groups.empty())
                throw CommError(fmt::format("input '{}' has no row groups: a GroupedMatMul reads tokens a Dispatch "
                                            "delivered (grouped by local expert)", x.name));
            const bool tb = n.attr_int("transpose_b", 0) != 0;
            if (x.shape.size() != 2 || w.shape.size() != 3 || w.shape[0] != static_cast<std::int64_t>(x.row_groups.size()) ||
                w.shape[tb ? 2 : 1] != x.shape[1])
                throw CommError(fmt::format("weights '{}' {} must be [{}, {}, N]{} for input '{}' {} in {} groups", w.name,
                                            to_string(w.shape), x.row_groups.size(), x.shape.size() == 2 ? x.shape[1] : 0,
                                            tb ? " (transposed: [groups, N, K])" : "", x.name, to_string(x.shape),
                                            x.row_groups.size()));
            return {x.shape[0], w.shape[tb ? 1 : 2]};
        }
        default: throw CommError("not a communication op");
    }
}

DType comm_dtype(const Graph& g, const Node& n) {
    const DType first = input(g, n, 0).dtype;
    if (n.op == OpType::Dispatch) {
        const auto q = n.attrs.find("quantize");
        if (q == n.attrs.end()) return first;
        if (q->second.s == "int8") return DType::int8;
        if (q->second.s == "none") return first;
        throw CommError(fmt::format("attrs.quantize: expected \"int8\" or \"none\", got \"{}\"{}", q->second.s,
                                    did_you_mean(q->second.s, {"int8", "none"})));
    }
    if (n.op == OpType::GroupedMatMul) {
        const DType w = input(g, n, 1).dtype;
        if (w != first) throw CommError(fmt::format("dtype mismatch: x is {} but the weights are {}", to_string(first), to_string(w)));
        // An int8 product is dequantised on its way out (FixPipe).
        return first == DType::int8 ? DType::bf16 : first;
    }
    return first;
}

std::vector<std::int64_t> row_groups(const Graph& g, const Node& n) {
    if (n.op == OpType::Dispatch) {
        const auto r = dispatch_routing(g, n);
        const int me = comm_group(g, n).index;
        std::vector<std::int64_t> out;
        const int cap = dispatch_capacity(g, n);
        for (int le = 0; le < r->experts_per_rank(); ++le) out.push_back(cap > 0 ? cap : r->received(me, le));
        return out;
    }
    if (is_comm_op(n.op) || n.inputs.empty()) return {};
    // Row-wise ops keep the rows of their first input, and so its groups.
    const Tensor& x = g.tensors[static_cast<std::size_t>(n.inputs[0])];
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    if (x.row_groups.empty() || out.shape.empty() || x.shape.empty() || out.shape[0] != x.shape[0]) return {};
    return x.row_groups;
}

double group_rows_mean(const Graph& g, const Node& n) {
    if (n.op == OpType::Dispatch) {
        const int cap = dispatch_capacity(g, n);
        if (cap > 0) return cap;  // every rank's buffers hold that many rows per expert
        const auto r = dispatch_routing(g, n);
        return static_cast<double>(r->ranks()) * r->pairs() / std::max(1, r->experts());
    }
    if (is_comm_op(n.op) || n.inputs.empty()) return 0;
    const Tensor& x = g.tensors[static_cast<std::size_t>(n.inputs[0])];
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    if (x.row_groups.empty() || out.row_groups.empty()) return 0;
    return x.group_rows_mean;
}

bool comm_optimized(const Node& n, bool workload_optimized) {
    const auto it = n.attrs.find("variant");
    if (it == n.attrs.end()) return workload_optimized;
    if (it->second.s == "optimized") return true;
    if (it->second.s == "baseline") return false;
    throw CommError(fmt::format("attrs.variant: expected \"baseline\" or \"optimized\", got \"{}\"{}", it->second.s,
                                did_you_mean(it->second.s, {"baseline", "optimized"})));
}

}  // namespace npusim::compiler
