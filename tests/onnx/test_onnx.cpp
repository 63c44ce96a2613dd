// ONNX import (docs/onnx.md): the models the project builds with
// python3-onnx (models/onnx/, tools/gen_onnx_models.py) import, compile and
// run end to end; dims bind; shape subgraphs fold; decomposed ops fuse; and
// every kind of bad file is one exit-2 message with the reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "compiler/compiler.hpp"
#include "config/run_config.hpp"
#include "onnx/onnx_import.hpp"
#include "tasks/task.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kAx = kSrc + "/configs/chips/ax300.json";
std::string model(const std::string& name) { return kSrc + "/models/onnx/" + name + ".onnx"; }

std::uint64_t cycles(const json& stats) { return stats.at("total_cycles").get<std::uint64_t>(); }

::onnx::ModelProto load(const std::string& file) {
    ::onnx::ModelProto m;
    std::ifstream in(file, std::ios::binary);
    REQUIRE(m.ParseFromIstream(&in));
    return m;
}

std::string save(const TempDir& tmp, const std::string& name, const ::onnx::ModelProto& m) {
    std::string bytes;
    REQUIRE(m.SerializeToString(&bytes));
    return tmp.write(name, bytes);
}

// A model of the given node op types (each one input x [2,8] -> one output), chained.
::onnx::ModelProto chain_model(const std::vector<std::pair<std::string, std::string>>& ops, int opset = 13) {
    ::onnx::ModelProto m;
    m.set_ir_version(7);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    auto* g = m.mutable_graph();
    g->set_name("chain");
    auto* x = g->add_input();
    x->set_name("x");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const int d : {2, 8}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    std::string cur = "x";
    for (const auto& [op, name] : ops) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        n->add_input(cur);
        cur = name + "_out";
        n->add_output(cur);
    }
    auto* y = g->add_output();
    y->set_name(cur);
    y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const int d : {2, 8}) y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    return m;
}

}  // namespace

TEST_CASE("onnx: the bundled residual, depthwise and transformer blocks import, compile and run", "[onnx][e2e]") {
    TempDir tmp;
    const std::map<std::string, std::vector<std::string>> models = {
        {"residual_block", {}}, {"depthwise_block", {}}, {"transformer_block", {"workload.dims.seq=128"}},
        {"decode_block", {"workload.dims.past=255"}}};
    for (const auto& [name, sets] : models) {
        CAPTURE(name);
        const json s = run_for_stats(tmp, kA2, model(name), sets);
        CHECK(cycles(s) > 1000);
        CHECK(s.at("compile").at("tasks").get<int>() >= 10);
        // The graph file `npusim import` writes runs to exactly the same cycles.
        std::vector<std::string> args = {"import", model(name), "--out", tmp.path(name + ".json"), "-q"};
        for (const auto& set : sets) args.insert(args.end(), {"--set", set});
        const Result r = run_npusim(tmp, args);
        SHOW(r);
        REQUIRE(r.code == 0);
        CHECK(cycles(run_for_stats(tmp, kA2, tmp.path(name + ".json"))) == cycles(s));
    }
}

TEST_CASE("onnx: workload.batch binds the symbolic leading dim, workload.dims.seq the sequence", "[onnx][e2e]") {
    TempDir tmp;
    const std::uint64_t b1 = cycles(run_for_stats(tmp, kA2, model("residual_block")));
    const std::uint64_t b4 = cycles(run_for_stats(tmp, kA2, model("residual_block"), {"workload.batch=4"}));
    // Four images' work on the same cores: more than one image takes, less
    // than four times (batch 1 leaves cores idle).
    CHECK(2 * b4 > 3 * b1);
    CHECK(b4 < 4 * b1);
    const std::uint64_t s64 = cycles(run_for_stats(tmp, kA2, model("transformer_block"), {"workload.dims.seq=64"}));
    const std::uint64_t s512 = cycles(run_for_stats(tmp, kA2, model("transformer_block"), {"workload.dims.seq=512"}));
    CHECK(2 * s512 > 3 * s64);  // 8x the tokens; at 64 the cores are far from busy

    const Result r = run_npusim(tmp, {"import", model("transformer_block"), "--out", tmp.path("t.json"), "--set",
                                      "workload.dims.seq=96", "--set", "workload.batch=2", "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json g = read_json(tmp.path("t.json"));
    CHECK(g["tensors"]["x"]["shape"] == json::array({2, 96, 256}));
    CHECK(g["tensors"]["mask"]["shape"] == json::array({2, 1, 96, 96}));
}

TEST_CASE("onnx: a symbolic dim without a value, or a misspelt one, is exit 2 naming it", "[onnx][errors]") {
    TempDir tmp;
    Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", model("transformer_block")});
    CHECK(r.code == 2);
    CHECK(r.err.find("symbolic dimensions without a value: 'seq'") != std::string::npos);
    CHECK(r.err.find("workload.dims.NAME") != std::string::npos);
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", model("transformer_block"), "--set", "workload.dims.sq=64"});
    CHECK(r.code == 2);
    CHECK(r.err.find("unknown dimension 'sq'") != std::string::npos);
    CHECK(r.err.find("did you mean 'seq'") != std::string::npos);
    // The torch-style models have a symbolic batch; one whose batch is fixed refuses another.
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload",
                         "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx", "--set", "workload.batch=2"});
    CHECK(r.code == 2);
    CHECK(r.err.find("fixed leading dimension") != std::string::npos);
}

TEST_CASE("onnx: exporters' shape subgraphs fold into plain Reshape shapes, and GELU's Erf form fuses",
          "[onnx][import]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"import", model("transformer_block"), "--out", tmp.path("t.json"), "--set",
                                      "workload.dims.seq=64"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("41 ONNX nodes") != std::string::npos);
    const json g = read_json(tmp.path("t.json"));
    std::map<std::string, int> ops;
    for (const auto& n : g["nodes"]) ++ops[n["op"].get<std::string>()];
    // Shape, Gather, Unsqueeze and Concat of the head shapes are gone ...
    for (const char* folded : {"Shape", "Gather", "Unsqueeze", "Concat", "Erf", "Div"}) CHECK(ops.count(folded) == 0);
    // ... and the head split is a Reshape to a plain shape.
    bool split = false;
    for (const auto& n : g["nodes"])
        if (n["name"] == "q.split_heads") {
            split = true;
            CHECK(n["attrs"]["shape"] == json::array({1, 64, 4, 64}));
        }
    CHECK(split);
    CHECK(ops["GELU"] == 1);       // Div, Erf, Add, Mul, Mul
    CHECK(ops["LayerNorm"] == 2);  // LayerNormalization (opset 17)
    // Scores, scale (Div by sqrt(d)), mask, Softmax and context: one fused Attention.
    CHECK(ops["Attention"] == 1);
    CHECK(ops.count("BatchMatMul") == 0);
    CHECK(ops.count("Mul") == 0);
}

TEST_CASE("onnx: a decomposed LayerNorm and RMSNorm fuse into one op each", "[onnx][import]") {
    TempDir tmp;
    // x [2,8] -> ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div -> Mul gamma -> Add beta,
    // then Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div -> Mul gamma (RMSNorm), as exporters write them.
    ::onnx::ModelProto m = chain_model({});
    auto* g = m.mutable_graph();
    g->clear_output();
    const auto scalar = [&](const std::string& name, float v, std::vector<std::int64_t> dims = {}) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        std::int64_t n = 1;
        for (const auto d : dims) {
            t->add_dims(d);
            n *= d;
        }
        for (std::int64_t i = 0; i < n; ++i) t->add_float_data(v);
    };
    scalar("two", 2.0f);
    scalar("eps", 1e-5f);
    scalar("gamma", 1.0f, {8});
    scalar("beta", 0.0f, {8});
    const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const auto& i : in) n->add_input(i);
        n->add_output(out);
        if (op == "ReduceMean") {
            auto* a = n->add_attribute();
            a->set_name("axes");
            a->set_type(::onnx::AttributeProto::INTS);
            a->add_ints(-1);
        }
    };
    node("ReduceMean", {"x"}, "mean");
    node("Sub", {"x", "mean"}, "centred");
    node("Pow", {"centred", "two"}, "sq");
    node("ReduceMean", {"sq"}, "var");
    node("Add", {"var", "eps"}, "var_eps");
    node("Sqrt", {"var_eps"}, "std");
    node("Div", {"centred", "std"}, "normed");
    node("Mul", {"normed", "gamma"}, "scaled");
    node("Add", {"scaled", "beta"}, "ln");
    node("Pow", {"ln", "two"}, "rsq");
    node("ReduceMean", {"rsq"}, "rms_mean");
    node("Add", {"rms_mean", "eps"}, "rms_eps");
    node("Sqrt", {"rms_eps"}, "rms");
    node("Div", {"ln", "rms"}, "rms_normed");
    node("Mul", {"rms_normed", "gamma"}, "y");
    auto* y = g->add_output();
    y->set_name("y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const int d : {2, 8}) y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    const std::string file = save(tmp, "norms.onnx", m);
    const Result r = run_npusim(tmp, {"import", file, "--out", tmp.path("n.json"), "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json doc = read_json(tmp.path("n.json"));
    REQUIRE(doc["nodes"].size() == 2);
    CHECK(doc["nodes"][0]["op"] == "LayerNorm");
    CHECK(doc["nodes"][0]["inputs"] == json::array({"x", "gamma", "beta"}));
    CHECK(doc["nodes"][1]["op"] == "RMSNorm");
    CHECK(doc["nodes"][1]["inputs"] == json::array({"ln", "gamma"}));
    CHECK(cycles(run_for_stats(tmp, kAx, file)) > 0);
}

TEST_CASE("onnx: every unsupported op type is listed once with its count and node names", "[onnx][errors]") {
    TempDir tmp;
    const std::string file =
        save(tmp, "m.onnx", chain_model({{"EyeLike", "h1"}, {"Relu", "r"}, {"EyeLike", "h2"}, {"LpNormalization", "lp"}}));
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", file});
    CHECK(r.code == 2);
    CHECK(r.err.find("m.onnx: 3 nodes cannot be mapped to npusim's ops: EyeLike x2 (h1, h2); LpNormalization x1 (lp)") !=
          std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
}

namespace {
// x (rank of `x_dims`) [-> Relu] -> `op` with a [4, 3, 3, 3] weight, opset 17,
// with extra int attributes.
::onnx::ModelProto window_model(const std::string& op, const std::vector<int>& x_dims, bool relu_first,
                                const std::vector<std::pair<std::string, std::vector<int>>>& attrs = {}) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* x = g->add_input();
    x->set_name("x");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const int d : x_dims) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    auto* y = g->add_output();
    y->set_name("y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (std::size_t i = 0; i < x_dims.size(); ++i)  // unknown until inferred
        y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("o" + std::to_string(i));
    std::string cur = "x";
    if (relu_first) {
        auto* r = g->add_node();
        r->set_op_type("Relu");
        r->set_name("relu");
        r->add_input("x");
        r->add_output("r");
        cur = "r";
    }
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("win");
    n->add_input(cur);
    if (op != "MaxPool") {
        auto* w = g->add_initializer();
        w->set_name("W");
        w->set_data_type(::onnx::TensorProto::FLOAT);
        for (const int d : {4, 3, 3, 3}) w->add_dims(d);
        for (int i = 0; i < 4 * 3 * 3 * 3; ++i) w->add_float_data(0.f);
        n->add_input("W");
    }
    n->add_output("y");
    for (const auto& [name, v] : attrs) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INTS);
        for (const int i : v) a->add_ints(i);
    }
    return m;
}
}  // namespace

// libonnx's Conv shape inference indexed a rank-3 input with a rank-4
// weight's window unchecked (SIGSEGV); npusim checks what it assumes first.
TEST_CASE("onnx: a convolution or pool whose weight or window does not fit its input is exit 2 naming both, not a crash",
          "[onnx][errors]") {
    TempDir tmp;
    const auto refuse = [&](const std::string& name, const ::onnx::ModelProto& m, const std::string& why) {
        const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", save(tmp, name, m)});
        CAPTURE(name, r.err);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Matchers::Contains(why) && Catch::Matchers::Contains(name));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    refuse("rank3.onnx", window_model("Conv", {1, 3, 10}, false),
           "node 'win' (Conv): input 'x' has rank 3 but weight 'W' rank 4: a 2-d convolution needs an input of rank 4");
    refuse("rank2.onnx", window_model("Conv", {1, 3}, false), "input 'x' has rank 2 but weight 'W' rank 4");
    refuse("transpose.onnx", window_model("ConvTranspose", {1, 4, 10}, false), "node 'win' (ConvTranspose): input 'x' has rank 3");
    // Known only by inference: libonnx checks the window npusim filled in from the weight.
    refuse("after_relu.onnx", window_model("Conv", {1, 3, 10}, true), "Conv (input rank 3, weight rank 4) x1 (win)");
    refuse("strides.onnx", window_model("Conv", {1, 3, 10, 10}, false, {{"strides", {1, 1, 1}}}),
           "node 'win' (Conv): attribute strides has 3 value(s); the 2-d weight 'W' needs 2");
    refuse("pads.onnx", window_model("Conv", {1, 3, 10, 10}, false, {{"pads", {1, 1}}}), "attribute pads has 2 value(s)");
    refuse("pool.onnx", window_model("MaxPool", {1, 3, 10, 10}, true, {{"kernel_shape", {3}}}),
           "MaxPool (attribute kernel_shape: 1 values for 2 spatial dims) x1 (win)");
    // The weight a graph input, as the fuzzer found it (no initializer).
    ::onnx::ModelProto as_input = window_model("Conv", {1, 5}, false);
    auto* g = as_input.mutable_graph();
    g->clear_initializer();
    auto* w = g->add_input();
    w->set_name("W");
    w->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const int d : {1, 82, 3, 3}) w->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    refuse("weight_input.onnx", as_input, "input 'x' has rank 2 but weight 'W' rank 4");
    // The same Conv on a rank-4 input runs.
    const json s = run_for_stats(tmp, kA2, save(tmp, "ok.onnx", window_model("Conv", {1, 3, 10, 10}, true)));
    CHECK(cycles(s) > 0);
}

TEST_CASE("onnx: non-ONNX, truncated, unsupported-opset and missing-external-data files are exit 2 with the reason",
          "[onnx][errors]") {
    TempDir tmp;
    const auto refuse = [&](const std::string& file, const std::string& why) {
        const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", file});
        CAPTURE(file, r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find(why) != std::string::npos);
        CHECK(r.err.find(file) != std::string::npos);
    };
    refuse(tmp.write("graph.onnx", slurp(kSrc + "/models/convbnrelu.json")), "not an ONNX model");
    const std::string whole = slurp(model("residual_block"));
    refuse(tmp.write("half.onnx", whole.substr(0, whole.size() / 2)), "not an ONNX model");
    refuse(tmp.write("empty.onnx", ""), "empty file");
    refuse(save(tmp, "new.onnx", chain_model({{"Relu", "r"}}, 18)), "opset 18 is not supported (supported: 11 to 17, 1 to 10 converted to 11)");
    refuse(tmp.path("missing.onnx"), "no such file");

    // Weights moved to a file next to the model: found there, and missing once it is gone.
    ::onnx::ModelProto m = load(model("residual_block"));
    std::string data;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
        if (t.raw_data().size() < 1024) continue;
        const std::size_t offset = data.size();
        data += t.raw_data();
        t.clear_raw_data();
        t.set_data_location(::onnx::TensorProto::EXTERNAL);
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"location", "weights.bin"}, {"offset", std::to_string(offset)}, {"length", std::to_string(data.size() - offset)}}) {
            auto* e = t.add_external_data();
            e->set_key(k);
            e->set_value(v);
        }
    }
    REQUIRE(data.size() > 100000);
    const std::string ext = save(tmp, "ext/residual.onnx", m);
    tmp.write("ext/weights.bin", data);
    CHECK(cycles(run_for_stats(tmp, kA2, ext)) == cycles(run_for_stats(tmp, kA2, model("residual_block"))));
    tmp.write("ext/weights.bin", data.substr(0, data.size() / 2));
    refuse(ext, "truncated?");
    std::filesystem::remove(tmp.path("ext/weights.bin"));
    refuse(ext, "external data file 'weights.bin' not found");
}

TEST_CASE("onnx: an initializer holding fewer bytes or values than its shape is exit 2 naming it", "[onnx][errors]") {
    TempDir tmp;
    ::onnx::ModelProto m = load(model("residual_block"));
    ::onnx::TensorProto* w = nullptr;
    for (auto& t : *m.mutable_graph()->mutable_initializer())
        if (!w && t.raw_data().size() >= 1024) w = &t;
    REQUIRE(w != nullptr);
    const std::string name = w->name();
    const std::size_t bytes = w->raw_data().size();
    w->mutable_raw_data()->resize(bytes - 4);
    Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", save(tmp, "short.onnx", m)});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("short.onnx: initializer '" + name + "'") &&
                          Catch::Matchers::Contains(fmt::format("needs {} bytes of raw data, it holds {}", bytes, bytes - 4)));
    // The same weight as typed values, one short.
    w->clear_raw_data();
    for (std::size_t i = 0; i + 1 < bytes / 4; ++i) w->add_float_data(0.f);
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", save(tmp, "few.onnx", m)});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains(fmt::format("needs {} values, it holds {}", bytes / 4, bytes / 4 - 1)));
}

TEST_CASE("onnx: docs/onnx.md is what npusim import --list-ops prints", "[onnx][docs]") {
    const std::string path = kSrc + "/docs/onnx.md";
    const std::string expected = npusim::onnx_import::onnx_reference();
    // The file goes on, after a marker, with the corpus section
    // tools/onnx_corpus.py --write-docs generates.
    const std::string marker = "\n<!-- Below this line: generated by tools/onnx_corpus.py --write-docs -->\n";
    std::string doc = slurp(path);
    const auto at = doc.find(marker);
    REQUIRE(at != std::string::npos);
    // Regenerate with: NPUSIM_UPDATE_DOCS=1 build/npusim_tests '[docs]'
    if (const char* update = std::getenv("NPUSIM_UPDATE_DOCS"); update && std::string(update) == "1") {
        doc = expected + doc.substr(at);
        std::ofstream(path, std::ios::binary) << doc;
    }
    CHECK(doc.substr(0, doc.find(marker)) == expected);
    for (const char* op : {"Conv", "Gemm", "MatMul", "Softmax", "LayerNormalization", "Clip", "Slice"})
        CHECK(expected.find(std::string("| `") + op + "` |") != std::string::npos);
}

TEST_CASE("onnx: placement on imported models as on bundled ones: no kernel of 8 or more tasks on fewer than half the "
          "cores it could use", "[onnx][placement]") {
    using namespace npusim;
    int checked = 0;
    for (const std::string chip : {"a2", "ax300"}) {
        for (const auto& [name, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
                 {"residual_block", {}}, {"depthwise_block", {"workload.batch=2"}},
                 {"transformer_block", {"workload.dims.seq=256"}}, {"decode_block", {"workload.dims.past=1023"}}}) {
            const RunConfig cfg = RunConfig::load(kSrc + "/configs/chips/" + chip + ".json", model(name), sets);
            const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
            std::map<std::pair<std::string, CoreType>, std::pair<int, std::set<int>>> use;
            for (const Task& t : r.stream.tasks) {
                auto& e = use[{r.stream.name(t.op), t.core_type}];
                ++e.first;
                e.second.insert(t.core);
            }
            for (const auto& [key, u] : use) {
                if (u.first < 8) continue;
                const int cores = key.second == CoreType::cube ? cfg.chip().cube.count : cfg.chip().vector.count;
                CAPTURE(chip, name, key.first, u.first, cores);
                CHECK(2 * static_cast<int>(u.second.size()) >= std::min(u.first, cores));
                ++checked;
            }
        }
    }
    CHECK(checked > 20);
}

TEST_CASE("onnx: a sweep takes an .onnx workload and varies its batch", "[onnx][study]") {
    TempDir tmp;
    const std::string study = tmp.write("study.json", json{{"name", "onnx_batch"}, {"chip", kA2},
                                                           {"workload", model("transformer_block")},
                                                           {"set", {{"workload.dims.seq", 128}}},
                                                           {"axes", {{"workload.batch", {1, 4}}}},
                                                           {"combine", "grid"},
                                                           {"metrics", {"total_cycles"}}}
                                                          .dump());
    const Result r = run_npusim(tmp, {"sweep", study, "--out", tmp.path("out"), "-j", "1"});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("2 points, 2 ok, 0 failed") != std::string::npos);
    const std::string csv = slurp(tmp.path("out/results.csv"));
    // Each point's cycles are what `npusim run` gives for that batch.
    for (const char* batch : {"workload.batch=1", "workload.batch=4"})
        CHECK(csv.find(std::to_string(cycles(run_for_stats(tmp, kA2, model("transformer_block"),
                                                           {"workload.dims.seq=128", batch})))) != std::string::npos);
}

TEST_CASE("onnx: an LLM decode step imports with its RMSNorms, SiLU and attention over the KV cache fused",
          "[onnx][import][llm]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"import", model("decode_block"), "--out", tmp.path("d.json"), "--set",
                                      "workload.dims.past=511", "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json g = read_json(tmp.path("d.json"));
    std::map<std::string, int> ops;
    std::map<std::string, json> by_name;
    for (const auto& n : g["nodes"]) {
        ++ops[n["op"].get<std::string>()];
        by_name[n["name"].get<std::string>()] = n;
    }
    CHECK(ops["RMSNorm"] == 2);  // Pow, ReduceMean, Add, Sqrt, Div, Mul each
    CHECK(by_name["attn_norm.mean"]["attrs"]["epsilon"].get<double>() == Approx(1e-6));
    CHECK(ops["SiLU"] == 1);
    CHECK(ops["Attention"] == 1);
    CHECK(ops.count("Softmax") == 0);
    // Rotary embeddings run as written (rotate-half: Slice, Neg, Concat, Mul, Add).
    CHECK(ops["Neg"] == 2);
    CHECK(ops["Slice"] == 4);
    // The cache update is a Concat of the past keys and the new one along the
    // sequence; the attention reads all past + 1 of them.
    CHECK(by_name["present_k"]["op"] == "Concat");
    CHECK(by_name["present_k"]["inputs"][0] == "past_k");
    CHECK(g["tensors"]["past_k"]["shape"] == json::array({1, 4, 511, 64}));
    CHECK(by_name["softmax.attention"]["inputs"][2] == "present_v");
    // A longer cache costs more: attention and the cache copy grow with it.
    const std::uint64_t short_cache = cycles(run_for_stats(tmp, kA2, model("decode_block"), {"workload.dims.past=255"}));
    const std::uint64_t long_cache = cycles(run_for_stats(tmp, kA2, model("decode_block"), {"workload.dims.past=4095"}));
    CHECK(long_cache > short_cache);
}

TEST_CASE("onnx: a MatMul by a shared 2-D weight takes the leading dims as rows, not as batches", "[onnx][import]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"import", model("transformer_block"), "--out", tmp.path("t.json"), "--set",
                                      "workload.dims.seq=64", "--set", "workload.batch=2", "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json g = read_json(tmp.path("t.json"));
    std::map<std::string, json> by_name;
    for (const auto& n : g["nodes"]) by_name[n["name"].get<std::string>()] = n;
    // [2,64,256] x [256,256]: one matmul of 128 rows, viewed back as [2,64,256].
    REQUIRE(by_name.count("q.matmul.rows"));
    CHECK(by_name["q.matmul.rows"]["attrs"]["shape"] == json::array({128, 256}));
    CHECK(by_name["q.matmul"]["op"] == "MatMul");
    CHECK(by_name["q.matmul"]["inputs"][0] == by_name["q.matmul.rows"]["outputs"][0]);
    CHECK(by_name["q.matmul.out"]["attrs"]["shape"] == json::array({2, 64, 256}));
    // Two images cost less than twice one: the rows fill the Cube's tiles.
    const std::uint64_t b1 = cycles(run_for_stats(tmp, kA2, model("transformer_block"), {"workload.dims.seq=64"}));
    const std::uint64_t b2 =
        cycles(run_for_stats(tmp, kA2, model("transformer_block"), {"workload.dims.seq=64", "workload.batch=2"}));
    CHECK(b2 < 2 * b1);
}
