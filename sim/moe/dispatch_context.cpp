#include "moe/dispatch.hpp"

namespace npusim {

DispatchContext::DispatchContext(const MoeParams& p, const Routing& r, const DispatchLayout& l)
    : params(p), routing(r), layout(l), offsets(static_cast<std::size_t>(p.ranks)) {
    const int pairs = p.experts_per_rank * p.ranks;
    for (int dst = 0; dst < p.ranks; ++dst) {
        auto& off = offsets[static_cast<std::size_t>(dst)];
        off.resize(static_cast<std::size_t>(pairs) + 1);
        std::int32_t sum = 0;
        for (int j = 0; j < pairs; ++j) {
            off[static_cast<std::size_t>(j)] = sum;
            const int le = j / p.ranks, src = j % p.ranks;
            sum += r.count(src, dst * p.experts_per_rank + le);
        }
        off[static_cast<std::size_t>(pairs)] = sum;
    }
}

}  // namespace npusim
