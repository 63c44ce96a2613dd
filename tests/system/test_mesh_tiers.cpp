// The two-tier mesh with back-pressure (docs/design.md §2 Links,
// docs/supernode.md "The mesh"): intra- and inter-node tiers, header bytes
// per DataBlock, receivers with finite ingress that hold their senders, and
// the chip keys of all three.
//
// The Mesh computes every time when a write is posted, so the unit cases
// post writes themselves in simulated-time order (no SystemC run); the
// end-to-end cases go through the npusim binary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "system/global_memory.hpp"
#include "system/mesh.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a3-supernode.json";
const std::string kModel = kSrc + "/models/moe_dispatch.json";

// 16 ranks in two nodes of 8, 7 planes, `modulo` hashing so that 7k
// consecutive blocks put k on every plane.
ChipParams two_nodes() {
    ChipParams c;
    c.name = "test";
    c.interconnect.ranks = 16;
    c.interconnect.planes = 7;
    c.interconnect.node_size = 8;
    c.interconnect.intra_node = {400, 28};
    c.interconnect.inter_node = {1200, 14};
    c.interconnect.datablock_bytes = 512;
    c.interconnect.header_bytes = 32;
    c.interconnect.plane_hash = "modulo";
    return c;
}

std::uint64_t ceil_ps(double bytes, double gbps) { return static_cast<std::uint64_t>(std::ceil(bytes * 1000.0 / gbps)); }

WriteRequest data_write(int src, int dst, Addr addr, std::uint64_t bytes) {
    WriteRequest w;
    w.src_rank = src;
    w.dst_rank = dst;
    w.addr = addr;
    w.bytes = bytes;
    return w;
}

// One mesh with its memory (the chip must outlive both).
struct Rig {
    GlobalMemory mem;
    Mesh mesh;
    Rig(const ChipParams& chip, const char* name) : mem(chip.interconnect.ranks, 512), mesh(name, chip, mem, nullptr, {}) {}
};

// `senders` each stream `writes` writes of `bytes` to `receiver_of(sender)`,
// each write posted when the previous one has left (as MTE3 does), all
// posted in simulated-time order. Returns {last landing, last sender free}.
template <class To>
std::pair<std::uint64_t, std::uint64_t> stream(Mesh& mesh, const std::vector<int>& senders, To receiver_of, int writes,
                                               std::uint64_t bytes) {
    std::vector<std::uint64_t> next(senders.size(), 0);
    std::vector<int> sent(senders.size(), 0);
    std::uint64_t land = 0, left = 0;
    for (int n = 0; n < writes * static_cast<int>(senders.size()); ++n) {
        std::size_t s = 0;  // the sender that is free first (lowest index on ties)
        for (std::size_t i = 0; i < senders.size(); ++i)
            if (sent[i] < writes && (sent[s] >= writes || next[i] < next[s])) s = i;
        const Addr addr = 0x1000000 + static_cast<Addr>(senders[s] * writes + sent[s]) * ((bytes + 511) / 512 * 512);
        const PostedWrite pw = mesh.post(data_write(senders[s], receiver_of(senders[s]), addr, bytes), next[s]);
        next[s] = pw.left_ps;
        ++sent[s];
        land = std::max(land, pw.land_ps);
        left = std::max(left, pw.left_ps);
    }
    return {land, left};
}

}  // namespace

TEST_CASE("mesh tiers: a write inside a node lands at intra latency + (payload + headers) / bandwidth, between nodes at the inter tier's",
          "[mesh][tiers]") {
    const ChipParams chip = two_nodes();
    Rig rig(chip, "mesh");
    Mesh& mesh = rig.mesh;
    CHECK(mesh.tier_of(0, 7) == MeshTier::intra);
    CHECK(mesh.tier_of(7, 8) == MeshTier::inter);
    CHECK(mesh.tier_of(15, 9) == MeshTier::intra);

    // 28 blocks of 512 B: 4 per plane, 4 x (512 + 32) = 2176 B per plane on the wire.
    const std::uint64_t bytes = 28 * 512;
    const PostedWrite intra = mesh.post(data_write(0, 1, 28 * 512 * 10, bytes), 0);
    CHECK(intra.land_ps == 400000 + ceil_ps(2176, 28));  // 400 ns + 77.7 ns
    CHECK(intra.left_ps == ceil_ps(2176, 28));           // idle receiver: not held
    const PostedWrite inter = mesh.post(data_write(2, 9, 28 * 512 * 10, bytes), 0);
    CHECK(inter.land_ps == 1200000 + ceil_ps(2176, 14));  // 1200 ns + 155.4 ns
    CHECK(inter.left_ps == ceil_ps(2176, 14));
    CHECK(mesh.backpressure_ps() == 0);

    Stats s;
    mesh.report(s, RunSpan{inter.land_ps, 1000.0});
    CHECK(s.number("mesh.tiers.intra.writes") == 1);
    CHECK(s.number("mesh.tiers.inter.writes") == 1);
    CHECK(s.number("mesh.tiers.intra.chunks") == 7);
    CHECK(s.number("mesh.tiers.intra.bytes") == bytes);
    CHECK(s.number("mesh.tiers.inter.wire_bytes") == 28 * 544);
    CHECK(s.number("mesh.tiers.inter.header_bytes") == 28 * 32);
    CHECK(s.number("mesh.header_bytes") == 2 * 28 * 32);
    CHECK(s.number("mesh.header_overhead") == Approx(32.0 / 544.0));
    CHECK(s.number("mesh.backpressure_ns") == 0);
}

TEST_CASE("mesh tiers: header_bytes h lowers the goodput of a long write by 512 / (512 + h)", "[mesh][tiers]") {
    std::deque<ChipParams> chips;
    std::deque<Rig> rigs;
    const std::uint64_t bytes = 7 * 512 * 300;  // 2100 blocks, 2.15 MB
    double goodput0 = 0;
    for (const int h : {0, 32, 64, 128}) {
        chips.push_back(two_nodes());
        chips.back().interconnect.header_bytes = h;
        rigs.emplace_back(chips.back(), ("mesh_h" + std::to_string(h)).c_str());
        const PostedWrite pw = rigs.back().mesh.post(data_write(0, 3, 0, bytes), 0);
        const double goodput = static_cast<double>(bytes) / static_cast<double>(pw.land_ps - 400000);  // B/ps
        if (h == 0) goodput0 = goodput;
        INFO("header " << h << " B: " << goodput * 1000 << " GB/s over 7 planes");
        CHECK(goodput / goodput0 == Approx(512.0 / (512.0 + h)).epsilon(0.01));
    }
    CHECK(goodput0 * 1000 == Approx(7 * 28).epsilon(0.01));  // no headers: the planes' 196 GB/s
}

TEST_CASE("mesh tiers: an 8-to-1 incast runs at the receiver's rate and holds its senders, 8 disjoint pairs do not",
          "[mesh][tiers][backpressure]") {
    ChipParams chip = two_nodes();
    chip.interconnect.node_size = 16;  // one node: only receivers differ
    chip.interconnect.ingress_buffer_bytes = 4096;
    Rig incast_rig(chip, "incast"), pairs_rig(chip, "pairs");
    const std::vector<int> senders = {1, 2, 3, 4, 5, 6, 7, 8};
    const int writes = 8;
    const std::uint64_t bytes = 14 * 512;  // 2 blocks per plane: 1088 B on the wire
    const std::uint64_t one = writes * ceil_ps(1088, 28);  // one sender's stream through one plane

    const auto incast = stream(incast_rig.mesh, senders, [](int) { return 0; }, writes, bytes);
    const auto pairs = stream(pairs_rig.mesh, senders, [](int s) { return s + 7; }, writes, bytes);  // 1->8, ..., 8->15
    const double incast_x = static_cast<double>(incast.first - 400000) / static_cast<double>(one);
    const double pairs_x = static_cast<double>(pairs.first - 400000) / static_cast<double>(one);
    INFO("incast lands after " << incast_x << "x one stream, pairs after " << pairs_x << "x");
    CHECK(incast_x == Approx(8.0).epsilon(0.02));
    CHECK(pairs_x == Approx(1.0).epsilon(0.02));
    // Back-pressure: the incast's senders are busy until their last chunk
    // nearly lands (a 4 KB buffer is 146 ns of draining), not after 1x.
    CHECK(static_cast<double>(incast.second) > 0.9 * static_cast<double>(incast.first - 400000));
    CHECK(incast_rig.mesh.backpressure_ps() > 0);
    CHECK(static_cast<double>(pairs.second) == Approx(static_cast<double>(one)).epsilon(0.02));
    CHECK(pairs_rig.mesh.backpressure_ps() == 0);
}

TEST_CASE("mesh tiers: a bigger ingress buffer is never slower and frees the incast's senders sooner",
          "[mesh][tiers][backpressure]") {
    std::deque<ChipParams> chips;
    std::deque<Rig> rigs;
    const std::vector<int> senders = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // across both nodes
    const std::uint64_t bytes = 7 * 504;  // 6 full blocks and a short one
    std::uint64_t last_land = ~0ULL, last_left = ~0ULL, first_left = 0, first_held = 0, last_held = 0;
    for (const int buffer : {544, 1024, 4096, 16384, 65536, 1 << 20, 1 << 30}) {
        chips.push_back(two_nodes());
        chips.back().interconnect.ingress_buffer_bytes = buffer;
        rigs.emplace_back(chips.back(), ("mesh_b" + std::to_string(buffer)).c_str());
        const auto r = stream(rigs.back().mesh, senders, [](int) { return 0; }, 16, bytes);
        INFO("ingress buffer " << buffer << " B: last landing " << r.first << " ps, senders free at " << r.second
                               << " ps, held " << rigs.back().mesh.backpressure_ps() << " ps");
        CHECK(r.first <= last_land);
        CHECK(r.second <= last_left);
        if (last_land == ~0ULL) {
            first_left = r.second;
            first_held = rigs.back().mesh.backpressure_ps();
        }
        last_land = r.first;
        last_left = r.second;
        last_held = rigs.back().mesh.backpressure_ps();
    }
    CHECK(last_held == 0);                  // a buffer that holds everything never pushes back
    CHECK(first_held > 0);
    CHECK(last_left * 4 < first_left);      // unheld, 12 senders finish sending long before the receiver drains
}

TEST_CASE("mesh tiers: plane tracks are per tier in the trace", "[mesh][tiers][trace]") {
    TempDir tmp;
    const std::string trace = tmp.path("t.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.interconnect.ranks=16",
                                      "--set", "workload.variant=optimized", "--trace-ranks", "0-1",
                                      "--trace", trace, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json t = read_json(trace);
    std::vector<std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e["pid"] == 1)
            names.push_back(e["args"]["name"].get<std::string>());
    auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    CHECK(has("intra.plane0.tx"));
    CHECK(has("intra.plane6.rx"));
    CHECK(has("inter.plane0.tx"));
    CHECK(has("inter.plane3.rx"));
    const Result check = run_program(tmp, "python3", {kSrc + "/tools/check_trace.py", "--quiet", trace});
    SHOW(check);
    CHECK(check.code == 0);
}

TEST_CASE("mesh tiers: leaving the node costs the Dispatch the inter-node latency, inside one node it does not",
          "[mesh][tiers][moe]") {
    TempDir tmp;
    auto total = [&](int ranks, int inter_ns) {
        const json s = run_for_stats(tmp, kChip, kModel,
                                     {"chip.interconnect.ranks=" + std::to_string(ranks),
                                      "chip.interconnect.inter_node.latency_ns=" + std::to_string(inter_ns),
                                      "workload.variant=optimized"});
        return s["total_ns"].get<double>();
    };
    const double one_node = total(8, 1000), one_node_slow = total(8, 5000);
    const double two_nodes = total(16, 1000), two_nodes_slow = total(16, 5000);
    INFO("8 ranks: " << one_node << " / " << one_node_slow << " ns; 16 ranks: " << two_nodes << " / " << two_nodes_slow);
    CHECK(one_node_slow == one_node);          // no pair of ranks crosses the switch tier
    CHECK(two_nodes_slow > two_nodes + 4000);  // at least one more 4 us crossing on the critical path
}

TEST_CASE(
    "mesh tiers: the baseline Dispatch of 256 experts grows with the EP width, by the cross-node latency and the peers",
    "[mesh][tiers][moe]") {
    // Every rank sends its 128 x 8 token copies at any width; what grows is
    // the flag path: from 16 ranks on, peers sit in other nodes (the inter
    // tier's latency) and each receiver checks more sources.
    TempDir tmp;
    auto total = [&](int ranks, int inter_ns) {
        const json s = run_for_stats(
            tmp, kChip, kModel,
            {"chip.interconnect.ranks=" + std::to_string(ranks),
             "workload.dims.experts_per_rank=" + std::to_string(256 / ranks),
             "chip.interconnect.inter_node.latency_ns=" + std::to_string(inter_ns), "workload.variant=baseline"});
        return s["total_ns"].get<double>();
    };
    const double ep8 = total(8, 1000), ep16 = total(16, 1000), ep32 = total(32, 1000);
    const double ep16_flat = total(16, 500);  // the inter tier as fast as the intra one
    INFO("EP 8 / 16 / 32: " << ep8 << " / " << ep16 << " / " << ep32
                            << " ns; EP 16 at 500 ns across nodes: " << ep16_flat);
    CHECK(ep16 > ep8 + 500);  // at least one more crossing's extra latency
    CHECK(ep32 > ep16);
    CHECK(ep16_flat < ep16);
    CHECK(ep16_flat > ep8);  // more peers alone still cost
}

TEST_CASE("mesh tiers: the flat link keys are errors naming the per-tier keys", "[mesh][tiers][config]") {
    TempDir tmp;
    Result r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", "chip.interconnect.plane_bandwidth_gbps=28"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--set chip.interconnect.plane_bandwidth_gbps=28") &&
                          Contains("chip.interconnect.intra_node.plane_bandwidth_gbps") &&
                          Contains("chip.interconnect.inter_node.plane_bandwidth_gbps"));
    const std::string chip = tmp.path("old.json");
    std::ofstream(chip) << R"({"extends": ")" << kChip << R"(", "interconnect": {"plane_latency_ns": 800}})";
    r = run_npusim(tmp, {"run", "--chip", chip, "--workload", kModel});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("old.json") && Contains("chip.interconnect.plane_latency_ns is no longer a key") &&
                          Contains("chip.interconnect.intra_node.latency_ns") &&
                          Contains("chip.interconnect.inter_node.latency_ns"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
}

TEST_CASE("mesh tiers: a mesh must give node_size and every tier its ranks use", "[mesh][tiers][config]") {
    TempDir tmp;
    auto run_with = [&](const std::string& interconnect) {
        const std::string chip = tmp.path("chip.json");
        std::ofstream(chip) << R"({"extends": ")" << kSrc << R"(/configs/chips/a2.json", "interconnect": )" << interconnect << "}";
        return run_npusim(tmp, {"run", "--chip", chip, "--workload", kModel, "-q"});
    };
    const std::string base = R"("ranks": 16, "planes": 7, "datablock_bytes": 512)";
    const std::string intra = R"("intra_node": {"latency_ns": 500, "plane_bandwidth_gbps": 28})";
    const std::string inter = R"("inter_node": {"latency_ns": 1000, "plane_bandwidth_gbps": 28})";

    Result r = run_with("{" + base + ", " + intra + ", " + inter + "}");
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("chip.json") && Contains("missing required key chip.interconnect.node_size"));

    r = run_with("{" + base + R"(, "node_size": 8, )" + intra + "}");  // 16 ranks span two nodes
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("missing required key chip.interconnect.inter_node.latency_ns") && Contains("span 2 nodes"));

    r = run_with("{" + base + R"(, "node_size": 8, "intra_node": {"latency_ns": 500}, )" + inter + "}");
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("missing required key chip.interconnect.intra_node.plane_bandwidth_gbps"));

    r = run_with("{" + base + R"(, "node_size": 16, )" + intra + "}");  // one node of 16: no inter-node pair
    SHOW(r);
    CHECK(r.code == 0);

    r = run_with("{" + base + R"(, "node_size": 1, )" + inter + "}");  // every rank its own node: no intra-node pair
    SHOW(r);
    CHECK(r.code == 0);
}

TEST_CASE("mesh tiers: bad values of the new keys are one-line errors with the key path and a did-you-mean",
          "[mesh][tiers][config]") {
    TempDir tmp;
    struct Case {
        std::string set, expect;
    };
    const std::vector<Case> cases = {
        {"chip.interconnect.node_size=0", ">= 1"},
        {"chip.interconnect.intra_node.latency_ns=-5", ">= 0"},
        {"chip.interconnect.inter_node.plane_bandwidth_gbps=0", "> 0"},
        {"chip.interconnect.header_bytes=512", "must be less than chip.interconnect.datablock_bytes = 512 B"},
        {"chip.interconnect.ingress_buffer_bytes=512", "must hold one DataBlock with its header (544 B)"},
        {"chip.interconnect.intra_node.latncy_ns=300", "did you mean 'latency_ns'"},
        {"chip.interconnect.inter_nod.latency_ns=300", "did you mean 'inter_node'"},
        {"chip.interconnect.header_byte=16", "did you mean 'header_bytes'"},
    };
    for (const Case& c : cases) {
        const Result r = run_npusim(tmp, {"run", "--chip", kChip, "--workload", kModel, "--set", c.set});
        INFO(c.set);
        SHOW(r);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains("--set " + c.set));  // names the input and the key path
        CHECK_THAT(r.err, Contains(c.expect));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("mesh tiers: smaller ingress buffers slow the optimized Dispatch and a bigger one is never slower",
          "[mesh][tiers][backpressure][moe]") {
    TempDir tmp;
    std::vector<double> totals, held;
    for (const int buffer : {2048, 8192, 65536, 1 << 26}) {
        const json s = run_for_stats(tmp, kChip, kModel,
                                     {"chip.interconnect.ranks=32", "workload.variant=optimized",
                                      "chip.interconnect.ingress_buffer_bytes=" + std::to_string(buffer)});
        totals.push_back(s["total_ns"].get<double>());
        held.push_back(s["mesh"]["backpressure_ns"].get<double>());
        INFO("buffer " << buffer << " B: " << totals.back() << " ns, senders held " << held.back() << " ns in all");
        CHECK(s["memory_model"]["stale_reads"] == 0);
    }
    for (std::size_t i = 1; i < totals.size(); ++i) {
        // Up to 1 ns of the order in which same-time DataCopies reach the die's memory.
        CHECK(totals[i] <= totals[i - 1] + 1.0);
        CHECK(held[i] <= held[i - 1]);
    }
    CHECK(totals[0] > 1.04 * totals[2]);  // 2 KB per plane: the all-to-all's bursts hold the senders' MTE3
    CHECK(held[0] > 100 * held[2]);
}
