#include "common/huge_page_arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace npusim {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kChunk = 16 * kHugePage;  // mapped at a time (address space, not memory)
constexpr std::size_t kAlign = 64;              // a host cache line

struct Arena {
    std::mutex m;
    char* next = nullptr;  // the current chunk's unused rest
    std::size_t left = 0;
    std::map<std::size_t, std::vector<void*>> free;  // by size

    void* carve(std::size_t bytes) {
        if (bytes > left) {
            const std::size_t len = std::max(kChunk, (bytes + kHugePage - 1) / kHugePage * kHugePage);
            // Over-map by one huge page to start on a huge-page boundary.
            void* p = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            const auto at = reinterpret_cast<std::uintptr_t>(p);
            char* start = reinterpret_cast<char*>((at + kHugePage - 1) / kHugePage * kHugePage);
            madvise(start, len, MADV_HUGEPAGE);  // a hint: without it, plain pages
            next = start;
            left = len;
        }
        void* p = next;
        next += bytes;
        left -= bytes;
        return p;
    }
};

Arena& arena() {
    static Arena* a = new Arena;  // never destroyed: blocks may be freed during exit
    return *a;
}

std::size_t rounded(std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void* huge_page_alloc(std::size_t bytes) {
    bytes = rounded(bytes);
    Arena& a = arena();
    std::lock_guard<std::mutex> lock(a.m);
    auto it = a.free.find(bytes);
    if (it != a.free.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        std::memset(p, 0, bytes);
        return p;
    }
    return a.carve(bytes);
}

void huge_page_free(void* p, std::size_t bytes) noexcept {
    if (!p) return;
    Arena& a = arena();
    std::lock_guard<std::mutex> lock(a.m);
    try {
        a.free[rounded(bytes)].push_back(p);
    } catch (...) {  // out of memory for the list: the block is lost, not reused
    }
}

}  // namespace npusim
