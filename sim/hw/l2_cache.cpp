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
    if ((slice_block_ & (slice_block_ - 1)) == 0) slice_shift_ = __builtin_ctzll(slice_block_);
    slice_bytes_.assign(slices_, 0);
}

std::uint64_t L2Cache::slice_of(std::uint64_t block) const {
    return slices_ == 1 ? 0 : mix(block) % slices_;
}

std::uint64_t L2Cache::dirty_lines() const {
    if (!lines_) return 0;
    std::uint64_t n = 0;
    for (std::uint64_t s = 0; s < sets_; ++s)
        for (std::uint64_t w = 0; w < ways_; ++w) n += (lines_[s * 2 * ways_ + w] & kDirty) ? 1 : 0;
    return n;
}

bool L2Cache::touch(std::uint64_t line, std::uint64_t set, bool write, L2Access& out) {
    std::uint64_t* tags = &lines_[set * 2 * ways_];
    std::uint64_t* stamps = tags + ways_;
    const std::uint64_t tag = line + 1;
    ++clock_;
    for (std::uint64_t w = 0; w < ways_; ++w) {
        if ((tags[w] & ~kDirty) == tag) {
            stamps[w] = clock_;
            if (write) tags[w] |= kDirty;
            return true;
        }
    }
    // Victim: an invalid way first, else the least recent.
    std::uint64_t v = 0;
    for (std::uint64_t w = 0; w < ways_; ++w) {
        if (tags[w] == 0) {
            v = w;
            break;
        }
        if (stamps[w] < stamps[v]) v = w;
    }
    // Miss: set dueling updates the policy selector.
    const std::uint64_t lead = set % kLeaderPeriod;
    const bool lru_leader = sets_ >= kLeaderPeriod && lead == 0;
    const bool bip_leader = sets_ >= kLeaderPeriod && lead == kLeaderPeriod / 2;
    if (lru_leader) psel_ = std::min(psel_ + 1, kPselMax - 1);
    if (bip_leader) psel_ = std::max(psel_ - 1, 0);
    const bool bimodal = bip_leader || (!lru_leader && followers_bimodal());

    if (tags[v] == 0) {
        ++resident_;
    } else {
        ++counters_.evictions;
        if (tags[v] & kDirty) {
            ++counters_.dirty_evictions;
            out.dirty_evicted_bytes += line_;
        }
    }
    const std::uint64_t old_stamp = tags[v] == 0 ? 0 : stamps[v];
    tags[v] = tag | (write ? kDirty : 0);
    // Bimodal insertion: at the LRU end (the evicted line's age), so a line
    // that is not reused soon is the next to go; every 32nd at the MRU end.
    stamps[v] = bimodal && (bip_count_++ % 32 != 0) ? old_stamp : clock_;
    return false;
}

L2Access L2Cache::access(std::uint64_t addr, std::uint64_t bytes, bool write) {
    L2Access out;
    if (bytes == 0) return out;
    if (!lines_) {
        void* p = std::calloc(sets_ * 2 * ways_, sizeof(std::uint64_t));
        if (!p) throw std::bad_alloc();
        lines_.reset(static_cast<std::uint64_t*>(p));
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
    std::uint64_t last_block = UINT64_MAX, last_slice = 0;
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
            const std::uint64_t block = slice_shift_ >= 0 ? lo >> slice_shift_ : lo / slice_block_;
            if (block != last_block) {
                last_block = block;
                last_slice = slice_of(block);
            }
            slice_bytes_[last_slice] += n;
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
