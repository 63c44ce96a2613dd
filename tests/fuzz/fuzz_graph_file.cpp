// Graph files (docs/graph-format.md): read_graph_text, i.e. the JSON reader
// with duplicate-key detection, names, dims, topological order and shape
// inference. Invariants of a graph that reads: nodes are topologically
// ordered, every tensor is within the size limits, every node has one output
// whose producer is that node.
#include <string>

#include "common/errors.hpp"
#include "compiler/graph_reader.hpp"
#include "fuzzing.hpp"

using namespace npusim;
using namespace npusim::compiler;

NPUSIM_FUZZ_TARGET(graph_file) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Graph g;
    try {
        g = read_graph_text(text, "graph.json");
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.rfind("graph.json", 0) == 0, "message does not start with the file: " + msg);
        return 0;
    }
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        NPUSIM_FUZZ_CHECK(n.outputs.size() == 1, n.name);
        const Tensor& out = g.tensors.at(static_cast<std::size_t>(n.outputs[0]));
        NPUSIM_FUZZ_CHECK(out.producer == static_cast<int>(i), n.name);
        for (const int t : n.inputs) {
            const int p = g.tensors.at(static_cast<std::size_t>(t)).producer;
            NPUSIM_FUZZ_CHECK(p < static_cast<int>(i), "node " + n.name + " reads a tensor produced later");
        }
    }
    for (const Tensor& t : g.tensors) {
        NPUSIM_FUZZ_CHECK(t.shape.size() <= kMaxRank, t.name);
        for (const auto d : t.shape) NPUSIM_FUZZ_CHECK(d >= 1 && d <= kMaxDimValue, t.name + " " + to_string(t.shape));
        NPUSIM_FUZZ_CHECK(elements(t.shape) <= kMaxTensorElements, t.name + " " + to_string(t.shape));
    }
    return 0;
}
