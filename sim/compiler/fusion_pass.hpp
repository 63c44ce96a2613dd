// Groups graph nodes into kernels (docs/design.md §1.1 Fusion): a ReLU after a Cube
// op is applied by FixPipe (no separate task, no round trip through GM);
// chains of element-wise Vector ops become one Vector kernel (data enters UB
// once); at a Cube -> heavy Vector boundary the Vector kernel either
// consumes the Cube tiles in place (fused) or runs as its own op (split),
// decided by the cost model unless forced.
#pragma once
#include "compiler/graph.hpp"
#include "compiler/kernel_plan.hpp"
#include "compiler/options.hpp"
#include "chip/chip_params.hpp"

namespace npusim::compiler {

KernelPlan form_kernels(const Graph& g, const CompileOptions& opt, const ChipParams& chip);

}  // namespace npusim::compiler
