// Whether two strided regions share a byte, against the bytes themselves.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>

#include "tasks/task.hpp"

using namespace npusim;

namespace {

std::set<std::uint64_t> bytes_of(const Region& r) {
    std::set<std::uint64_t> out;
    r.for_each_row([&](std::uint64_t addr, std::uint64_t bytes) {
        for (std::uint64_t x = addr; x < addr + bytes; ++x) out.insert(x);
    });
    return out;
}

bool share_a_byte(const Region& a, const Region& b) {
    const std::set<std::uint64_t> x = bytes_of(a);
    for (const std::uint64_t y : bytes_of(b))
        if (x.count(y)) return true;
    return false;
}

}  // namespace

TEST_CASE("regions: strided regions overlap exactly when they share a byte", "[tasks][regions]") {
    // Every small pair: rows of one stride (the closed form) and of two
    // (row by row), rows shorter and longer than the stride, one row, and
    // every offset of b around a.
    int pairs = 0, meeting = 0;
    for (const std::uint64_t sa : {0u, 3u, 4u, 7u})
        for (const std::uint64_t sb : {0u, 3u, 4u, 5u})
            for (const std::uint32_t ra : {1u, 2u, 3u, 5u})
                for (const std::uint32_t rb : {1u, 2u, 4u})
                    for (const std::uint64_t ba : {1u, 2u, 3u, 6u})
                        for (const std::uint64_t bb : {1u, 3u, 5u})
                            for (std::uint64_t off = 0; off < 30; ++off) {
                                const Region a{Space::hbm, 12, ba, sa, ra};
                                const Region b{Space::hbm, off, bb, sb, rb};
                                const bool expect = share_a_byte(a, b);
                                CAPTURE(sa, sb, ra, rb, ba, bb, off);
                                REQUIRE(overlaps(a, b) == expect);
                                REQUIRE(overlaps(b, a) == expect);
                                ++pairs;
                                meeting += expect;
                            }
    // Both answers occur often (the check cannot pass by always saying one).
    CHECK(meeting > pairs / 5);
    CHECK(meeting < pairs * 4 / 5);
}

TEST_CASE("regions: column blocks of one matrix meet only where their columns do", "[tasks][regions]") {
    // A 4096-row matrix of 2048-byte rows: two 512-byte column blocks over
    // all rows side by side do not meet; shifted by one byte into the
    // neighbour they do; another space never does.
    const Region left{Space::hbm, 0, 512, 2048, 4096};
    const Region right{Space::hbm, 512, 512, 2048, 4096};
    CHECK_FALSE(overlaps(left, right));
    CHECK(overlaps(left, Region{Space::hbm, 511, 512, 2048, 4096}));
    CHECK(overlaps(left, Region{Space::hbm, 2048 * 4095, 1, 2048, 1}));
    CHECK_FALSE(overlaps(left, Region{Space::ub, 0, 512, 2048, 4096}));
}
