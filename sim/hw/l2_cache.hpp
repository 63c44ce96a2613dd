// The die's shared L2 as a set-associative, write-back, write-allocate cache
// of fixed-size lines, spread over slices (banks) by an address hash.
//
// Replacement is DIP (dynamic insertion, Qureshi et al., ISCA 2007): LRU by
// default, with a few "leader" sets running LRU and a few running bimodal
// insertion (a new line enters at the LRU end, every 32nd at the MRU end); a
// counter of which leaders miss more picks the policy of all other sets. A
// working set re-read cyclically just above capacity then keeps most of its
// lines instead of losing all of them (LRU's cliff), while producer ->
// consumer reuse keeps LRU's recency.
//
// Sectored: one tag per block of slice_block_bytes (at most 64 lines), each
// line valid and dirty on its own (fills and write-backs stay per line);
// a block is replaced whole. Its lines are interleaved over the slices in
// units of slice_interleave_bytes (whole lines), starting from a slice
// hashed from the block, so a long range spreads over every slice. One
// lookup per block a transfer touches, no events: the caller times the bytes.
// Tags live in one array allocated on first use, sized capacity / block,
// from huge pages shared with other dies' arrays (common/huge_page_arena).
#pragma once
#include <cstdint>
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/huge_page_arena.hpp"

namespace npusim {

struct L2Geometry {
    std::uint64_t capacity_bytes = 0;
    std::uint64_t line_bytes = 128;
    std::uint64_t ways = 16;
    std::uint64_t slices = 1;
    std::uint64_t slice_block_bytes = 4096;  // one tag
    std::uint64_t slice_interleave_bytes = 0;  // consecutive bytes on one slice (0: the whole block)
    // Lookups between renumberings of the 32-bit use stamps (0: as many as
    // they count, 2^32 - 2); smaller only to test that renumbering changes nothing.
    std::uint32_t stamp_limit = 0;
};

// What one access did, in bytes of the requested range (edge lines clipped).
struct L2Access {
    std::uint64_t hit_bytes = 0;
    std::uint64_t miss_bytes = 0;
    std::uint64_t dirty_evicted_bytes = 0;  // whole lines written back to HBM
    std::uint64_t fill_bytes = 0;           // whole lines a read fetched from HBM
    // Bytes of the range on its busiest slice: the range moves no faster
    // than that slice's share of the bandwidth allows.
    std::uint64_t busiest_slice_bytes = 0;
};

struct L2Counters {
    std::uint64_t hits = 0, misses = 0;  // line lookups of reads
    std::uint64_t write_hits = 0, write_misses = 0;
    std::uint64_t evictions = 0, dirty_evictions = 0;
    std::uint64_t cleaned = 0;  // dirty lines written back early by clean()
};

class L2Cache {
public:
    explicit L2Cache(const L2Geometry& g);

    // Reads [addr, addr+bytes): hits are served, misses fill lines from HBM.
    L2Access read(std::uint64_t addr, std::uint64_t bytes);
    // Writes allocate without fetching (whole-line writes) and mark lines
    // dirty; HBM sees them only when they are evicted.
    L2Access write(std::uint64_t addr, std::uint64_t bytes);
    // Reads (or writes) every range `ranges(f)` passes to f(addr, bytes),
    // in order, as one access: the same as one read (write) per range,
    // with the busiest slice taken over all of them (a transfer's rows).
    template <class Ranges>
    L2Access access_ranges(bool write, const Ranges& ranges) {
        L2Access out;
        ranges([&](std::uint64_t addr, std::uint64_t bytes) { walk(addr, bytes, write, out); });
        tally_slices(out);
        return out;
    }

    // Eager write-back: marks clean the oldest dirty block of each set at
    // least half full (evictions in prospect; a nearly empty set has
    // nothing to gain and a full one no time left), scanning at most
    // kCleanScanSets sets round-robin from where the last call stopped,
    // until `max_bytes` are collected; returns the bytes to write to HBM.
    // The lines stay valid: their eviction is then free.
    std::uint64_t clean(std::uint64_t max_bytes);
    bool any_filling_set() const { return filling_sets_ > 0; }

    // Bytes on the busiest slice over every access since the last call (a
    // transfer of many ranges moves no faster than its busiest slice);
    // restarts the count.
    std::uint64_t take_busiest_slice_bytes();

    // Host bytes of tag state per way (its tag, use stamp, valid and dirty
    // lines), for a run's memory estimate.
    static constexpr std::uint64_t kHostBytesPerWay = 2 * sizeof(std::uint32_t) + 2 * sizeof(std::uint64_t);
    const L2Counters& counters() const { return counters_; }
    std::uint64_t resident_lines() const { return resident_; }
    std::uint64_t dirty_lines() const { return dirty_count_; }
    std::uint64_t line_bytes() const { return line_; }
    std::uint64_t sets() const { return sets_; }
    std::uint64_t ways() const { return ways_; }
    // Whether the follower sets currently insert bimodally (for tests).
    bool followers_bimodal() const { return psel_ > kPselMargin; }

private:
    // Selector: LRU-leader misses minus bimodal-leader misses, saturating at
    // +-kPselMax. A stream both policies miss alike keeps it near 0; the
    // followers go bimodal only when LRU misses clearly more.
    static constexpr int kPselMax = 512;
    static constexpr int kPselMargin = 64;
    // One leader set of each policy per leader_period_ sets: at least 16 of
    // each (so the selector learns within a pass), at most one per 64 sets;
    // 0 = no leaders (fewer than 64 sets: plain LRU).
    std::uint64_t leader_period_ = 0;
    struct Free {
        Free() noexcept {}
        explicit Free(std::size_t b) noexcept : bytes(b) {}
        std::size_t bytes = 0;
        void operator()(std::uint64_t* p) const { huge_page_free(p, bytes); }
    };

    // Looks up the lines of [addr, addr+bytes) block by block, adding to
    // `out` and to the slices' bytes of this access.
    void walk(std::uint64_t addr, std::uint64_t bytes, bool write, L2Access& out);
    // Sets out's busiest slice from the slices' bytes of this access and
    // adds them to the request's (take_busiest_slice_bytes).
    void tally_slices(L2Access& out);
    // Looks up the lines `covered` (bit i = line i) of one block in set
    // `set`, of page `page`; returns those that were present (hits).
    std::uint64_t touch(std::uint64_t block, std::uint64_t set, std::uint64_t page, std::uint64_t covered, bool write,
                        L2Access& out);
    // The hit of way `w` of `set` (touch).
    std::uint64_t hit(std::uint64_t set, std::uint64_t w, std::uint64_t covered, bool write);
    // Restarts the use clock below every stamp, keeping each set's order
    // (every 2^32 - 1 lookups).
    void renumber_stamps();
    std::uint64_t slice_of(std::uint64_t block);
    // x mod slices_, a mask when slices_ is a power of two (a division costs
    // more than the rest of a row's spread).
    std::uint64_t mod_slices(std::uint64_t x) const { return slices_pow2_ ? x & (slices_ - 1) : x % slices_; }
    bool slices_pow2_ = false;
    std::uint64_t slice_block_of_ = ~0ULL, slice_of_block_ = 0;  // slice_of's last answer
    // The page (sets_ consecutive blocks) the last walk started in and its
    // set rotation (walk).
    std::uint64_t page_ = 0, page_first_block_ = ~0ULL, page_rot_ = 0;
    // Counts `served` bytes of lines [first, last] of `block` on their slices.
    void spread(std::uint64_t block, std::uint64_t first, std::uint64_t last, std::uint64_t served);

    std::uint64_t line_, ways_, sets_, slices_, slice_block_;
    std::uint64_t block_ = 0, lines_per_block_ = 1;
    int line_shift_ = -1, block_shift_ = -1;  // log2 when a power of two
    // Per set, in one allocation made on first use, its ways' tags (the
    // block's page + 1, 0 = invalid: blocks of one set differ in their
    // page; far_tag beyond 2^31 pages), their last use (smallest = LRU
    // victim) and which of their lines are valid and dirty: a lookup reads
    // one stretch of the host's memory (384 B for 16 ways), the search for
    // a block or a victim only its first 128 B (32-bit tags and uses), from
    // a host cache line's start. A way's valid and dirty masks sit side by
    // side, so a victim's or a written way's come in one host cache line.
    struct Ways {
        std::uint32_t *tags, *stamps;
        std::uint64_t* lines;  // per way: valid, dirty
        std::uint64_t& valid(std::uint64_t w) const { return lines[2 * w]; }
        std::uint64_t& dirty(std::uint64_t w) const { return lines[2 * w + 1]; }
    };
    Ways ways_of(std::uint64_t set) const {
        std::uint64_t* p = ways_mem_.get() + set * set_words_;
        const std::uint64_t half = (ways_ + 1) / 2;  // words of 32-bit tags (and of stamps)
        return Ways{reinterpret_cast<std::uint32_t*>(p), reinterpret_cast<std::uint32_t*>(p + half), p + 2 * half};
    }
    // The way of `set` holding `tag`, or ways_; all ways compared at once
    // (no early exit: which way holds a block is not predictable).
    std::uint64_t find_way(const std::uint32_t* tags, std::uint32_t tag) const;
    // Tags of pages from kNearPages on: numbers of their own above
    // kNearPages, in order of first use (never an alias; a lookup off the
    // path of every address below kNearPages pages of the cache).
    static constexpr std::uint64_t kNearPages = std::uint64_t{1} << 31;
    std::uint32_t far_tag(std::uint64_t page);
    std::unordered_map<std::uint64_t, std::uint32_t> far_pages_;
    std::unique_ptr<std::uint64_t[], Free> ways_mem_;  // from a host cache line's start
    std::uint64_t set_words_ = 0;                      // 2 * ceil(ways / 2) + 2 * ways
    // The block the last lookup found or placed, and where: a transfer's
    // rows often fall in one block one after another, and a way that still
    // holds the block is its only one.
    std::uint64_t last_block_ = ~0ULL, last_way_ = 0;
    std::uint32_t clock_ = 0;
    std::uint32_t stamp_limit_;
    std::uint64_t bip_count_ = 0;
    int psel_ = 0;
    std::uint64_t resident_ = 0;  // valid lines
    std::uint64_t dirty_count_ = 0;  // dirty lines
    std::uint64_t clean_min_valid_ = 1;  // ways / 2
    std::uint64_t filling_sets_ = 0;     // sets with clean_min_valid_ ways valid (never shrinks: no invalidation)
    std::uint64_t clean_cursor_ = 0;  // next set clean() looks at
    // Per set, one bit each: the set holds clean_min_valid_ valid ways
    // (filling), and it is filling and may hold dirty lines (a candidate
    // for clean(); cleared when a scan finds none). clean() visits only
    // candidates, so a scan over sets with nothing to clean costs a word a
    // 64 sets, not a look at every way.
    std::vector<std::uint64_t> filling_bits_, candidate_bits_;
    static bool bit(const std::vector<std::uint64_t>& v, std::uint64_t i) { return v[i >> 6] >> (i & 63) & 1; }
    static void set_bit(std::vector<std::uint64_t>& v, std::uint64_t i) { v[i >> 6] |= 1ULL << (i & 63); }
    static void clear_bit(std::vector<std::uint64_t>& v, std::uint64_t i) { v[i >> 6] &= ~(1ULL << (i & 63)); }
    // The first candidate in [from, to) (to <= sets_), or `to`.
    std::uint64_t next_candidate(std::uint64_t from, std::uint64_t to) const;
    // Cleans the oldest dirty block of candidate `set`; returns its bytes.
    std::uint64_t clean_set(std::uint64_t set);
    static constexpr std::uint64_t kCleanScanSets = 64;  // bounds one call's cost
    L2Counters counters_;
    std::uint64_t unit_lines_ = 1;  // lines per slice interleave unit
    std::vector<std::uint64_t> slice_bytes_;  // reused per access
    std::uint64_t uniform_bytes_ = 0, request_uniform_bytes_ = 0;  // on every slice alike
    std::vector<std::uint64_t> request_slice_bytes_;  // since take_busiest_slice_bytes
    bool request_touched_ = false;
    bool slices_touched_ = false;  // slice_bytes_ holds bytes of this access
};

}  // namespace npusim
