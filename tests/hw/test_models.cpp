// Plain C++ unit tests of the cost models, no simulation (docs/design.md §2):
// max-min bandwidth sharing, the L2 hit model, the double-buffered tile
// pipeline, interval arithmetic for overlap, cube tiling and M-pipe cycles,
// vector chunking, and the task-stream reader/writer (§4.3).
//
// Expected values are worked out by hand from the formulas and chip
// parameters in the comments next to them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "hw/bandwidth_share.hpp"
#include "chip/chip_params.hpp"
#include "hw/cube_core.hpp"
#include "hw/hbm.hpp"
#include "hw/l2_cache.hpp"
#include "chip/tile_pipeline.hpp"
#include "chip/timing.hpp"
#include "hw/vector_core.hpp"
#include "stats/intervals.hpp"
#include "tasks/stream_reader.hpp"
#include "tasks/task.hpp"

#include "support/build_paths.hpp"

using namespace npusim;
using Catch::Matchers::Contains;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
constexpr std::uint64_t kIdle = std::numeric_limits<std::uint64_t>::max();

ChipParams chip_from(const std::string& name) {
    return RunConfig::load(kSrc + "/configs/chips/" + name + ".json", "", {}).chip();
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::vector<std::uint64_t> pop(BandwidthShare& bw, std::uint64_t now_ps) {
    std::vector<std::uint64_t> tokens{999999};  // must be cleared by pop_finished
    bw.pop_finished(now_ps, tokens);
    return tokens;
}

}  // namespace

// ---------------------------------------------------------------------------
// BandwidthShare: capacity and caps in bytes/ps, times in ps.

TEST_CASE("BandwidthShare: an idle share has no finish time", "[models][bandwidth]") {
    BandwidthShare bw(1.0);
    CHECK(bw.next_finish_ps() == kIdle);
    CHECK(bw.active() == 0);
    CHECK(pop(bw, 1000).empty());
    CHECK(bw.current_rate() == 0.0);
}

TEST_CASE("BandwidthShare: one flow runs at its own cap", "[models][bandwidth]") {
    // 1000 B at cap 0.25 B/ps on a 1 B/ps resource: 1000 / 0.25 = 4000 ps.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 0.25, 7);
    CHECK(bw.active() == 1);
    CHECK(bw.current_rate() == Approx(0.25));
    CHECK(bw.next_finish_ps() == 4000);
    CHECK(pop(bw, 3999).empty());
    CHECK(pop(bw, 4000) == std::vector<std::uint64_t>{7});
    CHECK(bw.active() == 0);
    CHECK(bw.next_finish_ps() == kIdle);
}

TEST_CASE("BandwidthShare: one flow above capacity runs at the capacity", "[models][bandwidth]") {
    // Cap 10 B/ps, resource 0.5 B/ps: 1000 / 0.5 = 2000 ps, started at 100.
    BandwidthShare bw(0.5);
    bw.add(100, 1000, 10.0, 1);
    CHECK(bw.next_finish_ps() == 2100);
    CHECK(pop(bw, 2100) == std::vector<std::uint64_t>{1});
}

TEST_CASE("BandwidthShare: finish times round up to whole picoseconds", "[models][bandwidth]") {
    // 1000 / 0.3 = 3333.33 ps -> done at 3334, not at 3333.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 0.3, 1);
    CHECK(bw.next_finish_ps() == 3334);
    CHECK(pop(bw, 3333).empty());
    CHECK(pop(bw, 3334) == std::vector<std::uint64_t>{1});
}

TEST_CASE("BandwidthShare: two equal flows share fairly", "[models][bandwidth]") {
    // Two 1000 B flows on 1 B/ps, both uncapped: 0.5 B/ps each -> both at 2000 ps,
    // reported in start order.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 10.0, 1);
    bw.add(0, 1000, 10.0, 2);
    CHECK(bw.current_rate() == Approx(1.0));
    CHECK(bw.next_finish_ps() == 2000);
    CHECK(pop(bw, 1999).empty());
    CHECK(pop(bw, 2000) == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("BandwidthShare: a late flow shares from its start", "[models][bandwidth]") {
    // A: 1000 B at t=0, alone at 1 B/ps until 500 (500 B left).
    // B: 1000 B at t=500; both at 0.5 B/ps: A done at 500 + 500/0.5 = 1500,
    // B has 500 B left then, alone again at 1 B/ps: done at 2000.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 10.0, 1);
    bw.add(500, 1000, 10.0, 2);
    CHECK(bw.next_finish_ps() == 1500);
    CHECK(pop(bw, 1500) == std::vector<std::uint64_t>{1});
    CHECK(bw.next_finish_ps() == 2000);
    CHECK(pop(bw, 2000) == std::vector<std::uint64_t>{2});
}

TEST_CASE("BandwidthShare: a capped flow leaves the rest to the others", "[models][bandwidth]") {
    // Resource 1 B/ps. A capped at 0.2 B/ps, B uncapped, 1000 B each from t=0.
    // Max-min: A = 0.2, B = 0.8. B done at 1000 / 0.8 = 1250 ps; A keeps 0.2
    // (its cap), so A is done at 1000 / 0.2 = 5000 ps.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 0.2, 1);
    bw.add(0, 1000, 10.0, 2);
    CHECK(bw.current_rate() == Approx(1.0));
    CHECK(bw.next_finish_ps() == 1250);
    CHECK(pop(bw, 1250) == std::vector<std::uint64_t>{2});
    CHECK(bw.current_rate() == Approx(0.2));
    CHECK(bw.next_finish_ps() == 5000);
    CHECK(pop(bw, 5000) == std::vector<std::uint64_t>{1});
}

TEST_CASE("BandwidthShare: bound time counts only while the flows want more than the capacity", "[models][bandwidth]") {
    // The capped-flow case above: until 1250 ps A (0.2) and B (uncapped)
    // want more than 1 B/ps, so the capacity binds; from then A alone moves
    // at its own cap (0.2 of 1 B/ps) and the capacity does not bind.
    BandwidthShare bw(1.0);
    bw.add(0, 1000, 0.2, 1);
    bw.add(0, 1000, 10.0, 2);
    CHECK(pop(bw, 1250) == std::vector<std::uint64_t>{2});
    CHECK(pop(bw, 5000) == std::vector<std::uint64_t>{1});
    CHECK(bw.saturated_ps() == 1250);
    // Two flows whose caps sum to the capacity exactly never bind it.
    BandwidthShare fit(1.0);
    fit.add(0, 1000, 0.5, 1);
    fit.add(0, 1000, 0.5, 2);
    CHECK(pop(fit, 2000) == std::vector<std::uint64_t>{1, 2});
    CHECK(fit.saturated_ps() == 0);
}

TEST_CASE("BandwidthShare: water-filling over three cap classes", "[models][bandwidth]") {
    // Resource 1 B/ps; caps 0.1, 0.6, 0.6. Water level: 0.1 for the first,
    // (1 - 0.1) / 2 = 0.45 for each of the others (below their cap 0.6).
    //   A (cap 0.1, 100 B):  100 / 0.1  = 1000 ps
    //   B (cap 0.6, 450 B):  450 / 0.45 = 1000 ps
    //   C (cap 0.6, 900 B):  450 B by 1000, then alone at min(0.6, 1) = 0.6:
    //                        450 / 0.6 = 750 -> 1750 ps
    BandwidthShare bw(1.0);
    bw.add(0, 100, 0.1, 1);
    bw.add(0, 450, 0.6, 2);
    bw.add(0, 900, 0.6, 3);
    CHECK(bw.current_rate() == Approx(1.0));
    CHECK(bw.next_finish_ps() == 1000);
    CHECK(pop(bw, 1000) == std::vector<std::uint64_t>{1, 2});
    CHECK(bw.current_rate() == Approx(0.6));
    CHECK(bw.next_finish_ps() == 1750);
    CHECK(pop(bw, 1750) == std::vector<std::uint64_t>{3});
}

TEST_CASE("BandwidthShare: many flows never exceed the capacity", "[models][bandwidth]") {
    // 48 engines at 32 B/cycle and 1.85 GHz (0.0592 B/ps each, 2.84 B/ps in
    // all) on a 1.6 B/ps HBM: 48 x 1 MiB must take at least 48 MiB / 1.6.
    const double cap = 32.0 / (1000.0 / 1.85);
    BandwidthShare bw(1.6);
    const double bytes = 1 << 20;
    for (std::uint64_t i = 0; i < 48; ++i) bw.add(0, bytes, cap, i);
    CHECK(bw.current_rate() == Approx(1.6));
    std::uint64_t now = 0, done = 0;
    while (bw.active() > 0) {
        now = bw.next_finish_ps();
        REQUIRE(now != kIdle);
        done += pop(bw, now).size();
    }
    CHECK(done == 48);
    const double ideal = 48.0 * bytes / 1.6;  // 31457280 ps
    CHECK(static_cast<double>(now) >= ideal);
    CHECK(static_cast<double>(now) <= ideal + 1.0);  // one ps of rounding
}

TEST_CASE("BandwidthShare: caps that came and went leave no trace on later flows", "[models][bandwidth]") {
    // An engine's cap varies from transfer to transfer (an L2 part is capped
    // by the slices it covers). After 200 flows of 200 distinct caps have
    // run and finished, three flows share exactly as on a fresh resource.
    BandwidthShare used(1.0), fresh(1.0);
    std::uint64_t now = 0;
    for (std::uint64_t i = 0; i < 200; ++i) {
        used.add(now, 1000, 0.01 + 0.001 * static_cast<double>(i), i);
        now = used.next_finish_ps();
        REQUIRE(pop(used, now).size() == 1);
    }
    REQUIRE(used.active() == 0);
    // Water-filling as in "three cap classes", started at `now` on the used one.
    for (BandwidthShare* bw : {&used, &fresh}) {
        const std::uint64_t t0 = bw == &used ? now : 0;
        bw->add(t0, 100, 0.1, 1);
        bw->add(t0, 450, 0.6, 2);
        bw->add(t0, 900, 0.6, 3);
        CHECK(bw->next_finish_ps() == t0 + 1000);
        CHECK(pop(*bw, t0 + 1000) == std::vector<std::uint64_t>{1, 2});
        CHECK(bw->current_rate() == Approx(0.6));
        CHECK(bw->next_finish_ps() == t0 + 1750);
    }
}

// ---------------------------------------------------------------------------
// L2Cache. Small caches (fewer than 64 sets) have no leader sets and are
// plain LRU per set; 256 B of 64 B lines, 4 ways = one fully associative set,
// one line per tag block.

namespace {
L2Cache small_l2(std::uint64_t capacity = 256, std::uint64_t line = 64, std::uint64_t ways = 4) {
    L2Geometry g;
    g.capacity_bytes = capacity;
    g.line_bytes = line;
    g.ways = ways;
    g.slice_block_bytes = line;  // one line per tag: plain line-level LRU
    return L2Cache(g);
}
std::uint64_t hits(L2Cache& l2, std::uint64_t addr, std::uint64_t bytes) { return l2.read(addr, bytes).hit_bytes; }
}  // namespace

TEST_CASE("L2Cache: a read hits after a read of the same range", "[models][l2]") {
    L2Cache l2 = small_l2();
    CHECK(hits(l2, 0, 128) == 0);
    CHECK(hits(l2, 0, 128) == 128);
    CHECK(l2.resident_lines() == 2);
    CHECK(l2.counters().hits == 2);
    CHECK(l2.counters().misses == 2);
    CHECK(hits(l2, 0, 0) == 0);
}

TEST_CASE("L2Cache: a write allocates, so a later read hits", "[models][l2]") {
    L2Cache l2 = small_l2();
    const L2Access w = l2.write(1000, 10);
    CHECK(w.dirty_evicted_bytes == 0);
    CHECK(hits(l2, 1000, 10) == 10);
}

TEST_CASE("L2Cache: partial hits count only the requested bytes of resident lines", "[models][l2]") {
    L2Cache l2 = small_l2();
    CHECK(hits(l2, 0, 64) == 0);   // line 0
    CHECK(hits(l2, 32, 64) == 32); // 32..63 of line 0 hit, 64..95 of line 1 miss
    const L2Access a = l2.read(0, 192);  // lines 0, 1 resident, line 2 not
    CHECK(a.hit_bytes == 128);
    CHECK(a.miss_bytes == 64);
}

TEST_CASE("L2Cache: reading beyond capacity evicts the least recently used", "[models][l2]") {
    L2Cache l2 = small_l2();
    for (std::uint64_t r = 0; r < 5; ++r) CHECK(hits(l2, r * 64, 64) == 0);  // 5 lines into 4
    CHECK(l2.resident_lines() == 4);
    CHECK(l2.counters().evictions == 1);
    CHECK(hits(l2, 0, 64) == 0);        // line 0 was the oldest (re-read evicts 1)
    CHECK(hits(l2, 4 * 64, 64) == 64);
    CHECK(hits(l2, 1 * 64, 64) == 0);
}

TEST_CASE("L2Cache: a hit refreshes recency", "[models][l2]") {
    L2Cache l2 = small_l2();
    for (std::uint64_t r = 0; r < 4; ++r) l2.read(r * 64, 64);  // LRU order 3 2 1 0
    CHECK(hits(l2, 0, 64) == 64);                                // 0 3 2 1
    CHECK(hits(l2, 4 * 64, 64) == 0);                            // evicts 1
    CHECK(hits(l2, 0, 64) == 64);
    CHECK(hits(l2, 2 * 64, 64) == 64);
    CHECK(hits(l2, 1 * 64, 64) == 0);
}

TEST_CASE("L2Cache: one fully associative set, random reuse, same hits as a plain list-and-map LRU", "[models][l2]") {
    const std::uint64_t line = 64, ways = 512;
    L2Cache l2 = small_l2(line * ways, line, ways);
    std::list<std::uint64_t> lru;  // front = most recent
    std::map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
    auto reference = [&](std::uint64_t l) {
        auto it = where.find(l);
        if (it != where.end()) {
            lru.splice(lru.begin(), lru, it->second);
            return true;
        }
        lru.push_front(l);
        where[l] = lru.begin();
        if (lru.size() > ways) {
            where.erase(lru.back());
            lru.pop_back();
        }
        return false;
    };
    std::uint64_t x = 12345, total_hit = 0, mismatches = 0;
    for (int i = 0; i < 50000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::uint64_t first = (x >> 33) % 800, n = 1 + (x >> 20) % 4;  // more lines than fit
        std::uint64_t want = 0;
        for (std::uint64_t l = first; l < first + n; ++l) want += reference(l) ? line : 0;
        const std::uint64_t got = hits(l2, first * line, n * line);
        total_hit += got;
        mismatches += got != want ? 1 : 0;
    }
    CHECK(mismatches == 0);
    CHECK(total_hit > 0);
    CHECK(l2.resident_lines() == ways);
}

// Bytes never read or written are not hits because a neighbour was.
TEST_CASE("L2Cache: a cold read of untouched bytes is a miss", "[models][l2]") {
    L2Geometry g;
    g.capacity_bytes = 192ull << 20;
    g.line_bytes = 512;
    L2Cache l2(g);
    CHECK(hits(l2, 0, 32 << 10) == 0);
    CHECK(hits(l2, 32 << 10, 32 << 10) == 0);
    CHECK(hits(l2, 0, 64 << 10) == 64 << 10);
}

// The LRU cliff: a working set re-read in order, one line more than fits,
// misses every line under LRU. Dynamic insertion keeps most of it, so the
// hit rate falls smoothly with the working set.
TEST_CASE("L2Cache: a cyclic re-read just above capacity keeps most hits (no LRU cliff)", "[models][l2]") {
    const std::uint64_t capacity = 32ull << 20;
    auto last_pass_hit_rate = [&](double ratio) {
        L2Geometry g;
        g.capacity_bytes = capacity;
        g.line_bytes = 512;
        g.ways = 16;  // 512 sets of 4 KB blocks: 32 leader sets of each policy decide
        L2Cache l2(g);
        const std::uint64_t ws = static_cast<std::uint64_t>(ratio * capacity) / 512 * 512;
        std::uint64_t hit = 0;
        for (int pass = 0; pass < 6; ++pass) {  // the policy selector learns over the first passes
            hit = 0;
            for (std::uint64_t a = 0; a < ws; a += 64 << 10) hit += hits(l2, a, std::min<std::uint64_t>(64 << 10, ws - a));
        }
        return static_cast<double>(hit) / static_cast<double>(ws);
    };
    const double below = last_pass_hit_rate(0.95), just_above = last_pass_hit_rate(1.05),
                 above = last_pass_hit_rate(1.5), far = last_pass_hit_rate(3.0);
    INFO("hit rate at 0.95x " << below << ", 1.05x " << just_above << ", 1.5x " << above << ", 3x " << far);
    CHECK(below == Approx(1.0));
    CHECK(just_above >= 0.75);  // LRU: 0
    CHECK(just_above < below);
    CHECK(above <= just_above);
    CHECK(above >= 0.4);
    CHECK(far <= above);
}

// Dynamic insertion must not cost producer -> consumer reuse: after a long
// stream of data read once, a tensor written and read back still hits.
TEST_CASE("L2Cache: data written then read back hits after a long one-touch stream", "[models][l2]") {
    L2Geometry g;
    g.capacity_bytes = 32ull << 20;  // 512 sets of 4 KB blocks, 16 of them bimodal leaders
    g.line_bytes = 512;
    L2Cache l2(g);
    for (std::uint64_t a = 0; a < (128ull << 20); a += 64 << 10) l2.read(a, 64 << 10);  // 4x capacity, once
    const std::uint64_t base = 1ull << 32, bytes = 16ull << 20;
    for (std::uint64_t a = 0; a < bytes; a += 64 << 10) l2.write(base + a, 64 << 10);
    std::uint64_t hit = 0;
    for (std::uint64_t a = 0; a < bytes; a += 64 << 10) hit += hits(l2, base + a, 64 << 10);
    CHECK(static_cast<double>(hit) >= 0.9 * static_cast<double>(bytes));
    CHECK_FALSE(l2.followers_bimodal());
}

TEST_CASE("L2Cache: dirty lines reach HBM only when evicted, and a larger L2 defers them", "[models][l2]") {
    auto written_back = [](std::uint64_t capacity) {
        L2Geometry g;
        g.capacity_bytes = capacity;
        g.line_bytes = 512;
        L2Cache l2(g);
        std::uint64_t dirty = 0;
        for (std::uint64_t a = 0; a < (4ull << 20); a += 32 << 10) dirty += l2.write(a, 32 << 10).dirty_evicted_bytes;
        CHECK(l2.dirty_lines() * 512 + dirty == 4ull << 20);  // every written byte is dirty in L2 or written back
        return dirty;
    };
    const std::uint64_t small = written_back(1ull << 20), big = written_back(8ull << 20);
    CHECK(small >= (3ull << 20) * 9 / 10);  // ~3 MB of 4 could not stay
    CHECK(small <= 3ull << 20);
    CHECK(big == 0);
}

TEST_CASE("L2Cache: eager clean writes back the oldest dirty lines of half-full sets, and their eviction is then free",
          "[models][l2]") {
    // One set of 4 ways, one 64 B line per way.
    L2Cache l2 = small_l2();
    l2.write(0, 64);  // 1 of 4 ways valid: no eviction in prospect
    CHECK(l2.clean(1 << 20) == 0);
    CHECK(l2.dirty_lines() == 1);
    l2.write(64, 64);  // 2 of 4: half full
    l2.read(128, 64);
    CHECK(l2.any_filling_set());
    // One block (the oldest dirty one) per set and call.
    CHECK(l2.clean(64) == 64);
    CHECK(l2.dirty_lines() == 1);
    CHECK(l2.counters().cleaned == 1);
    CHECK(l2.clean(64) == 64);
    CHECK(l2.dirty_lines() == 0);
    CHECK(l2.clean(64) == 0);
    // Cleaned lines stay valid (reads hit) and leave without a write-back.
    CHECK(hits(l2, 0, 128) == 128);
    std::uint64_t written_back = 0;
    for (std::uint64_t a = 4; a < 12; ++a) written_back += l2.read(a * 64, 64).dirty_evicted_bytes;
    CHECK(written_back == 0);
    CHECK(l2.counters().evictions >= 3);
    // Without the clean, the same eviction pays: line 0 rewritten and evicted.
    L2Cache dirty = small_l2();
    dirty.write(0, 128);
    std::uint64_t paid = 0;
    for (std::uint64_t a = 4; a < 12; ++a) paid += dirty.read(a * 64, 64).dirty_evicted_bytes;
    CHECK(paid == 128);
}

TEST_CASE("L2Cache: a range on one slice is all on its busiest slice, a long range spreads over the slices", "[models][l2]") {
    L2Geometry g;
    g.capacity_bytes = 8ull << 20;
    g.line_bytes = 512;
    g.slices = 16;
    g.slice_block_bytes = 4096;
    L2Cache l2(g);
    CHECK(l2.write(0, 4096).busiest_slice_bytes == 4096);
    const L2Access a = l2.write(1 << 20, 1 << 20);  // 256 blocks over 16 slices
    CHECK(a.busiest_slice_bytes >= (1 << 20) / 16);
    CHECK(a.busiest_slice_bytes <= (1 << 20) / 8);
}

TEST_CASE("L2Cache: lines interleaved over the slices spread one block over them", "[models][l2]") {
    L2Geometry g;
    g.capacity_bytes = 8ull << 20;
    g.line_bytes = 512;
    g.slices = 16;
    g.slice_block_bytes = 16384;  // 32 lines per tag
    g.slice_interleave_bytes = 1024;  // 2 lines per slice unit: 16 units per block
    L2Cache l2(g);
    CHECK(l2.write(0, 16384).busiest_slice_bytes == 1024);  // one unit on each slice
    CHECK(l2.write(1 << 20, 4096).busiest_slice_bytes == 1024);  // 4 units on 4 slices
    CHECK(l2.write(2 << 20, 512).busiest_slice_bytes == 512);
    // Several ranges of one request add up slice by slice.
    l2.take_busiest_slice_bytes();
    l2.write(4 << 20, 16384);
    l2.write(5 << 20, 16384);
    CHECK(l2.take_busiest_slice_bytes() == 2048);
    // A unit as large as the block: each block on one slice, as before.
    g.slice_interleave_bytes = 16384;
    L2Cache coarse(g);
    CHECK(coarse.write(0, 16384).busiest_slice_bytes == 16384);
}

TEST_CASE("L2Cache: a request's ranges looked up as one access give what one access per range gives", "[models][l2]") {
    // The memory system looks up a transfer's rows in one access
    // (access_ranges); rows of one block one after another find their way
    // without a search. Against one read or write per row: the same hits,
    // fills, write-backs, evictions, residents and busiest slice, request by
    // request, over a cache small enough to evict and a use clock that is
    // renumbered along the way.
    L2Geometry g;
    g.capacity_bytes = 256 * 1024;
    g.line_bytes = 512;
    g.slices = 16;
    g.slice_block_bytes = 16384;
    g.slice_interleave_bytes = 512;
    g.stamp_limit = 1000;
    L2Cache each(g), joined(g);
    std::mt19937_64 rng(7);
    const auto draw = [&](std::uint64_t n) { return rng() % n; };
    std::uint64_t requests = 0, same_block_rows = 0;
    for (int r = 0; r < 3000; ++r) {
        const bool write = draw(3) == 0;
        const std::uint64_t base = draw(4u << 20), bytes = 64 + draw(3000), stride = bytes + draw(20000);
        const std::uint64_t rows = 1 + draw(40);
        std::uint64_t hit = 0, miss = 0, fill = 0, dirty = 0;
        for (std::uint64_t i = 0; i < rows; ++i) {
            const L2Access a = write ? each.write(base + i * stride, bytes) : each.read(base + i * stride, bytes);
            hit += a.hit_bytes, miss += a.miss_bytes, fill += a.fill_bytes, dirty += a.dirty_evicted_bytes;
            same_block_rows += i > 0 && (base + i * stride) / 16384 == (base + (i - 1) * stride) / 16384;
        }
        const L2Access j = joined.access_ranges(write, [&](const auto& f) {
            for (std::uint64_t i = 0; i < rows; ++i) f(base + i * stride, bytes);
        });
        CAPTURE(r);
        REQUIRE(j.hit_bytes == hit);
        REQUIRE(j.miss_bytes == miss);
        REQUIRE(j.fill_bytes == fill);
        REQUIRE(j.dirty_evicted_bytes == dirty);
        REQUIRE(joined.take_busiest_slice_bytes() == each.take_busiest_slice_bytes());
        if (r % 7 == 0) REQUIRE(joined.clean(8192) == each.clean(8192));
        ++requests;
    }
    const L2Counters &a = each.counters(), &b = joined.counters();
    CHECK(b.hits == a.hits);
    CHECK(b.misses == a.misses);
    CHECK(b.write_hits == a.write_hits);
    CHECK(b.write_misses == a.write_misses);
    CHECK(b.evictions == a.evictions);
    CHECK(b.dirty_evictions == a.dirty_evictions);
    CHECK(joined.resident_lines() == each.resident_lines());
    CHECK(joined.dirty_lines() == each.dirty_lines());
    // The case is not vacuous: lines were evicted, and many rows followed
    // one in their block.
    CHECK(a.evictions > 10000);
    CHECK(same_block_rows > 10000);
}

// ---------------------------------------------------------------------------
// HBM: channels, read/write mix, queueing latency (hw/hbm).

TEST_CASE("HBM efficiency: a stream gets the streaming share, a 50/50 copy less, symmetric in the mix", "[models][hbm]") {
    HbmParams h;  // 1600 GB/s, 32 channels, 0.92, 8 ns turnaround, 4 KB batches
    CHECK(timing::hbm_efficiency(h, 0) == Approx(0.92));
    CHECK(timing::hbm_efficiency(h, 1) == Approx(0.92));
    const double copy = timing::hbm_efficiency(h, 0.5);
    CHECK(copy >= 0.80);
    CHECK(copy <= 0.88);
    CHECK(timing::hbm_efficiency(h, 0.25) < timing::hbm_efficiency(h, 0.1));
    CHECK(timing::hbm_efficiency(h, 0.25) > copy);
    CHECK(timing::hbm_efficiency(h, 0.3) == Approx(timing::hbm_efficiency(h, 0.7)));
    h.turnaround_ns = 0;
    CHECK(timing::hbm_efficiency(h, 0.5) == Approx(0.92));
}

namespace {
// Runs `flows` flows of `bytes` each (every `write_every`th a write, 0 =
// none) from time 0 through an Hbm; returns achieved bytes per ps.
double hbm_rate(const HbmParams& h, int flows, std::uint64_t bytes, int write_every) {
    Hbm hbm(h);
    for (int i = 0; i < flows; ++i) hbm.add(0, bytes, write_every > 0 && i % write_every == 0, 1.0, static_cast<std::uint32_t>(i));
    std::vector<std::uint64_t> done;
    std::uint64_t now = 0;
    int left = flows;
    while (left > 0) {
        now = hbm.next_finish_ps();
        hbm.pop_finished(now, done);
        left -= static_cast<int>(done.size());
    }
    return static_cast<double>(bytes) * flows / static_cast<double>(now);
}
}  // namespace

TEST_CASE("Hbm: a streaming read reaches >= 88% of peak, a 50/50 copy less", "[models][hbm]") {
    HbmParams h;
    const double peak = h.bandwidth_gbps / 1000.0;
    const double read = hbm_rate(h, 64, 1 << 20, 0), copy = hbm_rate(h, 64, 1 << 20, 2);
    INFO("read " << read / peak << " of peak, copy " << copy / peak);
    CHECK(read >= 0.88 * peak);
    CHECK(read <= peak);
    CHECK(copy < read);
    CHECK(copy >= 0.78 * peak);
}

TEST_CASE("Hbm: more channels or more bandwidth is never slower, a small transfer moves at its channels' rate", "[models][hbm]") {
    HbmParams h;
    const double ch_rate = h.bandwidth_gbps / 1000.0 / h.channels;
    CHECK(Hbm(h).channel_cap(512) == Approx(ch_rate));       // one interleave block: one channel
    CHECK(Hbm(h).channel_cap(1024) == Approx(2 * ch_rate));
    CHECK(Hbm(h).channel_cap(16384) == Approx(32 * ch_rate)); // all channels
    double last_small = 0, last_big = 0;
    for (int channels : {4, 8, 16, 32, 64}) {  // channels added with their bandwidth
        h.channels = channels;
        h.bandwidth_gbps = 50.0 * channels;
        const double small = hbm_rate(h, 8, 2048, 0), big = hbm_rate(h, 64, 1 << 20, 0);  // 2 KB: few channels each
        CHECK(small >= last_small * (1 - 1e-9));
        CHECK(big > last_big);
        last_small = small;
        last_big = big;
    }
    // Twice the bandwidth on as many channels: a copy gains less than 2x, as
    // each turnaround now idles a faster channel.
    HbmParams slow, fast;
    fast.bandwidth_gbps = 3200;
    const double gain = hbm_rate(fast, 64, 1 << 20, 2) / hbm_rate(slow, 64, 1 << 20, 2);
    CHECK(gain > 1.7);
    CHECK(gain <= 2.0);
    CHECK(hbm_rate(fast, 64, 1 << 20, 0) / hbm_rate(slow, 64, 1 << 20, 0) == Approx(2.0).epsilon(0.01));
}

TEST_CASE("Hbm: latency is the base when idle and grows with load", "[models][hbm]") {
    HbmParams h;
    Hbm idle(h);
    CHECK(idle.latency_ps() == 300'000);
    Hbm light(h), heavy(h);
    light.add(0, 1 << 20, false, 0.2, 0);  // one engine at 200 GB/s of 1472
    for (std::uint32_t i = 0; i < 64; ++i) heavy.add(0, 1 << 20, false, 1.0, i);
    const std::uint64_t l = light.latency_ps(), hv = heavy.latency_ps();
    INFO("light " << l << " ps, heavy " << hv << " ps");
    CHECK(l > 300'000);
    CHECK(hv > l);
    CHECK(hv < 400'000);  // a queueing term, not a second bandwidth model
}

// ---------------------------------------------------------------------------
// TilePipeline, driven by a fake host with its own discrete-event clock.

namespace {

struct FakeHost : TilePipeline::Host {
    using StageTime = std::function<std::uint64_t(int stage, std::uint64_t tile)>;  // 0 = no work

    TilePipeline pipe;
    StageTime time_of;
    int stages = 0;
    int depth = 2;
    std::uint32_t port_mask = 0;  // stages sharing one port
    std::uint64_t now = 0;
    std::uint64_t finish = 0;
    // (time, seq, stage) of running stages.
    std::priority_queue<std::tuple<std::uint64_t, std::uint64_t, int>,
                        std::vector<std::tuple<std::uint64_t, std::uint64_t, int>>, std::greater<>>
        agenda;
    std::uint64_t seq = 0;
    std::vector<std::uint64_t> started, finished;  // per stage, with work or not
    std::vector<std::uint64_t> max_in_flight;      // per boundary s|s+1: started at s, not done at s+1
    std::vector<std::vector<std::uint64_t>> start_times;  // [stage][tile]
    std::vector<int> running;
    bool recheck = false;  // kick again after every kick: it must start nothing

    FakeHost(int s, int d, StageTime t) : time_of(std::move(t)), stages(s), depth(d) {
        started.assign(s, 0);
        finished.assign(s, 0);
        max_in_flight.assign(s, 0);
        start_times.assign(s, {});
        running.assign(s, 0);
    }

    bool has_work(int stage, std::uint64_t tile) override { return time_of(stage, tile) != 0; }

    bool begin_stage(int stage, std::uint64_t tile) override {
        CHECK(tile == started[stage]);  // tiles enter each stage in order
        CHECK(running[stage] == 0);     // one tile per stage at a time
        ++started[stage];
        start_times[stage].push_back(now);
        if (stage + 1 < stages) {
            const std::uint64_t in_flight = started[stage] - finished[stage + 1];
            max_in_flight[stage] = std::max(max_in_flight[stage], in_flight);
        }
        if (stage > 0) CHECK(finished[stage - 1] > tile);  // input produced
        const std::uint64_t t = time_of(stage, tile);
        if (t == 0) {
            ++finished[stage];
            return false;
        }
        running[stage] = 1;
        agenda.emplace(now + t, seq++, stage);
        return true;
    }

    // Runs to completion, returns the finish time.
    std::uint64_t run(std::uint64_t tiles) {
        pipe.reset(stages, tiles, depth, port_mask);
        pipe.kick(*this);
        kicked_again();
        while (!pipe.finished()) {
            REQUIRE(!agenda.empty());
            const auto [t, sq, stage] = agenda.top();
            agenda.pop();
            now = t;
            running[stage] = 0;
            ++finished[stage];
            pipe.stage_done(*this, stage);
            kicked_again();
        }
        CHECK(agenda.empty());
        return now;
    }

    void kicked_again() {
        if (!recheck) return;
        const std::vector<std::uint64_t> before = started;
        pipe.kick(*this);
        CHECK(started == before);
    }
};

}  // namespace

TEST_CASE("TilePipeline: equal stages finish after (N + S - 1) stage times", "[models][pipeline]") {
    const std::uint64_t T = 100;
    for (int S : {1, 2, 3, 4}) {
        for (std::uint64_t N : {1u, 2u, 5u, 16u}) {
            FakeHost h(S, 2, [&](int, std::uint64_t) { return T; });
            INFO("S = " << S << ", N = " << N);
            CHECK(h.run(N) == (N + static_cast<std::uint64_t>(S) - 1) * T);
            for (int s = 0; s < S; ++s) CHECK(h.started[s] == N);
            // Classic pipeline diagram: tile t enters stage s at (t + s) T.
            for (int s = 0; s < S; ++s)
                for (std::uint64_t t = 0; t < N; ++t) CHECK(h.start_times[s][t] == (t + static_cast<std::uint64_t>(s)) * T);
        }
    }
}

TEST_CASE("TilePipeline: steady state costs the slowest stage plus fill and drain", "[models][pipeline]") {
    // Stage times 1, 2, 5, 1 over 10 tiles: stage 2 is the bottleneck and runs
    // back to back from t = 1 + 2 = 3: 3 + 10 * 5 + 1 (drain) = 54.
    const std::uint64_t times[] = {1, 2, 5, 1};
    FakeHost h(4, 2, [&](int s, std::uint64_t) { return times[s]; });
    CHECK(h.run(10) == 54);
    // Upstream of the bottleneck the buffers fill to the depth, never beyond.
    CHECK(h.max_in_flight[0] == 2);
    CHECK(h.max_in_flight[1] == 2);
}

TEST_CASE("TilePipeline: the buffer depth limits how far a stage runs ahead", "[models][pipeline]") {
    // Two stages, producer 1, consumer 10, 5 tiles.
    SECTION("depth 2 (double buffering)") {
        FakeHost h(2, 2, [](int s, std::uint64_t) { return s == 0 ? 1u : 10u; });
        CHECK(h.run(5) == 1 + 5 * 10);
        CHECK(h.max_in_flight[0] == 2);
        // Tile 2 enters stage 0 only when stage 1 has finished tile 0 (t = 11).
        CHECK(h.start_times[0] == std::vector<std::uint64_t>{0, 1, 11, 21, 31});
    }
    SECTION("depth 3") {
        FakeHost h(2, 3, [](int s, std::uint64_t) { return s == 0 ? 1u : 10u; });
        CHECK(h.run(5) == 1 + 5 * 10);
        CHECK(h.max_in_flight[0] == 3);
        CHECK(h.start_times[0] == std::vector<std::uint64_t>{0, 1, 2, 11, 21});
    }
    SECTION("depth 1 (single buffer) serialises equal stages") {
        // Stage 0 may start tile t only after stage 1 finished tile t-1:
        // tile t at stage 0 from 2tT, at stage 1 from (2t+1)T -> 2NT.
        FakeHost h(2, 1, [](int, std::uint64_t) { return 10u; });
        CHECK(h.run(4) == 2 * 4 * 10);
        CHECK(h.max_in_flight[0] == 1);
    }
}

TEST_CASE("TilePipeline: a port stage without work on a tile does not wait for the port", "[models][pipeline]") {
    // A Cube task's MTE2 (stage 0, the bottleneck at 10 per tile) and
    // FixPipe (stage 3) share the GM port; FixPipe has work only on the last
    // K step. Its empty tiles pass at once, so MTE2 runs back to back: the
    // last load ends at 8 x 10, then MTE1 1, M 3 and the drain 5 -> 89.
    // (When the empty FixPipe tiles waited for a free port, the busy MTE2
    // held them, M ran out of buffers and MTE2 stalled: 98, 10% slower.)
    const std::uint64_t times[] = {10, 1, 3, 5};
    FakeHost h(4, 2, [&](int s, std::uint64_t t) { return s == 3 && t != 7 ? 0u : times[s]; });
    h.port_mask = 0b1001;
    CHECK(h.run(8) == 89);
    CHECK(h.start_times[0] == std::vector<std::uint64_t>{0, 10, 20, 30, 40, 50, 60, 70});
    // A port stage with work still waits: FixPipe on every tile takes the
    // port between loads, so the port moves 8 x (10 + 5) bytes-times.
    FakeHost w(4, 2, [&](int s, std::uint64_t) { return times[s]; });
    w.port_mask = 0b1001;
    CHECK(w.run(8) >= 8 * (10 + 5));
}

TEST_CASE("TilePipeline: a kick leaves no stage that could start", "[models][pipeline]") {
    // kick stops once a pass completes only the last stage at once (a
    // FixPipe with no work on this K step): that frees a buffer only for the
    // stages the pass looks at after it. So a kick right after a kick must
    // start nothing, however the stages' work, the buffers' depth, the
    // stages sharing the port and the empty steps fall: costs from a fixed
    // hash of stage and tile, the last stage empty on most tiles, some empty
    // steps before it too.
    for (const int stages : {3, 4})
        for (const int depth : {1, 2, 3})
            for (const std::uint32_t ports : {0b0000u, 0b1001u, 0b0011u, 0b0101u, 0b0110u, 0b1000u, 0b0100u})
                for (const std::uint64_t salt : {1u, 7u, 23u, 101u}) {
                    const auto time = [salt, stages](int s, std::uint64_t t) -> std::uint64_t {
                        const std::uint64_t h = (t * 2654435761u + static_cast<std::uint64_t>(s) * 40503u + salt) % 97;
                        if (s == stages - 1 && t % 4 != 3) return 0;  // a store on the last K step only
                        if (h < 9) return 0;                          // an empty step elsewhere
                        return 1 + h % (s == 2 ? 13 : 7);
                    };
                    FakeHost h(stages, depth, time);
                    h.port_mask = ports & ((1u << stages) - 1);
                    h.recheck = true;
                    CAPTURE(stages, depth, ports, salt);
                    h.run(200);
                    for (int s = 0; s < stages; ++s) CHECK(h.started[s] == 200);
                }
}

TEST_CASE("TilePipeline: stages without work complete at once", "[models][pipeline]") {
    // Operands resident: stage 0 has no work; the other 3 stages form an
    // (N + 3 - 1) T pipeline.
    const std::uint64_t T = 7;
    FakeHost h(4, 2, [&](int s, std::uint64_t) { return s == 0 ? 0u : T; });
    CHECK(h.run(6) == (6 + 3 - 1) * T);
    // Work only on some tiles (e.g. FixPipe on the last k tile of each group of 4).
    FakeHost g(2, 2, [&](int s, std::uint64_t t) { return s == 1 && t % 4 != 3 ? 0u : T; });
    CHECK(g.run(8) == 8 * T + T);
    // No work anywhere: finished immediately after reset + kick.
    FakeHost z(3, 2, [](int, std::uint64_t) { return 0u; });
    CHECK(z.run(5) == 0);
}

// ---------------------------------------------------------------------------
// Intervals and overlap (docs/design.md §4.4).

TEST_CASE("intervals: merge, length, intersection, overlap ratio", "[models][intervals]") {
    const std::vector<Interval> a = merge_intervals({{5, 10}, {0, 3}, {2, 4}, {10, 12}, {7, 7}, {8, 9}});
    // {0,3}+{2,4} overlap, {5,10}+{10,12} touch, {7,7} is empty, {8,9} inside.
    CHECK(a == std::vector<Interval>{{0, 4}, {5, 12}});
    CHECK(total_length(a) == 11);
    const std::vector<Interval> b = merge_intervals({{3, 6}, {11, 23}});
    CHECK(total_length(b) == 15);
    // [3,4) + [5,6) + [11,12) = 3.
    CHECK(intersection_length(a, b) == 3);
    CHECK(intersection_length(b, a) == 3);
    CHECK(overlap_ratio(a, b) == Approx(3.0 / 11.0));
    CHECK(overlap_ratio(b, a) == Approx(3.0 / 11.0));
}

TEST_CASE("intervals: overlap ratio edge cases", "[models][intervals]") {
    const std::vector<Interval> whole{{0, 100}};
    const std::vector<Interval> inside = merge_intervals({{10, 20}, {30, 40}});
    CHECK(overlap_ratio(whole, inside) == Approx(1.0));   // min is the inner set: 20 / 20
    CHECK(overlap_ratio(whole, whole) == Approx(1.0));
    CHECK(overlap_ratio(whole, {}) == 0.0);
    CHECK(overlap_ratio({}, {}) == 0.0);
    CHECK(overlap_ratio({{0, 10}}, {{10, 20}}) == 0.0);  // touching is not overlapping
    // Half-overlapping equal lengths: [0,10) vs [5,15) -> 5 / 10.
    CHECK(overlap_ratio({{0, 10}}, {{5, 15}}) == Approx(0.5));
    // The §1.1 case shape: Cube busy 0..100, Vector busy 50..150 and 200..250:
    // |C ∩ V| = 50, min(100, 150) = 100 -> 0.5.
    CHECK(overlap_ratio({{0, 100}}, merge_intervals({{200, 250}, {50, 150}})) == Approx(0.5));
    // Many adjacent busy slices of one core merge into one interval.
    std::vector<Interval> slices;
    for (std::uint64_t i = 0; i < 100; ++i) slices.emplace_back(i * 10, i * 10 + 10);
    CHECK(merge_intervals(slices) == std::vector<Interval>{{0, 1000}});
}

// ---------------------------------------------------------------------------
// Cube: M-pipe cycles and tiling.

namespace {
// The chip layer's formulas under the names these cases were written with,
// taking a task's kernel parameters.
using npusim::timing::MatmulTiling;
MatmulTiling plan_matmul(const KernelParams& p, const ChipParams& c) {
    return npusim::timing::plan_matmul(npusim::timing::MatmulShape{p.m, p.n, p.k, p.dtype, p.a_bytes}, c);
}
std::uint64_t cube_cycles(const ChipParams& c, DType dt, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
    return npusim::timing::mmad_cycles(c, dt, m, k, n);
}
std::uint64_t vector_chunk_bytes(const KernelParams& p, const ChipParams& c) {
    npusim::timing::VectorShape s;
    s.bytes = p.bytes, s.out_bytes = p.out_bytes, s.dtype = p.dtype, s.row_bytes = p.row_bytes;
    return npusim::timing::vector_chunk_bytes(s, c);
}
}  // namespace

TEST_CASE("cube_cycles: ceil(m/16)·ceil(k/16)·ceil(n/16), k in 32s for int8", "[models][cube]") {
    const ChipParams chip = chip_from("ax300");
    CHECK(cube_cycles(chip, DType::fp16, 16, 16, 16) == 1);
    CHECK(cube_cycles(chip, DType::fp16, 17, 16, 16) == 2);
    CHECK(cube_cycles(chip, DType::fp16, 128, 128, 128) == 512);
    CHECK(cube_cycles(chip, DType::bf16, 128, 128, 128) == 512);
    CHECK(cube_cycles(chip, DType::fp16, 100, 1000, 50) == 7 * 63 * 4);  // 1764
    CHECK(cube_cycles(chip, DType::int8, 100, 1000, 50) == 7 * 32 * 4);  // 896
    CHECK(cube_cycles(chip, DType::int8, 16, 32, 16) == 1);
    CHECK(cube_cycles(chip, DType::int8, 16, 33, 16) == 2);
    CHECK(cube_cycles(chip, DType::int8, 128, 128, 128) == 256);  // half of fp16
}

TEST_CASE("plan_matmul: base tiles on ax300 and a2", "[models][cube]") {
    const ChipParams ax = chip_from("ax300");  // L0A/L0B 64 KB, L0C 256 KB, L1 1024 KB
    KernelParams p;
    SECTION("fp16 128x1024x128: k split into 128-deep tiles") {
        p.m = 128, p.k = 1024, p.n = 128;
        const MatmulTiling t = plan_matmul(p, ax);
        // L0A half = 32 KiB: k0 <= 32768 / (128 * 2) = 128.
        CHECK(t.m0 == 128);
        CHECK(t.k0 == 128);
        CHECK(t.kb == 8);
        CHECK(t.elt == 2);
        // Of the blocks, two columns (80 + 48) rank fastest: a shorter first
        // MTE1 and a shorter last drain than one 128 x 128 block, the same
        // Cube work. Not slower than that block by the schedule it ranks by.
        CHECK((t.mb == 1 && t.nb == 2));
        const timing::MatmulShape s{p.m, p.n, p.k, p.dtype, 0};
        MatmulTiling one{};
        one.m0 = one.m1 = 128, one.n0 = one.n1 = 128, one.k0 = one.k1 = 128;
        one.a_panel_reused = one.b_reused = true;
        REQUIRE(timing::adopt_matmul_tiling(s, one, ax));
        CHECK(timing::matmul_plan_cycles(s, t, ax, {}) < timing::matmul_plan_cycles(s, one, ax, {}));
    }
    SECTION("int8 128x1024x128: twice as deep, k0 in 32s") {
        p.m = 128, p.k = 1024, p.n = 128, p.dtype = DType::int8;
        const MatmulTiling t = plan_matmul(p, ax);
        CHECK(t.k0 == 256);  // 32768 / (128 * 1)
        CHECK(t.kb == 4);
        CHECK(t.elt == 1);
    }
    SECTION("the ConvBNReLU sub-task shape 1568x576x16 with a_bytes") {
        p.m = 1568, p.k = 576, p.n = 16, p.a_bytes = 215040;
        const MatmulTiling t = plan_matmul(p, ax);
        // Base tile: L0A (32 KiB per buffer) holds m0 x 4 fractals of K.
        CHECK(t.m0 * t.k0 * 2 <= 32768);
        CHECK(t.m0 * 64 * 2 <= 32768);
        CHECK(t.n0 == 16);
        CHECK(t.mb == (1568 + t.m1 - 1) / t.m1);
        CHECK(t.nb == 1);
        CHECK(t.b_reused);               // 576*16*2 = 18432: all of B stays in L1
        CHECK(t.a_gm_ratio == Approx(215040.0 / (1568.0 * 576 * 2)));
    }
    SECTION("a small L0C shrinks n0 first, then m0") {
        ChipParams c = ax;
        c.buffers.l0c_kb = 32;  // 16 KiB per buffer: 64 x 64 x 4 B, halving the longer side
        p.m = 1024, p.k = 64, p.n = 1024;
        MatmulTiling t = plan_matmul(p, c);
        CHECK(t.m0 == 64);
        CHECK(t.n0 == 64);
        c.buffers.l0c_kb = 2;  // 1 KiB per buffer: only 16 x 16 x 4 B fits
        t = plan_matmul(p, c);
        CHECK(t.m0 == 16);
        CHECK(t.n0 == 16);
    }
    SECTION("a2: L0C 128 KB holds a 128x128 fp32 accumulator per buffer") {
        const ChipParams a2 = chip_from("a2");
        p.m = 4096, p.k = 4096, p.n = 4096;
        const MatmulTiling t = plan_matmul(p, a2);
        CHECK(t.m0 == 128);
        CHECK(t.n0 == 128);
        CHECK(t.k0 == 128);
        // L1 blocks of several base tiles whose accumulators stay in L0C
        // across K steps: more reuse per byte than one base tile.
        CHECK(t.kb > 1);
        CHECK(t.m1 * t.n1 * 4 <= 128 * 1024);
        CHECK(t.m1 * t.n1 > t.m0 * t.n0);
        CHECK(2 * (t.m1 + t.n1) * t.k1 * 2 <= 512 * 1024);  // double-buffered in L1
        CHECK_FALSE(t.a_panel_reused);  // 4096 x 4096 operands cannot stay in L1
        CHECK_FALSE(t.b_reused);
    }
}

TEST_CASE("plan_matmul: tiles fit L0 and their M cycles add up to the formula", "[models][cube]") {
    for (const char* name : {"ax300", "a2"}) {
        const ChipParams chip = chip_from(name);
        const std::uint64_t l0a = static_cast<std::uint64_t>(chip.buffers.l0a_kb) * 1024 / 2;
        const std::uint64_t l0b = static_cast<std::uint64_t>(chip.buffers.l0b_kb) * 1024 / 2;
        const std::uint64_t l0c = static_cast<std::uint64_t>(chip.buffers.l0c_kb) * 1024 / 2;
        for (DType dt : {DType::fp16, DType::int8})
            for (std::uint64_t m : {1u, 16u, 100u, 1568u, 3000u})
                for (std::uint64_t k : {1u, 32u, 576u, 1000u, 4100u})
                    for (std::uint64_t n : {1u, 16u, 50u, 130u, 2048u}) {
                        KernelParams p;
                        p.m = m, p.k = k, p.n = n, p.dtype = dt;
                        const MatmulTiling t = plan_matmul(p, chip);
                        INFO(name << " " << to_string(dt) << " m=" << m << " k=" << k << " n=" << n);
                        const std::uint64_t sk = dt == DType::int8 ? 32 : 16;
                        const std::uint64_t elt = static_cast<std::uint64_t>(t.elt);
                        REQUIRE(t.m0 % 16 == 0);
                        REQUIRE(t.n0 % 16 == 0);
                        REQUIRE(t.k0 % sk == 0);
                        CHECK(t.m0 * t.n0 * 4 <= l0c);
                        CHECK(t.m0 * t.k0 * elt <= l0a);
                        CHECK(t.k0 * t.n0 * elt <= l0b);
                        // L1 blocks: whole fractals, at least one base tile.
                        CHECK(t.m1 % 16 == 0);
                        CHECK(t.n1 % 16 == 0);
                        CHECK(t.k1 % sk == 0);
                        CHECK(t.m1 >= t.m0);
                        CHECK(t.n1 >= t.n0);
                        CHECK(t.mb == ceil_div(m, t.m1));
                        CHECK(t.nb == ceil_div(n, t.n1));
                        CHECK(t.kb == ceil_div(k, t.k1));
                        // Sum over the block steps the core would run.
                        std::uint64_t sum = 0;
                        for (std::uint64_t mi = 0; mi < t.mb; ++mi)
                            for (std::uint64_t ni = 0; ni < t.nb; ++ni)
                                for (std::uint64_t ki = 0; ki < t.kb; ++ki)
                                    sum += cube_cycles(chip, dt, std::min(t.m1, m - mi * t.m1),
                                                       std::min(t.k1, k - ki * t.k1), std::min(t.n1, n - ni * t.n1));
                        CHECK(sum == ceil_div(m, 16) * ceil_div(k, sk) * ceil_div(n, 16));
                    }
    }
}

// ---------------------------------------------------------------------------
// Vector chunking.

TEST_CASE("vector_chunk_bytes: tile_kb, UB fit and whole repeats", "[models][vector]") {
    const ChipParams ax = chip_from("ax300");  // tile 8 KB, UB 192 KB
    const ChipParams a2 = chip_from("a2");     // tile 32 KB, UB 192 KB
    KernelParams p;
    p.bytes = 1 << 20;
    p.out_bytes = p.bytes;
    CHECK(vector_chunk_bytes(p, ax) == 8192);
    CHECK(vector_chunk_bytes(p, a2) == 32768);
    // Output 4x the input (e.g. a widening cast): 196608 / (2 * 5) = 19660.8
    // -> 19660 -> whole 256 B repeats: 19456.
    p.out_bytes = 4 * p.bytes;
    CHECK(vector_chunk_bytes(p, a2) == 19456);
    // No output: fit = 196608 / 2 = 98304, tile wins.
    p.out_bytes = 0;
    CHECK(vector_chunk_bytes(p, a2) == 32768);
    // Smaller than a tile: rounded down to whole repeats, or kept if < 1 repeat.
    p.bytes = 1000, p.out_bytes = 1000;
    CHECK(vector_chunk_bytes(p, a2) == 768);
    p.bytes = 100, p.out_bytes = 100;
    CHECK(vector_chunk_bytes(p, a2) == 100);
    // A smaller UB shrinks the chunk: 16 KB UB, out = in: 16384 / 4 = 4096.
    ChipParams small = a2;
    small.buffers.ub_kb = 16;
    p.bytes = 1 << 20, p.out_bytes = 1 << 20;
    CHECK(vector_chunk_bytes(p, small) == 4096);
}

// ---------------------------------------------------------------------------
// Task-stream reader and writer.

namespace {

TaskStream parse(const std::string& text, const std::string& label = "t.jsonl") {
    std::istringstream in(text);
    return parse_task_stream(in, label);
}

std::string parse_error(const std::string& text) {
    try {
        parse(text);
    } catch (const InputError& e) {
        return e.what();
    }
    FAIL("no InputError for:\n" << text);
    return {};
}

const std::string kGoodTask =
    R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1024}})";

}  // namespace

TEST_CASE("stream_reader: defaults and fields", "[models][stream]") {
    const TaskStream ts = parse(
        "{\"event\":\"e\",\"count\":2}\n"
        "\n"
        R"({"id":"mm","core_type":"cube","kernel":"matmul","stream":"c","wait":[],"signal":["e"],"params":{"m":64,"n":32,"k":128}})"
        "\n"
        R"({"id":7,"core_type":"vector","kernel":"vector","stream":"v","wait":["e"],"signal":["f"],"priority":3,"core":1,"op":"relu","tile":"t0","params":{"bytes":4096,"cycles_per_repeat":2.5,"src":"ub","dst":"hbm","out_addr":4096}})"
        "\n"
        R"({"id":"cp","core_type":"vector","kernel":"copy","stream":"v","wait":[],"signal":[],"params":{"bytes":100,"addr":0,"reads":[{"space":"hbm","addr":0,"bytes":100}]}})"
        "\n");
    REQUIRE(ts.tasks.size() == 3);
    CHECK(ts.file == "t.jsonl");
    CHECK(ts.streams == std::vector<std::string>{"c", "v"});
    REQUIRE(ts.events.size() == 2);
    CHECK(ts.events[0].id == "e");
    CHECK(ts.events[0].count == 2);
    CHECK(ts.events[0].line == 1);
    CHECK(ts.events[1].id == "f");
    CHECK(ts.events[1].count == 1);
    CHECK(ts.events[1].line == 0);  // implicit

    const Task& mm = ts.tasks[0];
    CHECK(mm.line == 3);
    CHECK(mm.core_type == CoreType::cube);
    CHECK(mm.params.dtype == DType::fp16);
    CHECK(mm.params.src == Space::hbm);
    CHECK(mm.params.dst == Space::hbm);
    CHECK(mm.core == -1);
    CHECK(mm.signal == std::vector<EventIndex>{0});

    const Task& v = ts.tasks[1];
    CHECK(v.id == "7");  // integer ids become strings
    CHECK(v.priority == 3);
    CHECK(v.core == 1);
    CHECK(ts.name(v.op) == "relu");
    CHECK(ts.name(v.tile) == "t0");
    CHECK(v.params.out_bytes == 4096);  // defaults to bytes
    CHECK(v.params.cycles_per_repeat == 2.5);
    CHECK(v.params.src == Space::ub);
    CHECK(v.params.has_out_addr);
    CHECK_FALSE(v.params.has_addr);

    const Task& cp = ts.tasks[2];
    CHECK(cp.params.out_bytes == 100);
    CHECK(cp.params.cycles_per_repeat == 1.0);
    CHECK(cp.params.has_addr);
    REQUIRE(cp.reads.size() == 1);
    CHECK(cp.reads[0].bytes == 100);
}

TEST_CASE("stream_reader: errors name file, line, task and key", "[models][stream]") {
    CHECK_THAT(parse_error(kGoodTask + "\n{not json\n"), Contains("t.jsonl:2:") && Contains("invalid JSON"));
    CHECK_THAT(parse_error("[1,2]\n"), Contains("t.jsonl:1:") && Contains("expected a JSON object"));
    CHECK_THAT(parse_error(""), Contains("t.jsonl") && Contains("no tasks"));
    CHECK_THAT(parse_error("{\"event\":\"e\",\"count\":2}\n"), Contains("no tasks"));

    // Unknown keys get a did-you-mean.
    CHECK_THAT(
        parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"singal":[],"params":{"bytes":1}})"),
        Contains("t.jsonl:1:") && Contains("singal") && Contains("unknown key") && Contains("did you mean 'signal'"));
    CHECK_THAT(
        parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytse":1}})"),
        Contains("task 'a'") && Contains("params.bytse") && Contains("did you mean 'bytes'"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1,"src":"hmb"}})"),
               Contains("params.src") && Contains("hbm | l2 | ub | l1") && Contains("did you mean 'hbm'"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"cube","kernel":"matmul","stream":"s","wait":[],"signal":[],"params":{"m":1,"n":1,"k":1,"dtype":"fp8"}})"),
               Contains("params.dtype") && Contains("fp16"));

    // Missing required keys.
    CHECK_THAT(parse_error(R"({"core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1}})"),
               Contains("missing 'id'"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","wait":[],"signal":[],"params":{"bytes":1}})"),
               Contains("task 'a'") && Contains("missing 'stream'"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"cube","kernel":"matmul","stream":"s","wait":[],"signal":[],"params":{"m":1,"n":1}})"),
               Contains("params.k: missing"));

    // Wrong types and ranges.
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"cube","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1}})"),
               Contains("kernel 'vector' runs on a vector core") && Contains("'cube'"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":"e","signal":[],"params":{"bytes":1}})"),
               Contains("wait: expected an array"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":-5}})"),
               Contains("params.bytes: expected an integer"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1.5}})"),
               Contains("params.bytes: expected an integer"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1,"cycles_per_repeat":0}})"),
               Contains("params.cycles_per_repeat: expected a number > 0"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"priority":1.5,"params":{"bytes":1}})"),
               Contains("priority: expected an integer"));
    CHECK_THAT(parse_error(R"({"id":"a","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":1,"reads":[{"space":"hbm","addr":0}]}})"),
               Contains("params.reads[0].bytes: missing"));

    // Duplicates.
    CHECK_THAT(parse_error(kGoodTask + "\n" + kGoodTask + "\n"),
               Contains("t.jsonl:2:") && Contains("duplicate task id (first on line 1)"));
    CHECK_THAT(parse_error("{\"event\":\"e\",\"count\":2}\n{\"event\":\"e\",\"count\":3}\n" + kGoodTask),
               Contains("t.jsonl:2:") && Contains("event 'e' declared twice (first on line 1)"));
    CHECK_THAT(parse_error("{\"event\":\"e\",\"count\":0}\n" + kGoodTask), Contains("count: expected an integer in [1,"));
}

TEST_CASE("stream_reader: a vector task's dtype and row_bytes", "[models][stream][vector]") {
    const std::string head = R"({"id":"sm","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":327680,)";
    const TaskStream ts = parse(head + R"("cycles_per_repeat":6,"dtype":"fp32","row_bytes":160}})" "\n" + kGoodTask + "\n");
    CHECK(ts.tasks[0].params.dtype == DType::fp32);
    CHECK(ts.tasks[0].params.row_bytes == 160);
    CHECK(ts.tasks[1].params.dtype == DType::fp16);  // defaults: fp16, contiguous
    CHECK(ts.tasks[1].params.row_bytes == 0);
    // Written back only when set, and read back the same.
    std::ostringstream out;
    write_task_stream(ts, out);
    CHECK_THAT(out.str(), Contains(R"("dtype":"fp32")") && Contains(R"("row_bytes":160)"));
    const TaskStream back = parse(out.str());
    CHECK(back.tasks[0].params.dtype == DType::fp32);
    CHECK(back.tasks[0].params.row_bytes == 160);
    CHECK(back.tasks[1].params.row_bytes == 0);
    // A row of a partial element, a zero row, an unknown dtype: errors naming the task and key.
    CHECK_THAT(parse_error(head + R"("dtype":"fp32","row_bytes":162}})"),
               Contains("t.jsonl:1:") && Contains("task 'sm'") && Contains("params.row_bytes") && Contains("fp32"));
    CHECK_THAT(parse_error(head + R"("row_bytes":0}})"), Contains("task 'sm'") && Contains("params.row_bytes"));
    CHECK_THAT(parse_error(head + R"("dtype":"fp23"}})"), Contains("params.dtype") && Contains("fp32") && Contains("did you mean"));
    // A copy has no V work: no rows.
    CHECK_THAT(parse_error(R"({"id":"c","core_type":"vector","kernel":"copy","stream":"s","wait":[],"signal":[],"params":{"bytes":64,"row_bytes":32}})"),
               Contains("params.row_bytes") && Contains("unknown key"));
}

TEST_CASE("stream_reader: write_task_stream round trip", "[models][stream]") {
    const std::string text =
        R"({"id":"mm","core_type":"cube","kernel":"matmul","stream":"c","wait":[],"signal":["mm_done"],"op":"conv","tile":"oc0","params":{"m":1568,"n":16,"k":576,"dtype":"int8","a_bytes":215040,"src":"l2","dst":"l1","addr":268435456,"out_addr":805306368,"l1_bytes":4096,"reads":[{"space":"hbm","addr":268435456,"bytes":200704}],"writes":[{"space":"hbm","addr":805306368,"bytes":50176}]}})"
        "\n{\"event\":\"three\",\"count\":3}\n"
        R"({"id":"v0","core_type":"vector","kernel":"vector","stream":"v","wait":["mm_done"],"signal":["three"],"priority":-2,"core":3,"params":{"bytes":8192,"out_bytes":4096,"cycles_per_repeat":1.5,"src":"ub","dst":"hbm","ub_bytes":16384}})"
        "\n"
        R"({"id":"c0","core_type":"vector","kernel":"copy","stream":"v","wait":[],"signal":["three","three"],"params":{"bytes":65536,"src":"hbm","dst":"l2"}})"
        "\n"
        R"({"id":"s0","core_type":"scalar","kernel":"scalar","stream":"ctl","wait":["three"],"signal":[],"params":{"cycles":500}})"
        "\n";
    const TaskStream a = parse(text, "a.jsonl");
    std::ostringstream out1;
    write_task_stream(a, out1);
    const TaskStream b = parse(out1.str(), "b.jsonl");

    // Same tasks, fields, streams and event semantics (events compared by id:
    // the writer puts declarations first, so indices may differ).
    REQUIRE(b.tasks.size() == a.tasks.size());
    CHECK(b.streams == a.streams);
    auto event_ids = [](const TaskStream& ts, const std::vector<EventIndex>& v) {
        std::vector<std::string> ids;
        for (auto e : v) ids.push_back(ts.events[e].id);
        return ids;
    };
    auto counts = [](const TaskStream& ts) {
        std::map<std::string, std::uint32_t> m;
        for (const auto& e : ts.events) m[e.id] = e.count;
        return m;
    };
    CHECK(counts(b) == counts(a));
    for (std::size_t i = 0; i < a.tasks.size(); ++i) {
        const Task& x = a.tasks[i];
        const Task& y = b.tasks[i];
        INFO("task " << x.id);
        CHECK(y.id == x.id);
        CHECK(y.core_type == x.core_type);
        CHECK(y.kernel == x.kernel);
        CHECK(b.streams[y.stream] == a.streams[x.stream]);
        CHECK(y.priority == x.priority);
        CHECK(y.core == x.core);
        CHECK(b.name(y.op) == a.name(x.op));
        CHECK(b.name(y.tile) == a.name(x.tile));
        CHECK(event_ids(b, y.wait) == event_ids(a, x.wait));
        CHECK(event_ids(b, y.signal) == event_ids(a, x.signal));
        const KernelParams &p = x.params, &q = y.params;
        CHECK((q.m == p.m && q.n == p.n && q.k == p.k && q.dtype == p.dtype && q.a_bytes == p.a_bytes));
        CHECK((q.bytes == p.bytes && q.out_bytes == p.out_bytes && q.cycles_per_repeat == p.cycles_per_repeat));
        CHECK(q.cycles == p.cycles);
        CHECK((q.src == p.src && q.dst == p.dst));
        CHECK((q.has_addr == p.has_addr && q.addr == p.addr));
        CHECK((q.has_out_addr == p.has_out_addr && q.out_addr == p.out_addr));
        CHECK((q.ub_bytes == p.ub_bytes && q.l1_bytes == p.l1_bytes));
        REQUIRE(y.reads.size() == x.reads.size());
        REQUIRE(y.writes.size() == x.writes.size());
        for (std::size_t r = 0; r < x.reads.size(); ++r)
            CHECK((y.reads[r].space == x.reads[r].space && y.reads[r].addr == x.reads[r].addr &&
                   y.reads[r].bytes == x.reads[r].bytes &&
                   y.reads[r].stride == x.reads[r].stride && y.reads[r].rows == x.reads[r].rows));
        for (std::size_t r = 0; r < x.writes.size(); ++r)
            CHECK((y.writes[r].space == x.writes[r].space && y.writes[r].addr == x.writes[r].addr &&
                   y.writes[r].bytes == x.writes[r].bytes &&
                   y.writes[r].stride == x.writes[r].stride && y.writes[r].rows == x.writes[r].rows));
    }
    // Writing is a fixed point after one round.
    std::ostringstream out2;
    write_task_stream(b, out2);
    CHECK(out2.str() == out1.str());
}

TEST_CASE("stream_reader: the bundled traces read and round-trip", "[models][stream]") {
    for (const char* name : {"convbnrelu_op", "convbnrelu_tile", "copy_48core"}) {
        INFO(name);
        const TaskStream a = read_task_stream(kSrc + "/traces/" + name + ".jsonl");
        CHECK(!a.tasks.empty());
        std::ostringstream o1, o2;
        write_task_stream(a, o1);
        const TaskStream b = parse(o1.str(), "rt.jsonl");
        write_task_stream(b, o2);
        CHECK(o1.str() == o2.str());
        CHECK(b.tasks.size() == a.tasks.size());
    }
    CHECK_THROWS_AS(read_task_stream(kSrc + "/traces/does_not_exist.jsonl"), InputError);
}

TEST_CASE("L2Cache: blocks whole cache sizes apart keep their own tags, however far apart in memory", "[models][l2]") {
    // 64 sets of 4 ways of 64 B: a tag names a block's page (64 blocks),
    // so blocks pages apart may share a set and must still be told apart.
    L2Geometry g;
    g.capacity_bytes = 16384;
    g.line_bytes = 64;
    g.ways = 4;
    g.slice_block_bytes = 64;
    L2Cache l2(g);
    REQUIRE(l2.sets() == 64);
    const std::uint64_t page = 64 * 64;  // bytes of one page of blocks
    // Up to 2^44: pages below 2^31 (their tag is the page + 1); from 2^43
    // on: pages of 2^31 and more, numbered in order of first use.
    const std::uint64_t far[] = {0,
                                 page,
                                 7 * page,
                                 std::uint64_t{1} << 40,
                                 (std::uint64_t{1} << 43) + page,
                                 std::uint64_t{1} << 44,
                                 (std::uint64_t{1} << 62) + 5 * page};
    for (const std::uint64_t a : far) CHECK(hits(l2, a, 64) == 0);
    for (const std::uint64_t a : far) CHECK(hits(l2, a, 64) == 64);
    CHECK(l2.resident_lines() == 7);
    CHECK(hits(l2, 2 * page, 64) == 0);  // a page never read is not mistaken for one that was
    CHECK(hits(l2, (std::uint64_t{1} << 62) + 6 * page, 64) == 0);
}

// The use stamps are 32-bit: every 2^32 - 2 lookups they are renumbered
// within each set. A stream that mixes reuse, scans that thrash it and
// writes (DIP leaders and followers, bimodal insertion, eager clean) gives
// the same counts whether its stamps are renumbered every 97 lookups or never.
TEST_CASE("L2Cache: renumbering the use stamps changes no hit, miss, eviction or clean", "[models][l2]") {
    const auto run = [](std::uint32_t stamp_limit) {
        L2Geometry g;
        g.capacity_bytes = 1 << 20;  // 128 sets of 16 ways of 512 B lines in 1 KB blocks: leader sets
        g.line_bytes = 512;
        g.ways = 16;
        g.slices = 4;
        g.slice_block_bytes = 1024;
        g.stamp_limit = stamp_limit;
        L2Cache l2(g);
        std::uint64_t state = 12345, cleaned = 0, hit_bytes = 0, dirty_bytes = 0;
        for (int i = 0; i < 200000; ++i) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            const std::uint64_t r = state >> 33;
            // A hot 512 KB working set, a cold 4 MB scan, and writes.
            const std::uint64_t addr = (r % 3 == 0 ? (r >> 4) % (4u << 20) : (r >> 4) % (512u << 10)) & ~std::uint64_t{511};
            const L2Access a = (r % 7 == 0) ? l2.write(addr, 1536) : l2.read(addr, 1024);
            hit_bytes += a.hit_bytes;
            dirty_bytes += a.dirty_evicted_bytes;
            if (i % 64 == 0) cleaned += l2.clean(64 << 10);
        }
        const L2Counters& c = l2.counters();
        return std::vector<std::uint64_t>{c.hits, c.misses, c.write_hits, c.write_misses, c.evictions, c.dirty_evictions,
                                          c.cleaned, cleaned, hit_bytes, dirty_bytes, l2.resident_lines(), l2.dirty_lines()};
    };
    const auto never = run(0), often = run(97);
    CHECK(never == often);
    CHECK(never[0] > 0);
    CHECK(never[4] > 0);  // it did evict
    CHECK(never[7] > 0);  // and clean
}
