#include "moe/dispatch.hpp"

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
    }
}

}  // namespace npusim
