#include "hw/l2_cache.hpp"

#include <algorithm>

namespace npusim {

L2Cache::L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes)
    : region_bytes_(std::max<std::uint64_t>(1, region_bytes)),
      max_regions_(std::max<std::uint64_t>(1, capacity_bytes / std::max<std::uint64_t>(1, region_bytes))) {}

bool L2Cache::touch(std::uint64_t region) {
    auto it = where_.find(region);
    if (it != where_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return true;
    }
    lru_.push_front(region);
    where_.emplace(region, lru_.begin());
    if (lru_.size() > max_regions_) {
        where_.erase(lru_.back());
        lru_.pop_back();
    }
    return false;
}

std::uint64_t L2Cache::read(std::uint64_t addr, std::uint64_t bytes) {
    if (bytes == 0) return 0;
    std::uint64_t hit = 0;
    const std::uint64_t end = addr + bytes;
    for (std::uint64_t r = addr / region_bytes_; r * region_bytes_ < end; ++r) {
        const std::uint64_t lo = std::max(addr, r * region_bytes_);
        const std::uint64_t hi = std::min(end, (r + 1) * region_bytes_);
        if (touch(r)) hit += hi - lo;
    }
    return hit;
}

void L2Cache::write(std::uint64_t addr, std::uint64_t bytes) {
    const std::uint64_t end = addr + bytes;
    for (std::uint64_t r = addr / region_bytes_; r * region_bytes_ < end; ++r) touch(r);
}

}  // namespace npusim
