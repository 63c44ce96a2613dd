// The host runtime model (docs/design.md §1.2, docs/host.md): the memory pool, the
// cost table, the host plan and the stream gating as plain C++; one
// in-process SystemC run checked against the cost arithmetic; and end-to-end
// runs of the bundled host models through the npusim binary (one SystemC
// run per process): per-mode end-to-end time and device idle fraction,
// drains and waits in stats and trace, peak memory, submission batching,
// hetero overlap, host threads as trace tracks, errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "compiler/compiler.hpp"
#include "compiler/graph_reader.hpp"
#include "config/run_config.hpp"
#include "config/host_op_costs.hpp"
#include "host/host_costs.hpp"
#include "host/host_plan.hpp"
#include "host/host_runtime.hpp"
#include "host/memory_pool.hpp"
#include "host/stream_gating.hpp"
#include "hw/die.hpp"
#include "stats/stats.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::host;
using namespace npusim::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kSmallOps = kSrc + "/models/host_smallops.json";
const std::string kLlm = kSrc + "/models/llm_decode.json";
const std::string kHetero = kSrc + "/models/host_hetero.json";
const std::string kResNet = kSrc + "/models/resnet50.json";
const std::string kCheckTrace = kSrc + "/tools/check_trace.py";

// Runs the binary and returns the stats document.
json run_stats(const TempDir& tmp, const std::string& chip, const std::string& workload, std::vector<std::string> sets,
               const std::string& trace = "") {
    static int n = 0;
    const std::string stats = tmp.path("stats" + std::to_string(n++) + ".json");
    std::vector<std::string> args = {"run", "-q", "--chip", chip, "--workload", workload, "--stats", stats};
    for (const auto& s : sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    if (!trace.empty()) {
        args.push_back("--trace");
        args.push_back(trace);
        args.push_back("--trace-tasks-only");
    }
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return read_json(stats);
}

double num(const json& s, const std::string& dotted) {
    const json* j = &s;
    std::string rest = dotted;
    for (;;) {
        const auto dot = rest.find('.');
        j = &j->at(rest.substr(0, dot));
        if (dot == std::string::npos) break;
        rest = rest.substr(dot + 1);
    }
    return j->get<double>();
}

// A tiny graph: x -> ReLU -> Sigmoid, one kernel each (vector fusion off).
const char* kTwoOps = R"({"kind": "graph", "name": "two", "tensors": {"x": {"shape": [1, 4096], "input": true}},
  "nodes": [{"name": "a", "op": "ReLU", "inputs": ["x"], "outputs": ["a"]},
            {"name": "b", "op": "Sigmoid", "inputs": ["a"], "outputs": ["b"]}],
  "outputs": ["b"]})";

compiler::CompileResult compile_text(const std::string& text, const ChipParams& chip, compiler::Graph& g) {
    g = compiler::read_graph_text(text, "two.json");
    compiler::CompileOptions opt;
    opt.fuse_vector = false;
    return compiler::compile(g, chip, opt);
}

}  // namespace

// ---------------------------------------------------------------------------
// Plain C++.

TEST_CASE("host: the memory pool aligns, reuses, coalesces and tracks peaks", "[host][pool]") {
    MemoryPool p;
    const auto a = p.allocate(1000);  // 1024
    const auto b = p.allocate(512);
    const auto c = p.allocate(0);     // one unit
    CHECK(a == 0);
    CHECK(b == 1024);
    CHECK(c == 1536);
    CHECK(p.in_use() == 2048);
    CHECK(p.peak_in_use() == 2048);
    p.free(a);
    p.free(b);  // coalesces with a: one 1536 B hole at 0
    CHECK(p.in_use() == 512);
    CHECK(p.allocate(1536) == 0);  // first fit reuses the hole
    CHECK(p.reserved() == 2048);
    p.free(c);
    CHECK(p.allocate(4096) == 1536);  // the free block at the top grows instead of leaving a hole
    CHECK(p.reserved() == 1536 + 4096);
    CHECK(p.peak_in_use() == 1536 + 4096);
    CHECK(p.allocations() == 5);
    CHECK(p.frees() == 3);
    CHECK_THROWS_AS(p.free(7), std::logic_error);
}

TEST_CASE("host: stage costs come from the op table, else the chip-wide keys", "[host][costs]") {
    HostParams p;
    p.op_costs = resolve_op_costs(json::object());
    CHECK(stage_cost_us(p, "Add", Stage::resize, false) == p.costs.resize_us);
    CHECK(stage_cost_us(p, "Add", Stage::resize, true) == p.costs.resize_dynamic_us);
    CHECK(stage_cost_us(p, "Conv2D", Stage::resize, false) == 10);  // built-in table
    CHECK(stage_cost_us(p, "Conv2D", Stage::launch, false) == p.costs.launch_us);
    p.op_costs = resolve_op_costs(json::parse(R"({"Add": {"infer_dynamic_us": 99}, "Conv2D": {"resize_us": 1}})"));
    CHECK(stage_cost_us(p, "Add", Stage::infer, true) == 99);
    CHECK(stage_cost_us(p, "Conv2D", Stage::resize, false) == 1);
    CHECK(stage_cost_us(p, "Conv2D", Stage::resize, true) == 36);  // the rest of the default entry stays

    auto error = [](const char* text) {
        try {
            resolve_op_costs(json::parse(text));
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(error(R"({"Conv2d": {"resize_us": 1}})"), Contains("unknown op type 'Conv2d'") && Contains("did you mean 'Conv2D'"));
    CHECK_THAT(error(R"({"Add": {"resize": 1}})"), Contains("chip.host.op_costs.Add: unknown key 'resize'"));
    CHECK_THAT(error(R"({"Add": {"resize_us": -1}})"), Contains("chip.host.op_costs.Add.resize_us"));
    CHECK(error(R"({"FormatConvert": {"resize_us": 1}, "Unique": {"infer_us": 2}})").empty());

    // CPU model: overhead + max(compute, memory).
    CpuWork w;
    w.flops = 50e3;  // 1 µs at 50 GFLOP/s
    w.bytes = 40e3;  // 4 µs at 10 GB/s
    CHECK(cpu_time_us(p, w) == Approx(p.cpu_op_overhead_us + 4));
    CHECK(link_time_us(8, 25e3, 25) == Approx(9));
}

TEST_CASE("host: graph ops Unique, NonZero and the value-dependent Reshape / ReduceSum", "[host][graph]") {
    const compiler::Graph g = compiler::read_graph(kSmallOps);
    auto shape_of = [&](const std::string& t) { return g.tensors[static_cast<std::size_t>(g.tensor_index(t))].shape; };
    CHECK(shape_of("unique") == compiler::Shape{48});
    CHECK(shape_of("nonzero") == compiler::Shape{2, 96});
    CHECK(g.tensors[static_cast<std::size_t>(g.tensor_index("nonzero"))].dtype == DType::fp32);
    CHECK(shape_of("dyn_reshape") == compiler::Shape{1, 32, 256});
    CHECK(shape_of("pooled") == compiler::Shape{1, 1, 64});

    auto error = [](const std::string& nodes, const std::string& tensors = "") {
        try {
            compiler::read_graph_text(R"({"kind": "graph", "tensors": {"x": {"shape": [4, 8], "input": true},
                "s": {"shape": [3], "input": true})" + tensors + R"(}, "nodes": [)" + nodes + R"(], "outputs": ["y"]})",
                                      "g.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error(R"({"name": "y", "op": "Reshape", "inputs": ["x", "s"], "outputs": ["y"], "attrs": {"shape": [2, 2, 8]}})").empty());
    CHECK_THAT(error(R"({"name": "y", "op": "Reshape", "inputs": ["x", "s"], "outputs": ["y"], "attrs": {"shape": [32]}})"),
               Contains("shape tensor 's' [3] must be 1-D with 1 elements"));
    CHECK_THAT(error(R"({"name": "y", "op": "ReduceSum", "inputs": ["x", "s"], "outputs": ["y"], "attrs": {"axes": [1]}})"),
               Contains("axes tensor 's' [3] must be 1-D with one element per entry of attrs.axes (1)"));
    CHECK(error(R"({"name": "y", "op": "Unique", "inputs": ["x"], "outputs": ["y"]})").empty());  // upper bound: 32
    CHECK_THAT(error(R"({"name": "y", "op": "NonZero", "inputs": ["x"], "outputs": ["y"], "attrs": {"expected": 33}})"),
               Contains("attrs.expected: must be in [1, 32]"));
    CHECK_THAT(error(R"({"name": "y", "op": "Unique", "inputs": ["x"], "outputs": ["y"], "attrs": {"expectd": 3}})"),
               Contains("did you mean 'expected'"));
}

TEST_CASE("host: the plan finds value- and compute-dependent ops, views, buffers and frees", "[host][plan]") {
    const ChipParams chip = RunConfig::load(kA2, kSmallOps, {}).chip();
    const RunConfig cfg = RunConfig::load(kA2, kSmallOps, {});
    const auto compiled = compiler::compile_workload(cfg.workload(), chip);
    const HostPlan plan = make_plan(compiled.ops, compiled.stream, {}, false, chip.host);
    CHECK(plan.ops.size() == compiled.kernels);
    CHECK(plan.value_dependent == 2);
    CHECK(plan.compute_dependent == 2);
    CHECK(plan.cpu_ops == 0);  // labels count only in hetero mode
    std::map<std::string, const HostOp*> by;
    for (const HostOp& op : plan.ops) by[op.name] = &op;
    REQUIRE(by.count("dyn_reshape"));
    CHECK(by["dyn_reshape"]->value_dependent);
    CHECK(by["dyn_reshape"]->value_bytes == 3 * 4);  // [3] fp32
    CHECK(by["dyn_reshape"]->tasks.empty());         // a view
    CHECK(by["pooled"]->value_dependent);
    CHECK(by["pooled"]->type == "ReduceSum");
    CHECK(by["nonzero"]->compute_dependent);
    CHECK(by["unique"]->compute_dependent);
    CHECK(by["b0.mul"]->out_bytes == 128 * 64 * 2);
    // Every buffer that is read later is freed exactly once, after its last reader.
    std::map<int, int> freed;
    for (std::size_t o = 0; o < plan.ops.size(); ++o)
        for (int f : plan.ops[o].frees) {
            ++freed[f];
            CHECK(f < static_cast<int>(o));
        }
    for (const auto& [f, n] : freed) CHECK(n == 1);
    CHECK(freed.count(static_cast<int>(std::find_if(plan.ops.begin(), plan.ops.end(),
                                                    [](const HostOp& o) { return o.name == "b0.mul"; }) - plan.ops.begin())));

    // Hetero: the labelled token branch is the CPU subgraph.
    const HostPlan het = make_plan(compiled.ops, compiled.stream, {"nonzero"}, true, chip.host);
    CHECK(het.cpu_ops == 4);  // tokens_flat, unique, unique_shift (labelled in the file) + nonzero
    CHECK_THROWS_WITH(make_plan(compiled.ops, compiled.stream, {"nonzeroo"}, true, chip.host),
                      Contains("workload.cpu_ops: no node 'nonzeroo'") && Contains("did you mean 'nonzero'"));
}

TEST_CASE("host: the plan comes from the compiled result's op table (ops, tasks, dependences)", "[host][plan]") {
    const ChipParams chip = RunConfig::load(kA2, "", {}).chip();
    const RunConfig cfg = RunConfig::load(kA2, kHetero, {});
    const compiler::CompileResult compiled = compiler::compile_workload(cfg.workload(), chip);
    const compiler::OpTable& table = compiled.ops;
    const HostPlan plan = make_plan(table, compiled.stream, {}, true, chip.host);
    REQUIRE(plan.ops.size() == compiled.kernels);
    REQUIRE(table.ops.size() == compiled.kernels);
    CHECK(table.graph_file == kHetero);

    // The graph as the test reads it: node -> op by the kernel names, and
    // the ops each op's nodes read from.
    const compiler::Graph g = compiler::read_graph(kHetero);
    CHECK(table.node_names.size() == g.nodes.size());
    std::map<std::string, int> op_of_node;
    for (std::size_t o = 0; o < plan.ops.size(); ++o) {
        CHECK(plan.ops[o].name == compiled.tilings[o].kernel);
        CHECK(plan.ops[o].name == table.ops[o].name);
        for (const auto& n : table.ops[o].nodes) op_of_node[n.name] = static_cast<int>(o);
    }
    std::size_t tasks = 0;
    for (std::size_t o = 0; o < plan.ops.size(); ++o) {
        INFO(plan.ops[o].name);
        std::set<int> expected;
        for (const auto& n : g.nodes) {
            if (!op_of_node.count(n.name) || op_of_node[n.name] != static_cast<int>(o)) continue;
            for (int in : n.inputs) {
                const int producer = g.tensors[static_cast<std::size_t>(in)].producer;
                if (producer < 0) continue;
                const auto it = op_of_node.find(g.nodes[static_cast<std::size_t>(producer)].name);
                if (it != op_of_node.end() && it->second != static_cast<int>(o)) expected.insert(it->second);
            }
        }
        CHECK(std::vector<int>(expected.begin(), expected.end()) == table.ops[o].deps);
        CHECK(plan.ops[o].tasks == table.ops[o].tasks);
        for (std::uint32_t t : plan.ops[o].tasks) CHECK(compiled.stream.name(compiled.stream.tasks[t].op) == plan.ops[o].name);
        tasks += plan.ops[o].tasks.size();
    }
    CHECK(tasks == compiled.stream.tasks.size());  // every task belongs to exactly one op

    // By hand: the CPU gate reads row_sum, the CPU chain starts from col_stat; out reads gated and mm2.
    auto op_named = [&](const std::string& name) {
        const auto it = op_of_node.find(name);
        REQUIRE(it != op_of_node.end());
        return it->second;
    };
    auto deps_of = [&](const std::string& name) { return table.ops[static_cast<std::size_t>(op_named(name))].deps; };
    CHECK(deps_of("cpu_gate") == std::vector<int>{op_named("row_sum")});
    CHECK(deps_of("cpu_1") == std::vector<int>{op_named("cpu_0")});
    const auto out_deps = deps_of("out");
    CHECK(std::count(out_deps.begin(), out_deps.end(), op_named("gated")) == 1);
    CHECK(std::count(out_deps.begin(), out_deps.end(), op_named("mm2")) == 1);
    CHECK(plan.ops[static_cast<std::size_t>(op_named("cpu_gate"))].on_cpu);
    CHECK(deps_of("cpu_0") == std::vector<int>{op_named("col_stat")});
}

TEST_CASE("host: gating adds a launch event per submission batch and a counting end event per kernel", "[host][gating]") {
    const ChipParams chip = RunConfig::load(kA2, "", {}).chip();
    const RunConfig cfg = RunConfig::load(kA2, kHetero, {});
    const auto compiled = compiler::compile_workload(cfg.workload(), chip);
    for (const bool hetero : {false, true}) {
        const HostPlan plan = make_plan(compiled.ops, compiled.stream, {}, hetero, chip.host);
        const GatedStream gs = gate_stream(compiled.stream, plan, 4);
        std::size_t device_tasks = 0;
        for (std::size_t o = 0; o < plan.ops.size(); ++o) {
            const HostOp& op = plan.ops[o];
            INFO(op.name);
            if (!op.on_device()) {
                CHECK(gs.batches[o].empty());
                CHECK(gs.end_event[o] == kNoEvent);
                continue;
            }
            device_tasks += op.tasks.size();
            CHECK(gs.batches[o].size() == (op.tasks.size() + 3) / 4);
            std::uint32_t n = 0;
            for (const auto& [e, k] : gs.batches[o]) {
                CHECK(gs.stream.events[e].id.rfind("launch:" + op.name + "#", 0) == 0);
                n += k;
            }
            CHECK(n == op.tasks.size());
            REQUIRE(gs.end_event[o] != kNoEvent);
            CHECK(gs.stream.events[gs.end_event[o]].id == "end:" + op.name);
            CHECK(gs.stream.events[gs.end_event[o]].count == op.tasks.size());
            // Each task of the batch waits on the batch's launch event and signals the end event.
            for (std::size_t b = 0; b < gs.batch_tasks[o].size(); ++b)
                for (std::uint32_t t : gs.batch_tasks[o][b]) {
                    const Task& task = gs.stream.tasks[t];
                    CHECK(task.wait.back() == gs.batches[o][b].first);
                    CHECK(task.signal.back() == gs.end_event[o]);
                }
        }
        CHECK(gs.stream.tasks.size() == device_tasks);
        if (!hetero) CHECK(device_tasks == compiled.stream.tasks.size());
        if (hetero) {
            // The CPU gate sits between NPU ops: it waits for device events and signals events NPU tasks wait for.
            const auto gate = std::find_if(plan.ops.begin(), plan.ops.end(), [](const HostOp& o) { return o.name == "cpu_gate"; });
            REQUIRE(gate != plan.ops.end());
            CHECK(gate->on_cpu);
            const std::size_t i = static_cast<std::size_t>(gate - plan.ops.begin());
            CHECK_FALSE(gs.cpu_waits[i].empty());
            CHECK_FALSE(gs.cpu_signals[i].empty());
            CHECK(gate->d2h_bytes == 1024 * 2);
            CHECK(gate->h2d_bytes == 1024 * 2);
            CHECK(device_tasks < compiled.stream.tasks.size());
        }
    }
}

// ---------------------------------------------------------------------------
// One SystemC run in this process: the host timeline by hand.

TEST_CASE("host: in sync mode a kernel is released after prepare + infer + resize + alloc + launch + submit", "[host][sim]") {
    const ChipParams chip = RunConfig::load(kAx300, "", {}).chip();  // 1 GHz, link 25 GB/s
    compiler::Graph g;
    const compiler::CompileResult compiled = compile_text(kTwoOps, chip, g);
    REQUIRE(compiled.kernels == 2);
    const HostPlan plan = make_plan(compiled.ops, compiled.stream, {}, false, chip.host);
    REQUIRE(plan.ops.size() == 2);
    REQUIRE(plan.ops[0].tasks.size() == 1);
    REQUIRE(plan.ops[1].tasks.size() == 1);
    const GatedStream gated = gate_stream(compiled.stream, plan, 16);
    Die die("die0", chip, gated.stream, nullptr);
    RuntimeOptions opt;
    opt.mode = Mode::sync;
    HostRuntime host("host", opt, chip.host, plan, gated, die, nullptr);
    die.run();
    REQUIRE(host.finished());
    Stats s;
    host.collect(s);

    // Static costs of ax300: frontend 4, prepare 2, infer 3, resize 4, alloc 2, launch 6 µs;
    // one submission: 1 µs + (64 + 256) B / 25 GB/s = 1.0128 µs. The first
    // allocation reserves the pool's first 2 MB segment: + pool_grow_us (10).
    const std::uint64_t op_ps = (4 + 2 + 3 + 4 + 2 + 6) * 1000000ULL, submit_ps = 1012800, grow_ps = 10000000;
    const SimContext& ctx = die.context();
    const std::uint32_t t0 = gated.batch_tasks[0][0][0], t1 = gated.batch_tasks[1][0][0];
    CHECK(ctx.timing[t0].released_ps == op_ps + grow_ps + submit_ps);
    CHECK(ctx.timing[t0].start_ps == op_ps + grow_ps + submit_ps + 32000);  // + scalar dispatch, 32 cycles
    // The second op follows on the same thread (its buffer fits the segment);
    // after its launch it frees the first op's buffer (0.5 µs).
    CHECK(ctx.timing[t1].released_ps == 2 * (op_ps + submit_ps) + grow_ps);
    CHECK(host.host_end_ps() == 2 * (op_ps + submit_ps) + grow_ps + 500000);
    CHECK(s.number("host.memory.pool_grows") == 1);
    // One thread, never idle: its time is the breakdown's sum.
    double sum = 0;
    for (const char* b : HostRuntime::kBreakdown) sum += s.number(std::string("host.breakdown.") + b + "_ns");
    CHECK(sum == Approx(host.host_end_ps() / 1000.0));
    CHECK(s.number("host.breakdown.frontend_ns") == 8000);
    CHECK(s.number("host.breakdown.queue_ns") == 0);  // no queues in sync mode
    CHECK(s.number("host.launches") == 2);
    CHECK(s.number("host.submissions") == 2);
    CHECK(s.number("host.memory.allocations") == 2);
    CHECK(s.number("host.memory.frees") == 1);
    CHECK(s.number("host.peak_device_memory_bytes") == 4096 * 2 * 3);  // input + two outputs
    CHECK(s.number("host.first_launch_ns") == 31000);
    CHECK(s.number("host.drains") == 0);
    const double e2e = s.number("host.end_to_end_ns");
    CHECK(e2e == Approx(std::max(static_cast<double>(host.host_end_ps()), static_cast<double>(ctx.timing[t1].end_ps)) / 1000.0));
    const double busy = static_cast<double>((ctx.timing[t0].end_ps - ctx.timing[t0].start_ps) +
                                            (ctx.timing[t1].end_ps - ctx.timing[t1].start_ps)) / 1000.0;
    CHECK(s.number("host.device_idle_fraction") == Approx(1.0 - busy / e2e));
}

// ---------------------------------------------------------------------------
// End to end through the binary.

TEST_CASE("host: async and pipeline beat sync on the host-bound models and the device idles less", "[host][cli]") {
    TempDir tmp;
    for (const std::string& model : {kSmallOps, kLlm}) {
        std::map<std::string, json> s;
        for (const char* m : {"sync", "async", "pipeline"})
            s[m] = run_stats(tmp, kA2, model, {std::string("workload.host_mode=") + m});
        const json off = run_stats(tmp, kA2, model, {"workload.host_mode=off"});
        INFO(model);
        const double sync = num(s["sync"], "host.end_to_end_ns"), async = num(s["async"], "host.end_to_end_ns"),
                     pipe = num(s["pipeline"], "host.end_to_end_ns");
        // Host-bound: far longer than the device alone.
        CHECK(sync > 5 * num(off, "total_ns"));
        CHECK(async < 0.8 * sync);
        CHECK(pipe < 0.85 * async);
        CHECK(pipe < 0.5 * sync);
        CHECK(num(s["sync"], "host.device_idle_fraction") > 0.85);
        CHECK(num(s["pipeline"], "host.device_idle_fraction") < num(s["async"], "host.device_idle_fraction"));
        CHECK(num(s["async"], "host.device_idle_fraction") < num(s["sync"], "host.device_idle_fraction"));
        for (const char* m : {"sync", "async", "pipeline"}) {
            CHECK(s[m]["host"]["mode"] == m);
            CHECK(num(s[m], "host.drains") == 2);
            CHECK(num(s[m], "host.waits") == 2);
            // The same kernels ran; only their launch times differ.
            CHECK(num(s[m], "tasks.count") == num(off, "tasks.count"));
            CHECK(num(s[m], "host.end_to_end_ns") >= num(s[m], "total_ns"));
        }
        // Allocation and free stay on one thread, in order: same peak device memory.
        CHECK(num(s["async"], "host.peak_device_memory_bytes") <= num(s["sync"], "host.peak_device_memory_bytes"));
        CHECK(num(s["pipeline"], "host.peak_device_memory_bytes") <= num(s["sync"], "host.peak_device_memory_bytes"));
        CHECK_FALSE(off.contains("host"));
    }
}

TEST_CASE("host: on the compute-bound ResNet-50 at batch 32 async and pipeline hide the host, sync exposes it", "[slow][host][cli]") {
    TempDir tmp;
    const json off = run_stats(tmp, kA2, kResNet, {"workload.batch=32"});
    std::map<std::string, json> s;
    for (const char* m : {"sync", "async", "pipeline"})
        s[m] = run_stats(tmp, kA2, kResNet, {"workload.batch=32", std::string("workload.host_mode=") + m});
    const double device = num(off, "total_ns");
    const double sync = num(s["sync"], "host.end_to_end_ns");
    CHECK_FALSE(off.contains("host"));
    // Sync puts each op's host stages (prepare + infer + resize + alloc +
    // launch, ~17.5 us static) on one thread in series with its launch; on a
    // device this fast part of them shows, but never more than that path.
    CHECK(sync > device);
    CHECK(sync < device + num(s["sync"], "host.launches") * 20e3);
    for (const char* m : {"async", "pipeline"}) {
        INFO(m);
        const double e2e = num(s[m], "host.end_to_end_ns");
        CHECK(e2e < sync);
        // The launch path runs ahead of the device; its serial costs (pool
        // growth, wake-ups, the launch thread, the first op's host stages
        // before the device starts) show. Measured on a2 (1193.6 us of
        // device time): pipeline 1275.8 us end to end (idle 4.6%); async
        // 1416.4 us (idle 9.9%): its one launch thread takes ~18 us per op
        // against the device's ~15.5, so it is the bound where pipeline
        // spreads the stages over three threads.
        const bool async = std::string(m) == "async";
        CHECK(e2e < (async ? 1.25 : 1.12) * device);
        CHECK(num(s[m], "host.device_idle_fraction") < (async ? 0.15 : 0.075));
        CHECK(num(s[m], "host.peak_device_memory_bytes") <= num(s["sync"], "host.peak_device_memory_bytes"));
    }
    CHECK(num(s["pipeline"], "host.end_to_end_ns") < num(s["async"], "host.end_to_end_ns"));
    CHECK(num(s["sync"], "host.drains") == 0);
    CHECK(num(s["sync"], "host.launches") > 70);
}

TEST_CASE("host: a value-dependent op mid-run drains the pipeline, in the stats and the trace", "[host][cli][trace]") {
    TempDir tmp;
    const std::string trace = tmp.path("trace.json");
    const json s = run_stats(tmp, kA2, kSmallOps, {"workload.host_mode=pipeline"}, trace);
    CHECK(num(s, "host.drains") == 2);
    CHECK(num(s, "host.drain_ns") > 0);
    CHECK(num(s, "host.waits") == 2);
    CHECK(num(s, "host.wait_ns") > 0);
    const Result check = run_program(tmp, "python3", {kCheckTrace, trace, "--quiet"});
    SHOW(check);
    CHECK(check.code == 0);

    std::ifstream in(trace);
    const json t = json::parse(in);
    std::map<int, std::string> host_threads;
    std::map<int, std::string> processes;
    double first_submit = 1e300, last_submit = 0;
    const json* drain = nullptr;
    int waits = 0, host_flows = 0;
    for (const json& e : t["traceEvents"]) {
        const std::string ph = e["ph"];
        if (ph == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
        if (ph == "M" && e["name"] == "thread_name" && e["pid"] == 2) host_threads[e["tid"]] = e["args"]["name"];
        if (ph == "s" && e["pid"] == 2) ++host_flows;
        if (ph != "X" || e["pid"] != 2) continue;
        const std::string cat = e["cat"];
        if (cat == "host.submit") {
            first_submit = std::min(first_submit, e["ts"].get<double>());
            last_submit = std::max(last_submit, e["ts"].get<double>());
        }
        if (cat == "host.drain" && e["name"] == "drain before dyn_reshape") drain = &e;
        if (cat == "host.wait") ++waits;
    }
    // One process per die and one for the host; host threads are tracks next to the cores.
    CHECK(processes[1].rfind("die 0", 0) == 0);
    CHECK(processes[2] == "host");
    CHECK(host_threads == std::map<int, std::string>{{1, "host infer"}, {2, "host resize"}, {3, "host launch"}});
    REQUIRE(drain);
    CHECK((*drain)["tid"] == 1);  // the infer thread waits
    CHECK((*drain)["dur"].get<double>() > 0);
    CHECK((*drain)["ts"].get<double>() > first_submit);  // in the middle of the run
    CHECK((*drain)["ts"].get<double>() < last_submit);
    CHECK(waits == 2);
    CHECK(host_flows == num(s, "host.submissions"));  // each submission points at a task it released
}

TEST_CASE("host: descriptor submission in batches helps a workload of many small tasks", "[host][cli]") {
    TempDir tmp;
    std::map<int, json> s;
    for (int b : {1, 4, 16, 0})
        s[b] = run_stats(tmp, kA2, kSmallOps,
                         {"workload.batch=16", "workload.host_mode=pipeline", "workload.submit_batch=" + std::to_string(b)});
    const double tasks = num(s[1], "tasks.count");
    CHECK(tasks > 2 * num(s[1], "host.launches"));  // several tasks per kernel
    CHECK(num(s[1], "host.submissions") == tasks);
    CHECK(num(s[1], "host.descriptors") == tasks);
    CHECK(num(s[0], "host.submissions") == num(s[0], "host.launches"));
    CHECK(num(s[4], "host.submissions") < num(s[1], "host.submissions"));
    CHECK(num(s[16], "host.submissions") <= num(s[4], "host.submissions"));
    CHECK(num(s[4], "host.end_to_end_ns") < 0.9 * num(s[1], "host.end_to_end_ns"));
    CHECK(num(s[16], "host.end_to_end_ns") < num(s[4], "host.end_to_end_ns"));
    CHECK(num(s[0], "host.end_to_end_ns") <= num(s[16], "host.end_to_end_ns"));
    CHECK(num(s[1], "host.stages.submit.busy_ns") > 4 * num(s[16], "host.stages.submit.busy_ns"));
}

TEST_CASE("host: in hetero mode the CPU subgraph skips the launch path, overlaps the NPU and beats pipeline", "[host][cli]") {
    TempDir tmp;
    const std::string trace = tmp.path("trace.json");
    const json het = run_stats(tmp, kA2, kHetero, {"workload.host_mode=hetero"}, trace);
    const json pipe = run_stats(tmp, kA2, kHetero, {"workload.host_mode=pipeline"});
    // 12 chained small ops and the gate run on CPU workers: no launch for them.
    CHECK(num(het, "host.cpu_ops") == 13);
    CHECK(num(het, "host.launches") == num(pipe, "host.launches") - 13);
    // They pay the frontend on the caller thread and nothing of prepare /
    // InferShape (3 + 8 µs dynamic) or Resize (12 µs) ...
    CHECK(num(het, "host.breakdown.frontend_ns") == num(pipe, "host.breakdown.frontend_ns"));
    CHECK(num(pipe, "host.breakdown.infer_ns") - num(het, "host.breakdown.infer_ns") == Approx(13 * 11e3));
    CHECK(num(pipe, "host.breakdown.resize_ns") - num(het, "host.breakdown.resize_ns") == Approx(13 * 12e3));
    // ... so the bottleneck stage carries 13 fewer ops: hetero wins by a quarter or more.
    CHECK(num(het, "host.end_to_end_ns") < 0.75 * num(pipe, "host.end_to_end_ns"));
    // The CPU chain runs while the device computes.
    CHECK(num(het, "host.cpu.device_overlap_ns") > 0);
    CHECK(num(het, "host.cpu.busy_ns") >= 13 * 5e3);  // op_overhead_us 5 each at least
    CHECK(num(het, "host.copies") == 3);  // the chain's statistic down; the gate's operand down and result up
    CHECK(het["host"]["threads"].contains("cpu0"));
    const Result check = run_program(tmp, "python3", {kCheckTrace, trace, "--quiet"});
    SHOW(check);
    CHECK(check.code == 0);
    // Labels count only in hetero mode.
    CHECK_FALSE(pipe["host"].contains("cpu"));
    CHECK(num(pipe, "host.cpu_ops") == 0);
}

TEST_CASE("host: hetero stops paying once the CPU chain outgrows the launch path it saves", "[slow][host][cli]") {
    // configs/studies/hetero_cpu_cost.json in a few points: pipeline does not
    // depend on the CPU-op cost; hetero hides cheap CPU ops under the NPU's
    // work, then grows by 12 x its step once the chain is the critical path.
    TempDir tmp;
    auto e2e = [&](std::vector<std::string> sets) { return num(run_stats(tmp, kA2, kHetero, sets), "host.end_to_end_ns"); };
    const double pipe = e2e({"workload.host_mode=pipeline", "chip.host.cpu.op_overhead_us=60"});
    CHECK(pipe == e2e({"workload.host_mode=pipeline", "chip.host.cpu.op_overhead_us=1"}));
    const double cheap = e2e({"chip.host.cpu.op_overhead_us=1"}), mid = e2e({"chip.host.cpu.op_overhead_us=30"}),
                 dear = e2e({"chip.host.cpu.op_overhead_us=60"});
    CHECK(e2e({"chip.host.cpu.op_overhead_us=5"}) == cheap);  // hidden
    CHECK(cheap < 0.7 * pipe);
    CHECK(dear > pipe);
    CHECK(dear - mid == Approx(12 * 30e3).epsilon(0.02));
}

TEST_CASE("host: host_mode off leaves a run exactly as without the host model", "[host][cli]") {
    TempDir tmp;
    const json plain = run_stats(tmp, kAx300, kSrc + "/models/convbnrelu.json", {});
    const json off = run_stats(tmp, kAx300, kSrc + "/models/convbnrelu.json", {"workload.host_mode=off"});
    CHECK_FALSE(plain.contains("host"));
    CHECK(plain["total_cycles"] == off["total_cycles"]);
    CHECK(plain["events"] == off["events"]);
    CHECK(plain["config"]["workload"]["host_mode"] == "off");
    // And a host run is deterministic.
    const json a = run_stats(tmp, kAx300, kSmallOps, {"workload.host_mode=pipeline"});
    const json b = run_stats(tmp, kAx300, kSmallOps, {"workload.host_mode=pipeline"});
    CHECK(a == b);
}

TEST_CASE("host: bad host settings are input errors naming the key", "[host][cli][errors]") {
    TempDir tmp;
    auto fails = [&](std::vector<std::string> sets, const std::string& what) {
        std::vector<std::string> args = {"run", "-q", "--chip", kAx300, "--workload", kSmallOps};
        for (auto& s : sets) {
            args.push_back("--set");
            args.push_back(s);
        }
        const Result r = run_npusim(tmp, args);
        SHOW(r);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(what));
    };
    fails({"workload.host_mode=pipeline", "chip.host.threads=2"},
          "workload.host_mode = pipeline needs 3 host threads, but chip.host.threads is 2");
    fails({"workload.host_mode=hetero", "chip.host.threads=3"}, "needs 4 host threads");
    fails({"workload.host_mode=hetero", "workload.cpu_ops=[\"unqiue\"]"}, "did you mean 'unique'");
    fails({"workload.host_mode=asynk"}, "did you mean 'async'");
    fails({"chip.host.op_costs={\"Reshap\": {\"infer_us\": 1}}"}, "did you mean 'Reshape'");
    fails({"chip.host.prepare_us=-1"}, "chip.host.prepare_us");
}
