// The host's serial costs (docs/host.md, "Serial costs"): each chip.host key
// moves the end-to-end time the way it should, by about the amount the
// model's arithmetic says; peak device memory does not depend on the host
// mode; contention and spinning are deterministic; bad values are input
// errors. End to end through the binary (one SystemC run per process).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kSmallOps = kSrc + "/models/host_smallops.json";  // 76 ops, dynamic shapes
const std::string kLlm = kSrc + "/models/llm_decode.json";
const std::string kHetero = kSrc + "/models/host_hetero.json";

json host_of(const TempDir& tmp, const std::string& workload, std::vector<std::string> sets) {
    return run_for_stats(tmp, kA2, workload, sets).at("host");
}
double e2e(const json& h) { return h.at("end_to_end_ns").get<double>(); }

// Eight NPU ops, then an independent chain of six expensive CPU ops: in
// program order the chain comes after the launches.
const char* kLateCpu = R"({"kind": "graph", "name": "late_cpu",
  "workload": {"host_mode": "hetero", "dynamic_shapes": true, "passes": {"fuse_vector": false}},
  "tensors": {"x": {"shape": [1, 4096], "input": true}, "s": {"shape": [1, 1024], "input": true}},
  "nodes": [
    {"name": "n0", "op": "ReLU", "inputs": ["x"], "outputs": ["n0"]},
    {"name": "n1", "op": "Sigmoid", "inputs": ["n0"], "outputs": ["n1"]},
    {"name": "n2", "op": "ReLU", "inputs": ["n1"], "outputs": ["n2"]},
    {"name": "n3", "op": "Sigmoid", "inputs": ["n2"], "outputs": ["n3"]},
    {"name": "n4", "op": "ReLU", "inputs": ["n3"], "outputs": ["n4"]},
    {"name": "n5", "op": "Sigmoid", "inputs": ["n4"], "outputs": ["n5"]},
    {"name": "n6", "op": "ReLU", "inputs": ["n5"], "outputs": ["n6"]},
    {"name": "n7", "op": "Sigmoid", "inputs": ["n6"], "outputs": ["n7"]},
    {"name": "c0", "op": "Sigmoid", "inputs": ["s"], "outputs": ["c0"], "device": "cpu"},
    {"name": "c1", "op": "Sigmoid", "inputs": ["c0"], "outputs": ["c1"], "device": "cpu"},
    {"name": "c2", "op": "Sigmoid", "inputs": ["c1"], "outputs": ["c2"], "device": "cpu"},
    {"name": "c3", "op": "Sigmoid", "inputs": ["c2"], "outputs": ["c3"], "device": "cpu"},
    {"name": "c4", "op": "Sigmoid", "inputs": ["c3"], "outputs": ["c4"], "device": "cpu"},
    {"name": "c5", "op": "Sigmoid", "inputs": ["c4"], "outputs": ["c5"], "device": "cpu"}],
  "outputs": ["n7", "c5"]})";

}  // namespace

TEST_CASE("host: the frontend cost is paid per op on the caller thread, in every mode", "[host][cli][serial]") {
    TempDir tmp;
    for (const char* mode : {"sync", "pipeline"}) {
        INFO(mode);
        const json base = host_of(tmp, kSmallOps, {std::string("workload.host_mode=") + mode});
        const json dear = host_of(tmp, kSmallOps, {std::string("workload.host_mode=") + mode, "chip.host.frontend_dynamic_us=15"});
        const double ops = base.at("ops").get<double>();
        REQUIRE(ops == 76);
        // +10 µs per op on the caller thread: in sync it is all serial; in
        // pipeline the caller (infer) thread is the slowest stage, so it shows in full too.
        CHECK(dear["breakdown"]["frontend_ns"].get<double>() - base["breakdown"]["frontend_ns"].get<double>() == Approx(ops * 10e3));
        CHECK(e2e(dear) - e2e(base) == Approx(ops * 10e3).epsilon(0.05));
    }
}

TEST_CASE("host: queue hand-over and wake-up cost the pipeline, not sync", "[host][cli][serial]") {
    TempDir tmp;
    auto pipe = [&](std::vector<std::string> sets) {
        sets.push_back("workload.host_mode=pipeline");
        return host_of(tmp, kSmallOps, sets);
    };
    const json base = pipe({});
    // A slower push (+2 µs) lands on the infer thread, the bottleneck: ~ +2 µs per op.
    const json push = pipe({"chip.host.queue_push_us=2.3"});
    CHECK(e2e(push) - e2e(base) > 0.8 * 76 * 2e3);
    CHECK(e2e(push) - e2e(base) < 1.5 * 76 * 2e3);
    // Wake-up latency of sleeping workers: none is faster, a slow one slower.
    const json awake = pipe({"chip.host.wake_latency_us=0"});
    const json drowsy = pipe({"chip.host.wake_latency_us=20"});
    CHECK(e2e(awake) < e2e(base));
    CHECK(e2e(drowsy) > e2e(base) + 100e3);
    CHECK(base.at("wakeups").get<double>() > 0);
    // Spinning workers see a push at once: about as fast as no wake-up latency.
    const json spin = pipe({"chip.host.worker_wait=spin"});
    CHECK(spin.at("worker_wait") == "spin");
    CHECK(e2e(spin) < e2e(base));
    CHECK(e2e(spin) == Approx(e2e(awake)).epsilon(0.01));
    // Sync has no queues: none of this touches it.
    const json sync = host_of(tmp, kSmallOps, {"workload.host_mode=sync"});
    const json sync_slow = host_of(tmp, kSmallOps, {"workload.host_mode=sync", "chip.host.queue_push_us=5", "chip.host.wake_latency_us=50"});
    CHECK(e2e(sync) == e2e(sync_slow));
    CHECK(sync["breakdown"]["queue_ns"].get<double>() == 0);
}

TEST_CASE("host: busy host threads share chip.host.cores, and spinning waiters take cores too", "[slow][host][cli][serial]") {
    TempDir tmp;
    auto pipe = [&](std::vector<std::string> sets) {
        sets.push_back("workload.host_mode=pipeline");
        return host_of(tmp, kSmallOps, sets);
    };
    const json eight = pipe({}), three = pipe({"chip.host.cores=3"}), two = pipe({"chip.host.cores=2"}), one = pipe({"chip.host.cores=1"});
    const json sync = host_of(tmp, kSmallOps, {"workload.host_mode=sync"});
    // Three threads never want more than three cores: exactly as with eight.
    CHECK(eight.at("cores").at("peak_demand") == 3);
    CHECK(e2e(three) == e2e(eight));
    CHECK(eight["cores"]["oversubscribed_ns"].get<double>() == 0);
    // Fewer cores: the stages slow each other down.
    CHECK(e2e(two) > 1.1 * e2e(eight));
    CHECK(e2e(one) > 1.3 * e2e(two));
    CHECK(two["cores"]["oversubscribed_ns"].get<double>() > 0);
    // On one core the pipeline is sync plus its hand-over costs: no faster than sync.
    CHECK(e2e(one) > e2e(sync));
    CHECK(e2e(one) < 1.2 * e2e(sync));
    // Spinning on two cores: idle workers poll and steal time from the busy ones.
    const json spin2 = pipe({"chip.host.cores=2", "chip.host.worker_wait=spin"});
    CHECK(e2e(spin2) > 1.1 * e2e(two));
    // And it is all deterministic.
    CHECK(pipe({"chip.host.cores=2", "chip.host.worker_wait=spin"}) == spin2);
    const json het2 = host_of(tmp, kHetero, {"chip.host.cores=2"});
    CHECK(host_of(tmp, kHetero, {"chip.host.cores=2"}) == het2);
    CHECK(e2e(het2) > e2e(host_of(tmp, kHetero, {})));
}

TEST_CASE("host: a full launch queue blocks the caller, and work behind it starts late", "[host][cli][serial]") {
    TempDir tmp;
    const std::string late = tmp.write("late_cpu.json", kLateCpu);
    // A slow launch thread (40 µs per launch call) behind a one-deep queue.
    const std::vector<std::string> slow = {"chip.host.launch_dynamic_us=40", "chip.host.cpu.op_overhead_us=60"};
    auto with = [&](std::vector<std::string> sets, const std::string& more) {
        sets.push_back(more);
        return host_of(tmp, late, sets);
    };
    const json deep = host_of(tmp, late, slow), shallow = with(slow, "chip.host.launch_queue_depth=1");
    CHECK(deep.at("queue_full_waits") == 0);
    CHECK(shallow.at("queue_full_waits").get<double>() >= 5);
    CHECK(shallow.at("queue_full_ns").get<double>() > 5 * 30e3);
    // The CPU chain (6 x ~60 µs) comes after the launches in program order:
    // the blocked caller hands it over only once the launch queue has drained.
    CHECK(e2e(shallow) > e2e(deep) + 50e3);  // ~ +100 µs here
    CHECK(deep.at("launches") == shallow.at("launches"));
}

TEST_CASE("host: pool growth is paid on the launch thread per new segment", "[host][cli][serial]") {
    TempDir tmp;
    const json base = host_of(tmp, kHetero, {"workload.host_mode=sync"});
    const json dear = host_of(tmp, kHetero, {"workload.host_mode=sync", "chip.host.pool_grow_us=100"});
    const double grows = base["memory"]["pool_grows"].get<double>();
    CHECK(grows >= 1);
    CHECK(dear["memory"]["pool_grows"] == base["memory"]["pool_grows"]);
    CHECK(e2e(dear) - e2e(base) == Approx(grows * 90e3));  // sync: all serial
    // Bigger segments: fewer driver calls.
    const json big = host_of(tmp, kHetero, {"workload.host_mode=sync", "chip.host.pool_segment_mb=64"});
    CHECK(big["memory"]["pool_grows"] == 1);
    CHECK(e2e(big) <= e2e(base));
}

TEST_CASE("host: peak device memory and pool growth do not depend on the host mode", "[slow][host][cli][serial][memory]") {
    TempDir tmp;
    for (const std::string& model : {kSmallOps, kLlm, kHetero}) {
        INFO(model);
        const json sync = host_of(tmp, model, {"workload.host_mode=sync"});
        for (const char* mode : {"async", "pipeline"})
            for (const char* cores : {"chip.host.cores=8", "chip.host.cores=1"}) {
                INFO(mode << " " << cores);
                const json h = host_of(tmp, model, {std::string("workload.host_mode=") + mode, cores, "chip.host.launch_queue_depth=2"});
                CHECK(h.at("peak_device_memory_bytes") == sync.at("peak_device_memory_bytes"));
                CHECK(h["memory"]["pool_peak_bytes"] == sync["memory"]["pool_peak_bytes"]);
                CHECK(h["memory"]["pool_grows"] == sync["memory"]["pool_grows"]);
                CHECK(h["memory"]["allocations"] == sync["memory"]["allocations"]);
            }
    }
}

TEST_CASE("host: the run summary breaks host time down by stage", "[host][cli][serial]") {
    TempDir tmp;
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kHetero});
    SHOW(r);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("host time"));
    for (const char* stage : {"frontend", "infer", "resize", "launch", "queue", "drain", "wait", "cpu"})
        CHECK_THAT(r.out, Contains(std::string("  ") + stage + " "));
}

TEST_CASE("host: bad serial-cost settings are input errors naming the key", "[host][cli][errors]") {
    TempDir tmp;
    auto fails = [&](const std::string& set, const std::string& what) {
        const Result r = run_npusim(tmp, {"run", "-q", "--chip", kA2, "--workload", kSmallOps, "--set", set});
        SHOW(r);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(what));
    };
    fails("chip.host.worker_wait=spinn", "did you mean 'spin'");
    fails("chip.host.cores=0", "chip.host.cores");
    fails("chip.host.launch_queue_depth=0", "chip.host.launch_queue_depth");
    fails("chip.host.wake_latency_us=-1", "chip.host.wake_latency_us");
    fails("chip.host.op_costs={\"Add\": {\"frontend_uss\": 1}}", "did you mean 'frontend_us'");
}
