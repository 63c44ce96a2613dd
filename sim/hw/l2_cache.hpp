// Capacity-based L2 hit model: an LRU over fixed-size address regions, each
// holding a 64-bit map of which of its 64 sub-blocks have been brought in.
// A read hits for the bytes of sub-blocks already present in a region that
// is still among the most recently used `capacity / region` regions. Cheap
// (one lookup per region touched) and deterministic; it models reuse
// distance at sub-block granularity, not sets, ways or lines.
//
// Storage is flat, as the lookup runs on every transfer: the regions live in
// one preallocated array linked into an LRU list by index, found through an
// open-addressing table (linear probing, backward-shift deletion).
#pragma once
#include <cstdint>
#include <vector>

namespace npusim {

class L2Cache {
public:
    L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes);

    // Bytes of [addr, addr+bytes) found in L2; the range becomes present and
    // most recent.
    std::uint64_t read(std::uint64_t addr, std::uint64_t bytes);
    // A write allocates its sub-blocks (write-back cache: later reads hit).
    void write(std::uint64_t addr, std::uint64_t bytes);

    std::uint64_t resident_regions() const { return used_; }
    std::uint64_t sub_block_bytes() const { return sub_bytes_; }

private:
    static constexpr std::uint32_t kNone = UINT32_MAX;
    struct Region {
        std::uint64_t id;
        std::uint64_t present;  // bit i: sub-block i is in L2
        std::uint32_t prev, next;  // LRU neighbours (towards head = most recent)
    };
    // Marks [lo, hi) (within one region) present; returns the bytes of it
    // that were present before.
    std::uint64_t access(std::uint64_t lo, std::uint64_t hi);
    // Region and sub-block index of an address. Shifts when the sizes are
    // powers of two (all bundled chips): a 64-bit division per lookup
    // showed in the profile.
    std::uint64_t region_of(std::uint64_t a) const { return region_shift_ >= 0 ? a >> region_shift_ : a / region_bytes_; }
    std::uint64_t sub_of(std::uint64_t off) const { return sub_shift_ >= 0 ? off >> sub_shift_ : off / sub_bytes_; }

    std::size_t slot_of(std::uint64_t id) const;  // home slot in table_
    std::uint32_t find(std::uint64_t id) const;   // region index or kNone
    void table_insert(std::uint64_t id, std::uint32_t region);
    void table_erase(std::uint64_t id);
    void grow_table();  // doubles table_ and re-inserts every region
    void unlink(std::uint32_t r);
    void push_front(std::uint32_t r);

    std::uint64_t region_bytes_;
    std::uint64_t sub_bytes_;
    int region_shift_ = -1;  // log2(region_bytes_) if a power of two, else -1
    int sub_shift_ = -1;
    std::uint64_t max_regions_;
    std::vector<Region> regions_;      // max_regions_ slots, used_ of them in use
    std::uint64_t used_ = 0;
    std::uint32_t head_ = kNone, tail_ = kNone;  // most and least recent
    std::vector<std::uint32_t> table_;  // region index per slot, kNone = empty
    int table_bits_ = 0;
};

}  // namespace npusim
