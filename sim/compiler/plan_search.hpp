// Passes 3-7 of the compiler (form kernels, tile, sync, place) for one
// chip, and the searches over whole plans that pick among them: fewer Cube
// cores (7b, explore_cube_cores), each Cube kernel's runner-up blocks (7c,
// search_cube_plans) and fewer vector cores (7d, explore_vector_cores),
// each rated by running it on the die model (docs/compiler.md).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "compiler/dispatcher.hpp"
#include "compiler/graph.hpp"
#include "compiler/kernel_plan.hpp"
#include "compiler/options.hpp"
#include "compiler/sync_pass.hpp"
#include "compiler/tiler.hpp"
#include "compiler/tiling_choice.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

// One plan of a laid-out graph: its kernels, tiles, sync and placement, and
// the cycles its run on the die model takes (time_on_die; 0 until run).
struct PlannedGraph {
    Graph g;
    KernelPlan plan;
    std::vector<TilingChoice> tilings;
    std::vector<TileTask> tasks;
    SyncPlan sync;
    std::vector<Placement> where;
    double makespan = 0;
    int cubes = 0;  // the Cube cores it is planned for
    int vectors = 0;  // the Vector cores it is planned for
};

// Times a candidate plan on the die model: its stream run on a die of
// `chip` (the chip being compiled for), in cycles. The compiler knows
// nothing of SystemC: the command line registers one (hw/die_probe in the
// same process, cli::use_die_timer); none registered, the searches do not
// run. Returns the timer it replaces.
using DieTimer = std::function<double(const TaskStream& stream, const ChipParams& chip)>;
DieTimer set_die_timer(DieTimer timer);
// A candidate plan's stream as the compiler builds it, before the text
// round trip of `compile --emit-tasks` (it runs to the same picosecond as
// its text read back: tests/hw/test_die_probe.cpp); no tasks when it
// waits on other ranks or runs kernel programs (Dispatch, Combine): one die
// cannot run it alone.
TaskStream plan_stream(const PlannedGraph& v);

// Passes 3-7 of `laid` (a graph after BN folding and layout) for `chip`.
PlannedGraph plan_graph(const Graph& laid, const ChipParams& chip, const CompileOptions& opt);

// The plan to emit: plan_graph for the chip, then the searches (7b, 7c,
// 7d) as `opt` enables them. Their choices are added to `notes` (the
// compile report).
PlannedGraph plan_best(const Graph& laid, const ChipParams& chip, const CompileOptions& opt,
                       std::vector<std::string>& notes);

}  // namespace npusim::compiler
