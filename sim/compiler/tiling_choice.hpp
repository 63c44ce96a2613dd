// The tiling the compiler chose for one kernel: reported in the compile
// summary, kept apart from the tiler so readers of a CompileResult do not
// pull in the tiler.
#pragma once
#include <string>
#include <vector>

namespace npusim::compiler {

struct TilingChoice {
    std::string kernel;
    std::string shape;        // e.g. "2 row blocks x 8 channel blocks"
    int tiles = 0;
    double est_cycles = 0;
    bool forced = false;
    bool searched = false;  // the plan search's choice (workload.passes.search_cube_plans)
    // A Cube kernel the tiler chose for: its graph node and the runner-up
    // block counts (rows, columns, K parts) the plan search tries.
    struct Blocks {
        int m = 1, n = 1, k = 1;
        bool operator==(const Blocks& o) const { return m == o.m && n == o.n && k == o.k; }
    };
    std::string node;
    std::string dims;  // what it multiplies (kind, images, rows, columns, K): kernels alike share their plans
    std::vector<Blocks> runners_up;
    // The front of estimate against bytes besides the chosen count: block
    // counts that move fewer bytes through the cores' ports than every
    // count estimated faster, the fastest two. Where the estimate misjudges
    // traffic, the plan search tries them on the die model.
    std::vector<Blocks> fewer_bytes;
    // A Cube kernel's block counts as the tiler chose them (m = 0: none):
    // another rank of a supernode with the same program takes them as they are.
    Blocks chosen{0, 0, 0};
    // A Cube kernel's M-pipe cycles, the whole of it at once, where no
    // tiling adds up to fewer (each tile pads its own fractals; 0 for a
    // grouped kernel, whose tiles hold or skip groups).
    double m_floor_cycles = 0;
};

}  // namespace npusim::compiler
