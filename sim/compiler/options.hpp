// What the compiler is asked to do: the workload options of docs/design.md §4.6.
#pragma once
#include <map>
#include <string>

#include "compiler/graph.hpp"

namespace npusim::compiler {

enum class SyncGranularity : std::uint8_t { op, tile };
// At a Cube -> heavy-Vector boundary: decide by cost, or force either way.
enum class FusionBoundary : std::uint8_t { automatic, fuse, split };

struct ForcedTiling {
    int m_blocks = 0;  // rows (conv: output-row blocks per image; matmul: M blocks); 0 = free
    int n_blocks = 0;  // output channels / columns blocks; 0 = free
    int tiles = 0;     // vector ops: number of tiles; 0 = free
};

struct CompileOptions {
    SyncGranularity sync = SyncGranularity::tile;
    Layout input_layout = Layout::NCHW;
    bool fold_bn = true;
    bool fuse_activation = true;
    bool fuse_vector = true;
    bool hoist_layout = true;
    FusionBoundary boundary = FusionBoundary::automatic;
    std::map<std::string, ForcedTiling> tiling;  // by graph node name
};

}  // namespace npusim::compiler
