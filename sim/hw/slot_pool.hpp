// Records reused through a free list: an index stays valid while it is
// held, and once the pool has grown to its working size nothing allocates.
// For per-transfer and per-wait bookkeeping on the event path.
#pragma once
#include <cstdint>
#include <vector>

namespace npusim {

template <class T>
class SlotPool {
public:
    std::uint32_t acquire() {
        if (!free_.empty()) {
            const std::uint32_t i = free_.back();
            free_.pop_back();
            return i;
        }
        items_.emplace_back();
        return static_cast<std::uint32_t>(items_.size() - 1);
    }
    void release(std::uint32_t i) { free_.push_back(i); }
    T& operator[](std::uint32_t i) { return items_[i]; }
    const T& operator[](std::uint32_t i) const { return items_[i]; }

private:
    std::vector<T> items_;
    std::vector<std::uint32_t> free_;
};

}  // namespace npusim
