// The compiler's middle: the graph after fusion and layout passes, as a list
// of kernels — each one unit of work on one core type, later cut into tiles.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

enum class KernelKind : std::uint8_t {
    conv,         // Conv2D on Cube (implicit im2col), optional fused activation
    matmul,       // MatMul / BatchMatMul on Cube
    elementwise,  // a fused chain of element-wise Vector ops
    pool,         // MaxPool / AvgPool (windowed, halo rows)
    reduce,       // Softmax / LayerNorm / ReduceSum / GlobalAvgPool: row-wise
    format,       // FormatConvert (TransData)
    concat,       // Concat: copies of each input into the output
    transpose,    // Transpose: a full permuting copy
    alias,        // Reshape on a plain layout: no work, output aliases input
    attention,    // fused attention: per query block q·kᵀ on Cube, softmax on Vector, p·v on Cube
    program,      // Dispatch / Combine: a kernel program on every vector core (comm_lowering)
    collective,   // AllReduce / AllGather / ReduceScatter / AllToAll: copies across ranks and reductions
};
const char* to_string(KernelKind k);

struct Kernel {
    std::string name;          // fused node names joined with '+'
    KernelKind kind = KernelKind::elementwise;
    CoreType core = CoreType::vector;
    std::vector<int> nodes;    // graph nodes fused into it, in order
    std::vector<int> inputs;   // tensors read (activations first, then consts)
    int output = -1;           // tensor written
    double cycles_per_repeat = 1;  // vector work per 256 B repeat of output
    bool fused_epilogue = false;   // activation applied by FixPipe
    // Mixed Cube->Vector fusion: this vector kernel consumes its producer's
    // tiles in place (UB on coupled parts, L2 on split ones), tile by tile.
    int fused_with = -1;           // producer kernel index, or -1
    // Attention: the score workspace [batch, S, Sk] the Cube and Vector hand
    // tiles through (L2 on split parts, UB / L1 on coupled ones), or -1.
    int workspace = -1;
    // The cores its tasks run on (its nodes' "cores"; unset: every core).
    CoreRange cores;
};

struct KernelPlan {
    std::vector<Kernel> kernels;      // in a topological order
    std::vector<std::string> notes;   // what the passes did, for the report
};

}  // namespace npusim::compiler
