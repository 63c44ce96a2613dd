// The GM regions the tiler's tiles name: byte counts, even cuts of an
// extent, the constant inputs every tile reads, and the row ranges a
// Dispatch's capacity layout masks.
#include "compiler/tile_regions.hpp"

#include <algorithm>

#include "common/arith.hpp"
#include "compiler/comm_ops.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {

std::uint64_t sum_bytes(const std::vector<Region>& rs) {
    std::uint64_t n = 0;
    for (const auto& r : rs) n += r.total();
    return n;
}

std::vector<std::pair<i64, i64>> split_ranges(i64 n, i64 parts, i64 unit) {
    std::vector<std::pair<i64, i64>> out;
    const i64 units = ceil_div(n, unit);
    parts = std::max<i64>(1, std::min(parts, units));
    i64 lo = 0;
    for (i64 p = 0; p < parts; ++p) {
        const i64 hi = std::min(n, (units * (p + 1) / parts) * unit);
        if (hi > lo) out.emplace_back(lo, hi);
        lo = hi;
    }
    return out;
}

// Rows a Dispatch's capacity layout leaves empty on some ranks: each task
// over such a tensor names the rows it covers, and the rank's row table
// says at run time how many hold tokens (docs/task-streams.md, "Row
// tables"). The rows are those of its writes in the (2-D, ND) output.
void Tiler::mask_rows(const Kernel& k, std::size_t first) {
    if (k.kind == KernelKind::program || k.kind == KernelKind::collective || k.kind == KernelKind::alias) return;
    const int d = masking_dispatch(g_, k.output);
    if (d < 0) return;
    const auto table = std::find(capacity_.begin(), capacity_.end(), d) - capacity_.begin();
    const Tensor& out = T(k.output);
    const std::uint64_t rows = static_cast<std::uint64_t>(out.shape[0]);
    const std::uint64_t row = mem_.bytes(k.output) / std::max<std::uint64_t>(rows, 1);
    const std::uint64_t base = mem_.addr(k.output), end = base + mem_.bytes(k.output);
    const auto cap = static_cast<std::uint32_t>(dispatch_capacity(g_, g_.nodes[static_cast<std::size_t>(d)]));
    for (std::size_t i = first; i < tasks_.size(); ++i) {
        std::uint64_t lo = rows, hi = 0;
        for (const Region& r : tasks_[i].writes) {
            if (r.addr < base || r.addr >= end) continue;
            lo = std::min(lo, (r.addr - base) / row);
            hi = std::max(hi, (std::min(r.end(), end) - base + row - 1) / row);
        }
        if (hi <= lo) continue;
        KernelParams& p = tasks_[i].params;
        p.rows_table = static_cast<std::uint32_t>(table) + 1;
        p.rows_group = cap;
        p.rows_first = static_cast<std::uint32_t>(lo);
        p.rows_span = static_cast<std::uint32_t>(hi - lo);
    }
}

void Tiler::add_consts(const Kernel& k, std::size_t from, std::vector<Region>& reads) const {
    for (std::size_t i = from; i < k.inputs.size(); ++i) {
        const int t = k.inputs[i];
        if (T(t).is_const) reads.push_back(mem_.physical(t, 0, mem_.bytes(t)));
    }
}

}  // namespace npusim::compiler
