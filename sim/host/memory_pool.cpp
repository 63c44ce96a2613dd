#include "host/memory_pool.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "stats/stats.hpp"

namespace npusim::host {

std::uint64_t MemoryPool::allocate(std::uint64_t bytes) {
    const std::uint64_t size = std::max<std::uint64_t>(1, (bytes + kAlign - 1) / kAlign) * kAlign;
    std::uint64_t addr = top_;
    // First fit in address order; grow the pool when nothing fits.
    auto it = std::find_if(free_.begin(), free_.end(), [&](const auto& b) { return b.second >= size; });
    if (it != free_.end()) {
        addr = it->first;
        const std::uint64_t rest = it->second - size;
        free_.erase(it);
        if (rest) free_[addr + size] = rest;
    } else if (!free_.empty() && std::prev(free_.end())->first + std::prev(free_.end())->second == top_) {
        // The last free block touches the top: extend it instead of leaving a hole.
        auto last = std::prev(free_.end());
        addr = last->first;
        top_ = addr + size;
        free_.erase(last);
    } else {
        top_ += size;
    }
    used_[addr] = size;
    in_use_ += size;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
    ++allocations_;
    return addr;
}

void MemoryPool::free(std::uint64_t addr) {
    auto u = used_.find(addr);
    if (u == used_.end()) throw std::logic_error("MemoryPool::free of an address not allocated");
    std::uint64_t size = u->second;
    used_.erase(u);
    in_use_ -= size;
    ++frees_;
    // Coalesce with the neighbours.
    auto next = free_.lower_bound(addr);
    if (next != free_.end() && addr + size == next->first) {
        size += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == addr) {
            prev->second += size;
            return;
        }
    }
    free_[addr] = size;
}

void MemoryPool::report(Stats& s, const std::string& prefix) const {
    s.set(prefix + "pool_peak_bytes", peak_in_use_);
    s.set(prefix + "pool_reserved_bytes", top_);
    s.set(prefix + "allocations", allocations_);
    s.set(prefix + "frees", frees_);
    s.set(prefix + "live_at_end_bytes", in_use_);
}

}  // namespace npusim::host
