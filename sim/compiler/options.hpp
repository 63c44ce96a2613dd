// What the compiler is asked to do: the workload options of docs/design.md
// §4.6 (docs/compiler.md), as the passes read them.
#pragma once
#include <map>
#include <string>

#include "compiler/graph.hpp"
#include "config/workload_params.hpp"

namespace npusim::compiler {

using npusim::ForcedTiling;
using npusim::FusionBoundary;
using npusim::SyncGranularity;

struct CompileOptions {
    // The schema's defaults (config/schema.cpp), for callers that set only
    // what they change; no default is written here.
    CompileOptions();
    explicit CompileOptions(const GraphWorkload& w);

    SyncGranularity sync;
    Layout input_layout;
    bool fold_bn;
    bool fuse_activation;
    bool fuse_vector;
    bool hoist_layout;
    bool explore_cube_cores;
    bool search_cube_plans;
    bool explore_vector_cores;
    FusionBoundary boundary;
    std::map<std::string, ForcedTiling> tiling;  // by graph node name
    // Dispatch / Combine nodes without attrs.variant (workload.variant), and
    // the optimized Dispatch's Data-as-Flag blocks (workload.flag_in_block).
    bool comm_optimized;
    bool flag_in_block;
    // A graph whose HBM footprint exceeds chip.hbm.size_gb: InputError (true) or a warning.
    bool capacity_error;
};

// workload.routing as the compiler reads it.
RoutingSpec routing_spec(const GraphWorkload& w);

}  // namespace npusim::compiler
