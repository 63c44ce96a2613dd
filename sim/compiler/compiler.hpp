// The built-in compiler (docs/design.md §1.1, §3): model graph -> fused, laid-out,
// tiled, synchronised task stream. Plain C++; its only output is a
// TaskStream, the seam to the hardware model.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compiler/graph.hpp"
#include "compiler/options.hpp"
#include "compiler/tiler.hpp"
#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {
class Stats;
}

namespace npusim::compiler {

struct CompileResult {
    TaskStream stream;
    std::vector<std::string> notes;        // what each pass did
    std::vector<TilingChoice> tilings;     // per kernel
    std::size_t kernels = 0;
    std::size_t tasks = 0;
    std::size_t format_converts = 0;       // FormatConvert tasks
    std::uint64_t format_convert_bytes = 0;
    std::size_t events = 0;
    std::size_t edges_before_reduction = 0, edges_after_reduction = 0;
    std::uint64_t gm_bytes = 0;            // bytes all tasks read + write in GM

    void report(Stats& s) const;           // compile.* statistics
    std::string summary() const;           // human-readable
};

CompileResult compile(const Graph& graph, const ChipParams& chip, const CompileOptions& options);

// workload section of the run document -> options (InputError on bad
// workload.tiling entries); dims for read_graph from workload.batch/dims.
CompileOptions options_from_workload(const nlohmann::json& workload);
std::map<std::string, std::int64_t> dims_from_workload(const nlohmann::json& workload);

// Reads the graph named by the workload section and compiles it.
CompileResult compile_workload(const nlohmann::json& workload, const ChipParams& chip);

}  // namespace npusim::compiler
