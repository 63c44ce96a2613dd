// Capacity-based L2 hit model: an LRU over fixed-size address regions, each
// holding a 64-bit map of which of its 64 sub-blocks have been brought in.
// A read hits for the bytes of sub-blocks already present in a region that
// is still among the most recently used `capacity / region` regions. Cheap
// (one lookup per region touched) and deterministic; it models reuse
// distance at sub-block granularity, not sets, ways or lines.
#pragma once
#include <cstdint>
#include <list>
#include <unordered_map>

namespace npusim {

class L2Cache {
public:
    L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes);

    // Bytes of [addr, addr+bytes) found in L2; the range becomes present and
    // most recent.
    std::uint64_t read(std::uint64_t addr, std::uint64_t bytes);
    // A write allocates its sub-blocks (write-back cache: later reads hit).
    void write(std::uint64_t addr, std::uint64_t bytes);

    std::uint64_t resident_regions() const { return lru_.size(); }
    std::uint64_t sub_block_bytes() const { return sub_bytes_; }

private:
    struct Region {
        std::uint64_t id;
        std::uint64_t present;  // bit i: sub-block i is in L2
    };
    // Marks [lo, hi) (within one region) present; returns the bytes of it
    // that were present before.
    std::uint64_t access(std::uint64_t lo, std::uint64_t hi);

    std::uint64_t region_bytes_;
    std::uint64_t sub_bytes_;
    std::uint64_t max_regions_;
    std::list<Region> lru_;  // front = most recent
    std::unordered_map<std::uint64_t, std::list<Region>::iterator> where_;
};

}  // namespace npusim
