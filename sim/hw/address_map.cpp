#include "hw/address_map.hpp"

#include <algorithm>

namespace npusim {

void AddressMap::reset(const std::vector<Region>& regions, bool has_base, std::uint64_t base) {
    regions_.clear();
    starts_.clear();
    total_ = 0;
    hint_[0] = hint_[1] = 0;
    for (const Region& r : regions) {
        if (!is_global(r.space) || r.bytes == 0) continue;
        regions_.push_back(r);
        starts_.push_back(total_);
        total_ += r.total();
    }
    has_base_ = regions_.empty() && has_base;
    base_ = base;
}

void AddressMap::map(std::uint64_t offset, std::uint64_t len, TransferRequest& req) const {
    if (len == 0 || !known()) return;
    req.add_span(this, offset, len);
}

}  // namespace npusim
