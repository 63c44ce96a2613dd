// Configuration subsystem: bundled chips, extends, --set, every error class,
// and docs/configuration.md staying in step with the schema table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";

// Smallest valid chip file: only the required keys.
const char* kMinimalChip = R"({
  "clock_ghz": 1.5,
  "cores": {"cube": {"count": 2}, "vector": {"count": 4}},
  "buffers": {"ub_kb": 256},
  "hbm": {"bandwidth_gbps": 800}
})";

std::string load_error(const std::string& chip, const std::string& workload = "",
                       const std::vector<std::string>& sets = {}) {
    try {
        RunConfig::load(chip, workload, sets);
    } catch (const InputError& e) {
        return e.what();
    }
    FAIL("expected an InputError");
    return {};
}

}  // namespace

TEST_CASE("bundled ax300 chip resolves to the teaching chip", "[config]") {
    const RunConfig rc = RunConfig::load(kAx300, "stream.jsonl", {});
    const ChipParams& c = rc.chip();
    CHECK(c.name == "ax300");
    CHECK(c.layout == CoreLayout::coupled);
    CHECK(c.clock_ghz == 1.0);
    CHECK(c.cube.count == 4);
    CHECK(c.vector.count == 4);
    CHECK(c.scalar.count == 1);
    CHECK(c.buffers.ub_kb == 192);
    CHECK(c.vector.tile_kb == 8);
    CHECK(c.buffers.l1_kb == 1024);
    CHECK(c.buffers.l0a_kb == 64);
    CHECK(c.buffers.l0b_kb == 64);
    CHECK(c.buffers.l0c_kb == 256);
    CHECK(c.l2.size_mb == 32);
    CHECK(c.hbm.bandwidth_gbps == 400);
    CHECK(c.cube.shape_m == 16);
    CHECK(c.vector.repeat_bytes == 256);
    CHECK(c.ps_per_cycle() == 1000.0);

    CHECK(rc.workload_kind() == "tasks");
    CHECK(rc.workload_file() == "stream.jsonl");
    CHECK(rc.document()["workload"] == json{{"kind", "tasks"}, {"file", "stream.jsonl"}});
    CHECK(rc.document()["chip"]["notes"].is_array());
}

TEST_CASE("bundled a2 chip resolves to the split die", "[config]") {
    const ChipParams c = RunConfig::load(kA2, "x.jsonl", {}).chip();
    CHECK(c.name == "a2");
    CHECK(c.layout == CoreLayout::split);
    CHECK(c.clock_ghz == 1.85);
    CHECK(c.cube.count == 24);
    CHECK(c.vector.count == 48);
    CHECK(c.buffers.ub_kb == 192);
    CHECK(c.buffers.l1_kb == 512);
    CHECK(c.buffers.l0a_kb == 64);
    CHECK(c.buffers.l0b_kb == 64);
    CHECK(c.buffers.l0c_kb == 128);
    CHECK(c.l2.size_mb == 192);
    CHECK(c.l2.bandwidth_gbps == 5000);
    CHECK(c.hbm.bandwidth_gbps == 1600);
    CHECK(c.hbm.size_gb == 64);
    CHECK(c.cube.gm_bytes_per_cycle == 32);
    CHECK(c.cube.l1_to_l0_bytes_per_cycle == 512);
}

TEST_CASE("missing keys get the ChipParams defaults and the document is complete", "[config]") {
    TempDir t;
    const std::string chip = t.write("mini-chip.json", kMinimalChip);
    const RunConfig rc = RunConfig::load(chip, "", {});
    const ChipParams& c = rc.chip();
    const ChipParams d;
    CHECK(c.name == "mini-chip");  // default name: file stem
    CHECK(c.clock_ghz == 1.5);
    CHECK(c.cube.count == 2);
    CHECK(c.vector.count == 4);
    CHECK(c.buffers.ub_kb == 256);
    CHECK(c.hbm.bandwidth_gbps == 800);
    CHECK(c.layout == CoreLayout::split);
    CHECK(c.cube.shape_k == d.cube.shape_k);
    CHECK(c.vector.tile_kb == d.vector.tile_kb);
    CHECK(c.l2.bandwidth_gbps == d.l2.bandwidth_gbps);
    CHECK(c.hbm.latency_ns == d.hbm.latency_ns);
    CHECK(c.scalar.dispatch_cycles == d.scalar.dispatch_cycles);

    // Every chip key of the schema is present in the echoed document.
    const json& doc = rc.document();
    for (const auto& k : config_keys()) {
        if (k.path.rfind("chip.", 0) != 0) continue;
        INFO(k.path);
        std::string ptr = "/" + k.path;
        for (auto& ch : ptr)
            if (ch == '.') ch = '/';
        CHECK(doc.contains(json::json_pointer(ptr)));
    }
    CHECK(doc["chip"]["layout"] == "split");
    CHECK(doc["chip"]["notes"] == json::array());
    CHECK(rc.workload_kind().empty());
}

TEST_CASE("extends deep-merges a chain of chip files", "[config]") {
    TempDir t;
    t.write("base.json", R"({
      "name": "base", "notes": ["base note 1", "base note 2"],
      "clock_ghz": 1.0,
      "cores": {"cube": {"count": 4, "shape_k": 32}, "vector": {"count": 8}},
      "buffers": {"ub_kb": 192, "l1_kb": 1024},
      "hbm": {"bandwidth_gbps": 1600, "latency_ns": 250}
    })");
    t.write("mid/mid.json", R"({
      "extends": "../base.json",
      "notes": ["mid note"],
      "cores": {"cube": {"count": 8}},
      "hbm": {"bandwidth_gbps": 3200}
    })");
    const std::string top = t.write("top/top.json", R"({
      "extends": "../mid/mid.json",
      "name": "top",
      "buffers": {"ub_kb": 256}
    })");

    const RunConfig rc = RunConfig::load(top, "", {});
    const ChipParams& c = rc.chip();
    CHECK(c.name == "top");
    CHECK(c.cube.count == 8);              // mid overrides base
    CHECK(c.cube.shape_k == 32);           // base survives the merge of "cube"
    CHECK(c.vector.count == 8);
    CHECK(c.buffers.ub_kb == 256);         // top overrides base
    CHECK(c.buffers.l1_kb == 1024);
    CHECK(c.hbm.bandwidth_gbps == 3200);
    CHECK(c.hbm.latency_ns == 250);
    CHECK(rc.document()["chip"]["notes"] == json::array({"mid note"}));  // lists are replaced
    CHECK_FALSE(rc.document()["chip"].contains("extends"));
}

TEST_CASE("extends cycles and missing bases are errors", "[config]") {
    TempDir t;
    const std::string a = t.write("a.json", R"({"extends": "b.json", "clock_ghz": 1})");
    t.write("b.json", R"({"extends": "a.json"})");
    const std::string msg = load_error(a);
    CHECK_THAT(msg, Contains("extends cycle"));
    CHECK_THAT(msg, Contains("a.json -> "));
    CHECK_THAT(msg, Contains("b.json -> "));

    const std::string self = t.write("self.json", R"({"extends": "self.json"})");
    CHECK_THAT(load_error(self), Contains("extends cycle"));

    const std::string orphan = t.write("orphan.json", R"({"extends": "nowhere.json"})");
    const std::string m2 = load_error(orphan);
    CHECK_THAT(m2, Contains("nowhere.json: cannot open chip file"));
    CHECK_THAT(m2, Contains("extended by"));

    const std::string bad = t.write("bad-extends.json", R"({"extends": 5})");
    CHECK_THAT(load_error(bad), Contains("extends: expected a file name"));
}

TEST_CASE("set overrides change numbers strings enums and groups in order", "[config]") {
    const RunConfig rc = RunConfig::load(kA2, "t.jsonl",
                                         {"chip.hbm.bandwidth_gbps=3200", "chip.cores.cube.count=8", "chip.name=what-if",
                                          "chip.layout=coupled", "chip.buffers.ub_kb=256", "chip.buffers.ub_kb=384",
                                          "chip.l2={\"latency_ns\": 50}", "chip.notes=\"one note\"",
                                          "workload.file=other.jsonl"});
    const ChipParams& c = rc.chip();
    CHECK(c.hbm.bandwidth_gbps == 3200);
    CHECK(c.cube.count == 8);
    CHECK(c.name == "what-if");
    CHECK(c.layout == CoreLayout::coupled);
    CHECK(c.buffers.ub_kb == 384);         // last --set wins
    CHECK(c.l2.latency_ns == 50);          // an object merges into the group
    CHECK(c.l2.bandwidth_gbps == 5000);
    CHECK(rc.document()["chip"]["notes"] == "one note");
    CHECK(rc.document()["workload"]["file"] == "other.jsonl");

    // A string key takes the text as written even when it parses as JSON.
    CHECK(RunConfig::load(kA2, "", {"chip.name=123"}).chip().name == "123");
    CHECK(RunConfig::load(kA2, "", {"chip.name=true"}).chip().name == "true");
    // A whole number written as a float is an integer.
    CHECK(RunConfig::load(kA2, "", {"chip.cores.cube.count=4.0"}).document()["chip"]["cores"]["cube"]["count"].is_number_integer());
}

TEST_CASE("set override errors name the --set argument", "[config]") {
    CHECK_THAT(load_error(kA2, "", {"chip.hbm.bandwdth_gbps=800"}),
               Equals("--set chip.hbm.bandwdth_gbps=800: unknown key 'bandwdth_gbps' in chip.hbm (did you mean "
                      "'bandwidth_gbps'?)"));
    CHECK_THAT(load_error(kA2, "", {"chip.hmb.bandwidth_gbps=800"}),
               Contains("unknown key 'hmb' in chip (did you mean 'hbm'?)"));
    CHECK_THAT(load_error(kA2, "", {"chip.hbm.bandwidth_gbps"}), Contains("expected PATH=VALUE"));
    CHECK_THAT(load_error(kA2, "", {"=5"}), Contains("expected PATH=VALUE"));
    CHECK_THAT(load_error(kA2, "", {"chp.hbm.bandwidth_gbps=1"}),
               Contains("path must start with 'chip.' or 'workload.' (did you mean 'chip'?)"));
    CHECK_THAT(load_error(kA2, "", {"chip..hbm=1"}), Contains("empty key name"));
    CHECK_THAT(load_error(kA2, "", {"chip.hbm.bandwidth_gbps.x=1"}), Contains("is a single value, not a group"));
    CHECK_THAT(load_error(kA2, "", {"chip.hbm.bandwidth_gbps=fast"}),
               Equals("--set chip.hbm.bandwidth_gbps=fast: chip.hbm.bandwidth_gbps: expected a number (GB/s), got "
                      "string \"fast\""));
    CHECK_THAT(load_error(kA2, "", {"chip.clock_ghz=true"}),
               Equals("--set chip.clock_ghz=true: chip.clock_ghz: expected a number (GHz), got boolean true"));
    CHECK_THAT(load_error(kA2, "", {"chip.hbm.bandwidth_gbps=-5"}),
               Contains("--set chip.hbm.bandwidth_gbps=-5: chip.hbm.bandwidth_gbps: expected a number > 0 (GB/s), got -5"));
    CHECK_THAT(load_error(kA2, "", {"chip.layout=fused"}),
               Contains("chip.layout: expected one of 'coupled', 'split', got string \"fused\""));
    // Workload keys depend on the workload kind; without a workload there are none but "kind".
    CHECK_THAT(load_error(kA2, "", {"workload.file=x.jsonl"}), Contains("unknown key 'file' in workload"));
    CHECK_THAT(load_error(kA2, "t.jsonl", {"workload.kind=grahp"}),
               Contains("--set workload.kind=grahp: workload kind 'grahp' is not supported yet"));
    CHECK_THAT(load_error(kA2, "t.jsonl", {"workload.kind=grahp"}), Contains("did you mean 'graph'?"));
    // A value that runs on past an allowed one, or stops short of it.
    const std::string llama = kSrc + "/models/llm/llama3_8b.json";
    CHECK_THAT(load_error(kA2, llama, {"workload.phase=decoding"}), Contains("did you mean 'decode'?"));
    CHECK_THAT(load_error(kA2, llama, {"workload.capacity=warning"}), Contains("did you mean 'warn'?"));
    CHECK_THAT(load_error(kA2, llama, {"workload.phase=pre"}), Contains("did you mean 'prefill'?"));
    CHECK_THAT(load_error(kA2, llama, {"workload.quant=fp8"}), !Contains("did you mean"));
}

TEST_CASE("malformed chip files give FILE:LINE:COL or a clear one-line reason", "[config]") {
    TempDir t;
    // Missing comma: the parser stops at the '"' that opens "cores" (line 3, column 3).
    const std::string bad = t.write("bad.json", "{\n  \"clock_ghz\": 1.0\n  \"cores\": {}\n}\n");
    const std::string msg = load_error(bad);
    CHECK_THAT(msg, Contains(bad + ":3:3: invalid JSON: "));
    CHECK(msg.find('\n') == std::string::npos);

    const std::string trunc = t.write("trunc.json", "{\"clock_ghz\": 1.0,\n");
    CHECK_THAT(load_error(trunc), Contains(trunc + ":2:1: invalid JSON: "));

    const std::string overflow = t.write("overflow.json", "{\n  \"clock_ghz\": 1e400\n}");
    CHECK_THAT(load_error(overflow), Contains(overflow + ":2:16: invalid JSON: number overflow"));

    CHECK_THAT(load_error(t.write("empty.json", "  \n")), Contains("empty.json: empty chip file"));
    CHECK_THAT(load_error(t.write("bin.json", std::string("\x7f" "ELF\0\0\x01", 7))),
               Contains("bin.json: not a JSON text file (binary data at byte 5)"));
    CHECK_THAT(load_error(t.write("list.json", "[1, 2]")),
               Contains("list.json:1:1: expected a JSON object at the top level of the chip file, got a list"));
    CHECK_THAT(load_error((t.dir / "absent.json").string()), Contains("absent.json: cannot open chip file"));
    CHECK_THAT(load_error(t.dir.string()), Contains("cannot open chip file (it is a directory)"));
}

TEST_CASE("schema errors in chip files name the file and the key path", "[config]") {
    TempDir t;
    const std::string chip = t.write("chip.json", kMinimalChip);
    auto with = [&](const std::string& name, const std::string& body) {
        return t.write(name, R"({"extends": "chip.json", )" + body + "}");
    };

    const std::string typo = with("typo.json", R"("hbm": {"bandwdth_gbps": 800})");
    CHECK_THAT(load_error(typo),
               Equals(typo + ": unknown key 'bandwdth_gbps' in chip.hbm (did you mean 'bandwidth_gbps'?)"));

    // A key with a newline in it is shown escaped: the error stays one line.
    const std::string newline = with("newline.json", R"("hbm": {"band\nwidth": 1})");
    CHECK_THAT(load_error(newline), Equals(newline + ": unknown key 'band\\nwidth' in chip.hbm"));

    const std::string top_typo = with("top-typo.json", R"("clock_gz": 2)");
    CHECK_THAT(load_error(top_typo), Contains("unknown key 'clock_gz' in chip (did you mean 'clock_ghz'?)"));

    const std::string wrong = with("wrong.json", R"("hbm": {"bandwidth_gbps": "fast"})");
    CHECK_THAT(load_error(wrong),
               Equals(wrong + ": chip.hbm.bandwidth_gbps: expected a number (GB/s), got string \"fast\""));

    const std::string neg = with("neg.json", R"("hbm": {"bandwidth_gbps": -5})");
    CHECK_THAT(load_error(neg), Equals(neg + ": chip.hbm.bandwidth_gbps: expected a number > 0 (GB/s), got -5"));

    const std::string frac = with("frac.json", R"("cores": {"cube": {"count": 1.5}})");
    CHECK_THAT(load_error(frac), Equals(frac + ": chip.cores.cube.count: expected an integer (cores), got 1.5"));

    const std::string huge = with("huge.json", R"("cores": {"vector": {"count": 100000}})");
    CHECK_THAT(load_error(huge),
               Contains("chip.cores.vector.count: expected an integer <= 4096 (cores), got 100000"));

    const std::string big_ub = with("big-ub.json", R"("buffers": {"ub_kb": 2000000})");
    CHECK_THAT(load_error(big_ub), Contains("chip.buffers.ub_kb: expected an integer <= 1048576 (KB)"));

    const std::string group = with("group.json", R"("hbm": 5)");
    CHECK_THAT(load_error(group), Contains("chip.hbm: expected an object (a group of keys), got number 5"));

    const std::string notes = with("notes.json", R"("notes": ["ok", 3])");
    CHECK_THAT(load_error(notes), Contains("chip.notes: expected a string or a list of strings, got a list"));

    const std::string layout = with("layout.json", R"("layout": "coupeld")");
    CHECK_THAT(load_error(layout), Contains("(did you mean 'coupled'?)"));

    // An error in a base file names the base file, not the one extending it.
    const std::string base = t.write("bad-base.json", R"({"clock_ghz": 1, "cores": {"cube": {"count": "four"}}})");
    const std::string child = t.write("child.json", R"({"extends": "bad-base.json"})");
    CHECK_THAT(load_error(child), Contains(base + ": chip.cores.cube.count: expected an integer (cores), got string"));
}

TEST_CASE("required keys must be present after extends", "[config]") {
    TempDir t;
    const std::string no_hbm = t.write("no-hbm.json", R"({
      "clock_ghz": 1.0, "cores": {"cube": {"count": 1}, "vector": {"count": 1}}, "buffers": {"ub_kb": 192}})");
    const std::string msg = load_error(no_hbm);
    CHECK_THAT(msg, Contains(no_hbm + ": missing required key chip.hbm.bandwidth_gbps"));
    CHECK_THAT(msg, Contains("GB/s"));

    const std::string no_clock = t.write("no-clock.json", R"({
      "cores": {"cube": {"count": 1}, "vector": {"count": 1}}, "buffers": {"ub_kb": 192}, "hbm": {"bandwidth_gbps": 1}})");
    CHECK_THAT(load_error(no_clock), Contains("missing required key chip.clock_ghz"));

    // Supplied by a base file: fine.
    t.write("base.json", R"({"hbm": {"bandwidth_gbps": 100}})");
    const std::string ok = t.write("ok.json", R"({"extends": "base.json",
      "clock_ghz": 1.0, "cores": {"cube": {"count": 1}, "vector": {"count": 1}}, "buffers": {"ub_kb": 192}})");
    CHECK(RunConfig::load(ok, "", {}).chip().hbm.bandwidth_gbps == 100);
}

TEST_CASE("cross-key checks name both keys", "[config]") {
    const std::string m = load_error(kAx300, "", {"chip.buffers.ub_kb=8"});
    CHECK_THAT(m, Contains("--set chip.buffers.ub_kb=8: "));
    CHECK_THAT(m, Contains("chip.cores.vector.tile_kb = 8 KB"));
    CHECK_THAT(m, Contains("chip.buffers.ub_kb = 8 KB"));
    // Exactly fitting (2 x 8 KB in 16 KB) is fine.
    CHECK(RunConfig::load(kAx300, "", {"chip.buffers.ub_kb=16"}).chip().buffers.ub_kb == 16);

    const std::string none = load_error(kA2, "", {"chip.cores.cube.count=0", "chip.cores.vector.count=0"});
    CHECK_THAT(none, Contains("at least one core"));
    CHECK_THAT(none, Contains("--set chip.cores.vector.count=0"));

    CHECK_THAT(load_error(kA2, "", {"chip.cores.vector.repeat_bytes=0"}),
               Contains("chip.cores.vector.repeat_bytes: expected an integer >= 1 (B), got 0"));
}

TEST_CASE("workload files: .jsonl streams and .json documents and their errors", "[config]") {
    TempDir t;
    const std::string tasks = t.write("wl/tasks.json", R"({"kind": "tasks", "file": "stream.jsonl"})");
    const RunConfig rc = RunConfig::load(kA2, tasks, {});
    CHECK(rc.workload_kind() == "tasks");
    CHECK(rc.workload_file() == tasks);
    CHECK(rc.document()["workload"]["file"] == (t.dir / "wl" / "stream.jsonl").string());

    const std::string other = t.write("other.json", R"({"kind": "kernel", "nodes": []})");
    CHECK_THAT(load_error(kA2, other), Contains(other + ": workload kind 'kernel' is not supported yet"));

    // A graph file's own "workload" object gives per-model defaults; --set wins.
    const std::string graph = t.write("graph.json", R"({"kind": "graph", "workload": {"sync": "op"}, "nodes": []})");
    const RunConfig g = RunConfig::load(kA2, graph, {"workload.batch=4", "workload.dims.seq_len=256"});
    CHECK(g.workload_kind() == "graph");
    CHECK(g.document()["workload"]["sync"] == "op");
    CHECK(g.document()["workload"]["batch"] == 4);
    CHECK(g.document()["workload"]["dims"]["seq_len"] == 256);
    CHECK(g.document()["workload"]["passes"]["fold_bn"] == true);
    CHECK_THAT(load_error(kA2, graph, {"workload.sync=tiles"}), Contains("did you mean 'tile'?"));

    const std::string nokind = t.write("nokind.json", R"({"file": "x.jsonl"})");
    CHECK_THAT(load_error(kA2, nokind), Contains(nokind + ": missing required key workload.kind"));

    const std::string numkind = t.write("numkind.json", R"({"kind": 3})");
    CHECK_THAT(load_error(kA2, numkind), Contains("workload.kind: expected a string, got number 3"));

    const std::string extra = t.write("extra.json", R"({"kind": "tasks", "file": "s.jsonl", "fiel": 1})");
    CHECK_THAT(load_error(kA2, extra), Contains(extra + ": unknown key 'fiel' in workload (did you mean 'file'?)"));

    const std::string nofile = t.write("nofile.json", R"({"kind": "tasks"})");
    CHECK_THAT(load_error(kA2, nofile), Contains(nofile + ": missing required key workload.file"));

    const std::string broken = t.write("broken.json", "{\"kind\": }");
    CHECK_THAT(load_error(kA2, broken), Contains(broken + ":1:10: invalid JSON: value - unexpected '}'"));

    CHECK_THAT(load_error(kA2, (t.dir / "none.json").string()), Contains("cannot open workload file"));
    CHECK_THAT(load_error(kA2, "stream.txt"), Contains("stream.txt: unknown workload file type"));
}

TEST_CASE("dump is the resolved document as pretty deterministic JSON", "[config]") {
    const RunConfig a = RunConfig::load(kAx300, "s.jsonl", {"chip.hbm.bandwidth_gbps=800"});
    const RunConfig b = RunConfig::load(kAx300, "s.jsonl", {"chip.hbm.bandwidth_gbps=800"});
    CHECK(a.dump() == b.dump());
    CHECK(json::parse(a.dump()) == a.document());
    CHECK_THAT(a.dump(), Contains("\n  \"chip\": {\n    \"buffers\""));
    CHECK(a.document()["chip"]["hbm"]["bandwidth_gbps"] == 800);
}

TEST_CASE("schema table is consistent", "[config]") {
    for (const auto& k : config_keys()) {
        INFO(k.path);
        CHECK_FALSE(k.meaning.empty());
        CHECK((k.path.rfind("chip.", 0) == 0 || k.path.rfind("workload.", 0) == 0));
        if (k.path.rfind("chip.", 0) == 0 && k.path != "chip.notes") CHECK(k.apply);
        CHECK((k.required || !k.default_value.is_null()));
        // Every key appears in exactly one section of the reference.
        int sections = 0;
        for (const auto& s : config_sections())
            if (k.path.substr(0, k.path.rfind('.')) == s.path &&
                (s.workload_kind.empty() || key_applies(k, s.workload_kind)))
                ++sections;
        CHECK(sections >= 1);
    }
}

TEST_CASE("docs/configuration.md matches the schema table", "[config][docs]") {
    const std::string path = kSrc + "/docs/configuration.md";
    const std::string expected = configuration_reference_markdown();
    // Regenerate with: NPUSIM_UPDATE_DOCS=1 build/npusim_tests '[docs]'
    if (const char* update = std::getenv("NPUSIM_UPDATE_DOCS"); update && std::string(update) == "1") {
        std::ofstream(path, std::ios::binary) << expected;
    }
    CHECK(slurp(path) == expected);
}

TEST_CASE("config: an unknown key's did-you-mean names the key with its unit or the graph's dimension", "[config][errors]") {
    const std::string bert = kSrc + "/models/bert_layer.json";
    const auto message = [&](const std::string& set) {
        try {
            RunConfig::load(kA2, bert, {set});
        } catch (const npusim::InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(message("chip.hbm.bandwidth=3200"), Contains("unknown key 'bandwidth' in chip.hbm (did you mean 'bandwidth_gbps'?)"));
    CHECK_THAT(message("chip.hbm.bandwith_gbps=3200"), Contains("(did you mean 'bandwidth_gbps'?)"));
    CHECK_THAT(message("workload.seq_len=256"),
               Contains("unknown key 'seq_len' in workload (did you mean 'workload.dims.seq_len', a dimension of the graph?)"));
    CHECK(RunConfig::load(kA2, bert, {"workload.dims.seq_len=256"}).workload().graph.dims.at("seq_len") == 256);
}

TEST_CASE("config: config-reference takes --help and a key prefix", "[config][cli]") {
    npusim::test::TempDir tmp;
    auto r = npusim::test::run_npusim(tmp, {"config-reference", "--help"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("usage: npusim config-reference [PREFIX]"));
    r = npusim::test::run_npusim(tmp, {"config-reference", "chip.hbm"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("| `chip.hbm.size_gb` |") && Contains("## `chip.hbm`"));
    CHECK_THAT(r.out, !Contains("chip.l2.") && !Contains("workload."));
    r = npusim::test::run_npusim(tmp, {"config-reference", "chip.hbmm"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("no key begins with 'chip.hbmm' (did you mean 'chip.hbm'?)"));
}
