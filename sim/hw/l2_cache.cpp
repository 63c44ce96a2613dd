#include "hw/l2_cache.hpp"

#include <algorithm>

namespace npusim {

L2Cache::L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes)
    : region_bytes_(std::max<std::uint64_t>(64, region_bytes / 64 * 64)),
      sub_bytes_(region_bytes_ / 64),
      max_regions_(std::max<std::uint64_t>(1, capacity_bytes / region_bytes_)) {}

std::uint64_t L2Cache::access(std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t id = lo / region_bytes_;
    const std::uint64_t base = id * region_bytes_;
    const std::uint64_t first = (lo - base) / sub_bytes_, last = (hi - 1 - base) / sub_bytes_;
    const std::uint64_t covered = (last == 63 ? ~0ULL : (1ULL << (last + 1)) - 1) & ~((1ULL << first) - 1);

    auto it = where_.find(id);
    std::uint64_t present = 0;
    if (it != where_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        present = lru_.front().present;
        lru_.front().present |= covered;
    } else {
        lru_.push_front(Region{id, covered});
        where_.emplace(id, lru_.begin());
        if (lru_.size() > max_regions_) {
            where_.erase(lru_.back().id);
            lru_.pop_back();
        }
    }
    const std::uint64_t hits = present & covered;
    if (!hits) return 0;
    // Whole sub-blocks that hit, minus the parts of the edge sub-blocks
    // outside [lo, hi).
    std::uint64_t bytes = static_cast<std::uint64_t>(__builtin_popcountll(hits)) * sub_bytes_;
    if (hits >> first & 1) bytes -= (lo - base) - first * sub_bytes_;
    if (hits >> last & 1) bytes -= (last + 1) * sub_bytes_ - (hi - base);
    return bytes;
}

std::uint64_t L2Cache::read(std::uint64_t addr, std::uint64_t bytes) {
    std::uint64_t hit = 0;
    const std::uint64_t end = addr + bytes;
    for (std::uint64_t lo = addr; lo < end;) {
        const std::uint64_t hi = std::min(end, (lo / region_bytes_ + 1) * region_bytes_);
        hit += access(lo, hi);
        lo = hi;
    }
    return hit;
}

void L2Cache::write(std::uint64_t addr, std::uint64_t bytes) { read(addr, bytes); }

}  // namespace npusim
