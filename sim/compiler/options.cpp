#include "compiler/options.hpp"

namespace npusim::compiler {

CompileOptions::CompileOptions() : CompileOptions(default_workload_params("graph").graph) {}

CompileOptions::CompileOptions(const GraphWorkload& w)
    : sync(w.sync),
      input_layout(w.input_layout == InputLayout::NC1HWC0 ? Layout::NC1HWC0 : Layout::NCHW),
      fold_bn(w.passes.fold_bn),
      fuse_activation(w.passes.fuse_activation),
      fuse_vector(w.passes.fuse_vector),
      hoist_layout(w.passes.hoist_layout),
      explore_cube_cores(w.passes.explore_cube_cores),
      search_cube_plans(w.passes.search_cube_plans),
      explore_vector_cores(w.passes.explore_vector_cores),
      boundary(w.fusion_boundary),
      tiling(w.tiling),
      comm_optimized(w.comm_optimized),
      flag_in_block(w.flag_in_block),
      capacity_error(w.capacity_error) {}

RoutingSpec routing_spec(const GraphWorkload& w) {
    RoutingSpec r;
    r.distribution = w.routing.zipf ? RoutingSpec::Distribution::zipf : RoutingSpec::Distribution::uniform;
    r.skew = w.routing.skew;
    r.seed = w.routing.seed;
    r.redundant_experts = w.routing.redundant_experts;
    return r;
}

}  // namespace npusim::compiler
