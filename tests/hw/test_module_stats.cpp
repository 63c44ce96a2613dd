// Each hardware module reports its own statistics (docs/design.md,
// Statistics): built alone, without a die or a runtime around it, a module
// given known work puts exactly its keys and the right numbers into the
// registry. One sc_start at most per TEST_CASE (ctest runs each case in its
// own process).
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chip/chip_params.hpp"
#include "config/run_config.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/memory_system.hpp"
#include "hw/scalar_core.hpp"
#include "host/memory_pool.hpp"
#include "hw/vector_core.hpp"
#include "hw/phase_profile.hpp"
#include "system/global_memory.hpp"
#include "system/mesh.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

#include "support/build_paths.hpp"

using namespace npusim;
using json = nlohmann::json;

namespace {

const std::string kAx300 = std::string(NPUSIM_SOURCE_DIR) + "/configs/chips/ax300.json";

double n(const Stats& s, const std::string& key) {
    INFO("stats key " << key);
    REQUIRE(s.has(key));
    return s.number(key);
}

// Every leaf key of the registry, dotted, as it goes out.
std::set<std::string> keys(const Stats& s) {
    std::set<std::string> out;
    const json flat = json::parse(s.to_json()).flatten();
    for (const auto& [path, v] : flat.items()) {
        if (path.empty()) continue;  // an empty registry flattens to {"": {}}
        std::string k = path.substr(1);
        for (char& c : k)
            if (c == '/') c = '.';
        out.insert(k);
    }
    return out;
}

struct Client : TransferClient {
    int drained = 0, done = 0;
    void transfer_drained(std::uint64_t) override { ++drained; }
    void transfer_done(std::uint64_t) override { ++done; }
};

struct Listener : CoreListener {
    int finished = 0;
    void task_finished(CoreType, int, std::uint32_t) override { ++finished; }
};

TransferRequest read_of(std::uint64_t addr, std::uint64_t bytes) {
    TransferRequest r;
    r.bytes = bytes;
    r.add_range(addr, bytes);
    r.cap_bytes_per_ps = 1;  // the engine is never the limit here
    return r;
}

TaskStream stream_of(const std::string& jsonl) {
    std::istringstream in(jsonl);
    return parse_task_stream(in, "x.jsonl");
}

}  // namespace

TEST_CASE("memory system: its report alone gives the bytes per tier, the L2 hits and each tier's utilisation",
          "[stats][memory]") {
    ChipParams chip;  // HBM 1600 GB/s, L2 5000 GB/s, 192 MB of 512 B lines
    WakeScheduler sched("sched");
    MemorySystem mem("memory", sched, chip, nullptr, 1);
    Client client;
    const std::uint64_t kib64 = 64 * 1024;
    mem.transfer(read_of(1ull << 32, kib64), &client, 0);  // cold: all misses, from HBM
    mem.transfer(read_of(1ull << 32, kib64), &client, 1);  // the same range: all L2 hits
    TransferRequest w = read_of(1ull << 33, 16 * 1024);
    w.write = true;  // write-back: allocates in L2, reaches HBM only when evicted
    mem.transfer(w, &client, 2);
    sc_core::sc_start();
    REQUIRE(client.done == 3);

    const RunSpan span{1'000'000, 1000.0};  // 1 us
    Stats s;
    mem.report(s, span);
    CHECK(n(s, "memory.hbm.read_bytes") == kib64);
    CHECK(n(s, "memory.hbm.write_bytes") == 0);
    CHECK(n(s, "memory.l2.hits") == kib64 / 512);  // line lookups
    CHECK(n(s, "memory.l2.misses") == kib64 / 512);
    CHECK(n(s, "memory.l2.write_misses") == 16 * 1024 / 512);
    CHECK(n(s, "memory.l2.write_hits") == 0);
    CHECK(n(s, "memory.l2.evictions") == 0);
    CHECK(n(s, "memory.l2.dirty_evictions") == 0);
    CHECK(n(s, "memory.l2.dirty_eviction_bytes") == 0);
    CHECK(n(s, "memory.l2.dirty_resident_bytes") == 16 * 1024);
    CHECK(n(s, "memory.l2.clean_bytes") == 0);  // no set half full: nothing to clean early
    CHECK(n(s, "memory.l2.hit_bytes") == kib64);
    CHECK(n(s, "memory.l2.miss_bytes") == kib64);
    CHECK(n(s, "memory.l2.write_bytes") == 16 * 1024);
    CHECK(n(s, "memory.l2.hit_rate") == 0.5);
    CHECK(n(s, "memory.transfers") == 3);
    // Bytes over what the tier could move in the span: 1600 B/ns and 5000 B/ns.
    CHECK(n(s, "units.hbm.utilization") == Approx(kib64 / (1.6 * 1e6)));
    CHECK(n(s, "units.l2.utilization") == Approx((kib64 + 16 * 1024) / (5.0 * 1e6)));  // hits and writes pass through L2
    CHECK(keys(s) == std::set<std::string>{"memory.hbm.read_bytes", "memory.hbm.write_bytes", "memory.l2.hit_bytes",
                                           "memory.l2.hit_rate", "memory.l2.miss_bytes", "memory.l2.write_bytes",
                                           "memory.l2.hits", "memory.l2.misses", "memory.l2.write_hits",
                                           "memory.l2.write_misses", "memory.l2.evictions", "memory.l2.dirty_evictions",
                                           "memory.l2.dirty_eviction_bytes", "memory.l2.dirty_resident_bytes",
                                           "memory.l2.clean_bytes",
                                           "memory.transfers", "units.hbm.utilization", "units.l2.utilization", "units.hbm.bound_fraction", "units.l2.bound_fraction"});

    // An empty span reports no utilisation rather than dividing by zero.
    Stats empty;
    mem.report(empty, RunSpan{0, 1000.0});
    CHECK(n(empty, "units.hbm.utilization") == 0);
    CHECK(n(empty, "units.l2.utilization") == 0);
}

TEST_CASE("vector cores: each reports its busy time, tasks and pipes, and the unit totals and UB traffic sum them",
          "[stats][core]") {
    const RunConfig cfg = RunConfig::load(kAx300, "x.jsonl", {});
    const ChipParams& chip = cfg.chip();
    const TaskStream ts = stream_of(
        R"({"id":"copy","core_type":"vector","kernel":"vector","stream":"s","wait":[],"signal":[],"params":{"bytes":65536,"out_bytes":32768,"src":"hbm","dst":"hbm"}})"
        "\n");
    check_stream_fits_chip(ts, chip);
    SimContext ctx(chip, ts);
    WakeScheduler sched("sched");
    MemorySystem mem("memory", sched, chip, nullptr, 1);
    ctx.scheduler = &sched;
    ctx.memory = &mem;
    Listener listener;
    VectorCore v0("vector0", 0, ctx, listener), v1("vector1", 1, ctx, listener);
    v0.start(0);  // at 0; vector1 stays idle
    sc_core::sc_start();
    REQUIRE(listener.finished == 1);
    const TaskTiming& t = ctx.timing[0];
    REQUIRE(t.start_ps == 0);

    const RunSpan span{t.end_ps, chip.ps_per_cycle()};
    Stats s;
    v0.report(s, span);
    CHECK(n(s, "cores.vector0.busy_cycles") == span.cycles(static_cast<double>(t.end_ps)));
    CHECK(n(s, "cores.vector0.utilization") == 1.0);  // busy for the whole span
    CHECK(n(s, "cores.vector0.tasks") == 1);
    for (const char* pipe : {"mte2", "v", "mte3"}) CHECK(n(s, std::string("cores.vector0.pipes.") + pipe + ".busy_cycles") > 0);
    CHECK(keys(s).size() == 6);  // busy_cycles, utilization, tasks and one per pipe: nothing of vector1
    CHECK_FALSE(s.has("cores.vector1.tasks"));

    v1.report(s, span);
    CHECK(n(s, "cores.vector1.busy_cycles") == 0);
    CHECK(n(s, "cores.vector1.tasks") == 0);

    const std::vector<const AiCore*> cores{&v0, &v1};
    AiCore::report_units(s, span, cores);
    CHECK(n(s, "units.vector.count") == 2);
    CHECK(n(s, "units.vector.busy_cycles") == n(s, "cores.vector0.busy_cycles"));
    CHECK(n(s, "units.vector.utilization") == 0.5);  // one of two cores busy throughout
    CHECK(n(s, "units.vector_mte2.bytes") == 65536);
    CHECK(n(s, "units.vector_mte3.bytes") == 32768);
    CHECK(n(s, "units.vector_v.busy_cycles") == n(s, "cores.vector0.pipes.v.busy_cycles"));
    CHECK(n(s, "units.vector_v.count") == 2);

    VectorCore::report_buffers(s, cores);
    CHECK(n(s, "memory.ub.in_bytes") == 65536);
    CHECK(n(s, "memory.ub.out_bytes") == 32768);

    // No cores of a type: no unit, but the buffer traffic is there, as zero.
    Stats none;
    AiCore::report_units(none, span, {});
    CHECK(keys(none).empty());
    VectorCore::report_buffers(none, {});
    CHECK(n(none, "memory.ub.in_bytes") == 0);
}

TEST_CASE("scalar core: its report alone gives its busy time, the dispatches and the events fired and signalled",
          "[stats][scalar]") {
    const RunConfig cfg = RunConfig::load(kAx300, "x.jsonl", {});
    const ChipParams& chip = cfg.chip();
    // Two scalar-kernel tasks the scalar core runs itself, one event between them.
    const TaskStream ts = stream_of(
        R"({"id":"a","core_type":"scalar","kernel":"scalar","stream":"s1","wait":[],"signal":["e"],"params":{"cycles":100}})"
        "\n"
        R"({"id":"b","core_type":"scalar","kernel":"scalar","stream":"s2","wait":["e"],"signal":[],"params":{"cycles":50}})"
        "\n");
    check_stream_fits_chip(ts, chip);
    SimContext ctx(chip, ts);
    WakeScheduler sched("sched");
    ctx.scheduler = &sched;
    ScalarCore scalar("scalar", ctx);
    scalar.attach_cores({}, {});
    sc_core::sc_start();
    REQUIRE(scalar.tasks_done() == 2);

    const RunSpan span{ctx.timing[1].end_ps, chip.ps_per_cycle()};
    Stats s;
    scalar.report(s, span);
    CHECK(n(s, "units.scalar.count") == chip.scalar.count);
    CHECK(n(s, "units.scalar.busy_cycles") == span.cycles(static_cast<double>(scalar.busy_ps())));
    CHECK(n(s, "units.scalar.busy_cycles") >= 150);  // at least both tasks' own cycles
    CHECK(n(s, "units.scalar.utilization") ==
          Approx(static_cast<double>(scalar.busy_ps()) / (static_cast<double>(span.total_ps) * chip.scalar.count)));
    CHECK(n(s, "tasks.dispatched") == 2);
    CHECK(n(s, "events.fired") == 1);
    CHECK(n(s, "events.signals") == 1);
    CHECK(keys(s).size() == 6);
}

TEST_CASE("mesh: its report alone gives per-plane and per-link bytes, the totals and the mesh utilisation",
          "[stats][mesh]") {
    ChipParams chip;
    chip.interconnect.ranks = 2;
    chip.interconnect.planes = 7;
    chip.interconnect.intra_node.plane_bandwidth_gbps = 28;
    chip.interconnect.datablock_bytes = 512;
    chip.interconnect.header_bytes = 32;
    GlobalMemory mem(2, 512);
    Mesh mesh("mesh", chip, mem, nullptr, {});
    WriteRequest w;
    w.src_rank = 0;
    w.dst_rank = 1;
    w.addr = 0x100000;
    w.bytes = 7168;  // 14 blocks, spread over the planes by address
    const PostedWrite pw = mesh.post(w, 0);
    WriteRequest local = w;
    local.dst_rank = 0;
    mesh.post_local(local, 100);

    const RunSpan span{pw.land_ps, 1000.0};
    Stats s;
    mesh.report(s, span);
    CHECK(n(s, "mesh.bytes") == 7168);
    CHECK(n(s, "mesh.writes") == 1);
    CHECK(n(s, "mesh.chunks") == mesh.chunks());
    CHECK(n(s, "mesh.local_writes") == 1);
    CHECK(n(s, "mesh.local_bytes") == 7168);
    double plane_bytes = 0, tx = 0, rx = 0;
    for (int p = 0; p < 7; ++p) {
        const std::string link = "mesh.links.r0.p" + std::to_string(p), back = "mesh.links.r1.p" + std::to_string(p);
        plane_bytes += n(s, "mesh.planes." + std::to_string(p) + ".bytes");
        tx += n(s, link + ".tx_bytes");
        rx += n(s, back + ".rx_bytes");
        CHECK(n(s, link + ".rx_bytes") == 0);  // nothing went the other way
        CHECK(n(s, back + ".tx_bytes") == 0);
        CHECK(n(s, link + ".tx_busy_ns") == n(s, back + ".rx_busy_ns"));  // one chunk per plane, idle planes
    }
    CHECK(plane_bytes == 7168);
    CHECK(tx == 7168);
    CHECK(rx == 7168);
    CHECK(n(s, "mesh.busiest_link_fraction") > 0);
    CHECK(n(s, "mesh.busiest_link_fraction") <= 1);
    CHECK(n(s, "mesh.wire_bytes") == 7168 + 14 * 32);  // a 32 B header with each of the 14 blocks
    CHECK(n(s, "mesh.header_bytes") == 14 * 32);
    CHECK(n(s, "mesh.tiers.intra.bytes") == 7168);
    CHECK(n(s, "mesh.tiers.inter.bytes") == 0);
    // Sending time (wire bytes at 28 B/ns) over 7 planes x 2 ranks for the span.
    CHECK(n(s, "units.mesh.utilization") ==
          Approx((7168 + 14 * 32) / (0.028 * static_cast<double>(pw.land_ps) * 7 * 2)).epsilon(1e-4));
}

TEST_CASE("global memory: its report alone gives the stale reads with a sample naming rank, address and core",
          "[stats][mesh]") {
    GlobalMemory mem(2, 512);
    mem.post_block(1, 0x1000 / 512, 5000, true, 7);
    CHECK_FALSE(mem.check_read(1, 0x1000, 512, 3, 4000));  // before it lands
    CHECK(mem.check_read(1, 0x1000, 512, 3, 6000));        // after

    Stats s;
    mem.report(s);
    CHECK(n(s, "memory_model.stale_reads") == 1);
    CHECK(n(s, "memory_model.reads_checked") == 2);
    CHECK(n(s, "memory_model.blocks_written") == 1);
    CHECK(n(s, "memory_model.pages") == 1);
    const json doc = json::parse(s.to_json());
    const json& sample = doc["memory_model"]["stale_read_samples"];
    REQUIRE(sample.size() == 1);
    CHECK(sample[0]["rank"] == 1);
    CHECK(sample[0]["address"] == "0x1000");
    CHECK(sample[0]["core"] == 3);
    CHECK(sample[0]["time_ns"] == 4.0);
}

TEST_CASE("phase profile: its report gives each phase's order, mean and max duration and end under its prefix",
          "[stats][profile]") {
    PhaseProfile prof(1, 2);
    const int copy = prof.phase_id("copy"), wait = prof.phase_id("wait");
    prof.start(0, 0, 0);
    prof.start(0, 1, 1000);
    prof.stamp(0, 0, copy, 2000);  // 2 ns
    prof.stamp(0, 1, copy, 5000);  // 4 ns
    prof.stamp(0, 0, wait, 3000);  // 1 ns

    Stats s;
    prof.report(s, "phases");
    CHECK(n(s, "phases.copy.order") == 0);
    CHECK(n(s, "phases.wait.order") == 1);
    CHECK(n(s, "phases.copy.mean_ns") == 3.0);
    CHECK(n(s, "phases.copy.max_ns") == 4.0);
    CHECK(n(s, "phases.copy.end_mean_ns") == 3.5);
    CHECK(n(s, "phases.copy.end_max_ns") == 5.0);
    CHECK(n(s, "phases.wait.mean_ns") == 1.0);  // over the one core that stamped it
    CHECK(keys(s).size() == 10);
}

TEST_CASE("memory pool: its report alone gives the peak, reserve, allocations, frees and what is left", "[stats][host]") {
    host::MemoryPool pool;
    const std::uint64_t a = pool.allocate(1000);  // one 1024 B block (512 B aligned)
    const std::uint64_t b = pool.allocate(512);
    pool.free(a);
    pool.allocate(100);  // fits the freed block: no new reserve
    (void)b;
    Stats s;
    pool.report(s, "host.memory.");
    CHECK(s.number("host.memory.pool_peak_bytes") == 1536);
    CHECK(s.number("host.memory.pool_reserved_bytes") == 1536);
    CHECK(s.number("host.memory.allocations") == 3);
    CHECK(s.number("host.memory.frees") == 1);
    CHECK(s.number("host.memory.live_at_end_bytes") == 1024);
    CHECK_FALSE(s.has("host.memory.resident_bytes"));  // the host's, not the pool's
}
