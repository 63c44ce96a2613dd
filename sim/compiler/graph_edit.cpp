#include "compiler/graph_edit.hpp"

#include <queue>

namespace npusim::compiler {

int add_tensor(Graph& g, Tensor t) {
    g.tensors.push_back(std::move(t));
    return static_cast<int>(g.tensors.size() - 1);
}

void erase_nodes(Graph& g, const std::vector<bool>& dead) {
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
}

void relink(Graph& g) {
    for (auto& t : g.tensors) {
        t.producer = -1;
        t.consumers.clear();
    }
    // Producer by tensor, then a stable Kahn order.
    std::vector<int> producer(g.tensors.size(), -1);
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        for (int o : g.nodes[i].outputs) producer[static_cast<std::size_t>(o)] = static_cast<int>(i);
    std::vector<int> indegree(g.nodes.size(), 0);
    std::vector<std::vector<int>> users(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        for (int in : g.nodes[i].inputs) {
            const int p = producer[static_cast<std::size_t>(in)];
            if (p >= 0) {
                ++indegree[i];
                users[static_cast<std::size_t>(p)].push_back(static_cast<int>(i));
            }
        }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (indegree[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    while (!ready.empty()) {
        const int n = ready.top();
        ready.pop();
        order.push_back(n);
        for (int u : users[static_cast<std::size_t>(n)])
            if (--indegree[static_cast<std::size_t>(u)] == 0) ready.push(u);
    }
    std::vector<Node> sorted;
    sorted.reserve(g.nodes.size());
    for (int n : order) sorted.push_back(std::move(g.nodes[static_cast<std::size_t>(n)]));
    g.nodes = std::move(sorted);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        for (int o : g.nodes[i].outputs) g.tensors[static_cast<std::size_t>(o)].producer = static_cast<int>(i);
        for (int in : g.nodes[i].inputs) g.tensors[static_cast<std::size_t>(in)].consumers.push_back(static_cast<int>(i));
    }
}

}  // namespace npusim::compiler
