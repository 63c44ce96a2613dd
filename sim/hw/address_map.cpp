#include "hw/address_map.hpp"

#include <algorithm>

namespace npusim {

void AddressMap::reset(const std::vector<Region>& regions, bool has_base, std::uint64_t base) {
    regions_.clear();
    starts_.clear();
    total_ = 0;
    for (const Region& r : regions) {
        if (!is_global(r.space) || r.bytes == 0) continue;
        regions_.push_back(r);
        starts_.push_back(total_);
        total_ += r.bytes;
    }
    has_base_ = regions_.empty() && has_base;
    base_ = base;
}

void AddressMap::map(std::uint64_t offset, std::uint64_t len, TransferRequest& req) const {
    if (len == 0) return;
    if (has_base_) {
        req.add_range(base_ + offset, len);
        return;
    }
    if (regions_.empty()) return;
    offset %= total_;  // a task that reads more than it lists wraps around
    std::size_t i = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) - 1;
    while (len > 0) {
        const Region& r = regions_[i];
        const std::uint64_t within = offset - starts_[i];
        const std::uint64_t n = std::min(len, r.bytes - within);
        req.add_range(r.addr + within, n);
        len -= n;
        offset += n;
        if (++i == regions_.size()) {
            i = 0;
            offset = 0;
        }
    }
}

}  // namespace npusim
