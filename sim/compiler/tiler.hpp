// Cuts each kernel into tiles — one task each — that fit the buffers they
// live in, choosing the tile shape with the cost model (compute vs transfer
// vs per-task overhead, balanced to the core count) unless the user forces
// one. Every tile carries the GM regions it reads and writes, which the
// sync pass turns into events and the L2 model and lint use.
#pragma once
#include <string>
#include <vector>

#include "compiler/kernel_plan.hpp"
#include "compiler/memory_plan.hpp"
#include "compiler/options.hpp"
#include "compiler/tiling_choice.hpp"
#include "chip/chip_params.hpp"

namespace npusim::compiler {

struct TileTask {
    int kernel = -1;          // index into KernelPlan::kernels
    std::string label;        // "n0/h1/c2"
    CoreType core = CoreType::vector;
    npusim::Kernel type = npusim::Kernel::vector;
    KernelParams params;
    std::vector<Region> reads, writes;
    double est_cycles = 0;    // cost-model estimate
    int paired = -1;          // fused Vector tile: the Cube tile it consumes
    int pinned = -1;          // the core it must run on (a program's block, a collective's step), or -1
    // The cores of its type it may run on, [core_lo, core_hi) (its kernel's
    // core group; pinned counts from core_lo); core_hi 0: every core.
    int core_lo = 0, core_hi = 0;
    // A kernel program's declaration (type program): name, arguments, blocks.
    std::string program_name, program_args;
    std::uint32_t program_blocks = 0;
    // Communication steps: what the sync pass does not derive from regions —
    // the kernel's own events (ids local to it), waits on memory, a write to
    // another rank.
    std::vector<std::string> own_wait, own_signal;
    std::vector<MemoryWait> wait_memory;
    RemoteWrite remote;
};

std::vector<TileTask> tile_kernels(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem, const ChipParams& chip,
                                   const CompileOptions& opt, std::vector<TilingChoice>& choices);

}  // namespace npusim::compiler
