// Small graph surgery for the passes: add tensors and nodes, drop nodes,
// and re-derive producers, consumers and a topological order afterwards.
#pragma once
#include <vector>

#include "compiler/graph.hpp"

namespace npusim::compiler {

int add_tensor(Graph& g, Tensor t);
// Removes nodes marked dead (their output tensors stay, unreferenced).
void erase_nodes(Graph& g, const std::vector<bool>& dead);
// Recomputes Tensor::producer / consumers and orders nodes topologically
// (stable: ties keep the current order). Call after any edit.
void relink(Graph& g);

}  // namespace npusim::compiler
