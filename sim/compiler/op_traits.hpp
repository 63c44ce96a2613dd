// What the compiler needs to know of each op: which core runs it, whether
// it is element-wise (fusable, layout-agnostic), what layouts it needs, and
// its Vector cost in cycles per 256 B repeat.
#pragma once
#include <optional>

#include "compiler/graph.hpp"

namespace npusim::compiler {

bool is_cube_op(OpType op);         // Conv2D, MatMul, BatchMatMul
bool is_elementwise(OpType op);     // BN, activations, binary arithmetic, Where, (De)Quantize
// ReLU can be applied by FixPipe on the Cube core's output path.
bool fixpipe_can_apply(OpType op);
// Vector cycles per 256 B repeat of the op's output (estimates; see
// docs/compiler.md). Pools scale with their window.
double vector_cycles_per_repeat(const Node& n);
// The same where the cost depends on shapes (TopK, ArgMax: the row length).
double vector_cycles_per_repeat(const Graph& g, const Node& n);

// What the Cube's own transfer engines convert on the way
// (chip.cores.cube.mte2_nd2nz, fixpipe_nz2nd): MTE2 turns a plain operand
// fractal as it loads it into L1, FixPipe writes the result back plain. A
// MatMul then needs no FormatConvert on either side.
struct CubeConversions {
    bool nd2nz_on_load = false;
    bool nz2nd_on_store = false;
};

// Layout input `i` of n must be in, given the layout it arrives in; nullopt
// = any. Consts are laid out offline and never need conversion.
std::optional<Layout> required_layout(const Graph& g, const Node& n, std::size_t i, CubeConversions cube = {});
// Layout of n's output, given its inputs' layouts.
Layout output_layout(const Graph& g, const Node& n, CubeConversions cube = {});
// NCHW for 4-D tensors, ND otherwise.
Layout plain_layout(const Shape& s);
bool is_plain(Layout l);

}  // namespace npusim::compiler
