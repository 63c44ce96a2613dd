// BatchNorm folding (inference): a BatchNorm whose input comes only from a
// Conv2D is folded into that conv's weights and bias, so the BN node and
// its pass over the data disappear.
#pragma once
#include <string>
#include <vector>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// Returns one note per folded BN ("bn1 folded into conv1").
std::vector<std::string> fold_batchnorm(Graph& g);

}  // namespace npusim::compiler
