// The device memory pool of the host runtime (docs/design.md §1.2): first-fit
// allocation with coalescing frees over one address range, 512 B aligned,
// with in-use and reserved (high-water) peaks. Plain C++; the host calls it
// from its launch thread, in program order.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace npusim {
class Stats;
}

namespace npusim::host {

class MemoryPool {
public:
    static constexpr std::uint64_t kAlign = 512;

    // Returns the block's address; a 0-byte request takes one aligned unit.
    std::uint64_t allocate(std::uint64_t bytes);
    // Frees a block returned by allocate (logic_error otherwise).
    void free(std::uint64_t addr);

    std::uint64_t in_use() const { return in_use_; }
    std::uint64_t peak_in_use() const { return peak_in_use_; }
    std::uint64_t reserved() const { return top_; }  // high-water address: what the pool took from the device
    std::uint64_t allocations() const { return allocations_; }
    std::uint64_t frees() const { return frees_; }
    std::uint64_t live_blocks() const { return used_.size(); }

    // Its own figures under `prefix` (e.g. "host.memory."): peak in use,
    // reserved, allocations, frees, still in use at the end.
    void report(Stats& s, const std::string& prefix) const;

private:
    std::map<std::uint64_t, std::uint64_t> free_;  // addr -> size, coalesced
    std::map<std::uint64_t, std::uint64_t> used_;  // addr -> size
    std::uint64_t top_ = 0;
    std::uint64_t in_use_ = 0, peak_in_use_ = 0;
    std::uint64_t allocations_ = 0, frees_ = 0;
};

}  // namespace npusim::host
