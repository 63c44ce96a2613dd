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
                     static_cast<std::uint64_t>(cut->end - cut->begin) * inner, outer, whole * inner};
}

bool is_slice_view(const Graph& g, const Node& n) {
    if (n.op != OpType::Slice || n.inputs.empty() || n.outputs.empty()) return false;
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    if (out.is_output || out.consumers.empty()) return false;
    for (int c : out.consumers) {
        const Node& user = g.nodes[static_cast<std::size_t>(c)];
        if (!is_elementwise(user.op) || user.cores != n.cores) return false;
    }
    return slice_kept_runs(n, g.tensors[static_cast<std::size_t>(n.inputs[0])]).has_value();
}

}  // namespace npusim::compiler
