#include "compiler/op_table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "common/split.hpp"
#include "compiler/attention_layout.hpp"
#include "compiler/slice_view.hpp"

namespace npusim::compiler {

namespace {

// FLOPs of the ops the Cube runs: a MatMul's 2·M·N·K, an attention's two
// products and its softmax (5 per score). `elems`: the output's elements.
double cube_op_flops(const Graph& g, const Node& n, double elems) {
    const auto& T = [&](int t) -> const Tensor& { return g.tensors[static_cast<std::size_t>(t)]; };
    if (n.op == OpType::Attention) {
        // q·kᵀ and p·v (2·S·Sk·D each per head).
        const bool sm = seq_major(n);
        const AttentionDims q = attention_dims(T(n.inputs.at(0)).shape, sm),
                            v = attention_dims(T(n.inputs.at(2)).shape, sm);
        // In BSND the rope parts may come apart: q·kᵀ is over D + Dr.
        const double d =
            static_cast<double>(q.d) +
            (sm && n.inputs.size() == 5 ? static_cast<double>(attention_dims(T(n.inputs[3]).shape, true).d) : 0.0);
        const double scores = static_cast<double>(q.heads * q.seq) * static_cast<double>(v.seq);
        return 2 * scores * d + 2 * scores * static_cast<double>(v.d) + 5 * scores;
    }
    if (n.op == OpType::MLAttention) {
        // q against every cached row (D) and p against their first v_dim
        // columns.
        const auto& q = T(n.inputs.at(0)).shape;
        const auto& kv = T(n.inputs.at(1)).shape;
        const double scores =
            static_cast<double>(elements(q)) / static_cast<double>(q.back()) * static_cast<double>(kv[kv.size() - 2]);
        return 2 * scores * static_cast<double>(q.back()) +
               2 * scores * static_cast<double>(n.attr_int("v_dim", q.back())) + 5 * scores;
    }
    // MatMul, BatchMatMul.
    const auto& a = T(n.inputs.at(0)).shape;
    const double k = a.empty() ? 1.0 : static_cast<double>(n.attr_int("transpose_a", 0) ? a[a.size() - 2] : a.back());
    return 2 * elems * k;
}

}  // namespace

NodeWork node_work(const Graph& g, const Node& n) {
    NodeWork w;
    const auto& T = [&](int t) -> const Tensor& { return g.tensors[static_cast<std::size_t>(t)]; };
    for (int in : n.inputs) w.bytes += static_cast<double>(T(in).bytes());
    const Tensor& out = T(n.outputs.at(0));
    w.bytes += static_cast<double>(out.bytes());
    const double elems = static_cast<double>(elements(out.shape));
    const double in_elems = n.inputs.empty() ? 0.0 : static_cast<double>(elements(T(n.inputs[0]).shape));
    switch (n.op) {
        case OpType::MatMul:
        case OpType::BatchMatMul:
        case OpType::Attention:
        case OpType::MLAttention:
            w.flops = cube_op_flops(g, n, elems);
            break;
        case OpType::RoPE: w.flops = 3 * elems; break;
        case OpType::MoEGate: w.flops = 10 * in_elems; break;
        case OpType::TopK: w.flops = in_elems * std::max(1.0, std::log2(std::max(2.0, in_elems / std::max(1.0, elems)))); break;
        case OpType::GroupNorm: w.flops = 5 * elems; break;
        case OpType::Pad:
        case OpType::Resize:
        case OpType::ScatterND: w.flops = elems; break;
        case OpType::Conv2D: {
            const auto& wt = T(n.inputs.at(1)).shape;
            w.flops = 2 * elems * static_cast<double>(wt.size() == 4 ? wt[1] * wt[2] * wt[3] : 1);
            break;
        }
        case OpType::Sigmoid: w.flops = 4 * elems; break;
        case OpType::GELU: w.flops = 8 * elems; break;
        case OpType::Softmax:
        case OpType::LayerNorm:
        case OpType::RMSNorm:
        case OpType::BatchNorm: w.flops = 5 * elems; break;
        case OpType::Erf:
        case OpType::Pow: w.flops = 8 * elems; break;
        case OpType::Tanh: w.flops = 6 * elems; break;
        case OpType::SiLU: w.flops = 5 * elems; break;
        case OpType::Exp:
        case OpType::Sqrt:
        case OpType::Div: w.flops = 4 * elems; break;
        case OpType::ReduceSum:
        case OpType::GlobalAvgPool:
        case OpType::NonZero: w.flops = in_elems; break;
        case OpType::Unique: w.flops = in_elems * std::max(1.0, std::log2(std::max(2.0, in_elems))); break;  // sort
        case OpType::MaxPool:
        case OpType::AvgPool: {
            const auto k = n.attr_ints("kernel", {2, 2});
            w.flops = elems * static_cast<double>(k[0] * (k.size() > 1 ? k[1] : k[0]));
            break;
        }
        case OpType::Reshape: w.bytes = 0; break;  // a view
        case OpType::Slice:
            if (is_slice_view(g, n)) w.bytes = w.flops = 0;  // read in place
            else w.flops = elems;
            break;
        case OpType::Concat:
        case OpType::Transpose:
        case OpType::FormatConvert: w.flops = 0; break;
        default: w.flops = elems; break;  // element-wise
    }
    return w;
}

OpTable make_op_table(const Graph& g, const std::vector<TilingChoice>& kernels, const TaskStream& stream) {
    OpTable table;
    table.graph_file = g.file;
    std::unordered_map<std::string, int> node_index;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        node_index.emplace(g.nodes[i].name, static_cast<int>(i));
        table.node_names.push_back(g.nodes[i].name);
    }

    // Kernels in compiler order; a kernel's nodes are the parts of its name
    // that name graph nodes (a FormatConvert the compiler inserted has none).
    std::vector<std::vector<int>> nodes_of(kernels.size());
    std::vector<int> op_of_node(g.nodes.size(), -1);
    std::unordered_map<std::string, int> op_of_kernel;
    for (std::size_t o = 0; o < kernels.size(); ++o) {
        CompiledOp op;
        op.name = kernels[o].kernel;
        op.type = "FormatConvert";
        for (const std::string& part : split(op.name, '+')) {
            const auto it = node_index.find(part);
            if (it == node_index.end()) continue;
            nodes_of[o].push_back(it->second);
            op_of_node[static_cast<std::size_t>(it->second)] = static_cast<int>(o);
        }
        if (!nodes_of[o].empty()) op.type = to_string(g.nodes[static_cast<std::size_t>(nodes_of[o][0])].op);
        op_of_kernel.emplace(op.name, static_cast<int>(o));
        table.ops.push_back(std::move(op));
    }
    for (std::uint32_t t = 0; t < stream.tasks.size(); ++t) {
        const auto it = op_of_kernel.find(stream.name(stream.tasks[t].op));
        if (it == op_of_kernel.end())
            throw std::logic_error("op table: task '" + stream.tasks[t].id + "' belongs to no compiled kernel");
        table.ops[static_cast<std::size_t>(it->second)].tasks.push_back(t);
    }

    auto input_of = [&](int tensor) {
        const Tensor& t = g.tensors[static_cast<std::size_t>(tensor)];
        OpInput in;
        in.bytes = t.bytes();
        in.computed = t.producer >= 0;
        if (in.computed) in.op = op_of_node[static_cast<std::size_t>(t.producer)];
        return in;
    };
    for (std::size_t o = 0; o < table.ops.size(); ++o) {
        CompiledOp& op = table.ops[o];
        for (int ni : nodes_of[o]) {
            const Node& n = g.nodes[static_cast<std::size_t>(ni)];
            OpNode on;
            on.name = n.name;
            on.cpu_label = n.on_cpu;
            for (int in : n.inputs) on.inputs.push_back(input_of(in));
            if ((n.op == OpType::Reshape || n.op == OpType::ReduceSum) && n.inputs.size() == 2 && on.inputs[1].computed)
                on.value_input = 1;
            if (n.op == OpType::Unique || n.op == OpType::NonZero) {
                on.compute_dependent = true;
                on.shape_bytes = 8 * g.tensors[static_cast<std::size_t>(n.outputs[0])].shape.size();
            }
            on.work = node_work(g, n);
            const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
            on.out_bytes = out.bytes();
            for (int c : out.consumers) on.readers.push_back(op_of_node[static_cast<std::size_t>(c)]);
            for (const OpInput& in : on.inputs)
                if (in.op >= 0 && in.op != static_cast<int>(o)) op.deps.push_back(in.op);
            op.nodes.push_back(std::move(on));
        }
        std::sort(op.deps.begin(), op.deps.end());
        op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
    }
    for (const Tensor& t : g.tensors)
        if (t.is_input || t.is_const) table.resident_bytes += t.bytes();
    return table;
}

}  // namespace npusim::compiler
