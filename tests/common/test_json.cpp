// The one JSON file reader (common/json_file.hpp) and the one workload-kind
// table (config/workload_kind.hpp): every syntax error is one line
// FILE:LINE:COL: what was expected, whichever kind of file it is in.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_file.hpp"
#include "compiler/graph_reader.hpp"
#include "config/run_config.hpp"
#include "config/schema.hpp"
#include "config/workload_kind.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kTileStream = kSrc + "/traces/convbnrelu_tile.jsonl";
const std::string kConvBnRelu = kSrc + "/models/convbnrelu.json";

// The message read_json_file<Json> throws for `text` (with `spec`), or "".
template <class Json = json>
std::string error_of(const TempDir& tmp, const std::string& text, const JsonFileSpec& spec = {}) {
    const std::string f = tmp.write("f.json", text);
    try {
        (void)read_json_file<Json>(f, spec);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        REQUIRE(msg.compare(0, f.size(), f) == 0);  // the file comes first
        return msg.substr(f.size());
    }
    return "";
}

std::string line_error(const std::string& text, std::size_t line) {
    try {
        (void)parse_json_line(text, "t.jsonl", line);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("json file: a repeated key is rejected at its LINE:COL with the path of its object", "[json]") {
    TempDir tmp;
    CHECK(error_of(tmp, "{\"a\": {\"b\": 1,\n  \"b\": 2}}") == ":2:3: duplicate key 'b' in a (each key may appear once)");
    CHECK(error_of<ojson>(tmp, "{\"a\": {\"b\": 1,\n  \"b\": 2}}") ==
          ":2:3: duplicate key 'b' in a (each key may appear once)");
    CHECK(error_of(tmp, R"({"k": 1, "k": 1})") == ":1:10: duplicate key 'k' at the top level (each key may appear once)");
    // Inside a list the element index names the object; an escaped quote in
    // the key does not move the column off the key's opening quote.
    CHECK(error_of(tmp, R"({"l": [{"x": 1}, {"x\"y": 1, "x\"y": 2}]})") ==
          ":1:30: duplicate key 'x\"y' in l[1] (each key may appear once)");
    // The same key in two objects is no duplicate.
    CHECK(error_of(tmp, R"({"a": {"k": 1}, "b": {"k": 1}})").empty());
    // A key with control characters is shown escaped: the message stays one line.
    CHECK(error_of(tmp, R"({"a\nb": {"k\u0001": 1, "k\u0001": 2}})") ==
          ":1:25: duplicate key 'k\\x01' in a\\nb (each key may appear once)");
}

TEST_CASE("json file: a truncated file is an error at the end of the input", "[json]") {
    TempDir tmp;
    const std::string msg = error_of(tmp, "{\"a\": [1,\n 2");
    CHECK_THAT(msg, Contains(":2:3: invalid JSON: ") && Contains("unexpected end of input"));
    CHECK_THAT(error_of(tmp, "{\"a\": \"unterminated"), Contains(":1:20: invalid JSON: "));  // just past the end
}

TEST_CASE("json file: nesting and size over the limits of input_limits.hpp are refused", "[json]") {
    TempDir tmp;
    const auto nest = [](std::size_t n) { return "{\"a\": " + std::string(n - 1, '[') + std::string(n - 1, ']') + "}"; };
    CHECK(error_of(tmp, nest(kMaxJsonDepth)).empty());
    // Column 70: 6 for '{"a": ', then the 64th '[' (the 65th level).
    CHECK(error_of(tmp, nest(kMaxJsonDepth + 1)) == ":1:70: invalid JSON: nested deeper than 64 levels");

    JsonFileSpec small;
    small.max_bytes = 16;
    small.what = "chip file";
    CHECK(error_of(tmp, R"({"a": 123456789})", small).empty());  // exactly 16 bytes
    CHECK(error_of(tmp, R"({"a": 1234567890})", small) == ": larger than 16 bytes, which no chip file is");
    // A device has no size: the read itself is bounded.
    try {
        (void)read_json_file<json>("/dev/zero", small);
        FAIL("/dev/zero was read");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()) == "/dev/zero: larger than 16 bytes, which no chip file is");
    }
    CHECK(kMaxJsonFileBytes == std::size_t(64) << 20);
}

TEST_CASE("json file: a top level that is not an object where one is expected names its position", "[json]") {
    TempDir tmp;
    JsonFileSpec chip;
    chip.what = "chip file";
    CHECK(error_of(tmp, "\n  [1, 2]", chip) == ":2:3: expected a JSON object at the top level of the chip file, got a list");
    CHECK(error_of(tmp, "42", chip) == ":1:1: expected a JSON object at the top level of the chip file, got a number");
    JsonFileSpec any;
    any.object = false;
    CHECK(error_of(tmp, "[1, 2]", any).empty());
    // Problems of the whole file have no position.
    CHECK(error_of(tmp, " \n\t", chip) == ": empty chip file (expected a JSON object)");
    CHECK(error_of(tmp, std::string("{\"a\"\0}", 6), chip) == ": not a JSON text file (binary data at byte 5)");
    chip.note = " (extended by child.json)";
    CHECK(error_of(tmp, "[]", chip) == ":1:1: expected a JSON object at the top level of the chip file, got a list");
    try {
        (void)read_json_file<json>(tmp.path("absent.json"), chip);
        FAIL("absent.json was read");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), EndsWith("absent.json: cannot open chip file (extended by child.json)"));
    }
}

TEST_CASE("json file: a number that overflows is reported at the literal, not at a same text in a string", "[json]") {
    TempDir tmp;
    CHECK(error_of(tmp, "{\"s\": \"1e400\",\n \"b\": 1e400}") == ":2:7: invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("json line: positions are the line of the JSON Lines file and the column in it", "[json]") {
    CHECK(line_error(R"({"a": 1, "a": 2})", 7) == "t.jsonl:7:10: duplicate key 'a' at the top level (each key may appear once)");
    CHECK_THAT(line_error(R"({"a": 1,})", 3), Contains("t.jsonl:3:9: invalid JSON: "));
    CHECK(line_error("[1]", 2).empty());  // any value: the stream reader says what a line must be
    CHECK(line_error(std::string(65, '[') + std::string(65, ']'), 4) == "t.jsonl:4:65: invalid JSON: nested deeper than 64 levels");
}

TEST_CASE("json file: chip, workload, study, golden and graph files give the same FILE:LINE:COL through the binary",
          "[json]") {
    TempDir tmp;
    const auto expect_error = [&](const std::vector<std::string>& args, const std::string& says) {
        const Result r = run_npusim(tmp, args);
        SHOW(r);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(says));
    };
    const std::string dup = ":2:3: duplicate key 'chip' at the top level (each key may appear once)";
    const std::string chip = tmp.write("chip.json", "{\"name\": \"x\",\n  \"name\": \"y\"}");
    expect_error({"run", "--chip", chip, "--workload", kTileStream},
                 "chip.json:2:3: duplicate key 'name' at the top level (each key may appear once)");
    const std::string work = tmp.write("w.json", "{\"kind\": \"tasks\",\n  \"kind\": \"tasks\"}");
    expect_error({"run", "--chip", kAx300, "--workload", work},
                 "w.json:2:3: duplicate key 'kind' at the top level (each key may appear once)");
    const std::string study = tmp.write("s.json", "{\"chip\": \"" + kAx300 + "\",\n  \"chip\": 1}");
    expect_error({"sweep", study, "--out", tmp.path("out")}, "s.json" + dup);
    const std::string gold = tmp.write("gold.json", "{\"chip\": \"" + kAx300 + "\",\n  \"chip\": 1}");
    expect_error({"check", gold}, "gold.json" + dup);
    const std::string graph = tmp.write("g.json", "{\"kind\": \"graph\",\n  \"kind\": \"graph\"}");
    expect_error({"compile", "--chip", kAx300, "--workload", graph, "--emit-tasks", tmp.path("t.jsonl")},
                 "g.json:2:3: duplicate key 'kind' at the top level (each key may appear once)");
    // The graph reader itself (behind compile_workload) reads the same way.
    try {
        (void)compiler::read_graph(graph);
        FAIL("the graph was read");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), EndsWith("g.json:2:3: duplicate key 'kind' at the top level (each key may appear once)"));
    }
    // A top level that is not an object: same form in every file kind.
    const std::string list = tmp.write("list.json", "[]");
    expect_error({"run", "--chip", list, "--workload", kTileStream}, "list.json:1:1: expected a JSON object at the top level of the chip file, got a list");
    expect_error({"sweep", list, "--out", tmp.path("out2")}, "list.json:1:1: expected a JSON object at the top level of the study file, got a list");
    expect_error({"check", list}, "list.json:1:1: expected a JSON object at the top level of the golden file, got a list");
    expect_error({"compile", "--chip", kAx300, "--workload", list, "--emit-tasks", tmp.path("t.jsonl")},
                 "list.json:1:1: expected a JSON object at the top level of the workload file, got a list");
}

TEST_CASE("workload kind: one table decides the kind, from the file name or the document", "[json][config]") {
    // The schema's allowed values of workload.kind are the table's names.
    CHECK(find_key("workload.kind", "")->allowed == workload_kind_names());
    CHECK(workload_kinds() == workload_kind_names());
    for (const auto& name : workload_kind_names())
        CHECK(to_string(parse_workload_kind(json(name), "w.json")) == name);
    CHECK(std::string(to_string(WorkloadKind::none)).empty());

    CHECK(workload_kind_of_file_name("a/b.JSONL") == WorkloadKind::tasks);
    CHECK(workload_kind_of_file_name("model.json") == WorkloadKind::none);  // its "kind" decides
    CHECK(workload_kind_of_file_name("net.ONNX") == WorkloadKind::graph);   // imported (docs/onnx.md)
    CHECK_THROWS_WITH(workload_kind_of_file_name("model.yaml"),
                      "model.yaml: unknown workload file type (expected a .json workload, a .jsonl task stream or an "
                      ".onnx model)");
    CHECK_THROWS_WITH(parse_workload_kind(json("grap"), "w.json"),
                      "w.json: workload kind 'grap' is not supported yet (supported: tasks, graph, collective, llm) (did you mean "
                      "'graph'?)");
    CHECK_THROWS_WITH(parse_workload_kind(json(3), "w.json"), "w.json: workload.kind: expected a string, got number 3");

    CHECK(RunConfig::load(kAx300, kTileStream, {}).kind() == WorkloadKind::tasks);
    CHECK(RunConfig::load(kAx300, kConvBnRelu, {}).kind() == WorkloadKind::graph);
    CHECK(RunConfig::load(kAx300, "", {}).kind() == WorkloadKind::none);
}

TEST_CASE("workload kind: an unknown kind in a workload file gets a did-you-mean, exit 2", "[json]") {
    TempDir tmp;
    const std::string w = tmp.write("w.json", R"({"kind": "grpah"})");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", w});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("w.json: workload kind 'grpah' is not supported yet (supported: tasks, graph, collective, llm) "
                               "(did you mean 'graph'?)"));
}
