// The MoE layer (docs/supernode.md "The MoE layer"): Dispatch -> expert FFN
// GEMMs on each rank's Cube cores -> Combine. The Combine kernels in-process
// on the kernel API; the whole layer through the binary.
//
// SystemC cannot restart in a process: every TEST_CASE here runs at most one
// simulation (ctest runs each case in its own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "kernel_api/kernel_runtime.hpp"
#include "moe/combine.hpp"
#include "moe/expert_stream.hpp"
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
    c.interconnect.node_size = 4;  // two nodes: the Combine crosses both tiers
    c.interconnect.intra_node = {500, 28};
    c.interconnect.inter_node = {1000, 28};
    c.interconnect.datablock_bytes = 512;
    c.kernel.sync_all_ns = 2500;
    c.kernel.flag_poll_ns = 700;
    c.kernel.descriptor_issue_ns = 200;
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

TEST_CASE("moe layer: an expert's GEMM tiles cover the tokens routed to it and wait for its ready flags",
          "[moe][layer]") {
    ChipParams chip = combine_chip();
    chip.cube.count = 3;
    for (const auto v : {MoeParams::Variant::optimized, MoeParams::Variant::baseline}) {
        MoeParams p = small_moe(v, 8, 2);
        p.expert_ffn = 96;
        const DispatchLayout dl(p, 512);
        const Routing route(p);
        const DispatchContext dctx(p, route, dl);
        const LayerLayout ll(p, chip.vector.count, 512);
        const LayerContext ctx(dctx, ll);
        for (int r = 0; r < p.ranks; ++r) {
            const TaskStream ts = expert_stream(ctx, chip, r);
            std::uint64_t gate_up_mn = 0, down_mn = 0;
            std::map<std::pair<int, std::string>, std::uint64_t> rows_per_column;  // gate_up: sum of m per (expert, N column)
            for (const Task& t : ts.tasks) {
                CHECK(t.rank == r);
                if (t.kernel != Kernel::matmul) continue;
                CHECK(t.core_type == CoreType::cube);
                CHECK(t.params.dtype == DType::int8);
                const std::string op = ts.name(t.op);
                const int le = std::stoi(op.substr(6));  // "expert<le>.gate_up"
                const auto [first, last] = ctx.expert_rows(r, le);
                CHECK(t.params.m <= static_cast<std::uint64_t>(last - first));
                if (op.find(".gate_up") != std::string::npos) {
                    CHECK(t.params.k == 1024);
                    gate_up_mn += t.params.m * t.params.n;
                    const std::string tile = ts.name(t.tile);  // "m<i>n<j>"
                    rows_per_column[{le, tile.substr(tile.find('n'))}] += t.params.m;
                    REQUIRE(t.wait_memory.size() == 1);
                    const MemoryWait& w = t.wait_memory[0];
                    CHECK(w.value == LayerLayout::kReadyFlag);
                    if (v == MoeParams::Variant::optimized) {
                        const auto [c0, c1] = ctx.ready_cores(r, le);
                        CHECK(w.addr == ll.ready(le, c0));
                        CHECK(w.blocks == static_cast<std::uint32_t>(c1 - c0));
                    } else {
                        CHECK(w.addr == ll.ready(le, 0));
                        CHECK(w.blocks == 1);
                    }
                } else {
                    CHECK(t.params.k == 96);
                    CHECK(t.wait_memory.empty());
                    down_mn += t.params.m * t.params.n;
                }
            }
            const auto received = static_cast<std::uint64_t>(route.received(r));
            CHECK(gate_up_mn == received * 2 * 96);
            CHECK(down_mn == received * 1024);
            // Each column of an expert's gate_up tiles holds each of its rows once.
            std::map<int, std::uint64_t> rows_of_expert;
            for (const auto& [key, rows] : rows_per_column) {
                const auto [first, last] = ctx.expert_rows(r, key.first);
                CHECK(rows == static_cast<std::uint64_t>(last - first));
                rows_of_expert[key.first] = rows;
            }
            std::uint64_t all_rows = 0;
            for (const auto& [le, rows] : rows_of_expert) all_rows += rows;
            CHECK(all_rows == received);
            // The last task flags the rank's own GM.
            const Task& done = ts.tasks.back();
            CHECK(done.kernel == Kernel::copy);
            CHECK(done.remote.dst_rank == r);
            CHECK(done.remote.addr == ll.done());
            CHECK(done.remote.has_flag);
            CHECK(done.params.bytes == 8);
        }
    }
}

TEST_CASE("moe layer: an expert GEMM is cut into about one near-square tile per Cube core", "[moe][layer]") {
    auto sum = [](const std::vector<std::uint64_t>& v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); };
    // 1024 tokens x 4096 (gate_up) on 24 cores: 2 row blocks x 12 columns of 352 (the last 224).
    ExpertGrid g = expert_grid(1024, 4096, 24);
    CHECK(g.rows == std::vector<std::uint64_t>{512, 512});
    REQUIRE(g.cols.size() == 12);
    CHECK(g.cols.front() == 352);
    CHECK(g.cols.back() == 224);
    CHECK(sum(g.cols) == 4096);
    // 1024 x 7168 (down) on 48 cores: 3 x 16 tiles of 448 columns.
    g = expert_grid(1024, 7168, 48);
    CHECK(g.rows == std::vector<std::uint64_t>{341, 341, 342});
    CHECK(g.cols == std::vector<std::uint64_t>(16, 448));
    // A few tokens: one row block, the columns spread over the cores.
    g = expert_grid(5, 4096, 24);
    CHECK(g.rows == std::vector<std::uint64_t>{5});
    CHECK(g.cols.size() == 24);
    for (const auto w : g.cols) CHECK(w % 16 == 0);
}

namespace {
json layer_stats(const TempDir& tmp, std::vector<std::string> args) {
    const std::string stats = tmp.path("stats.json");
    args.insert(args.end(), {"--stats", stats, "-q"});
    const Result r = run_layer(tmp, args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    return read_json(stats);
}
}  // namespace

TEST_CASE("moe layer: baseline and optimized layers run at 16 ranks and the optimized one is faster", "[moe][layer]") {
    TempDir tmp;
    const std::string csv = tmp.path("phases.csv");
    const Result run = run_layer(tmp, {"--set", "chip.interconnect.ranks=16", "--profile", csv});
    INFO(run.err);
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out, Contains("MoE layer (optimized)") && Contains("  dispatch ") && Contains("  experts ") &&
                            Contains("  combine ") && Contains("memory_model.stale_reads 0"));
    std::ifstream in(csv);
    std::string header;
    std::getline(in, header);
    CHECK_THAT(header, Contains(",reorder,ready,combine_watch,experts,combine_send,combine_sum"));
    const json opt = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16"});
    const json base = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "workload.variant=baseline"});
    for (const json* s : {&opt, &base}) {
        CHECK((*s)["memory_model"]["stale_reads"] == 0);
        const json& ph = (*s)["moe"]["phases"];
        double share = 0;
        for (const char* name : {"dispatch", "experts", "combine"}) {
            INFO(name);
            CHECK(ph[name]["mean_ns"].get<double>() > 1000);  // every phase takes microseconds
            CHECK(ph[name]["end_ns"].get<double>() <= (*s)["total_ns"].get<double>() + 1e-6);
            share += ph[name]["share"].get<double>();
        }
        CHECK(share == Approx(1.0));
    }
    CHECK(opt["total_ns"].get<double>() < 0.9 * base["total_ns"].get<double>());
    CHECK(opt["moe"]["phases"]["combine"]["mean_ns"].get<double>() < base["moe"]["phases"]["combine"]["mean_ns"].get<double>());
}

TEST_CASE("moe layer: the expert GEMMs compute exactly the tokens the Dispatch delivered", "[moe][layer]") {
    TempDir tmp;
    const json s = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "workload.distribution=skewed"});
    const double received = s["moe"]["received_tokens"]["total"].get<double>();
    CHECK(received == 16 * 128 * 8);
    CHECK(s["moe"]["expert_gemm"]["rows"].get<double>() == received);
    // Per row: gate_up 2 x 7168 x 4096 and down 2 x 2048 x 7168 flops.
    CHECK(s["moe"]["expert_gemm"]["flops"].get<double>() == Approx(received * (2.0 * 7168 * 4096 + 2.0 * 2048 * 7168)));
}

TEST_CASE("moe layer: twice the Cube cores shorten the expert phase, more when the L2 can feed them", "[moe][layer]") {
    TempDir tmp;
    const json c24 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16"});
    const json c48 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=48"});
    const double e24 = c24["moe"]["phases"]["experts"]["mean_ns"].get<double>();
    const double e48 = c48["moe"]["phases"]["experts"]["mean_ns"].get<double>();
    INFO("experts: 24 AIC " << e24 << " ns, 48 AIC " << e48 << " ns");
    // The tiles stream their operands from L2: sized for 24 cores (24 x 110 B/cycle),
    // it caps what 48 can get; with four times the L2 bandwidth they get it.
    CHECK(e48 < 0.9 * e24);
    const json c48_l2 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=48", "--set",
                                          "chip.l2.bandwidth_gbps=20000"});
    CHECK(c48_l2["moe"]["phases"]["experts"]["mean_ns"].get<double>() < 0.65 * e24);
    // The Dispatch does not use the Cube cores.
    CHECK(c48["moe"]["phases"]["dispatch"]["mean_ns"].get<double>() ==
          Approx(c24["moe"]["phases"]["dispatch"]["mean_ns"].get<double>()).epsilon(0.02));
}
