#include "hw/l2_cache.hpp"

#include <algorithm>
#include <new>

namespace npusim {

namespace {
std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}
}  // namespace

L2Cache::L2Cache(const L2Geometry& g)
    : line_(std::max<std::uint64_t>(1, g.line_bytes)),
      ways_(std::max<std::uint64_t>(1, g.ways)),
      sets_(1),
      slices_(std::max<std::uint64_t>(1, g.slices)),
      slice_block_(std::max<std::uint64_t>(1, g.slice_block_bytes)) {
    const std::uint64_t lines = std::max<std::uint64_t>(1, g.capacity_bytes / line_);
    ways_ = std::min(ways_, lines);  // a cache smaller than one set is fully associative
    sets_ = std::max<std::uint64_t>(1, lines / ways_);
    if ((line_ & (line_ - 1)) == 0) line_shift_ = __builtin_ctzll(line_);
    slice_bytes_.assign(slices_, 0);
}

std::uint64_t L2Cache::slice_of(std::uint64_t block) const {
    return slices_ == 1 ? 0 : mix(block) % slices_;
}

std::uint64_t L2Cache::dirty_lines() const {
    if (!lines_) return 0;
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < sets_ * ways_; ++i) n += (lines_[i].tag & kDirty) ? 1 : 0;
    return n;
}

bool L2Cache::touch(std::uint64_t line, std::uint64_t set, bool write, L2Access& out) {
    Line* ways = &lines_[set * ways_];
    const std::uint64_t tag = line + 1;
    ++clock_;
    Line* victim = ways;
    for (std::uint64_t w = 0; w < ways_; ++w) {
        Line& l = ways[w];
        if ((l.tag & ~kDirty) == tag) {
            l.stamp = clock_;
            if (write) l.tag |= kDirty;
            return true;
        }
        // Invalid ways first (stamp 0 and tag 0), then the least recent.
        if (victim->tag != 0 && (l.tag == 0 || l.stamp < victim->stamp)) victim = &l;
    }
    // Miss: set dueling updates the policy selector.
    const std::uint64_t lead = set % kLeaderPeriod;
    const bool lru_leader = sets_ >= kLeaderPeriod && lead == 0;
    const bool bip_leader = sets_ >= kLeaderPeriod && lead == kLeaderPeriod / 2;
    if (lru_leader) psel_ = std::min(psel_ + 1, kPselMax - 1);
    if (bip_leader) psel_ = std::max(psel_ - 1, 0);
    const bool bimodal = bip_leader || (!lru_leader && followers_bimodal());

    if (victim->tag == 0) {
        ++resident_;
    } else {
        ++counters_.evictions;
        if (victim->tag & kDirty) {
            ++counters_.dirty_evictions;
            out.dirty_evicted_bytes += line_;
        }
    }
    const std::uint64_t old_stamp = victim->tag == 0 ? 0 : victim->stamp;
    victim->tag = tag | (write ? kDirty : 0);
    // Bimodal insertion: at the LRU end (the evicted line's age), so a line
    // that is not reused soon is the next to go; every 32nd at the MRU end.
    victim->stamp = bimodal && (bip_count_++ % 32 != 0) ? old_stamp : clock_;
    return false;
}

L2Access L2Cache::access(std::uint64_t addr, std::uint64_t bytes, bool write) {
    L2Access out;
    if (bytes == 0) return out;
    if (!lines_) {
        void* p = std::calloc(sets_ * ways_, sizeof(Line));
        if (!p) throw std::bad_alloc();
        lines_.reset(static_cast<Line*>(p));
    }
    const std::uint64_t end = addr + bytes;
    std::uint64_t line = line_shift_ >= 0 ? addr >> line_shift_ : addr / line_;
    // Set index: line mod sets, rotated by a hash of the line's "page" (every
    // `sets` consecutive lines). A contiguous range still spreads evenly
    // over the sets; ranges a multiple of the cache size apart do not
    // collide set for set.
    std::uint64_t page = line / sets_, in_page = line % sets_;
    std::uint64_t rot = mix(page) % sets_;
    bool touched_slice = false;
    for (std::uint64_t lo = addr; lo < end; ++line) {
        const std::uint64_t line_end = (line + 1) * line_;
        const std::uint64_t hi = std::min(end, line_end);
        std::uint64_t set = in_page + rot;
        if (set >= sets_) set -= sets_;
        const bool hit = touch(line, set, write, out);
        const std::uint64_t n = hi - lo;
        if (write) {
            if (hit) ++counters_.write_hits;
            else ++counters_.write_misses;
        } else if (hit) {
            ++counters_.hits;
        } else {
            ++counters_.misses;
        }
        if (hit) out.hit_bytes += n;
        else out.miss_bytes += n;
        if (hit || write) {  // bytes the slices serve
            slice_bytes_[slice_of(lo / slice_block_)] += n;
            touched_slice = true;
        }
        lo = hi;
        if (++in_page == sets_) {
            in_page = 0;
            rot = mix(++page) % sets_;
        }
    }
    if (touched_slice) {
        for (auto& b : slice_bytes_) {
            out.busiest_slice_bytes = std::max(out.busiest_slice_bytes, b);
            b = 0;
        }
    }
    return out;
}

L2Access L2Cache::read(std::uint64_t addr, std::uint64_t bytes) { return access(addr, bytes, false); }
L2Access L2Cache::write(std::uint64_t addr, std::uint64_t bytes) { return access(addr, bytes, true); }

}  // namespace npusim
