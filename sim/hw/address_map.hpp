// Where a task's input (or output) bytes live in global memory: its global
// `reads` (or `writes`) regions concatenated in order, or one range from
// `addr` when a hand-written stream gives only that. A core walks the
// stream by offset; the map turns an offset range into address ranges for
// the L2 hit model.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "hw/memory_system.hpp"
#include "tasks/task.hpp"

namespace npusim {

class AddressMap {
public:
    // Global regions of `regions`; if none, [base, ...) when has_base.
    void reset(const std::vector<Region>& regions, bool has_base, std::uint64_t base);
    // Gives req the stream bytes [offset, offset+len), walked when the
    // transfer starts (for_each).
    void map(std::uint64_t offset, std::uint64_t len, TransferRequest& req) const;
    // Calls f(addr, bytes, in_hbm) for each address range of stream bytes
    // [offset, offset+len), in order; in_hbm: its region is listed in HBM
    // (false for an L2-resident region and for a range from `base`).
    template <class F>
    void for_each(std::uint64_t offset, std::uint64_t len, F&& f) const;
    bool known() const { return has_base_ || !starts_.empty(); }

private:
    std::vector<Region> regions_;        // global ones only
    std::vector<std::uint64_t> starts_;  // stream offset of each region
    std::uint64_t total_ = 0;
    bool has_base_ = false;
    std::uint64_t base_ = 0;
    // The regions the last two walks ended in: a core walks its task's
    // bytes in order, so the next walk mostly starts in one of them (no
    // search); two, because a Cube step walks A's bytes, then B's.
    mutable std::size_t hint_[2] = {0, 0};
    bool holds(std::size_t i, std::uint64_t offset) const {
        return i < starts_.size() && starts_[i] <= offset && (i + 1 == starts_.size() || offset < starts_[i + 1]);
    }
    std::size_t region_of(std::uint64_t offset) const {
        if (holds(hint_[0], offset)) return hint_[0];
        if (holds(hint_[1], offset)) return hint_[1];
        return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) - 1;
    }
    // Where a walk that started in region `from` ended: the hint kept is the
    // other walk's.
    void remember(std::size_t from, std::size_t end) const {
        if (from == hint_[1]) std::swap(hint_[0], hint_[1]);  // hint_[0]: this walk's, replaced
        hint_[0] = hint_[1];
        hint_[1] = end;
    }
};

template <class F>
void AddressMap::for_each(std::uint64_t offset, std::uint64_t len, F&& f) const {
    if (len == 0) return;
    if (has_base_) {
        f(base_ + offset, len, false);
        return;
    }
    if (regions_.empty()) return;
    if (offset >= total_) offset %= total_;  // a task that reads more than it lists wraps around
    std::size_t i = region_of(offset);
    const std::size_t from = i;
    while (len > 0) {
        const Region& r = regions_[i];
        const std::uint64_t within = offset - starts_[i];
        // A strided region: the row `within` falls in, from there to its end.
        const std::uint64_t row = within < r.bytes ? 0 : within / r.bytes, col = within - row * r.bytes;
        const std::uint64_t n = std::min(len, r.bytes - col);
        f(r.addr + row * r.stride + col, n, r.space == Space::hbm);
        len -= n;
        offset += n;
        if (offset - starts_[i] == r.total() && ++i == regions_.size()) {
            i = 0;
            offset = 0;
        }
    }
    remember(from, i);
}

template <class F>
void TransferRequest::for_each_range(F&& f) const {
    for (int i = 0; i < n_spans; ++i) spans[static_cast<std::size_t>(i)].map->for_each(spans[static_cast<std::size_t>(i)].offset, spans[static_cast<std::size_t>(i)].len, f);
    for (int i = 0; i < n_ranges; ++i)
        f(ranges[static_cast<std::size_t>(i)].addr, ranges[static_cast<std::size_t>(i)].bytes, false);
}

}  // namespace npusim
