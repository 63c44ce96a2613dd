#include "collective/collective_plan.hpp"

#include "common/memory_budget.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::collective {
namespace {

using json = nlohmann::json;
using Op = CollectiveWorkload::Op;
using Algorithm = CollectiveWorkload::Algorithm;

constexpr std::uint64_t kAlign = 1u << 20;  // landing areas start on a MiB
constexpr int kSlicesPerCore = 4;
// A slice carries at least this many blocks (4 KB), so the scalar core's
// serial dispatch of a copy (chip.cores.scalar.dispatch_cycles) and its
// fixed start stay short next to its time on the wire: 1 MiB allgathers
// reach 24% of the bound with one-block slices, 84% with eight.
constexpr std::uint64_t kMinSliceBlocks = 8;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// Where things live in every rank's GM. The buffer (N equal chunks) sits at
// 0; every message lands in a slot of its own above it, so nothing is ever
// overwritten before it is read and a flag value never needs resetting.
// A slot holds one chunk as Data-as-Flag blocks (block_payload bytes of
// payload per datablock_bytes of address), slice k from block_offset[k].
struct Layout {
    int ranks = 0, slices = 0;
    std::uint64_t chunk = 0;                       // bytes
    std::uint32_t block = 0, payload = 0;
    std::vector<std::uint64_t> slice_offset;       // within a chunk, bytes
    std::vector<std::uint64_t> slice_bytes;
    std::vector<std::uint32_t> slice_blocks;
    std::vector<std::uint64_t> block_offset;       // within a slot, blocks
    std::uint32_t chunk_blocks = 0;
    std::uint64_t slot_stride = 0, land_base = 0;
    std::uint64_t base = 0;                        // the buffer's address
    int own_index = -1;                            // the chunk read from `own` instead (allgather's own)
    std::uint64_t own = 0;

    std::uint64_t data(int chunk_index, int k) const {
        if (chunk_index == own_index) return own + slice_offset[k];
        return base + static_cast<std::uint64_t>(chunk_index) * chunk + slice_offset[k];
    }
    std::uint64_t slot(int index) const { return land_base + static_cast<std::uint64_t>(index) * slot_stride; }
    std::uint64_t slot(int index, int k) const { return slot(index) + block_offset[k] * block; }
};

// Slices hold whole elements and whole Data-as-Flag blocks (all but the
// last of a chunk); at most `max_slices` of them, fewer for a short chunk
// (kMinSliceBlocks each), at least one.
Layout make_layout(int ranks, int max_slices, std::uint64_t bytes, std::uint32_t elt, std::uint32_t block) {
    Layout l;
    l.ranks = ranks;
    l.block = block;
    l.payload = (block - 8) / elt * elt;
    const std::uint64_t elements = bytes / elt;
    l.chunk = (elements + ranks - 1) / ranks * elt;
    const std::uint64_t units = (l.chunk + l.payload - 1) / l.payload;
    l.slices = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(max_slices, units / kMinSliceBlocks)));
    std::uint64_t blocks = 0;
    for (int k = 0; k < l.slices; ++k) {
        const std::uint64_t u0 = units * k / l.slices, u1 = units * (k + 1) / l.slices;
        const std::uint64_t b0 = u0 * l.payload, b1 = std::min(u1 * l.payload, l.chunk);
        l.slice_offset.push_back(b0);
        l.slice_bytes.push_back(b1 - b0);
        l.slice_blocks.push_back(static_cast<std::uint32_t>(u1 - u0));
        l.block_offset.push_back(blocks);
        blocks += u1 - u0;
    }
    l.chunk_blocks = static_cast<std::uint32_t>(blocks);
    l.slot_stride = align_up(blocks * block, kAlign);
    l.land_base = align_up(l.chunk * ranks, kAlign);
    return l;
}

int mod(int a, int n) { return ((a % n) + n) % n; }

// Builds the lines of one rank after another, and the per-rank tallies.
class Writer {
public:
    // `members`: global rank of each rank of the group; `only`: the one
    // group rank whose lines are kept (-1: all).
    Writer(CollectivePlan& plan, const Layout& l, DType dtype, std::vector<int> members, int only)
        : plan_(plan), l_(l), dtype_(dtype), members_(std::move(members)), only_(only) {}
    int global(int r) const { return members_[static_cast<std::size_t>(r)]; }

    // Slice k's copies run on one vector core, its reductions on another, so
    // a core held by a copy until its bytes leave never delays a reduction.
    int sender(int k) const { return k % plan_.senders; }
    int reducer(int k) const { return plan_.reducers ? plan_.senders + k % plan_.reducers : sender(k); }

    // A copy of slice k from `src` on rank r to rank dst's slot, Data-as-Flag.
    void send(int r, int k, const std::string& id, const std::string& op, std::uint64_t src, int dst,
              std::uint64_t dst_addr, std::uint64_t flag, json wait, json wait_memory) {
        json t = task(r, sender(k), k, id, op, "copy", std::move(wait));
        // What the copy reads, for the stale-read check: a landed slice
        // spans its whole blocks, a slice of the buffer only its bytes.
        const std::uint64_t span = src >= l_.land_base ? std::uint64_t{l_.slice_blocks[k]} * l_.block : l_.slice_bytes[k];
        t["params"] = {{"bytes", l_.slice_bytes[k]}, {"addr", src},     {"dst_rank", global(dst)},
                       {"dst_addr", dst_addr},      {"flag", flag},    {"reads", json::array({region(src, span)})}};
        if (!wait_memory.is_null()) t["wait_memory"] = std::move(wait_memory);
        plan_.sent_bytes[r] += l_.slice_bytes[k];
        plan_.sent_blocks[r] += l_.slice_blocks[k];
        plan_.blocks_to[static_cast<std::size_t>(r) * plan_.ranks + dst] += l_.slice_blocks[k];
        emit(r, t);
    }

    // Sums `inputs` slices (one local, the rest landed) into the local chunk.
    void reduce(int r, int k, const std::string& id, const std::string& op, int inputs, std::uint64_t landed,
                std::uint64_t out, json wait_memory, const std::string& signal) {
        json t = task(r, reducer(k), k, id, op, "vector", json::array());
        t["params"] = {{"bytes", l_.slice_bytes[k] * inputs},
                       {"out_bytes", l_.slice_bytes[k]},
                       {"cycles_per_repeat", 1},
                       {"dtype", npusim::to_string(dtype_)},
                       {"addr", landed},
                       {"out_addr", out}};
        // It reads its own slice and every landed one it waited for.
        json reads = json::array({region(out, l_.slice_bytes[k])});
        for (const auto& m : wait_memory)
            reads.push_back(region(m["addr"].get<std::uint64_t>(), m["blocks"].get<std::uint64_t>() * l_.block));
        t["params"]["reads"] = std::move(reads);
        t["wait_memory"] = std::move(wait_memory);
        if (!signal.empty()) t["signal"] = json::array({signal});
        plan_.reduced_bytes[r] += l_.slice_bytes[k] * inputs;
        emit(r, t);
    }

    // The rank's end: released once the last messages it receives have landed
    // (a copy ends when its bytes leave the sender, so without this the run
    // could end before the data arrives).
    void done(int r, json wait_memory) {
        json t = {{"id", fmt::format("r{}.done", r)}, {"rank", global(r)}, {"core_type", "scalar"},
                  {"kernel", "scalar"},                {"stream", fmt::format("r{}.done", r)},
                  {"op", "done"},                      {"wait", json::array()}, {"signal", json::array()},
                  {"params", {{"cycles", 0}}},         {"wait_memory", std::move(wait_memory)}};
        emit(r, t);
    }

    json landed(std::uint64_t addr, std::uint64_t value, std::uint32_t blocks) const {
        return {{"addr", addr}, {"value", value}, {"blocks", blocks}};
    }

private:
    static json region(std::uint64_t addr, std::uint64_t bytes) {
        return {{"space", "hbm"}, {"addr", addr}, {"bytes", bytes}};
    }
    json task(int r, int core, int k, const std::string& id, const std::string& op, const char* kernel,
              json wait) const {
        return {{"id", fmt::format("r{}.{}.s{}", r, id, k)},
                {"rank", global(r)},
                {"core_type", "vector"},
                {"kernel", kernel},
                {"stream", fmt::format("r{}.v{}", r, core)},
                {"core", core},
                {"op", op},
                {"tile", fmt::format("slice{}", k)},
                {"wait", std::move(wait)},
                {"signal", json::array()}};
    }
    void emit(int r, const json& t) {
        ++plan_.tasks[r];
        if (only_ >= 0 && r != only_) return;
        plan_.lines.push_back(t.dump());
        held_ += plan_.lines.back().size() + sizeof(std::string);
        if (held_ >= next_check_) check_memory();
    }
    // A large collective on many ranks is refused while its lines are being
    // written, before they fill the machine: what they hold so far, each
    // line also a task as the run holds it, is a floor on what it needs.
    void check_memory() {
        next_check_ *= 2;
        const CollectiveWorkload& w = plan_.workload;
        check_memory_budget(fmt::format("{} of {} B on {} ranks: its task stream (past {} tasks and counting)",
                                        to_string(w.op), w.bytes, plan_.ranks, plan_.lines.size()),
                            held_ + plan_.lines.size() * kStreamBytesPerTask,
                            "use fewer ranks (--set chip.interconnect.ranks=N) or fewer bytes (--set workload.bytes=N)");
    }

    CollectivePlan& plan_;
    const Layout& l_;
    DType dtype_;
    std::vector<int> members_;
    int only_;
    std::uint64_t held_ = 0, next_check_ = std::uint64_t{16} << 20;
};

std::string event(int r, const std::string& what, int k) { return fmt::format("r{}.{}.s{}", r, what, k); }

// Ring (docs/collectives.md): reduce-scatter steps s = 0..N-2 send chunk
// r-s to rank r+1, which adds it into its own copy; allgather steps pass
// each finished chunk on. Step g's message lands in slot g with flag g+1.
// Steps outside, slices inside: each core's stream runs its slices step by
// step, so the first slices of a step are reduced while the last still travel.
void plan_ring(CollectivePlan& p, const Layout& l, Writer& w) {
    const int n = l.ranks;
    const Op op = p.workload.op;
    const bool rs = op == Op::allreduce || op == Op::reduce_scatter;
    const bool ag = op == Op::allreduce || op == Op::allgather;
    for (int r = 0; r < n; ++r) {
        const int next = mod(r + 1, n);
        if (op == Op::alltoall) {
            // Step s = 1..N-1: piece r+s straight to rank r+s, in lock step:
            // step s starts once step s-1's piece from rank r-(s-1) has landed.
            for (int s = 1; s < n; ++s)
                for (int k = 0; k < l.slices; ++k) {
                    const int dst = mod(r + s, n);
                    json wm = s > 1 ? json::array({w.landed(l.slot(s - 2, k), s - 1, l.slice_blocks[k])}) : json();
                    w.send(r, k, fmt::format("a2a{}.send", s), "alltoall.send", l.data(dst, k), dst,
                           l.slot(s - 1, k), s, json::array(), std::move(wm));
                }
        }
        int g = 0;  // global step
        if (rs)
            for (int s = 0; s < n - 1; ++s, ++g)
                for (int k = 0; k < l.slices; ++k) {
                    json wait = s > 0 ? json::array({event(r, fmt::format("rs{}.reduced", s - 1), k)}) : json::array();
                    w.send(r, k, fmt::format("rs{}.send", s), "reduce_scatter.send", l.data(mod(r - s, n), k), next,
                           l.slot(g, k), g + 1, std::move(wait), json());
                    const bool needed = s < n - 2 || op == Op::allreduce;
                    w.reduce(r, k, fmt::format("rs{}.reduce", s), "reduce_scatter.reduce", 2, l.slot(g, k),
                             l.data(mod(r - 1 - s, n), k),
                             json::array({w.landed(l.slot(g, k), g + 1, l.slice_blocks[k])}),
                             needed ? event(r, fmt::format("rs{}.reduced", s), k) : "");
                }
        if (ag) {
            // allreduce: rank r owns the sum of chunk r+1 after the reduce-scatter.
            const int own = op == Op::allreduce ? 1 : 0;
            for (int t = 0; t < n - 1; ++t, ++g)
                for (int k = 0; k < l.slices; ++k) {
                    json wait = json::array(), wm;
                    std::uint64_t src = l.data(mod(r + own, n), k);
                    if (t == 0 && op == Op::allreduce) wait.push_back(event(r, fmt::format("rs{}.reduced", n - 2), k));
                    if (t > 0) {  // forward what arrived in the previous step
                        src = l.slot(g - 1, k);
                        wm = json::array({w.landed(l.slot(g - 1, k), g, l.slice_blocks[k])});
                    }
                    w.send(r, k, fmt::format("ag{}.send", t), "allgather.send", src, next, l.slot(g, k), g + 1,
                           std::move(wait), std::move(wm));
                }
        }
        const int last = p.steps - 1;
        if (ag || op == Op::alltoall)
            w.done(r, json::array({w.landed(l.slot(last), last + 1, l.chunk_blocks)}));
    }
}

// Mesh: every rank writes straight to every peer. Phase p's message from
// rank src lands in rank dst's slot p*(N-1) + (src-dst-1 mod N), flag p+1.
void plan_mesh(CollectivePlan& p, const Layout& l, Writer& w) {
    const int n = l.ranks;
    const Op op = p.workload.op;
    const bool reduces = op == Op::allreduce || op == Op::reduce_scatter;
    auto slot_of = [&](int phase, int src, int dst) { return phase * (n - 1) + mod(src - dst - 1, n); };
    const bool scatter = op != Op::allgather;  // piece d goes to rank d
    const char* phase = op == Op::allgather ? "ag" : op == Op::alltoall ? "a2a" : "rs";
    const std::string label = op == Op::allgather  ? "allgather.send"
                              : op == Op::alltoall ? "alltoall.send"
                                                   : "reduce_scatter.send";
    auto send = [&](int r, int k, int i) {
        const int dst = mod(r + i, n);
        w.send(r, k, fmt::format("{}.send.to{}", phase, dst), label, l.data(scatter ? dst : r, k), dst,
               l.slot(slot_of(0, r, dst), k), 1, json::array(), json());
    };
    // Peer by peer (r+1 first, then r+2, ...): in round i every rank r writes
    // only to r+i, so no receiver takes two ranks' writes at once (an incast
    // its credits would push back on). A reduction needs a slice from every
    // peer, so there the rounds go over one group of slices (one per copy
    // core) at a time and the group is reduced while the next one travels.
    const int group = reduces ? p.senders : l.slices;
    for (int r = 0; r < n; ++r) {
        for (int g0 = 0; g0 < l.slices; g0 += group) {
            const int g1 = std::min(l.slices, g0 + group);
            for (int i = 1; i < n; ++i)
                for (int k = g0; k < g1; ++k) send(r, k, i);
            if (!reduces) continue;
            for (int k = g0; k < g1; ++k) {
                json wm = json::array();
                for (int i = 1; i < n; ++i) wm.push_back(w.landed(l.slot(slot_of(0, mod(r + i, n), r), k), 1, l.slice_blocks[k]));
                w.reduce(r, k, "rs.reduce", "reduce_scatter.reduce", n, l.slot(slot_of(0, mod(r + 1, n), r), k),
                         l.data(r, k), std::move(wm), op == Op::allreduce ? event(r, "rs.reduced", k) : "");
            }
        }
        if (op == Op::allreduce)  // the sums to every peer, in the same rounds
            for (int g0 = 0; g0 < l.slices; g0 += group)
                for (int i = 1; i < n; ++i)
                    for (int k = g0; k < std::min(l.slices, g0 + group); ++k) {
                        const int dst = mod(r + i, n);
                        w.send(r, k, fmt::format("ag.send.to{}", dst), "allgather.send", l.data(r, k), dst,
                               l.slot(slot_of(1, r, dst), k), 2, json::array({event(r, "rs.reduced", k)}), json());
                    }
        if (op == Op::reduce_scatter) continue;
        const int last = op == Op::allreduce ? 1 : 0;
        json wm = json::array();
        for (int i = 1; i < n; ++i)
            wm.push_back(w.landed(l.slot(slot_of(last, mod(r + i, n), r)), last + 1, l.chunk_blocks));
        w.done(r, std::move(wm));
    }
}

}  // namespace

const char* to_string(Op op) {
    switch (op) {
        case Op::allreduce: return "allreduce";
        case Op::allgather: return "allgather";
        case Op::reduce_scatter: return "reduce_scatter";
        case Op::alltoall: return "alltoall";
    }
    return "?";
}

const char* to_string(Algorithm a) { return a == Algorithm::ring ? "ring" : "mesh"; }

DType to_dtype(CollectiveWorkload::Dtype d) {
    switch (d) {
        case CollectiveWorkload::Dtype::fp16: return DType::fp16;
        case CollectiveWorkload::Dtype::bf16: return DType::bf16;
        case CollectiveWorkload::Dtype::fp32: return DType::fp32;
        case CollectiveWorkload::Dtype::int8: return DType::int8;
    }
    return DType::fp16;
}

CollectivePlan plan_collective(const CollectiveWorkload& w, const ChipParams& chip, const CollectivePlace& at) {
    std::vector<int> members = at.group;
    if (members.empty())
        for (int r = 0; r < chip.interconnect.ranks; ++r) members.push_back(r);
    const int n = static_cast<int>(members.size());
    if (n < 2)
        throw InputError(fmt::format(
            "chip.interconnect.ranks: a collective needs at least 2 ranks, the chip has {} (--set chip.interconnect.ranks=8)", n));
    if (chip.vector.count < 1)
        throw InputError("chip.cores.vector.count: a collective reduces and copies on the vector cores, the chip has none");
    const DType dtype = to_dtype(w.dtype);
    const auto elt = static_cast<std::uint32_t>(dtype_bytes(dtype));
    if (w.bytes % elt)
        throw InputError(fmt::format("workload.bytes: {} is not a whole number of {} elements ({} B each)", w.bytes,
                                     npusim::to_string(dtype), elt));
    const auto block = static_cast<std::uint32_t>(chip.interconnect.datablock_bytes);

    CollectivePlan p;
    p.workload = w;
    p.ranks = n;
    const bool ring = w.algorithm == Algorithm::ring;
    p.steps = w.op == Op::allreduce ? (ring ? 2 * (n - 1) : 2) : (ring ? n - 1 : 1);
    // Reductions get half the vector cores, copies the other half; without
    // reductions every core copies. Each copy core takes kSlicesPerCore
    // slices, so a core's next slice is ready while its last one travels.
    const bool reduces = w.op == Op::allreduce || w.op == Op::reduce_scatter;
    const int cores = chip.vector.count;
    const int copy_cores = reduces && cores > 1 ? cores / 2 : cores;
    Layout l = make_layout(n, copy_cores * kSlicesPerCore, w.bytes, elt, block);
    l.base = at.buffer;
    l.land_base = at.landing ? at.landing : l.land_base + at.buffer;
    if (at.own != ~0ULL && at.rank >= 0) {
        l.own_index = at.rank;
        l.own = at.own;
    }
    p.slices = l.slices;
    p.senders = std::min(copy_cores, l.slices);
    p.reducers = reduces && cores > 1 ? std::min(cores - copy_cores, l.slices) : 0;
    p.chunk_bytes = l.chunk;
    p.block_payload = l.payload;
    for (auto* v : {&p.sent_bytes, &p.sent_blocks, &p.reduced_bytes, &p.tasks}) v->assign(n, 0);
    p.blocks_to.assign(static_cast<std::size_t>(n) * n, 0);
    Writer writer(p, l, dtype, std::move(members), at.rank);
    if (ring) plan_ring(p, l, writer);
    else plan_mesh(p, l, writer);
    return p;
}

std::uint64_t landing_bytes(const CollectiveWorkload& w, const ChipParams& chip, int ranks) {
    CollectivePlace at;
    for (int r = 0; r < ranks; ++r) at.group.push_back(r);
    at.rank = 0;
    const CollectivePlan p = plan_collective(w, chip, at);
    const auto block = static_cast<std::uint32_t>(chip.interconnect.datablock_bytes);
    const bool reduces = w.op == Op::allreduce || w.op == Op::reduce_scatter;
    const int cores = chip.vector.count, copy_cores = reduces && cores > 1 ? cores / 2 : cores;
    const Layout l = make_layout(ranks, copy_cores * kSlicesPerCore, w.bytes, static_cast<std::uint32_t>(dtype_bytes(to_dtype(w.dtype))), block);
    // Ring: a slot per step; mesh: a slot per peer and phase.
    const std::uint64_t slots = w.algorithm == Algorithm::ring ? static_cast<std::uint64_t>(p.steps)
                                                                : static_cast<std::uint64_t>(p.steps) * static_cast<std::uint64_t>(ranks - 1);
    return slots * l.slot_stride;
}

TaskStream collective_stream(const CollectivePlan& plan, const std::string& label) {
    TaskStreamParser parser(label, plan.lines.size(), true);
    for (const auto& line : plan.lines) parser.line(line);
    return parser.finish();
}

}  // namespace npusim::collective
