#include "tasks/stream_footprint.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace npusim {

std::uint64_t gm_addressed_bytes(const TaskStream& stream) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [begin, end)
    const auto add = [&](std::uint64_t addr, std::uint64_t bytes) {
        if (bytes > 0) ranges.emplace_back(addr, addr + bytes);
    };
    for (const Task& t : stream.tasks) {
        for (const auto* list : {&t.reads, &t.writes})
            for (const Region& r : *list)
                if (is_global(r.space)) r.for_each_row(add);
        const KernelParams& p = t.params;
        if (t.reads.empty() && p.has_addr && is_global(p.src)) add(p.addr, p.bytes);
        if (t.writes.empty() && p.has_out_addr && is_global(p.dst)) add(p.out_addr, p.out_bytes ? p.out_bytes : p.bytes);
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
