// Tests of `npusim lint` (docs/design.md §1.1 over-synchronisation, §4.1): the
// analysis on small hand-written streams, on the bundled
// traces/lint_concat_oversync.jsonl and on a 10^4-task stream, then the
// command line end to end (exit codes 0 / 1 / 2, --json).
#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "support/e2e.hpp"
#include "tasks/lint.hpp"
#include "tasks/stream_reader.hpp"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace npusim;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kOversync = kSrc + "/traces/lint_concat_oversync.jsonl";

TaskStream parse(const std::string& text) {
    std::istringstream in(text);
    return parse_task_stream(in, "test.jsonl");
}

// A vector task over explicit regions: reads / writes are "space:addr:bytes" lists.
std::string vtask(const std::string& id, const std::vector<std::string>& wait, const std::vector<std::string>& signal,
                  const std::vector<std::string>& reads, const std::vector<std::string>& writes,
                  const std::string& stream = "") {
    auto regions = [](const std::vector<std::string>& rs) {
        json a = json::array();
        for (const auto& r : rs) {
            const auto c1 = r.find(':'), c2 = r.rfind(':');
            a.push_back({{"space", r.substr(0, c1)},
                         {"addr", std::stoull(r.substr(c1 + 1, c2 - c1 - 1))},
                         {"bytes", std::stoull(r.substr(c2 + 1))}});
        }
        return a;
    };
    json j = {{"id", id}, {"core_type", "vector"}, {"kernel", "vector"}, {"stream", stream.empty() ? "s_" + id : stream},
              {"wait", wait}, {"signal", signal}, {"params", {{"bytes", 4096}}}};
    if (!reads.empty()) j["params"]["reads"] = regions(reads);
    if (!writes.empty()) j["params"]["writes"] = regions(writes);
    return j.dump() + "\n";
}

// "from->to@event" for each reported edge, in report order.
std::vector<std::string> edges(const TaskStream& ts, const LintReport& r) {
    std::vector<std::string> out;
    for (const LintEdge& e : r.over_sync)
        out.push_back(ts.tasks[e.from].id + "->" + ts.tasks[e.to].id + "@" + ts.events[e.event].id);
    return out;
}

const LintEventSummary* summary(const TaskStream& ts, const LintReport& r, const std::string& event) {
    for (const auto& s : r.event_summary)
        if (ts.events[s.event].id == event) return &s;
    return nullptr;
}

// The bundled oversync stream with the redundant event taken out.
std::string without_conv_done(const std::string& text) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        json j = json::parse(line);
        if (j.contains("event")) {
            if (j["event"] == "conv_done") continue;
        } else {
            for (const char* key : {"wait", "signal"}) {
                json kept = json::array();
                for (const auto& e : j[key])
                    if (e != "conv_done") kept.push_back(e);
                j[key] = kept;
            }
        }
        out += j.dump() + "\n";
    }
    return out;
}

}  // namespace

// ------------------------------------------------------------------ regions

TEST_CASE("lint: regions come from reads/writes, else from the params", "[lint]") {
    const TaskStream ts = parse(
        R"({"id":"mm","core_type":"cube","kernel":"matmul","stream":"a","wait":[],"signal":[],"params":{"m":16,"n":32,"k":64,"addr":1000,"out_addr":9000,"dst":"l2"}})"
        "\n"
        R"({"id":"v","core_type":"vector","kernel":"vector","stream":"a","wait":[],"signal":[],"params":{"bytes":256,"out_bytes":128,"src":"ub","addr":5,"out_addr":7}})"
        "\n"
        R"({"id":"x","core_type":"vector","kernel":"copy","stream":"a","wait":[],"signal":[],"params":{"bytes":256,"addr":5,"reads":[{"space":"l1","addr":1,"bytes":2}],"writes":[{"space":"hbm","addr":3,"bytes":4}]}})"
        "\n"
        R"({"id":"noaddr","core_type":"vector","kernel":"copy","stream":"a","wait":[],"signal":[],"params":{"bytes":256}})"
        "\n"
        R"({"id":"sc","core_type":"scalar","kernel":"scalar","stream":"a","wait":[],"signal":[],"params":{"cycles":10}})"
        "\n");
    const LintRegions mm = lint_regions(ts.tasks[0]);
    REQUIRE(mm.reads.size() == 1);
    CHECK(mm.reads[0].space == Space::hbm);
    CHECK(mm.reads[0].addr == 1000);
    CHECK(mm.reads[0].bytes == (16 * 64 + 64 * 32) * 2);  // m·k + k·n fp16 elements
    REQUIRE(mm.writes.size() == 1);
    CHECK(mm.writes[0].space == Space::l2);
    CHECK(mm.writes[0].addr == 9000);
    CHECK(mm.writes[0].bytes == 16 * 32 * 2);
    CHECK_FALSE(mm.everything);

    const LintRegions v = lint_regions(ts.tasks[1]);
    REQUIRE(v.reads.size() == 1);
    CHECK(v.reads[0].space == Space::ub);
    CHECK(v.reads[0].bytes == 256);
    REQUIRE(v.writes.size() == 1);
    CHECK(v.writes[0].addr == 7);
    CHECK(v.writes[0].bytes == 128);

    const LintRegions x = lint_regions(ts.tasks[2]);  // explicit lists win
    REQUIRE(x.reads.size() == 1);
    CHECK(x.reads[0].space == Space::l1);
    REQUIRE(x.writes.size() == 1);
    CHECK(x.writes[0].bytes == 4);

    CHECK(lint_regions(ts.tasks[3]).everything);  // no address: unknown
    CHECK(lint_regions(ts.tasks[4]).everything);  // scalar without regions

    // Overlap: same space and intersecting ranges only.
    CHECK(regions_overlap({Space::hbm, 0, 10}, {Space::hbm, 9, 1}));
    CHECK_FALSE(regions_overlap({Space::hbm, 0, 10}, {Space::hbm, 10, 1}));
    CHECK(regions_overlap({Space::hbm, 0, 10}, {Space::l2, 5, 10}));  // one global memory
    CHECK_FALSE(regions_overlap({Space::hbm, 0, 10}, {Space::ub, 0, 10}));
    CHECK_FALSE(regions_overlap({Space::ub, 0, 10}, {Space::l1, 0, 10}));
    CHECK(regions_overlap({Space::ub, 0, 10}, {Space::ub, 0, 10}));
    CHECK_FALSE(regions_overlap({Space::hbm, 0, 0}, {Space::hbm, 0, 10}));
    LintRegions r1, r2;
    r1.reads = {{Space::hbm, 0, 10}};
    r2.reads = {{Space::hbm, 0, 10}};
    CHECK_FALSE(regions_conflict(r1, r2));  // read-read is no dependence
    r2.writes = {{Space::hbm, 5, 1}};
    CHECK(regions_conflict(r1, r2));  // WAR
    CHECK(regions_conflict(r2, r1));  // RAW
}

// ---------------------------------------------------------------- analysis

TEST_CASE("lint: a direct RAW edge is not reported", "[lint]") {
    const TaskStream ts = parse(vtask("a", {}, {"e"}, {"hbm:0:100"}, {"hbm:1000:100"}) +
                                vtask("b", {"e"}, {}, {"hbm:1050:10"}, {"hbm:2000:100"}));
    const LintReport r = lint_task_stream(ts);
    CHECK(r.over_sync.empty());
    CHECK(r.clean());
    CHECK(r.event_edges == 1);
    CHECK(r.true_dependences == 1);
}

TEST_CASE("lint: an l2 write and an hbm read of the same addresses are a dependence", "[lint]") {
    const TaskStream ts = parse(vtask("a", {}, {"e"}, {"hbm:0:100"}, {"l2:1000:100"}) +
                                vtask("b", {"e"}, {}, {"hbm:1090:100"}, {"ub:1000:100"}));
    const LintReport r = lint_task_stream(ts);
    CHECK(r.true_dependences == 1);
    CHECK(r.over_sync.empty());
}

TEST_CASE("lint: an edge between independent tasks is reported, with the event removable", "[lint]") {
    const TaskStream ts = parse(vtask("a", {}, {"e"}, {"hbm:0:100"}, {"hbm:1000:100"}) +
                                vtask("b", {"e"}, {}, {"hbm:0:100"}, {"hbm:2000:100"}));  // shares a read only
    const LintReport r = lint_task_stream(ts);
    CHECK(edges(ts, r) == std::vector<std::string>{"a->b@e"});
    REQUIRE(summary(ts, r, "e"));
    CHECK(summary(ts, r, "e")->removable);
    CHECK_FALSE(r.clean());
    const std::string text = lint_report_text(ts, r);
    CHECK_THAT(text, Contains("over-synchronisation: event 'e' orders 'a' -> 'b' (test.jsonl:2)"));
    CHECK_THAT(text, Contains("event 'e' can be removed"));
}

TEST_CASE("lint: a transitive edge a true dependence needs through another task is not reported", "[lint]") {
    // a writes X, c reads it (RAW) or writes it (WAW) or a reads it and c writes it (WAR);
    // the only ordering is a -> m -> c and m touches none of it.
    const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kinds = {
        {"RAW", {"w", "r"}}, {"WAR", {"r", "w"}}, {"WAW", {"w", "w"}}};
    for (const auto& [name, rw] : kinds) {
        INFO(name);
        auto side = [](const std::string& mode, bool reads) {
            return (mode == "r") == reads ? std::vector<std::string>{"hbm:0:64"} : std::vector<std::string>{};
        };
        const std::string a_rw = rw.first, c_rw = rw.second;
        std::vector<std::string> a_reads = side(a_rw, true), a_writes = side(a_rw, false);
        std::vector<std::string> c_reads = side(c_rw, true), c_writes = side(c_rw, false);
        a_reads.push_back("hbm:100:1");  // every task has both lists
        a_writes.push_back("hbm:200:1");
        c_reads.push_back("hbm:300:1");
        c_writes.push_back("hbm:400:1");
        const TaskStream ts = parse(vtask("a", {}, {"e1"}, a_reads, a_writes) +
                                    vtask("m", {"e1"}, {"e2"}, {"hbm:500:1"}, {"hbm:600:1"}) +
                                    vtask("c", {"e2"}, {}, c_reads, c_writes));
        const LintReport r = lint_task_stream(ts);
        CHECK(r.true_dependences == 1);
        CHECK(r.over_sync.empty());
        CHECK(r.clean());
    }
    // With a direct a -> c edge as well, the detour through m is over-synchronisation.
    const TaskStream ts = parse(vtask("a", {}, {"e1", "direct"}, {"hbm:100:1"}, {"hbm:0:64"}) +
                                vtask("m", {"e1"}, {"e2"}, {"hbm:500:1"}, {"hbm:600:1"}) +
                                vtask("c", {"e2", "direct"}, {}, {"hbm:0:64"}, {"hbm:400:1"}));
    const LintReport r = lint_task_stream(ts);
    CHECK(edges(ts, r) == std::vector<std::string>{"a->m@e1", "m->c@e2"});
}

TEST_CASE("lint: an event edge followed by stream order can be what orders a dependence", "[lint]") {
    // p waits for a; q follows p in stream s and reads what a wrote. The
    // stream head moves on only once p is dispatched, after a ended: the
    // edge a -> p orders a before q and is needed although p shares no data.
    const TaskStream ts = parse(vtask("a", {}, {"e"}, {"hbm:100:1"}, {"hbm:0:64"}) +
                                vtask("p", {"e"}, {}, {"hbm:500:1"}, {"hbm:600:1"}, "s") +
                                vtask("q", {}, {}, {"hbm:0:64"}, {"hbm:700:1"}, "s"));
    const LintReport r = lint_task_stream(ts);
    CHECK(r.stream_edges == 1);
    CHECK(r.true_dependences == 1);
    CHECK(r.over_sync.empty());
    // Stream order alone orders nothing: a stream edge first is no dependence.
    const TaskStream ts2 = parse(vtask("a", {}, {}, {"hbm:100:1"}, {"hbm:0:64"}, "s") +
                                 vtask("b", {}, {}, {"hbm:0:64"}, {"hbm:700:1"}, "s"));
    CHECK(lint_task_stream(ts2).true_dependences == 0);
}

TEST_CASE("lint: a task without regions is treated as touching everything", "[lint]") {
    // s (a scalar task, no regions) sits between two tasks that share nothing.
    const std::string sc =
        R"({"id":"s","core_type":"scalar","kernel":"scalar","stream":"x","wait":["e1"],"signal":["e2"],"params":{"cycles":5}})"
        "\n";
    const TaskStream ts = parse(vtask("a", {}, {"e1"}, {"hbm:0:64"}, {"hbm:100:64"}) + sc +
                                vtask("b", {"e2"}, {}, {"hbm:200:64"}, {"hbm:300:64"}));
    const LintReport r = lint_task_stream(ts);
    REQUIRE(r.conservative.size() == 1);
    CHECK(ts.tasks[r.conservative[0]].id == "s");
    CHECK(r.over_sync.empty());  // neither a -> s nor s -> b
    CHECK(r.true_dependences == 2);  // a-s and s-b; a and b share nothing
    CHECK_THAT(lint_report_text(ts, r), Contains("touching all memory"));

    // A vector task without an address keeps its edges too, and a dependence
    // through it still needs the edges around it.
    const TaskStream ts2 =
        parse(vtask("a", {}, {"e1", "e3"}, {"hbm:0:64"}, {"hbm:100:64"}) +
              R"({"id":"u","core_type":"vector","kernel":"vector","stream":"x","wait":["e1"],"signal":["e2"],"params":{"bytes":64}})"
              "\n" +
              vtask("b", {"e2", "e3"}, {}, {"hbm:200:64"}, {"hbm:300:64"}));
    const LintReport r2 = lint_task_stream(ts2);
    REQUIRE(r2.conservative.size() == 1);
    // a -> b via e3 is the only removable edge: a and b share nothing and
    // nothing needs a before b.
    CHECK(edges(ts2, r2) == std::vector<std::string>{"a->b@e3"});
}

TEST_CASE("lint: a counting event has an edge from each signaller", "[lint]") {
    // Two tiles signal 'done' (count 2); the consumer reads only tile 0.
    const TaskStream ts = parse(R"({"event":"done","count":2})"
                                "\n" +
                                vtask("t0", {}, {"done"}, {"hbm:0:64"}, {"hbm:1000:64"}) +
                                vtask("t1", {}, {"done"}, {"hbm:0:64"}, {"hbm:2000:64"}) +
                                vtask("c", {"done"}, {}, {"hbm:1000:64"}, {"hbm:3000:64"}));
    const LintReport r = lint_task_stream(ts);
    CHECK(r.event_edges == 2);
    CHECK(edges(ts, r) == std::vector<std::string>{"t1->c@done"});
    REQUIRE(summary(ts, r, "done"));
    CHECK(summary(ts, r, "done")->edges == 2);
    CHECK(summary(ts, r, "done")->redundant == 1);
    CHECK_FALSE(summary(ts, r, "done")->removable);
    CHECK_THAT(lint_report_text(ts, r), Contains("1 of its 2 edges"));

    // Op-level sync, 3 producer and 3 consumer tiles: only i -> i is needed.
    std::string text = R"({"event":"op","count":3})"
                       "\n";
    for (int i = 0; i < 3; ++i)
        text += vtask(fmt::format("p{}", i), {}, {"op"}, {"hbm:0:64"}, {fmt::format("hbm:{}:64", 1000 * (i + 1))});
    for (int i = 0; i < 3; ++i)
        text += vtask(fmt::format("c{}", i), {"op"}, {}, {fmt::format("hbm:{}:64", 1000 * (i + 1))},
                      {fmt::format("hbm:{}:64", 9000 + 100 * i)});
    const TaskStream ops = parse(text);
    const LintReport ro = lint_task_stream(ops);
    CHECK(ro.over_sync.size() == 6);
    for (const std::string& e : edges(ops, ro)) CHECK(e.substr(1, 1) != e.substr(5, 1));
}

TEST_CASE("lint: edges redundant one by one but not together keep their event", "[lint]") {
    // a writes X, c reads X; a -> {m1, m2} -> c. Either middle path alone orders a before c.
    const TaskStream ts = parse(R"({"event":"e2","count":2})"
                                "\n" +
                                vtask("a", {}, {"e1"}, {"hbm:100:1"}, {"hbm:0:64"}) +
                                vtask("m1", {"e1"}, {"e2"}, {"hbm:500:1"}, {"hbm:600:1"}) +
                                vtask("m2", {"e1"}, {"e2"}, {"hbm:500:1"}, {"hbm:700:1"}) +
                                vtask("c", {"e2"}, {}, {"hbm:0:64"}, {"hbm:800:1"}));
    const LintReport r = lint_task_stream(ts);
    CHECK(r.over_sync.size() == 4);
    REQUIRE(summary(ts, r, "e1"));
    REQUIRE(summary(ts, r, "e2"));
    CHECK_FALSE(summary(ts, r, "e1")->removable);
    CHECK_FALSE(summary(ts, r, "e2")->removable);
    CHECK_THAT(lint_report_text(ts, r), Contains("not all together"));
}

TEST_CASE("lint: cycles and events that never fire are deadlocks, not analysed", "[lint]") {
    // v0 waits for e, which v1 signals, but v1 comes after v0 in stream s.
    const TaskStream ts = parse(vtask("v0", {"e"}, {}, {"hbm:0:1"}, {"hbm:1:1"}, "s") +
                                vtask("v1", {}, {"e"}, {"hbm:2:1"}, {"hbm:3:1"}, "s"));
    const LintReport r = lint_task_stream(ts);
    REQUIRE(r.deadlocks.size() == 1);
    CHECK_THAT(r.deadlocks[0], Contains("cycle"));
    CHECK_THAT(r.deadlocks[0], Contains("'v0' -[stream 's']-> 'v1' -[event 'e']-> 'v0'"));
    CHECK_FALSE(r.clean());

    const TaskStream ts2 = parse(R"({"event":"two","count":2})"
                                 "\n" +
                                 vtask("a", {}, {"two"}, {"hbm:0:1"}, {"hbm:1:1"}) +
                                 vtask("b", {"two"}, {}, {"hbm:2:1"}, {"hbm:3:1"}));
    const LintReport r2 = lint_task_stream(ts2);
    REQUIRE(r2.deadlocks.size() == 1);
    CHECK_THAT(r2.deadlocks[0], Contains("event 'two' needs 2 signal(s) but the stream gives it 1"));
}

TEST_CASE("lint: the bundled ConvReLU || Pooling -> Concat stream has exactly the conv -> pool edges", "[lint]") {
    const TaskStream ts = read_task_stream(kOversync);
    const LintReport r = lint_task_stream(ts);
    CHECK(r.conservative.empty());
    CHECK(r.deadlocks.empty());
    REQUIRE(r.over_sync.size() == 16);
    std::set<std::string> got;
    for (const LintEdge& e : r.over_sync) {
        CHECK(ts.events[e.event].id == "conv_done");
        CHECK(ts.tasks[e.from].op != 0);
        CHECK(ts.name(ts.tasks[e.from].op) == "conv");
        CHECK(ts.name(ts.tasks[e.to].op) == "maxpool");
        got.insert(ts.tasks[e.from].id + "->" + ts.tasks[e.to].id);
    }
    CHECK(got.size() == 16);
    REQUIRE(r.event_summary.size() == 1);
    CHECK(r.event_summary[0].removable);
    // Output is sorted: by waiter line, then signaller line.
    CHECK(edges(ts, r).front() == "conv0->pool0@conv_done");
    CHECK(edges(ts, r).back() == "conv3->pool3@conv_done");

    // Without the redundant event the stream is clean.
    std::istringstream in(without_conv_done(slurp(kOversync)));
    const TaskStream clean = parse_task_stream(in, "clean.jsonl");
    const LintReport rc = lint_task_stream(clean);
    CHECK(rc.clean());
    CHECK(rc.true_dependences == r.true_dependences);
}

TEST_CASE("lint: 10^4 tasks with op-level events (1.6*10^5 edges) are analysed quickly and exactly", "[lint][scale]") {
    // 625 layers of 16 tiles; each layer signals one counting event that the
    // next layer waits on. Tile i reads tile i of the previous layer; layers
    // ping-pong between two buffers, so WAR and WAW dependences exist too.
    constexpr int kLayers = 625, kTiles = 16;
    std::string text;
    for (int l = 0; l < kLayers; ++l) {
        text += fmt::format(R"({{"event":"L{}","count":{}}})", l, kTiles) + "\n";
        for (int i = 0; i < kTiles; ++i) {
            const std::vector<std::string> wait = l ? std::vector<std::string>{fmt::format("L{}", l - 1)}
                                                    : std::vector<std::string>{};
            text += vtask(fmt::format("t{}_{}", l, i), wait, {fmt::format("L{}", l)},
                          {fmt::format("hbm:{}:4096", ((l + 1) % 2) * 1000000 + i * 4096)},
                          {fmt::format("hbm:{}:4096", (l % 2) * 1000000 + i * 4096)}, fmt::format("s{}", i));
        }
    }
    const TaskStream ts = parse(text);
    const auto t0 = std::chrono::steady_clock::now();
    const LintReport r = lint_task_stream(ts);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("lint took " << seconds << " s");
    CHECK(r.tasks == kLayers * kTiles);
    CHECK(r.event_edges == static_cast<std::uint64_t>(kLayers - 1) * kTiles * kTiles);
    CHECK(r.over_sync.size() == static_cast<std::size_t>(kLayers - 1) * kTiles * (kTiles - 1));
    for (const LintEdge& e : r.over_sync) REQUIRE(e.from % kTiles != e.to % kTiles);
    CHECK(seconds < 60);  // about a second in a release build
}

// ------------------------------------------------------------ command line

TEST_CASE("lint cli: the bundled oversync stream fails with both task names and passes without the event",
          "[lint][cli]") {
    TempDir tmp;
    const std::string out_json = tmp.path("findings/lint.json");
    const Result r = run_npusim(tmp, {"lint", "--chip", kAx300, "--tasks", kOversync, "--json", out_json});
    SHOW(r);
    CHECK(r.code == 1);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("over-synchronisation: event 'conv_done' orders 'conv0' -> 'pool3'"));
    CHECK_THAT(r.out, Contains("lint_concat_oversync.jsonl:"));
    CHECK_THAT(r.out, Contains("event 'conv_done' can be removed"));
    CHECK_THAT(r.out, !Contains("relu"));
    const json j = json::parse(slurp(out_json));
    CHECK(j["ok"] == false);
    REQUIRE(j["over_synchronisation"].size() == 16);
    CHECK(j["over_synchronisation"][0]["event"] == "conv_done");
    CHECK(j["over_synchronisation"][0]["from"] == "conv0");
    CHECK(j["over_synchronisation"][0]["to"] == "pool0");
    CHECK(j["events_with_over_synchronisation"][0]["removable"] == true);

    const std::string clean = tmp.write("clean.jsonl", without_conv_done(slurp(kOversync)));
    const Result c = run_npusim(tmp, {"lint", "--chip", kAx300, "--tasks", clean, "--json", tmp.path("clean.json")});
    SHOW(c);
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Contains("ok: no over-synchronisation"));
    CHECK(json::parse(slurp(tmp.path("clean.json")))["ok"] == true);
}

TEST_CASE("lint cli: the redundant event costs cycles when the stream runs", "[lint][cli]") {
    TempDir tmp;
    const std::string clean = tmp.write("clean.jsonl", without_conv_done(slurp(kOversync)));
    const Result a = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kOversync, "--stats", tmp.path("a.json"), "-q"});
    const Result b = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", clean, "--stats", tmp.path("b.json"), "-q"});
    SHOW(a);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    const json sa = json::parse(slurp(tmp.path("a.json"))), sb = json::parse(slurp(tmp.path("b.json")));
    // Pooling waits for all of the convolution instead of overlapping it.
    CHECK(sa["total_cycles"].get<double>() > sb["total_cycles"].get<double>());
    CHECK(sa["overlap"]["cube_vector"].get<double>() < sb["overlap"]["cube_vector"].get<double>());
}

TEST_CASE("lint cli: bad inputs exit 2 naming the file", "[lint][cli][errors]") {
    TempDir tmp;
    const std::string bad = tmp.write("bad.jsonl", vtask("a", {}, {}, {"hbm:0:1"}, {"hbm:1:1"}) + "{\"id\": \"b\",\n");
    const Result r = run_npusim(tmp, {"lint", "--chip", kAx300, "--tasks", bad});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("bad.jsonl:2"));
    CHECK_THAT(r.err, Contains("invalid JSON"));
    CHECK(r.out.empty());

    const Result m = run_npusim(tmp, {"lint", "--chip", kAx300, "--tasks", tmp.path("missing.jsonl")});
    SHOW(m);
    CHECK(m.code == 2);
    CHECK_THAT(m.err, Contains("missing.jsonl"));

    const Result c = run_npusim(tmp, {"lint", "--chip", tmp.path("nochip.json"), "--tasks", kOversync});
    SHOW(c);
    CHECK(c.code == 2);
    CHECK_THAT(c.err, Contains("nochip.json"));

    const Result o = run_npusim(tmp, {"lint", "--chip", kAx300});
    SHOW(o);
    CHECK(o.code == 2);
    CHECK_THAT(o.err, Contains("tasks"));
}
