#include "tasks/stream_footprint.hpp"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace npusim {

namespace {
// A region as (addr, bytes per row, stride, rows); rows that touch or
// overlap are one run of bytes (stride 0: a single row).
using RegionKey = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint32_t>;

RegionKey key_of(std::uint64_t addr, std::uint64_t bytes, std::uint64_t stride, std::uint32_t rows) {
    if (rows <= 1 || stride <= bytes) return {addr, addr + (rows > 1 ? (rows - 1) * stride : 0) + bytes, 0, 1};
    return {addr, bytes, stride, rows};
}
// Strided regions of one stride and row count whose rows touch or overlap
// side by side (a BSND tensor's head blocks) become one region, contiguous
// once its rows reach the stride. Exact: row i of the joined region is the
// union of both rows i.
void join_side_by_side(std::vector<RegionKey>& regions) {
    const auto strided =
        std::partition(regions.begin(), regions.end(), [](const RegionKey& r) { return std::get<3>(r) == 1; });
    std::sort(strided, regions.end(), [](const RegionKey& a, const RegionKey& b) {
        return std::tie(std::get<2>(a), std::get<3>(a), std::get<0>(a), std::get<1>(a)) <
               std::tie(std::get<2>(b), std::get<3>(b), std::get<0>(b), std::get<1>(b));
    });
    auto out = strided;
    for (auto in = strided; in != regions.end();) {
        auto [addr, bytes, stride, rows] = *in;
        for (++in; in != regions.end(); ++in) {
            const auto& [a, b, s, r] = *in;
            if (s != stride || r != rows || a > addr + bytes) break;
            bytes = std::max(bytes, a + b - addr);
        }
        *out++ = key_of(addr, bytes, stride, rows);
    }
    regions.erase(out, regions.end());
}

// The bytes of the union of regions, in any order: their rows in address
// order by a merge over the regions (memory per region, not per row: a
// prefill layer's strided head blocks have tens of millions of rows).
std::uint64_t union_bytes(const std::vector<RegionKey>& regions) {
    struct Next {
        std::uint64_t begin;
        std::size_t region;
        std::uint32_t row;
    };
    const auto later = [](const Next& a, const Next& b) { return a.begin > b.begin; };
    std::vector<Next> heap;
    heap.reserve(regions.size());
    for (std::size_t i = 0; i < regions.size(); ++i) heap.push_back({std::get<0>(regions[i]), i, 0});
    std::make_heap(heap.begin(), heap.end(), later);
    std::uint64_t total = 0, end = 0;
    const auto cover = [&](std::uint64_t b, std::uint64_t e) {
        if (e <= end) return;
        total += e - std::max(b, end);
        end = e;
    };
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const Next n = heap.back();
        heap.pop_back();
        const auto& [addr, b, stride, rows] = regions[n.region];
        if (rows == 1) {
            cover(addr, b);  // key_of made b the end
            continue;
        }
        // This region's rows up to where another region's next row begins.
        const std::uint64_t until = heap.empty() ? UINT64_MAX : heap.front().begin;
        std::uint32_t i = n.row;
        for (; i < rows && addr + i * stride <= until; ++i) cover(addr + i * stride, addr + i * stride + b);
        if (i < rows) {
            heap.push_back({addr + i * stride, n.region, i});
            std::push_heap(heap.begin(), heap.end(), later);
        }
    }
    return total;
}
}  // namespace

std::uint64_t gm_addressed_bytes(const TaskStream& stream) {
    // Tasks read the same tiles many times over (a GEMM's panels, a
    // layer's weights): the distinct regions first, then their rows.
    std::vector<RegionKey> regions;
    const auto add = [&](std::uint64_t addr, std::uint64_t bytes, std::uint64_t stride, std::uint32_t rows) {
        if (bytes > 0 && rows > 0) regions.push_back(key_of(addr, bytes, stride, rows));
    };
    for (const Task& t : stream.tasks) {
        for (const auto* list : {&t.reads, &t.writes})
            for (const Region& r : *list)
                if (is_global(r.space)) add(r.addr, r.bytes, r.stride, r.rows);
        const KernelParams& p = t.params;
        if (t.reads.empty() && p.has_addr && is_global(p.src)) add(p.addr, p.bytes, 0, 1);
        if (t.writes.empty() && p.has_out_addr && is_global(p.dst)) add(p.out_addr, p.out_bytes ? p.out_bytes : p.bytes, 0, 1);
    }
    std::sort(regions.begin(), regions.end());
    regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
    join_side_by_side(regions);
    return union_bytes(regions);
}

}  // namespace npusim
