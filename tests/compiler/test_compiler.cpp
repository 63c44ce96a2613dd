// The built-in compiler (docs/design.md §1.1, docs/compiler.md): each pass is tested
// through compile() on small in-memory graphs (no SystemC, in-process), and
// the effects the issue asks for are tested end to end through the binary:
// tile vs op sync, layout hoisting, Vector fusion, emit + replay, batch,
// forced tilings and graph errors.
//
// Expectations are computed from the graph and the chip (sizes, tile
// counts) or compare two runs; no observed cycle count is hard-coded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "compiler/compiler.hpp"
#include "compiler/cost_model.hpp"
#include "compiler/graph_reader.hpp"
#include "compiler/spmd.hpp"
#include "config/run_config.hpp"
#include "support/e2e.hpp"
#include "tasks/stream_reader.hpp"
#include "tasks/task.hpp"

using namespace npusim;
using namespace npusim::compiler;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";

std::string model_file(const std::string& name) { return kSrc + "/models/" + name + ".json"; }

ChipParams chip(const std::string& file) { return RunConfig::load(file, "", {}).chip(); }

Graph graph(const std::string& text, const std::map<std::string, std::int64_t>& dims = {}) {
    return read_graph_text(text, "test.json", dims);
}

// One graph file with the given tensors, nodes and outputs.
std::string graph_text(const std::string& tensors, const std::string& nodes, const std::string& outputs) {
    return R"({"kind": "graph", "name": "t", "tensors": {)" + tensors + R"(}, "nodes": [)" + nodes +
           R"(], "outputs": )" + outputs + "}";
}

// Conv 3x3 16->32 pad 1 on [1,16,16,16], BN, ReLU.
const std::string kConvBnRelu = graph_text(
    R"("x": {"shape": [1, 16, 16, 16], "input": true},
       "w": {"shape": [32, 16, 3, 3], "const": true},
       "g": {"shape": [32], "const": true}, "b": {"shape": [32], "const": true},
       "m": {"shape": [32], "const": true}, "v": {"shape": [32], "const": true})",
    R"({"name": "conv", "op": "Conv2D", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"pad": 1}},
       {"name": "bn", "op": "BatchNorm", "inputs": ["c", "g", "b", "m", "v"], "outputs": ["n"]},
       {"name": "relu", "op": "ReLU", "inputs": ["n"], "outputs": ["y"]})",
    R"(["y"])");

// A Vector chain on an ND tensor: bias Add -> GELU -> scale Mul.
constexpr std::uint64_t kChainBytes = 1 * 128 * 768 * 2;
constexpr std::uint64_t kChainConstBytes = 768 * 2;
const std::string kVectorChain = graph_text(
    R"("x": {"shape": [1, 128, 768], "input": true},
       "bias": {"shape": [768], "const": true}, "scale": {"shape": [768], "const": true})",
    R"({"name": "add", "op": "Add", "inputs": ["x", "bias"], "outputs": ["a"]},
       {"name": "gelu", "op": "GELU", "inputs": ["a"], "outputs": ["g"]},
       {"name": "mul", "op": "Mul", "inputs": ["g", "scale"], "outputs": ["y"]})",
    R"(["y"])");

// An element-wise op between the NCHW graph input and a Conv.
const std::string kMulConv = graph_text(
    R"("x": {"shape": [1, 16, 16, 16], "input": true},
       "s": {"shape": [1, 16, 1, 1], "const": true},
       "w": {"shape": [32, 16, 3, 3], "const": true})",
    R"({"name": "norm", "op": "Mul", "inputs": ["x", "s"], "outputs": ["xn"]},
       {"name": "conv", "op": "Conv2D", "inputs": ["xn", "w"], "outputs": ["y"], "attrs": {"pad": 1}})",
    R"(["y"])");

// One NCHW input read by two Convs.
const std::string kTwoConvs = graph_text(
    R"("x": {"shape": [1, 16, 16, 16], "input": true},
       "wa": {"shape": [32, 16, 3, 3], "const": true},
       "wb": {"shape": [16, 16, 1, 1], "const": true})",
    R"({"name": "a", "op": "Conv2D", "inputs": ["x", "wa"], "outputs": ["ya"], "attrs": {"pad": 1}},
       {"name": "b", "op": "Conv2D", "inputs": ["x", "wb"], "outputs": ["yb"]})",
    R"(["ya", "yb"])");

// A diamond of Vector ops: add reads r and s, and s = sigmoid(r) already
// depends on r, so add's direct dependence on r is redundant.
const std::string kDiamond = graph_text(
    R"("x": {"shape": [1, 128, 768], "input": true})",
    R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["r"]},
       {"name": "s", "op": "Sigmoid", "inputs": ["r"], "outputs": ["s"]},
       {"name": "add", "op": "Add", "inputs": ["r", "s"], "outputs": ["z"]})",
    R"(["z"])");

const std::string& op_of(const TaskStream& ts, const Task& t) { return ts.name(t.op); }

std::size_t tasks_of(const TaskStream& ts, const std::string& op) {
    return static_cast<std::size_t>(
        std::count_if(ts.tasks.begin(), ts.tasks.end(), [&](const Task& t) { return op_of(ts, t) == op; }));
}

std::set<std::string> ops(const TaskStream& ts) {
    std::set<std::string> out;
    for (const Task& t : ts.tasks) out.insert(op_of(ts, t));
    return out;
}

std::set<std::string> ops_starting(const TaskStream& ts, const std::string& prefix) {
    std::set<std::string> out;
    for (const auto& o : ops(ts))
        if (o.rfind(prefix, 0) == 0) out.insert(o);
    return out;
}

bool has_note(const CompileResult& r, const std::string& text) {
    return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

const TilingChoice& tiling(const CompileResult& r, const std::string& kernel) {
    const auto it = std::find_if(r.tilings.begin(), r.tilings.end(), [&](const TilingChoice& t) { return t.kernel == kernel; });
    REQUIRE(it != r.tilings.end());
    return *it;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The producer task of each event (one signaller per event in compiled
// streams under tile sync), and each task's producers through its waits.
std::vector<std::vector<std::size_t>> waited_producers(const TaskStream& ts) {
    std::map<EventIndex, std::vector<std::size_t>> signaller;
    for (std::size_t i = 0; i < ts.tasks.size(); ++i)
        for (EventIndex e : ts.tasks[i].signal) signaller[e].push_back(i);
    std::vector<std::vector<std::size_t>> preds(ts.tasks.size());
    for (std::size_t i = 0; i < ts.tasks.size(); ++i)
        for (EventIndex e : ts.tasks[i].wait)
            for (std::size_t p : signaller[e]) preds[i].push_back(p);
    return preds;
}

// No task waits on two producers one of which (transitively) depends on the
// other: the transitive reduction left no redundant wait.
void check_no_redundant_wait(const TaskStream& ts) {
    const auto preds = waited_producers(ts);
    const std::size_t n = ts.tasks.size();
    std::vector<std::vector<bool>> anc(n, std::vector<bool>(n, false));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t p : preds[i]) {
            REQUIRE(p < i);  // producers come first in the stream
            anc[i][p] = true;
            for (std::size_t q = 0; q < n; ++q)
                if (anc[p][q]) anc[i][q] = true;
        }
    std::size_t redundant = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t p : preds[i])
            for (std::size_t q : preds[i])
                if (p != q && anc[p][q]) {
                    if (redundant++ < 5)
                        UNSCOPED_INFO(ts.tasks[i].id << " waits on " << ts.tasks[q].id << " and on " << ts.tasks[p].id
                                                     << ", which depends on it");
                }
    CHECK(redundant == 0);
}

// ---- running the binary -----------------------------------------------------

// `npusim run` of a workload with --set overrides; returns the stats.
json run_stats(const TempDir& tmp, const std::string& chip_file, const std::string& workload,
               const std::vector<std::string>& sets = {}) {
    static int n = 0;
    const std::string stats = tmp.path("stats" + std::to_string(n++) + ".json");
    std::vector<std::string> args = {"run", "--chip", chip_file, "--workload", workload, "--stats", stats};
    for (const auto& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return read_json(stats);
}

std::uint64_t cycles(const json& s) { return s.at("total_cycles").get<std::uint64_t>(); }
double overlap(const json& s) { return s.at("overlap").at("cube_vector").get<double>(); }
std::uint64_t compile_stat(const json& s, const std::string& key) { return s.at("compile").at(key).get<std::uint64_t>(); }

const std::string kForced2x8 = R"(workload.tiling={"conv1":{"m_blocks":2,"n_blocks":8}})";

}  // namespace

// ===========================================================================
// Passes, in-process.

TEST_CASE("compiler: BN folds into the conv and its kernel disappears", "[compiler][fold_bn]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = graph(kConvBnRelu);
    CompileOptions opt;
    const CompileResult folded = compile(g, ax, opt);
    CHECK(has_note(folded, "bn folded into conv"));
    for (const auto& o : ops(folded.stream)) CHECK(o.find("bn") == std::string::npos);
    CHECK(tasks_of(folded.stream, "conv+relu") > 0);

    opt.fold_bn = false;
    const CompileResult kept = compile(g, ax, opt);
    CHECK_FALSE(has_note(kept, "folded"));
    std::size_t bn_vector_tasks = 0;
    for (const Task& t : kept.stream.tasks)
        if (op_of(kept.stream, t).find("bn") != std::string::npos && t.core_type == CoreType::vector) ++bn_vector_tasks;
    CHECK(bn_vector_tasks > 0);
    CHECK(kept.kernels == folded.kernels + 1);
}

TEST_CASE("compiler: ReLU fuses into the conv's FixPipe, and is a Vector kernel again without fuse_activation",
          "[compiler][fusion]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = graph(kConvBnRelu);
    CompileOptions opt;
    const CompileResult fused = compile(g, ax, opt);
    CHECK(has_note(fused, "relu fused into conv (applied by FixPipe)"));
    CHECK(tasks_of(fused.stream, "relu") == 0);
    for (const Task& t : fused.stream.tasks)
        if (op_of(fused.stream, t) == "conv+relu") CHECK(t.core_type == CoreType::cube);

    opt.fuse_activation = false;
    const CompileResult split = compile(g, ax, opt);
    CHECK_FALSE(has_note(split, "applied by FixPipe"));
    CHECK(tasks_of(split.stream, "conv+relu") == 0);
    CHECK(tasks_of(split.stream, "conv") > 0);
    CHECK(tasks_of(split.stream, "relu") > 0);
    for (const Task& t : split.stream.tasks)
        if (op_of(split.stream, t) == "relu") CHECK(t.core_type == CoreType::vector);
    CHECK(split.kernels == fused.kernels + 1);
    CHECK(split.tasks == fused.tasks + tasks_of(split.stream, "relu") +
                             (split.format_converts - fused.format_converts));
}

// DeepLabv3's ASPP: a 3x3 convolution dilated 12-36 on a 20x20 map, the
// padding as wide as the dilation. The tiler took the window as 3 rows.
TEST_CASE("compiler: a dilated convolution's tasks read the input rows its dilated window spans", "[compiler][conv]") {
    const auto a_bytes = [](int dilation) {
        const std::string d = std::to_string(dilation);
        const CompileResult r = compile(
            graph(graph_text(R"("x": {"shape": [1, 960, 20, 20], "dtype": "fp16", "input": true},
                                "w": {"shape": [256, 960, 3, 3], "dtype": "fp16", "const": true},
                                "y": {"shape": [1, 256, 20, 20]})",
                             R"({"name": "aspp", "op": "Conv2D", "inputs": ["x", "w"], "outputs": ["y"],
                                 "attrs": {"kernel": [3, 3], "stride": 1, "pad": )" + d + R"(, "dilation": )" + d + "}}",
                             R"(["y"])")),
            chip(kA2), CompileOptions{});
        std::uint64_t most = 0, sum = 0;
        for (const Task& t : r.stream.tasks) {
            most = std::max(most, t.params.a_bytes);
            sum += t.params.a_bytes;
        }
        CHECK(most <= 960 * 20 * 20 * 2);  // never more than the whole input
        return sum;
    };
    const std::uint64_t d1 = a_bytes(1), d12 = a_bytes(12), d36 = a_bytes(36);
    CAPTURE(d1, d12, d36);
    CHECK(d12 > d1);   // each row block's window spans 25 rows, not 3
    CHECK(d36 >= d12);  // ... 73 rows: the whole 20-row map
}

// A reduction over the last axis keeps the rows: each task reads its own
// rows once: the tasks together read the input exactly once.
TEST_CASE("compiler: a ReduceSum over the last axis reads each input row once", "[compiler][tiler]") {
    for (const std::string shape : {"[1024, 4096]", "[4, 256, 4096]"}) {
        CAPTURE(shape);
        const std::string out = shape.substr(0, shape.rfind(',')) + ", 1]";
        const CompileResult r = compile(
            graph(graph_text(R"("x": {"shape": )" + shape + R"(, "dtype": "fp16", "input": true},
                                "y": {"shape": )" + out + "}",
                             R"({"name": "red", "op": "ReduceSum", "inputs": ["x"], "outputs": ["y"],
                                 "attrs": {"axes": [-1], "keepdims": 1}})",
                             R"(["y"])")),
            chip(kA2), CompileOptions{});
        std::uint64_t read = 0, tasks = 0;
        for (const Task& t : r.stream.tasks) {
            read += t.params.bytes;
            ++tasks;
        }
        CHECK(tasks > 1);
        CHECK(read == 1024u * 4096 * 2);
    }
}

// Task and event ids come from kernel names: a fused chain "a+b" and a node
// named "a+b" gave two tasks "a+b#0" (exit 2 on the compiler's own stream).
TEST_CASE("compiler: a fused chain named like another node gets ids of its own", "[compiler][fusion][sync]") {
    const std::string tensors = R"("x": {"shape": [1, 64, 56, 56], "dtype": "fp16", "input": true},
        "ta": {"shape": [1, 64, 56, 56]}, "tb": {"shape": [1, 64, 56, 56]}, "tc": {"shape": [1, 64, 56, 56]},
        "td": {"shape": [1, 64, 56, 56]}, "te": {"shape": [1, 64, 56, 56]})";
    const std::string nodes = R"({"name": "a", "op": "ReLU", "inputs": ["x"], "outputs": ["ta"]},
        {"name": "b", "op": "ReLU", "inputs": ["ta"], "outputs": ["tb"]},
        {"name": "c", "op": "Softmax", "inputs": ["tb"], "outputs": ["tc"], "attrs": {"axis": -1}},
        {"name": "a+b", "op": "ReLU", "inputs": ["tc"], "outputs": ["td"]},
        {"name": "e", "op": "Softmax", "inputs": ["td"], "outputs": ["te"], "attrs": {"axis": -1}})";
    for (const SyncGranularity sync : {SyncGranularity::op, SyncGranularity::tile}) {
        CompileOptions opt;
        opt.sync = sync;
        const CompileResult r = compile(graph(graph_text(tensors, nodes, R"(["te"])")), chip(kA2), opt);
        std::set<std::string> ids, events;
        for (const Task& t : r.stream.tasks) CHECK(ids.insert(t.id).second);
        for (const auto& e : r.stream.events) CHECK(events.insert(e.id).second);
        CHECK(ids.count("a+b#0") == 1);
        CHECK(ids.count("a+b~2#0") == 1);
    }
}

// A note per fused node quoting the whole fused name grew as N^2 / 2.
TEST_CASE("compiler: a chain of fused element-wise nodes compiles to notes and names linear in its length",
          "[compiler][fusion]") {
    // Bytes of notes, task ids and labels for a chain of n ReLUs (one kernel).
    const auto text_bytes = [](int n) {
        std::string tensors = R"("x": {"shape": [1, 64, 56, 56], "dtype": "fp16", "input": true})", nodes;
        std::string cur = "x";
        for (int i = 0; i < n; ++i) {
            const std::string o = "relu" + std::to_string(i);
            tensors += R"(, ")" + o + R"(": {"shape": [1, 64, 56, 56]})";
            nodes += std::string(i ? ", " : "") + R"({"name": ")" + o + R"(", "op": "ReLU", "inputs": [")" + cur +
                     R"("], "outputs": [")" + o + R"("]})";
            cur = o;
        }
        const CompileResult r = compile(graph(graph_text(tensors, nodes, "[\"" + cur + "\"]")), chip(kA2), CompileOptions{});
        CHECK(r.kernels == 1);
        CHECK(has_note(r, cur + " fused into the Vector chain of relu0"));
        std::size_t bytes = 0;
        for (const std::string& note : r.notes) bytes += note.size();
        for (const Task& t : r.stream.tasks) bytes += t.id.size();
        for (const std::string& name : r.stream.names) bytes += name.size();
        return static_cast<double>(bytes);
    };
    const double b2000 = text_bytes(2000), b4000 = text_bytes(4000);
    CAPTURE(b2000, b4000);
    CHECK(b4000 < 2.2 * b2000);  // twice the nodes, twice the text (quadratic: four times)
}

TEST_CASE("compiler: fuse_vector merges an element-wise chain into one kernel that moves fewer GM bytes",
          "[compiler][fusion]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = graph(kVectorChain);
    CompileOptions opt;
    const CompileResult fused = compile(g, ax, opt);
    opt.fuse_vector = false;
    const CompileResult split = compile(g, ax, opt);

    CHECK(has_note(fused, "gelu fused into the Vector chain of add"));
    CHECK(has_note(fused, "mul fused into the Vector chain of add"));
    CHECK(fused.kernels == 1);
    CHECK(split.kernels == 3);
    const auto t = static_cast<std::uint64_t>(tiling(fused, "add+gelu+mul").tiles);
    REQUIRE(t > 0);
    CHECK(fused.tasks == t);
    CHECK(split.tasks == static_cast<std::size_t>(tiling(split, "add").tiles + tiling(split, "gelu").tiles +
                                                  tiling(split, "mul").tiles));
    CHECK(fused.tasks < split.tasks);
    // Fused: x in, y out, plus each tile reads the two broadcast constants.
    CHECK(fused.gm_bytes == 2 * kChainBytes + 2 * t * kChainConstBytes);
    // Split: three passes over the data, each in and out; add and mul each
    // read their constant once per tile.
    const auto ta = static_cast<std::uint64_t>(tiling(split, "add").tiles);
    const auto tm = static_cast<std::uint64_t>(tiling(split, "mul").tiles);
    CHECK(split.gm_bytes == 6 * kChainBytes + (ta + tm) * kChainConstBytes);
    CHECK(fused.gm_bytes < split.gm_bytes);
    // The same Vector work either way: a task's cycles_per_repeat is per
    // 256 B repeat of its input, scaled from the kernel's cost per output
    // repeat, and the fused kernel's cost is the sum of its ops' costs.
    auto v_work = [](const CompileResult& r) {
        double w = 0;
        for (const Task& k : r.stream.tasks) w += k.params.cycles_per_repeat * static_cast<double>(k.params.bytes) / 256.0;
        return w;
    };
    CHECK(v_work(fused) == Approx(v_work(split)).epsilon(1e-9));
}

TEST_CASE("compiler: layout hoists the conversion above an element-wise op to the NCHW input", "[compiler][layout]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = graph(kMulConv);
    CompileOptions opt;
    const CompileResult hoisted = compile(g, ax, opt);
    CHECK(has_note(hoisted, "hoisted a conversion to NC1HWC0 above norm"));
    CHECK(has_note(hoisted, "FormatConvert x NCHW -> NC1HWC0"));
    CHECK(ops_starting(hoisted.stream, "trans_x_") == std::set<std::string>{"trans_x_NC1HWC0"});
    CHECK(ops_starting(hoisted.stream, "trans_xn").empty());
    // The conv output goes back to NCHW for the framework: one more.
    CHECK(ops_starting(hoisted.stream, "trans_") == std::set<std::string>{"trans_x_NC1HWC0", "trans_y_NCHW"});

    opt.hoist_layout = false;
    const CompileResult plain = compile(g, ax, opt);
    CHECK_FALSE(has_note(plain, "hoisted a conversion"));
    CHECK(ops_starting(plain.stream, "trans_x_").empty());
    CHECK(ops_starting(plain.stream, "trans_xn_").size() == 1);
    CHECK(has_note(plain, "FormatConvert xn NCHW -> NC1HWC0"));
}

TEST_CASE("compiler: a Cube that converts on the way needs no FormatConvert around a MatMul", "[compiler][layout]") {
    // x [256, 512] ND (an activation) times a weight [512, 384]; y goes back
    // to the framework plain. a2's MTE2 makes x fractal as it loads it and
    // its FixPipe writes y plain (Ascend C ND2NZ / NZ2ND data paths); ax300's
    // Cube does neither, so a TransData task converts each side.
    const Graph g = graph(graph_text(R"("x": {"shape": [256, 512], "input": true},
                                        "w": {"shape": [512, 384], "const": true})",
                                     R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]})",
                                     R"(["y"])"));
    ChipParams a2 = chip(kA2);
    REQUIRE(a2.cube.mte2_nd2nz);
    REQUIRE(a2.cube.fixpipe_nz2nd);
    CHECK(ops_starting(compile(g, a2, {}).stream, "trans_").empty());
    a2.cube.fixpipe_nz2nd = false;
    CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") == std::set<std::string>{"trans_y_ND"});
    a2.cube.mte2_nd2nz = false;
    CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") == std::set<std::string>{"trans_x_FRACTAL_NZ", "trans_y_ND"});
    a2.cube.fixpipe_nz2nd = true;
    CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") == std::set<std::string>{"trans_x_FRACTAL_NZ"});
    const ChipParams ax = chip(kAx300);
    CHECK_FALSE(ax.cube.mte2_nd2nz);
    CHECK(ops_starting(compile(g, ax, {}).stream, "trans_") == std::set<std::string>{"trans_x_FRACTAL_NZ", "trans_y_ND"});
}

TEST_CASE("compiler: converting on the way covers plain operands only, and FixPipe alone keeps a result fractal for "
          "the next MatMul", "[compiler][layout]") {
    ChipParams a2 = chip(kA2);
    SECTION("a convolution's NC1HWC0 output into a MatMul is still converted on a2") {
        const Graph g = graph(graph_text(R"("x": {"shape": [1, 16, 16, 16], "input": true},
                                            "w": {"shape": [32, 16, 3, 3], "const": true},
                                            "p": {"shape": [16, 8], "const": true})",
                                         R"({"name": "conv", "op": "Conv2D", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"pad": 1}},
                                            {"name": "mm", "op": "MatMul", "inputs": ["c", "p"], "outputs": ["y"]})",
                                         R"(["y"])"));
        // MTE2's ND2NZ path reads ND rows, not NC1HWC0 blocks; y leaves plain.
        CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") ==
              std::set<std::string>{"trans_x_NC1HWC0", "trans_c_FRACTAL_NZ"});
    }
    SECTION("with FixPipe's path alone a MatMul feeding a MatMul writes FRACTAL_NZ") {
        const Graph g = graph(graph_text(R"("x": {"shape": [256, 512], "input": true},
                                            "w1": {"shape": [512, 384], "const": true},
                                            "w2": {"shape": [384, 128], "const": true})",
                                         R"({"name": "mm1", "op": "MatMul", "inputs": ["x", "w1"], "outputs": ["h"]},
                                            {"name": "mm2", "op": "MatMul", "inputs": ["h", "w2"], "outputs": ["y"]})",
                                         R"(["y"])"));
        a2.cube.mte2_nd2nz = false;
        // h plain would need converting back for mm2; y goes out plain.
        CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") == std::set<std::string>{"trans_x_FRACTAL_NZ"});
        a2.cube.fixpipe_nz2nd = false;
        CHECK(ops_starting(compile(g, a2, {}).stream, "trans_") == std::set<std::string>{"trans_x_FRACTAL_NZ", "trans_y_ND"});
        a2.cube.mte2_nd2nz = a2.cube.fixpipe_nz2nd = true;
        CHECK(ops_starting(compile(g, a2, {}).stream, "trans_").empty());
    }
}

TEST_CASE("compiler: an NC1HWC0 input needs no input conversion", "[compiler][layout]") {
    const ChipParams ax = chip(kAx300);
    for (const bool hoist : {true, false}) {
        CAPTURE(hoist);
        CompileOptions opt;
        opt.hoist_layout = hoist;
        opt.input_layout = Layout::NC1HWC0;
        const CompileResult r = compile(graph(kMulConv), ax, opt);
        // Only the output goes back to NCHW for the framework.
        const auto converts = ops_starting(r.stream, "trans_");
        REQUIRE(converts.size() == 1);
        CHECK(converts.begin()->rfind("trans_y_NCHW", 0) == 0);
        opt.input_layout = Layout::NCHW;
        const CompileResult nchw = compile(graph(kMulConv), ax, opt);
        CHECK(r.format_converts < nchw.format_converts);
        CHECK(r.format_convert_bytes < nchw.format_convert_bytes);
    }
}

TEST_CASE("compiler: conversions of a tensor with two Cube consumers merge into one", "[compiler][layout]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = graph(kTwoConvs);
    CompileOptions opt;
    const CompileResult merged = compile(g, ax, opt);
    CHECK(ops_starting(merged.stream, "trans_x_").size() == 1);
    opt.hoist_layout = false;
    const CompileResult separate = compile(g, ax, opt);
    CHECK(ops_starting(separate.stream, "trans_x_").size() == 2);
    // Each conversion reads all of x once.
    const std::uint64_t x_bytes = 16 * 16 * 16 * 2;
    CHECK(separate.format_convert_bytes - merged.format_convert_bytes == x_bytes);
}

TEST_CASE("compiler: op-level sync uses one counting event per producer op, counting its tiles", "[compiler][sync]") {
    const ChipParams ax = chip(kAx300);
    for (const std::string name : {"convbnrelu", "resnet50"}) {
        CAPTURE(name);
        CompileOptions opt;
        opt.sync = SyncGranularity::op;
        const CompileResult r = compile(read_graph(model_file(name)), ax, opt);
        const TaskStream& ts = r.stream;
        std::size_t op_events = 0;
        for (std::size_t e = 0; e < ts.events.size(); ++e) {
            const EventDecl& ev = ts.events[e];
            if (ev.id.rfind("op:", 0) != 0) continue;
            ++op_events;
            const std::string op = ev.id.substr(3);
            CAPTURE(ev.id);
            CHECK(ev.count == tasks_of(ts, op));
            // Every tile of that op signals it, nothing else does.
            for (const Task& t : ts.tasks) {
                const bool signals = std::count(t.signal.begin(), t.signal.end(), static_cast<EventIndex>(e)) == 1;
                CHECK(signals == (op_of(ts, t) == op));
            }
        }
        CHECK(op_events > 0);
        CHECK(op_events < r.kernels);  // the last op has no consumer
        // Waits are op events, or the per-tile event of a fused Cube tile.
        for (const Task& t : ts.tasks)
            for (EventIndex e : t.wait) {
                const std::string& id = ts.events[e].id;
                CHECK((id.rfind("op:", 0) == 0 || ts.events[e].count == 1));
            }
    }
}

TEST_CASE("compiler: tile-level sync uses per-tile events and no redundant waits", "[compiler][sync]") {
    const ChipParams ax = chip(kAx300);
    SECTION("a diamond of Vector ops") {
        const CompileResult r = compile(graph(kDiamond), ax, CompileOptions{});
        const std::size_t tiles = static_cast<std::size_t>(tiling(r, "add").tiles);
        REQUIRE(tiles == static_cast<std::size_t>(tiling(r, "r").tiles));
        REQUIRE(tiles == static_cast<std::size_t>(tiling(r, "s").tiles));
        // s_i <- r_i; add_i <- r_i, s_i; the add_i <- r_i edge is redundant.
        CHECK(r.edges_before_reduction == 3 * tiles);
        CHECK(r.edges_after_reduction == 2 * tiles);
        check_no_redundant_wait(r.stream);
    }
    for (const std::string name : {"convbnrelu", "resnet50", "bert_layer"}) {
        SECTION(name) {
            const CompileResult r = compile(read_graph(model_file(name)), ax, CompileOptions{});
            std::map<EventIndex, int> signallers;
            for (const Task& t : r.stream.tasks)
                for (EventIndex e : t.signal) ++signallers[e];
            // Per-tile events, except where a task reads every tile of an op:
            // it waits for the op's counting event, which all its tiles signal.
            std::size_t op_events = 0;
            for (std::size_t e = 0; e < r.stream.events.size(); ++e) {
                CAPTURE(r.stream.events[e].id);
                const bool op = r.stream.events[e].id.rfind("op:", 0) == 0;
                op_events += op;
                CHECK(signallers[static_cast<EventIndex>(e)] == static_cast<int>(r.stream.events[e].count));
                if (!op) CHECK(r.stream.events[e].count == 1);
                if (op) CHECK(r.stream.events[e].count > 1);
            }
            if (name != "convbnrelu") CHECK(op_events > 0);
            CHECK(r.edges_after_reduction <= r.edges_before_reduction);
            check_no_redundant_wait(r.stream);
        }
    }
    SECTION("op-level sync on resnet50 has no redundant waits either") {
        CompileOptions opt;
        opt.sync = SyncGranularity::op;
        check_no_redundant_wait(compile(read_graph(model_file("resnet50")), ax, opt).stream);
    }
}

TEST_CASE("compiler: the dispatcher pins every task to a core in range and names its stream after it",
          "[slow][compiler][dispatcher]") {
    for (const std::string& chip_file : {kAx300, kA2}) {
        const ChipParams c = chip(chip_file);
        for (const std::string name : {"convbnrelu", "resnet50", "bert_layer", "segnet"}) {
            CAPTURE(chip_file, name);
            const CompileResult r = compile(read_graph(model_file(name)), c, CompileOptions{});
            std::set<int> cube_cores, vector_cores;
            for (const Task& t : r.stream.tasks) {
                REQUIRE(t.core_type != CoreType::scalar);
                const int count = t.core_type == CoreType::cube ? c.cube.count : c.vector.count;
                CHECK(t.core >= 0);
                CHECK(t.core < count);
                CHECK(r.stream.streams.at(t.stream) == std::string(to_string(t.core_type)) + std::to_string(t.core));
                (t.core_type == CoreType::cube ? cube_cores : vector_cores).insert(t.core);
            }
            // Work is spread: a model with enough tiles uses every core
            // it was planned for.
            if (name != "convbnrelu") {
                CHECK(static_cast<int>(cube_cores.size()) == r.cube_cores_planned);
                CHECK(static_cast<int>(vector_cores.size()) == r.vector_cores_planned);
            }
        }
    }
}

TEST_CASE("compiler: fusion_boundary=fuse|split forces the Cube->Vector boundary either way", "[compiler][fusion]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = read_graph(model_file("convbnrelu"));
    CompileOptions opt;
    opt.fuse_activation = false;
    opt.boundary = FusionBoundary::fuse;
    const CompileResult fused = compile(g, ax, opt);
    opt.boundary = FusionBoundary::split;
    const CompileResult split = compile(g, ax, opt);
    opt.boundary = FusionBoundary::automatic;
    const CompileResult chosen = compile(g, ax, opt);

    CHECK(has_note(fused, "fusion boundary conv1 -> relu1: fuse (forced)"));
    CHECK(has_note(split, "fusion boundary conv1 -> relu1: split (forced)"));
    CHECK(has_note(chosen, "fusion boundary conv1 -> relu1: fused ~"));
    // Fused: one ReLU tile per conv tile, reading the tile in place (not HBM).
    REQUIRE(tasks_of(fused.stream, "relu1") == tasks_of(fused.stream, "conv1"));
    for (const Task& t : fused.stream.tasks) {
        if (op_of(fused.stream, t) == "conv1") CHECK(t.params.dst != Space::hbm);
        if (op_of(fused.stream, t) == "relu1") CHECK(t.params.src != Space::hbm);
    }
    for (const Task& t : split.stream.tasks) {
        if (op_of(split.stream, t) == "conv1") CHECK(t.params.dst == Space::hbm);
        if (op_of(split.stream, t) == "relu1") CHECK(t.params.src == Space::hbm);
    }
}

TEST_CASE("compiler: a forced tiling gives the requested tile counts", "[compiler][tiler]") {
    const ChipParams ax = chip(kAx300);
    for (const std::int64_t batch : {1, 2}) {
        CAPTURE(batch);
        const Graph g = read_graph(model_file("convbnrelu"), {{"batch", batch}});
        const CompileResult free = compile(g, ax, CompileOptions{});
        CompileOptions opt;
        opt.tiling["conv1"] = ForcedTiling{2, 8, 0};
        const CompileResult forced = compile(g, ax, opt);
        const TilingChoice& f = tiling(forced, "conv1+relu1");
        CHECK(f.forced);
        CHECK(f.tiles == 16 * batch);
        CHECK_THAT(f.shape, Contains("2 row blocks per image x 8 channel blocks"));
        std::size_t cube = 0;
        std::set<std::pair<std::uint64_t, std::uint64_t>> shapes;
        for (const Task& t : forced.stream.tasks)
            if (t.core_type == CoreType::cube) {
                ++cube;
                shapes.insert({t.params.m, t.params.n});
            }
        CHECK(cube == static_cast<std::size_t>(16 * batch));
        // 56 rows / 2 = 28 rows x 56 columns; 128 channels / 8 = 16.
        CHECK(shapes == std::set<std::pair<std::uint64_t, std::uint64_t>>{{28 * 56, 16}});
        CHECK_FALSE(tiling(free, "conv1+relu1").forced);
    }
    SECTION("a forced Vector tile count") {
        CompileOptions opt;
        opt.fuse_activation = false;
        opt.boundary = FusionBoundary::split;
        opt.tiling["relu1"] = ForcedTiling{0, 0, 5};
        const CompileResult r = compile(read_graph(model_file("convbnrelu")), ax, opt);
        CHECK(tiling(r, "relu1").forced);
        CHECK(tasks_of(r.stream, "relu1") == 5);
    }
}

TEST_CASE("compiler: a bad forced tiling or an unknown node is an input error with a did-you-mean",
          "[compiler][tiler][errors]") {
    const ChipParams ax = chip(kAx300);
    const Graph g = read_graph(model_file("convbnrelu"));
    CompileOptions opt;
    opt.tiling["conv1"] = ForcedTiling{2, 9, 0};  // 128 channels are 8 blocks of 16
    std::string err = error_of([&] { compile(g, ax, opt); });
    CHECK_THAT(err, Contains("workload.tiling.conv1"));
    CHECK_THAT(err, Contains("2 x 9 blocks"));
    opt.tiling["conv1"] = ForcedTiling{57, 1, 0};  // 56 output rows
    err = error_of([&] { compile(g, ax, opt); });
    CHECK_THAT(err, Contains("workload.tiling.conv1"));
    CHECK_THAT(err, Contains("56 rows (at most 56 blocks of 1)"));

    // MatMul rows are cut in blocks of 16: bert's FFN has M = 128 rows.
    const Graph bert = read_graph(model_file("bert_layer"));
    CompileOptions mm;
    mm.tiling["ffn.up.matmul"] = ForcedTiling{20, 2, 0};
    err = error_of([&] { compile(bert, ax, mm); });
    CHECK_THAT(err, Contains("workload.tiling.ffn.up.matmul"));
    CHECK_THAT(err, Contains("at most 8 blocks of 16"));
    mm.tiling["ffn.up.matmul"] = ForcedTiling{8, 2, 0};
    const CompileResult ok = compile(bert, ax, mm);
    const auto up = std::find_if(ok.tilings.begin(), ok.tilings.end(),
                                 [](const TilingChoice& c) { return c.kernel.rfind("ffn.up.matmul", 0) == 0; });
    REQUIRE(up != ok.tilings.end());
    CHECK(up->tiles == 8 * 2);

    WorkloadParams w = default_workload_params("graph");
    w.file = model_file("convbnrelu");
    w.graph.tiling["conv2"] = ForcedTiling{2, 0, 0};
    err = error_of([&] { compile_workload(w, ax); });
    CHECK_THAT(err, Contains("workload.tiling.conv2: no node of that name"));
    CHECK_THAT(err, Contains("did you mean 'conv1'"));

    // The entries themselves are checked when the workload section is read.
    json section = {{"kind", "graph"}, {"tiling", {{"conv1", {{"m_block", 2}}}}}};
    err = error_of([&] { read_workload_params(section); });
    CHECK_THAT(err, Contains("workload.tiling.conv1.m_block"));
    CHECK_THAT(err, Contains("did you mean 'm_blocks'"));
    section["tiling"] = {{"conv1", {{"m_blocks", 0}}}};
    CHECK_THAT(error_of([&] { read_workload_params(section); }), Contains("expected an integer in [1, 4096]"));
}

TEST_CASE("compiler: a forced split-K count and a FormatConvert's tile count", "[compiler][tiler]") {
    const ChipParams ax = chip(kAx300);
    const Graph bert = read_graph(model_file("bert_layer"));
    // BERT's Q projection (M 128, N 768, K 768, result to GM): 2 x 4 blocks
    // in 2 K parts, each part writing its whole block (atomic add).
    CompileOptions opt;
    opt.tiling["attn.q.matmul"] = ForcedTiling{2, 4, 0, 2};
    const CompileResult r = compile(bert, ax, opt);
    CHECK(tiling(r, "attn.q.matmul").forced);
    CHECK(tiling(r, "attn.q.matmul").tiles == 2 * 4 * 2);
    std::set<std::uint64_t> k_extents;
    for (const Task& t : r.stream.tasks)
        if (op_of(r.stream, t) == "attn.q.matmul") k_extents.insert(t.params.k);
    CHECK(k_extents == std::set<std::uint64_t>{384});
    // A Cube kernel with a fused epilogue (FFN up: bias + GELU) cannot split K,
    // and K has at most K / 16 parts.
    opt.tiling = {{"ffn.up.matmul", ForcedTiling{1, 4, 0, 2}}};
    std::string err = error_of([&] { compile(bert, ax, opt); });
    CHECK_THAT(err, Contains("workload.tiling.ffn.up.matmul.k_blocks: 2 K parts"));
    CHECK_THAT(err, Contains("goes to GM unfused"));
    opt.tiling = {{"attn.q.matmul", ForcedTiling{1, 1, 0, 64}}};
    CHECK_THAT(error_of([&] { compile(bert, ax, opt); }), Contains("K = 768 has at most 48 blocks of 16"));
    // The FormatConvert nodes the layout pass inserts take a tile count by the
    // name the compile report gives them; a misspelt one gets a did-you-mean.
    const Graph cbr = read_graph(model_file("convbnrelu"));
    CompileOptions fc;
    fc.tiling["trans_x_NC1HWC0"] = ForcedTiling{0, 0, 7};
    const CompileResult c = compile(cbr, ax, fc);
    CHECK(tasks_of(c.stream, "trans_x_NC1HWC0") == 7);
    CHECK(tiling(c, "trans_x_NC1HWC0").forced);
    fc.tiling = {{"trans_x_NC1HWCO", ForcedTiling{0, 0, 7}}};
    err = error_of([&] { compile(cbr, ax, fc); });
    CHECK_THAT(err, Contains("workload.tiling.trans_x_NC1HWCO: no node of that name"));
    CHECK_THAT(err, Contains("did you mean 'trans_x_NC1HWC0'"));
}

TEST_CASE("compiler: a row-wise kernel is cut into the fewest tiles with its largest tile", "[compiler][tiler]") {
    // ConvBNReLU's input conversion on a2 (56 rows): 48 vector cores ask for
    // 48 tiles, but 48 tiles of 56 rows still have tiles of 2 rows, as 28
    // do; the other 20 would only pay dispatch and task starts.
    const CompileResult r = compile(read_graph(model_file("convbnrelu")), chip(kA2), CompileOptions{});
    CHECK(tasks_of(r.stream, "trans_x_NC1HWC0") == 28);
    for (const Task& t : r.stream.tasks) {
        if (op_of(r.stream, t) != "trans_x_NC1HWC0") continue;
        const std::string& label = r.stream.name(t.tile);  // n0/r<lo>-<hi>
        CAPTURE(label);
        const auto dash = label.find('-');
        REQUIRE(label.rfind("n0/r", 0) == 0);
        REQUIRE(dash != std::string::npos);
        CHECK(std::stoi(label.substr(dash + 1)) - std::stoi(label.substr(4, dash - 4)) == 2);
    }
}

TEST_CASE("compiler: a producer is split into waves by how its Cube consumer runs", "[compiler][tiler]") {
    // ConvBNReLU on ax300: the conv runs in several waves over the 4 Cube
    // cores, so its input conversion is cut finer than one wave, rows first:
    // the first Cube wave starts after the first small tiles, and later ones
    // find their rows ready. With 8 vector cores the same holds (one wave of
    // 8 tiles would make every Cube tile wait for all of them).
    for (const int vectors : {4, 8}) {
        ChipParams c = chip(kAx300);
        c.vector.count = vectors;
        const CompileResult r = compile(read_graph(model_file("convbnrelu")), c, CompileOptions{});
        CAPTURE(vectors);
        CHECK(tasks_of(r.stream, "trans_x_NC1HWC0") > static_cast<std::size_t>(vectors));
    }
    // BERT-512 on a2: the softmax feeds p·v, whose 24 tiles are one wave of
    // the 24 Cube cores: each waits for its rows either way, so the softmax
    // is not cut into more waves than its size needs, at any HBM latency
    // (the tiler's cut: a plan for fewer vector cores cuts otherwise).
    std::set<std::size_t> softmax_tiles;
    CompileOptions all_vectors;
    all_vectors.explore_vector_cores = false;
    for (const double latency : {300.0, 150.0}) {
        ChipParams c = chip(kA2);
        c.hbm.latency_ns = latency;
        const CompileResult r = compile(read_graph(model_file("bert_layer"), {{"seq_len", 512}}), c, all_vectors);
        softmax_tiles.insert(tasks_of(r.stream, "attn.softmax"));
    }
    CHECK(softmax_tiles.size() == 1);
}

TEST_CASE("compiler: compiled streams always carry reads and writes", "[compiler][stream]") {
    const ChipParams ax = chip(kAx300);
    for (const std::string name : {"convbnrelu", "resnet50", "bert_layer", "segnet"}) {
        for (const bool op_sync : {false, true}) {
            CAPTURE(name, op_sync);
            CompileOptions opt;
            opt.sync = op_sync ? SyncGranularity::op : SyncGranularity::tile;
            const CompileResult r = compile(read_graph(model_file(name)), ax, opt);
            REQUIRE(r.tasks == r.stream.tasks.size());
            std::uint64_t gm = 0;
            for (const Task& t : r.stream.tasks) {
                CAPTURE(t.id);
                CHECK_FALSE(t.reads.empty());
                CHECK_FALSE(t.writes.empty());
                for (const Region& rg : t.reads) gm += rg.total();
                for (const Region& rg : t.writes) gm += rg.total();
            }
            CHECK(gm == r.gm_bytes);
        }
    }
}

// ===========================================================================
// End to end through the binary.

TEST_CASE("compiler e2e: ConvBNReLU on ax300, tile sync overlaps more and runs faster than op sync",
          "[compiler][e2e]") {
    TempDir tmp;
    const std::string w = model_file("convbnrelu");
    for (const bool forced : {false, true}) {
        CAPTURE(forced);
        std::vector<std::string> extra;
        if (forced) extra.push_back(kForced2x8);
        auto with = [&](const std::string& s) {
            auto v = extra;
            v.push_back(s);
            return v;
        };
        const json op = run_stats(tmp, kAx300, w, with("workload.sync=op"));
        const json tile = run_stats(tmp, kAx300, w, with("workload.sync=tile"));
        INFO("op: " << cycles(op) << " cycles, overlap " << overlap(op) << "; tile: " << cycles(tile)
                    << " cycles, overlap " << overlap(tile));
        CHECK(overlap(tile) > overlap(op) + 0.2);
        CHECK(cycles(tile) < cycles(op));
        // Finer events; under tile sync the compiler may also cut the input
        // conversions finer so that Cube starts earlier. With the tiling
        // forced, the same Cube work (free, the plan search may pick other
        // block counts for each sync, as the die runs them).
        CHECK(compile_stat(tile, "events") > compile_stat(op, "events"));
        if (forced) {
            CHECK(compile_stat(tile, "tasks") >= compile_stat(op, "tasks"));
            CHECK(op.at("tasks").at("by_kernel").at("matmul") == tile.at("tasks").at("by_kernel").at("matmul"));
            CHECK(tile.at("tasks").at("by_kernel").at("matmul") == 16);
        }
        // BN folded, ReLU fused: the only Vector tasks are layout conversions.
        CHECK(tile.at("tasks").at("by_kernel").at("vector") == compile_stat(tile, "format_converts"));
    }
}

TEST_CASE("compiler e2e: the compile report lists the passes and the tiles", "[compiler][e2e]") {
    TempDir tmp;
    const std::string out = tmp.path("c.jsonl");
    Result r = run_npusim(tmp, {"compile", "--chip", kAx300, "--workload", model_file("convbnrelu"), "--emit-tasks", out});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("bn1 folded into conv1"));
    CHECK_THAT(r.out, Contains("relu1 fused into conv1 (applied by FixPipe)"));
    CHECK_THAT(r.out, Contains("tile: conv1+relu1"));
    r = run_npusim(tmp, {"compile", "--chip", kAx300, "--workload", model_file("convbnrelu"), "--set", kForced2x8,
                     "--set", "workload.passes.fuse_activation=false", "--emit-tasks", out});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("2 row blocks per image x 8 channel blocks (forced)"));
    CHECK_THAT(r.out, Contains("tile: relu1"));
    // Every emitted task line carries reads and writes.
    std::ifstream in(out);
    std::string line;
    int tasks = 0;
    while (std::getline(in, line)) {
        const json j = json::parse(line);
        if (!j.contains("id")) continue;
        ++tasks;
        CAPTURE(line.substr(0, 200));
        CHECK(j.at("params").at("reads").size() > 0);
        CHECK(j.at("params").at("writes").size() > 0);
    }
    CHECK(tasks > 16);
}

TEST_CASE("compiler e2e: layout hoisting on segnet cuts FormatConvert bytes and cycles", "[slow][compiler][e2e][layout]") {
    TempDir tmp;
    const std::string w = model_file("segnet");
    const json on = run_stats(tmp, kAx300, w, {"workload.passes.hoist_layout=true"});
    const json off = run_stats(tmp, kAx300, w, {"workload.passes.hoist_layout=false"});
    INFO("hoist: " << compile_stat(on, "format_convert_bytes") << " B, " << cycles(on) << " cycles; no hoist: "
                   << compile_stat(off, "format_convert_bytes") << " B, " << cycles(off) << " cycles");
    CHECK(compile_stat(on, "format_converts") < compile_stat(off, "format_converts"));
    CHECK(compile_stat(on, "format_convert_bytes") < compile_stat(off, "format_convert_bytes"));
    // On ax300 the four Vector cores convert behind the Cube's work, so the
    // saved bytes barely show, and the two graphs tile differently enough
    // that near-ties of the tiling estimate decide (measured: hoisted
    // 726211, not 718995 cycles, +1.0%): no worse than 2% is all that holds
    // there. On a2, whose conversions are on
    // the critical path, the saving is about a sixteenth of the run (263763
    // vs 281264; a fifth before the L2 looked up every region a transfer
    // covers, when the conversions' re-reads were miscounted as HBM misses).
    CHECK(cycles(on) < 1.02 * cycles(off));
    const json on_a2 = run_stats(tmp, kA2, w, {"workload.passes.hoist_layout=true"});
    const json off_a2 = run_stats(tmp, kA2, w, {"workload.passes.hoist_layout=false"});
    INFO("a2: hoist " << cycles(on_a2) << " cycles, no hoist " << cycles(off_a2));
    CHECK(cycles(on_a2) < 0.96 * cycles(off_a2));
}

TEST_CASE("compiler e2e: converting on the Cube's own loads and stores saves BERT's TransData tasks on a2", "[compiler][e2e][layout]") {
    // BERT-128 on a2 with and without MTE2 ND2NZ / FixPipe NZ2ND: 53416
    // cycles with no FormatConvert, 61166 with the
    // conversions on Vector cores between every MatMul and its plain
    // neighbours (-12%). The converted bytes are on the critical path:
    // each MatMul waits for its operand's conversion, each LayerNorm or
    // Softmax for the result's.
    TempDir tmp;
    const std::string w = model_file("bert_layer");
    const json on = run_stats(tmp, kA2, w, {});
    const json off = run_stats(tmp, kA2, w, {"chip.cores.cube.mte2_nd2nz=false", "chip.cores.cube.fixpipe_nz2nd=false"});
    INFO("on the way: " << cycles(on) << " cycles; TransData: " << cycles(off) << " cycles, "
                        << compile_stat(off, "format_convert_bytes") << " B converted");
    CHECK(compile_stat(on, "format_converts") == 0u);
    CHECK(compile_stat(off, "format_converts") > 0u);
    CHECK(cycles(on) < 0.92 * cycles(off));
}

TEST_CASE("compiler e2e: an NC1HWC0 input removes segnet's input conversion", "[compiler][e2e][layout]") {
    TempDir tmp;
    const std::string w = model_file("segnet");
    // The same plans for both layouts (the searches off): only the layout differs.
    const std::string fixed[] = {"workload.passes.explore_cube_cores=false", "workload.passes.search_cube_plans=false",
                                 "workload.passes.explore_vector_cores=false"};
    const json nchw = run_stats(tmp, kAx300, w, {"workload.input_layout=NCHW", fixed[0], fixed[1], fixed[2]});
    const json nc1 = run_stats(tmp, kAx300, w, {"workload.input_layout=NC1HWC0", fixed[0], fixed[1], fixed[2]});
    CHECK(compile_stat(nc1, "format_converts") < compile_stat(nchw, "format_converts"));
    // Exactly the input [1,3,256,256] fp16 is no longer converted.
    CHECK(compile_stat(nchw, "format_convert_bytes") - compile_stat(nc1, "format_convert_bytes") == 3u * 256 * 256 * 2);
    CHECK(cycles(nc1) < cycles(nchw));
}

TEST_CASE("compiler e2e: a fused Vector chain moves fewer GM bytes and takes fewer cycles", "[compiler][e2e][fusion]") {
    TempDir tmp;
    SECTION("bert_layer") {
        const std::string w = model_file("bert_layer");
        const json on = run_stats(tmp, kAx300, w, {"workload.passes.fuse_vector=true"});
        const json off = run_stats(tmp, kAx300, w, {"workload.passes.fuse_vector=false"});
        INFO("fused " << cycles(on) << " cycles, " << compile_stat(on, "gm_region_bytes") << " B; unfused " << cycles(off)
                      << " cycles, " << compile_stat(off, "gm_region_bytes") << " B");
        CHECK(compile_stat(on, "gm_region_bytes") < compile_stat(off, "gm_region_bytes"));
        CHECK(compile_stat(on, "tasks") < compile_stat(off, "tasks"));
        CHECK(cycles(on) < cycles(off));
    }
    SECTION("a small Vector-only chain") {
        const std::string w = tmp.write("chain.json", kVectorChain);
        const json on = run_stats(tmp, kAx300, w, {"workload.passes.fuse_vector=true"});
        const json off = run_stats(tmp, kAx300, w, {"workload.passes.fuse_vector=false"});
        CHECK(compile_stat(on, "gm_region_bytes") < compile_stat(off, "gm_region_bytes"));
        CHECK(cycles(on) < cycles(off));
    }
}

TEST_CASE("compiler e2e: an emitted stream replays to exactly the cycles of compiling on the fly", "[compiler][e2e]") {
    TempDir tmp;
    struct Case {
        std::string chip, model, sync;
    };
    for (const Case& c : {Case{kAx300, "convbnrelu", "tile"}, Case{kAx300, "convbnrelu", "op"},
                          Case{kAx300, "bert_layer", "tile"}, Case{kA2, "bert_layer", "op"}}) {
        CAPTURE(c.chip, c.model, c.sync);
        const std::string stream = tmp.path(c.model + "_" + c.sync + ".jsonl");
        const Result r = run_npusim(tmp, {"compile", "--chip", c.chip, "--workload", model_file(c.model), "--set",
                                      "workload.sync=" + c.sync, "--emit-tasks", stream});
        SHOW(r);
        REQUIRE(r.code == 0);
        const json fly = run_stats(tmp, c.chip, model_file(c.model), {"workload.sync=" + c.sync});
        const json replay = run_stats(tmp, c.chip, stream);
        CHECK(replay.at("total_ps") == fly.at("total_ps"));
        CHECK(cycles(replay) == cycles(fly));
        CHECK(replay.at("overlap") == fly.at("overlap"));
        CHECK(replay.at("tasks").at("count") == fly.at("compile").at("tasks"));
    }
}

TEST_CASE("compiler e2e: workload.batch=2 works on every model", "[slow][compiler][e2e]") {
    TempDir tmp;
    for (const std::string name : {"convbnrelu", "resnet50", "bert_layer", "segnet"}) {
        CAPTURE(name);
        const json one = run_stats(tmp, kAx300, model_file(name), {"workload.batch=1"});
        const json two = run_stats(tmp, kAx300, model_file(name), {"workload.batch=2"});
        CHECK(two.at("config").at("workload").at("batch") == 2);
        CHECK(compile_stat(two, "tasks") >= compile_stat(one, "tasks"));  // a batch may also be cut coarser
        CHECK(compile_stat(two, "gm_region_bytes") > compile_stat(one, "gm_region_bytes"));
        CHECK(cycles(two) > cycles(one));
        CHECK(cycles(two) <= 2 * cycles(one) + cycles(one) / 10);
    }
}

TEST_CASE("compiler e2e: bad graphs and bad tilings exit 2 with a clear message", "[compiler][e2e][errors]") {
    TempDir tmp;
    struct Bad {
        std::string file, text, message;
    };
    const std::string x = R"("x": {"shape": [1, 4, 8, 8], "input": true})";
    const std::vector<Bad> cases = {
        {"unknown_op.json", graph_text(x, R"({"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]})", R"(["y"])"),
         "nodes[0] (r): unknown op 'Relu' (did you mean 'ReLU'?)"},
        {"cycle.json",
         graph_text(x, R"({"name": "a", "op": "Add", "inputs": ["x", "b"], "outputs": ["a"]},
                          {"name": "b", "op": "ReLU", "inputs": ["a"], "outputs": ["b"]})",
                    R"(["b"])"),
         "cycle through nodes a -> b -> a"},
        {"dangling.json", graph_text(x, R"({"name": "a", "op": "Add", "inputs": ["x", "z"], "outputs": ["y"]})", R"(["y"])"),
         "dangling tensor 'z'"},
        {"mismatch.json",
         graph_text(x + R"(, "y": {"shape": [1, 4, 8, 9]})", R"({"name": "r", "op": "ReLU", "inputs": ["x"], "outputs": ["y"]})",
                    R"(["y"])"),
         "shape mismatch for output tensor 'y'"},
    };
    for (const Bad& b : cases) {
        CAPTURE(b.file);
        const std::string file = tmp.write(b.file, b.text);
        for (const std::string cmd : {"run", "compile"}) {
            std::vector<std::string> args = {cmd, "--chip", kAx300, "--workload", file};
            if (cmd == "compile") args.insert(args.end(), {"--emit-tasks", tmp.path("out.jsonl")});
            const Result r = run_npusim(tmp, args);
            SHOW(r);
            CHECK(r.code == 2);
            CHECK_THAT(r.err, Contains(b.file));
            CHECK_THAT(r.err, Contains(b.message));
            CHECK_THAT(r.err, !Contains("internal error"));
        }
    }
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", model_file("convbnrelu"), "--set",
                                  R"(workload.tiling={"conv2":{"m_blocks":2}})"});
    SHOW(r);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("did you mean 'conv1'"));
}

TEST_CASE("compiler: row ops carry their row length, element-wise ops are contiguous", "[compiler][vector]") {
    // Softmax over the last axis of [4096, 40] fp16: 80 B rows, each a
    // masked repeat; the ReLU after it is contiguous.
    const Graph g = graph(graph_text(R"("x": {"shape": [4096, 40], "input": true})",
                                     R"({"name": "sm", "op": "Softmax", "inputs": ["x"], "outputs": ["s"]},
                                        {"name": "relu", "op": "ReLU", "inputs": ["s"], "outputs": ["y"]})",
                                     R"(["y"])"));
    CompileOptions opt;
    opt.fuse_vector = false;  // keep the two kernels apart
    const ChipParams a2 = chip(kA2);
    const CompileResult r = compile(g, a2, opt);
    std::size_t rows = 0, flat = 0;
    double row_est = 0;
    for (const Task& t : r.stream.tasks) {
        if (t.kernel != npusim::Kernel::vector) continue;
        const std::string& op = r.stream.name(t.op);
        if (op.find("sm") != std::string::npos) {
            CHECK(t.params.row_bytes == 80);
            CHECK(t.params.bytes % 80 == 0);
            ++rows;
        } else if (op.find("relu") != std::string::npos) {
            CHECK(t.params.row_bytes == 0);
            ++flat;
        }
        CHECK(t.params.dtype == DType::fp16);
    }
    CHECK(rows > 0);
    CHECK(flat > 0);
    // The cost model sees the rows: the same bytes as 80 B rows cost more
    // V time than contiguous.
    compiler::VectorWork w{4096 * 80, 4096 * 80, 6, false, DType::fp16, 80};
    row_est = compiler::vector_task_cycles(w, a2, 1);
    w.row_bytes = 0;
    CHECK(row_est > 1.5 * compiler::vector_task_cycles(w, a2, 1));
}

TEST_CASE("compiler: a Concat copies its inputs in row blocks over the vector cores, and more of them is not slower",
          "[slow][compiler][tiler][e2e]") {
    // segnet's skip joins were one copy per input: an encoder map copied in
    // one 170 us task on one vector core, and on ax300 96 vector cores ran
    // 20.3% slower than 64 (the long copy landed behind other work).
    const RunConfig cfg = RunConfig::load(kAx300, kSrc + "/models/segnet.json", {});
    const CompileResult r = compile_workload(cfg.workload(), cfg.chip());
    std::uint64_t total = 0, largest = 0;
    int copies = 0;
    std::set<int> cores;
    for (const Task& t : r.stream.tasks) {
        if (r.stream.name(t.op) != "skip1") continue;
        ++copies;
        total += t.params.bytes;
        largest = std::max<std::uint64_t>(largest, t.params.bytes);
        cores.insert(t.core);
    }
    CAPTURE(copies, total, largest, cores.size());
    REQUIRE(copies > 2);
    CHECK(largest * 4 <= total);
    CHECK(cores.size() >= std::min<std::size_t>(static_cast<std::size_t>(copies), 4));
    TempDir tmp;
    const auto cycles = [&](const char* vectors) {
        return run_for_stats(tmp, kAx300, kSrc + "/models/segnet.json", {std::string("chip.cores.vector.count=") + vectors})
            .at("total_cycles")
            .get<double>();
    };
    const double at64 = cycles("64"), at96 = cycles("96");
    INFO("64 vector cores " << at64 << ", 96: " << at96);
    CHECK(at96 <= 1.01 * at64);
}

TEST_CASE("compiler: a Concat writes each input into its own place along any axis, in about the kernel's tile count",
          "[compiler][tiler]") {
    // {x shape, y shape, axis}: columns of many small images (MLA's q
    // heads), a leading axis, channels, W of a 4-D tensor (MLA's k), batch.
    struct Case {
        const char* x;
        const char* y;
        int axis;
    };
    const Case cases[] = {{"[4096, 8, 128]", "[4096, 8, 64]", 2},     {"[6, 32, 64]", "[4, 32, 64]", 0},
                          {"[2, 3, 16, 64]", "[2, 5, 16, 64]", 1},    {"[1, 512, 8, 128]", "[1, 512, 8, 64]", 3},
                          {"[2, 4, 6, 32]", "[3, 4, 6, 32]", 0},      {"[2, 6, 8, 40]", "[2, 6, 24, 40]", 2},
                          {"[2, 3, 4, 8, 16]", "[2, 5, 4, 8, 16]", 1}};
    const ChipParams a2 = chip(kA2);
    for (const Case& c : cases) {
        const Graph g = graph(graph_text(
            fmt::format(R"("x": {{"shape": {}, "input": true}}, "y": {{"shape": {}, "input": true}})", c.x, c.y),
            fmt::format(R"({{"name": "cat", "op": "Concat", "inputs": ["x", "y"],
                                                          "outputs": ["z"], "attrs": {{"axis": {}}}}})",
                        c.axis),
            R"(["z"])"));
        const CompileResult r = compile(g, a2, CompileOptions{});
        std::vector<std::pair<std::uint64_t, std::uint64_t>> written;
        std::uint64_t read = 0;
        int tasks = 0;
        for (const Task& t : r.stream.tasks) {
            if (r.stream.name(t.op) != "cat") continue;
            ++tasks;
            for (const Region& x : t.reads) read += x.total();
            for (const Region& x : t.writes)
                x.for_each_row([&](std::uint64_t a, std::uint64_t b) { written.emplace_back(a, a + b); });
        }
        std::sort(written.begin(), written.end());
        const std::uint64_t out_bytes = g.tensors[static_cast<std::size_t>(g.outputs[0])].bytes();
        CAPTURE(c.x, c.y, c.axis, tasks, written.size());
        REQUIRE_FALSE(written.empty());
        // The writes tile the output exactly: no byte twice, none missed.
        std::uint64_t covered = 0;
        for (std::size_t i = 0; i < written.size(); ++i) {
            if (i > 0) REQUIRE(written[i].first >= written[i - 1].second);
            covered += written[i].second - written[i].first;
        }
        CHECK(covered == out_bytes);
        CHECK(written.back().second - written.front().first == out_bytes);
        CHECK(read == out_bytes);
        // About the kernel's tile count: never one task per image of a
        // batch larger than the vector cores can take.
        CHECK(tasks <= 4 * a2.vector.count);
    }
}

TEST_CASE(
    "compiler: an Attention in BSND reads its heads in place: the bytes and tasks of the same attention over transposed heads",
    "[compiler][tiler]") {
    // Grouped queries: 8 query heads over 2 key / value heads, 2 sequences of 128.
    const auto attention = [](bool bsnd) {
        const std::string q = bsnd ? "[2, 128, 8, 64]" : "[2, 8, 128, 64]",
                          kv = bsnd ? "[2, 128, 2, 64]" : "[2, 2, 128, 64]";
        return graph_text(
            fmt::format(R"("q": {{"shape": {0}, "input": true}}, "k": {{"shape": {1}, "input": true}},
                                         "v": {{"shape": {1}, "input": true}})",
                        q, kv),
            fmt::format(R"({{"name": "attn", "op": "Attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
                                          "attrs": {{"k_transposed": 0, "causal": 1{}}}}})",
                        bsnd ? R"(, "layout": "BSND")" : ""),
            R"(["o"])");
    };
    const ChipParams a2 = chip(kA2);
    struct Sums {
        int tasks = 0;
        std::uint64_t read = 0, written = 0;
        std::set<std::uint64_t> q_strides;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> q_rows, out_rows;  // [begin, end) of each row
    };
    const auto sums = [&](bool bsnd) {
        const Graph g = graph(attention(bsnd));
        CHECK(g.tensors[static_cast<std::size_t>(g.outputs[0])].shape ==
              (bsnd ? Shape{2, 128, 8, 64} : Shape{2, 8, 128, 64}));
        const CompileResult r = compile(g, a2, CompileOptions{});
        Sums s;
        const auto rows = [](const Region& x, std::vector<std::pair<std::uint64_t, std::uint64_t>>& v) {
            x.for_each_row([&](std::uint64_t a, std::uint64_t b) { v.emplace_back(a, a + b); });
        };
        for (const Task& t : r.stream.tasks) {
            if (r.stream.name(t.op) != "attn") continue;
            ++s.tasks;
            for (const Region& x : t.reads) s.read += x.total();
            for (const Region& x : t.writes) s.written += x.total();
            const bool qk = t.core_type == CoreType::cube && !t.writes.empty() && t.writes[0].space != Space::hbm;
            if (qk) s.q_strides.insert(t.reads[0].rows > 1 ? t.reads[0].stride : 0);
            if (qk) rows(t.reads[0], s.q_rows);
            for (const Region& x : t.writes)
                if (x.space == Space::hbm) rows(x, s.out_rows);
        }
        return s;
    };
    // Every byte of [begin, end) once: sorted rows that neither overlap nor leave a gap.
    const auto exact_cover = [](std::vector<std::pair<std::uint64_t, std::uint64_t>> v, std::uint64_t bytes) {
        std::sort(v.begin(), v.end());
        for (std::size_t i = 1; i < v.size(); ++i)
            if (v[i].first != v[i - 1].second) return false;
        return !v.empty() && v.back().second - v.front().first == bytes;
    };
    const Sums bsnd = sums(true), bnsd = sums(false);
    CHECK(bsnd.tasks == bnsd.tasks);
    CHECK(bsnd.read == bnsd.read);
    CHECK(bsnd.written == bnsd.written);
    // A head's query rows are one strided region, 8 heads x 64 x 2 B apart,
    // and the query blocks of all heads read q once and write the output once.
    CHECK(bsnd.q_strides.count(8 * 64 * 2) == 1);
    CHECK(bnsd.q_strides.count(8 * 64 * 2) == 0);
    const std::uint64_t q_bytes = 2 * 128 * 8 * 64 * 2;
    CHECK(exact_cover(bsnd.q_rows, q_bytes));
    CHECK(exact_cover(bsnd.out_rows, q_bytes));
    CHECK(exact_cover(bnsd.q_rows, q_bytes));
}

TEST_CASE("compiler: a BSND Attention with its rope parts apart reads and computes what one over the joined heads does",
          "[compiler][tiler]") {
    // q·kᵀ over 48 + 16 columns, given apart (MLA's nope and rope parts) or joined.
    const auto graph_of = [](bool apart, int rope_heads) {
        const std::string t = apart ? fmt::format(R"("q": {{"shape": [2, 128, 8, 48], "input": true}},
                                                     "k": {{"shape": [2, 128, 8, 48], "input": true}},
                                                     "qr": {{"shape": [2, 128, 8, 16], "input": true}},
                                                     "kr": {{"shape": [2, 128, {}, 16], "input": true}},)",
                                                  rope_heads)
                                    : std::string(R"("q": {"shape": [2, 128, 8, 64], "input": true},
                                                     "k": {"shape": [2, 128, 8, 64], "input": true},)");
        return graph(
            graph_text(t + R"("v": {"shape": [2, 128, 8, 64], "input": true})",
                       std::string(R"({"name": "attn", "op": "Attention", "inputs": ["q", "k", "v")") +
                           (apart ? R"(, "qr", "kr")" : "") +
                           R"(], "outputs": ["o"], "attrs": {"k_transposed": 0, "causal": 1, "layout": "BSND"}})",
                       R"(["o"])"));
    };
    const ChipParams a2 = chip(kA2);
    struct Sums {
        int tasks = 0;
        std::uint64_t read = 0, written = 0;
        std::set<std::uint64_t> cube_k;
    };
    const auto sums = [&](const Graph& g) {
        const CompileResult r = compile(g, a2, CompileOptions{});
        Sums s;
        for (const Task& t : r.stream.tasks) {
            if (r.stream.name(t.op) != "attn") continue;
            ++s.tasks;
            for (const Region& x : t.reads) s.read += x.total();
            for (const Region& x : t.writes) s.written += x.total();
            if (t.core_type == CoreType::cube) s.cube_k.insert(t.params.k);
        }
        return s;
    };
    const Sums joined = sums(graph_of(false, 8)), apart = sums(graph_of(true, 8)), shared = sums(graph_of(true, 1));
    CHECK(apart.tasks == joined.tasks);
    CHECK(apart.read == joined.read);
    CHECK(apart.written == joined.written);
    CHECK(apart.cube_k == joined.cube_k);  // q·kᵀ over 64 columns, p·v over the keys
    CHECK(joined.cube_k.count(64) == 1);
    // One rope key for every head reads the same bytes per task (from L2 after the first).
    CHECK(shared.read == apart.read);
    CHECK_THROWS_WITH(graph_of(true, 3), Contains("k_rope") && Contains("dividing 8"));
}

TEST_CASE("compiler: an Attention reads k and v sliced out of one kv tensor in place, as it reads them given apart",
          "[compiler][tiler]") {
    // kv [2, 128, 8, 2 x 64] (kv_b's output in MLA prefill), cut into k and
    // v on the last axis; or k and v given as tensors of their own.
    const auto attention = [](bool sliced) {
        const std::string kv = sliced ? R"("kv": {"shape": [2, 128, 8, 128], "input": true})"
                                      : R"("k": {"shape": [2, 128, 8, 64], "input": true},
                                           "v": {"shape": [2, 128, 8, 64], "input": true})";
        const std::string cut = sliced ? R"({"name": "k_cut", "op": "Slice", "inputs": ["kv"], "outputs": ["k"],
                                             "attrs": {"starts": [0], "ends": [64], "axes": [3]}},
                                            {"name": "v_cut", "op": "Slice", "inputs": ["kv"], "outputs": ["v"],
                                             "attrs": {"starts": [64], "ends": [128], "axes": [3]}},)"
                                       : "";
        return graph(
            graph_text(R"("q": {"shape": [2, 128, 8, 64], "input": true}, )" + kv,
                       cut + R"({"name": "attn", "op": "Attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
                                          "attrs": {"k_transposed": 0, "causal": 1, "layout": "BSND"}})",
                       R"(["o"])"));
    };
    const ChipParams a2 = chip(kA2);
    struct Sums {
        int tasks = 0, other = 0;
        std::uint64_t read = 0, written = 0;
        std::vector<Region> reads;
        std::vector<bool> read_by_qk;  // per region of `reads`: by a q·kᵀ task
    };
    const auto sums = [&](const Graph& g) {
        const CompileResult r = compile(g, a2, CompileOptions{});
        Sums s;
        for (const Task& t : r.stream.tasks) {
            if (r.stream.name(t.op) != "attn") {
                ++s.other;
                continue;
            }
            ++s.tasks;
            for (const Region& x : t.reads) s.read += x.total();
            for (const Region& x : t.writes) s.written += x.total();
            const bool qk = t.core_type == CoreType::cube && !t.writes.empty() && t.writes[0].space != Space::hbm;
            s.reads.insert(s.reads.end(), t.reads.begin(), t.reads.end());
            s.read_by_qk.insert(s.read_by_qk.end(), t.reads.size(), qk);
        }
        return s;
    };
    const Sums sliced = sums(attention(true)), apart = sums(attention(false));
    CHECK(sliced.other == 0);  // no copy of k or v
    CHECK(sliced.tasks == apart.tasks);
    CHECK(sliced.read == apart.read);
    CHECK(sliced.written == apart.written);
    // The rows of k and v it reads are kv's: 128 B runs of its 256 B rows,
    // a sequence position (8 heads x 256 B) apart, k's (read by q·kᵀ,
    // which writes its scores to the workspace) at column 0, v's (by p·v)
    // at 128; given apart, k's and v's rows are 8 x 128 B apart, like q's.
    const auto kv_rows = [](const Sums& s, bool qk) {
        std::vector<std::uint64_t> at;
        for (std::size_t i = 0; i < s.reads.size(); ++i) {
            const Region& x = s.reads[i];
            if (x.rows > 1 && x.stride == 8 * 256 && s.read_by_qk[i] == qk) {
                CHECK(x.bytes == 128);
                at.push_back(x.addr);
            }
        }
        return at;
    };
    const std::vector<std::uint64_t> k_rows = kv_rows(sliced, true), v_rows = kv_rows(sliced, false);
    REQUIRE(!k_rows.empty());
    REQUIRE(!v_rows.empty());
    const std::uint64_t base = *std::min_element(k_rows.begin(), k_rows.end());
    for (const std::uint64_t a : k_rows) CHECK((a - base) % 256 == 0);
    for (const std::uint64_t a : v_rows) CHECK((a - base) % 256 == 128);
    CHECK(kv_rows(apart, true).empty());
    CHECK(kv_rows(apart, false).empty());
}

TEST_CASE("compiler: an Attention's layout is BNSD or BSND, and BSND needs a Cube that loads and stores plain tensors",
          "[compiler][errors]") {
    const auto text = [](const std::string& layout, bool mask) {
        return graph_text(
            std::string(R"("q": {"shape": [1, 64, 4, 32], "input": true}, "k": {"shape": [1, 64, 4, 32], "input": true},
                                         "v": {"shape": [1, 64, 4, 32], "input": true}, "m": {"shape": [64, 64], "input": true})"),
            R"({"name": "attn", "op": "Attention", "inputs": ["q", "k", "v")" + std::string(mask ? R"(, "m")" : "") +
                R"(], "outputs": ["o"], "attrs": {"k_transposed": 0, "layout": ")" + layout + R"("}})",
            R"(["o"])");
    };
    const auto error = [&](const std::string& layout, bool mask, const std::string& chip_file) {
        try {
            compile(graph(text(layout, mask)), chip(chip_file), CompileOptions{});
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(error("BSDN", false, kA2), Contains("attrs.layout") && Contains("did you mean") && Contains("BSND"));
    CHECK_THAT(error("BSND", true, kA2), Contains("no mask"));
    CHECK_THAT(error("BSND", false, kAx300), Contains("attrs.layout") && Contains("mte2_nd2nz") && Contains("BNSD"));
    CHECK(error("BSND", false, kA2).empty());
    CHECK(error("BNSD", false, kAx300).empty());
    // A causal attention with fewer keys than queries would leave rows with none.
    const std::string causal =
        graph_text(R"("q": {"shape": [1, 64, 4, 32], "input": true}, "k": {"shape": [1, 32, 4, 32], "input": true},
                                            "v": {"shape": [1, 32, 4, 32], "input": true})",
                   R"({"name": "attn", "op": "Attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
                                              "attrs": {"layout": "BSND", "causal": 1}})",
                   R"(["o"])");
    CHECK_THROWS_WITH(graph(causal), Contains("attrs.causal") && Contains("64 queries") && Contains("32 keys"));
    // A constant operand keeps its declared layout: BSND cannot read it strided.
    const std::string nz =
        graph_text(R"("q": {"shape": [1, 64, 4, 32], "input": true}, "k": {"shape": [1, 64, 4, 32], "input": true},
                                        "v": {"shape": [1, 64, 4, 32], "const": true, "layout": "FRACTAL_NZ"})",
                   R"({"name": "attn", "op": "Attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
                                          "attrs": {"layout": "BSND"}})",
                   R"(["o"])");
    try {
        compile(graph(nz), chip(kA2), CompileOptions{});
        FAIL("a FRACTAL_NZ constant read in BSND compiled");
    } catch (const InputError& e) {
        CHECK_THAT(std::string(e.what()), Contains("'v' is FRACTAL_NZ"));
    }
}

TEST_CASE("compiler: a layout conversion between BERT's 4-D heads (NCHW) and FRACTAL_NZ reads the bytes it writes",
          "[compiler][tiler]") {
    // [1, 12, 512, 64] is (N, H rows, C columns) in NCHW and (N*C, H rows, W
    // columns) in a matrix layout. The conversion's tiles are one head's
    // rows; each read those rows of all 12 heads and was charged 12x the
    // bytes (BERT-512 on a2: 130625 cycles, now about 9% fewer). a2's own
    // Cube converts matrices on its loads and stores, so the conversions
    // exist only with that off (as on a chip without the ND2NZ path).
    ChipParams a2 = chip(kA2);
    a2.cube.mte2_nd2nz = a2.cube.fixpipe_nz2nd = false;
    const Graph g = read_graph(kSrc + "/models/bert_layer.json", {{"seq_len", 512}});
    const CompileResult r = compile(g, a2, CompileOptions{});
    const auto sum = [](const std::vector<Region>& v) {
        std::uint64_t b = 0;
        for (const Region& x : v) b += x.total();
        return b;
    };
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_op;  // reads, writes
    for (const Task& t : r.stream.tasks) {
        const std::string& op = r.stream.name(t.op);
        if (t.core_type != CoreType::vector || op.rfind("trans_", 0) != 0) continue;
        by_op[op].first += sum(t.reads);
        by_op[op].second += sum(t.writes);
        CHECK(t.params.bytes == sum(t.reads));
    }
    REQUIRE(by_op.count("trans_attn.q.transpose_FRACTAL_NZ") == 1);
    REQUIRE(by_op.count("trans_attn.context_NCHW") == 1);
    for (const auto& [op, rw] : by_op) {
        CAPTURE(op, rw.first, rw.second);
        CHECK(rw.first == rw.second);
    }
}

TEST_CASE("cost model: short Vector tasks share bandwidth with no more cores than run while the rest are dispatched",
          "[compiler][cost]") {
    // a2: one scalar slot dispatches a task every 32 cycles. 96 tasks of
    // 8 KB each last a few hundred cycles, so far fewer than 96 stream at
    // once; 96 tasks of 4 MB each outlast the whole dispatch and all do.
    ChipParams a2 = chip(kA2);
    a2.vector.count = 96;
    compiler::VectorWork small{8192, 8192, 1, false};
    compiler::VectorWork large{4u << 20, 4u << 20, 1, false};
    const int s = compiler::vector_streams(small, a2, 96), l = compiler::vector_streams(large, a2, 96);
    const double small_t = compiler::vector_task_cycles(small, a2, s);
    CAPTURE(s, l, small_t);
    CHECK(l == 96);
    CHECK(s < 96);
    CHECK(s >= 1);
    // The count is the one the task's own length supports: about its
    // length over the dispatch interval.
    CHECK(s == Approx(small_t / a2.scalar.dispatch_cycles).margin(1.0));
    CHECK(compiler::vector_streams(large, a2, 10) == 10);  // never more than the tiles
    a2.scalar.count = 4;  // four slots dispatch four times as fast
    CHECK(compiler::vector_streams(small, a2, 96) > s);
}

TEST_CASE("compiler: a producer is not cut into more waves than the scalar slot dispatches in time, and segnet on a2 "
          "is not slower with 96 vector cores than with 48", "[slow][compiler][tiler]") {
    // segnet's input normalisation feeds the first convolution. With 96
    // vector cores the pipelining rule cut it in two waves of 96 tiles of
    // 22 KB for the Cube to start on the first rows sooner, not counting
    // that one scalar slot takes 3072 cycles to dispatch them: the run was
    // 1.2% slower than with 48 cores (120492 against 119064 cycles).
    const Graph g = read_graph(kSrc + "/models/segnet.json");
    ChipParams a2 = chip(kA2);
    CompileOptions tiler;  // the tiler's cut for all 96 (7d would also try fewer)
    tiler.explore_vector_cores = false;
    const auto tiles_of = [&](const ChipParams& c, const std::string& kernel) {
        for (const TilingChoice& tc : compile(g, c, tiler).tilings)
            if (tc.kernel == kernel) return tc.tiles;
        return -1;
    };
    const int at48 = tiles_of(a2, "input.normalize");
    a2.vector.count = 96;
    const int at96 = tiles_of(a2, "input.normalize");
    CAPTURE(at48, at96);
    CHECK(at48 == 48);
    CHECK(at96 <= 48);
    TempDir tmp;
    const double c48 = run_for_stats(tmp, kA2, kSrc + "/models/segnet.json", {}).at("total_cycles").get<double>();
    const double c96 = run_for_stats(tmp, kA2, kSrc + "/models/segnet.json", {"chip.cores.vector.count=96"})
                           .at("total_cycles").get<double>();
    INFO("48 vector cores " << c48 << " cycles, 96: " << c96);
    CHECK(c96 <= 1.01 * c48);
}

TEST_CASE("compiler e2e: on ax300, BERT-128's q, k and v share the 4 Cube cores' waves, and a lone kernel's coarser "
          "runner-up is kept when the schedule rates it ahead", "[compiler][tiler][e2e]") {
    // q, k and v multiply the same input by weights of one shape: nothing
    // orders them, so their tiles fill the same waves. Planned one at a time
    // each took 12 tiles (1 x 3 x 4, 9 waves on 4 cores for the three); for
    // the three at once each takes 4. And ffn.down's runner-up in 4 tiles
    // (one wave) instead of 8 was once tried only for kernels alike.
    const Graph g = read_graph(model_file("bert_layer"), {{"seq_len", 128}});
    const CompileResult r = compile(g, chip(kAx300), CompileOptions{});
    for (const char* qkv : {"attn.q.matmul", "attn.k.matmul", "attn.v.matmul"}) {
        CAPTURE(qkv);
        CHECK(tiling(r, qkv).tiles == 4);
    }
    CHECK(has_note(r, "search cube plans: ffn.down.matmul as 1 x 4 blocks"));
    TempDir tmp;
    const std::string model = model_file("bert_layer");
    const auto cycles = [&](std::vector<std::string> sets) {
        sets.push_back("workload.dims.seq_len=128");
        return run_for_stats(tmp, kAx300, model, sets).at("total_cycles").get<double>();
    };
    const double planned = cycles({});
    const std::string one_by_one = R"(workload.tiling={"attn.q.matmul": {"m_blocks": 1, "n_blocks": 3, "k_blocks": 4},
        "attn.k.matmul": {"m_blocks": 1, "n_blocks": 3, "k_blocks": 4},
        "attn.v.matmul": {"m_blocks": 1, "n_blocks": 3, "k_blocks": 4}})";
    const double alone = cycles({one_by_one});
    const double unsearched = cycles({"workload.passes.search_cube_plans=false"});
    INFO("planned " << planned << " cycles; q, k, v each planned alone " << alone << "; without the plan search "
                    << unsearched);
    CHECK(planned < 0.98 * alone);       // 179818 against 185642
    CHECK(planned < 0.98 * unsearched);  // 193053 without the search
}

// A graph on many ranks plans its distinct rank programs on two threads;
// the plans must not depend on it (docs/compiler.md, "Graphs that span ranks").
TEST_CASE("compiler: a MoE layer's rank programs are the same planned on one thread or two", "[compiler][spmd]") {
    const RunConfig cfg = RunConfig::load(kSrc + "/configs/chips/a3-supernode.json", kSrc + "/models/moe_layer.json",
                                          {"chip.interconnect.ranks=16"});
    const SpmdCompile one = compile_spmd_workload(cfg.workload(), cfg.chip(), 1);
    const SpmdCompile two = compile_spmd_workload(cfg.workload(), cfg.chip(), 2);
    REQUIRE(one.plans.size() > 2);  // routing gives the ranks' experts different row counts
    CHECK(one.plan_of_rank == two.plan_of_rank);
    std::ostringstream a, b;
    write_task_stream(one.merged(), a);
    write_task_stream(two.merged(), b);
    CHECK(a.str().size() > 1000);
    CHECK(a.str() == b.str());
}
