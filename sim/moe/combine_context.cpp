#include "moe/combine.hpp"

#include <algorithm>

namespace npusim {

CombineContext::CombineContext(const DispatchContext& d, const MoeOp& p, const CombineLayout& l)
    : dispatch(d), params(p), layout(l), row_src(static_cast<std::size_t>(d.params.ranks())), row_pair(row_src.size()) {
    const Routing& route = d.routing;
    const int R = d.params.ranks(), epr = d.params.experts_per_rank();
    for (int dst = 0; dst < R; ++dst) {
        const auto n = static_cast<std::size_t>(d.offsets[static_cast<std::size_t>(dst)].back());
        row_src[static_cast<std::size_t>(dst)].assign(n, -1);
        row_pair[static_cast<std::size_t>(dst)].assign(n, -1);
    }
    // A pair's row: its (local expert, source) run in the dense rows, at its slot.
    for (int src = 0; src < R; ++src)
        for (int q = 0; q < route.pairs(); ++q) {
            const int e = route.expert(src, q), dst = e / epr, le = e % epr;
            const auto& off = d.offsets[static_cast<std::size_t>(dst)];
            const auto row = static_cast<std::size_t>(off[static_cast<std::size_t>(le * R + src)] + route.slot(src, q));
            row_src[static_cast<std::size_t>(dst)][row] = src;
            row_pair[static_cast<std::size_t>(dst)][row] = q;
        }
}

std::pair<int, int> CombineContext::share(int rows, int core, int cores) {
    return {static_cast<int>(static_cast<std::int64_t>(core) * rows / cores),
            static_cast<int>(static_cast<std::int64_t>(core + 1) * rows / cores)};
}

}  // namespace npusim
