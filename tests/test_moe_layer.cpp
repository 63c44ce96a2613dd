// The MoE layer (docs/supernode.md "The MoE layer"): Dispatch -> expert FFN
// GEMMs on each rank's Cube cores -> Combine. The Combine kernels in-process
// on the kernel API; the whole layer through the binary.
//
// SystemC cannot restart in a process: every TEST_CASE here runs at most one
// simulation (ctest runs each case in its own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "kernel_api/kernel_runtime.hpp"
#include "moe/combine.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

// 8 ranks of 4 AIV cores, small tokens (as the kernel-API tests' chip).
ChipParams combine_chip() {
    ChipParams c;
    c.name = "test";
    c.clock_ghz = 1.0;
    c.vector.count = 4;
    c.cube.count = 2;
    c.vector.gm_bytes_per_cycle = 32;
    c.hbm.latency_ns = 300;
    c.interconnect.ranks = 8;
    c.interconnect.planes = 7;
    c.interconnect.plane_bandwidth_gbps = 28;
    c.interconnect.plane_latency_ns = 1000;
    c.interconnect.datablock_bytes = 512;
    c.kernel.sync_all_ns = 2500;
    c.kernel.flag_poll_ns = 700;
    c.kernel.mte_setup_ns = 200;
    c.kernel.issue_cycles = 20;
    return c;
}

MoeParams small_moe(MoeParams::Variant v, int ranks, int epr = 1) {
    MoeParams p;
    static_cast<MoeWorkload&>(p) = default_workload_params("moe").moe;
    p.variant = v;
    p.ranks = ranks;
    p.batch = 16;
    p.hidden = 1024;
    p.top_k = 4;
    p.experts_per_rank = epr;
    p.layer = true;
    return p;
}

// Dispatch, then (standing in for the expert stream) core 0 of each rank
// flags its experts done once its Dispatch has ended, then the Combine.
void run_combine(MoeParams::Variant v) {
    const ChipParams chip = combine_chip();
    const MoeParams p = small_moe(v, chip.interconnect.ranks);
    const DispatchLayout dl(p, 512);
    const Routing route(p);
    const DispatchContext dctx(p, route, dl);
    const LayerLayout ll(p, chip.vector.count, 512);
    const LayerContext ctx(dctx, ll);
    const bool baseline = v == MoeParams::Variant::baseline;
    KernelRuntime rt("supernode", chip, [&](AivCore& k) {
        if (baseline) dispatch_baseline(k, dctx);
        else dispatch_optimized(k, dctx);
        k.sync_all();
        if (k.core() == 0) k.set_flag(k.rank(), ll.done(), LayerLayout::kDoneFlag);
        if (baseline) combine_baseline(k, ctx);
        else combine_optimized(k, ctx);
    });
    rt.run();  // a token missing one of its rows would be a deadlock (the optimized waits for each)
    CHECK(rt.memory().stale_reads() == 0);
    // Every (token, k) slot of every source rank holds its row, flagged.
    int slots = 0;
    for (int src = 0; src < p.ranks; ++src)
        for (int q = 0; q < route.pairs(); ++q) {
            const std::uint64_t first = rt.memory().block_of(ll.slot(q));
            for (std::uint32_t b = 0; b < ll.data_blocks; ++b) {
                INFO("rank " << src << " pair " << q << " block " << b);
                CHECK(rt.memory().land_time(src, first + b) < rt.end_ps());
                if (!baseline) CHECK(rt.memory().flag(src, first + b) == LayerLayout::kCombineFlag);
            }
            ++slots;
        }
    CHECK(slots == 8 * 16 * 4);
    // A bf16 row of 1024 elements: 2048 B in 5 Data-as-Flag blocks (504 B each) or 4 plain ones.
    CHECK(ll.data_blocks == (baseline ? 4u : 5u));
}

}  // namespace

TEST_CASE("moe layer: every OutputBuffer row belongs to one (source rank, token, k) and each pair has one row",
          "[moe][layer]") {
    const MoeParams p = small_moe(MoeParams::Variant::optimized, 8, 2);
    const DispatchLayout dl(p, 512);
    const Routing route(p);
    const DispatchContext dctx(p, route, dl);
    const LayerLayout ll(p, 4, 512);
    const LayerContext ctx(dctx, ll);
    std::map<std::pair<int, int>, int> seen;
    for (int r = 0; r < p.ranks; ++r) {
        const auto& srcs = ctx.row_src[static_cast<std::size_t>(r)];
        CHECK(static_cast<int>(srcs.size()) == route.received(r));
        for (std::size_t row = 0; row < srcs.size(); ++row) {
            const int src = srcs[row], q = ctx.row_pair[static_cast<std::size_t>(r)][row];
            REQUIRE(src >= 0);
            CHECK(route.expert(src, q) / p.experts_per_rank == r);
            ++seen[{src, q}];
        }
        // The experts' rows tile the OutputBuffer, expert after expert.
        CHECK(ctx.expert_rows(r, 0).first == 0);
        CHECK(ctx.expert_rows(r, 0).second == ctx.expert_rows(r, 1).first);
        CHECK(ctx.expert_rows(r, 1).second == route.received(r));
    }
    CHECK(seen.size() == static_cast<std::size_t>(8 * 16 * 4));
    for (const auto& [pair, n] : seen) CHECK(n == 1);
}

TEST_CASE("moe layer: an expert is ready when the AIV cores whose reorder share holds its rows have flagged it",
          "[moe][layer]") {
    const MoeParams p = small_moe(MoeParams::Variant::optimized, 8, 2);
    const DispatchLayout dl(p, 512);
    const Routing route(p);
    const DispatchContext dctx(p, route, dl);
    const LayerLayout ll(p, 4, 512);
    const LayerContext ctx(dctx, ll);
    for (int r = 0; r < p.ranks; ++r) {
        const int rows = route.received(r);
        for (int le = 0; le < 2; ++le) {
            const auto [a, b] = ctx.expert_rows(r, le);
            const auto [c0, c1] = ctx.ready_cores(r, le);
            // Exactly the cores with a row of [a, b) in their share.
            for (int c = 0; c < 4; ++c) {
                const auto [n0, n1] = LayerContext::share(rows, c, 4);
                INFO("rank " << r << " expert " << le << " core " << c);
                CHECK((c >= c0 && c < c1) == (n0 < b && n1 > a));
            }
        }
    }
}

TEST_CASE("moe layer: the baseline Combine returns every row to its source slot with no stale read", "[moe][layer]") {
    run_combine(MoeParams::Variant::baseline);
}

TEST_CASE("moe layer: the optimized Combine returns every row to its source slot as Data-as-Flag blocks",
          "[moe][layer]") {
    run_combine(MoeParams::Variant::optimized);
}

// --- the whole layer through the binary ------------------------------------------------

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a3-supernode.json";
const std::string kLayer = kSrc + "/models/moe_layer.json";

// npusim run --chip a3-supernode --workload moe_layer <args...>.
Result run_layer(const TempDir& tmp, const std::vector<std::string>& args) {
    std::vector<std::string> all = {"run", "--chip", kChip, "--workload", kLayer};
    all.insert(all.end(), args.begin(), args.end());
    return run_npusim(tmp, all);
}

}  // namespace

TEST_CASE("moe layer: bad layer keys exit 2 naming the key, with did-you-mean for typos", "[moe][layer][config]") {
    TempDir tmp;
    Result r = run_layer(tmp, {"--set", "workload.expert_ffn=100"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("workload.expert_ffn: expected a multiple of 16") && Contains("got 100"));
    r = run_layer(tmp, {"--set", "workload.expert_dtype=fp8"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("workload.expert_dtype: expected one of 'fp16', 'bf16', 'int8'"));
    r = run_layer(tmp, {"--set", "workload.expert_ffn=0"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("workload.expert_ffn: expected an integer >= 16"));
    const std::string w = tmp.write("w.json", "{\"kind\": \"moe\", \"layer\": true,\n \"expert_fnn\": 2048}\n");
    r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", w});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("w.json: unknown key 'expert_fnn' in workload (did you mean 'expert_ffn'?)"));
    r = run_layer(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=0"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("cube"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
