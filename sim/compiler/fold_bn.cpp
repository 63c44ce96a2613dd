#include "compiler/fold_bn.hpp"

#include "compiler/graph_edit.hpp"

namespace npusim::compiler {

std::vector<std::string> fold_batchnorm(Graph& g) {
    std::vector<std::string> notes;
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        Node& bn = g.nodes[i];
        if (bn.op != OpType::BatchNorm) continue;
        const Tensor& in = g.tensors[static_cast<std::size_t>(bn.inputs[0])];
        if (in.producer < 0 || in.consumers.size() != 1 || in.is_output) continue;
        Node& conv = g.nodes[static_cast<std::size_t>(in.producer)];
        if (conv.op != OpType::Conv2D) continue;
        // The conv now writes what the BN wrote; the scale and shift live in
        // its weights and bias (done offline, no runtime cost).
        conv.outputs[0] = bn.outputs[0];
        conv.attrs["folded_bn"] = Attr{Attr::Kind::string, 0, 0, bn.name, {}};
        dead[i] = true;
        notes.push_back(bn.name + " folded into " + conv.name);
    }
    erase_nodes(g, dead);
    relink(g);
    return notes;
}

}  // namespace npusim::compiler
