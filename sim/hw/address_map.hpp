// Where a task's input (or output) bytes live in global memory: its global
// `reads` (or `writes`) regions concatenated in order, or one range from
// `addr` when a hand-written stream gives only that. A core walks the
// stream by offset; the map turns an offset range into address ranges for
// the L2 hit model.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/memory_system.hpp"
#include "tasks/task.hpp"

namespace npusim {

class AddressMap {
public:
    // Global regions of `regions`; if none, [base, ...) when has_base.
    void reset(const std::vector<Region>& regions, bool has_base, std::uint64_t base);
    // Adds the address ranges of stream bytes [offset, offset+len) to req.
    void map(std::uint64_t offset, std::uint64_t len, TransferRequest& req) const;
    bool known() const { return has_base_ || !starts_.empty(); }

private:
    std::vector<Region> regions_;        // global ones only
    std::vector<std::uint64_t> starts_;  // stream offset of each region
    std::uint64_t total_ = 0;
    bool has_base_ = false;
    std::uint64_t base_ = 0;
};

}  // namespace npusim
