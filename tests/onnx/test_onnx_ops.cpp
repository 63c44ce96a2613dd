// ONNX ops beyond element-wise arithmetic (docs/onnx.md): Pad, Resize,
// TopK, ArgMax, InstanceNormalization, ConvTranspose. Each one-node model
// imports to the compiler's op and runs; where the cost has a shape (the
// taps of a resize, the passes of a selection, the zeros a transposed
// convolution multiplies) the cycles show it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "compiler/compiler.hpp"
#include "config/run_config.hpp"
#include "tasks/task.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";

std::uint64_t cycles(const json& stats) { return stats.at("total_cycles").get<std::uint64_t>(); }

// A model of one node `op` on input x of `dims` (output "y"), with
// initializers and attributes added by `extra`.
struct OneNode {
    ::onnx::ModelProto m;
    ::onnx::NodeProto* n = nullptr;

    OneNode(const std::string& op, std::vector<int> dims, std::vector<int> out_dims, int opset = 13,
            int out_type = ::onnx::TensorProto::FLOAT) {
        m.set_ir_version(8);
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        auto* g = m.mutable_graph();
        g->set_name(op);
        auto* x = g->add_input();
        x->set_name("x");
        x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        for (const int d : dims) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
        n = g->add_node();
        n->set_op_type(op);
        n->set_name(op);
        n->add_input("x");
        n->add_output("y");
        auto* y = g->add_output();
        y->set_name("y");
        y->mutable_type()->mutable_tensor_type()->set_elem_type(out_type);
        for (const int d : out_dims) y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    }
    void ints_init(const std::string& name, std::vector<std::int64_t> v) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        t->add_dims(static_cast<std::int64_t>(v.size()));
        for (const auto x : v) t->add_int64_data(x);
        n->add_input(name);
    }
    void floats_init(const std::string& name, std::vector<std::int64_t> dims) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        std::int64_t count = 1;
        for (const auto d : dims) {
            t->add_dims(d);
            count *= d;
        }
        for (std::int64_t i = 0; i < count; ++i) t->add_float_data(0.0f);
        n->add_input(name);
    }
    void attr(const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    void attr(const std::string& name, std::vector<std::int64_t> v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INTS);
        for (const auto x : v) a->add_ints(x);
    }
    void attr(const std::string& name, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    std::string save(const TempDir& tmp, const std::string& file) const {
        std::string bytes;
        REQUIRE(m.SerializeToString(&bytes));
        return tmp.write(file, bytes);
    }
};

// The graph `npusim import` writes for a model.
json imported(const TempDir& tmp, const std::string& file) {
    const Result r = run_npusim(tmp, {"import", file, "--out", tmp.path("g.json"), "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    return read_json(tmp.path("g.json"));
}

std::map<std::string, json> by_op(const json& g) {
    std::map<std::string, json> m;
    for (const auto& n : g["nodes"]) m[n["op"].get<std::string>()] = n;
    return m;
}

}  // namespace

TEST_CASE("onnx ops: Pad with constant pads becomes one Pad copy of the padded shape", "[onnx][ops]") {
    TempDir tmp;
    OneNode m("Pad", {1, 32, 56, 56}, {1, 32, 60, 62});
    m.ints_init("pads", {0, 0, 1, 2, 0, 0, 3, 4});  // H +1 top +3 bottom, W +2 left +4 right
    m.attr("mode", std::string("reflect"));
    const std::string file = m.save(tmp, "pad.onnx");
    const json g = imported(tmp, file);
    const auto ops = by_op(g);
    REQUIRE(ops.count("Pad"));
    CHECK(ops.at("Pad")["attrs"]["pads"] == json::array({0, 0, 1, 2, 0, 0, 3, 4}));
    CHECK(ops.at("Pad")["attrs"]["mode"] == "reflect");
    const json s = run_for_stats(tmp, kAx, file);
    CHECK(cycles(s) > 1000);
    CHECK(s["compile"]["tasks"].get<int>() >= 1);
}

TEST_CASE("onnx ops: Resize to twice the size, where linear costs more than nearest", "[onnx][ops]") {
    TempDir tmp;
    std::map<std::string, std::uint64_t> c;
    for (const std::string mode : {"nearest", "linear"}) {
        OneNode m("Resize", {1, 64, 64, 64}, {1, 64, 128, 128});
        m.n->add_input("");  // roi
        auto* t = m.m.mutable_graph()->add_initializer();
        t->set_name("scales");
        t->set_data_type(::onnx::TensorProto::FLOAT);
        t->add_dims(4);
        for (const float v : {1.0f, 1.0f, 2.0f, 2.0f}) t->add_float_data(v);
        m.n->add_input("scales");
        m.attr("mode", mode);
        const std::string file = m.save(tmp, mode + ".onnx");
        const auto ops = by_op(imported(tmp, file));
        REQUIRE(ops.count("Resize"));
        CHECK(ops.at("Resize")["attrs"]["sizes"] == json::array({1, 64, 128, 128}));
        CHECK(ops.at("Resize")["attrs"]["mode"] == mode);
        c[mode] = cycles(run_for_stats(tmp, kAx, file));
    }
    // 4 taps per output against a gather copy: the V pipe, not the copy, bounds linear.
    CHECK(c["linear"] > c["nearest"]);
}

// An upsampling Resize walks its output: from a pooled 1x1 map (a
// DeepLabV3 ASPP branch) it costs about what the same output costs from a
// 28x28 map, not a whole input repeat's work per UB chunk of a few bytes.
TEST_CASE("onnx ops: Resize up from a 1x1 map costs by its output, as from a 28x28 map", "[onnx][ops]") {
    TempDir tmp;
    std::map<int, std::uint64_t> c;
    for (const int side : {1, 28}) {
        OneNode m("Resize", {1, 256, side, side}, {1, 256, 56, 56});
        m.n->add_input("");  // roi
        m.n->add_input("");  // scales
        m.ints_init("sizes", {1, 256, 56, 56});
        m.attr("mode", std::string("linear"));
        const std::string file = m.save(tmp, "up" + std::to_string(side) + ".onnx");
        c[side] = cycles(run_for_stats(tmp, kAx, file));
    }
    INFO("from 1x1 " << c[1] << " cycles, from 28x28 " << c[28]);
    CHECK(c[1] < c[28] * 5 / 4);  // the same output repeats, a smaller input
    CHECK(c[1] > c[28] * 3 / 4);
}

TEST_CASE("onnx ops: TopK over a 4096-long row costs with k up to a full sort, and ArgMax is one pass", "[onnx][ops]") {
    TempDir tmp;
    std::map<std::int64_t, std::uint64_t> c;
    for (const std::int64_t k : {1, 8, 1024}) {
        OneNode m("TopK", {64, 4096}, {64, static_cast<int>(k)}, 11);
        m.ints_init("k", {k});
        m.n->add_output("indices");  // TopK's second output, read by nothing
        const std::string file = m.save(tmp, "topk" + std::to_string(k) + ".onnx");
        const auto ops = by_op(imported(tmp, file));
        REQUIRE(ops.count("TopK"));
        CHECK(ops.at("TopK")["attrs"]["k"] == k);
        c[k] = cycles(run_for_stats(tmp, kAx, file));
    }
    // k passes of max-and-mask until a bitonic sort (12·13 = 156 stages' worth) is fewer.
    CHECK(c[8] > c[1]);
    CHECK(c[1024] > c[8]);
    OneNode a("ArgMax", {64, 4096}, {64}, 13, ::onnx::TensorProto::INT64);
    a.attr("axis", std::int64_t{1});
    a.attr("keepdims", std::int64_t{0});
    const std::string file = a.save(tmp, "argmax.onnx");
    const json g = imported(tmp, file);
    const auto ops = by_op(g);
    REQUIRE(ops.count("ArgMax"));
    CHECK(ops.count("Reshape"));  // keepdims 0: a view after the pass
    const std::uint64_t argmax = cycles(run_for_stats(tmp, kAx, file));
    CHECK(argmax < c[8]);
}

TEST_CASE("onnx ops: InstanceNormalization is a GroupNorm of one group per channel, split by channels", "[onnx][ops]") {
    TempDir tmp;
    OneNode m("InstanceNormalization", {2, 64, 32, 32}, {2, 64, 32, 32});
    m.floats_init("scale", {64});
    m.floats_init("bias", {64});
    const std::string file = m.save(tmp, "in.onnx");
    const auto ops = by_op(imported(tmp, file));
    REQUIRE(ops.count("GroupNorm"));
    CHECK(ops.at("GroupNorm")["attrs"]["groups"] == 64);
    const npusim::RunConfig cfg = npusim::RunConfig::load(kA2, file, {});
    const auto r = npusim::compiler::compile_workload(cfg.workload(), cfg.chip());
    int tasks = 0;
    for (const auto& t : r.stream.tasks) tasks += r.stream.name(t.op) == "InstanceNormalization";
    CHECK(tasks >= 24);  // both images, channel blocks across the vector cores
    CHECK(cycles(run_for_stats(tmp, kA2, file)) > 1000);
}

TEST_CASE("onnx ops: ConvTranspose runs on the Cube over the zero-inserted input, the zeros' work counted",
          "[onnx][ops]") {
    TempDir tmp;
    // [1,64,28,28] -> stride 2, 3x3, pads 1, output_padding 1 -> [1,32,56,56].
    OneNode m("ConvTranspose", {1, 64, 28, 28}, {1, 32, 56, 56});
    m.floats_init("w", {64, 32, 3, 3});
    m.attr("strides", std::vector<std::int64_t>{2, 2});
    m.attr("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    m.attr("output_padding", std::vector<std::int64_t>{1, 1});
    const std::string file = m.save(tmp, "deconv.onnx");
    const json g = imported(tmp, file);
    const auto ops = by_op(g);
    REQUIRE(ops.count("Pad"));
    REQUIRE(ops.count("Conv2D"));
    CHECK(ops.at("Pad")["attrs"]["interior"] == json::array({0, 0, 1, 1}));  // stride - 1 zeros between inputs
    CHECK(ops.at("Conv2D")["attrs"]["stride"] == json::array({1, 1}));
    // Every output position multiplies the full 3x3x64 window: 4x the MACs
    // the non-zero inputs need.
    const npusim::RunConfig cfg = npusim::RunConfig::load(kA2, file, {});
    const auto r = npusim::compiler::compile_workload(cfg.workload(), cfg.chip());
    std::uint64_t macs = 0;
    for (const auto& t : r.stream.tasks)
        if (t.core_type == npusim::CoreType::cube) macs += t.params.m * t.params.n * t.params.k;
    CHECK(macs == 56ull * 56 * 32 * 64 * 9);
    CHECK(cycles(run_for_stats(tmp, kA2, file)) > 1000);
}

TEST_CASE("onnx ops: a grouped conv runs where it costs less, depthwise on Vector, 32 groups of 8 on the Cube",
          "[onnx][ops][conv]") {
    TempDir tmp;
    struct Case {
        int channels, groups, hw;
        npusim::CoreType expect;
    };
    // Depthwise 3x3: K = 9 and one output column per group leave 1/28 of
    // each 16 x 16 fractal busy; 9 multiply-adds per output on the lanes win.
    // ResNeXt-like 32 groups of 8: K = 72 per group, 8 of 16 columns used
    // (half wasted), against 72 multiply-adds per output on Vector.
    for (const Case& c : {Case{192, 192, 56, npusim::CoreType::vector}, Case{256, 32, 28, npusim::CoreType::cube}}) {
        CAPTURE(c.channels, c.groups);
        OneNode m("Conv", {1, c.channels, c.hw, c.hw}, {1, c.channels, c.hw, c.hw});
        m.floats_init("w", {c.channels, c.channels / c.groups, 3, 3});
        m.attr("group", std::int64_t{c.groups});
        m.attr("pads", std::vector<std::int64_t>{1, 1, 1, 1});
        m.attr("kernel_shape", std::vector<std::int64_t>{3, 3});
        const std::string file = m.save(tmp, "g" + std::to_string(c.groups) + ".onnx");
        for (const std::string chip : {"a2", "ax300"}) {
            CAPTURE(chip);
            const npusim::RunConfig cfg = npusim::RunConfig::load(kSrc + "/configs/chips/" + chip + ".json", file, {});
            const auto r = npusim::compiler::compile_workload(cfg.workload(), cfg.chip());
            int conv_tasks = 0;
            std::uint64_t cube_n = 0;
            for (const auto& t : r.stream.tasks)
                if (r.stream.name(t.op) == "Conv") {
                    ++conv_tasks;
                    CHECK(t.core_type == c.expect);
                    if (t.core_type == npusim::CoreType::cube) cube_n = std::max<std::uint64_t>(cube_n, t.params.n);
                }
            CHECK(conv_tasks > 0);
            // On the Cube, a tile's columns are whole groups of 8 padded to 16: twice its channels.
            if (c.expect == npusim::CoreType::cube) CHECK(cube_n % 32 == 0);
            bool noted = false;
            for (const auto& note : r.notes) noted = noted || note.rfind("grouped conv Conv:", 0) == 0;
            CHECK(noted);
        }
        CHECK(cycles(run_for_stats(tmp, kA2, file)) > 1000);
    }
}

TEST_CASE("onnx ops: a grouped MatMul (MoE experts' weights [G,K,N]) reads each group's own weights",
          "[onnx][ops][matmul]") {
    TempDir tmp;
    // x [8,64,256] x W [8,256,512]: 8 experts, 64 tokens each.
    OneNode m("MatMul", {8, 64, 256}, {8, 64, 512});
    m.floats_init("w", {8, 256, 512});
    const std::string file = m.save(tmp, "experts.onnx");
    const npusim::RunConfig cfg = npusim::RunConfig::load(kA2, file, {});
    const auto r = npusim::compiler::compile_workload(cfg.workload(), cfg.chip());
    // The union of the weight bytes the Cube tasks read is all of W, not one expert's.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    std::uint64_t lo = ~0ull;
    for (const auto& t : r.stream.tasks)
        for (const auto& g : t.reads)
            if (g.bytes > 0 && g.addr >= (1ull << 32)) {  // constants live above 4 GiB (docs/compiler.md, memory plan)
                g.for_each_row([&](std::uint64_t a, std::uint64_t n) { ranges.emplace_back(a, a + n); });
                lo = std::min(lo, g.addr);
            }
    std::sort(ranges.begin(), ranges.end());
    std::uint64_t covered = 0, end = 0;
    for (const auto& [a, b] : ranges) {
        if (b <= end) continue;
        covered += b - std::max(a, end);
        end = b;
    }
    CHECK(covered == 8ull * 256 * 512 * 2);
    CHECK(cycles(run_for_stats(tmp, kA2, file)) > 1000);
}

TEST_CASE("onnx ops: a KV-cache update by ScatterND copies the cache and writes the new rows", "[onnx][ops][llm]") {
    TempDir tmp;
    std::map<int, std::uint64_t> c;
    for (const int past : {256, 4096}) {
        // cache [1,8,past,64], one new token's keys [1,8,1,64] at position past - 1.
        OneNode m("ScatterND", {1, 8, past, 64}, {1, 8, past, 64});
        auto* idx = m.m.mutable_graph()->add_initializer();
        idx->set_name("indices");
        idx->set_data_type(::onnx::TensorProto::INT64);
        for (const int d : {1, 8, 1, 3}) idx->add_dims(d);
        for (int h = 0; h < 8; ++h)
            for (const std::int64_t v : {std::int64_t{0}, std::int64_t{h}, std::int64_t{past - 1}}) idx->add_int64_data(v);
        m.n->add_input("indices");
        auto* u = m.m.mutable_graph()->add_input();
        u->set_name("updates");
        u->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        for (const int d : {1, 8, 1, 64}) u->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
        m.n->add_input("updates");
        const std::string file = m.save(tmp, "kv" + std::to_string(past) + ".onnx");
        const auto ops = by_op(imported(tmp, file));
        REQUIRE(ops.count("ScatterND"));
        CHECK(ops.at("ScatterND")["inputs"] == json::array({"x", "indices", "updates"}));
        c[past] = cycles(run_for_stats(tmp, kA2, file));
    }
    // The copy of the cache grows with it (at 256 the fixed costs of the
    // tasks are a good part): 16x the cache, more than twice the cycles.
    CHECK(c[4096] > 2 * c[256]);
}

TEST_CASE("onnx ops: LogSoftmax and the Reduce family map onto Softmax, ReduceSum and ReduceMax passes", "[onnx][ops]") {
    TempDir tmp;
    const std::map<std::string, std::string> expect = {{"LogSoftmax", "Softmax"}, {"ReduceL2", "ReduceSum"},
                                                       {"ReduceLogSumExp", "ReduceSum"}, {"ReduceMin", "ReduceMax"}};
    for (const auto& [onnx_op, graph_op] : expect) {
        CAPTURE(onnx_op);
        const bool reduce = onnx_op.rfind("Reduce", 0) == 0;
        OneNode m(onnx_op, {32, 1024}, reduce ? std::vector<int>{32, 1} : std::vector<int>{32, 1024});
        if (reduce) m.attr("axes", std::vector<std::int64_t>{1});
        else m.attr("axis", std::int64_t{-1});
        const std::string file = m.save(tmp, onnx_op + ".onnx");
        const auto ops = by_op(imported(tmp, file));
        CHECK(ops.count(graph_op) == 1);
        CHECK(cycles(run_for_stats(tmp, kAx, file)) > 100);
    }
}
