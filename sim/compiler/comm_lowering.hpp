// Lowering of a graph's communication ops onto one rank's tasks
// (docs/compiler.md, "Communication ops"): a Dispatch or Combine becomes one
// task of kernel `program` per vector core, running the MoE kernel program
// (moe.dispatch / moe.combine) as block i of N with the node's arguments; a
// collective becomes the copies over the mesh and the reductions of its
// algorithm on this rank (collective/collective_plan), with the events and
// memory waits between its own steps. What reads the op's input waits for
// its producers and what reads its output waits for it, as for any kernel.
#pragma once
#include <vector>

#include "chip/chip_params.hpp"
#include "compiler/graph.hpp"
#include "compiler/kernel_plan.hpp"
#include "compiler/memory_plan.hpp"
#include "compiler/options.hpp"
#include "compiler/tiler.hpp"

namespace npusim::compiler {

struct CommContext {
    const Graph& g;
    const MemoryPlan& mem;
    const ChipParams& chip;
    const CompileOptions& opt;
};

// The tasks of kernel `ki` (a Dispatch or a Combine).
std::vector<TileTask> lower_moe_op(const CommContext& c, const Kernel& k, int ki);
// The tasks of kernel `ki` (AllReduce, AllGather, ReduceScatter, AllToAll).
std::vector<TileTask> lower_collective(const CommContext& c, const Kernel& k, int ki);

}  // namespace npusim::compiler
