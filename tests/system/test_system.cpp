// The System (hw/system): every rank a whole die, joined by the mesh, and the
// cross-rank task streams that run on it (docs/task-streams.md, "Cross-rank
// streams"). End to end through the binary, plus the System of one rank
// against a plain Die in process.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "system/system.hpp"
#include "stats/stats.hpp"
#include "support/e2e.hpp"
#include "tasks/rank_split.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;
using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kSuper = kSrc + "/configs/chips/a3-supernode.json";

// `parts` copies of `bytes` each from rank `from` to rank `to` (one per
// vector core; Data-as-Flag with flag `flag` when flag > 0), and as many
// vector tasks on `to`, each waiting for its part's blocks (or only the
// first) and reading them.
std::string send_and_use(std::uint64_t bytes, int from, int to, std::uint64_t flag, bool wait_all = true, int parts = 1) {
    const std::uint64_t payload = flag ? 504 : 512;
    const std::uint64_t blocks = (bytes + payload - 1) / payload;
    std::string out;
    for (int i = 0; i < parts; ++i) {
        const std::uint64_t dst = (1 << 20) + static_cast<std::uint64_t>(i) * blocks * 512;
        const std::string n = std::to_string(i);
        json copy = {{"id", "send" + n}, {"rank", from}, {"core_type", "vector"}, {"kernel", "copy"}, {"stream", "s" + n},
                     {"wait", json::array()}, {"signal", json::array()},
                     {"params", {{"bytes", bytes}, {"addr", i * bytes}, {"dst_rank", to}, {"dst_addr", dst}}}};
        if (flag) copy["params"]["flag"] = flag;
        json use = {{"id", "use" + n}, {"rank", to}, {"core_type", "vector"}, {"kernel", "vector"}, {"stream", "s" + n},
                    {"wait", json::array()}, {"signal", json::array()},
                    {"wait_memory", {{"addr", dst}, {"value", flag}, {"blocks", wait_all ? blocks : 1}}},
                    {"params", {{"bytes", bytes}, {"addr", dst}}}};
        out += copy.dump() + "\n" + use.dump() + "\n";
    }
    return out;
}

}  // namespace

TEST_CASE("system: a Data-as-Flag ping-pong between two ranks lands every block and reads nothing stale", "[system]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kSuper, kSrc + "/traces/xrank_pingpong.jsonl");
    // 64 KB each way as 131 blocks of 504 B payload + 8 B flag.
    CHECK(s["mesh"]["bytes"].get<double>() == 2 * 131 * 512);
    CHECK(s["memory_model"]["stale_reads"].get<double>() == 0);
    CHECK(s["ranks"]["count"].get<int>() == 288);
    CHECK(s["ranks"]["r0"]["tasks"].get<int>() == 2);
    CHECK(s["ranks"]["r1"]["tasks"].get<int>() == 2);
    CHECK(s["ranks"]["r2"]["tasks"].get<int>() == 0);
    // Two trips across the mesh: at least two plane latencies.
    // (Ranks 0 and 1 share a node: the intra-node tier.)
    const double latency = s["config"]["chip"]["interconnect"]["intra_node"]["latency_ns"].get<double>();
    CHECK(s["total_ns"].get<double>() > 2 * latency);
    // The memory waits are on the critical path as mesh time: one segment per
    // trip, on the receiving rank, from the sender's copy to the release.
    std::vector<int> mesh_ranks;
    double sum = 0;
    for (const json& seg : s["critical_path"]["segments"]) {
        sum += seg["end_ns"].get<double>() - seg["start_ns"].get<double>();
        if (seg["kind"] == "mesh") mesh_ranks.push_back(seg["rank"].get<int>());
    }
    CHECK(mesh_ranks == std::vector<int>{1, 0});
    CHECK(s["critical_path"]["by_kind"]["mesh"].get<double>() > 0);
    CHECK(sum == Approx(s["total_ns"].get<double>()).epsilon(1e-6));
}

TEST_CASE("system: a flag in its own block can overtake the data, and the early read is counted stale", "[system]") {
    TempDir tmp;
    const json stale = run_for_stats(tmp, kSuper, kSrc + "/traces/xrank_stale_flag.jsonl");
    CHECK(stale["memory_model"]["stale_reads"].get<double>() == 1);
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/traces/xrank_stale_flag.jsonl", "-q",
                                      "--fail-on-stale"});
    SHOW(r);
    CHECK(r.code == 1);
    // Waiting for every Data-as-Flag block instead: clean.
    const json clean = run_for_stats(tmp, kSuper, tmp.write("daf.jsonl", send_and_use(262144, 0, 1, 7)));
    CHECK(clean["memory_model"]["stale_reads"].get<double>() == 0);
    // Waiting for the first Data-as-Flag block only: the rest is still in flight.
    const json early = run_for_stats(tmp, kSuper, tmp.write("first.jsonl", send_and_use(262144, 0, 1, 7, false)));
    CHECK(early["memory_model"]["stale_reads"].get<double>() == 1);
}

TEST_CASE("system: a cross-rank transfer responds to plane bandwidth and latency as latency + bytes / bandwidth", "[system][whatif]") {
    TempDir tmp;
    // 4 MiB in 16 parts on 16 vector cores: the planes, not one core's GM
    // port, set the pace.
    const std::string wl = tmp.write("big.jsonl", send_and_use(262080, 0, 1, 1, true, 16));
    auto total = [&](const std::vector<std::string>& sets) { return run_for_stats(tmp, kSuper, wl, sets)["total_ns"].get<double>(); };
    const double base = total({});
    const double bw2 = total({"chip.interconnect.intra_node.plane_bandwidth_gbps=56"});
    const double lat2 = total({"chip.interconnect.intra_node.latency_ns=1500"});
    INFO("base " << base << " ns, bandwidth x2 " << bw2 << " ns, latency x2 " << lat2 << " ns");
    // 16 x 520 blocks of 512 B, each with its 32 B header, over 7 planes x
    // 28 GB/s: 23.1 us of wire time, of which doubling the bandwidth saves half.
    const double wire_ns = 16.0 * 520 * (512 + 32) / (7 * 28.0);
    CHECK(base - bw2 == Approx(wire_ns / 2).epsilon(0.15));
    // One more microsecond of latency, once on the path.
    CHECK(lat2 - base == Approx(1000).margin(150));
}

TEST_CASE("system: a memory wait nothing satisfies is a deadlock naming task, rank, block and flag", "[system][errors]") {
    TempDir tmp;
    const std::string wl = tmp.write(
        "dead.jsonl",
        R"({"id": "use1", "rank": 1, "core_type": "vector", "kernel": "vector", "stream": "s", "wait": [], "signal": [], "wait_memory": {"addr": 4194304, "value": 7}, "params": {"bytes": 1024}})"
        "\n");
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", wl, "-q"});
    SHOW(r);
    CHECK(r.code == 3);
    CHECK(r.err.find("task 'use1'") != std::string::npos);
    CHECK(r.err.find("rank 1") != std::string::npos);
    CHECK(r.err.find("0x400000") != std::string::npos);
    CHECK(r.err.find("flag 7") != std::string::npos);
}

TEST_CASE("system: two ranks that each wait for the other's flag are a deadlock naming a waiting task on each",
          "[system][errors]") {
    // Each rank's send sits behind its own wait on one stream: neither flag
    // is ever written.
    TempDir tmp;
    const std::string wl = tmp.write(
        "cross.jsonl",
        R"({"id": "wait0", "rank": 0, "core_type": "vector", "kernel": "vector", "stream": "s", "wait": [], "signal": [], "wait_memory": {"addr": 2097152, "value": 2}, "params": {"bytes": 512, "addr": 2097152}})"
        "\n"
        R"({"id": "send0", "rank": 0, "core_type": "vector", "kernel": "copy", "stream": "s", "wait": [], "signal": [], "params": {"bytes": 504, "addr": 0, "dst_rank": 1, "dst_addr": 1048576, "flag": 1}})"
        "\n"
        R"({"id": "wait1", "rank": 1, "core_type": "vector", "kernel": "vector", "stream": "s", "wait": [], "signal": [], "wait_memory": {"addr": 1048576, "value": 1}, "params": {"bytes": 512, "addr": 1048576}})"
        "\n"
        R"({"id": "send1", "rank": 1, "core_type": "vector", "kernel": "copy", "stream": "s", "wait": [], "signal": [], "params": {"bytes": 504, "addr": 4096, "dst_rank": 0, "dst_addr": 2097152, "flag": 2}})"
        "\n");
    const Result r =
        run_npusim(tmp, {"run", "--chip", kSuper, "--workload", wl, "--set", "chip.interconnect.ranks=2", "-q"});
    SHOW(r);
    CHECK(r.code == 3);
    CHECK(r.err.find("rank 0: deadlock: task 'wait0'") != std::string::npos);
    CHECK(r.err.find("rank 1: deadlock: task 'wait1'") != std::string::npos);
}

TEST_CASE("system: cross-rank input errors exit 2 naming the task and key", "[system][errors]") {
    TempDir tmp;
    const std::string task =
        R"({"id": "x", "core_type": "vector", "kernel": "copy", "stream": "s", "wait": [], "signal": [], "params": {"bytes": 1024, PARAMS}, EXTRA})";
    auto line = [&](const std::string& params, const std::string& extra) {
        std::string t = task;
        t.replace(t.find("PARAMS"), 6, params);
        t.replace(t.find("EXTRA"), 5, extra);
        return t + "\n";
    };
    struct Case {
        std::string chip, text, expect;
    };
    const std::string a2 = kSrc + "/configs/chips/a2.json";
    const std::vector<Case> cases = {
        {kSuper, line(R"("dst_rank": 1)", R"("rank": 288)"), "rank: 288 is out of range"},
        {kSuper, line(R"("dst_rank": 999)", R"("rank": 0)"), "params.dst_rank: 999 is out of range"},
        {a2, line(R"("dst_rank": 0)", R"("op": "o")"), "single die"},
        {kSuper, line(R"("dst_rank": 1, "dst_addr": 100)", R"("rank": 0)"), "params.dst_addr: 100 is not aligned"},
        {kSuper, line(R"("flag": 1)", R"("rank": 0)"), "only a copy with a dst_rank"},
        {kSuper, line(R"("dst_rank": 1)", R"("wait_memory": {"addr": 512, "valeu": 1})"), "did you mean 'value'"},
        {kSuper, line(R"("dst_rank": 1)", R"("rnak": 1)"), "did you mean 'rank'"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string wl = tmp.write("bad" + std::to_string(i) + ".jsonl", cases[i].text);
        const Result r = run_npusim(tmp, {"run", "--chip", cases[i].chip, "--workload", wl, "-q"});
        SHOW(r);
        CHECK(r.code == 2);
        CHECK(r.err.find(cases[i].expect) != std::string::npos);
        CHECK(r.err.find("task 'x'") != std::string::npos);
    }
    // An event may not cross ranks.
    const std::string cross = tmp.write(
        "cross.jsonl",
        R"({"id": "a", "rank": 0, "core_type": "vector", "kernel": "vector", "stream": "s", "wait": [], "signal": ["e"], "params": {"bytes": 1024}})"
        "\n"
        R"({"id": "b", "rank": 1, "core_type": "vector", "kernel": "vector", "stream": "s", "wait": ["e"], "signal": [], "params": {"bytes": 1024}})"
        "\n");
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", cross, "-q"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK(r.err.find("events are per rank") != std::string::npos);
    const Result tr = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/traces/xrank_pingpong.jsonl", "-q",
                                       "--trace", tmp.path("t.json"), "--trace-ranks", "0,300"});
    SHOW(tr);
    CHECK(tr.code == 2);
    CHECK(tr.err.find("--trace-ranks: rank 300 is out of range") != std::string::npos);
}

TEST_CASE("system: --trace-ranks keeps one process per listed rank", "[system][trace]") {
    TempDir tmp;
    const std::string trace = tmp.path("t.json");
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/traces/xrank_pingpong.jsonl", "-q",
                                      "--trace", trace, "--trace-ranks", "1"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json t = read_json(trace);
    std::vector<std::string> processes;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") processes.push_back(e["args"]["name"]);
    CHECK(std::find(processes.begin(), processes.end(), "rank 1 (a3-supernode)") != processes.end());
    CHECK(std::find(processes.begin(), processes.end(), "rank 0 (a3-supernode)") == processes.end());
    // Four ranks whose tasks all release others (a ring allreduce): every
    // rank's flow arrows keep ids of their own, as Perfetto needs.
    const std::string coll = tmp.path("coll.json");
    const Result c = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/models/collective_allreduce.json",
                                      "--set", "chip.interconnect.ranks=4", "--set", "workload.bytes=262144", "-q",
                                      "--trace", coll});
    SHOW(c);
    REQUIRE(c.code == 0);
    const Result check = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/check_trace.py", coll, "--quiet"});
    SHOW(check);
    CHECK(check.code == 0);
}

TEST_CASE("system: split_by_rank renumbers each rank's streams and events and keeps task order", "[system][tasks]") {
    std::istringstream in(
        R"({"id": "a", "rank": 1, "core_type": "vector", "kernel": "vector", "stream": "x", "wait": [], "signal": ["e1"], "params": {"bytes": 64}})"
        "\n"
        R"({"id": "b", "rank": 0, "core_type": "vector", "kernel": "vector", "stream": "y", "wait": [], "signal": ["e0"], "params": {"bytes": 64}})"
        "\n"
        R"({"id": "c", "rank": 1, "core_type": "vector", "kernel": "vector", "stream": "x", "wait": ["e1"], "signal": [], "params": {"bytes": 64}})"
        "\n");
    const TaskStream ts = parse_task_stream(in, "x.jsonl");
    REQUIRE(ts.cross_rank);
    const auto per = split_by_rank(ts, 3);
    REQUIRE(per.size() == 3);
    REQUIRE(per[0].tasks.size() == 1);
    REQUIRE(per[1].tasks.size() == 2);
    CHECK(per[2].tasks.empty());
    CHECK(per[1].tasks[0].id == "a");
    CHECK(per[1].tasks[1].id == "c");
    CHECK(per[1].streams == std::vector<std::string>{"x"});
    REQUIRE(per[1].events.size() == 1);
    CHECK(per[1].events[0].id == "e1");
    CHECK(per[1].tasks[1].wait == std::vector<EventIndex>{0});
    CHECK(per[0].events[0].id == "e0");
}

TEST_CASE("system: a System of one rank gives exactly the die's statistics", "[system]") {
    TempDir tmp;
    const std::string text =
        R"({"id": "m", "core_type": "cube", "kernel": "matmul", "stream": "c", "wait": [], "signal": ["d"], "params": {"m": 512, "n": 512, "k": 512}})"
        "\n"
        R"({"id": "v", "core_type": "vector", "kernel": "vector", "stream": "v", "wait": ["d"], "signal": [], "params": {"bytes": 524288}})"
        "\n";
    // The binary runs a stream without cross-rank fields on a plain Die.
    const json die = run_for_stats(tmp, kSrc + "/configs/chips/a2.json", tmp.write("s.jsonl", text));
    const RunConfig cfg = RunConfig::load(kSrc + "/configs/chips/a2.json", "x.jsonl", {});
    std::istringstream in(text);
    const TaskStream ts = parse_task_stream(in, "x.jsonl");
    check_stream_fits_chip(ts, cfg.chip());
    System sys("system", cfg.chip(), {std::make_shared<const TaskStream>(ts)}, nullptr, {});
    sys.run();
    Stats s;
    sys.collect(s);
    REQUIRE(sys.ranks() == 1);
    CHECK(s.number("total_ps") == die["total_ps"].get<double>());
    CHECK(s.number("units.vector.busy_cycles") == die["units"]["vector"]["busy_cycles"].get<double>());
    CHECK(s.number("memory.hbm.read_bytes") == die["memory"]["hbm"]["read_bytes"].get<double>());
    CHECK(!s.has("ranks.count"));
}

TEST_CASE("system: --trace-ranks on a MoE graph run keeps exactly the ranks it lists", "[system][trace][moe]") {
    TempDir tmp;
    const std::string moe = kSrc + "/models/moe_dispatch.json";
    const std::string trace = tmp.path("moe.json");
    const Result ok = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", moe, "--set", "chip.interconnect.ranks=16",
                                       "-q", "--trace", trace, "--trace-ranks", "0,3"});
    SHOW(ok);
    REQUIRE(ok.code == 0);
    std::set<std::string> processes;
    const json t = read_json(trace);
    for (const json& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    CHECK(processes.count("rank 0 (a3-supernode)") == 1);
    CHECK(processes.count("rank 3 (a3-supernode)") == 1);
    CHECK(processes.count("rank 1 (a3-supernode)") == 0);
    const Result bad = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", moe, "--set", "chip.interconnect.ranks=16",
                                        "-q", "--trace", trace, "--trace-ranks", "0,16"});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("rank 16 is out of range") != std::string::npos);
}

namespace {
// The statistics file of `npusim run ... --threads N` (byte for byte).
std::string stats_on_threads(const TempDir& tmp, const std::string& workload, const std::vector<std::string>& sets, int threads) {
    const std::string stats = tmp.path("threads" + std::to_string(threads) + ".json");
    std::vector<std::string> args = {"run", "--chip", kSuper, "--workload", workload, "-q", "--stats", stats,
                                     "--threads", std::to_string(threads)};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return slurp(stats);
}
}  // namespace

// The dies of a System may run on two threads (docs/architecture.md, "How
// time works"); the fabric must see them in the same order either way.
TEST_CASE("system: one thread and two give byte-identical statistics", "[system]") {
    TempDir tmp;
    struct Case {
        std::string workload;
        std::vector<std::string> sets;
    };
    const std::vector<Case> cases = {
        // Data-as-Flag: watches and flags that come true across ranks.
        {kSrc + "/models/moe_dispatch.json", {"chip.interconnect.ranks=16", "workload.variant=optimized"}},
        {kSrc + "/models/moe_dispatch.json", {"chip.interconnect.ranks=64", "workload.variant=baseline"}},
        // A read that sees a block before it lands: counted stale on both.
        {kSrc + "/traces/xrank_stale_flag.jsonl", {}},
        {kSrc + "/traces/xrank_allreduce2.jsonl", {}},
    };
    for (const Case& c : cases) {
        INFO(c.workload);
        const std::string one = stats_on_threads(tmp, c.workload, c.sets, 1);
        const std::string two = stats_on_threads(tmp, c.workload, c.sets, 2);
        REQUIRE(!one.empty());
        CHECK(one == two);
    }
    const nlohmann::json stale = nlohmann::json::parse(stats_on_threads(tmp, kSrc + "/traces/xrank_stale_flag.jsonl", {}, 2));
    CHECK(stale["memory_model"]["stale_reads"].get<double>() > 0);
}

TEST_CASE("system: engine.events_by splits the run's events by kind, each counting what its part of the model did",
          "[system]") {
    // The MoE layer at 8 ranks: compiled tasks on every core, the Dispatch
    // and Combine kernels' API calls, transfers, remote writes.
    TempDir tmp;
    const json s = run_for_stats(tmp, kSuper, kSrc + "/models/moe_layer.json", {"chip.interconnect.ranks=8"});
    const json& by = s.at("engine").at("events_by");
    double sum = 0;
    for (const auto& [kind, n] : by.items()) sum += n.get<double>();
    CHECK(sum == s.at("engine").at("events").get<double>());
    CHECK(by.at("kernel_call").get<double>() == s.at("kernel").at("ops").get<double>());
    CHECK(by.at("mesh_chunk").get<double>() == s.at("mesh").at("chunks").get<double>());
    CHECK(by.at("delivery").get<double>() == s.at("memory").at("transfers").get<double>());
    CHECK(by.at("core").get<double>() > 0);
    CHECK(by.at("hbm_flow").get<double>() > 0);
    CHECK(by.at("host").get<double>() == 0);  // no host runtime modelled
    // The run's summary lists them, largest first.
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/models/moe_layer.json", "--set",
                                      "chip.interconnect.ranks=8"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("  events       core ") && Catch::Contains("(engine.events_by)"));
}

TEST_CASE("system: a decode step gives the same statistics on one thread and two", "[system][llm][slow]") {
    // Attention and GEMMs side by side on both threads, the Dispatch and
    // Combine of its MoE layer (the fourth) in turn.
    TempDir tmp;
    const std::string workload = kSrc + "/models/llm/deepseek_v3.json";
    const std::vector<std::string> sets = {"chip.interconnect.ranks=16", "workload.layers=4", "workload.routing.redundant_experts=0"};
    CHECK(stats_on_threads(tmp, workload, sets, 1) == stats_on_threads(tmp, workload, sets, 2));
}

namespace {
// `npusim run ... --lookahead L` on one thread: its statistics without
// engine.windows, and engine.windows.
std::pair<std::string, double> stats_with_lookahead(const TempDir& tmp, const std::string& workload,
                                                    const std::vector<std::string>& sets,
                                                    const std::string& lookahead) {
    const std::string stats = tmp.path("lookahead_" + lookahead + ".json");
    std::vector<std::string> args = {"run",     "--chip", kSuper,      "--workload", workload,      "-q",
                                     "--stats", stats,    "--threads", "1",          "--lookahead", lookahead};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    nlohmann::json j = nlohmann::json::parse(slurp(stats));
    const double windows = j["engine"]["windows"].get<double>();
    j["engine"].erase("windows");
    return {j.dump(), windows};
}
}  // namespace

// docs/architecture.md, "How time works": a window spans several cells
// only where no die can post a write to another, so the dies touch nothing
// they share in it and the cells' grid is the same either way.
TEST_CASE("system: running the dies up to the next post gives the statistics of one cell at a time", "[system]") {
    TempDir tmp;
    struct Case {
        std::string workload;
        std::vector<std::string> sets;
        double max_window_share;  // engine.windows with posts / with cells, at most
    };
    const std::vector<Case> cases = {
        // Dense layers, then a MoE layer's Dispatch and Combine between
        // attention and expert GEMMs of two micro-batches.
        {kSrc + "/models/llm/deepseek_v3.json",
         {"chip.interconnect.ranks=16", "workload.layers=4", "workload.batch=8", "workload.kv_len=1024",
          "workload.routing.redundant_experts=0"},
         0.5},
        // Posting nearly all along: a Dispatch, flags across ranks, stale reads.
        {kSrc + "/models/moe_dispatch.json", {"chip.interconnect.ranks=16", "workload.variant=optimized"}, 1.0},
        {kSrc + "/traces/xrank_stale_flag.jsonl", {}, 1.0},
        {kSrc + "/traces/xrank_allreduce2.jsonl", {}, 1.0},
    };
    for (const Case& c : cases) {
        INFO(c.workload);
        const auto cell = stats_with_lookahead(tmp, c.workload, c.sets, "cell");
        const auto posts = stats_with_lookahead(tmp, c.workload, c.sets, "posts");
        CHECK(cell.first == posts.first);
        CHECK(posts.second <= c.max_window_share * cell.second);
    }
}

TEST_CASE("system: --lookahead other than posts or cell is exit 2", "[system][errors]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/traces/xrank_pingpong.jsonl",
                                      "-q", "--lookahead", "post"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK(r.err.find("--lookahead post: expected posts or cell (did you mean 'posts'?)") != std::string::npos);
}

TEST_CASE("system: --threads other than 1 or 2 is exit 2", "[system][errors]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kSrc + "/traces/xrank_pingpong.jsonl", "-q",
                                      "--threads", "3"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK(r.err.find("--threads 3: expected 1 or 2") != std::string::npos);
}

// Links without latency leave the hub no lookahead window: what one die's
// write does to another is applied after each instant instead.
TEST_CASE("system: a ping-pong over links without latency ends two link latencies sooner", "[system][whatif]") {
    TempDir tmp;
    const auto total_ns = [&](const std::string& ns) {
        const nlohmann::json s =
            run_for_stats(tmp, kSuper, kSrc + "/traces/xrank_pingpong.jsonl",
                          {"chip.interconnect.intra_node.latency_ns=" + ns, "chip.interconnect.inter_node.latency_ns=" + ns});
        return s["total_ns"].get<double>();
    };
    const double with = total_ns("500"), without = total_ns("0");
    CHECK(with - without == Approx(2 * 500.0).margin(1e-6));  // ping and pong each cross one link
}

TEST_CASE("system: a long run says how far it is on stderr when asked, and its statistics do not change",
          "[system][cli]") {
    using Catch::Matchers::Contains;
    TempDir tmp;
    const auto args = [&](const std::string& stats) {
        return std::vector<std::string>{"run",
                                        "--chip",
                                        kSuper,
                                        "--workload",
                                        kSrc + "/models/llm/deepseek_v3.json",
                                        "--set",
                                        "workload.layers=1",
                                        "--set",
                                        "chip.interconnect.ranks=16",
                                        "-q",
                                        "--stats",
                                        tmp.path(stats)};
    };
    const Result quiet = run_program(tmp, "env -u NPUSIM_PROGRESS_SECONDS " + quote(NPUSIM_BIN), args("a.json"));
    REQUIRE(quiet.code == 0);
    CHECK(quiet.err.find("tasks done") == std::string::npos);  // not a terminal, not asked
    const Result told = run_program(tmp, "NPUSIM_PROGRESS_SECONDS=0 " + quote(NPUSIM_BIN), args("b.json"));
    SHOW(told);
    REQUIRE(told.code == 0);
    CHECK_THAT(told.err, Contains("% of 52320 tasks done on 16 ranks") && Contains("us simulated"));
    CHECK(slurp(tmp.path("a.json")) == slurp(tmp.path("b.json")));
    const Result bad = run_program(tmp, "NPUSIM_PROGRESS_SECONDS=soon " + quote(NPUSIM_BIN), args("c.json"));
    CHECK(bad.code == 2);
    CHECK_THAT(
        bad.err,
        Contains("NPUSIM_PROGRESS_SECONDS: expected the seconds between progress lines, from 0 to 1e9, got 'soon'"));
    CHECK_FALSE(std::filesystem::exists(tmp.path("c.json")));
}
