// The time one task takes on one core when every pipe stage's duration is
// known up front: the same double-buffered schedule the hardware runs
// (chip/tile_pipeline.hpp), stepped through in plain C++. The compiler's
// cost model uses it, so its estimate of a task follows the hardware's pipe
// overlap, fill and drain instead of a max-of-pipes rule of its own.
#pragma once
#include <cstdint>
#include <functional>

namespace npusim::timing {

struct StageCost {
    bool none = false;     // the stage has no work on this tile (done at once)
    double cycles = 0;     // the engine is busy this long
    double latency = 0;    // then the data arrives this much later (transfers)
};

// Cycles from the first stage starting until the last stage of the last tile
// has finished and every transfer has arrived. Tasks of more than
// `exact_tiles` tiles are stepped for that many and extrapolated at the rate
// of the second half of them (steady state). Stages in `port_mask` share
// one port (chip/tile_pipeline.hpp).
double pipelined_cycles(int stages, std::uint64_t tiles, int depth,
                        const std::function<StageCost(int stage, std::uint64_t tile)>& cost,
                        std::uint64_t exact_tiles = 4096, std::uint32_t port_mask = 0);

}  // namespace npusim::timing
