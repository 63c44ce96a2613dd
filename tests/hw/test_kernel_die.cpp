// The kernel API on the die (docs/supernode.md "What a DataCopy costs"): an
// AIV core's DataCopies go through its die's memory system (port caps, HBM
// share and latency, the write-back L2) and its vector() is the vector
// task's V formula; the Dispatch answers HBM bandwidth, AIV core count and
// each part of a DataCopy's fixed cost; the retired key is an input error.
//
// One simulation per TEST_CASE (SystemC cannot restart); comparisons of
// several runs go through the npusim binary at 32 ranks.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "chip/timing.hpp"
#include "stats/stats.hpp"
#include "support/e2e.hpp"
#include "support/kernel_run.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a3-supernode.json";
const std::string kModel = kSrc + "/models/moe_dispatch.json";

// One die of `cores` AIV cores at 1 GHz (1 cycle = 1 ns), 32 B/cycle ports,
// HBM latency 300 ns, and a DataCopy's fixed parts set explicitly.
ChipParams die_chip(int cores) {
    ChipParams c;
    c.name = "test";
    c.clock_ghz = 1.0;
    c.vector.count = cores;
    c.vector.gm_bytes_per_cycle = 32;
    c.hbm.latency_ns = 300;
    c.interconnect.ranks = 1;
    c.kernel.issue_cycles = 0;
    c.kernel.descriptor_issue_ns = 100;
    c.kernel.completion_ns = 50;
    c.kernel.flag_handshake_ns = 0;
    return c;
}

// The Dispatch at 32 ranks x 8 experts (256 experts), total and the
// reorder phase's mean over all cores (us).
struct Dispatch {
    double total_us = 0, reorder_us = 0, end_mean_us = 0;  // end_mean: the mean core's end (its reorder's)
};
Dispatch dispatch(const TempDir& tmp, const std::string& variant, std::vector<std::string> sets = {}) {
    std::vector<std::string> args = {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.interconnect.ranks=32",
                                     "--set", "workload.dims.experts_per_rank=8", "--set", "workload.variant=" + variant,
                                     "--stats", tmp.path("s.json"), "-q"};
    for (const auto& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const Result r = run_npusim(tmp, args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json s = read_json(tmp.path("s.json"));
    return {s["total_ns"].get<double>() / 1000.0, s["phases"]["reorder"]["mean_ns"].get<double>() / 1000.0,
            s["phases"]["reorder"]["end_mean_ns"].get<double>() / 1000.0};
}

}  // namespace

TEST_CASE("kernel api on the die: a copy is descriptor + bytes at the port + HBM latency + completion, one port for MTE2 and MTE3",
          "[kernel][die]") {
    const ChipParams chip = die_chip(1);
    std::uint64_t in_done = 0, out_done = 0, end = 0, begin = 0;
    KernelRun rt(chip, [&](AivCore& k) {
        begin = k.now();
        const PipeTime in = k.copy_in(3200);    // 100 ns descriptor, 3200 B / 32 B/cycle = 100 ns, 300 ns HBM, 50 ns
        const PipeTime out = k.copy_out(3200);  // waits for the port: starts when the copy_in has drained (200 ns)
        k.wait(in);
        in_done = k.now();
        k.wait(out);
        out_done = k.now();
        k.pipe_barrier();
        end = k.now();
    });
    rt.run();
    CHECK(in_done - begin == 550000);
    CHECK(out_done - begin == 200000 + 100000 + 100000 + 300000 + 50000);
    CHECK(end == out_done);
    const Stats s = rt.stats();
    CHECK(s.number("memory.hbm.read_bytes") == 3200);
    CHECK(s.number("memory.hbm.write_bytes") == 3200);
    CHECK(s.number("memory.transfers") == 2);
}

TEST_CASE("kernel api on the die: vector() costs what a vector task's V pipe does (repeats + issue per instruction)",
          "[kernel][die]") {
    const ChipParams chip = die_chip(1);
    std::uint64_t done = 0, begin = 0;
    KernelRun rt(chip, [&](AivCore& k) {
        begin = k.now();
        k.wait(k.vector(256 * 300, 2));  // 300 repeats x 2 cycles + 2 passes x 2 instructions (255 repeats each) x 16
        done = k.now();
    });
    rt.run();
    timing::VectorShape shape;
    shape.bytes = 256 * 300;
    shape.cycles_per_repeat = 2;
    CHECK(timing::vector_v_cycles(shape, chip, shape.bytes) == 664);
    CHECK(done - begin == 664000);
}

TEST_CASE("kernel api on the die: 48 cores streaming at once share the die's HBM bandwidth", "[kernel][die]") {
    ChipParams chip = die_chip(48);
    chip.hbm.bandwidth_gbps = 400;  // 48 ports of 32 GB/s ask for 1536
    std::uint64_t first = ~0ULL;
    KernelRun rt(chip, [&](AivCore& k) {
        first = std::min(first, k.now());
        k.wait(k.copy_in(1000000));
    });
    rt.run();
    // 48 MB at 400 GB/s x the streaming efficiency (reads only), not 1 MB at one port's 32 GB/s.
    const double hbm_us = 48e6 / (400e3 * timing::hbm_efficiency(chip.hbm, 0.0));
    const double us = static_cast<double>(rt.end_ps() - first) / 1e6;
    CHECK(us == Approx(hbm_us).epsilon(0.05));
    CHECK(us > 3.5 * (1e6 / 32e3));
}

TEST_CASE("moe on the die: the reorder's window and output stay in L2, and with an L2 too small for them a quarter of "
          "the HBM bandwidth slows it", "[slow][moe][die]") {
    TempDir tmp;
    for (const char* v : {"baseline", "optimized"}) {
        const Dispatch base = dispatch(tmp, v), slow = dispatch(tmp, v, {"chip.hbm.bandwidth_gbps=400"}),
                       fast = dispatch(tmp, v, {"chip.hbm.bandwidth_gbps=6400"});
        INFO(v << ": mean core end " << fast.end_mean_us << " / " << base.end_mean_us << " / " << slow.end_mean_us
               << " us; last core " << fast.total_us << " / " << base.total_us << " / " << slow.total_us << " us");
        // The landed windows and the output rows stay in the 192 MB write-back
        // L2 the expert MatMuls read them from: HBM moves little, and a quarter
        // or four times its bandwidth moves the mean core by under 1% (the
        // last of 1,536 cores moves with the order events land in, a few %).
        CHECK(slow.end_mean_us == Approx(base.end_mean_us).epsilon(0.01));
        CHECK(fast.end_mean_us == Approx(base.end_mean_us).epsilon(0.01));
        CHECK(slow.total_us < 1.05 * base.total_us);
        CHECK(fast.total_us < 1.05 * base.total_us);
    }
    // With 4 MB of L2 the baseline's reorder reads the window and writes the
    // output through HBM: a quarter of the bandwidth shows.
    const Dispatch base = dispatch(tmp, "baseline", {"chip.l2.size_mb=4"}),
                   slow = dispatch(tmp, "baseline", {"chip.l2.size_mb=4", "chip.hbm.bandwidth_gbps=400"});
    INFO("L2 4 MB: " << base.total_us << " us, a quarter of HBM: " << slow.total_us << " us");
    CHECK(slow.total_us > 1.05 * base.total_us);
    CHECK(slow.reorder_us > 1.15 * base.reorder_us);
}

TEST_CASE("moe on the die: 24 AIV cores per die instead of 48 slow both variants", "[moe][die]") {
    TempDir tmp;
    for (const char* v : {"baseline", "optimized"}) {
        const Dispatch full = dispatch(tmp, v), half = dispatch(tmp, v, {"chip.cores.vector.count=24"});
        INFO(v << ": 48 cores " << full.total_us << " us, 24 cores " << half.total_us << " us");
        CHECK(half.total_us > 1.15 * full.total_us);
    }
}

TEST_CASE("moe on the die: each fixed part of a DataCopy adds to the Dispatch", "[slow][moe][die]") {
    TempDir tmp;
    for (const char* v : {"baseline", "optimized"}) {
        const double base = dispatch(tmp, v).total_us;
        for (const char* key : {"chip.kernel.descriptor_issue_ns", "chip.kernel.completion_ns", "chip.kernel.flag_handshake_ns"}) {
            const double without = dispatch(tmp, v, {std::string(key) + "=0"}).total_us;
            const double twice = dispatch(tmp, v, {std::string(key) + "=400"}).total_us;
            INFO(v << " " << key << ": 0 -> " << without << " us, a3 value -> " << base << " us, 400 ns -> " << twice);
            CHECK(without < base);
            CHECK(twice > without);
        }
    }
}

TEST_CASE("config: the retired chip.kernel.mte_setup_ns names the keys that replace it (exit 2)", "[moe][config]") {
    TempDir tmp;
    Result r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.kernel.mte_setup_ns=1280"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--set") && Contains("chip.kernel.descriptor_issue_ns") &&
                          Contains("chip.kernel.completion_ns") && Contains("chip.kernel.flag_handshake_ns"));
    const std::string chip = tmp.write("old.json", R"({"extends": ")" + kChip + R"(", "kernel": {"mte_setup_ns": 1280}})");
    r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kModel});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("old.json") && Contains("chip.kernel.descriptor_issue_ns"));
    r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.kernel.completion_ns=-5"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("chip.kernel.completion_ns") && Contains(">= 0"));
    r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.kernel.flag_handshak_ns=5"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("flag_handshake_ns"));
}

namespace {

// die_chip's port (32 B/cycle at 1 GHz) moving a 64 KB copy in and out,
// and its HBM latency (ps).
constexpr std::uint64_t kCopyPortPs = 2 * 64000 / 32 * 1000, kHbmLatencyPs = 300000;

// A compiled copy task of `bytes` GM -> GM pinned to vector core `core`.
Task copy_task(int core, std::uint64_t bytes) {
    Task t;
    t.id = "copy";
    t.kernel = npusim::Kernel::copy;
    t.core_type = CoreType::vector;
    t.core = core;
    t.params.bytes = bytes;
    t.params.out_bytes = bytes;
    return t;
}

// When the kernel's copy_in starts and ends, and the run's end (ps).
struct Shared {
    std::uint64_t begin = 0, done = 0, end = 0;
};
Shared kernel_beside_copy(int copy_core) {
    const ChipParams chip = die_chip(2);
    Shared r;
    KernelRun rt(
        chip,
        [&](AivCore& k) {
            if (k.core() != 0) return;
            r.begin = k.now();
            k.wait(k.copy_in(64000));  // 100 ns descriptor + 2000 ns at the port + 300 ns HBM + 50 ns
            r.done = k.now();
        },
        {copy_task(copy_core, 64000)});
    rt.run();
    r.end = rt.end_ps();
    return r;
}

}  // namespace

// One model of the AIV core: a kernel program is a task of the vector core,
// so a compiled vector task pinned to the same core waits for it (and its
// bytes use the same GM port), while on another core it runs alongside.
TEST_CASE("kernel api on the die: a kernel program and a copy task on the same AIV core run one after the other",
          "[kernel][die]") {
    const Shared same = kernel_beside_copy(0);
    CHECK(same.done - same.begin == 2450000);
    // The copy moves 64 KB in and 64 KB out through the core's one port
    // (4000 ns at 32 B/cycle, plus at most an HBM latency each way) only
    // after the kernel's 2450 ns: the run takes their sum.
    CHECK(same.end >= same.done + kCopyPortPs);
    CHECK(same.end <= same.done + kCopyPortPs + 2 * kHbmLatencyPs);
}

TEST_CASE("kernel api on the die: a kernel program and a copy task on two AIV cores overlap", "[kernel][die]") {
    const Shared apart = kernel_beside_copy(1);
    // Each core has its own port (they share only HBM, a few ps here): the
    // copy and the kernel's 2450 ns overlap.
    CHECK(static_cast<double>(apart.done - apart.begin) == Approx(2450000).epsilon(0.001));
    CHECK(apart.end >= kCopyPortPs);
    CHECK(apart.end <= kCopyPortPs + 2 * kHbmLatencyPs);
}
