// The tiling the compiler chose for one kernel: reported in the compile
// summary, kept apart from the tiler so readers of a CompileResult do not
// pull in the tiler.
#pragma once
#include <string>

namespace npusim::compiler {

struct TilingChoice {
    std::string kernel;
    std::string shape;        // e.g. "2 row blocks x 8 channel blocks"
    int tiles = 0;
    double est_cycles = 0;
    bool forced = false;
};

}  // namespace npusim::compiler
