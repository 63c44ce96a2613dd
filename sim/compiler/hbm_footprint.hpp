// What a die's HBM must hold for a graph: its weights and inputs for the
// whole run, and its activations at the point of the node order where the
// most are alive at once (each from the node that writes it to the last
// that reads it; graph outputs to the end; a view of a tensor as long as
// the tensor). A runtime reuses freed activation memory; this is the peak
// it cannot go below in this node order, with the intermediates of chains
// the compiler fuses later (which never reach HBM) counted: an upper
// estimate.
#pragma once
#include <cstdint>

#include "compiler/graph.hpp"

namespace npusim::compiler {

struct HbmFootprint {
    std::uint64_t weights = 0;           // consts (weights, KV caches held as constants)
    std::uint64_t inputs = 0;            // graph inputs
    std::uint64_t activations_peak = 0;  // produced tensors alive at once, at most
    std::uint64_t total() const { return weights + inputs + activations_peak; }
};

HbmFootprint hbm_footprint(const Graph& g);

}  // namespace npusim::compiler
