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

    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [begin, end)
    for (const auto& [addr, b, stride, rows] : regions) {
        if (rows == 1) ranges.emplace_back(addr, b);  // key_of made b the end
        else
            for (std::uint32_t i = 0; i < rows; ++i) ranges.emplace_back(addr + i * stride, addr + i * stride + b);
    }
    std::sort(ranges.begin(), ranges.end());
    std::uint64_t total = 0, end = 0;
    for (const auto& [b, e] : ranges) {
        if (e <= end) continue;
        total += e - std::max(b, end);
        end = e;
    }
    return total;
}

}  // namespace npusim
