// The graph IR, the graph-file reader and shape inference
// (docs/graph-format.md): the bundled models load with the right shapes,
// every kind of bad input is an InputError naming its place, and nodes come
// out in a deterministic topological order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "compiler/graph.hpp"
#include "compiler/graph_reader.hpp"
#include "compiler/shape_inference.hpp"

#include "support/build_paths.hpp"

using namespace npusim;
using namespace npusim::compiler;
using Catch::Matchers::Contains;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;

Graph model(const std::string& name, const std::map<std::string, std::int64_t>& dims = {}) {
    return read_graph(kSrc + "/models/" + name + ".json", dims);
}

const Tensor& tensor(const Graph& g, const std::string& name) {
    const int i = g.tensor_index(name);
    REQUIRE(i >= 0);
    return g.tensors[static_cast<std::size_t>(i)];
}

const Tensor& output(const Graph& g, std::size_t k = 0) {
    REQUIRE(g.outputs.size() > k);
    return g.tensors[static_cast<std::size_t>(g.outputs[k])];
}

int node_index(const Graph& g, const std::string& name) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

// A small valid graph: x -> relu -> y. Tests splice errors into it.
std::string wrap(const std::string& tensors, const std::string& nodes, const std::string& outputs = R"(["y"])",
                 const std::string& extra = "") {
    return R"({"kind": "graph", "name": "t", "dims": {"batch": 1, "seq_len": 8}, )" + extra + R"("tensors": {)" +
           tensors + R"(}, "nodes": [)" + nodes + R"(], "outputs": )" + outputs + "}";
}

const std::string kX = R"("x": {"shape": ["batch", 4, 8, 8], "input": true})";

// The message of the InputError reading `text` throws ("" if none).
std::string error_of(const std::string& text, const std::map<std::string, std::int64_t>& dims = {}) {
    try {
        read_graph_text(text, "g.json", dims);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// The IR helpers.

TEST_CASE("graph: op names round-trip and exclude FormatConvert", "[graph]") {
    const auto& names = graph_op_names();
    CHECK(names.size() == 64);  // 22 of the hand-written graphs, 32 of imported models, 7 of graphs that span ranks, 3 of LLM serving
    for (const auto& n : names) {
        OpType op{};
        REQUIRE(op_from_string(n, op));
        CHECK(std::string(to_string(op)) == n);
    }
    OpType op{};
    CHECK_FALSE(op_from_string("FormatConvert", op));
    CHECK_FALSE(op_from_string("conv2d", op));
    CHECK(std::string(to_string(OpType::FormatConvert)) == "FormatConvert");
    CHECK(std::string(to_string(Layout::NC1HWC0)) == "NC1HWC0");
    CHECK(std::string(to_string(Layout::FRACTAL_NZ)) == "FRACTAL_NZ");
}

TEST_CASE("graph: shapes, elements and bytes", "[graph]") {
    CHECK(elements({}) == 1);
    CHECK(elements({1, 64, 56, 56}) == 200704);
    CHECK(to_string(Shape{1, 64, 56, 56}) == "[1,64,56,56]");
    CHECK(to_string(Shape{}) == "[]");
    Tensor t;
    t.shape = {2, 3};
    t.dtype = DType::fp32;
    CHECK(t.bytes() == 24);
}

TEST_CASE("graph: attr_int and attr_ints accept one value as either", "[graph]") {
    Node n;
    n.name = "n";
    Attr i;
    i.kind = Attr::Kind::integer;
    i.i = 2;
    Attr l1;
    l1.kind = Attr::Kind::ints;
    l1.list = {3};
    Attr l2;
    l2.kind = Attr::Kind::ints;
    l2.list = {3, 4};
    Attr s;
    s.kind = Attr::Kind::string;
    s.s = "x";
    n.attrs = {{"i", i}, {"l1", l1}, {"l2", l2}, {"s", s}};
    CHECK(n.attr_int("i", 0) == 2);
    CHECK(n.attr_int("l1", 0) == 3);
    CHECK(n.attr_int("missing", 7) == 7);
    CHECK(n.attr_ints("i", {}) == std::vector<std::int64_t>{2});
    CHECK(n.attr_ints("l2", {}) == std::vector<std::int64_t>{3, 4});
    CHECK(n.attr_ints("missing", {1, 1}) == std::vector<std::int64_t>{1, 1});
    CHECK_THROWS_AS(n.attr_int("l2", 0), InputError);
    CHECK_THROWS_AS(n.attr_int("s", 0), InputError);
}

// ---------------------------------------------------------------------------
// The bundled models.

TEST_CASE("graph: convbnrelu is the docs/design.md §1.1 reference case", "[graph][models]") {
    const Graph g = model("convbnrelu");
    CHECK(g.name == "convbnrelu");
    REQUIRE(g.nodes.size() == 3);
    CHECK(g.nodes[0].op == OpType::Conv2D);
    CHECK(g.nodes[1].op == OpType::BatchNorm);
    CHECK(g.nodes[2].op == OpType::ReLU);
    REQUIRE(g.inputs.size() == 1);
    const Tensor& x = g.tensors[static_cast<std::size_t>(g.inputs[0])];
    CHECK(x.shape == Shape{1, 64, 56, 56});
    CHECK(x.layout == Layout::NCHW);
    CHECK(x.dtype == DType::fp16);
    CHECK(x.is_input);
    CHECK(x.consumers == std::vector<int>{0});
    const Tensor& w = g.tensors[static_cast<std::size_t>(g.nodes[0].inputs[1])];
    CHECK(w.is_const);
    CHECK(w.shape == Shape{128, 64, 3, 3});
    CHECK(g.nodes[0].attr_ints("kernel", {}) == std::vector<std::int64_t>{3, 3});
    CHECK(g.nodes[0].attr_int("stride", 0) == 1);
    CHECK(g.nodes[0].attr_int("pad", 0) == 1);
    CHECK(output(g).shape == Shape{1, 128, 56, 56});
    CHECK(output(g).is_output);
    CHECK(output(g).producer == 2);
    CHECK(model("convbnrelu", {{"batch", 8}}).tensors[static_cast<std::size_t>(g.outputs[0])].shape ==
          Shape{8, 128, 56, 56});
}

TEST_CASE("graph: resnet50 shapes", "[graph][models]") {
    const Graph g = model("resnet50");
    CHECK(output(g).shape == Shape{1, 1000});
    CHECK(tensor(g, "conv1").shape == Shape{1, 64, 112, 112});
    CHECK(tensor(g, "maxpool").shape == Shape{1, 64, 56, 56});
    CHECK(tensor(g, "layer1.2.relu3").shape == Shape{1, 256, 56, 56});
    CHECK(tensor(g, "layer2.0.conv2").shape == Shape{1, 128, 28, 28});  // v1.5: stride in the 3x3
    CHECK(tensor(g, "layer2.0.conv1").shape == Shape{1, 128, 56, 56});
    CHECK(tensor(g, "layer3.5.relu3").shape == Shape{1, 1024, 14, 14});
    CHECK(tensor(g, "layer4.2.relu3").shape == Shape{1, 2048, 7, 7});
    CHECK(tensor(g, "avgpool").shape == Shape{1, 2048, 1, 1});

    int convs = 0, bns = 0, adds = 0;
    for (const auto& n : g.nodes) {
        convs += n.op == OpType::Conv2D;
        bns += n.op == OpType::BatchNorm;
        adds += n.op == OpType::Add;
    }
    CHECK(convs == 53);  // 1 + 16 blocks x 3 + 4 projections
    CHECK(bns == 53);
    CHECK(adds == 17);   // 16 residuals + the fc bias
    CHECK(node_index(g, "layer1.0.downsample.conv") >= 0);
    CHECK(node_index(g, "layer1.1.downsample.conv") < 0);

    const Graph g4 = model("resnet50", {{"batch", 4}});
    CHECK(output(g4).shape == Shape{4, 1000});
    CHECK(tensor(g4, "layer4.2.relu3").shape == Shape{4, 2048, 7, 7});
}

TEST_CASE("graph: bert_layer shapes follow batch and seq_len", "[graph][models]") {
    const Graph g = model("bert_layer");
    CHECK(output(g).shape == Shape{1, 128, 768});
    CHECK(tensor(g, "attn.q.transpose").shape == Shape{1, 12, 128, 64});
    CHECK(tensor(g, "attn.k.transpose").shape == Shape{1, 12, 64, 128});
    CHECK(tensor(g, "attn.scores").shape == Shape{1, 12, 128, 128});
    CHECK(tensor(g, "ffn.gelu").shape == Shape{1, 128, 3072});
    CHECK(tensor(g, "x").layout == Layout::ND);

    const Graph g256 = model("bert_layer", {{"seq_len", 256}});
    CHECK(output(g256).shape == Shape{1, 256, 768});
    CHECK(tensor(g256, "attn.scores").shape == Shape{1, 12, 256, 256});
    CHECK(tensor(g256, "attn.q.reshape").shape == Shape{1, 256, 12, 64});

    const Graph g4 = model("bert_layer", {{"batch", 4}, {"seq_len", 256}});
    CHECK(output(g4).shape == Shape{4, 256, 768});
}

TEST_CASE("graph: segnet loads with its layout boundaries", "[graph][models]") {
    const Graph g = model("segnet");
    CHECK(output(g).shape == Shape{1, 21, 256, 256});
    CHECK(g.nodes.front().op == OpType::Mul);  // elementwise on the NCHW input before the first conv
    CHECK(tensor(g, "pool3").shape == Shape{1, 128, 32, 32});
    CHECK(tensor(g, "context.to_pixels").shape == Shape{1, 1024, 128});
    CHECK(tensor(g, "context.to_pixels").layout == Layout::ND);
    CHECK(tensor(g, "skip1").shape == Shape{1, 48, 256, 256});
    bool has_concat = false, has_transpose = false, has_softmax = false;
    for (const auto& n : g.nodes) {
        has_concat |= n.op == OpType::Concat;
        has_transpose |= n.op == OpType::Transpose;
        has_softmax |= n.op == OpType::Softmax;
    }
    CHECK((has_concat && has_transpose && has_softmax));
    CHECK(output(model("segnet", {{"batch", 2}})).shape == Shape{2, 21, 256, 256});
}

TEST_CASE("graph: every model has consistent producer/consumer links in topological order", "[graph][models]") {
    for (const char* name : {"convbnrelu", "resnet50", "bert_layer", "segnet"}) {
        INFO(name);
        const Graph g = model(name);
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            for (const int t : g.nodes[i].inputs) {
                const Tensor& tt = g.tensors[static_cast<std::size_t>(t)];
                CHECK(tt.producer < static_cast<int>(i));
                CHECK(std::find(tt.consumers.begin(), tt.consumers.end(), static_cast<int>(i)) != tt.consumers.end());
            }
            for (const int t : g.nodes[i].outputs) CHECK(g.tensors[static_cast<std::size_t>(t)].producer == static_cast<int>(i));
        }
    }
}

// ---------------------------------------------------------------------------
// Reading: order, dims, attributes.

TEST_CASE("graph: nodes are put in topological order, ties by file order", "[graph]") {
    // File order: d (needs c), a, c (needs a, b), b. Kahn with ties by file
    // order: a and b are ready; a (file index 1) first, then b, then c, d.
    const std::string text = wrap(kX,
                                  R"({"name": "d", "op": "ReLU", "inputs": ["tc"], "outputs": ["y"]},
                                     {"name": "a", "op": "ReLU", "inputs": ["x"], "outputs": ["ta"]},
                                     {"name": "c", "op": "Add", "inputs": ["ta", "tb"], "outputs": ["tc"]},
                                     {"name": "b", "op": "Sigmoid", "inputs": ["x"], "outputs": ["tb"]})");
    const Graph g = read_graph_text(text, "g.json");
    REQUIRE(g.nodes.size() == 4);
    std::vector<std::string> order;
    for (const auto& n : g.nodes) order.push_back(n.name);
    CHECK(order == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(tensor(g, "x").consumers == std::vector<int>{0, 1});
    CHECK(tensor(g, "tc").producer == 2);
    CHECK(tensor(g, "tc").consumers == std::vector<int>{3});
    CHECK(tensor(g, "y").shape == Shape{1, 4, 8, 8});
    CHECK(tensor(g, "y").is_output);

    // A different file order with the same dependencies gives a different
    // but equally deterministic order: b before a when b comes first.
    const std::string text2 = wrap(kX,
                                   R"({"name": "b", "op": "Sigmoid", "inputs": ["x"], "outputs": ["tb"]},
                                      {"name": "d", "op": "ReLU", "inputs": ["tc"], "outputs": ["y"]},
                                      {"name": "c", "op": "Add", "inputs": ["ta", "tb"], "outputs": ["tc"]},
                                      {"name": "a", "op": "ReLU", "inputs": ["x"], "outputs": ["ta"]})");
    std::vector<std::string> order2;
    for (const auto& n : read_graph_text(text2, "g.json").nodes) order2.push_back(n.name);
    CHECK(order2 == std::vector<std::string>{"b", "a", "c", "d"});
}

TEST_CASE("graph: dims, dim products, dtypes, layouts and device", "[graph]") {
    const std::string text = wrap(
        R"("x": {"shape": ["batch", "seq_len", 16], "dtype": "bf16", "input": true},
           "w": {"shape": [16, "2*seq_len"], "dtype": "bf16", "const": true},
           "f": {"shape": ["batch*seq_len", "2*seq_len"]},
           "img": {"shape": [1, 32, 4, 4], "layout": "NC1HWC0", "input": true})",
        R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["m"]},
           {"name": "r", "op": "Reshape", "inputs": ["m"], "outputs": ["f"], "attrs": {"shape": ["batch*seq_len", -1]}},
           {"name": "q", "op": "Quantize", "inputs": ["f"], "outputs": ["y"], "device": "cpu"},
           {"name": "p", "op": "ReLU", "inputs": ["img"], "outputs": ["z"]})",
        R"(["y", "z"])");
    const Graph g = read_graph_text(text, "g.json", {{"batch", 2}});
    CHECK(tensor(g, "m").shape == Shape{2, 8, 16});
    CHECK(tensor(g, "m").dtype == DType::bf16);
    CHECK(tensor(g, "m").layout == Layout::ND);
    CHECK(tensor(g, "f").shape == Shape{16, 16});
    CHECK(tensor(g, "y").dtype == DType::int8);
    CHECK(tensor(g, "img").layout == Layout::NC1HWC0);
    CHECK(tensor(g, "z").layout == Layout::NCHW);
    CHECK(g.inputs.size() == 2);
    CHECK(g.outputs.size() == 2);
    CHECK(g.nodes[static_cast<std::size_t>(node_index(g, "q"))].on_cpu);
    CHECK_FALSE(g.nodes[static_cast<std::size_t>(node_index(g, "mm"))].on_cpu);
    // A batch of 1 for a graph without a batch dim is accepted (the default).
    CHECK_NOTHROW(read_graph_text(
        R"({"kind": "graph", "tensors": {"x": {"shape": [4], "input": true}},
            "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})",
        "g.json", {{"batch", 1}}));
}

// ---------------------------------------------------------------------------
// Shape inference.

namespace {
Shape infer_one(const std::string& tensors, const std::string& node) {
    const Graph g = read_graph_text(wrap(tensors, node), "g.json");
    return tensor(g, "y").shape;
}
}  // namespace

TEST_CASE("graph: shape inference for each op", "[graph][shape]") {
    const std::string x4 = R"("x": {"shape": [2, 8, 16, 16], "input": true})";
    auto one = [&](const std::string& extra_tensors, const std::string& op, const std::string& inputs,
                   const std::string& attrs) {
        return infer_one(x4 + extra_tensors, R"({"name": "n", "op": ")" + op + R"(", "inputs": )" + inputs +
                                                  R"(, "outputs": ["y"], "attrs": )" + attrs + "}");
    };
    const std::string w = R"(, "w": {"shape": [32, 8, 3, 3], "const": true})";
    CHECK(one(w, "Conv2D", R"(["x","w"])", R"({"pad": 1})") == Shape{2, 32, 16, 16});
    CHECK(one(w, "Conv2D", R"(["x","w"])", R"({"stride": 2, "pad": [1, 1]})") == Shape{2, 32, 8, 8});
    CHECK(one(w, "Conv2D", R"(["x","w"])", R"({})") == Shape{2, 32, 14, 14});
    CHECK(one(w, "Conv2D", R"(["x","w"])", R"({"stride": [1, 2], "pad": [0, 1, 2, 1]})") == Shape{2, 32, 16, 8});
    CHECK(one(R"(, "w": {"shape": [16, 2, 1, 1], "const": true})", "Conv2D", R"(["x","w"])", R"({"groups": 4})") ==
          Shape{2, 16, 16, 16});
    CHECK(one("", "MaxPool", R"(["x"])", R"({"kernel": 2})") == Shape{2, 8, 8, 8});
    CHECK(one("", "AvgPool", R"(["x"])", R"({"kernel": 3, "stride": 2, "pad": 1})") == Shape{2, 8, 8, 8});
    CHECK(one("", "GlobalAvgPool", R"(["x"])", "{}") == Shape{2, 8, 1, 1});
    CHECK(one("", "Reshape", R"(["x"])", R"({"shape": [0, -1]})") == Shape{2, 2048});
    CHECK(one("", "Transpose", R"(["x"])", R"({"perm": [0, 2, 3, 1]})") == Shape{2, 16, 16, 8});
    CHECK(one("", "ReduceSum", R"(["x"])", R"({"axes": [2, 3]})") == Shape{2, 8, 1, 1});
    CHECK(one("", "ReduceSum", R"(["x"])", R"({"axes": -1, "keepdims": 0})") == Shape{2, 8, 16});
    CHECK(one("", "Softmax", R"(["x"])", R"({"axis": 1})") == Shape{2, 8, 16, 16});
    CHECK(one(R"(, "b": {"shape": [8, 1, 1], "const": true})", "Add", R"(["x","b"])", "{}") == Shape{2, 8, 16, 16});
    CHECK(one(R"(, "b": {"shape": [2, 4, 16, 16], "input": true})", "Concat", R"(["x","b"])", R"({"axis": 1})") ==
          Shape{2, 12, 16, 16});
    CHECK(one(R"(, "b": {"shape": [16, 5], "const": true})", "MatMul", R"(["x","b"])", "{}") == Shape{2, 8, 16, 5});
    CHECK(one(R"(, "b": {"shape": [5, 16], "const": true})", "MatMul", R"(["x","b"])", R"({"transpose_b": true})") ==
          Shape{2, 8, 16, 5});
    CHECK(one(R"(, "b": {"shape": [2, 8, 16, 3], "input": true})", "BatchMatMul", R"(["x","b"])", "{}") ==
          Shape{2, 8, 16, 3});
    CHECK(one(R"(, "g": {"shape": [16], "const": true}, "b": {"shape": [16], "const": true})", "LayerNorm",
              R"(["x","g","b"])", "{}") == Shape{2, 8, 16, 16});
}

TEST_CASE("graph: shape inference errors name the node and the problem", "[graph][shape]") {
    const std::string x4 = R"("x": {"shape": [2, 8, 16, 16], "input": true})";
    auto err = [&](const std::string& extra, const std::string& op, const std::string& inputs, const std::string& attrs) {
        return error_of(wrap(x4 + extra, R"({"name": "n1", "op": ")" + op + R"(", "inputs": )" + inputs +
                                             R"(, "outputs": ["y"], "attrs": )" + attrs + "}"));
    };
    const std::string e1 = err(R"(, "w": {"shape": [32, 4, 3, 3], "const": true})", "Conv2D", R"(["x","w"])", "{}");
    CHECK_THAT(e1, Contains("g.json: nodes[0] (n1): channel mismatch"));
    CHECK_THAT(e1, Contains("'x' [2,8,16,16] has 8 channels"));
    CHECK_THAT(err(R"(, "b": {"shape": [3, 16], "const": true})", "Add", R"(["x","b"])", "{}"),
               Contains("nodes[0] (n1): shapes of 'x' [2,8,16,16] and 'b' [3,16] do not broadcast"));
    CHECK_THAT(err(R"(, "b": {"shape": [15, 4], "const": true})", "MatMul", R"(["x","b"])", "{}"),
               Contains("inner dimensions differ"));
    CHECK_THAT(err("", "Reshape", R"(["x"])", R"({"shape": [3, -1]})"), Contains("cannot reshape"));
    CHECK_THAT(err("", "Reshape", R"(["x"])", R"({"shape": [2, 8]})"), Contains("element count mismatch"));
    CHECK_THAT(err("", "Transpose", R"(["x"])", R"({"perm": [0, 1, 1, 2]})"), Contains("not a permutation"));
    CHECK_THAT(err(R"(, "b": {"shape": [2, 4, 15, 16], "input": true})", "Concat", R"(["x","b"])", R"({"axis": 1})"),
               Contains("differ in dimension 2"));
    CHECK_THAT(err("", "Softmax", R"(["x"])", R"({"axis": 4})"), Contains("attrs.axis: axis 4 is out of range"));
    CHECK_THAT(err("", "MaxPool", R"(["x"])", "{}"), Contains("attrs.kernel: required"));
    CHECK_THAT(err("", "ReLU", R"(["x","x"])", "{}"), Contains("ReLU takes 1 input(s)"));
    CHECK_THAT(err("", "BatchNorm", R"(["x","x"])", "{}"), Contains("BatchNorm takes 1 or 5 inputs"));
    CHECK_THAT(err("", "Dequantize", R"(["x"])", "{}"), Contains("must be int8"));
    CHECK_THAT(err("", "Conv2D", R"(["x","x"])", R"({"stridde": 2})"),
               Contains("nodes[0] (n1): unknown attribute 'stridde' for Conv2D (did you mean 'stride'?)"));
    CHECK_THAT(err("", "Transpose", R"(["x"])", R"({"perm": 3.5})"),
               Contains("nodes[0] (n1): attrs.perm: expected a list of integers, got number 3.5"));
}

TEST_CASE("graph: a declared shape or dtype that differs from inference is a mismatch", "[graph][shape]") {
    const std::string e = error_of(wrap(kX + R"(, "y": {"shape": ["batch", 4, 8, 9]})",
                                        R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})"));
    CHECK_THAT(e, Contains("g.json: nodes[0] (act): shape mismatch for output tensor 'y': declared [1,4,8,9]"));
    CHECK_THAT(e, Contains("tensors.y.shape"));
    CHECK_THAT(e, Contains("produces [1,4,8,8]"));
    const std::string d = error_of(wrap(kX + R"(, "y": {"dtype": "int8"})",
                                        R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})"));
    CHECK_THAT(d, Contains("nodes[0] (act): dtype mismatch for output tensor 'y'"));
}

// ---------------------------------------------------------------------------
// Errors: each names its place.

namespace {
const std::string kRelu = R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})";
}

TEST_CASE("graph: unknown op gets a did-you-mean", "[graph][errors]") {
    const std::string e = error_of(wrap(kX, R"({"name": "conv1", "op": "Conv2d", "inputs": ["x"], "outputs": ["y"]})"));
    CHECK_THAT(e, Contains("g.json: nodes[0] (conv1): unknown op 'Conv2d' (did you mean 'Conv2D'?)"));
    CHECK_THAT(error_of(wrap(kX, R"({"name": "c", "op": "FormatConvert", "inputs": ["x"], "outputs": ["y"]})")),
               Contains("inserted by the compiler"));
}

TEST_CASE("graph: dangling tensors and unproduced declarations", "[graph][errors]") {
    const std::string e = error_of(wrap(kX, kRelu + R"(, {"name": "add1", "op": "Add", "inputs": ["y", "yy2"], "outputs": ["z"]})",
                                        R"(["z"])"));
    CHECK_THAT(e, Contains("g.json: nodes[1] (add1): dangling tensor 'yy2'"));
    const std::string u = error_of(wrap(kX + R"(, "w": {"shape": [4]})", kRelu));
    CHECK_THAT(u, Contains("g.json: tensors.w: declared but no node produces it"));
    CHECK_THAT(error_of(wrap(kX, kRelu, R"(["yy"])")), Contains("g.json: outputs[0]: unknown tensor 'yy' (did you mean 'y'?)"));
}

TEST_CASE("graph: duplicate node names and tensors produced twice", "[graph][errors]") {
    const std::string dup = error_of(wrap(kX, kRelu + R"(, {"name": "act", "op": "ReLU", "inputs": ["y"], "outputs": ["z"]})",
                                          R"(["z"])"));
    CHECK_THAT(dup, Contains("g.json: nodes[1] (act): duplicate node name 'act' (first used by nodes[0])"));
    const std::string twice = error_of(wrap(kX, kRelu + R"(, {"name": "s", "op": "Sigmoid", "inputs": ["x"], "outputs": ["y"]})"));
    CHECK_THAT(twice, Contains("g.json: nodes[1] (s): tensor 'y' is produced by two nodes: nodes[0] (act)"));
    const std::string in_out = error_of(wrap(kX, R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["x"]})", R"(["x"])"));
    CHECK_THAT(in_out, Contains("nodes[0] (r): output 'x' is declared as a graph input"));
    CHECK_THAT(error_of(wrap(kX, kRelu, "[]", R"("tensors": {}, )")), Contains("duplicate key 'tensors'"));
    CHECK_THAT(error_of(wrap(kX + ", " + kX, kRelu)), Contains("g.json:1:") && Contains(": duplicate key 'x' in tensors"));
}

TEST_CASE("graph: cycles name the nodes on the cycle", "[graph][errors]") {
    const std::string e = error_of(wrap(kX,
                                        R"({"name": "pre", "op": "ReLU", "inputs": ["x"], "outputs": ["p"]},
                                           {"name": "a", "op": "Add", "inputs": ["p", "tb"], "outputs": ["ta"]},
                                           {"name": "b", "op": "ReLU", "inputs": ["ta"], "outputs": ["tb"]},
                                           {"name": "c", "op": "ReLU", "inputs": ["tb"], "outputs": ["y"]})"));
    CHECK_THAT(e, Contains("g.json: nodes[1] (a): cycle through nodes a -> b -> a"));
    const std::string self = error_of(wrap(kX, R"({"name": "s", "op": "Add", "inputs": ["x", "y"], "outputs": ["y"]})"));
    CHECK_THAT(self, Contains("nodes[0] (s): cycle through nodes s -> s"));
}

TEST_CASE("graph: unknown keys at every level get a did-you-mean", "[graph][errors]") {
    CHECK_THAT(error_of(wrap(kX, kRelu, R"(["y"])", R"("tensor": {}, )")),
               Contains("g.json: unknown key 'tensor' (did you mean 'tensors'?)"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [4], "input": true, "dtyp": "fp16"})", kRelu)),
               Contains("g.json: tensors.x: unknown key 'dtyp' (did you mean 'dtype'?)"));
    CHECK_THAT(error_of(wrap(kX, R"({"name": "act", "op": "ReLU", "input": ["x"], "outputs": ["y"]})")),
               Contains("g.json: nodes[0] (act): unknown key 'input' (did you mean 'inputs'?)"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [4], "input": true, "dtype": "fp61"})", kRelu)),
               Contains("g.json: tensors.x.dtype: unknown dtype 'fp61' (did you mean 'fp16'?)"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [4], "input": true, "layout": "NHWC"})", kRelu)),
               Contains("tensors.x.layout: unknown layout 'NHWC'"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [4], "input": true, "layout": "NCHW"})", kRelu)),
               Contains("tensors.x.layout: NCHW needs a 4-D shape"));
}

TEST_CASE("graph: bad dims name the dimension", "[graph][errors]") {
    const std::string passed = error_of(wrap(kX, kRelu), {{"seqlen", 256}});
    CHECK_THAT(passed, Contains("g.json: dims: unknown dimension 'seqlen' given for this graph (did you mean 'seq_len'?)"));
    CHECK_THAT(passed, Contains("the graph declares: batch, seq_len"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": ["btach", 4], "input": true})", kRelu)),
               Contains("g.json: tensors.x.shape[0]: unknown dimension 'btach' (did you mean 'batch'?)"));
    CHECK_THAT(error_of(wrap(kX, kRelu), {{"batch", 0}}), Contains("dims.batch: value 0"));
    CHECK_THAT(error_of(wrap(kX, kRelu), {{"batch", (std::int64_t(1) << 31) + 1}}), Contains("dims.batch"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [0, 4], "input": true})", kRelu)),
               Contains("tensors.x.shape[0]: expected an integer in [1, 2147483648], got integer 0"));
    CHECK_THAT(error_of(R"({"kind": "graph", "dims": {"batch": -1}, "tensors": {}, "nodes": [], "outputs": []})"),
               Contains("g.json: dims.batch: expected an integer in [1, "));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": ["batch*", 4], "input": true})", kRelu)),
               Contains("tensors.x.shape[0]: malformed dimension expression"));
}

TEST_CASE("graph: absurd sizes are rejected before allocating", "[graph][errors]") {
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [1048576, 1048576, 2], "input": true})", kRelu)),
               Contains("tensors.x.shape: shape [1048576,1048576,2] has more than 2^40 elements"));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [1,1,1,1,1,1,1,1,1], "input": true})", kRelu)),
               Contains("tensors.x.shape: rank 9 is too large"));
    // Inferred shapes are checked too: a concat of huge inputs.
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [1048576, 1048576], "input": true})",
                             R"({"name": "cat", "op": "Concat", "inputs": ["x", "x"], "outputs": ["y"], "attrs": {"axis": 0}})")),
               Contains("nodes[0] (cat): output 'y' [2097152,1048576] has more than 2^40 elements"));
    std::string many = R"({"kind": "graph", "tensors": {"x": {"shape": [1], "input": true}}, "nodes": [)";
    for (int i = 0; i < 100001; ++i) many += (i ? ",1" : "1");
    many += R"(], "outputs": ["x"]})";
    CHECK_THAT(error_of(many), Contains("g.json: nodes: 100001 nodes is more than the limit of 100000"));
}

TEST_CASE("graph: malformed JSON and wrong kinds", "[graph][errors]") {
    CHECK_THAT(error_of("{\"kind\": \"graph\",\n  \"tensors\": {,}}"), Contains("g.json:2:15: invalid JSON"));
    CHECK_THAT(error_of(""), Contains("g.json: empty graph file"));
    CHECK_THAT(error_of("[1]"), Contains("expected a JSON object at the top level"));
    CHECK_THAT(error_of(R"({"kind": "kernel", "tensors": {}, "nodes": [], "outputs": []})"),
               Contains("g.json: kind: expected \"graph\""));
    CHECK_THAT(error_of(wrap(kX, R"({"name": "act", "op": "ReLU", "inputs": "x", "outputs": ["y"]})")),
               Contains("g.json: nodes[0] (act): inputs: expected a list of tensor names, got string \"x\""));
    CHECK_THAT(error_of(wrap(kX, R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["y", "z"]})")),
               Contains("nodes[0] (act): outputs: expected exactly one output tensor"));
    CHECK_THAT(error_of(wrap(kX, R"({"name": "act", "op": "ReLU", "inputs": ["x"], "outputs": ["y"], "device": "gpu"})")),
               Contains("nodes[0] (act): device: expected \"cpu\" or \"npu\""));
    CHECK_THAT(error_of(wrap(R"("x": {"shape": [4], "input": true, "const": true})", kRelu)),
               Contains("tensors.x: a tensor cannot be both"));
    CHECK_THAT(error_of(wrap(R"("x": {"input": true})", kRelu)), Contains("tensors.x: missing \"shape\""));
    try {
        read_graph(kSrc + "/models/does-not-exist.json");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), Contains("does-not-exist.json: cannot open graph file"));
    }
}
