#include "moe/dispatch.hpp"

#include <stdexcept>

namespace npusim {

DispatchContext::DispatchContext(const MoeOp& p, const Routing& r, const DispatchLayout& l)
    : params(p), routing(r), layout(l), offsets(static_cast<std::size_t>(p.ranks())) {
    const int R = p.ranks(), epr = p.experts_per_rank();
    const int pairs = epr * R;
    for (int dst = 0; dst < R; ++dst) {
        auto& off = offsets[static_cast<std::size_t>(dst)];
        off.resize(static_cast<std::size_t>(pairs) + 1);
        std::int32_t sum = 0;
        for (int j = 0; j < pairs; ++j) {
            off[static_cast<std::size_t>(j)] = sum;
            const int le = j / R, src = j % R;
            sum += r.count(src, dst * epr + le);
        }
        off[static_cast<std::size_t>(pairs)] = sum;
        if (p.capacity > 0)
            for (int le = 0; le < epr; ++le)
                if (off[static_cast<std::size_t>((le + 1) * R)] - off[static_cast<std::size_t>(le * R)] > p.capacity)
                    throw std::logic_error("DispatchContext: more tokens for a local expert than its capacity");
    }
}

std::int64_t DispatchContext::row_of(int rank, std::int64_t dense) const {
    if (params.capacity == 0) return dense;
    const auto& off = offsets[static_cast<std::size_t>(rank)];
    const int R = params.ranks();
    int le = params.experts_per_rank() - 1;
    while (le > 0 && off[static_cast<std::size_t>(le * R)] > dense) --le;
    return dense - off[static_cast<std::size_t>(le * R)] + static_cast<std::int64_t>(le) * params.capacity;
}

}  // namespace npusim
