// Zeroed blocks for per-die arrays (common/huge_page_arena): what the L2
// model's tags rely on.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "common/huge_page_arena.hpp"

using namespace npusim;

namespace {
bool all_zero(const void* p, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i)
        if (b[i] != 0) return false;
    return true;
}
}  // namespace

TEST_CASE("huge page arena: blocks are zeroed, 64 B aligned and apart, and a freed block comes back zeroed",
          "[common]") {
    // Sizes as a die's tags (344 KB) and odd ones; more than one 32 MB chunk in all.
    const std::vector<std::size_t> sizes = {352256, 100, 1, 4096, 3u << 20, 352256, 40u << 20};
    std::vector<void*> blocks;
    for (std::size_t bytes : sizes) {
        void* p = huge_page_alloc(bytes);
        REQUIRE(p != nullptr);
        CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
        CHECK(all_zero(p, bytes));
        std::memset(p, 0xA5, bytes);  // a neighbour that overlapped would be seen below
        blocks.push_back(p);
    }
    std::set<std::uintptr_t> starts;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto a = reinterpret_cast<std::uintptr_t>(blocks[i]);
        for (std::size_t j = 0; j < blocks.size(); ++j) {
            if (i == j) continue;
            const auto b = reinterpret_cast<std::uintptr_t>(blocks[j]);
            CHECK((a + sizes[i] <= b || b + sizes[j] <= a));
        }
        starts.insert(a);
    }
    CHECK(starts.size() == blocks.size());
    // A freed block of a size is handed out again for that size, zeroed.
    huge_page_free(blocks[0], sizes[0]);
    void* again = huge_page_alloc(sizes[0]);
    CHECK(again == blocks[0]);
    CHECK(all_zero(again, sizes[0]));
    huge_page_free(again, sizes[0]);
    for (std::size_t i = 1; i < blocks.size(); ++i) huge_page_free(blocks[i], sizes[i]);
}
