#include "hw/l2_cache.hpp"

#include <algorithm>

namespace npusim {

L2Cache::L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes)
    : region_bytes_(std::max<std::uint64_t>(64, region_bytes / 64 * 64)),
      sub_bytes_(region_bytes_ / 64),
      max_regions_(std::max<std::uint64_t>(1, capacity_bytes / region_bytes_)) {
    auto log2_exact = [](std::uint64_t v) { return (v & (v - 1)) == 0 ? __builtin_ctzll(v) : -1; };
    region_shift_ = log2_exact(region_bytes_);
    sub_shift_ = log2_exact(sub_bytes_);
    // Grown with use (an L2 of a TB in 1 KB regions would be a 8 GB table
    // up front), kept at most half full for short probe sequences.
    table_bits_ = 10;
    table_.assign(std::size_t{1} << table_bits_, kNone);
}

void L2Cache::grow_table() {
    ++table_bits_;
    table_.assign(std::size_t{1} << table_bits_, kNone);
    for (std::uint32_t r = 0; r < used_; ++r) table_insert(regions_[r].id, r);
}

std::size_t L2Cache::slot_of(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> (64 - table_bits_)) & (table_.size() - 1);
}

std::uint32_t L2Cache::find(std::uint64_t id) const {
    const std::size_t mask = table_.size() - 1;
    for (std::size_t s = slot_of(id);; s = (s + 1) & mask) {
        const std::uint32_t r = table_[s];
        if (r == kNone) return kNone;
        if (regions_[r].id == id) return r;
    }
}

void L2Cache::table_insert(std::uint64_t id, std::uint32_t region) {
    const std::size_t mask = table_.size() - 1;
    std::size_t s = slot_of(id);
    while (table_[s] != kNone) s = (s + 1) & mask;
    table_[s] = region;
}

void L2Cache::table_erase(std::uint64_t id) {
    const std::size_t mask = table_.size() - 1;
    std::size_t s = slot_of(id);
    while (regions_[table_[s]].id != id) s = (s + 1) & mask;
    // Backward-shift: move later entries of the probe run into the hole
    // unless their home slot lies cyclically in (hole, their slot].
    for (std::size_t next = (s + 1) & mask; table_[next] != kNone; next = (next + 1) & mask) {
        const std::size_t home = slot_of(regions_[table_[next]].id);
        const bool stays = s <= next ? (s < home && home <= next) : (s < home || home <= next);
        if (stays) continue;
        table_[s] = table_[next];
        s = next;
    }
    table_[s] = kNone;
}

void L2Cache::unlink(std::uint32_t r) {
    Region& g = regions_[r];
    if (g.prev != kNone) regions_[g.prev].next = g.next;
    else head_ = g.next;
    if (g.next != kNone) regions_[g.next].prev = g.prev;
    else tail_ = g.prev;
}

void L2Cache::push_front(std::uint32_t r) {
    Region& g = regions_[r];
    g.prev = kNone;
    g.next = head_;
    if (head_ != kNone) regions_[head_].prev = r;
    head_ = r;
    if (tail_ == kNone) tail_ = r;
}

std::uint64_t L2Cache::access(std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t id = region_of(lo);
    const std::uint64_t base = id * region_bytes_;
    const std::uint64_t first = sub_of(lo - base), last = sub_of(hi - 1 - base);
    const std::uint64_t covered = (last == 63 ? ~0ULL : (1ULL << (last + 1)) - 1) & ~((1ULL << first) - 1);

    std::uint64_t present = 0;
    std::uint32_t r = find(id);
    if (r != kNone) {
        present = regions_[r].present;
        regions_[r].present |= covered;
        if (r != head_) {
            unlink(r);
            push_front(r);
        }
    } else {
        if (used_ == max_regions_) {  // evict the least recent region
            r = tail_;
            unlink(r);
            table_erase(regions_[r].id);
        } else {
            r = static_cast<std::uint32_t>(used_++);
            regions_.emplace_back();
        }
        regions_[r].id = id;
        regions_[r].present = covered;
        if (2 * used_ > table_.size()) grow_table();  // re-inserts r too
        else table_insert(id, r);
        push_front(r);
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
        const std::uint64_t hi = std::min(end, (region_of(lo) + 1) * region_bytes_);
        hit += access(lo, hi);
        lo = hi;
    }
    return hit;
}

void L2Cache::write(std::uint64_t addr, std::uint64_t bytes) { read(addr, bytes); }

}  // namespace npusim
