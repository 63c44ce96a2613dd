// Collectives end to end (docs/collectives.md): every op and algorithm runs
// on 8 whole-die ranks of the a3 supernode through `npusim run`, the mesh
// carries the textbook volume, large messages land within 15% of the
// alpha-beta bound, and the time answers the mesh keys as the bound says.
// Also the hand-written cross-rank streams of traces/.
//
// Every simulation goes through the npusim binary (SystemC cannot restart in
// a process), so a case may run several.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a3-supernode.json";
const std::string kModel = kSrc + "/models/collective_allreduce.json";

json run_collective(const TempDir& tmp, const std::string& op, const std::string& algorithm, std::uint64_t bytes,
                    std::vector<std::string> sets = {}) {
    sets.insert(sets.begin(), {"chip.interconnect.ranks=8", "workload.op=" + op, "workload.algorithm=" + algorithm,
                               "workload.bytes=" + std::to_string(bytes)});
    return run_for_stats(tmp, kChip, kModel, sets);
}

}  // namespace

TEST_CASE("collective run: every op and algorithm runs on 8 ranks, the mesh carries each rank's textbook volume, never faster than the wire", "[collective][e2e]") {
    TempDir tmp;
    const std::uint64_t bytes = 1 << 20;
    for (const char* op : {"allreduce", "allgather", "reduce_scatter", "alltoall"})
        for (const char* algorithm : {"ring", "mesh"}) {
            INFO(op << " " << algorithm);
            const json s = run_collective(tmp, op, algorithm, bytes);
            const double textbook = (std::string(op) == "allreduce" ? 2.0 : 1.0) * 7 / 8 * bytes;
            CHECK(s["collective"]["sent_bytes_per_rank"].get<double>() == textbook);
            // Every rank sends the same: the wire carries 8 ranks' DataBlocks and their headers, nothing else.
            CHECK(s["mesh"]["bytes"].get<double>() + s["mesh"]["header_bytes"].get<double>() ==
                  8 * s["collective"]["wire_bytes_per_rank"].get<double>());
            CHECK(s["collective"]["wire_bytes_per_rank"].get<double>() ==
                  Approx(textbook * 544 / 504).epsilon(0.01));
            // No schedule beats the wire: the bandwidth term is a hard floor.
            CHECK(s["total_ns"].get<double>() >= s["collective"]["bandwidth_ns"].get<double>());
            CHECK(s["collective"]["efficiency"].get<double>() > 0.2);
        }
}

TEST_CASE("collective run: 64 MiB allreduce (ring, mesh) and allgather (mesh) land within 15% of the alpha-beta bound", "[collective][e2e]") {
    TempDir tmp;
    // The mesh allgather is the one an incast once pushed to 1.7x the bound (peers taken slice by slice).
    for (const auto& [op, algorithm] : std::vector<std::pair<std::string, std::string>>{
             {"allreduce", "ring"}, {"allreduce", "mesh"}, {"allgather", "mesh"}}) {
        INFO(op << " " << algorithm);
        const json s = run_collective(tmp, op, algorithm, 64ull << 20);
        const double ratio = s["total_ns"].get<double>() / s["collective"]["bound_ns"].get<double>();
        // Slices in flight hide a little of the per-step latency: within 15% either way.
        CHECK(ratio >= 0.85);
        CHECK(ratio <= 1.15);
        CHECK(s["total_ns"].get<double>() >= s["collective"]["bandwidth_ns"].get<double>());
        CHECK(s["collective"]["efficiency"].get<double>() == Approx(1 / ratio));
    }
}

TEST_CASE("collective run: plane bandwidth x2 halves a large allreduce, plane latency x2 slows a small one", "[collective][e2e]") {
    TempDir tmp;
    const double large = run_collective(tmp, "allreduce", "ring", 64ull << 20)["total_ns"];
    const double large_wide =
        run_collective(tmp, "allreduce", "ring", 64ull << 20, {"chip.interconnect.intra_node.plane_bandwidth_gbps=56"})["total_ns"];
    CHECK(large_wide / large == Approx(0.5).margin(0.06));
    const double small = run_collective(tmp, "allreduce", "ring", 64 << 10)["total_ns"];
    const double small_far =
        run_collective(tmp, "allreduce", "ring", 64 << 10, {"chip.interconnect.intra_node.latency_ns=1000"})["total_ns"];
    // 14 steps x 500 ns more latency, at least: the small message is latency-bound.
    CHECK(small_far - small >= 14 * 500 * 0.95);
    CHECK(small_far / small > 1.3);
}

TEST_CASE("collective run: a chip without a mesh or a buffer of partial elements is exit 2 naming the key", "[collective][e2e]") {
    TempDir tmp;
    const Result single = run_npusim(tmp, {"run", "--chip", kSrc + "/configs/chips/a2.json", "--workload", kModel, "-q"});
    SHOW(single);
    CHECK(single.code == 2);
    CHECK_THAT(single.err, Contains("collective_allreduce.json: chip.interconnect.ranks: a collective needs at least 2 ranks"));
    const Result odd = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.interconnect.ranks=8",
                                        "--set", "workload.bytes=1001", "-q"});
    SHOW(odd);
    CHECK(odd.code == 2);
    CHECK_THAT(odd.err, Contains("collective_allreduce.json: workload.bytes: 1001 is not a whole number of fp16 elements"));
    CHECK(std::count(odd.err.begin(), odd.err.end(), '\n') == 1);
}

TEST_CASE("collective run: the hand-written two-rank ring allreduce moves four halves Data-as-Flag, reads nothing stale and ends when the sums have landed", "[collective][e2e]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kChip, kSrc + "/traces/xrank_allreduce2.jsonl", {"chip.interconnect.ranks=2"});
    // Two copies per rank of 32 KiB = 66 blocks of 512 B each.
    CHECK(s["mesh"]["bytes"].get<double>() == 4 * 66 * 512);
    CHECK(s["memory_model"]["stale_reads"].get<double>() == 0);
    // The sums return after the reduce: two trips, each at least the intra-node latency
    // plus 66 blocks of 544 B over 7 planes of 28 GB/s.
    CHECK(s["total_ns"].get<double>() >= 2 * (500 + 66 * 544 / 196.0));
    CHECK(s["ranks"]["r0"]["tasks"].get<double>() == 4);
    CHECK(s["ranks"]["r1"]["tasks"].get<double>() == 4);
}

TEST_CASE("collective run: a ring over two nodes crosses the switch tier on two hops only, and a 16 MiB allreduce stays within 15% of its bound", "[collective][e2e]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kChip, kModel, {"chip.interconnect.ranks=16", "workload.bytes=16777216"});
    // Nodes of 8: each step waits for the inter-node latency (1000 ns, not 500) ...
    CHECK(s["collective"]["steps"].get<int>() == 30);
    CHECK(s["collective"]["step_latency_ns"].get<double>() == 1000);
    // ... but only ranks 7 -> 8 and 15 -> 0 leave their node: 30 steps x 1 MiB chunk = 2081 blocks each.
    CHECK(s["mesh"]["tiers"]["inter"]["bytes"].get<double>() == 2.0 * 30 * 2081 * 512);
    CHECK(s["mesh"]["tiers"]["intra"]["bytes"].get<double>() == 14.0 * 30 * 2081 * 512);
    const double ratio = s["total_ns"].get<double>() / s["collective"]["bound_ns"].get<double>();
    CHECK(ratio >= 0.85);
    CHECK(ratio <= 1.15);
}

TEST_CASE(
    "collective ops in a graph: one die, a missing rank, a Combine over another group than its Dispatch are exit 2 naming the node",
    "[collective][e2e][graph]") {
    TempDir tmp;
    const auto graph = [&](const std::string& name, const std::string& op, const std::string& attrs) {
        return tmp.write(name, fmt::format(R"({{"kind": "graph", "dims": {{"n": 1024}},
            "tensors": {{"x": {{"shape": ["n", 64], "dtype": "fp16", "input": true}}}},
            "nodes": [{{"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["h"]}},
                      {{"name": "c", "op": "{}", "inputs": ["h"], "outputs": ["y"], "attrs": {{{}}}}}],
            "outputs": ["y"]}})",
                                           op, attrs));
    };
    const auto run = [&](const std::string& workload, const std::string& ranks) {
        const Result r = run_npusim(
            tmp, {"run", "--chip", kChip, "--workload", workload, "--set", "chip.interconnect.ranks=" + ranks, "-q"});
        SHOW(r);
        CHECK(r.code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        return r.err;
    };
    for (const std::string op : {"AllReduce", "AllGather", "ReduceScatter", "AllToAll"})
        CHECK_THAT(run(graph(op + ".json", op, ""), "1"),
                   Contains(op + ".json: nodes[1] (c): " + op + " communicates across ranks, but the chip has 1 rank"));
    CHECK_THAT(run(graph("missing.json", "AllReduce", R"("group": [4, 5, 6, 7])"), "4"),
               Contains("nodes[1] (c): attrs.group[0]: rank 4 does not exist: the chip has 4 ranks (0..3)"));
    CHECK_THAT(run(graph("typo.json", "AllReduce", R"("group": "al")"), "4"), Contains("did you mean 'all'"));

    // A Combine returns the tokens over its Dispatch's group, on a mesh only.
    const auto moe = [&](const std::string& name, const std::string& combine_attrs) {
        return tmp.write(name, fmt::format(R"({{"kind": "graph", "dims": {{"tokens": 16, "hidden": 256, "top_k": 2}},
            "tensors": {{"x": {{"shape": ["tokens", "hidden"], "dtype": "bf16", "input": true}},
                         "ids": {{"shape": ["tokens", "top_k"], "dtype": "fp32", "input": true}},
                         "w": {{"shape": ["tokens", "top_k"], "dtype": "bf16", "input": true}}}},
            "nodes": [{{"name": "dispatch", "op": "Dispatch", "inputs": ["x", "ids"], "outputs": ["r"], "attrs": {{"experts": 4}}}},
                      {{"name": "combine", "op": "Combine", "inputs": ["r", "w"], "outputs": ["y"], "attrs": {{{}}}}}],
            "outputs": ["y"]}})",
                                           combine_attrs));
    };
    CHECK_THAT(run(moe("narrow.json", R"("group": [0, 1])"), "4"),
               Contains("nodes[1] (combine): attrs.group: 2 ranks, but Dispatch 'dispatch' sent the tokens over 4"));
    CHECK_THAT(run(moe("absent.json", R"("group": [9])"), "4"), Contains("attrs.group[0]: rank 9 does not exist"));
    const std::string alone = tmp.write("alone.json", R"({"kind": "graph",
        "tensors": {"y": {"shape": [32, 256], "dtype": "bf16", "input": true}, "w": {"shape": [16, 2], "dtype": "bf16", "input": true}},
        "nodes": [{"name": "combine", "op": "Combine", "inputs": ["y", "w"], "outputs": ["o"]}], "outputs": ["o"]})");
    CHECK_THAT(run(alone, "1"),
               Contains("nodes[0] (combine): Combine communicates across ranks, but the chip has 1 rank"));
    const Result same = run_npusim(tmp, {"run", "--chip", kChip, "--workload", moe("same.json", R"("group": "all")"),
                                         "--set", "chip.interconnect.ranks=4", "-q"});
    SHOW(same);
    CHECK(same.code == 0);
}
