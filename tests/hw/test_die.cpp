// SystemC tests of one die (docs/design.md §2, §4.3, §4.4): hand-written task
// streams run on the bundled chips, checked against numbers worked out from
// the cost formulas and the chip parameters.
//
// SystemC cannot restart in a process: every TEST_CASE here builds and runs
// at most one Die (ctest runs each case in its own process). Comparisons
// between two runs go through the npusim binary instead.
//
// Constants of the bundled chips used below (configs/chips/*.json):
//   ax300: 1.0 GHz (1 cycle = 1000 ps, so cycle counts are exact), 4 cube +
//          4 vector cores, scalar dispatch_cycles D = 32, task_start_cycles
//          S = 64, L0A/L0B 64 KB (32 KB per buffer), MTE1 512 B/cycle,
//          FixPipe 128 B/cycle (to L1/UB), vector repeat 256 B, tile 8 KB,
//          I = 16 V cycles per vector instruction (issue), at most 255
//          repeats per instruction.
//   a2:    1.85 GHz, 24 cube + 48 vector cores, HBM 1600 GB/s, L2 64 KB
//          regions, vector tile 32 KB, per-core GM port 32 B/cycle.
// A task dispatched at t runs on its core from t + D and is busy for
// S + (its pipeline), so a lone task ends at D + S + pipeline.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "stats/stats.hpp"
#include "support/e2e.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";

constexpr double D = 32;  // scalar dispatch_cycles (both chips)
constexpr double S = 64;  // task_start_cycles (both chips)
constexpr double I = 16;  // vector issue_cycles (both chips)
// The scheduling cases below time UB-resident vector tasks by repeats alone:
// without the per-instruction issue cost their arithmetic stays readable.
const std::vector<std::string> kNoIssue = {"chip.cores.vector.issue_cycles=0"};

// --- stream building -------------------------------------------------------

json task(const std::string& id, const std::string& stream, const std::vector<std::string>& wait,
          const std::vector<std::string>& signal, const std::string& kernel, json params) {
    json j;
    j["id"] = id;
    j["core_type"] = kernel == "matmul" ? "cube" : "vector";
    j["kernel"] = kernel;
    j["stream"] = stream;
    j["wait"] = wait;
    j["signal"] = signal;
    j["params"] = std::move(params);
    return j;
}

// A matmul with its operands and result resident in L1: no GM traffic. It
// carries its plan (tiling data), so these tests time the pipes the way the
// comments work them out: one base tile of the whole padded m x n, K in
// steps as deep as ax300's L0A/L0B halves hold (32 KB over the wider side).
json l1_matmul(const std::string& id, const std::string& stream, std::uint64_t m, std::uint64_t k, std::uint64_t n,
               const std::string& dtype = "fp16", const std::vector<std::string>& wait = {},
               const std::vector<std::string>& signal = {}) {
    const std::uint64_t elt = dtype == "int8" ? 1 : 2, fk = dtype == "int8" ? 32 : 16;
    const std::uint64_t m0 = (m + 15) / 16 * 16, n0 = (n + 15) / 16 * 16;
    const std::uint64_t k0 = std::min((k + fk - 1) / fk * fk, 32768 / (std::max(m0, n0) * elt) / fk * fk);
    return task(id, stream, wait, signal, "matmul",
                {{"m", m}, {"k", k}, {"n", n}, {"dtype", dtype}, {"src", "l1"}, {"dst", "l1"},
                 {"l0_tile", {m0, n0, k0}}, {"l1_block", {m0, n0, k0}}, {"l1_keep", "ab"}});
}

// A vector op on data resident in UB: V pipe only.
json ub_vector(const std::string& id, const std::string& stream, std::uint64_t bytes, double cycles_per_repeat = 1,
               const std::vector<std::string>& wait = {}, const std::vector<std::string>& signal = {}) {
    return task(id, stream, wait, signal, "vector",
                {{"bytes", bytes}, {"cycles_per_repeat", cycles_per_repeat}, {"src", "ub"}, {"dst", "ub"}});
}

json pinned(json t, int core) {
    t["core"] = core;
    return t;
}

std::string jsonl(const std::vector<json>& lines) {
    std::string s;
    for (const auto& l : lines) s += l.dump() + "\n";
    return s;
}

// Builds the chip from a bundled file (+ --set overrides), parses the stream,
// checks it fits, runs one die and collects its stats.
Stats simulate(const std::string& chip_file, const std::string& stream_text, const std::vector<std::string>& sets = {}) {
    const RunConfig cfg = RunConfig::load(chip_file, "x.jsonl", sets);
    std::istringstream in(stream_text);
    const TaskStream ts = parse_task_stream(in, "x.jsonl");
    check_stream_fits_chip(ts, cfg.chip());
    Die die("die0", cfg.chip(), ts, nullptr);
    die.run();
    Stats s;
    die.collect(s);
    return s;
}

double n(const Stats& s, const std::string& key) {
    INFO("stats key " << key);
    REQUIRE(s.has(key));
    return s.number(key);
}

// --- the binary ------------------------------------------------------------

// `npusim run ... --stats OUT -q`; returns the stats document.

}  // namespace

// ---------------------------------------------------------------------------
// Cube timing (docs/design.md §2: M = ceil(m/16)·ceil(k/16)·ceil(n/16) per tile).

TEST_CASE("die: a lone L1-resident fp16 matmul costs dispatch + start + fill + M cycles + drain", "[die][cube]") {
    // 64x1024x64 fp16 on ax300: m0 = n0 = 64, k0 = 32 KB / (64 * 2 B) = 256,
    // so 4 k tiles. Per tile MTE1 = (64*256 + 256*64) * 2 B / 512 = 128 cycles,
    // M = 4 * 16 * 4 = 256 cycles (the bottleneck), FixPipe on the last k
    // tile only = 64*64*2 B / 128 = 64 cycles. MTE2 has no work (src l1).
    // Pipeline = 128 (fill) + 4 * 256 + 64 (drain) = 1216; busy = S + 1216.
    const Stats s = simulate(kAx300, jsonl({l1_matmul("mm", "c", 64, 1024, 64)}));
    const double m_cycles = 4.0 * (1024 / 16) * 4;  // 1024, the formula over the whole matmul
    CHECK(n(s, "cores.cube0.pipes.m.busy_cycles") == m_cycles);
    CHECK(n(s, "cores.cube0.pipes.mte1.busy_cycles") == 4 * 128);
    CHECK(n(s, "cores.cube0.pipes.fixpipe.busy_cycles") == 64);
    CHECK(n(s, "cores.cube0.pipes.mte2.busy_cycles") == 0);
    CHECK(n(s, "cores.cube0.busy_cycles") == S + 128 + m_cycles + 64);  // 1280
    CHECK(n(s, "total_cycles") == D + S + 128 + m_cycles + 64);         // 1312
    CHECK(n(s, "cores.cube0.tasks") == 1);
    CHECK(n(s, "memory.hbm.read_bytes") == 0);
    CHECK(n(s, "memory.hbm.write_bytes") == 0);
    CHECK(n(s, "memory.transfers") == 0);
    CHECK(n(s, "units.cube.utilization") == Approx(1280.0 / (1312.0 * 4)));
}

TEST_CASE("die: a core plans a lone matmul for its shortest pipe schedule", "[die][cube]") {
    // The same 64x1024x64 fp16 without a carried plan: the core ranks its
    // candidate blocks by the pipe schedule and takes two column blocks of
    // 32, each with 4 K steps of 256: a smaller first MTE1 (96 cycles) and a
    // smaller last drain (64x32x2 B / 128 = 32 cycles), the first block's
    // drain hidden behind the second block's M. The M work is the same.
    json mm = l1_matmul("mm", "c", 64, 1024, 64);
    for (const char* key : {"l0_tile", "l1_block", "l1_keep"}) mm["params"].erase(key);
    const Stats s = simulate(kAx300, jsonl({mm}));
    CHECK(n(s, "cores.cube0.pipes.m.busy_cycles") == 4.0 * (1024 / 16) * 4);
    CHECK(n(s, "cores.cube0.busy_cycles") == S + 96 + 1024 + 32);  // 1216
    CHECK(n(s, "total_cycles") == D + S + 96 + 1024 + 32);  // 1248, against 1312 with the one-block plan
}

TEST_CASE("die: a lone matmul with ragged shapes pays the rounded-up fractals", "[die][cube]") {
    // 100x1000x50 fp16 on ax300: m0 = 112, n0 = 64, k0 = floor(32768 / 224 / 16) * 16
    // = 144, 7 k tiles (6 x 144 + 136). M per tile = ceil(100/16) * 9 * ceil(50/16)
    // = 7 * 9 * 4 = 252; in all 7 * 63 * 4 = 1764 = ceil(m/16)ceil(k/16)ceil(n/16).
    // MTE1 of the first tile = (100*144 + 144*50) * 2 / 512 = 84.375 cycles,
    // FixPipe = 100*50*2 / 128 = 78.125 cycles, both fractional: total in ps is
    // exact (1 GHz), 1000 * (32 + 64 + 84.375 + 1764 + 78.125) = 2022500 ps.
    const Stats s = simulate(kAx300, jsonl({l1_matmul("mm", "c", 100, 1000, 50)}));
    CHECK(n(s, "cores.cube0.pipes.m.busy_cycles") == 1764);
    CHECK(n(s, "total_ps") == 2022500);
}

TEST_CASE("die: matmul cost grows with k by the M cycles of the added k tiles (fp16 and int8)", "[die][cube]") {
    // Four independent L1-resident matmuls, one pinned to each cube core of
    // ax300; each core's busy time is its task's time from start to end
    // (no memory traffic, so the tasks do not interact).
    //   fp16 64xKx64: k0 = 256, per k tile MTE1 128, M 4*16*4 = 256 cycles.
    //   int8 64xKx64: k0 = 32768 / 64 = 512, k in 32s: M 4*16*4 = 256 per
    //                 512-deep tile, MTE1 (64*512 + 512*64) * 1 / 512 = 128.
    //   FixPipe 64*64*2 / 128 = 64 either way.
    const Stats s = simulate(kAx300, jsonl({
                                         pinned(l1_matmul("f1k", "s0", 64, 1024, 64, "fp16"), 0),
                                         pinned(l1_matmul("f2k", "s1", 64, 2048, 64, "fp16"), 1),
                                         pinned(l1_matmul("i1k", "s2", 64, 1024, 64, "int8"), 2),
                                         pinned(l1_matmul("i2k", "s3", 64, 2048, 64, "int8"), 3),
                                     }));
    const double f1 = n(s, "cores.cube0.busy_cycles"), f2 = n(s, "cores.cube1.busy_cycles");
    const double i1 = n(s, "cores.cube2.busy_cycles"), i2 = n(s, "cores.cube3.busy_cycles");
    // Absolute: S + first MTE1 + M total + FixPipe.
    CHECK(f1 == S + 128 + 4 * 256 + 64);  // 1280
    CHECK(f2 == S + 128 + 8 * 256 + 64);  // 2304
    CHECK(i1 == S + 128 + 2 * 256 + 64);  // 768
    CHECK(i2 == S + 128 + 4 * 256 + 64);  // 1280
    // Marginal: k 1024 -> 2048 adds ceil(64/16) * (1024/16) * ceil(64/16) = 1024
    // M cycles for fp16 and 4 * (1024/32) * 4 = 512 for int8. The M pipe is the
    // bottleneck, so the task grows by exactly that; allow 2 cycles for the
    // rounding of pipe times to whole picoseconds on other clocks.
    CHECK(f2 - f1 == Approx(4.0 * (1024 / 16) * 4).margin(2));
    CHECK(i2 - i1 == Approx(4.0 * (1024 / 32) * 4).margin(2));
    // int8 packs twice the k per fractal: half the M cycles of fp16.
    CHECK(n(s, "cores.cube3.pipes.m.busy_cycles") * 2 == n(s, "cores.cube1.pipes.m.busy_cycles"));
    CHECK(n(s, "cores.cube1.pipes.m.busy_cycles") == 4 * (2048 / 16) * 4);
    CHECK(n(s, "cores.cube3.pipes.m.busy_cycles") == 4 * (2048 / 32) * 4);
    // Dispatch is serial on the one scalar core: task i runs from (i + 1) D.
    // f2 is dispatched second (at D) and runs from 2 D; it ends last.
    CHECK(n(s, "total_cycles") == 2 * D + f2);
}

// ---------------------------------------------------------------------------
// Vector timing (docs/design.md §2: V = 256 B per repeat-cycle times cycles_per_repeat).

TEST_CASE("die: vector cycles scale with bytes and with cycles_per_repeat", "[die][vector]") {
    // UB-resident (src/dst "ub"): MTE2 and MTE3 have no work, only V runs:
    // per 8 KB chunk (32 repeats, one instruction per pass) V = 32 * c +
    // ceil(c) * I; 64 KB is 8 chunks.
    const Stats s = simulate(kAx300, jsonl({
                                         pinned(ub_vector("b64k_c1", "s0", 65536, 1), 0),
                                         pinned(ub_vector("b128k_c1", "s1", 131072, 1), 1),
                                         pinned(ub_vector("b64k_c2", "s2", 65536, 2), 2),
                                         pinned(ub_vector("b128k_c2", "s3", 131072, 2), 3),
                                     }));
    const double v0 = n(s, "cores.vector0.pipes.v.busy_cycles"), v1 = n(s, "cores.vector1.pipes.v.busy_cycles");
    const double v2 = n(s, "cores.vector2.pipes.v.busy_cycles"), v3 = n(s, "cores.vector3.pipes.v.busy_cycles");
    CHECK(v0 == 65536 / 256 + 8 * I);  // 384
    CHECK(v1 == 2 * v0);               // twice the bytes
    CHECK(v2 == 2 * v0);               // twice the cost per repeat (and two passes to issue)
    CHECK(v3 == 4 * v0);
    // The task time is the fixed start cost plus V.
    CHECK(n(s, "cores.vector0.busy_cycles") == S + v0);
    CHECK(n(s, "cores.vector1.busy_cycles") == S + 2 * v0);
    CHECK(n(s, "cores.vector2.busy_cycles") == S + 2 * v0);
    CHECK(n(s, "cores.vector3.busy_cycles") == S + 4 * v0);
    for (int c = 0; c < 4; ++c) {
        CHECK(n(s, "cores.vector" + std::to_string(c) + ".pipes.mte2.busy_cycles") == 0);
        CHECK(n(s, "cores.vector" + std::to_string(c) + ".pipes.mte3.busy_cycles") == 0);
    }
    // The last task is dispatched at 3 D, runs from 4 D.
    CHECK(n(s, "total_cycles") == 4 * D + S + 4 * v0);
    CHECK(n(s, "memory.transfers") == 0);
}

TEST_CASE("die: a lone vector task with a partial repeat rounds up per chunk", "[die][vector]") {
    // 1000 B at 3 cycles per repeat: chunks of 768 B (whole repeats) and
    // 232 B: 3 + 1 repeats = ceil(1000 / 256) = 4 -> 12 cycles, plus three
    // passes issued per chunk: 2 * 3 * I.
    const Stats s = simulate(kAx300, jsonl({ub_vector("v", "s", 1000, 3)}));
    CHECK(n(s, "cores.vector0.pipes.v.busy_cycles") == 12 + 6 * I);
    CHECK(n(s, "total_cycles") == D + S + 12 + 6 * I);
}

// ---------------------------------------------------------------------------
// Events, streams, pinning (docs/design.md §4.3).

TEST_CASE("die: a vector task waiting on a cube task's event starts after it ends", "[die][events]") {
    // Cube alone ends at D + S + 1216 = 1312 (first test). The vector task is
    // released then, dispatched (D) and busy S + 256: total = 1312 + 32 + 320.
    const Stats s = simulate(kAx300, jsonl({
                                         l1_matmul("mm", "c", 64, 1024, 64, "fp16", {}, {"mm_done"}),
                                         ub_vector("v", "v", 65536, 1, {"mm_done"}),
                                     }), kNoIssue);
    const double cube_alone = D + S + 1216, vector_busy = S + 256;
    CHECK(n(s, "total_cycles") == cube_alone + D + vector_busy);  // 1664
    CHECK(n(s, "overlap.both_busy_cycles") == 0);
    CHECK(n(s, "overlap.cube_vector") == 0.0);
    CHECK(n(s, "events.fired") == 1);
    CHECK(n(s, "events.signals") == 1);
    // The vector head reached its stream at 0 and was released at 1312.
    CHECK(n(s, "events.wait_cycles") == cube_alone);
}

TEST_CASE("die: independent cube and vector tasks overlap", "[die][events]") {
    // Same two tasks, no event. Cube busy [32, 1312), vector dispatched
    // second: busy [64, 384). Total = 1312 < 1312 + (32 + 320) = sum of both
    // alone; the vector interval lies inside the cube's: overlap 320 / 320.
    const Stats s = simulate(kAx300, jsonl({
                                         l1_matmul("mm", "c", 64, 1024, 64),
                                         ub_vector("v", "v", 65536, 1),
                                     }), kNoIssue);
    const double cube_alone = D + S + 1216, vector_alone = D + S + 256;
    CHECK(n(s, "total_cycles") < cube_alone + vector_alone);
    CHECK(n(s, "total_cycles") == cube_alone);
    CHECK(n(s, "overlap.cube_vector") > 0.9);
    CHECK(n(s, "overlap.both_busy_cycles") == S + 256);
}

TEST_CASE("die: a counting event fires only after its count of signals", "[die][events]") {
    // Three producers (V = 256, 512, 1024 cycles), dispatched at 0, 32, 64,
    // end at 32+64+256 = 352, 64+64+512 = 640, 96+64+1024 = 1184. The cube
    // waiter needs all three: dispatched at 1184, busy 1280 -> total 2496.
    // With count 1 it would have started at 352 + 32 and overlapped them.
    const Stats s = simulate(kAx300, "{\"event\":\"three\",\"count\":3}\n" +
                                         jsonl({
                                             ub_vector("p0", "s0", 65536, 1, {}, {"three"}),
                                             ub_vector("p1", "s1", 65536, 2, {}, {"three"}),
                                             ub_vector("p2", "s2", 65536, 4, {}, {"three"}),
                                             l1_matmul("w", "sw", 64, 1024, 64, "fp16", {"three"}),
                                         }), kNoIssue);
    const double third_end = 3 * D + S + 1024;  // 1184
    CHECK(n(s, "total_cycles") == third_end + D + S + 1216);
    CHECK(n(s, "overlap.both_busy_cycles") == 0);
    CHECK(n(s, "events.count") == 1);
    CHECK(n(s, "events.signals") == 3);
    CHECK(n(s, "events.fired") == 1);
}

TEST_CASE("die: a task behind a blocked head in its stream does not start before it", "[die][events]") {
    // Stream "v": A waits for the cube task's event, B behind A waits for
    // nothing. In-order issue: B is fetched only after A is dispatched.
    // Cube ends at 1312; A dispatched 1312..1344, B 1344..1376 on another
    // vector core, busy S + 512 -> total 1376 + 576 = 1952. Had B started at
    // once it would have run during the matmul (both_busy > 0).
    const Stats s = simulate(kAx300, jsonl({
                                         l1_matmul("x", "c", 64, 1024, 64, "fp16", {}, {"x_done"}),
                                         ub_vector("A", "v", 65536, 1, {"x_done"}),
                                         ub_vector("B", "v", 131072, 1),
                                     }), kNoIssue);
    const double cube_alone = D + S + 1216;
    CHECK(n(s, "total_cycles") == cube_alone + 2 * D + S + 512);
    CHECK(n(s, "overlap.both_busy_cycles") == 0);
    // Vector busy union: A [1344, 1664) and B [1376, 1952) = 608 cycles.
    CHECK(n(s, "overlap.vector_busy_cycles") == 1952 - 1344);
    CHECK(n(s, "cores.vector0.tasks") == 1);
    CHECK(n(s, "cores.vector1.tasks") == 1);
}

TEST_CASE("die: a pinned task runs on its core", "[die][events]") {
    // Three tasks pinned to vector core 2 (on three streams) and one free
    // task. The free one takes the lowest free core (vector0); the pinned
    // ones queue for core 2 although cores 1 and 3 are idle. Core 2's task
    // queue takes p1 and p2 while p0 runs, so only p0 waits for dispatch:
    // p0 [32, 352), p1 [352, 672), p2 [672, 992).
    const Stats s = simulate(kAx300, jsonl({
                                         pinned(ub_vector("p0", "a", 65536), 2),
                                         pinned(ub_vector("p1", "b", 65536), 2),
                                         pinned(ub_vector("p2", "c", 65536), 2),
                                         ub_vector("free", "d", 65536),
                                     }), kNoIssue);
    CHECK(n(s, "cores.vector2.tasks") == 3);
    CHECK(n(s, "cores.vector0.tasks") == 1);
    CHECK(n(s, "cores.vector1.tasks") == 0);
    CHECK(n(s, "cores.vector3.tasks") == 0);
    CHECK(n(s, "cores.vector2.busy_cycles") == 3 * (S + 256));
    CHECK(n(s, "total_cycles") == D + 3 * (S + 256));
}

TEST_CASE("die: a single pinned task runs on that core", "[die][events]") {
    const Stats s = simulate(kAx300, jsonl({pinned(ub_vector("p", "s", 65536), 2)}), kNoIssue);
    CHECK(n(s, "cores.vector2.tasks") == 1);
    for (int c : {0, 1, 3}) CHECK(n(s, "cores.vector" + std::to_string(c) + ".tasks") == 0);
    CHECK(n(s, "total_cycles") == D + S + 256);
}

TEST_CASE("die: a wait nobody signals is a DeadlockError naming the task and the event", "[die][deadlock]") {
    const RunConfig cfg = RunConfig::load(kAx300, "x.jsonl", {});
    std::istringstream in(jsonl({
        ub_vector("ok", "s0", 4096),
        ub_vector("stuck", "s1", 4096, 1, {"never_signalled"}),
        ub_vector("behind", "s1", 4096),
    }));
    const TaskStream ts = parse_task_stream(in, "x.jsonl");
    check_stream_fits_chip(ts, cfg.chip());
    Die die("die0", cfg.chip(), ts, nullptr);
    try {
        die.run();
        FAIL("die.run() returned although 'stuck' can never run");
    } catch (const DeadlockError& e) {
        const std::string msg = e.what();
        CHECK_THAT(msg, Contains("'stuck'") && Contains("'never_signalled'") && Contains("no task signals it") &&
                            Contains("x.jsonl:2") && Contains("2 task(s) never ran"));
    }
    // What could run did run.
    Stats s;
    die.collect(s);
    CHECK(n(s, "cores.vector0.tasks") == 1);
}

TEST_CASE("die: a counting event short of its count is a deadlock naming the signallers", "[die][deadlock]") {
    const RunConfig cfg = RunConfig::load(kAx300, "x.jsonl", {});
    std::istringstream in("{\"event\":\"three\",\"count\":3}\n" +
                          jsonl({
                              ub_vector("p0", "s0", 4096, 1, {}, {"three"}),
                              ub_vector("p1", "s1", 4096, 1, {}, {"three"}),
                              l1_matmul("w", "sw", 64, 64, 64, "fp16", {"three"}),
                          }));
    const TaskStream ts = parse_task_stream(in, "x.jsonl");
    check_stream_fits_chip(ts, cfg.chip());
    Die die("die0", cfg.chip(), ts, nullptr);
    try {
        die.run();
        FAIL("die.run() returned although 'w' needs a third signal");
    } catch (const DeadlockError& e) {
        CHECK_THAT(std::string(e.what()), Contains("'w'") && Contains("'three'") && Contains("2 of 3 signals") &&
                                              Contains("'p0'") && Contains("'p1'"));
    }
}

// ---------------------------------------------------------------------------
// Memory system (docs/design.md §2).

TEST_CASE("die: 48 cores streaming never exceed HBM bandwidth", "[die][memory]") {
    // traces/copy_48core.jsonl: 48 streams x 4 copies of 1 MiB, HBM -> HBM.
    // The 48 engines could pull 48 * 32 B * 1.85 GHz = 2841.6 GB/s; HBM gives
    // at most 1600 GB/s = 1.6 B/ps, and a copy mixing reads with the L2's
    // write-backs less (read/write turnarounds): ~84-92% of peak.
    // Writes stop in the write-back L2: HBM sees only the dirty lines the
    // reads and writes (384 MiB through a 192 MiB L2) push out.
    const RunConfig cfg = RunConfig::load(kA2, kSrc + "/traces/copy_48core.jsonl", {});
    const TaskStream ts = read_task_stream(kSrc + "/traces/copy_48core.jsonl");
    check_stream_fits_chip(ts, cfg.chip());
    Die die("die0", cfg.chip(), ts, nullptr);
    die.run();
    Stats s;
    die.collect(s);
    const double hbm_bytes = n(s, "memory.hbm.read_bytes") + n(s, "memory.hbm.write_bytes");
    const double total_ps = n(s, "total_ps");
    const double rate = hbm_bytes / total_ps;  // bytes per ps = TB/s
    INFO("HBM bytes " << hbm_bytes << " in " << total_ps << " ps = " << rate * 1000 << " GB/s");
    const double mib192 = 192.0 * (1 << 20);
    CHECK(n(s, "memory.hbm.read_bytes") == mib192);
    CHECK(n(s, "memory.hbm.write_bytes") == n(s, "memory.l2.dirty_eviction_bytes") + n(s, "memory.l2.clean_bytes"));
    CHECK(n(s, "memory.hbm.write_bytes") + n(s, "memory.l2.dirty_resident_bytes") == mib192);
    CHECK(n(s, "memory.hbm.write_bytes") > 0.3 * mib192);
    CHECK(rate <= 1.6 * 0.92 * (1 + 1e-6));
    CHECK(rate >= 0.8 * 1.6);
    CHECK(n(s, "units.hbm.utilization") <= 1.0 + 1e-6);
    for (int c = 0; c < 48; ++c) CHECK(n(s, "cores.vector" + std::to_string(c) + ".tasks") == 4);
}

TEST_CASE("die: reading the same range twice hits L2 the second time", "[die][memory]") {
    // a2, two 1 MiB reads of the same address (no output), the second after
    // the first (event), on different vector cores. 1 MiB fits the 192 MB L2
    // many times over, so every byte of the second read is a hit; hits come
    // from L2 with 100 ns latency instead of HBM's 300 ns, so the second task
    // is also shorter.
    const auto reader = [](const std::string& id, const std::vector<std::string>& wait,
                           const std::vector<std::string>& signal, int core) {
        return pinned(task(id, id, wait, signal, "vector",
                           {{"bytes", 1 << 20}, {"out_bytes", 0}, {"src", "hbm"}, {"dst", "ub"}, {"addr", 1ull << 32}}),
                      core);
    };
    const Stats s = simulate(kA2, jsonl({reader("first", {}, {"read1"}, 0), reader("second", {"read1"}, {}, 1)}));
    const double mib = 1 << 20;
    CHECK(n(s, "memory.l2.hit_bytes") > 0);
    CHECK(n(s, "memory.l2.hit_bytes") >= mib);  // all of the second read
    CHECK(n(s, "memory.l2.hit_bytes") + n(s, "memory.l2.miss_bytes") == 2 * mib);
    CHECK(n(s, "memory.hbm.read_bytes") <= mib);
    CHECK(n(s, "cores.vector1.busy_cycles") < n(s, "cores.vector0.busy_cycles"));
}

// The first read of a range is cold and must miss entirely, although on a2
// MTE2 reads 32 KB chunks, half of each 64 KB recency region at a time.
TEST_CASE("die: the first read of a range misses L2 entirely", "[die][memory]") {
    const Stats s = simulate(
        kA2, jsonl({task("cold", "s", {}, {}, "vector",
                         {{"bytes", 1 << 20}, {"out_bytes", 0}, {"src", "hbm"}, {"dst", "ub"}, {"addr", 1ull << 32}})}));
    CHECK(n(s, "memory.l2.hit_bytes") == 0);
    CHECK(n(s, "memory.hbm.read_bytes") == 1 << 20);
}

// ---------------------------------------------------------------------------
// Comparisons between runs, through the binary (one simulation per process).

TEST_CASE("die: halving HBM bandwidth doubles a memory-bound copy and leaves an L1 matmul alone", "[die][memory][cli]") {
    TempDir tmp;
    // The 48-core copy is HBM-bound (see above): its time is HBM bytes /
    // bandwidth plus small fixed costs, so half the bandwidth ~ twice the time.
    const std::string copy = kSrc + "/traces/copy_48core.jsonl";
    const json fast = run_for_stats(tmp, kA2, copy, {"chip.hbm.bandwidth_gbps=1600"});
    const json slow = run_for_stats(tmp, kA2, copy, {"chip.hbm.bandwidth_gbps=800"});
    const double ratio = slow["total_cycles"].get<double>() / fast["total_cycles"].get<double>();
    INFO("copy: " << fast["total_cycles"] << " -> " << slow["total_cycles"] << " cycles, ratio " << ratio);
    CHECK(ratio >= 1.8);
    CHECK(ratio <= 2.2);
    CHECK(slow["config"]["chip"]["hbm"]["bandwidth_gbps"].get<double>() == 800);

    // L1-resident matmuls on 24 cube cores never touch HBM: identical cycles.
    std::vector<json> mm;
    for (int c = 0; c < 24; ++c)
        mm.push_back(l1_matmul("mm" + std::to_string(c), "s" + std::to_string(c), 128, 512, 128));
    const std::string mm_file = tmp.write("mm.jsonl", jsonl(mm));
    const json a = run_for_stats(tmp, kA2, mm_file, {"chip.hbm.bandwidth_gbps=1600"});
    const json b = run_for_stats(tmp, kA2, mm_file, {"chip.hbm.bandwidth_gbps=800"});
    CHECK(a["total_cycles"].get<std::int64_t>() > 0);
    CHECK(a["total_cycles"] == b["total_cycles"]);
    CHECK(a["total_ps"] == b["total_ps"]);
    CHECK(a["memory"]["hbm"]["read_bytes"] == 0);
}

TEST_CASE("die: tile-level sync overlaps Cube and Vector more than op-level sync on ax300", "[die][cli]") {
    // docs/design.md §1.1 reference case: op-level events make every Vector tile wait
    // for all 16 Cube tiles; tile-level events let Vector follow each tile.
    TempDir tmp;
    const json op = run_for_stats(tmp, kAx300, kSrc + "/traces/convbnrelu_op.jsonl");
    const json tile = run_for_stats(tmp, kAx300, kSrc + "/traces/convbnrelu_tile.jsonl");
    const double op_overlap = op["overlap"]["cube_vector"], tile_overlap = tile["overlap"]["cube_vector"];
    INFO("overlap op " << op_overlap << ", tile " << tile_overlap << "; cycles op " << op["total_cycles"] << ", tile "
                       << tile["total_cycles"]);
    CHECK(tile_overlap > op_overlap + 0.2);
    CHECK(tile["total_cycles"].get<double>() < op["total_cycles"].get<double>());
    // Same work either way.
    CHECK(tile["memory"]["l0"]["in_bytes"] == op["memory"]["l0"]["in_bytes"]);
}

TEST_CASE("die: long Cube tasks in closed form (NPUSIM_CLOSED_FORM=1) stay within 2% of stepping every tile", "[slow][die][cube][cli]") {
    TempDir tmp;
    // A compute-bound fp16 GEMM and a weight-streaming bf16 LM-head-like
    // GEMM (48 tokens): the closed form paces each chunk by its slowest pipe
    // or its port, so both kinds of bound must survive it.
    const std::string mm = tmp.write("mm.json", R"({"kind":"graph","name":"mm","tensors":{
      "a":{"shape":[1024,8192],"dtype":"fp16","input":true},"b":{"shape":[8192,4096],"dtype":"fp16","const":true}},
      "outputs":["c"],"nodes":[{"name":"mm","op":"MatMul","inputs":["a","b"],"outputs":["c"]}]})");
    const std::string dec = tmp.write("dec.json", R"({"kind":"graph","name":"dec","tensors":{
      "x":{"shape":[48,7168],"dtype":"bf16","input":true},"w":{"shape":[7168,65536],"dtype":"bf16","const":true}},
      "outputs":["y"],"nodes":[{"name":"mm","op":"MatMul","inputs":["x","w"],"outputs":["y"]}]})");
    for (const std::string& graph : {mm, dec}) {
        const std::string stream = graph + ".jsonl", closed = graph + ".closed.json", exact = graph + ".exact.json";
        Result r = run_npusim(tmp, {"compile", "--chip", kA2, "--workload", graph, "--emit-tasks", stream});
        SHOW(r);
        REQUIRE(r.code == 0);
        r = run_program(tmp, "NPUSIM_CLOSED_FORM=1 " + quote(NPUSIM_BIN),
                        {"run", "--chip", kA2, "--workload", stream, "--stats", closed, "-q"});
        REQUIRE(r.code == 0);
        r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", stream, "--stats", exact, "-q"});
        REQUIRE(r.code == 0);
        const json c = read_json(closed), e = read_json(exact);
        const double ratio = c["total_cycles"].get<double>() / e["total_cycles"].get<double>();
        INFO(graph << ": closed form " << c["total_cycles"] << " vs stepped " << e["total_cycles"] << " cycles");
        CHECK(c.at("cores").at("cube0").value("closed_form_tiles", 0) > 0);
        CHECK(e.at("cores").at("cube0").value("closed_form_tiles", 0) == 0);
        CHECK(ratio > 0.98);
        CHECK(ratio < 1.02);
        // The same bytes: every tile's addresses go through L2 either way
        // (the cores' accesses interleave differently, so hits may differ a little).
        CHECK(c["memory"]["hbm"]["read_bytes"].get<double>() ==
              Approx(e["memory"]["hbm"]["read_bytes"].get<double>()).epsilon(0.005));
    }
}
