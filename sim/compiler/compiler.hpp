// The built-in compiler (docs/design.md §1.1, §3): model graph -> fused, laid-out,
// tiled, synchronised task stream. Plain C++; its output is a TaskStream,
// the seam to the hardware model, and the op table the host plans from.
#pragma once
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/hbm_footprint.hpp"
#include "compiler/op_table.hpp"
#include "compiler/options.hpp"
#include "compiler/tiling_choice.hpp"
#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "tasks/task.hpp"

namespace npusim {
class Stats;
}

namespace npusim::compiler {

struct CompileResult {
    TaskStream stream;
    std::vector<std::string> notes;        // what each pass did
    std::vector<TilingChoice> tilings;     // per kernel
    OpTable ops;                           // per kernel, for the host (docs/host.md)
    std::size_t kernels = 0;
    std::size_t tasks = 0;
    std::size_t format_converts = 0;       // FormatConvert tasks
    std::uint64_t format_convert_bytes = 0;
    std::size_t events = 0;
    int cube_cores_planned = 0;            // the chip's, or fewer (explore_cube_cores)
    int vector_cores_planned = 0;          // the chip's, or fewer (explore_vector_cores)
    std::size_t edges_before_reduction = 0, edges_after_reduction = 0;
    std::uint64_t gm_bytes = 0;            // bytes all tasks read + write in GM
    HbmFootprint hbm;                      // what the die's HBM must hold (compiler/hbm_footprint.hpp)
    std::vector<std::string> warnings;     // for the user (over capacity with workload.capacity warn)
    // The cost model's estimate of each task of `stream`, in its order:
    // cycles from its start on a core to its end, where the tiler put it
    // (its kernel's cores streaming, its inputs where they are).
    std::vector<double> est_cycles;

    void report(Stats& s) const;           // compile.* statistics
    std::string summary() const;           // human-readable
};

CompileResult compile(const Graph& graph, const ChipParams& chip, const CompileOptions& options);

// Dims for read_graph: workload.batch and workload.dims.
std::map<std::string, std::int64_t> graph_dims(const GraphWorkload& workload);

// Reads the graph named by the workload (`file`) and compiles it; InputError
// for a workload.tiling entry that names no node.
CompileResult compile_workload(const WorkloadParams& workload, const ChipParams& chip);

}  // namespace npusim::compiler
