// The MoE layer as a graph every rank runs (docs/supernode.md "The MoE
// layer"): Dispatch -> GroupedMatMul experts on each rank's Cube cores ->
// Combine. The Combine kernels in-process on the kernel API; the compiled
// graph and the whole layer through the binary.
//
// SystemC cannot restart in a process: every TEST_CASE here runs at most one
// simulation (ctest runs each case in its own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "collective/moe_op.hpp"
#include "moe/combine.hpp"
#include "support/e2e.hpp"
#include "support/kernel_run.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

// 8 ranks of 4 AIV cores, small tokens.
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

MoeOp small_moe(MoeOp::Variant v, int ranks, int epr = 1) {
    MoeOp p;
    p.variant = v;
    p.group = ranks;
    p.batch = 16;
    p.hidden = 1024;
    p.in_elt = p.out_elt = 1;
    p.top_k = 4;
    p.experts = ranks * epr;
    p.in_addr = 0x100000;
    p.out_addr = 0x800000;
    return p;
}

// Dispatch, a SyncAll standing in for the experts, then the Combine of the
// bf16 rows back (its own call: flag 2).
void run_combine(MoeOp::Variant v) {
    const ChipParams chip = combine_chip();
    const MoeOp p = small_moe(v, chip.interconnect.ranks);
    const Routing route(p.routing, p.ranks(), p.batch, p.top_k, p.experts);
    const DispatchLayout dl(p, 512);
    const DispatchContext dctx(p, route, dl);
    MoeOp c = p;
    c.in_elt = c.out_elt = 2;
    c.epoch = 2;
    c.in_addr = 0x1000000;
    c.out_addr = 0x2000000;
    const CombineLayout cl(c, 512);
    const CombineRows rows(dctx);
    const CombineContext ctx(dctx, c, cl, rows);
    const bool baseline = v == MoeOp::Variant::baseline;
    KernelRun rt(chip, [&](AivCore& k) {
        if (baseline) dispatch_baseline(k, dctx);
        else dispatch_optimized(k, dctx);
        k.sync_all();
        if (baseline) combine_baseline(k, ctx);
        else combine_optimized(k, ctx);
    });
    rt.run();  // a token missing one of its rows would be a deadlock (the optimized waits for each)
    CHECK(rt.memory().stale_reads() == 0);
    // Every (token, k) slot of every source rank holds its row, flagged with the Combine's call.
    int slots = 0;
    for (int src = 0; src < p.ranks(); ++src)
        for (int q = 0; q < route.pairs(); ++q) {
            const std::uint64_t first = rt.memory().block_of(cl.slot(q));
            for (std::uint32_t b = 0; b < cl.data_blocks; ++b) {
                INFO("rank " << src << " pair " << q << " block " << b);
                CHECK(rt.memory().land_time(src, first + b) < rt.end_ps());
                if (!baseline) CHECK(rt.memory().flag(src, first + b) == 2);
            }
            ++slots;
        }
    CHECK(slots == 8 * 16 * 4);
    // A bf16 row of 1024 elements: 2048 B in 5 Data-as-Flag blocks (504 B each) or 4 plain ones.
    CHECK(cl.data_blocks == (baseline ? 4u : 5u));
}

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a3-supernode.json";
const std::string kLayer = kSrc + "/models/moe_layer.json";

// npusim run --chip a3-supernode --workload moe_layer <args...>.
Result run_layer(const TempDir& tmp, const std::vector<std::string>& args) {
    std::vector<std::string> all = {"run", "--chip", kChip, "--workload", kLayer};
    all.insert(all.end(), args.begin(), args.end());
    return run_npusim(tmp, all);
}

json layer_stats(const TempDir& tmp, std::vector<std::string> args) {
    const std::string stats = tmp.path("stats.json");
    args.insert(args.end(), {"--stats", stats, "-q"});
    const Result r = run_layer(tmp, args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    return read_json(stats);
}

// An op of the system's per-op table (rank_ops).
const json& rank_op(const json& s, const std::string& name) {
    for (const json& o : s["rank_ops"])
        if (o["name"] == name) return o;
    FAIL("no op " << name << " in rank_ops");
    return s;
}

}  // namespace

TEST_CASE("moe layer: every expert row belongs to one (source rank, token, k) and each pair has one row", "[moe][layer]") {
    const MoeOp p = small_moe(MoeOp::Variant::optimized, 8, 2);
    const Routing route(p.routing, p.ranks(), p.batch, p.top_k, p.experts);
    const DispatchLayout dl(p, 512);
    const DispatchContext dctx(p, route, dl);
    const CombineRows rows(dctx);
    std::map<std::pair<int, int>, int> seen;
    for (int r = 0; r < p.ranks(); ++r) {
        const auto& srcs = rows.src[static_cast<std::size_t>(r)];
        CHECK(static_cast<int>(srcs.size()) == route.received(r));
        CHECK(route.received(r, 0) + route.received(r, 1) == route.received(r));
        for (std::size_t row = 0; row < srcs.size(); ++row) {
            const int src = srcs[row], q = rows.pair[static_cast<std::size_t>(r)][row];
            REQUIRE(src >= 0);
            CHECK(route.expert(src, q) / p.experts_per_rank() == r);
            ++seen[{src, q}];
        }
    }
    CHECK(seen.size() == static_cast<std::size_t>(8 * 16 * 4));
    for (const auto& [pair, n] : seen) CHECK(n == 1);
}

TEST_CASE("moe layer: the baseline Combine returns every row to its source slot with no stale read", "[moe][layer]") {
    run_combine(MoeOp::Variant::baseline);
}

TEST_CASE("moe layer: the optimized Combine returns every row to its source slot as Data-as-Flag blocks",
          "[moe][layer]") {
    run_combine(MoeOp::Variant::optimized);
}

TEST_CASE("moe layer: bad keys and nodes exit 2 naming them, with did-you-mean for typos", "[moe][layer][config]") {
    TempDir tmp;
    Result r = run_layer(tmp, {"--set", "workload.dims.experts_per_rnak=2"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("experts_per_rnak") && Contains("experts_per_rank"));
    r = run_layer(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "workload.routing.redundant_experts=3"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("dispatch") && Contains("do not divide across the 16 ranks"));
    r = run_layer(tmp, {"--set", "workload.routing.distribution=zipff"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("workload.routing.distribution") && Contains("zipf"));
    const std::string w = tmp.write("w.json", "{\"kind\": \"moe\", \"layer\": true}\n");
    r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", w});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("w.json") && Contains("kind 'moe' is now a graph") && Contains("models/moe_layer.json"));
    r = run_layer(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=0"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("cube"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    // One rank: the node and the key to change, not a consequence (top-k over one expert).
    r = run_layer(tmp, {"--set", "chip.interconnect.ranks=1"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("nodes[0] (dispatch): Dispatch communicates across ranks, but the chip has 1 rank") &&
                          Contains("--set chip.interconnect.ranks=N"));
}

TEST_CASE("moe layer: the compiled experts cover exactly the tokens each rank received, planned by the tiler",
          "[slow][moe][layer]") {
    TempDir tmp;
    const std::string out = tmp.path("layer.jsonl");
    const Result r = run_npusim(tmp, {"compile", "--chip", kChip, "--workload", kLayer, "--set", "chip.interconnect.ranks=16",
                                      "--set", "workload.routing.distribution=zipf", "--emit-tasks", out});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("gate_up") && Contains("row blocks"));
    // Per rank: the Dispatch program's output rows (its tasks write them) and
    // the rows the gate_up tiles read, each tile's m at once per column block.
    std::map<int, std::uint64_t> gate_up_mn, down_mn, program_tasks;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        const json t = json::parse(line);
        if (!t.contains("id")) continue;
        const int rank = t["rank"].get<int>();
        if (t["kernel"] == "program") ++program_tasks[rank];
        if (t["kernel"] != "matmul") continue;
        CHECK(t["params"]["dtype"] == "int8");
        const std::uint64_t mnk = t["params"]["m"].get<std::uint64_t>() * t["params"]["n"].get<std::uint64_t>() *
                                  t["params"]["k"].get<std::uint64_t>();
        if (t["op"] == "gate_up") gate_up_mn[rank] += mnk;
        if (t["op"] == "down") down_mn[rank] += mnk;
    }
    REQUIRE(program_tasks.size() == 16);
    std::uint64_t rows = 0;
    for (const auto& [rank, mnk] : gate_up_mn) {
        const std::uint64_t received = mnk / (4096 * 7168);
        CHECK(mnk == received * 4096 * 7168);
        CHECK(down_mn[rank] == received * 7168 * 2048);
        CHECK(program_tasks[rank] == 2 * 48);  // Dispatch and Combine on every AIV core
        rows += received;
    }
    CHECK(rows == 16 * 128 * 8);  // every token's 8 pairs, over the ranks
}

TEST_CASE("moe layer: baseline and optimized layers run at 16 ranks and the optimized one is faster", "[slow][moe][layer]") {
    TempDir tmp;
    const std::string csv = tmp.path("phases.csv");
    const Result run = run_layer(tmp, {"--set", "chip.interconnect.ranks=16", "--profile", csv});
    INFO(run.err);
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out, Contains("dispatch") && Contains("combine") && Contains("gate_up") && Contains("stale reads 0"));
    std::ifstream in(csv);
    std::string header;
    std::getline(in, header);
    CHECK_THAT(header, Contains(",reorder,combine_watch,combine_send,combine_sum"));
    const json opt = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16"});
    const json base = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "workload.variant=baseline"});
    for (const json* s : {&opt, &base}) {
        CHECK((*s)["memory_model"]["stale_reads"] == 0);
        // Dispatch, the experts and the Combine follow one another on every rank.
        const json& d = rank_op(*s, "dispatch");
        const json& e = rank_op(*s, "down");
        const json& c = rank_op(*s, "combine");
        CHECK(d["ranks"] == 16);
        CHECK(d["mean_ns"].get<double>() > 10000);
        CHECK(c["mean_ns"].get<double>() > 10000);
        CHECK(rank_op(*s, "gate_up")["start_ns"].get<double>() >= d["start_ns"].get<double>());
        CHECK(c["end_ns"].get<double>() == Approx((*s)["total_ns"].get<double>()));
        CHECK(e["end_ns"].get<double>() <= c["end_ns"].get<double>());
    }
    CHECK(opt["total_ns"].get<double>() < 0.9 * base["total_ns"].get<double>());
    CHECK(rank_op(opt, "combine")["mean_ns"].get<double>() < rank_op(base, "combine")["mean_ns"].get<double>());
}

TEST_CASE("moe layer: twice the Cube cores shorten the experts, more when the L2 can feed them", "[slow][moe][layer]") {
    TempDir tmp;
    const auto experts_us = [](const json& s) {
        return (rank_op(s, "down")["end_ns"].get<double>() - rank_op(s, "gate_up")["start_ns"].get<double>()) / 1000.0;
    };
    const json c24 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16"});
    const json c48 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=48"});
    const double e24 = experts_us(c24), e48 = experts_us(c48);
    INFO("experts: 24 AIC " << e24 << " us, 48 AIC " << e48 << " us");
    CHECK(e48 < 0.9 * e24);
    const json c48_l2 = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.cores.cube.count=48", "--set",
                                          "chip.l2.bandwidth_gbps=20000"});
    CHECK(experts_us(c48_l2) <= e48);
    // The Dispatch does not use the Cube cores.
    CHECK(rank_op(c48, "dispatch")["mean_ns"].get<double>() ==
          Approx(rank_op(c24, "dispatch")["mean_ns"].get<double>()).epsilon(0.02));
}

TEST_CASE("moe layer: half the HBM bandwidth slows the experts, double speeds them", "[slow][moe][layer]") {
    TempDir tmp;
    const auto experts_us = [](const json& s) {
        return (rank_op(s, "down")["end_ns"].get<double>() - rank_op(s, "gate_up")["start_ns"].get<double>()) / 1000.0;
    };
    const double base = experts_us(layer_stats(tmp, {"--set", "chip.interconnect.ranks=16"}));
    const double half = experts_us(layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "chip.hbm.bandwidth_gbps=800"}));
    INFO("experts: base " << base << " us, half HBM " << half << " us");
    CHECK(half > 1.02 * base);
}

TEST_CASE("moe layer: a row table scales a task's work with the rows that hold tokens on its rank", "[moe][layer][tasks]") {
    std::vector<RowTable> tables(1);
    tables[0].per_rank = {{100, 0}, {256, 17}};
    KernelParams p;
    p.rows_table = 1;
    p.rows_group = 256;
    p.rows_first = 64;  // rows 64..191 of expert 0
    p.rows_span = 128;
    CHECK(valid_row_share(p, tables, 0) == Approx(36.0 / 128));  // rows 64..99 hold tokens
    CHECK(valid_row_share(p, tables, 1) == 1.0);
    p.rows_first = 256 + 16;  // expert 1, rows 16..143
    CHECK(valid_row_share(p, tables, 0) == 0.0);
    CHECK(valid_row_share(p, tables, 1) == Approx(1.0 / 128));
    p.rows_first = 192;  // across both experts: rows 192..255 of 0, 0..63 of 1
    CHECK(valid_row_share(p, tables, 1) == Approx((64.0 + 17) / 128));
    p.rows_table = 0;
    CHECK(valid_row_share(p, tables, 0) == 1.0);
}

TEST_CASE("moe layer: a Dispatch with a capacity compiles one program for every rank, and each rank's experts work on "
          "the tokens it received",
          "[slow][moe][layer]") {
    TempDir tmp;
    json g = read_json(kLayer);
    g["nodes"][0]["attrs"]["capacity"] = "max";
    const std::string graph = tmp.path("layer_capacity.json");
    std::ofstream(graph) << g.dump();
    const std::string out = tmp.path("layer.jsonl");
    const Result c = run_npusim(tmp, {"compile", "--chip", kChip, "--workload", graph, "--set", "chip.interconnect.ranks=16",
                                      "--set", "workload.routing.distribution=zipf", "--emit-tasks", out});
    INFO(c.err);
    REQUIRE(c.code == 0);
    CHECK_THAT(c.out, Contains("1 distinct rank program"));
    // The row table holds each rank's tokens: every pair of every rank, once.
    std::ifstream in(out);
    std::string line;
    std::uint64_t rows = 0, masked = 0;
    std::uint32_t most = 0;
    std::vector<std::uint64_t> rows_of(16, 0);                // tokens each rank's expert received
    std::map<std::string, std::set<std::string>> row_blocks;  // "rank op group" -> its tasks' row ranges
    const std::regex group_rows(R"(^g(\d+)/m(\d+-\d+))");
    while (std::getline(in, line)) {
        const json t = json::parse(line);
        std::smatch m;
        const std::string tile = t.value("tile", "");
        if (t.contains("id") && (t["op"] == "gate_up" || t["op"] == "down") && std::regex_search(tile, m, group_rows))
            row_blocks[fmt::format("{} {} {}", t["rank"].get<int>(), t["op"].get<std::string>(), m[1].str())].insert(
                m[2]);
        if (t.contains("rows_table")) {
            CHECK(t["rows_table"] == "dispatch");
            REQUIRE(t["rows"].size() == 16);
            for (std::size_t r = 0; r < t["rows"].size(); ++r) {
                rows += t["rows"][r][0].get<std::uint64_t>();
                rows_of[r] = t["rows"][r][0].get<std::uint64_t>();
                most = std::max(most, t["rows"][r][0].get<std::uint32_t>());
            }
        }
        if (t.contains("id") && t["params"].contains("valid_rows")) ++masked;
    }
    CHECK(rows == 16 * 128 * 8);
    CHECK(masked > 0);
    // Every rank's expert buffers are `capacity` rows tall, the rows the
    // plan is made for: each group is cut into at most the row blocks the
    // plan names, never into one more, shorter block that streams its
    // expert's weights again.
    std::map<std::string, std::size_t> planned;
    const std::regex plan_line(R"(tile: (\w+) +\d+ tasks +(\d+) row blocks)");
    for (std::sregex_iterator it(c.out.begin(), c.out.end(), plan_line), end; it != end; ++it)
        planned[(*it)[1].str()] = std::stoul((*it)[2].str());
    REQUIRE(planned.count("gate_up") == 1);
    REQUIRE(planned.count("down") == 1);
    REQUIRE(row_blocks.size() == 2 * 16);  // one expert per rank, two GEMMs
    for (const auto& [group, ranges] : row_blocks) {
        CAPTURE(group);
        CHECK(ranges.size() <= planned.at(group.substr(group.find(' ') + 1, group.rfind(' ') - group.find(' ') - 1)));
    }
    // Zipf routing: the busiest rank gets half again the mean or more, and its
    // experts take longer than the mean rank's.
    CHECK(most > 3 * 128 * 8 / 2);
    const json s = layer_stats(tmp, {"--set", "chip.interconnect.ranks=16", "--set", "workload.routing.distribution=zipf"});
    TempDir tmp2;
    const std::string stats = tmp2.path("cap.json");
    const Result r = run_npusim(tmp2, {"run", "--chip", kChip, "--workload", graph, "--set", "chip.interconnect.ranks=16", "--set",
                                       "workload.routing.distribution=zipf", "--stats", stats, "-q"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json cap = read_json(stats);
    CHECK(cap["memory_model"]["stale_reads"] == 0);
    const json& down = rank_op(cap, "down");
    CHECK(down["end_ns"].get<double>() - down["start_ns"].get<double>() > 1.5 * down["mean_ns"].get<double>());
    // The op table (of the rank that ends last) counts the FLOPs of the rows
    // its expert received, not of its capacity-tall buffer: gate and up are
    // 7168 -> 2 x 2048.
    const auto last = cap["ranks"]["last"].get<std::size_t>();
    REQUIRE(last < rows_of.size());
    const auto gate_up =
        std::find_if(cap["ops"].begin(), cap["ops"].end(), [](const json& o) { return o["name"] == "gate_up"; });
    REQUIRE(gate_up != cap["ops"].end());
    CAPTURE(last, rows_of[last], most);
    CHECK((*gate_up)["flops"].get<double>() ==
          Approx(2.0 * static_cast<double>(rows_of[last]) * 4096 * 7168).epsilon(0.01));
    // The same layer with rows packed per rank: the same tokens, the same
    // kernels, so about the same time (tile plans differ).
    CHECK(cap["total_ns"].get<double>() == Approx(s["total_ns"].get<double>()).epsilon(0.1));
}
