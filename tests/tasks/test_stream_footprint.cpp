// memory.hbm.addressed_bytes (tasks/stream_footprint.hpp): the GM a stream
// addresses, each byte once however many tasks touch it.
#include <catch2/catch.hpp>

#include "support/e2e.hpp"
#include "tasks/stream_footprint.hpp"

using namespace npusim;
using namespace npusim::test;

TEST_CASE("stream footprint: overlapping and strided GM regions count each byte once, local buffers not at all", "[tasks]") {
    TaskStream s;
    Task a;
    a.reads.push_back(Region{Space::hbm, 0, 100, 0, 1});
    a.writes.push_back(Region{Space::hbm, 50, 100, 0, 1});  // [50, 150): 50 new
    Task b;
    b.reads.push_back(Region{Space::hbm, 1000, 10, 100, 3});  // rows at 1000, 1100, 1200
    b.writes.push_back(Region{Space::ub, 0, 4096, 0, 1});     // on-core: not GM
    Task c;  // a copy named by its base addresses
    c.params.has_addr = c.params.has_out_addr = true;
    c.params.addr = 140;
    c.params.bytes = 20;  // [140, 160): 10 new
    c.params.out_addr = 5000;
    s.tasks = {a, b, c};
    CHECK(gm_addressed_bytes(s) == 150 + 30 + 10 + 20);
}

TEST_CASE("stream footprint: rows that touch, overlap or repeat, and regions repeated across tasks", "[tasks]") {
    TaskStream s;
    Task a;
    a.reads.push_back(Region{Space::hbm, 0, 64, 64, 4});      // rows touch: [0, 256)
    a.reads.push_back(Region{Space::hbm, 1000, 64, 32, 4});   // rows overlap: [1000, 1160)
    a.reads.push_back(Region{Space::hbm, 2000, 50, 0, 7});    // one row seven times: [2000, 2050)
    a.reads.push_back(Region{Space::hbm, 3000, 10, 100, 3});  // apart: 30 B
    Task b = a;                                               // the same regions again: nothing new
    b.writes.push_back(Region{Space::hbm, 3005, 10, 100, 3}); // half of each row new: 15 B
    s.tasks = {a, b};
    CHECK(gm_addressed_bytes(s) == 256 + 160 + 50 + 30 + 15);
}

TEST_CASE("stream footprint: ranks sharing one compiled stream each report it", "[tasks][e2e]") {
    TempDir tmp;
    const auto stats = run_for_stats(tmp, std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/a3-supernode.json",
                                     std::string(NPUSIM_SOURCE_DIR) + "/models/llm/deepseek_v3.json",
                                     {"chip.interconnect.ranks=8", "workload.layers=1", "workload.batch=4"});
    const auto& ranks = stats["ranks"];
    const auto first = ranks["r0"]["hbm_addressed_bytes"].get<std::uint64_t>();
    CHECK(first > 0);
    for (int r = 1; r < 8; ++r) CHECK(ranks["r" + std::to_string(r)]["hbm_addressed_bytes"] == first);
}

TEST_CASE("stream footprint: the 384 MiB copy addresses its source and its destination", "[tasks][e2e]") {
    TempDir tmp;
    const auto stats = run_for_stats(tmp, std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/a2.json",
                                     std::string(NPUSIM_SOURCE_DIR) + "/traces/copy_48core.jsonl");
    CHECK(stats["memory"]["hbm"]["addressed_bytes"] == 2 * 192ull * 1024 * 1024);
}

TEST_CASE("stream footprint: a BSND tensor's head blocks interleave row by row and cover it once", "[tasks]") {
    // k of a prefill attention as [S, heads, D]: each head's rows one strided
    // region, every head's rows between the others'; query blocks read the
    // same rows again in pieces.
    constexpr std::uint64_t kHeads = 128, kHeadBytes = 192, kTokens = 4096, kToken = kHeads * kHeadBytes;
    TaskStream s;
    for (std::uint64_t h = 0; h < kHeads; ++h) {
        Task whole;
        whole.reads.push_back(Region{Space::hbm, h * kHeadBytes, kHeadBytes, kToken, kTokens});
        s.tasks.push_back(whole);
        Task blocks;
        for (std::uint64_t q = 0; q < kTokens; q += 128)
            blocks.reads.push_back(Region{Space::hbm, q * kToken + h * kHeadBytes, kHeadBytes, kToken, 128});
        s.tasks.push_back(blocks);
    }
    Task past_end;  // a contiguous region over the tensor's last 100 B and 400 B beyond
    past_end.writes.push_back(Region{Space::hbm, kTokens * kToken - 100, 500, 0, 1});
    s.tasks.push_back(past_end);
    CHECK(gm_addressed_bytes(s) == kTokens * kToken + 400);
}

TEST_CASE("stream footprint: strided regions of different strides interleave and overlap row by row", "[tasks]") {
    TaskStream s;
    Task a;
    a.reads.push_back(Region{Space::hbm, 5000, 10, 100, 4});  // 5000, 5100, 5200, 5300: 40 B
    a.reads.push_back(Region{Space::hbm, 5050, 10, 150, 3});  // 5050, 5200 (again), 5350: 20 B new
    a.reads.push_back(Region{Space::hbm, 5115, 10, 100, 2});  // 5115, 5215: half of each row new, 10 B
    a.reads.push_back(Region{Space::hbm, 5010, 10, 100, 4});  // beside the first, row by row: 40 B
    Task b;
    b.reads.push_back(Region{Space::hbm, 7000, 40, 100, 3});  // three side by side, 120 B wide rows
    b.reads.push_back(Region{Space::hbm, 7040, 40, 100, 3});  // over a 100 B stride: [7000, 7320)
    b.reads.push_back(Region{Space::hbm, 7080, 40, 100, 3});
    b.reads.push_back(Region{Space::hbm, 8000, 10, 100, 3});  // one stride and row count, a gap
    b.reads.push_back(Region{Space::hbm, 8050, 10, 100, 3});  // between: 30 B each
    s.tasks = {a, b};
    CHECK(gm_addressed_bytes(s) == 40 + 20 + 10 + 40 + 320 + 60);
}
