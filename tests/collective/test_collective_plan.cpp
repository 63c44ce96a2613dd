// Collective plans (sim/collective): the cross-rank task stream a collective
// is generated into has the textbook structure (steps, bytes each rank sends,
// every rank's vector cores at work), every memory wait is met by exactly
// one copy, and the alpha-beta bound follows the chip's mesh keys.
// Plain C++; runs no simulation.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "collective/alpha_beta_bound.hpp"
#include "collective/collective_plan.hpp"
#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::collective;
using Catch::Matchers::Contains;
using json = nlohmann::json;
using Op = CollectiveWorkload::Op;
using Algorithm = CollectiveWorkload::Algorithm;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;

// One die per rank as in the a3 supernode (48 AIV cores, 7 planes of 28 GB/s).
ChipParams supernode(int ranks) {
    ChipParams c = RunConfig::load(kSrc + "/configs/chips/a3-supernode.json", "", {}).chip();
    c.interconnect.ranks = ranks;
    return c;
}

CollectiveWorkload workload(Op op, Algorithm a, std::uint64_t bytes,
                            CollectiveWorkload::Dtype d = CollectiveWorkload::Dtype::fp16) {
    CollectiveWorkload w;
    w.op = op;
    w.algorithm = a;
    w.bytes = bytes;
    w.dtype = d;
    return w;
}

std::vector<json> parsed(const CollectivePlan& p) {
    std::vector<json> v;
    for (const auto& l : p.lines) v.push_back(json::parse(l));
    return v;
}

// Every wait_memory entry of rank r is written by exactly one copy to rank r
// at that address carrying that flag over exactly that many blocks, every
// copy is waited for at most once, and every event waited for is signalled
// by a task of the same rank.
void check_waits_are_met(const CollectivePlan& p) {
    const std::vector<json> tasks = parsed(p);
    std::map<std::tuple<int, std::uint64_t, std::uint64_t>, std::uint32_t> writes;  // (rank, addr, flag) -> blocks
    std::map<std::string, int> signalled_on;
    for (const auto& t : tasks) {
        for (const auto& e : t["signal"]) signalled_on[e.get<std::string>()] = t["rank"].get<int>();
        if (t["kernel"] != "copy") continue;
        const auto& pr = t["params"];
        const auto key = std::make_tuple(pr["dst_rank"].get<int>(), pr["dst_addr"].get<std::uint64_t>(),
                                         pr["flag"].get<std::uint64_t>());
        REQUIRE(writes.count(key) == 0);  // a slot is written once
        const std::uint64_t bytes = pr["bytes"];
        writes[key] = static_cast<std::uint32_t>((bytes + p.block_payload - 1) / p.block_payload);
        CHECK(pr["dst_rank"] != t["rank"]);
    }
    std::size_t waited_blocks = 0;
    for (const auto& t : tasks) {
        for (const auto& e : t["wait"]) {
            INFO(t["id"] << " waits for " << e);
            REQUIRE(signalled_on.count(e.get<std::string>()));
            CHECK(signalled_on[e.get<std::string>()] == t["rank"].get<int>());
        }
        if (!t.contains("wait_memory")) continue;
        for (const auto& m : t["wait_memory"]) {
            // A wait may cover several consecutive slices' blocks (a rank's done task).
            std::uint64_t addr = m["addr"], blocks = m["blocks"];
            const std::uint64_t value = m["value"];
            while (blocks > 0) {
                const auto it = writes.find({t["rank"].get<int>(), addr, value});
                INFO(t["id"] << " waits for " << m);
                REQUIRE(it != writes.end());
                REQUIRE(it->second <= blocks);
                blocks -= it->second;
                addr += std::uint64_t{it->second} * 512;
                waited_blocks += it->second;
            }
        }
    }
    CHECK(waited_blocks > 0);
}

}  // namespace

TEST_CASE("collective plan: ring allreduce on 8 ranks sends 2(N-1)/N x bytes per rank over 2(N-1) steps, copies on half the vector cores, reductions on the other half", "[collective]") {
    const ChipParams chip = supernode(8);
    const std::uint64_t bytes = 64ull << 20;
    const CollectivePlan p = plan_collective(workload(Op::allreduce, Algorithm::ring, bytes), chip);
    CHECK(p.steps == 14);
    // 24 copy cores x 4 slices each; the other 24 vector cores reduce.
    CHECK(p.slices == 96);
    CHECK(p.senders == 24);
    CHECK(p.reducers == 24);
    CHECK(p.chunk_bytes == bytes / 8);
    CHECK(p.block_payload == 504);
    for (int r = 0; r < 8; ++r) {
        INFO("rank " << r);
        CHECK(p.sent_bytes[r] == 2 * 7 * bytes / 8);  // 117440512 B = 2(N-1)/N x 64 MiB
        CHECK(static_cast<double>(p.sent_bytes[r]) == textbook_bytes_per_rank(Op::allreduce, 8, bytes));
        // 96 slices x (14 copies + 7 reduces) + the rank's done task.
        CHECK(p.tasks[r] == 96 * 21 + 1);
        // Each of the 7 reduce steps reads the local and the received chunk.
        CHECK(p.reduced_bytes[r] == 7 * 2 * bytes / 8);
    }
    // A ring: every copy goes to the next rank.
    std::set<int> cores;
    for (const auto& t : parsed(p)) {
        if (t["kernel"] == "copy") {
            CHECK(t["params"]["dst_rank"] == (t["rank"].get<int>() + 1) % 8);
            CHECK(t["core"].get<int>() < 24);
        }
        if (t["kernel"] == "vector") CHECK(t["core"].get<int>() >= 24);
        if (t["rank"] == 3 && t.contains("core")) cores.insert(t["core"].get<int>());
    }
    CHECK(cores.size() == 48);
    check_waits_are_met(p);
}

TEST_CASE("collective plan: each op and algorithm moves the textbook volume and every memory wait is met", "[collective]") {
    const ChipParams chip = supernode(8);
    const std::uint64_t bytes = 8ull << 20;
    for (Op op : {Op::allreduce, Op::allgather, Op::reduce_scatter, Op::alltoall})
        for (Algorithm a : {Algorithm::ring, Algorithm::mesh}) {
            INFO(to_string(op) << " " << to_string(a));
            const CollectivePlan p = plan_collective(workload(op, a, bytes), chip);
            const int ring_steps = op == Op::allreduce ? 14 : 7;
            CHECK(p.steps == (a == Algorithm::ring ? ring_steps : (op == Op::allreduce ? 2 : 1)));
            for (int r = 0; r < 8; ++r) CHECK(p.sent_bytes[r] == static_cast<std::uint64_t>(textbook_bytes_per_rank(op, 8, bytes)));
            std::set<int> peers;
            for (const auto& t : parsed(p))
                if (t["kernel"] == "copy" && t["rank"] == 0) peers.insert(t["params"]["dst_rank"].get<int>());
            // The ring (except alltoall's shifted ring) talks to its neighbour; the mesh to every peer.
            CHECK(peers.size() == (a == Algorithm::ring && op != Op::alltoall ? 1u : 7u));
            check_waits_are_met(p);
        }
}

TEST_CASE("collective plan: short chunks get fewer slices of at least 8 blocks, and uneven buffers are padded to N equal chunks", "[collective]") {
    const ChipParams chip = supernode(8);
    // 1 MiB allgather over 8 ranks: 128 KiB chunks = 261 Data-as-Flag blocks -> 32 slices of 8 or 9
    // blocks, one per copy core; no reductions, so no reduce cores.
    const CollectivePlan mid = plan_collective(workload(Op::allgather, Algorithm::mesh, 1 << 20), chip);
    CHECK(mid.slices == 32);
    CHECK(mid.senders == 32);
    CHECK(mid.reducers == 0);
    CHECK(mid.tasks[0] == 32 * 7 + 1);  // a copy of each slice to each peer, and the done task
    check_waits_are_met(mid);
    // 8 KiB allreduce: 1 KiB chunks = 3 blocks -> one slice, one copy core and one reduce core.
    const CollectivePlan small = plan_collective(workload(Op::allreduce, Algorithm::ring, 8192), chip);
    CHECK(small.chunk_bytes == 1024);
    CHECK(small.slices == 1);
    CHECK(small.senders == 1);
    CHECK(small.reducers == 1);
    CHECK(small.tasks[0] == 21 + 1);
    check_waits_are_met(small);
    // 1001 fp32 elements over 8 ranks -> 126 each (1008 padded).
    const CollectivePlan odd = plan_collective(workload(Op::allgather, Algorithm::mesh, 4004, CollectiveWorkload::Dtype::fp32), chip);
    CHECK(odd.chunk_bytes == 126 * 4);
    CHECK(odd.sent_bytes[0] == 7 * 126 * 4);
}

TEST_CASE("collective plan: bad chips and buffers are one-line errors naming the key", "[collective]") {
    const CollectiveWorkload w = workload(Op::allreduce, Algorithm::ring, 4096);
    CHECK_THROWS_WITH(plan_collective(w, supernode(1)),
                      Contains("chip.interconnect.ranks: a collective needs at least 2 ranks, the chip has 1"));
    CHECK_THROWS_WITH(plan_collective(workload(Op::allreduce, Algorithm::ring, 4097), supernode(8)),
                      Contains("workload.bytes: 4097 is not a whole number of fp16 elements (2 B each)"));
    ChipParams no_vector = supernode(8);
    no_vector.vector.count = 0;
    CHECK_THROWS_AS(plan_collective(w, no_vector), InputError);
}

TEST_CASE("collective bound: steps x the slowest tier's latency + the busiest rank's wire bytes over planes x plane bandwidth", "[collective]") {
    ChipParams chip = supernode(8);
    const std::uint64_t bytes = 64ull << 20;
    const CollectivePlan p = plan_collective(workload(Op::allreduce, Algorithm::ring, bytes), chip);
    const AlphaBetaBound b = alpha_beta_bound(p, chip);
    // 8 ranks are one node (node_size 8): every message takes the intra-node tier.
    CHECK(b.steps == 14);
    CHECK(b.latency_ns == 500);
    CHECK(b.rank_bandwidth_gbps == Approx(196));
    // 14 steps; each 8 MiB chunk is 16645 Data-as-Flag blocks of 512 B (504 B payload) + 32 B header.
    CHECK(b.wire_bytes == 14ull * 16645 * 544);
    CHECK(b.bandwidth_ns == Approx(14.0 * 16645 * 544 / 196));
    CHECK(b.bound_ns == Approx(14 * 500 + 14.0 * 16645 * 544 / 196));  // 653,818 ns
    // Double the plane bandwidth: the bandwidth term halves, the latency term stays.
    chip.interconnect.intra_node.plane_bandwidth_gbps = 56;
    CHECK(alpha_beta_bound(p, chip).bound_ns == Approx(14 * 500 + 14.0 * 16645 * 544 / 392));
    // The mesh pays one latency per phase, for the same bytes.
    const AlphaBetaBound m = alpha_beta_bound(plan_collective(workload(Op::allreduce, Algorithm::mesh, bytes), chip), chip);
    CHECK(m.steps == 2);
    CHECK(m.wire_bytes == b.wire_bytes);
    // 16 ranks are two nodes: the ring crosses between them, so a step waits for the inter-node latency,
    // and rank 7's bytes to rank 8 drain at the inter-node rate.
    ChipParams two_nodes = supernode(16);
    two_nodes.interconnect.inter_node.plane_bandwidth_gbps = 14;
    const AlphaBetaBound t = alpha_beta_bound(plan_collective(workload(Op::allreduce, Algorithm::ring, bytes), two_nodes), two_nodes);
    CHECK(t.latency_ns == 1000);
    CHECK(t.rank_bandwidth_gbps == Approx(98));
}

TEST_CASE("collective workload: the keys are checked like every workload key, with the file, key path and did-you-mean", "[collective]") {
    npusim::test::TempDir tmp;
    const std::string chip = kSrc + "/configs/chips/a3-supernode.json";
    auto error = [&](const std::string& text) -> std::string {
        const std::string file = tmp.write("c.json", text);
        try {
            RunConfig::load(chip, file, {});
        } catch (const InputError& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK_THAT(error(R"({"kind": "collective", "op": "allreduse", "bytes": 4096})"),
               Contains("workload.op") && Contains("did you mean 'allreduce'"));
    CHECK_THAT(error(R"({"kind": "collective", "op": "allreduce", "bytes": 0})"), Contains("workload.bytes"));
    CHECK_THAT(error(R"({"kind": "collective", "op": "allreduce"})"), Contains("workload.bytes"));
    CHECK_THAT(error(R"({"kind": "collective", "op": "allgather", "bytes": 4096, "algoritm": "mesh"})"),
               Contains("algoritm") && Contains("did you mean 'algorithm'"));
    CHECK_THAT(error(R"({"kind": "colective", "op": "allgather", "bytes": 4096})"), Contains("did you mean 'collective'"));
    // A good one resolves to the typed parameters, defaults filled in.
    const RunConfig rc = RunConfig::load(chip, tmp.write("ok.json", R"({"kind": "collective", "op": "alltoall", "bytes": 4096})"), {});
    CHECK(rc.kind() == WorkloadKind::collective);
    CHECK(rc.workload().collective.op == Op::alltoall);
    CHECK(rc.workload().collective.algorithm == Algorithm::ring);
    CHECK(rc.workload().collective.dtype == CollectiveWorkload::Dtype::fp16);
    CHECK(rc.workload().collective.bytes == 4096);
}
