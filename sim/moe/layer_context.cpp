#include "moe/combine.hpp"

#include <algorithm>

namespace npusim {

LayerContext::LayerContext(const DispatchContext& d, const LayerLayout& l)
    : dispatch(d), layout(l), row_src(static_cast<std::size_t>(d.params.ranks)), row_pair(row_src.size()) {
    const MoeParams& p = d.params;
    const Routing& route = d.routing;
    const int R = p.ranks, epr = p.experts_per_rank;
    for (int dst = 0; dst < R; ++dst) {
        const auto n = static_cast<std::size_t>(d.offsets[static_cast<std::size_t>(dst)].back());
        row_src[static_cast<std::size_t>(dst)].assign(n, -1);
        row_pair[static_cast<std::size_t>(dst)].assign(n, -1);
    }
    // A pair's row: its (local expert, source) run in the OutputBuffer, at its slot.
    for (int src = 0; src < R; ++src)
        for (int q = 0; q < route.pairs(); ++q) {
            const int e = route.expert(src, q), dst = e / epr, le = e % epr;
            const auto& off = d.offsets[static_cast<std::size_t>(dst)];
            const auto row = static_cast<std::size_t>(off[static_cast<std::size_t>(le * R + src)] + route.slot(src, q));
            row_src[static_cast<std::size_t>(dst)][row] = src;
            row_pair[static_cast<std::size_t>(dst)][row] = q;
        }
}

std::pair<int, int> LayerContext::expert_rows(int rank, int le) const {
    const auto& off = dispatch.offsets[static_cast<std::size_t>(rank)];
    const int R = dispatch.params.ranks;
    return {off[static_cast<std::size_t>(le * R)], off[static_cast<std::size_t>((le + 1) * R)]};
}

std::pair<int, int> LayerContext::share(int rows, int core, int cores) {
    return {static_cast<int>(static_cast<std::int64_t>(core) * rows / cores),
            static_cast<int>(static_cast<std::int64_t>(core + 1) * rows / cores)};
}

std::pair<int, int> LayerContext::ready_cores(int rank, int le) const {
    const auto [a, b] = expert_rows(rank, le);
    const int rows = dispatch.offsets[static_cast<std::size_t>(rank)].back(), C = layout.cores;
    int lo = C, hi = 0;
    for (int c = 0; c < C; ++c) {
        const auto [n0, n1] = share(rows, c, C);
        if (n0 < b && n1 > a) {
            lo = std::min(lo, c);
            hi = c + 1;
        }
    }
    return lo < hi ? std::make_pair(lo, hi) : std::make_pair(0, 0);
}

}  // namespace npusim
