#include "hw/l2_cache.hpp"

#include "common/arith.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

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
      slice_block_(std::max<std::uint64_t>(1, g.slice_block_bytes)),
      stamp_limit_(g.stamp_limit ? g.stamp_limit : UINT32_MAX - 1) {
    // One tag per block of whole lines, at most 64 (one mask bit each),
    // never more than the cache holds.
    block_ = slice_block_ % line_ == 0 ? slice_block_ : line_;
    block_ = std::min(block_, 64 * line_);
    while (block_ > line_ && block_ > g.capacity_bytes) block_ -= line_;
    lines_per_block_ = block_ / line_;
    const std::uint64_t blocks = std::max<std::uint64_t>(1, g.capacity_bytes / block_);
    ways_ = std::min(ways_, blocks);  // a cache smaller than one set is fully associative
    sets_ = std::max<std::uint64_t>(1, blocks / ways_);
    set_words_ = 2 * ((ways_ + 1) / 2) + 2 * ways_;
    if (sets_ >= 64) {
        leader_period_ = 64;
        while (leader_period_ > 2 && sets_ / leader_period_ < 16) leader_period_ /= 2;
    }
    if ((line_ & (line_ - 1)) == 0) line_shift_ = __builtin_ctzll(line_);
    if ((block_ & (block_ - 1)) == 0) block_shift_ = __builtin_ctzll(block_);
    clean_min_valid_ = std::max<std::uint64_t>(1, ways_ / 2);
    unit_lines_ = g.slice_interleave_bytes == 0 ? lines_per_block_
                                                 : std::max<std::uint64_t>(1, g.slice_interleave_bytes / line_);
    slices_pow2_ = (slices_ & (slices_ - 1)) == 0;
    slice_bytes_.assign(slices_, 0);
    request_slice_bytes_.assign(slices_, 0);
}

std::uint64_t L2Cache::take_busiest_slice_bytes() {
    if (!request_touched_) return 0;
    request_touched_ = false;
    std::uint64_t busiest = 0;
    for (auto& b : request_slice_bytes_) {
        busiest = std::max(busiest, b);
        b = 0;
    }
    busiest += request_uniform_bytes_;
    request_uniform_bytes_ = 0;
    return busiest;
}

void L2Cache::spread(std::uint64_t block, std::uint64_t first, std::uint64_t last, std::uint64_t served) {
    if (slices_ == 1 || unit_lines_ >= lines_per_block_) {
        slice_bytes_[slice_of(block)] += served;
        return;
    }
    // Unit j of the block is on slice (hash + j) mod slices; the bytes
    // split evenly over the units the lines cover (edge lines clipped).
    const std::uint64_t u0 = first / unit_lines_, n = last / unit_lines_ - u0 + 1;
    const std::uint64_t start = mod_slices(slice_of(block) + u0);
    const std::uint64_t per = served / n;
    std::uint64_t rest = n;
    if (n >= slices_) {
        uniform_bytes_ += n / slices_ * per;  // whole rounds over every slice
        rest = mod_slices(n);
    }
    for (std::uint64_t i = 0, s = start; i < rest; ++i) {
        slice_bytes_[s] += per;
        if (++s == slices_) s = 0;
    }
    slice_bytes_[start] += served - per * n;
}

std::uint64_t L2Cache::slice_of(std::uint64_t block) {
    if (slices_ == 1) return 0;
    if (block != slice_block_of_) {  // rows of one block come one after another
        slice_block_of_ = block;
        slice_of_block_ = mod_slices(mix(block));
    }
    return slice_of_block_;
}

std::uint64_t L2Cache::next_candidate(std::uint64_t from, std::uint64_t to) const {
    while (from < to) {
        const std::uint64_t word = candidate_bits_[from >> 6] >> (from & 63);
        if (word != 0) return std::min(to, from + static_cast<std::uint64_t>(__builtin_ctzll(word)));
        from = (from | 63) + 1;
    }
    return to;
}

std::uint64_t L2Cache::clean_set(std::uint64_t set) {
    const Ways x = ways_of(set);
    std::uint64_t v = ways_, dirty_ways = 0;
    std::uint32_t v_stamp = UINT32_MAX;
    for (std::uint64_t w = 0; w < ways_; ++w) {
        if (x.dirty(w) == 0) continue;
        ++dirty_ways;
        if (x.stamps[w] < v_stamp) v = w, v_stamp = x.stamps[w];
    }
    if (dirty_ways <= 1) clear_bit(candidate_bits_, set);  // nothing dirty left after this one
    if (v == ways_) return 0;
    const auto lines = popcount64(x.dirty(v));
    x.dirty(v) = 0;
    dirty_count_ -= lines;
    counters_.cleaned += lines;
    return lines * line_;
}

std::uint64_t L2Cache::clean(std::uint64_t max_bytes) {
    // A window of up to kCleanScanSets sets from the cursor, round-robin;
    // only candidate sets can have anything to clean.
    std::uint64_t bytes = 0;
    std::uint64_t left = std::min(sets_, kCleanScanSets);
    while (left > 0 && dirty_count_ > 0 && filling_sets_ > 0 && bytes < max_bytes) {
        const std::uint64_t to = std::min(sets_, clean_cursor_ + left);
        const std::uint64_t set = next_candidate(clean_cursor_, to);
        if (set == to) {  // no candidate before the window's end or the wrap
            left -= to - clean_cursor_;
            clean_cursor_ = to == sets_ ? 0 : to;
            continue;
        }
        left -= set + 1 - clean_cursor_;
        clean_cursor_ = set + 1 == sets_ ? 0 : set + 1;
        bytes += clean_set(set);
    }
    return bytes;
}

std::uint64_t L2Cache::hit(std::uint64_t set, std::uint64_t w, std::uint64_t covered, bool write) {
    const Ways x = ways_of(set);
    if (write && bit(filling_bits_, set)) set_bit(candidate_bits_, set);
    x.stamps[w] = clock_;
    const std::uint64_t present = x.valid(w) & covered;
    const std::uint64_t added = covered & ~x.valid(w);
    x.valid(w) |= covered;
    resident_ += popcount64(added);
    if (write) {
        dirty_count_ += popcount64(covered & ~x.dirty(w));
        x.dirty(w) |= covered;
    }
    return present;
}

std::uint32_t L2Cache::far_tag(std::uint64_t page) {
    const auto [it, fresh] = far_pages_.try_emplace(page, 0);
    if (fresh) {
        if (far_pages_.size() >= kNearPages)
            throw std::logic_error("L2Cache: more than 2^31 distinct pages beyond the first 2^31");
        it->second = static_cast<std::uint32_t>(kNearPages + far_pages_.size());
    }
    return it->second;
}

std::uint64_t L2Cache::find_way(const std::uint32_t* tags, std::uint32_t tag) const {
    if (ways_ > 64) {
        for (std::uint64_t w = 0; w < ways_; ++w)
            if (tags[w] == tag) return w;
        return ways_;
    }
    std::uint64_t match = 0;
    for (std::uint64_t w = 0; w < ways_; ++w) match |= std::uint64_t{tags[w] == tag} << w;
    return match ? static_cast<std::uint64_t>(__builtin_ctzll(match)) : ways_;
}

std::uint64_t L2Cache::touch(std::uint64_t block, std::uint64_t set, std::uint64_t page, std::uint64_t covered,
                             bool write, L2Access& out) {
    const Ways x = ways_of(set);
    std::uint32_t* tags = x.tags;
    std::uint32_t* stamps = x.stamps;
    const std::uint32_t tag = page < kNearPages ? static_cast<std::uint32_t>(page + 1) : far_tag(page);
    if (clock_ >= stamp_limit_) renumber_stamps();
    ++clock_;
    if (block == last_block_ && tags[last_way_] == tag) return hit(set, last_way_, covered, write);
    last_block_ = block;
    // The way found (or the victim) is known only after the search; its
    // valid and dirty lines are fetched meanwhile, not after it.
    for (std::uint64_t w = 0; w < ways_; w += 4) __builtin_prefetch(&x.valid(w));
    const std::uint64_t found = find_way(tags, tag);
    if (found < ways_) {
        last_way_ = found;
        return hit(set, found, covered, write);
    }
    // The victim: an invalid way first, else the least recent.
    std::uint64_t v = 0, v_stamp = UINT64_MAX, invalid = 0;  // v_stamp: a stamp + 1, 0 for an invalid way
    for (std::uint64_t w = 0; w < ways_; ++w) {
        invalid += tags[w] == 0;
        const std::uint64_t age = tags[w] == 0 ? 0 : std::uint64_t{stamps[w]} + 1;  // invalid ways rank first
        if (age < v_stamp) {
            v = w;
            v_stamp = age;
        }
    }
    // Miss: set dueling updates the policy selector.
    const std::uint64_t lead = leader_period_ ? set % leader_period_ : 1;
    const bool lru_leader = leader_period_ && lead == 0;
    const bool bip_leader = leader_period_ && lead == leader_period_ / 2;
    if (lru_leader) psel_ = std::min(psel_ + 1, kPselMax);
    if (bip_leader) psel_ = std::max(psel_ - 1, -kPselMax);
    const bool bimodal = bip_leader || (!lru_leader && followers_bimodal());

    const std::uint32_t old_stamp = tags[v] == 0 ? 0 : stamps[v];
    if (tags[v] != 0) {
        const auto lines = popcount64(x.valid(v));
        const auto dirty = popcount64(x.dirty(v));
        counters_.evictions += lines;
        counters_.dirty_evictions += dirty;
        out.dirty_evicted_bytes += dirty * line_;
        resident_ -= lines;
        dirty_count_ -= dirty;
    } else if (invalid == ways_ - clean_min_valid_ + 1) {
        ++filling_sets_;  // it reaches clean_min_valid_ valid ways now
        set_bit(filling_bits_, set);
        set_bit(candidate_bits_, set);  // it may hold dirty lines already
    }
    if (write && bit(filling_bits_, set)) set_bit(candidate_bits_, set);
    tags[v] = tag;
    last_way_ = v;
    x.valid(v) = covered;
    x.dirty(v) = write ? covered : 0;
    if (write) dirty_count_ += popcount64(covered);
    resident_ += popcount64(covered);
    // Bimodal insertion: at the LRU end (the evicted block's age), so a
    // block that is not reused soon is the next to go; every 32nd at the
    // MRU end.
    stamps[v] = bimodal && (bip_count_++ % 32 != 0) ? old_stamp : clock_;
    return 0;
}

void L2Cache::walk(std::uint64_t addr, std::uint64_t bytes, bool write, L2Access& out) {
    if (bytes == 0) return;
    if (!ways_mem_) {
        const std::size_t bytes = sets_ * set_words_ * sizeof(std::uint64_t);
        ways_mem_ =
            std::unique_ptr<std::uint64_t[], Free>(static_cast<std::uint64_t*>(huge_page_alloc(bytes)), Free{bytes});
        filling_bits_.assign((sets_ + 63) / 64, 0);
        candidate_bits_.assign((sets_ + 63) / 64, 0);
    }
    const std::uint64_t end = addr + bytes;
    std::uint64_t block = block_shift_ >= 0 ? addr >> block_shift_ : addr / block_;
    // Set index: block mod sets, rotated by a hash of the block's "page"
    // (every `sets` consecutive blocks). A contiguous range still spreads
    // evenly over the sets; ranges a multiple of the cache size apart do
    // not collide set for set.
    // A transfer's rows mostly fall in the page of the one before: its
    // rotation is kept rather than hashed and divided again.
    if (block < page_first_block_ || block - page_first_block_ >= sets_) {
        page_ = block / sets_;
        page_first_block_ = page_ * sets_;
        page_rot_ = mix(page_) % sets_;
    }
    std::uint64_t page = page_, in_page = block - page_first_block_;
    std::uint64_t rot = page_rot_;
    for (std::uint64_t lo = addr; lo < end; ++block) {
        const std::uint64_t bbase = block * block_;
        const std::uint64_t hi = std::min(end, bbase + block_);
        std::uint64_t set = in_page + rot;
        if (set >= sets_) set -= sets_;
        const std::uint64_t first = line_shift_ >= 0 ? (lo - bbase) >> line_shift_ : (lo - bbase) / line_;
        const std::uint64_t last = line_shift_ >= 0 ? (hi - 1 - bbase) >> line_shift_ : (hi - 1 - bbase) / line_;
        const std::uint64_t covered = (last == 63 ? ~0ULL : (1ULL << (last + 1)) - 1) & ~((1ULL << first) - 1);
        if (hi < end) {
            // The next block's set is the next one (within a page): its tags
            // and use stamps are on their way while this one is looked up.
            const std::uint64_t next = set + 1 == sets_ ? 0 : set + 1;
            const Ways n = ways_of(next);
            __builtin_prefetch(n.tags);
            __builtin_prefetch(n.stamps);
        }
        const std::uint64_t hit = touch(block, set, page, covered, write, out);
        const auto n_hit = popcount64(hit);
        const auto n_all = last - first + 1;
        if (write) {
            counters_.write_hits += n_hit;
            counters_.write_misses += n_all - n_hit;
        } else {
            counters_.hits += n_hit;
            counters_.misses += n_all - n_hit;
            out.fill_bytes += (n_all - n_hit) * line_;  // a missed line is filled whole
        }
        // Hit bytes: whole hit lines, minus the parts of the edge lines
        // outside [lo, hi).
        std::uint64_t hit_bytes = n_hit * line_;
        if (hit >> first & 1) hit_bytes -= (lo - bbase) - first * line_;
        if (hit >> last & 1) hit_bytes -= (last + 1) * line_ - (hi - bbase);
        out.hit_bytes += hit_bytes;
        out.miss_bytes += (hi - lo) - hit_bytes;
        const std::uint64_t served = write ? hi - lo : hit_bytes;  // bytes the slice serves
        if (served > 0) {
            spread(block, first, last, served);
            slices_touched_ = true;
        }
        lo = hi;
        if (++in_page == sets_) {
            in_page = 0;
            rot = mix(++page) % sets_;
        }
    }
}

void L2Cache::tally_slices(L2Access& out) {
    if (!slices_touched_) return;
    slices_touched_ = false;
    for (std::uint64_t i = 0; i < slices_; ++i) {
        out.busiest_slice_bytes = std::max(out.busiest_slice_bytes, slice_bytes_[i]);
        request_slice_bytes_[i] += slice_bytes_[i];
        slice_bytes_[i] = 0;
    }
    out.busiest_slice_bytes += uniform_bytes_;
    request_uniform_bytes_ += uniform_bytes_;
    uniform_bytes_ = 0;
    request_touched_ = true;
}

void L2Cache::renumber_stamps() {
    // Each set's stamps become their rank in it (equal stamps equal ranks,
    // 0 stays 0): every comparison a set makes later comes out as before.
    std::vector<std::uint32_t> order(ways_);
    std::uint32_t top = 0;
    for (std::uint64_t set = 0; set < sets_; ++set) {
        std::uint32_t* st = ways_of(set).stamps;
        order.assign(st, st + ways_);
        std::sort(order.begin(), order.end());
        order.erase(std::unique(order.begin(), order.end()), order.end());
        for (std::uint64_t w = 0; w < ways_; ++w) {
            const auto rank = static_cast<std::uint32_t>(std::lower_bound(order.begin(), order.end(), st[w]) - order.begin());
            st[w] = order.front() == 0 ? rank : rank + 1;
            top = std::max(top, st[w]);
        }
    }
    clock_ = top;
}

L2Access L2Cache::read(std::uint64_t addr, std::uint64_t bytes) {
    return access_ranges(false, [&](const auto& f) { f(addr, bytes); });
}
L2Access L2Cache::write(std::uint64_t addr, std::uint64_t bytes) {
    return access_ranges(true, [&](const auto& f) { f(addr, bytes); });
}

}  // namespace npusim
