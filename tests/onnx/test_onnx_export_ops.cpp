// More ONNX ops real exports contain (docs/onnx.md): each mapped onto the
// compiler's ops as its definition says, checked on models built here node
// by node and on the torch exports in models/onnx/ (a GPT-2-style block
// with a fused QKV Split, a Llama-style block with RMSNorm, RoPE and
// grouped-query attention).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "onnx/onnx_import.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using json = nlohmann::json;
using TP = ::onnx::TensorProto;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";

// A one-graph model built node by node.
struct ModelBuilder {
    ::onnx::ModelProto m;
    ::onnx::GraphProto* g;

    explicit ModelBuilder(int opset, const std::string& domain2 = "") {
        m.set_ir_version(7);
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        if (!domain2.empty()) {
            auto* d = m.add_opset_import();
            d->set_domain(domain2);
            d->set_version(1);
        }
        g = m.mutable_graph();
        g->set_name("g");
    }
    static void type(::onnx::ValueInfoProto* v, const std::vector<std::int64_t>& shape, int elem) {
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto* s = t->mutable_shape();
        for (const auto d : shape) s->add_dim()->set_dim_value(d);
    }
    void input(const std::string& name, const std::vector<std::int64_t>& shape, int elem = TP::FLOAT) {
        auto* v = g->add_input();
        v->set_name(name);
        type(v, shape, elem);
    }
    void output(const std::string& name, int elem = TP::FLOAT) {
        auto* v = g->add_output();
        v->set_name(name);
        // The checker wants a shape; the importer infers it again.
        v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
        v->mutable_type()->mutable_tensor_type()->mutable_shape();
    }
    void ints(const std::string& name, const std::vector<std::int64_t>& values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(TP::INT64);
        t->add_dims(static_cast<std::int64_t>(values.size()));
        for (const auto v : values) t->add_int64_data(v);
    }
    void weight(const std::string& name, const std::vector<std::int64_t>& shape) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(TP::FLOAT);
        std::int64_t n = 1;
        for (const auto d : shape) {
            t->add_dims(d);
            n *= d;
        }
        for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.f);
    }
    ::onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                            const std::string& domain = "") {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(outs.at(0) + "_node");
        n->set_domain(domain);
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
        return n;
    }
    static void attr(::onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INTS);
        for (const auto x : v) a->add_ints(x);
    }
    static void attr(::onnx::NodeProto* n, const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    // The imported graph document.
    json import(const std::map<std::string, std::int64_t>& dims = {}) const {
        std::string bytes;
        REQUIRE(m.SerializeToString(&bytes));
        return json::parse(npusim::onnx_import::import_model_bytes(bytes, "built.onnx", ".", dims));
    }
    std::string save(const TempDir& tmp, const std::string& name) const {
        std::string bytes;
        REQUIRE(m.SerializeToString(&bytes));
        return tmp.write(name, bytes);
    }
};

std::vector<json> nodes_of(const json& g, const std::string& op) {
    std::vector<json> v;
    for (const auto& n : g["nodes"])
        if (n["op"] == op) v.push_back(n);
    return v;
}

std::map<std::string, int> op_counts(const json& g) {
    std::map<std::string, int> c;
    for (const auto& n : g["nodes"]) ++c[n["op"].get<std::string>()];
    return c;
}

}  // namespace

TEST_CASE("onnx export ops: Split in its attribute and input forms is one Slice per output at the right offsets", "[onnx][import]") {
    for (const int opset : {11, 13}) {
        CAPTURE(opset);
        ModelBuilder b(opset);
        b.input("x", {4, 12});
        std::vector<std::string> ins = {"x"};
        if (opset >= 13) {
            b.ints("sizes", {4, 8});
            ins.push_back("sizes");
        }
        auto* n = b.node("Split", ins, {"a", "c"});
        b.attr(n, "axis", 1);
        if (opset < 13) b.attr(n, "split", std::vector<std::int64_t>{4, 8});
        b.node("Relu", {"a"}, {"ra"});
        b.node("Relu", {"c"}, {"rc"});
        b.output("ra");
        b.output("rc");
        const json g = b.import();
        const auto slices = nodes_of(g, "Slice");
        REQUIRE(slices.size() == 2);
        CHECK(slices[0]["attrs"]["starts"] == json::array({0}));
        CHECK(slices[0]["attrs"]["ends"] == json::array({4}));
        CHECK(slices[1]["attrs"]["starts"] == json::array({4}));
        CHECK(slices[1]["attrs"]["ends"] == json::array({12}));
        CHECK(slices[1]["attrs"]["axes"] == json::array({1}));
    }
}

TEST_CASE("onnx export ops: Einsum contractions become one MatMul or BatchMatMul of the right M K N", "[onnx][import]") {
    struct Case {
        std::string eq;
        std::vector<std::int64_t> a, b, out;
        std::string mm;                       // the Cube op
        std::vector<std::int64_t> lhs, rhs;   // its operands' shapes: [batch,] M, K and [batch,] K, N
    };
    for (const Case& c : {Case{"ij,jk->ik", {16, 32}, {32, 24}, {16, 24}, "MatMul", {16, 32}, {32, 24}},
                          Case{"bhid,bhjd->bhij", {2, 4, 16, 32}, {2, 4, 24, 32}, {2, 4, 16, 24}, "BatchMatMul", {8, 16, 32}, {8, 32, 24}},
                          Case{"...id,...jd", {2, 4, 16, 32}, {2, 4, 24, 32}, {2, 4, 16, 24}, "BatchMatMul", {8, 16, 32}, {8, 32, 24}},
                          Case{"bij,jk->bik", {3, 16, 32}, {32, 8}, {3, 16, 8}, "MatMul", {48, 32}, {32, 8}},
                          // Implicit form with capital letters: the output is "MN".
                          Case{"Mk,kN", {16, 32}, {32, 24}, {16, 24}, "MatMul", {16, 32}, {32, 24}}}) {
        CAPTURE(c.eq);
        ModelBuilder b(13);
        b.input("a", c.a);
        b.input("b", c.b);
        b.attr(b.node("Einsum", {"a", "b"}, {"y"}), "equation", c.eq);
        b.node("Relu", {"y"}, {"r"});  // the output's shape flows on
        b.output("r");
        const json g = b.import();
        const auto mm = nodes_of(g, c.mm);
        REQUIRE(mm.size() == 1);
        // An operand's shape: a graph input's, or the Reshape's that lays it out.
        const auto shape_of = [&](const std::string& t) {
            json shape;
            if (g["tensors"].contains(t)) shape = g["tensors"][t]["shape"];
            for (const auto& r : nodes_of(g, "Reshape"))
                if (r["outputs"][0] == t) shape = r["attrs"]["shape"];
            return shape;
        };
        CHECK(shape_of(mm[0]["inputs"][0]) == json(c.lhs));
        CHECK(shape_of(mm[0]["inputs"][1]) == json(c.rhs));
        // The Relu after it reads the output's shape.
        CHECK(shape_of(nodes_of(g, "Reshape").back()["outputs"][0]) == json(c.out));
    }
    // One operand: a transpose, and a sum over a letter the output drops.
    ModelBuilder b(13);
    b.input("a", {8, 16});
    b.attr(b.node("Einsum", {"a"}, {"t"}), "equation", "ij->ji");
    b.attr(b.node("Einsum", {"t"}, {"s"}), "equation", "ji->j");
    b.output("s");
    const auto ops = op_counts(b.import());
    CHECK(ops.at("Transpose") == 1);
    CHECK(ops.at("ReduceSum") == 1);
}

TEST_CASE("onnx export ops: a model of opset 9 is converted to opset 11 and runs as its opset 13 twin", "[onnx][e2e]") {
    TempDir tmp;
    json stats[2];
    int i = 0;
    for (const int opset : {9, 13}) {
        ModelBuilder b(opset);
        b.input("x", {8, 256, 256});
        b.node("Relu", {"x"}, {"y"});
        b.node("Sigmoid", {"y"}, {"z"});
        b.output("z");
        stats[i++] = run_for_stats(tmp, kA2, b.save(tmp, "m" + std::to_string(opset) + ".onnx"));
    }
    CHECK(stats[0]["total_cycles"] == stats[1]["total_cycles"]);
    CHECK(stats[0]["total_cycles"].get<double>() > 0);
}

TEST_CASE("onnx export ops: Clip by scalar inputs given at run time is a Max and a Min", "[onnx][import]") {
    ModelBuilder b(13);
    b.input("x", {4, 64});
    b.input("lo", {});
    b.input("hi", {});
    b.node("Clip", {"x", "lo", "hi"}, {"y"});
    b.output("y");
    const json g = b.import();
    const auto ops = op_counts(g);
    CHECK(ops.at("Max") == 1);
    CHECK(ops.at("Min") == 1);
    CHECK(g["tensors"]["lo"]["shape"] == json::array({1}));
}

TEST_CASE("onnx export ops: a Cast between simulated dtypes is a Cast that moves the bytes of both", "[onnx][e2e]") {
    TempDir tmp;
    double cycles[2];
    int i = 0;
    for (const std::int64_t rows : {1024, 2048}) {
        ModelBuilder b(13);
        b.input("x", {rows, 4096});
        b.attr(b.node("Cast", {"x"}, {"y"}), "to", static_cast<std::int64_t>(TP::INT8));
        b.output("y", TP::INT8);
        const json g = b.import();
        REQUIRE(nodes_of(g, "Cast").size() == 1);
        CHECK(nodes_of(g, "Cast")[0]["attrs"]["dtype"] == "int8");
        const json s = run_for_stats(tmp, kA2, b.save(tmp, "cast.onnx"));
        cycles[i++] = s["total_cycles"].get<double>();
    }
    // Twice the rows, about twice the time (a streaming pass).
    CHECK(cycles[1] / cycles[0] == Approx(2.0).margin(0.35));
}

TEST_CASE("onnx export ops: com.microsoft SkipLayerNormalization and FastGelu are LayerNorm and GELU with shapes that flow on",
          "[onnx][import]") {
    ModelBuilder b(13, "com.microsoft");
    b.input("x", {2, 16, 64});
    b.input("skip", {2, 16, 64});
    b.weight("gamma", {64});
    b.weight("beta", {64});
    b.weight("bias", {64});
    b.node("SkipLayerNormalization", {"x", "skip", "gamma", "beta"}, {"n"}, "com.microsoft");
    b.node("FastGelu", {"n", "bias"}, {"f"}, "com.microsoft");
    b.node("Relu", {"f"}, {"y"});
    b.output("y");
    const auto ops = op_counts(b.import());
    CHECK(ops.at("LayerNorm") == 1);
    CHECK(ops.at("GELU") == 1);
    CHECK(ops.at("ReLU") == 1);
    CHECK(ops.at("Add") == 2);  // the skip, the bias
}

TEST_CASE("onnx export ops: the torch-exported GPT-2 and Llama blocks run with Split and RMSNorm mapped", "[onnx][e2e]") {
    TempDir tmp;
    const std::map<std::string, std::int64_t> seq = {{"seq", 128}};
    const json gpt2 = json::parse(npusim::onnx_import::import_model(kSrc + "/models/onnx/gpt2_block.onnx", seq));
    const auto g_ops = op_counts(gpt2);
    CHECK(g_ops.at("Slice") >= 3);  // q, k, v out of the fused QKV Split
    CHECK(g_ops.at("Attention") == 1);
    CHECK(g_ops.at("GELU") == 1);
    const json llama = json::parse(npusim::onnx_import::import_model(kSrc + "/models/onnx/llama_block.onnx", seq));
    const auto l_ops = op_counts(llama);
    CHECK(l_ops.at("RMSNorm") == 2);
    CHECK(l_ops.at("SiLU") == 1);
    CHECK(l_ops.at("Attention") == 1);
    CHECK(l_ops.count("ReduceMean") == 0);  // no norm left unfused
    for (const char* m : {"gpt2_block", "llama_block"}) {
        CAPTURE(m);
        const json s = run_for_stats(tmp, kA2, kSrc + "/models/onnx/" + m + ".onnx", {"workload.dims.seq=128"});
        CHECK(s["total_cycles"].get<double>() > 0);
    }
    // Twice the sequence: more work, less than four times (attention is a part).
    const json s128 = run_for_stats(tmp, kA2, kSrc + "/models/onnx/llama_block.onnx", {"workload.dims.seq=128"});
    const json s256 = run_for_stats(tmp, kA2, kSrc + "/models/onnx/llama_block.onnx", {"workload.dims.seq=256"});
    const double r = s256["total_cycles"].get<double>() / s128["total_cycles"].get<double>();
    CHECK(r > 1.2);
    CHECK(r < 4.0);
}

TEST_CASE("onnx export ops: a graph cycle and a tensor over 2^40 elements are exit 2 naming the file and the node",
          "[onnx][errors]") {
    TempDir tmp;
    ModelBuilder cyc(13);
    cyc.input("x", {4, 8});
    cyc.node("Add", {"x", "b"}, {"a"});
    cyc.node("Relu", {"a"}, {"b"});
    cyc.output("b");
    Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", cyc.save(tmp, "cycle.onnx")});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("cycle.onnx: invalid ONNX model (onnx checker)") &&
                          Catch::Matchers::Contains("a_node"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

    ModelBuilder big(13);
    big.input("x", {1 << 21, 1 << 20});
    big.node("Relu", {"x"}, {"y"});
    big.output("y");
    r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", big.save(tmp, "big.onnx")});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("big.onnx") && Catch::Matchers::Contains("more than 2^40 elements"));
}

TEST_CASE("onnx export ops: DepthToSpace in both modes and GatherND move the bytes their definitions name", "[onnx][import]") {
    for (const std::string mode : {"DCR", "CRD"}) {
        CAPTURE(mode);
        ModelBuilder b(13);
        b.input("x", {1, 8, 3, 5});
        auto* n = b.node("DepthToSpace", {"x"}, {"y"});
        b.attr(n, "blocksize", std::int64_t{2});
        b.attr(n, "mode", mode);
        b.output("y");
        const json g = b.import();
        const auto t = nodes_of(g, "Transpose");
        REQUIRE(t.size() == 1);
        CHECK(t[0]["attrs"]["perm"] == (mode == "DCR" ? json::array({0, 3, 4, 1, 5, 2}) : json::array({0, 1, 4, 2, 5, 3})));
        CHECK(nodes_of(g, "Reshape").back()["attrs"]["shape"] == json::array({1, 2, 6, 10}));
    }
    // GatherND of [4, 6, 8] by 5 index pairs: 5 rows of 8 picked, each pair
    // made a row number in one pass.
    ModelBuilder b(13);
    b.input("data", {4, 6, 8});
    b.input("idx", {5, 2}, TP::INT64);
    b.node("GatherND", {"data", "idx"}, {"y"});
    b.output("y");
    const json g = b.import();
    REQUIRE(nodes_of(g, "Gather").size() == 1);
    REQUIRE(nodes_of(g, "ReduceSum").size() == 1);
    CHECK(nodes_of(g, "Reshape").front()["attrs"]["shape"] == json::array({24, 8}));  // the data as rows
    CHECK(nodes_of(g, "Reshape").back()["attrs"]["shape"] == json::array({5, 8}));
}

TEST_CASE("onnx export ops: Hardmax before opset 13 takes every dim from its axis on as one row, as Softmax does",
          "[onnx][import]") {
    for (const int opset : {11, 13}) {
        CAPTURE(opset);
        ModelBuilder b(opset);
        b.input("x", {2, 3, 4});
        b.attr(b.node("Hardmax", {"x"}, {"y"}), "axis", std::int64_t{1});
        b.output("y");
        const json g = b.import();
        const auto am = nodes_of(g, "ArgMax");
        REQUIRE(am.size() == 1);
        CHECK(am[0]["attrs"]["axis"] == 1);
        // Opset 11: the argmax of each [3 x 4] block, seen as rows of 12.
        const auto rows = nodes_of(g, "Reshape");
        if (opset == 11) {
            REQUIRE(!rows.empty());
            CHECK(rows.front()["attrs"]["shape"] == json::array({2, 12}));
        } else {
            CHECK(rows.empty());
        }
    }
}
