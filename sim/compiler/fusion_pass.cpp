#include "compiler/fusion_pass.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "compiler/cost_model.hpp"
#include "compiler/op_traits.hpp"
#include "compiler/slice_view.hpp"

namespace npusim::compiler {
namespace {

KernelKind kind_of(OpType op) {
    switch (op) {
        case OpType::Conv2D: return KernelKind::conv;
        case OpType::MatMul:
        case OpType::BatchMatMul:
        case OpType::GroupedMatMul: return KernelKind::matmul;
        case OpType::Dispatch:
        case OpType::Combine: return KernelKind::program;
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll: return KernelKind::collective;
        case OpType::MaxPool:
        case OpType::AvgPool: return KernelKind::pool;
        case OpType::GlobalAvgPool:
        case OpType::Softmax:
        case OpType::LayerNorm:
        case OpType::RMSNorm:
        case OpType::ReduceSum:
        case OpType::ReduceMean:
        case OpType::ReduceMax:
        case OpType::TopK:
        case OpType::ArgMax:
        case OpType::GroupNorm:
        case OpType::MoEGate: return KernelKind::reduce;
        case OpType::Attention:
        case OpType::MLAttention: return KernelKind::attention;
        case OpType::FormatConvert: return KernelKind::format;
        case OpType::Concat: return KernelKind::concat;
        case OpType::Transpose:
        case OpType::Unique:   // data-dependent gathers: read all, write a compacted output
        case OpType::NonZero:
        case OpType::Gather:  // indexed / strided copies: read the rows used, write the output
        case OpType::Slice:
        case OpType::ScatterND:  // the data copied, the updates scattered into it
        case OpType::Pad:     // copies into a new shape
        case OpType::Resize: return KernelKind::transpose;
        case OpType::Reshape: return KernelKind::alias;
        default: return KernelKind::elementwise;
    }
}

// The first input of n that is not a constant.
int activation_input(const Graph& g, const Node& n) {
    for (int in : n.inputs)
        if (!g.tensors[static_cast<std::size_t>(in)].is_const) return in;
    return -1;
}

// Whether tensor t is a Slice its consumers read in place.
bool reads_in_place(const Graph& g, int t) {
    const int p = g.tensors[static_cast<std::size_t>(t)].producer;
    return p >= 0 && is_slice_view(g, g.nodes[static_cast<std::size_t>(p)]);
}

bool single_use(const Tensor& t) { return t.consumers.size() == 1 && !t.is_output; }

// A kernel's first node, to name it in notes: its full name grows with
// every node fused in, and a note per node quoting it would be quadratic.
const std::string& head_name(const Graph& g, const Kernel& k) { return g.nodes[static_cast<std::size_t>(k.nodes.front())].name; }

// A kernel's name is its tasks' and events' id: a fused chain "a+b" beside
// a node named "a+b" gets its index appended ("a+b~3").
void unique_kernel_names(KernelPlan& plan) {
    std::set<std::string> names;
    for (std::size_t k = 0; k < plan.kernels.size(); ++k)
        if (!names.insert(plan.kernels[k].name).second) {
            plan.kernels[k].name += fmt::format("~{}", k);
            names.insert(plan.kernels[k].name);
        }
}

// The kernel node n joins instead of starting one: its activation's
// producer, when n is a FixPipe epilogue of a Cube kernel or extends a
// Vector chain; else nullptr.
Kernel* fusion_target(const Graph& g, const CompileOptions& opt, const Node& n, int act,
                      const std::vector<int>& kernel_of_tensor, KernelPlan& plan) {
    const int producer = act >= 0 ? kernel_of_tensor[static_cast<std::size_t>(act)] : -1;
    const bool sole = act >= 0 && single_use(g.tensors[static_cast<std::size_t>(act)]);
    // Kernels stay within one core group (nodes of two streams never fuse).
    if (producer < 0 || !sole || plan.kernels[static_cast<std::size_t>(producer)].cores != n.cores) return nullptr;
    Kernel& p = plan.kernels[static_cast<std::size_t>(producer)];
    if (opt.fuse_activation && fixpipe_can_apply(n.op) && p.core == CoreType::cube && !p.fused_epilogue) {
        p.fused_epilogue = true;
        plan.notes.push_back(fmt::format("{} fused into {} (applied by FixPipe)", n.name, head_name(g, p)));
        return &p;
    }
    if (opt.fuse_vector && is_elementwise(n.op) &&
        (p.kind == KernelKind::elementwise || (p.kind == KernelKind::conv && p.core == CoreType::vector))) {
        plan.notes.push_back(fmt::format("{} fused into the Vector chain of {}", n.name, head_name(g, p)));
        return &p;
    }
    return nullptr;
}

// A kernel of node n alone.
Kernel new_kernel(const Graph& g, const Node& n, std::size_t ni, const ChipParams& chip, KernelPlan& plan) {
    Kernel k;
    k.name = n.name;
    k.kind = kind_of(n.op);
    k.core = is_cube_op(n.op) || n.op == OpType::Attention || n.op == OpType::MLAttention ? CoreType::cube
                                                                                          : CoreType::vector;
    k.nodes = {static_cast<int>(ni)};
    k.cores = n.cores;
    k.inputs = n.inputs;
    k.output = n.outputs[0];
    k.cycles_per_repeat = vector_cycles_per_repeat(g, n);
    if (is_slice_view(g, n)) {
        k.kind = KernelKind::alias;
        plan.notes.push_back(fmt::format("{}: read in place by its consumers (a view, no copy)", n.name));
    }
    if (n.op == OpType::Conv2D && n.attr_int("groups", 1) > 1 &&
        g.tensors[static_cast<std::size_t>(n.inputs[1])].shape.size() == 4) {
        // A grouped convolution runs where it costs less: the Cube with
        // its per-group waste, or kh·kw multiply-adds on Vector lanes.
        const GroupedConvEstimate e = estimate_grouped_conv(g, n, chip);
        const Shape& ws = g.tensors[static_cast<std::size_t>(n.inputs[1])].shape;
        if (e.on_vector()) {
            k.core = CoreType::vector;
            k.cycles_per_repeat = static_cast<double>(ws[1] * ws[2] * ws[3]);
        }
        plan.notes.push_back(fmt::format("grouped conv {}: Cube ~{:.0f} vs Vector ~{:.0f} cycles: {}", n.name,
                                         e.cube_cycles, e.vector_cycles, e.on_vector() ? "Vector" : "Cube"));
    }
    return k;
}

// The Cube -> Vector fusion boundary.
void mark_fusion_boundaries(const Graph& g, const CompileOptions& opt, const ChipParams& chip,
                            const std::vector<int>& kernel_of_tensor, KernelPlan& plan) {
    for (std::size_t vi = 0; vi < plan.kernels.size(); ++vi) {
        Kernel& v = plan.kernels[vi];
        if (v.kind != KernelKind::elementwise) continue;
        const int act = activation_input(g, g.nodes[static_cast<std::size_t>(v.nodes[0])]);
        if (act < 0 || !single_use(g.tensors[static_cast<std::size_t>(act)])) continue;
        const int pi = kernel_of_tensor[static_cast<std::size_t>(act)];
        // (Fused attention hands its own tiles to Vector already: not a boundary.)
        if (pi < 0 || plan.kernels[static_cast<std::size_t>(pi)].core != CoreType::cube ||
            plan.kernels[static_cast<std::size_t>(pi)].kind == KernelKind::attention ||
            plan.kernels[static_cast<std::size_t>(pi)].cores != v.cores)
            continue;
        // Tiles fused behind a Cube read only its tiles and constants, not
        // a Slice's runs.
        if (std::any_of(v.inputs.begin(), v.inputs.end(), [&](int t) { return reads_in_place(g, t); })) continue;
        const Kernel& c = plan.kernels[static_cast<std::size_t>(pi)];
        bool fuse = opt.boundary == FusionBoundary::fuse;
        if (opt.boundary == FusionBoundary::automatic) {
            const BoundaryEstimate e = estimate_boundary(g, c, v, chip, opt.sync);
            fuse = e.fused_cycles < e.split_cycles;
            plan.notes.push_back(fmt::format("fusion boundary {} -> {}: fused ~{:.0f} vs split ~{:.0f} cycles: {}", c.name,
                                             v.name, e.fused_cycles, e.split_cycles, fuse ? "fuse" : "split"));
        } else {
            plan.notes.push_back(fmt::format("fusion boundary {} -> {}: {} (forced)", c.name, v.name, fuse ? "fuse" : "split"));
        }
        if (fuse) v.fused_with = pi;
    }
}

}  // namespace

KernelPlan form_kernels(const Graph& g, const CompileOptions& opt, const ChipParams& chip) {
    KernelPlan plan;
    std::vector<int> kernel_of_tensor(g.tensors.size(), -1);
    for (std::size_t ni = 0; ni < g.nodes.size(); ++ni) {
        const Node& n = g.nodes[ni];
        const int act = activation_input(g, n);
        if (Kernel* into = fusion_target(g, opt, n, act, kernel_of_tensor, plan)) {
            into->name += "+" + n.name;
            into->nodes.push_back(static_cast<int>(ni));
            if (into->core == CoreType::vector) into->cycles_per_repeat += vector_cycles_per_repeat(g, n);
            for (int in : n.inputs)
                if (in != act) into->inputs.push_back(in);
            into->output = n.outputs[0];
            kernel_of_tensor[static_cast<std::size_t>(n.outputs[0])] = static_cast<int>(into - plan.kernels.data());
            continue;
        }
        plan.kernels.push_back(new_kernel(g, n, ni, chip, plan));
        kernel_of_tensor[static_cast<std::size_t>(n.outputs[0])] = static_cast<int>(plan.kernels.size() - 1);
    }
    unique_kernel_names(plan);
    mark_fusion_boundaries(g, opt, chip, kernel_of_tensor, plan);
    return plan;
}

}  // namespace npusim::compiler
