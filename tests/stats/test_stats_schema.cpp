// The statistics schema (sim/stats/stats_schema.hpp): every key a writer sets
// has a row (an unknown key is a programming error, and every key of runs of
// each workload kind is found in the table with the kind it says), a reader
// of a missing key hears about it, `npusim stats-reference` renders the table,
// and docs/statistics.md's key tables are its output.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/stats.hpp"
#include "stats/stats_schema.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;

// Does a value of the stats file have the kind its row says?
bool kind_fits(StatKind k, const nlohmann::json& v) {
    switch (k) {
        case StatKind::count:
        case StatKind::cycles:
        case StatKind::ps:
        case StatKind::bytes:
        case StatKind::index:
        case StatKind::flag:  // whole numbers, written as integers
            return v.is_number_integer();
        case StatKind::ns:
        case StatKind::fraction:
        case StatKind::ratio:
        case StatKind::rate:
        case StatKind::number: return v.is_number();
        case StatKind::text: return v.is_string();
        case StatKind::list: return v.is_array();
        case StatKind::object: return true;  // a row over several fields, or a value left whole (config)
    }
    return false;
}

bool has_rows_under(const std::string& pattern) {
    for (const StatSpec& s : stat_keys())
        if (s.pattern.rfind(pattern + ".", 0) == 0 || s.pattern.rfind(pattern + "[]", 0) == 0) return true;
    return false;
}

// A name inside a JSON value may hold dots (`cube.gm_port`): one segment.
std::string segment(const std::string& name) {
    std::string out = name;
    for (char& c : out)
        if (c == '.') c = '_';
    return out;
}

// Every path of `v` (objects by `.`, list elements' fields by `[].`) that
// has no row, or a value of another kind than its row's, one line each.
void walk(const std::string& path, const nlohmann::json& v, std::set<std::string>& bad) {
    const StatSpec* row = path.empty() ? nullptr : find_stat(path);
    if (v.is_object() && (path.empty() || !row || has_rows_under(row->pattern))) {
        for (const auto& [k, x] : v.items()) walk(path.empty() ? k : path + "." + segment(k), x, bad);
        return;
    }
    if (v.is_array() && !row) {  // keys with numbers (mesh.planes.0.bytes) come out as lists
        for (std::size_t i = 0; i < v.size(); ++i) walk(path + "." + std::to_string(i), v[i], bad);
        return;
    }
    if (!row) {
        bad.insert(path + ": no row");
        return;
    }
    if (!kind_fits(row->kind, v)) bad.insert(path + ": not a " + to_string(row->kind) + " (" + row->pattern + ")");
    if (v.is_array())
        for (const auto& e : v)
            if (e.is_object())
                for (const auto& [k, x] : e.items()) walk(path + "[]." + k, x, bad);
}

}  // namespace

TEST_CASE("stats schema: a key without a row is a programming error", "[stats]") {
    Stats s;
    CHECK_NOTHROW(s.set("units.cube.busy_cycles", 1));
    CHECK_NOTHROW(s.set("cores.vector7.pipes.mte3.busy_cycles", 1));
    CHECK_NOTHROW(s.set("mesh.links.r3.p6.tx_bytes", 1));
    CHECK_THROWS_WITH(s.set("units.cube.busy_cyles", 1), Contains("'units.cube.busy_cyles'"));
    CHECK_THROWS_WITH(s.set("cores.cube0.pipes.busy_cycles", 1), Contains("cores.cube0.pipes.busy_cycles"));
    CHECK_THROWS_WITH(s.set_json("opz", "[]"), Contains("'opz'"));
    // A field inside a JSON value is not a key of its own.
    CHECK_THROWS_WITH(s.set("ops[].name", "x"), Contains("ops[].name"));
    CHECK_FALSE(s.has("units.cube.busy_cyles"));
}

TEST_CASE("stats schema: reading a missing key throws naming it", "[stats]") {
    Stats s;
    s.set("total_ns", 12.5);
    s.set("version", "x");
    CHECK(s.number("total_ns") == 12.5);
    CHECK_THROWS_WITH(s.number("total_cycles"), Contains("'total_cycles'"));
    CHECK_THROWS_WITH(s.number("version"), Contains("'version' is text"));
    CHECK(s.number_or("total_cycles", -1) == -1);
    CHECK(s.number_or("total_ns", -1) == 12.5);
}

TEST_CASE("stats schema: patterns match names, alternatives and list fields", "[stats]") {
    REQUIRE(find_stat("units.vector.replanned_tasks"));
    CHECK(find_stat("units.vector.replanned_tasks")->pattern == "units.{cube,vector}.replanned_tasks");
    CHECK(find_stat("host.threads.launch.stages.alloc_ns")->pattern == "host.threads.<thread>.stages.<stage>_ns");
    CHECK(find_stat("ops[].busy_ns")->source == StatSource::field);
    CHECK(find_stat("units.scalar.replanned_tasks") == nullptr);
    CHECK(find_stat("mesh.links.3.p6.tx_bytes") == nullptr);  // the rank segment is r<R>
    // A named row wins over a placeholder row listed before it.
    CHECK(find_stat("units.mesh.utilization")->pattern == "units.mesh.utilization");
    CHECK(find_stat("units.mesh.utilization")->merge == RankMerge::whole);
    CHECK(find_stat("units.hbm.utilization")->pattern == "units.hbm.utilization");
    CHECK(find_stat("units.mte2.utilization")->pattern == "units.<pipe>.utilization");
    CHECK(stat_pattern_under("units.{cube,vector}.count", "units.cu"));
    CHECK(stat_pattern_under("cores.<core>.tasks", "cores.cube0"));
    CHECK_FALSE(stat_pattern_under("cores.<core>.tasks", "memory"));
}

TEST_CASE("stats schema: every key of runs of each workload kind has a row of its kind", "[stats][e2e]") {
    struct Run {
        std::string chip, workload;
        std::vector<std::string> extra;
    };
    const std::string ax300 = kSrc + "/configs/chips/ax300.json", a2 = kSrc + "/configs/chips/a2.json",
                      sn = kSrc + "/configs/chips/a3-supernode.json";
    const std::vector<Run> runs = {
        {ax300, "traces/convbnrelu_tile.jsonl", {"--what-would-help"}},  // a task stream, and the re-runs' keys
        {a2, "models/bert_layer.json", {}},                              // a compiled graph
        {a2, "models/host_smallops.json", {}},                           // host runtime
        {a2, "models/host_hetero.json", {}},                             // host runtime with CPU ops
        {sn, "models/collective_allreduce.json", {"--set", "chip.interconnect.ranks=8"}},
        {sn, "models/moe_dispatch.json", {"--set", "chip.interconnect.ranks=16"}},  // kernel programs
        {sn, "models/llm/deepseek_v3.json", {"--set", "chip.interconnect.ranks=8", "--set", "workload.layers=2"}},
        {a2, "models/llm/llama3_8b.json", {"--set", "workload.layers=1"}},  // an LLM step on one die
        {sn, "traces/xrank_pingpong.jsonl", {}},                            // a cross-rank stream
    };
    TempDir tmp;
    for (const Run& run : runs) {
        const std::string stats = tmp.path("stats.json");
        std::vector<std::string> args = {"run", "--chip", run.chip, "--workload", kSrc + "/" + run.workload, "--stats", stats, "-q"};
        args.insert(args.end(), run.extra.begin(), run.extra.end());
        const Result r = run_npusim(tmp, args);
        INFO(run.workload);
        SHOW(r);
        REQUIRE(r.code == 0);
        std::set<std::string> bad;
        walk("", read_json(stats), bad);
        std::string lines;
        for (const std::string& b : bad) lines += b + "\n";
        INFO(lines);
        CHECK(bad.empty());
    }
}

TEST_CASE("stats-reference: a prefix filters, --json parses, an unknown prefix is exit 2", "[stats][cli]") {
    TempDir tmp;
    const Result md = run_npusim(tmp, {"stats-reference", "units.cube"});
    SHOW(md);
    REQUIRE(md.code == 0);
    CHECK_THAT(md.out, Contains("| `units.{cube,vector}.busy_cycles` | cycles | cycles | sum |"));
    CHECK_THAT(md.out, Contains("## Per unit type: cores"));
    CHECK(md.out.find("memory.l2") == std::string::npos);

    const Result js = run_npusim(tmp, {"stats-reference", "mesh.tiers", "--json"});
    SHOW(js);
    REQUIRE(js.code == 0);
    const nlohmann::json rows = nlohmann::json::parse(js.out);
    REQUIRE(rows.is_array());
    REQUIRE(rows.size() >= 3);
    for (const auto& row : rows) {
        CHECK(row["key"].get<std::string>().rfind("mesh.tiers.", 0) == 0);
        CHECK(row["ranks"] == "whole");
    }

    const Result bad = run_npusim(tmp, {"stats-reference", "mesh.tierz"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("no statistics key begins with 'mesh.tierz' (did you mean 'mesh.tiers'?)"));
}

TEST_CASE("docs/statistics.md's key tables are the schema's", "[stats][docs]") {
    const std::string path = kSrc + "/docs/statistics.md";
    const std::string doc = slurp(path), expected = render_statistics_doc(doc);
    // Regenerate with: NPUSIM_UPDATE_DOCS=1 build/npusim_tests '[docs]'
    if (const char* update = std::getenv("NPUSIM_UPDATE_DOCS"); update && std::string(update) == "1")
        std::ofstream(path, std::ios::binary) << expected;
    CHECK(doc == expected);
    // Every section of the schema is in the doc, once.
    for (const StatSection& sec : stat_sections()) {
        const std::string marker = "<!-- stats-reference:begin " + sec.id + " -->";
        INFO(marker);
        const std::size_t at = doc.find(marker);
        CHECK(at != std::string::npos);
        CHECK(doc.find(marker, at + 1) == std::string::npos);
    }
}

TEST_CASE("stats: ranks merge by their row's rule: the largest event wait is any rank's, the total wait their sum",
          "[stats][system]") {
    // The same graph on every rank of a supernode (no communication): each
    // rank waits alike, so four ranks have one rank's largest wait and four
    // times its waits.
    const std::string sn = kSrc + "/configs/chips/a3-supernode.json", graph = kSrc + "/models/convbnrelu.json";
    TempDir tmp;
    const nlohmann::json one = run_for_stats(tmp, sn, graph, {"chip.interconnect.ranks=1"});
    const nlohmann::json four = run_for_stats(tmp, sn, graph, {"chip.interconnect.ranks=4"});
    REQUIRE(one["events"]["max_wait_cycles"].get<double>() > 0);
    CHECK(four["events"]["max_wait_cycles"] == one["events"]["max_wait_cycles"]);
    CHECK(four["events"]["wait_cycles"].get<double>() == 4 * one["events"]["wait_cycles"].get<double>());
    CHECK(four["total_cycles"] == one["total_cycles"]);
}
