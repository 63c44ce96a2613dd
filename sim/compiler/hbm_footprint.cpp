#include "compiler/hbm_footprint.hpp"

#include <algorithm>
#include <vector>

#include "compiler/memory_plan.hpp"
#include "compiler/slice_view.hpp"

namespace npusim::compiler {

HbmFootprint hbm_footprint(const Graph& g) {
    HbmFootprint f;
    const std::size_t nodes = g.nodes.size();
    // A Reshape's output is a view, so is a Slice's read in place: their
    // readers keep the source alive.
    std::vector<int> root(g.tensors.size());
    for (std::size_t t = 0; t < g.tensors.size(); ++t) root[t] = static_cast<int>(t);
    for (const Node& n : g.nodes)
        if ((n.op == OpType::Reshape || is_slice_view(g, n)) && !n.inputs.empty())
            for (const int o : n.outputs) root[static_cast<std::size_t>(o)] = root[static_cast<std::size_t>(n.inputs[0])];
    std::vector<std::size_t> last(g.tensors.size(), 0);
    for (std::size_t i = 0; i < nodes; ++i)
        for (const int t : g.nodes[i].inputs) {
            std::size_t& l = last[static_cast<std::size_t>(root[static_cast<std::size_t>(t)])];
            l = std::max(l, i);
        }
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].is_output) last[static_cast<std::size_t>(root[t])] = nodes;
    // Bytes that start and stop being alive at each node.
    std::vector<std::uint64_t> born(nodes + 1, 0), freed(nodes + 2, 0);
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const Tensor& x = g.tensors[t];
        const std::uint64_t bytes = padded_bytes(x);
        if (x.is_const) {
            f.weights += bytes;
        } else if (x.is_input) {
            f.inputs += bytes;
        } else if (root[t] == static_cast<int>(t) && x.producer >= 0) {
            const auto from = static_cast<std::size_t>(x.producer);
            born[from] += bytes;
            freed[std::max(from, last[t]) + 1] += bytes;
        }
    }
    std::uint64_t alive = 0;
    for (std::size_t i = 0; i <= nodes; ++i) {
        alive -= freed[i];
        alive += born[i];
        f.activations_peak = std::max(f.activations_peak, alive);
    }
    return f;
}

}  // namespace npusim::compiler
