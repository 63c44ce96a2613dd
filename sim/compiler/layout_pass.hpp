// Layout assignment (docs/design.md §1.1): Cube ops want NC1HWC0 (convolution
// activations) or FRACTAL_NZ (matrices); frameworks hand over NCHW / ND.
// Where a tensor's layout differs from what its consumer needs, a
// FormatConvert node (a TransData task on Vector) is inserted. With
// `hoist`, conversions are merged per tensor, cancelled when they would
// undo an earlier one, and hoisted above element-wise ops toward the graph
// inputs; without it, every consumer edge gets its own conversion where it
// stands. A chip whose Cube converts on the way (`cube`) needs none around
// a MatMul.
#pragma once
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/op_traits.hpp"

namespace npusim::compiler {

std::vector<std::string> assign_layouts(Graph& g, Layout input_layout, bool hoist, CubeConversions cube = {});

}  // namespace npusim::compiler
