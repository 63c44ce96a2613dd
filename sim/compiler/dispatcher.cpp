#include "compiler/dispatcher.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::compiler {

std::vector<Placement> place_tasks(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                                   const ChipParams& chip) {
    const std::size_t n = tasks.size();
    std::vector<Placement> out(n);
    std::vector<double> cube_free(static_cast<std::size_t>(std::max(1, chip.cube.count)), 0.0);
    std::vector<double> vector_free(static_cast<std::size_t>(std::max(1, chip.vector.count)), 0.0);
    // Vector cores per Cube core (2 on split A2-class parts, 1 coupled).
    const int ratio = std::max(1, chip.vector.count / std::max(1, chip.cube.count));
    for (std::size_t t = 0; t < n; ++t) {
        double ready = 0;
        for (int p : preds[t]) ready = std::max(ready, out[static_cast<std::size_t>(p)].est_end);
        auto& free = tasks[t].core == CoreType::cube ? cube_free : vector_free;
        int best = 0;
        double best_start = std::max(ready, free[0]);
        for (std::size_t c = 1; c < free.size(); ++c) {
            const double s = std::max(ready, free[c]);
            if (s < best_start) {
                best_start = s;
                best = static_cast<int>(c);
            }
        }
        if (tasks[t].paired >= 0) {
            // In place: the tile sits in the paired core's UB / its L2 slice.
            const int cube = out[static_cast<std::size_t>(tasks[t].paired)].core;
            best = std::min(static_cast<int>(free.size()) - 1, cube * ratio + static_cast<int>(t % static_cast<std::size_t>(ratio)));
            best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
        } else if (tasks[t].core == CoreType::vector && chip.layout == CoreLayout::coupled) {
            // Coupled: prefer the vector unit beside the Cube producer if it
            // costs little (its output is still near, in L1/UB and L2).
            for (int p : preds[t]) {
                if (tasks[static_cast<std::size_t>(p)].core != CoreType::cube) continue;
                const int c = out[static_cast<std::size_t>(p)].core;
                if (c < static_cast<int>(free.size())) {
                    const double s = std::max(ready, free[static_cast<std::size_t>(c)]);
                    if (s <= best_start + 0.1 * tasks[t].est_cycles) {
                        best = c;
                        best_start = s;
                    }
                }
                break;
            }
        }
        out[t].core = best;
        out[t].est_start = best_start;
        out[t].est_end = best_start + tasks[t].est_cycles;
        free[static_cast<std::size_t>(best)] = out[t].est_end;
    }
    // Priority: the estimated work still ahead of a task (bottom level).
    std::vector<double> bottom(n, 0.0);
    std::vector<std::vector<int>> succ(n);
    for (std::size_t t = 0; t < n; ++t)
        for (int p : preds[t]) succ[static_cast<std::size_t>(p)].push_back(static_cast<int>(t));
    for (std::size_t i = n; i-- > 0;) {
        double m = 0;
        for (int s : succ[i]) m = std::max(m, bottom[static_cast<std::size_t>(s)]);
        bottom[i] = tasks[i].est_cycles + m;
        out[i].priority = static_cast<int>(std::min(1e6, std::floor(bottom[i] / 1000.0)));
    }
    return out;
}

}  // namespace npusim::compiler
