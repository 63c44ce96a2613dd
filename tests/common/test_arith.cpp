// Integer helpers of common/arith.hpp that the models count with.
#include <catch2/catch.hpp>

#include <cstdint>

#include "common/arith.hpp"

using namespace npusim;

TEST_CASE("arith: popcount64 counts the set bits of any word", "[common]") {
    CHECK(popcount64(0) == 0);
    CHECK(popcount64(~std::uint64_t{0}) == 64);
    CHECK(popcount64(std::uint64_t{1} << 63) == 1);
    CHECK(popcount64(0x00FF00FF00FF00FFULL) == 32);
    // A spread of words against the compiler's builtin.
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 1000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        REQUIRE(popcount64(x) == static_cast<std::uint64_t>(__builtin_popcountll(x)));
    }
}
