// Supernode tests (docs/design.md §1.3, §2 Links): the mesh timing, 512 B DataBlock
// atomicity and ordering, the kernel API's costs, the stale-read behaviour of
// the MoE Dispatch variants, the calibration points and the --profile output.
//
// SystemC cannot restart in a process: every TEST_CASE here runs at most one
// simulation (ctest runs each case in its own process); cases that need
// several runs (seeds, variants) go through the npusim binary.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "system/global_memory.hpp"
#include "system/mesh.hpp"
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

// npusim run --chip a3-supernode --workload moe_dispatch <args...>.
Result run_moe(const TempDir& tmp, const std::vector<std::string>& args) {
    std::vector<std::string> all = {"run", "--chip", kChip, "--workload", kModel};
    all.insert(all.end(), args.begin(), args.end());
    return run_npusim(tmp, all);
}

json stats_of(const TempDir& tmp, std::vector<std::string> args) {
    const std::string stats = tmp.path("stats.json");
    args.push_back("--stats");
    args.push_back(stats);
    args.push_back("-q");
    const Result r = run_moe(tmp, args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    return read_json(stats);
}

// A small mesh: `ranks` dies of `cores` AIV cores in one node, 7 planes of 28 GB/s, 1 us.
ChipParams small_chip(int ranks, int cores) {
    ChipParams c;
    c.name = "test";
    c.clock_ghz = 1.0;  // 1 cycle = 1000 ps
    c.vector.count = cores;
    c.vector.gm_bytes_per_cycle = 32;
    c.hbm.latency_ns = 300;
    c.interconnect.ranks = ranks;
    c.interconnect.planes = 7;
    c.interconnect.node_size = ranks;  // one node: every write is intra-node
    c.interconnect.intra_node = {1000, 28};
    c.interconnect.datablock_bytes = 512;
    c.interconnect.header_bytes = 0;  // the payload alone on the wire; headers: test_mesh_tiers.cpp
    c.kernel.sync_all_ns = 2500;
    c.kernel.flag_poll_ns = 700;
    c.kernel.descriptor_issue_ns = 0;
    c.kernel.completion_ns = 0;
    c.kernel.flag_handshake_ns = 0;
    c.kernel.issue_cycles = 0;
    return c;
}

std::uint64_t ceil_ps(double bytes, double gbps) { return static_cast<std::uint64_t>(std::ceil(bytes * 1000.0 / gbps)); }

}  // namespace

// --- mesh timing and the functional memory ------------------------------------------

TEST_CASE("mesh: a lone write lands latency + its plane share / bandwidth after issue on every plane", "[moe][mesh]") {
    const ChipParams chip = small_chip(2, 1);
    GlobalMemory mem(2, 512);
    Mesh mesh("mesh", chip, mem, nullptr, {});
    WriteRequest w;
    w.src_rank = 0;
    w.dst_rank = 1;
    w.addr = 0x100000;
    w.bytes = 7168;  // 14 full blocks
    const PostedWrite pw = mesh.post(w, 0);

    std::vector<std::uint64_t> share(7, 0);
    for (int b = 0; b < 14; ++b) share[static_cast<std::size_t>(mesh.plane_of(1, w.addr + 512 * b))] += 512;
    std::uint64_t last = 0, left = 0;
    for (int b = 0; b < 14; ++b) {
        const auto s = share[static_cast<std::size_t>(mesh.plane_of(1, w.addr + 512 * b))];
        const std::uint64_t expect = 1000000 + ceil_ps(static_cast<double>(s), 28);
        CHECK(mem.land_time(1, w.addr / 512 + b) == expect);
        last = std::max(last, expect);
        left = std::max(left, ceil_ps(static_cast<double>(s), 28));
    }
    CHECK(pw.land_ps == last);
    CHECK(pw.left_ps == left);  // the sender's planes are free again when the last share has left
    CHECK(mesh.chunks() == static_cast<std::uint64_t>(std::count_if(share.begin(), share.end(), [](auto s) { return s > 0; })));
}

TEST_CASE("mesh: a plane is a FIFO with its own bandwidth and planes are unordered against each other", "[moe][mesh]") {
    const ChipParams chip = small_chip(2, 1);
    GlobalMemory mem(2, 512);
    Mesh mesh("mesh", chip, mem, nullptr, {});
    // Two blocks on the same plane and one on another plane.
    Addr a = 0x200000, same = 0, other = 0;
    const int pa = mesh.plane_of(1, a);
    for (Addr x = a + 512; !same || !other; x += 512) {
        if (!same && mesh.plane_of(1, x) == pa) same = x;
        if (!other && mesh.plane_of(1, x) != pa) other = x;
    }
    WriteRequest w;
    w.src_rank = 0;
    w.dst_rank = 1;
    w.bytes = 512;
    w.addr = a;
    mesh.post(w, 0);         // plane pa: [0, 18286) out, lands 1 us later
    w.addr = same;
    mesh.post(w, 0);         // same plane: queues behind the first
    w.kind = WriteKind::flag;
    w.bytes = 32;
    w.flag = 7;
    w.addr = other;
    mesh.post(w, 0);         // another plane: a flag written last lands first
    const std::uint64_t block = ceil_ps(512, 28), flag = ceil_ps(32, 28);
    CHECK(mem.land_time(1, a / 512) == 1000000 + block);
    CHECK(mem.land_time(1, same / 512) == 1000000 + 2 * block);
    CHECK(mem.land_time(1, other / 512) == 1000000 + flag);
    CHECK(mem.flag(1, other / 512) == 7);
    CHECK(mem.land_time(1, other / 512) < mem.land_time(1, a / 512));
}

TEST_CASE("mesh: DataBlocks land whole and a read of one not landed is a stale read with rank address and core",
          "[moe][mesh]") {
    const ChipParams chip = small_chip(2, 1);
    GlobalMemory mem(2, 512);
    Mesh mesh("mesh", chip, mem, nullptr, {});
    WriteRequest w;
    w.src_rank = 0;
    w.dst_rank = 1;
    w.addr = 0x300000;
    w.bytes = 504 * 6;  // Data-as-Flag: 6 blocks, each with payload and flag
    w.kind = WriteKind::data_as_flag;
    w.flag = 1;
    REQUIRE(write_blocks(w, 512) == 6);
    REQUIRE(write_wire_bytes(w, 512) == 6 * 512);
    const PostedWrite pw = mesh.post(w, 0);
    std::uint64_t first = ~0ULL;
    for (int b = 0; b < 6; ++b) {
        first = std::min(first, mem.land_time(1, w.addr / 512 + b));
        CHECK(mem.flag(1, w.addr / 512 + b) == 1);
    }
    REQUIRE(first < pw.land_ps);  // blocks on less loaded planes land earlier
    // Between the first and the last landing, the whole write is not there yet.
    CHECK_FALSE(mem.check_read(1, w.addr, 6 * 512, 5, first));
    CHECK(mem.stale_reads() == 1);
    REQUIRE(mem.stale_samples().size() == 1);
    CHECK(mem.stale_samples()[0].rank == 1);
    CHECK(mem.stale_samples()[0].core == 5);
    CHECK(mem.stale_samples()[0].addr >= w.addr);
    // Every block that has landed can be read on its own, atomically.
    for (int b = 0; b < 6; ++b) {
        const Addr addr = w.addr + 512 * b;
        const std::uint64_t t = mem.land_time(1, addr / 512);
        CHECK(mem.check_read(1, addr, 512, 0, t));
        CHECK_FALSE(mem.check_read(1, addr, 512, 0, t - 1));
    }
    CHECK(mem.check_read(1, w.addr, 6 * 512, 0, pw.land_ps));
    // A watch on all six flags completes when the last block lands.
    std::uint64_t fire = 0;
    CHECK(mem.watch(1, w.addr / 512, 6, true, 1, 0, 0, fire));
    CHECK(fire == pw.land_ps);
    CHECK_FALSE(mem.watch(1, w.addr / 512, 6, true, 2, 0, 0, fire));  // another flag value: not yet
}

// --- kernel API ---------------------------------------------------------------------

TEST_CASE("kernel api: SyncAll releases every core sync_all_ns after the last one arrives", "[moe][kernel]") {
    const ChipParams chip = small_chip(1, 4);
    std::vector<std::uint64_t> after(4, 0);
    KernelRun rt(chip, [&](AivCore& k) {
        k.scalar(1000.0 * (k.core() + 1));  // core c arrives at (c + 1) us
        k.sync_all();
        after[static_cast<std::size_t>(k.core())] = k.now();
        k.timestamp("synced");
    });
    rt.run();
    // Every core's program starts after its task's start cycles (64 at 1 GHz) and
    // the scalar core's dispatch of the four program tasks.
    const std::uint64_t start = rt.system().die(0).context().timing[3].start_ps + 64000;
    for (const auto t : after) CHECK(t == start + 4000000 + 2500000);
    CHECK(rt.end_ps() == start + 6500000);
}

TEST_CASE("kernel api: wait_flag wakes one poll after the flag block lands", "[moe][kernel]") {
    const ChipParams chip = small_chip(2, 1);
    std::uint64_t woke = 0, land = 0;
    std::uint64_t begin = 0;
    KernelRun rt(chip, [&](AivCore& k) {
        const Addr flag = 0x10000;
        if (k.rank() == 0) {
            begin = k.now();
            k.scalar(5000);  // 5 us
            k.set_flag(1, flag, 42);
        } else {
            k.wait_flag(flag, 42);
            woke = k.now();
        }
    });
    rt.run();
    // Issued 5 us after its program began, 32 B on one idle plane: lands 1 us
    // + 32 B / 28 GB/s later; seen one poll after.
    land = begin + 5000000 + 1000000 + ceil_ps(32, 28);
    CHECK(woke == land + 700000);
    CHECK(rt.memory().flag(1, 0x10000 / 512) == 42);
}

TEST_CASE("kernel api: a missing flag is reported as a deadlock naming the core and the address", "[moe][kernel]") {
    const ChipParams chip = small_chip(1, 2);
    KernelRun rt(chip, [&](AivCore& k) {
        if (k.core() == 1) k.wait_flag(0x4000, 1);
    });
    try {
        rt.run();
        FAIL("expected a deadlock");
    } catch (const std::exception& e) {
        CHECK_THAT(e.what(), Contains("kernel#1") && Contains("vector core 1") && Contains("0x4000"));
    }
}

// --- MoE Dispatch through the binary -------------------------------------------------

TEST_CASE("moe: a separate flag block without a barrier reads stale data for some reorder seed", "[moe][stale]") {
    TempDir tmp;
    std::uint64_t worst = 0;
    for (const char* seed : {"1", "2", "3"}) {
        const json s = stats_of(tmp, {"--set", "chip.interconnect.ranks=32", "--set", "workload.flag_in_block=false",
                                      "--set", std::string("chip.interconnect.reorder_seed=") + seed});
        worst = std::max(worst, s["memory_model"]["stale_reads"].get<std::uint64_t>());
        if (s["memory_model"]["stale_reads"].get<std::uint64_t>() > 0) {
            const json& sample = s["memory_model"]["stale_read_samples"][0];
            CHECK(sample.contains("rank"));
            CHECK(sample.contains("address"));
            CHECK(sample.contains("core"));
        }
    }
    CHECK(worst > 0);
}

TEST_CASE("moe: Data-as-Flag and the baseline read no stale data for any reorder seed", "[slow][moe][stale]") {
    TempDir tmp;
    for (const char* seed : {"0", "1", "2", "3", "4"}) {
        for (const char* variant : {"optimized", "baseline"}) {
            const json s = stats_of(tmp, {"--set", "chip.interconnect.ranks=32", "--set",
                                          std::string("workload.variant=") + variant, "--set",
                                          std::string("chip.interconnect.reorder_seed=") + seed});
            INFO(variant << " seed " << seed);
            CHECK(s["memory_model"]["stale_reads"] == 0);
            CHECK(s["memory_model"]["reads_checked"].get<std::uint64_t>() > 0);
        }
    }
}

TEST_CASE("moe: calibration at 288 ranks and batch 128 is baseline 219 us and optimized 117 us within 10%",
          "[slow][moe][calibration]") {
    TempDir tmp;
    const json base = stats_of(tmp, {"--set", "workload.variant=baseline"});
    const json opt = stats_of(tmp, {"--set", "workload.variant=optimized"});
    REQUIRE(base["ranks"]["count"] == 288);
    CHECK(base["total_ns"].get<double>() == Approx(219000).epsilon(0.10));
    CHECK(opt["total_ns"].get<double>() == Approx(117000).epsilon(0.10));
    CHECK(base["memory_model"]["stale_reads"] == 0);
    CHECK(opt["memory_model"]["stale_reads"] == 0);
    CHECK(base["kernel"]["sync_alls"] == 2 * 288);  // two SyncAlls per die
    CHECK(opt["kernel"]["sync_alls"] == 0);
}

TEST_CASE("moe: --profile writes one row per rank and core and one column per phase", "[moe][profile]") {
    TempDir tmp;
    const std::string csv = tmp.path("phases.csv"), stats = tmp.path("s.json"), trace = tmp.path("t.json");
    const Result r = run_moe(tmp, {"--set", "chip.interconnect.ranks=8", "--set", "workload.variant=baseline", "--profile",
                                   csv, "--stats", stats, "--trace", trace});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("stale reads 0"));
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    CHECK(line == "rank,core,start_ns,addr,send,sync_send,status,wait,sync_wait,cumsum,reorder");
    int rows = 0;
    while (std::getline(in, line)) ++rows;
    CHECK(rows == 8 * 48);
    const Result check = run_program(tmp, "python3", {kSrc + "/tools/check_trace.py", "--quiet", trace});
    SHOW(check);
    CHECK(check.code == 0);
}

TEST_CASE("moe: bad mesh configurations are input errors", "[moe][config]") {
    TempDir tmp;
    Result r = run_moe(tmp, {"--set", "chip.interconnect.ranks=1000000"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("chip.interconnect.ranks") && Contains("<= 384"));
    r = run_moe(tmp, {"--set", "chip.interconnect.ranks=4"});  // 4 experts < top-8
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("top-k") && Contains("dispatch"));
    r = run_moe(tmp, {"--set", "workload.varaint=baseline"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("variant"));
}
