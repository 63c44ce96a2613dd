// Capacity-based L2 hit model: an LRU over fixed-size address regions.
// A read hits for the bytes of regions still among the most recently used
// `capacity / region` regions. Cheap (one lookup per region touched) and
// deterministic; it models reuse distance, not sets, ways or lines.
#pragma once
#include <cstdint>
#include <list>
#include <unordered_map>

namespace npusim {

class L2Cache {
public:
    L2Cache(std::uint64_t capacity_bytes, std::uint64_t region_bytes);

    // Bytes of [addr, addr+bytes) found in L2; the range becomes most recent.
    std::uint64_t read(std::uint64_t addr, std::uint64_t bytes);
    // A write allocates its regions (write-back cache: later reads hit).
    void write(std::uint64_t addr, std::uint64_t bytes);

    std::uint64_t resident_regions() const { return lru_.size(); }

private:
    bool touch(std::uint64_t region);  // true if it was resident

    std::uint64_t region_bytes_;
    std::uint64_t max_regions_;
    std::list<std::uint64_t> lru_;  // front = most recent
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace npusim
