#include "moe/combine.hpp"

#include <algorithm>

namespace npusim {

CombineRows::CombineRows(const DispatchContext& d) : src(static_cast<std::size_t>(d.params.ranks())), pair(src.size()) {
    const Routing& route = d.routing;
    const int R = d.params.ranks(), epr = d.params.experts_per_rank();
    for (int dst = 0; dst < R; ++dst) {
        const auto n = static_cast<std::size_t>(d.offsets[static_cast<std::size_t>(dst)].back());
        src[static_cast<std::size_t>(dst)].assign(n, -1);
        pair[static_cast<std::size_t>(dst)].assign(n, -1);
    }
    // A pair's row: its (local expert, source) run in the dense rows, at its slot.
    for (int from = 0; from < R; ++from)
        for (int q = 0; q < route.pairs(); ++q) {
            const int e = route.expert(from, q), dst = e / epr, le = e % epr;
            const auto& off = d.offsets[static_cast<std::size_t>(dst)];
            const auto row =
                static_cast<std::size_t>(off[static_cast<std::size_t>(le * R + from)] + route.slot(from, q));
            src[static_cast<std::size_t>(dst)][row] = from;
            pair[static_cast<std::size_t>(dst)][row] = q;
        }
}

std::pair<int, int> CombineContext::share(int rows, int core, int cores) {
    return {static_cast<int>(static_cast<std::int64_t>(core) * rows / cores),
            static_cast<int>(static_cast<std::int64_t>(core + 1) * rows / cores)};
}

}  // namespace npusim
