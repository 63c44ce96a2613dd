#include "compiler/slice_view.hpp"

#include <string>
#include <vector>

#include "compiler/op_traits.hpp"
#include "compiler/shape_inference.hpp"

namespace npusim::compiler {

std::optional<SliceRuns> slice_kept_runs(const Node& n, const Tensor& in) {
    if (n.op != OpType::Slice || !is_plain(in.layout)) return std::nullopt;
    std::string error;
    const std::vector<SliceAxis> axes = slice_axes(n, in.shape, error);
    const SliceAxis* cut = nullptr;  // the one axis the slice narrows
    for (const SliceAxis& a : axes) {
        if (a.begin == 0 && a.end == in.shape[static_cast<std::size_t>(a.axis)] && a.step == 1) continue;  // whole
        if (cut || a.step != 1) return std::nullopt;
        cut = &a;
    }
    if (!error.empty() || !cut) return std::nullopt;
    std::uint64_t inner = dtype_bytes(in.dtype), outer = 1;
    for (std::size_t d = static_cast<std::size_t>(cut->axis) + 1; d < in.shape.size(); ++d)
        inner *= static_cast<std::uint64_t>(in.shape[d]);
    for (std::size_t d = 0; d < static_cast<std::size_t>(cut->axis); ++d)
        outer *= static_cast<std::uint64_t>(in.shape[d]);
    const auto whole = static_cast<std::uint64_t>(in.shape[static_cast<std::size_t>(cut->axis)]);
    return SliceRuns{static_cast<std::uint64_t>(cut->begin) * inner,
                     static_cast<std::uint64_t>(cut->end - cut->begin) * inner, outer, whole * inner,
                     static_cast<std::size_t>(cut->axis) + 1 == in.shape.size()};
}

namespace {

// Whether node `user` on `cores` reads tensor t (a plain tensor whose
// last-axis rows may be a pitch apart) where it is: an attention, or a
// Reshape that keeps the last axis and whose consumers all do.
bool reads_rows_in_place(const Graph& g, const Node& user, int t, const CoreRange& cores) {
    if (user.cores != cores) return false;
    if (user.op == OpType::Attention || user.op == OpType::MLAttention) return true;
    if (user.op != OpType::Reshape) return false;
    const Tensor& in = g.tensors[static_cast<std::size_t>(t)];
    const Tensor& out = g.tensors[static_cast<std::size_t>(user.outputs[0])];
    if (out.is_output || out.consumers.empty() || out.shape.empty() || in.shape.empty() ||
        out.shape.back() != in.shape.back())
        return false;
    for (int c : out.consumers)
        if (!reads_rows_in_place(g, g.nodes[static_cast<std::size_t>(c)], user.outputs[0], cores)) return false;
    return true;
}

}  // namespace

std::vector<bool> slice_views(const Graph& g) {
    std::vector<bool> v(g.nodes.size(), false);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) v[i] = is_slice_view(g, g.nodes[i]);
    return v;
}

bool is_slice_view(const Graph& g, const Node& n) {
    // A Slice the host CPU runs copies on the host.
    if (n.op != OpType::Slice || n.on_cpu || n.inputs.empty() || n.outputs.empty()) return false;
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    if (out.is_output || out.consumers.empty()) return false;
    const std::optional<SliceRuns> runs = slice_kept_runs(n, g.tensors[static_cast<std::size_t>(n.inputs[0])]);
    if (!runs) return false;
    for (int c : out.consumers) {
        const Node& user = g.nodes[static_cast<std::size_t>(c)];
        const bool elementwise = is_elementwise(user.op) && user.cores == n.cores;
        if (!elementwise && !(runs->last_axis && reads_rows_in_place(g, user, n.outputs[0], n.cores))) return false;
    }
    return true;
}

}  // namespace npusim::compiler
