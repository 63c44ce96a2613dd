// One test per class of bad input (docs/robustness.md): the binary is run on
// the input as a user would run it, and must end with the documented exit
// code and a message that names the place (file, line, key path, task, node).
// Classes test_cli.cpp already covers through the binary (malformed chip JSON,
// unknown keys, wrong chip types, a negative --set value, an event never
// signalled, a footprint larger than UB, missing files) are not repeated;
// docs/robustness.md names the test of every class.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kTileStream = kSrc + "/traces/convbnrelu_tile.jsonl";
const std::string kConvBnRelu = kSrc + "/models/convbnrelu.json";

// The run must end with `code` and one clean message holding every piece of
// `says` (file and place first): no crash, no internal error, no sanitizer report.
void expect(const Result& r, int code, const std::vector<std::string>& says) {
    INFO("exit " << r.code << " after " << r.seconds << " s\nstdout:\n" << r.out.substr(0, 2000) << "\nstderr:\n"
                 << r.err.substr(0, 4000));
    CHECK(r.code == code);
    CHECK_THAT(r.err, Contains("npusim"));
    CHECK_THAT(r.err, !Contains("internal error"));
    CHECK_THAT(r.err, !Contains("terminate called"));
    CHECK_THAT(r.err, !Contains("Sanitizer"));
    CHECK_THAT(r.err, !Contains("runtime error"));
    for (const auto& s : says) CHECK_THAT(r.err, Contains(s));
}

std::string task(const std::string& id, const std::string& stream, const std::string& params,
                 const std::string& wait = "[]", const std::string& signal = "[]") {
    return R"({"id":")" + id + R"(","core_type":"vector","kernel":"vector","stream":")" + stream + R"(","wait":)" + wait +
           R"(,"signal":)" + signal + R"(,"params":)" + params + "}\n";
}
const std::string kOk = task("t0", "s0", R"({"bytes":4096})");

std::vector<std::string> run_stream(const std::string& stream) { return {"run", "--chip", kAx300, "--workload", stream}; }

// A small graph: x -> relu -> y, with nodes spliced in by the tests.
std::string graph(const std::string& tensors, const std::string& nodes, const std::string& outputs = R"(["y"])") {
    return R"({"kind": "graph", "name": "t", "dims": {"batch": 1}, "tensors": {)" + tensors + R"(}, "nodes": [)" + nodes +
           R"(], "outputs": )" + outputs + "}";
}
const std::string kX = R"("x": {"shape": ["batch", 16, 8, 8], "input": true})";

std::vector<std::string> compile_graph(const TempDir& tmp, const std::string& file) {
    return {"compile", "--chip", kAx300, "--workload", file, "--emit-tasks", tmp.path("out.jsonl")};
}

std::string study(const std::string& chip, const std::string& workload, const std::string& rest) {
    return R"({"chip": ")" + chip + R"(", "workload": ")" + workload + R"(", )" + rest + "}";
}

std::string golden(const std::string& chip, const std::string& workload, const std::string& metrics) {
    return R"({"chip": ")" + chip + R"(", "workload": ")" + workload + R"(", "metrics": )" + metrics + "}";
}

std::string deep(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

}  // namespace

TEST_CASE("bad input: malformed JSON in graphs, workload files, studies and goldens gives FILE:LINE:COL, exit 2",
          "[bad_inputs]") {
    TempDir tmp;
    SECTION("graph file") {
        const std::string g = tmp.write("g.json", "{\"kind\": \"graph\",\n  \"tensors\": {,}}");
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"g.json:2:", "invalid JSON"});
    }
    SECTION("workload file") {
        const std::string w = tmp.write("w.json", "{\"kind\": \"tasks\"\n \"file\": \"x.jsonl\"}");
        expect(run_npusim(tmp, run_stream(w)), 2, {"w.json:2:", "invalid JSON"});
    }
    SECTION("study file") {
        const std::string s = tmp.write("s.json", "{\"chip\": \"c.json\",\n\n  \"axes\": [}");
        expect(run_npusim(tmp, {"sweep", s, "--out", tmp.path("out")}), 2, {"s.json:3:", "invalid JSON"});
    }
    SECTION("golden file") {
        const std::string g = tmp.write("gold.json", "{\"chip\": \"c.json\" \"workload\": 1}");
        expect(run_npusim(tmp, {"check", g}), 2, {"gold.json:1:", "invalid JSON"});
    }
}

TEST_CASE("bad input: values of the wrong type name the key path, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("task parameter") {
        const std::string s = tmp.write("types.jsonl", kOk + task("t1", "s0", R"({"bytes":"4096"})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"types.jsonl:2", "task 't1'", "params.bytes", "expected an integer"});
    }
    SECTION("task wait list") {
        const std::string s = tmp.write("types.jsonl", kOk + task("t1", "s0", R"({"bytes":64})", R"("e1")"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"types.jsonl:2", "task 't1'", "wait", "expected an array"});
    }
    SECTION("--set value") {
        expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.cores.cube.count=four"}), 2,
               {"--set chip.cores.cube.count=four", "chip.cores.cube.count", "expected an integer"});
    }
    SECTION("graph attribute") {
        const std::string g = tmp.write(
            "g.json", graph(kX + R"(, "w": {"shape": [16, 16, 3, 3], "const": true})",
                            R"({"name": "conv", "op": "Conv2D", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"stride": "2"}})"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"g.json", "nodes[0] (conv)", "attrs.stride"});
    }
    SECTION("golden tolerance") {
        tmp.write("c.json", slurp(kAx300));
        tmp.write("s.jsonl", slurp(kTileStream));
        const std::string g =
            tmp.write("gold.json", golden("c.json", "s.jsonl", R"({"total_cycles": {"expected": 1, "tolerance": "none"}})"));
        expect(run_npusim(tmp, {"check", g}), 2, {"gold.json", "total_cycles", "tolerance", "expected a number"});
    }
}

TEST_CASE("bad input: out-of-range numbers name the key and the range, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("--set above the schema's maximum") {
        expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.cores.cube.count=5000"}), 2,
               {"--set chip.cores.cube.count=5000", "<= 4096", "5000"});
    }
    SECTION("matmul dimension 0") {
        const std::string s = tmp.write(
            "range.jsonl",
            R"({"id":"mm","core_type":"cube","kernel":"matmul","stream":"c","wait":[],"signal":[],"params":{"m":0,"n":16,"k":16}})"
            "\n");
        expect(run_npusim(tmp, run_stream(s)), 2, {"range.jsonl:1", "task 'mm'", "params.m", "expected an integer in [1,"});
    }
    SECTION("negative byte count") {
        const std::string s = tmp.write("range.jsonl", task("neg", "s0", R"({"bytes":-4096})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"range.jsonl:1", "task 'neg'", "params.bytes", "-4096"});
    }
    SECTION("workload.batch 0") {
        expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--set", "workload.batch=0"}), 2,
               {"--set workload.batch=0", "workload.batch", ">= 1"});
    }
    SECTION("graph dimension 0") {
        const std::string g = tmp.write("g.json", graph(R"("x": {"shape": [0, 4], "input": true})",
                                                        R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"g.json", "tensors.x.shape[0]", "expected an integer in [1,"});
    }
}

TEST_CASE("bad input: numbers that overflow are rejected with their place, never wrapped, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("1e400 in a chip file") {
        std::string chip = slurp(kAx300);
        chip.replace(chip.find("\"clock_ghz\": 1.0"), 16, "\"clock_ghz\": 1e400");
        const std::string c = tmp.write("big.json", chip);
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2, {"big.json:", "invalid JSON", "1e400"});
    }
    SECTION("1e400 in a task line") {
        const std::string s = tmp.write("big.jsonl", kOk + task("t1", "s0", R"({"bytes":1e400})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"big.jsonl:2", "invalid JSON", "1e400"});
    }
    SECTION("2^64 bytes") {
        const std::string s = tmp.write("big.jsonl", task("t1", "s0", R"({"bytes":18446744073709551616})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"big.jsonl:1", "params.bytes", "expected an integer in [1, 17592186044416]"});
    }
    SECTION("a priority of 2^64 - 5 is not read as -5") {
        const std::string s = tmp.write(
            "big.jsonl",
            R"({"id":"p","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"priority":18446744073709551611,"params":{"bytes":64}})"
            "\n");
        expect(run_npusim(tmp, run_stream(s)), 2, {"big.jsonl:1", "task 'p'", "priority", "18446744073709551611"});
    }
    SECTION("1e400 through --set") {
        expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.hbm.bandwidth_gbps=1e400"}), 2,
               {"--set chip.hbm.bandwidth_gbps=1e400", "chip.hbm.bandwidth_gbps", "expected a number"});
    }
}

TEST_CASE("bad input: NaN and Infinity are not numbers, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("NaN in a chip file") {
        std::string chip = slurp(kAx300);
        chip.replace(chip.find("\"clock_ghz\": 1.0"), 16, "\"clock_ghz\": NaN");
        const std::string c = tmp.write("nan.json", chip);
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2, {"nan.json:", "invalid JSON"});
    }
    SECTION("NaN, Infinity and -Infinity through --set") {
        for (const std::string v : {"NaN", "Infinity", "-Infinity", "nan", "inf"}) {
            const std::string arg = "chip.clock_ghz=" + v;
            expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", arg}), 2,
                   {"--set " + arg, "chip.clock_ghz", "expected a number"});
        }
    }
    SECTION("Infinity in a task line") {
        const std::string s = tmp.write("inf.jsonl", kOk + task("t1", "s0", R"({"bytes":64,"cycles_per_repeat":Infinity})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"inf.jsonl:2:", "invalid JSON"});
    }
}

TEST_CASE("bad input: deeply nested JSON is rejected at its position, without a crash or a hang, exit 2",
          "[bad_inputs]") {
    TempDir tmp;
    const std::string nest = deep(200000);
    SECTION("chip file") {
        const std::string c = tmp.write("deep.json", "{\"clock_ghz\": " + nest + "}");
        const Result r = run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream});
        expect(r, 2, {"deep.json:1:", "nested deeper than 64 levels"});
        CHECK(r.seconds < 20);
    }
    SECTION("task line") {
        const std::string s = tmp.write("deep.jsonl", kOk + "{\"id\": " + nest + "}\n");
        const Result r = run_npusim(tmp, run_stream(s));
        expect(r, 2, {"deep.jsonl:2:", "nested deeper than 64 levels"});
        CHECK(r.seconds < 20);
    }
    SECTION("graph file") {
        const std::string g = tmp.write("deep.json", "{\"kind\": \"graph\", \"notes\": " + nest + "}");
        const Result r = run_npusim(tmp, compile_graph(tmp, g));
        expect(r, 2, {"deep.json:1:", "nested deeper than 64 levels"});
        CHECK(r.seconds < 20);
    }
    SECTION("--set value") {
        const std::string arg = "workload.tiling=" + deep(10000);  // an argument is at most 128 KiB
        const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kConvBnRelu, "--set", arg});
        expect(r, 2, {"--set workload.tiling=", "nested deeper than 64 levels"});
        CHECK(r.seconds < 20);
    }
}

TEST_CASE("bad input: empty and binary files name the file, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("empty chip file") {
        const std::string c = tmp.write("empty.json", "  \n");
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2, {"empty.json", "empty chip file"});
    }
    SECTION("empty task stream") {
        const std::string s = tmp.write("empty.jsonl", "\n\n");
        expect(run_npusim(tmp, run_stream(s)), 2, {"empty.jsonl", "no tasks"});
    }
    SECTION("empty graph file") {
        const std::string g = tmp.write("empty_graph.json", "");
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"empty_graph.json", "empty"});
    }
    SECTION("binary chip file") {
        const std::string c = tmp.write("bin.json", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2, {"bin.json", "binary"});
    }
    SECTION("binary task stream") {
        std::string bytes;
        std::mt19937 rng(7);
        for (int i = 0; i < 4096; ++i) bytes += static_cast<char>(rng() & 0xff);
        const std::string s = tmp.write("bin.jsonl", bytes);
        expect(run_npusim(tmp, run_stream(s)), 2, {"bin.jsonl:", "invalid JSON"});
    }
    SECTION("a NUL character in a file name inside a chip file") {
        tmp.write("base.json", slurp(kAx300));
        const std::string c = tmp.write("child.json", R"({"extends": "base.json\u0000.txt"})");
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2,
               {"child.json: extends: a file name cannot contain a NUL character"});
    }
    SECTION("a task stream that never ends (/dev/zero)") {
        const std::string s = tmp.path("zero.jsonl");
        fs::create_symlink("/dev/zero", s);
        const Result r = run_npusim(tmp, run_stream(s));
        expect(r, 2, {"zero.jsonl:1", "longer than 16 MiB"});
        CHECK(r.seconds < 30);
    }
    SECTION("a chip file that never ends (/dev/zero), named by extends") {
        const std::string c = tmp.write("child.json", R"({"extends": "/dev/zero"})");
        const Result r = run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream});
        expect(r, 2, {"/dev/zero", "larger than 64 MiB", "extended by", "child.json"});
        CHECK(r.seconds < 30);
    }
}

TEST_CASE("bad input: duplicate ids and duplicate keys name both places, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("task id") {
        const std::string s = tmp.write("dup.jsonl", kOk + task("t1", "s0", R"({"bytes":64})") + task("t1", "s1", R"({"bytes":64})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"dup.jsonl:3", "task 't1'", "duplicate task id (first on line 2)"});
    }
    SECTION("event declaration") {
        const std::string s = tmp.write("dup.jsonl", "{\"event\":\"e\",\"count\":2}\n" + kOk + "{\"event\":\"e\",\"count\":3}\n");
        expect(run_npusim(tmp, run_stream(s)), 2, {"dup.jsonl:3", "event 'e' declared twice (first on line 1)"});
    }
    SECTION("node name") {
        const std::string g = tmp.write(
            "g.json", graph(kX, R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["h"]},
                                   {"name": "act", "op": "ReLU", "inputs": ["h"], "outputs": ["y"]})"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"g.json", "nodes[1] (act)", "duplicate node name 'act'"});
    }
    SECTION("a key repeated in a chip file object") {
        std::string chip = slurp(kAx300);
        chip.replace(chip.find("\"count\": 4,"), 11, "\"count\": 4, \"count\": 8,");
        const std::string c = tmp.write("dupkey.json", chip);
        expect(run_npusim(tmp, {"run", "--chip", c, "--workload", kTileStream}), 2,
               {"dupkey.json", "duplicate key 'count' in cores.cube"});
    }
    SECTION("a key repeated in a task line") {
        const std::string s = tmp.write("dupkey.jsonl", kOk + task("t1", "s0", R"({"bytes":64,"bytes":128})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"dupkey.jsonl:2:", "duplicate key 'bytes' in params"});
    }
}

TEST_CASE("bad input: cycles in graphs, event graphs and extends chains", "[bad_inputs]") {
    TempDir tmp;
    SECTION("graph cycle: exit 2 naming the nodes") {
        const std::string g = tmp.write("cyc.json", graph(kX, R"({"name": "a", "op": "Add", "inputs": ["x", "tb"], "outputs": ["ta"]},
                                                                {"name": "b", "op": "ReLU", "inputs": ["ta"], "outputs": ["tb"]},
                                                                {"name": "c", "op": "ReLU", "inputs": ["tb"], "outputs": ["y"]})"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"cyc.json", "nodes[0] (a)", "cycle through nodes a -> b -> a"});
    }
    SECTION("two tasks waiting on each other: deadlock, exit 3, naming a task and its event") {
        const std::string s =
            tmp.write("cyc.jsonl", task("ping", "s0", R"({"bytes":64})", R"(["from_pong"])", R"(["from_ping"])") +
                                       task("pong", "s1", R"({"bytes":64})", R"(["from_ping"])", R"(["from_pong"])"));
        expect(run_npusim(tmp, run_stream(s)), 3, {"deadlock", "ping", "from_pong"});
    }
    SECTION("extends cycle: exit 2 naming the chain") {
        const std::string a = tmp.write("a.json", R"({"extends": "b.json", "clock_ghz": 1})");
        tmp.write("b.json", R"({"extends": "a.json"})");
        expect(run_npusim(tmp, {"run", "--chip", a, "--workload", kTileStream}), 2, {"a.json", "extends cycle", "b.json"});
    }
}

TEST_CASE("bad input: dangling tensors name the node and the tensor, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("a node input nobody produces") {
        const std::string g = tmp.write("dangle.json", graph(kX, R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["h"]},
                                                                   {"name": "add1", "op": "Add", "inputs": ["h", "hh"], "outputs": ["y"]})"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"dangle.json", "nodes[1] (add1)", "dangling tensor 'hh'", "did you mean 'h'"});
    }
    SECTION("a graph output nobody produces") {
        const std::string g =
            tmp.write("dangle.json", graph(kX, R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})", R"(["z"])"));
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"dangle.json", "outputs[0]", "unknown tensor 'z'"});
    }
}

TEST_CASE("bad input: a counting event short of signals is a deadlock naming the event, exit 3", "[bad_inputs]") {
    TempDir tmp;
    const std::string s = tmp.write("short.jsonl", "{\"event\":\"three\",\"count\":3}\n" +
                                                      task("a", "s0", R"({"bytes":64})", "[]", R"(["three"])") +
                                                      task("b", "s1", R"({"bytes":64})", "[]", R"(["three"])") +
                                                      task("waiter", "s2", R"({"bytes":64})", R"(["three"])"));
    expect(run_npusim(tmp, run_stream(s)), 3, {"deadlock", "waiter", "three"});
}

TEST_CASE("bad input: tiles too large for their buffer name the task and both sizes, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("matmul operands resident in L1") {
        // ax300: L1 1024 KB; 512x512 + 512x512 fp16 = 1 MiB + 0 ... use 1024x1024.
        const std::string s = tmp.write(
            "tile.jsonl",
            R"({"id":"big_mm","core_type":"cube","kernel":"matmul","stream":"c","wait":[],"signal":[],"params":{"m":1024,"n":1024,"k":1024,"src":"l1"}})"
            "\n");
        expect(run_npusim(tmp, run_stream(s)), 2, {"tile.jsonl:1", "task 'big_mm'", "L1", "4194304"});
    }
    SECTION("vector input resident in UB") {
        const std::string s = tmp.write("tile.jsonl", task("big_v", "s0", R"({"bytes":1048576,"src":"ub"})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"tile.jsonl:1", "task 'big_v'", "UB", "1048576"});
    }
}

TEST_CASE("bad input: absurd sizes are refused before anything is allocated, exit 2", "[bad_inputs]") {
    TempDir tmp;
    SECTION("a 10^18-byte tensor") {
        const std::string g = tmp.write(
            "huge.json", graph(R"("x": {"shape": [1000000000, 1000000000], "input": true})",
                               R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})"));
        const Result r = run_npusim(tmp, compile_graph(tmp, g));
        expect(r, 2, {"huge.json", "tensors.x.shape", "more than 2^40 elements"});
        CHECK(r.seconds < 20);
    }
    SECTION("a 10^18-byte copy") {
        const std::string s = tmp.write("huge.jsonl", task("t", "s0", R"({"bytes":1000000000000000000})"));
        expect(run_npusim(tmp, run_stream(s)), 2, {"huge.jsonl:1", "params.bytes", "expected an integer in [1, 17592186044416]"});
    }
    SECTION("a graph that would compile to millions of tasks") {
        const std::string g = tmp.write(
            "many.json", graph(R"("x": {"shape": [1, 1, 1048576, 1048576], "input": true})",
                               R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})"));
        // 2.2 TB in and out: over the die's HBM first.
        expect(run_npusim(tmp, compile_graph(tmp, g)), 2, {"many.json", "a die needs 4398.05 GB of HBM", "workload.capacity=warn"});
        // Past the capacity on purpose: the task limit.
        std::vector<std::string> args = compile_graph(tmp, g);
        args.insert(args.end(), {"--set", "workload.capacity=warn"});
        const Result r = run_npusim(tmp, args);
        expect(r, 2, {"many.json", "kernel r", "more than the limit of 4000000"});
        CHECK(r.seconds < 20);
    }
    SECTION("a study of 16^8 points") {
        tmp.write("c.json", slurp(kAx300));
        tmp.write("s.jsonl", slurp(kTileStream));
        std::string axes;
        for (const char* key : {"chip.cores.cube.count", "chip.cores.vector.count", "chip.buffers.ub_kb", "chip.buffers.l1_kb",
                                "chip.hbm.bandwidth_gbps", "chip.l2.bandwidth_gbps", "chip.l2.latency_ns", "chip.hbm.latency_ns"})
            axes += std::string(axes.empty() ? "" : ", ") + "\"" + key + "\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]";
        const std::string s = tmp.write("huge_study.json", study("c.json", "s.jsonl", "\"axes\": {" + axes + "}"));
        const Result r = run_npusim(tmp, {"sweep", s, "--out", tmp.path("out")});
        expect(r, 2, {"huge_study.json", "16 x 16 x 16", "more than 100000 points"});
        CHECK(r.seconds < 20);
    }
    SECTION("a billion tasks") {
        const Result r = run_npusim(tmp, {"bench", "--tasks", "1000000000"});
        expect(r, 2, {"--tasks", "50000000"});
        CHECK(r.seconds < 20);
    }
    SECTION("an event counting a billion billion signals") {
        const std::string s = tmp.write("huge.jsonl", "{\"event\":\"e\",\"count\":1000000000000000000}\n" + kOk);
        expect(run_npusim(tmp, run_stream(s)), 2, {"huge.jsonl:1", "count", "expected an integer in [1, 1073741824]"});
    }
    SECTION("10^6 ranks") {
        const Result r =
            run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.interconnect.ranks=1000000"});
        expect(r, 2, {"--set chip.interconnect.ranks=1000000", "chip.interconnect.ranks", "<= 384"});
        CHECK(r.seconds < 20);
    }
    SECTION("10^18 KB of UB") {
        expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.buffers.ub_kb=1e18"}), 2,
               {"--set chip.buffers.ub_kb=1e18", "chip.buffers.ub_kb", "<= 1048576"});
    }
}

TEST_CASE("bad input: text that is not UTF-8 in --set is refused, exit 2", "[bad_inputs]") {
    TempDir tmp;
    expect(run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kTileStream, "--set", "chip.name=caf\xe9"}), 2,
           {"--set chip.name=caf", "not valid UTF-8"});
}
