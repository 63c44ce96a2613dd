#include "config/schema.hpp"
#include "config/workload_kind.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/split.hpp"
#include "config/host_op_costs.hpp"

namespace npusim {
namespace {

using json = nlohmann::json;
using Apply = std::function<void(ChipParams&, const json&)>;
using ApplyWorkload = std::function<void(WorkloadParams&, const json&)>;

// Fluent builder so each table row reads as one line of facts.
class Key {
public:
    Key(std::string path, ValueType type) {
        s_.path = std::move(path);
        s_.type = type;
    }
    Key& unit(std::string u) { s_.unit = std::move(u); return *this; }
    Key& def(json v) { s_.default_value = std::move(v); return *this; }
    Key& default_note(std::string n) { s_.default_note = std::move(n); return *this; }
    Key& required() { s_.required = true; s_.default_value = nullptr; return *this; }
    Key& at_least(double v) { s_.min = Bound{v, true}; return *this; }
    Key& above(double v) { s_.min = Bound{v, false}; return *this; }
    Key& at_most(double v) { s_.max = Bound{v, true}; return *this; }
    Key& plausible(double lo, double hi) { s_.plausible = std::make_pair(lo, hi); return *this; }
    Key& one_of(std::vector<std::string> v) { s_.allowed = std::move(v); return *this; }
    Key& kind(std::string k) { s_.workload_kind = std::move(k); return *this; }
    Key& only_with(std::string key, json value) {
        s_.only_with = {std::move(key), std::move(value)};
        return *this;
    }
    Key& meaning(std::string m) { s_.meaning = std::move(m); return *this; }
    Key& apply(Apply a) { s_.apply = std::move(a); return *this; }

    // Binds the key to a ChipParams field: the default is the field's
    // initialiser (chip_params.hpp stays the one place defaults live) and the
    // validated value is copied into the field.
    template <class G, class T>
    Key& field(G ChipParams::*group, T G::*member) {
        static const ChipParams defaults;
        if (!s_.required) s_.default_value = (defaults.*group).*member;
        s_.apply = [group, member](ChipParams& c, const json& v) { (c.*group).*member = v.get<T>(); };
        return *this;
    }
    // A field one group deeper (chip.interconnect.intra_node.latency_ns).
    template <class G, class H, class T>
    Key& field(G ChipParams::*group, H G::*sub, T H::*member) {
        static const ChipParams defaults;
        if (!s_.required) s_.default_value = ((defaults.*group).*sub).*member;
        s_.apply = [group, sub, member](ChipParams& c, const json& v) { ((c.*group).*sub).*member = v.get<T>(); };
        return *this;
    }
    template <class T>
    Key& field(T ChipParams::*member) {
        static const ChipParams defaults;
        if (!s_.required) s_.default_value = defaults.*member;
        s_.apply = [member](ChipParams& c, const json& v) { c.*member = v.get<T>(); };
        return *this;
    }

    // Binds a workload key to a WorkloadParams field. Unlike the chip keys
    // the default is the row's own def(): WorkloadParams has no initialisers,
    // so this table is the one place workload defaults live.
    template <class G, class T>
    Key& field(G WorkloadParams::*group, T G::*member) {
        s_.apply_workload = [group, member](WorkloadParams& w, const json& v) { (w.*group).*member = v.get<T>(); };
        return *this;
    }
    template <class T>
    Key& field(T WorkloadParams::*member) {
        s_.apply_workload = [member](WorkloadParams& w, const json& v) { w.*member = v.get<T>(); };
        return *this;
    }
    // An enumeration key whose one_of() list names the enum's values in
    // declaration order (so the strings are written once, here).
    template <class G, class E>
    Key& field_enum(G WorkloadParams::*group, E G::*member) {
        s_.apply_workload = [group, member, allowed = s_.allowed](WorkloadParams& w, const json& v) {
            const auto at = std::find(allowed.begin(), allowed.end(), v.get<std::string>());
            (w.*group).*member = static_cast<E>(at - allowed.begin());
        };
        return *this;
    }
    Key& apply_workload(ApplyWorkload a) { s_.apply_workload = std::move(a); return *this; }

    operator KeySpec() const { return s_; }  // NOLINT: builder converts implicitly

private:
    KeySpec s_;
};

// Sane upper bounds: large enough for any real or imagined chip, small enough
// that products downstream (bytes = KB * 1024 * count ...) cannot overflow.
constexpr double kMaxCores = 4096;
constexpr double kMaxKb = 1024.0 * 1024.0;      // 1 GB expressed in KB
constexpr double kMaxBytesPerCycle = 1048576;   // 1 MB per cycle per port
constexpr double kMaxGbps = 1e6;                // 1 PB/s
constexpr double kMaxNs = 1e6;                  // 1 ms
constexpr double kMaxCycles = 1e6;

Key integer(std::string path) { return Key(std::move(path), ValueType::integer); }
Key number(std::string path) { return Key(std::move(path), ValueType::number); }

// workload.cpu_ops and the like: one string or a list of them.
std::vector<std::string> strings(const json& v) {
    if (v.is_string()) return {v.get<std::string>()};
    return v.get<std::vector<std::string>>();
}

// workload.dims: the object's keys are the graph's; its values are checked here.
void read_dims(WorkloadParams& w, const json& v) {
    w.graph.dims.clear();
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 1)
            throw InputError(fmt::format("workload.dims.{}: expected a positive integer, got {}", it.key(), it->dump()));
        w.graph.dims[it.key()] = it->get<std::int64_t>();
    }
}

// workload.tiling: node names are the graph's (checked when it is compiled);
// each entry's keys and values are checked here.
void read_tiling(WorkloadParams& w, const json& v) {
    static const std::vector<std::string> keys = {"m_blocks", "n_blocks", "k_blocks", "tiles"};
    w.graph.tiling.clear();
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string where = "workload.tiling." + it.key();
        if (!it->is_object())
            throw InputError(fmt::format("{}: expected an object like {{\"m_blocks\": 2, \"n_blocks\": 8}}", where));
        ForcedTiling f;
        for (auto kv = it->begin(); kv != it->end(); ++kv) {
            if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end())
                throw InputError(fmt::format("{}.{}: unknown key{}", where, kv.key(), did_you_mean(kv.key(), keys)));
            if (!kv->is_number_integer() || kv->get<std::int64_t>() < 1 || kv->get<std::int64_t>() > 4096)
                throw InputError(fmt::format("{}.{}: expected an integer in [1, 4096], got {}", where, kv.key(), kv->dump()));
            const int n = static_cast<int>(kv->get<std::int64_t>());
            if (kv.key() == "m_blocks") f.m_blocks = n;
            else if (kv.key() == "n_blocks") f.n_blocks = n;
            else if (kv.key() == "k_blocks") f.k_blocks = n;
            else f.tiles = n;
        }
        w.graph.tiling[it.key()] = f;
    }
}

void add_llm_keys(std::vector<KeySpec>& k);

std::vector<KeySpec> build_keys() {
    using VT = ValueType;
    std::vector<KeySpec> k;

    // --- chip: top level -------------------------------------------------
    k.push_back(Key("chip.name", VT::string)
                    .def("")
                    .default_note("chip file name without `.json`")
                    .meaning("Chip name, echoed into stats and traces.")
                    .field(&ChipParams::name));
    k.push_back(Key("chip.notes", VT::string_or_strings)
                    .def(json::array())
                    .meaning("Free text: sources of the figures, which ones are estimates. Not read by the simulator."));
    k.push_back(number("chip.clock_ghz").unit("GHz").required().above(0).at_most(100).plausible(0.2, 5)
                    .meaning("Core clock; all cycle counts in stats are in this clock.")
                    .field(&ChipParams::clock_ghz));
    k.push_back(Key("chip.layout", VT::enumeration)
                    .one_of({"coupled", "split"})
                    .def("split")
                    .meaning("`coupled`: one core holds cube and vector units; `split`: separate AIC (cube) and AIV (vector) cores.")
                    .apply([](ChipParams& c, const json& v) {
                        c.layout = v.get<std::string>() == "coupled" ? CoreLayout::coupled : CoreLayout::split;
                    }));

    // --- chip.cores.cube ------------------------------------------------
    k.push_back(integer("chip.cores.cube.count").unit("cores").required().at_least(0).at_most(kMaxCores)
                    .meaning("Number of cube (matrix) cores or units on the die.")
                    .field(&ChipParams::cube, &CubeParams::count));
    k.push_back(integer("chip.cores.cube.shape_m").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal M: rows of A per cube cycle (fp16).")
                    .field(&ChipParams::cube, &CubeParams::shape_m));
    k.push_back(integer("chip.cores.cube.shape_k").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal K: reduction depth per cube cycle (fp16; int8 doubles it).")
                    .field(&ChipParams::cube, &CubeParams::shape_k));
    k.push_back(integer("chip.cores.cube.shape_n").unit("elements").at_least(1).at_most(1024)
                    .meaning("Cube fractal N: columns of B per cube cycle (fp16).")
                    .field(&ChipParams::cube, &CubeParams::shape_n));
    k.push_back(number("chip.cores.cube.gm_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 1024)
                    .meaning("Per-core GM port for L2 misses (HBM), shared by MTE2 loads and FixPipe stores (one port per core).")
                    .field(&ChipParams::cube, &CubeParams::gm_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.l2_read_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 2048)
                    .meaning("Per-core port rate of reads that hit in L2 (shared by the core's transfer pipes).")
                    .field(&ChipParams::cube, &CubeParams::l2_read_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.l2_write_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 2048)
                    .meaning("Per-core port rate of writes into L2 (shared by the core's transfer pipes).")
                    .field(&ChipParams::cube, &CubeParams::l2_write_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.l1_to_l0_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(32, 8192)
                    .meaning("MTE1 rate from L1 into L0A/L0B.")
                    .field(&ChipParams::cube, &CubeParams::l1_to_l0_bytes_per_cycle));
    k.push_back(number("chip.cores.cube.fixpipe_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(16, 2048)
                    .meaning("FixPipe rate from L0C to L1/UB (on-core).")
                    .field(&ChipParams::cube, &CubeParams::fixpipe_bytes_per_cycle));
    k.push_back(integer("chip.cores.cube.task_start_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Fixed cost of entering a kernel on a cube core.")
                    .field(&ChipParams::cube, &CubeParams::task_start_cycles));
    k.push_back(Key("chip.cores.cube.mte2_nd2nz", ValueType::boolean)
                    .meaning("MTE2 converts a plain (ND) matrix to FRACTAL_NZ as it loads it into L1, charged only the bytes it moves (no per-row cost is modelled): the compiler inserts no FormatConvert before a MatMul's or fused Attention's plain operand. False: a TransData task on Vector cores converts it first.")
                    .field(&ChipParams::cube, &CubeParams::mte2_nd2nz));
    k.push_back(Key("chip.cores.cube.fixpipe_nz2nd", ValueType::boolean)
                    .meaning("FixPipe writes a MatMul's result from L0C to GM in plain (ND) layout, charged only the bytes it moves, so no FormatConvert follows for plain consumers (without mte2_nd2nz, a result another MatMul reads stays FRACTAL_NZ). False: results stay FRACTAL_NZ.")
                    .field(&ChipParams::cube, &CubeParams::fixpipe_nz2nd));

    // --- chip.cores.vector ----------------------------------------------
    k.push_back(integer("chip.cores.vector.count").unit("cores").required().at_least(0).at_most(kMaxCores)
                    .meaning("Number of vector cores or units on the die.")
                    .field(&ChipParams::vector, &VectorParams::count));
    k.push_back(integer("chip.cores.vector.repeat_bytes").unit("B").at_least(1).at_most(65536)
                    .meaning("Bytes processed by one V-pipe repeat (one cycle at cost 1).")
                    .field(&ChipParams::vector, &VectorParams::repeat_bytes));
    k.push_back(number("chip.cores.vector.gm_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 1024)
                    .meaning("Per-core GM port for L2 misses (HBM), shared by MTE2 loads and MTE3 stores (one port per core).")
                    .field(&ChipParams::vector, &VectorParams::gm_bytes_per_cycle));
    k.push_back(number("chip.cores.vector.l2_read_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 2048)
                    .meaning("Per-core port rate of reads that hit in L2 (shared by the core's transfer pipes).")
                    .field(&ChipParams::vector, &VectorParams::l2_read_bytes_per_cycle));
    k.push_back(number("chip.cores.vector.l2_write_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(4, 2048)
                    .meaning("Per-core port rate of writes into L2 (shared by the core's transfer pipes).")
                    .field(&ChipParams::vector, &VectorParams::l2_write_bytes_per_cycle));
    k.push_back(number("chip.cores.vector.ub_bytes_per_cycle").unit("B/cycle").above(0).at_most(kMaxBytesPerCycle).plausible(16, 4096)
                    .meaning("On-core moves into and out of UB.")
                    .field(&ChipParams::vector, &VectorParams::ub_bytes_per_cycle));
    k.push_back(integer("chip.cores.vector.tile_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("Chunk one vector instruction sequence moves through UB; double-buffered, so 2x must fit in UB.")
                    .field(&ChipParams::vector, &VectorParams::tile_kb));
    k.push_back(integer("chip.cores.vector.max_repeats").unit("repeats").at_least(1).at_most(65535)
                    .meaning("Repeats one vector instruction may run (the repeat count field); more need another instruction.")
                    .field(&ChipParams::vector, &VectorParams::max_repeats));
    k.push_back(number("chip.cores.vector.issue_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("V-pipe cycles each vector instruction costs beyond its repeats (issue and pipeline start).")
                    .field(&ChipParams::vector, &VectorParams::issue_cycles));
    k.push_back(integer("chip.cores.vector.task_start_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Fixed cost of entering a kernel on a vector core.")
                    .field(&ChipParams::vector, &VectorParams::task_start_cycles));

    // --- chip.cores.scalar ----------------------------------------------
    k.push_back(integer("chip.cores.scalar.count").unit("cores").at_least(1).at_most(kMaxCores)
                    .meaning("Scalar (control) cores that fetch descriptors and dispatch tasks.")
                    .field(&ChipParams::scalar, &ScalarParams::count));
    k.push_back(integer("chip.cores.scalar.dispatch_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Cost per dispatched task, serial on one scalar core; overlaps the target core's work "
                             "while its task queue has room.")
                    .field(&ChipParams::scalar, &ScalarParams::dispatch_cycles));
    k.push_back(integer("chip.cores.scalar.queue_depth").unit("tasks").at_least(0).at_most(1024)
                    .meaning("Dispatched tasks each Cube/Vector core's queue holds beside the one it runs (0: the scalar "
                             "core dispatches to a core only once it is idle).")
                    .field(&ChipParams::scalar, &ScalarParams::queue_depth));

    // --- chip.buffers -----------------------------------------------------
    k.push_back(integer("chip.buffers.ub_kb").unit("KB").required().at_least(1).at_most(kMaxKb).plausible(16, 4096)
                    .meaning("Unified Buffer per vector core (vector operands).")
                    .field(&ChipParams::buffers, &BufferParams::ub_kb));
    k.push_back(integer("chip.buffers.l1_kb").unit("KB").at_least(1).at_most(kMaxKb).plausible(64, 16384)
                    .meaning("L1 buffer per cube core (staging for L0A/L0B).")
                    .field(&ChipParams::buffers, &BufferParams::l1_kb));
    k.push_back(integer("chip.buffers.l0a_kb").unit("KB").at_least(1).at_most(kMaxKb).plausible(16, 1024)
                    .meaning("L0A per cube core (left operand).")
                    .field(&ChipParams::buffers, &BufferParams::l0a_kb));
    k.push_back(integer("chip.buffers.l0b_kb").unit("KB").at_least(1).at_most(kMaxKb).plausible(16, 1024)
                    .meaning("L0B per cube core (right operand).")
                    .field(&ChipParams::buffers, &BufferParams::l0b_kb));
    k.push_back(integer("chip.buffers.l0c_kb").unit("KB").at_least(1).at_most(kMaxKb).plausible(32, 4096)
                    .meaning("L0C per cube core (accumulator).")
                    .field(&ChipParams::buffers, &BufferParams::l0c_kb));

    // --- chip.l2 ----------------------------------------------------------
    k.push_back(number("chip.l2.size_mb").unit("MB").above(0).at_most(kMaxKb).plausible(1, 1024)
                    .meaning("Shared L2 capacity: sets x ways x line_bytes.")
                    .field(&ChipParams::l2, &L2Params::size_mb));
    k.push_back(number("chip.l2.bandwidth_gbps").unit("GB/s").above(0).at_most(kMaxGbps).plausible(100, 100000)
                    .meaning("Aggregate L2 bandwidth of all slices, shared fairly by all cores; each slice has bandwidth_gbps / slices.")
                    .field(&ChipParams::l2, &L2Params::bandwidth_gbps));
    k.push_back(number("chip.l2.latency_ns").unit("ns").at_least(0).at_most(kMaxNs).plausible(5, 1000)
                    .meaning("Latency of an L2 hit.")
                    .field(&ChipParams::l2, &L2Params::latency_ns));
    k.push_back(integer("chip.l2.region_kb").unit("KB").at_least(1).at_most(kMaxKb)
                    .meaning("Tag block: one tag covers this many bytes of lines (a multiple of line_bytes, at most 64 lines) and is replaced whole.")
                    .field(&ChipParams::l2, &L2Params::region_kb));
    k.push_back(integer("chip.l2.interleave_bytes").unit("B").at_least(1).at_most(kMaxKb * 1024)
                    .meaning("Slice interleave: consecutive units of this many bytes (whole lines, at least one) go to consecutive slices, from a slice hashed per tag block; a unit as large as region_kb puts each block on one slice.")
                    .field(&ChipParams::l2, &L2Params::interleave_bytes));
    k.push_back(integer("chip.l2.line_bytes").unit("B").at_least(32).at_most(65536)
                    .meaning("Cache line: the unit of tags, fills and dirty write-backs to HBM (divides region_kb).")
                    .field(&ChipParams::l2, &L2Params::line_bytes));
    k.push_back(integer("chip.l2.ways").unit("ways").at_least(1).at_most(1024)
                    .meaning("Associativity, a power of two; one set (ways x region_kb) must fit in size_mb. Replacement is LRU with dynamic (bimodal) insertion against cyclic thrashing.")
                    .field(&ChipParams::l2, &L2Params::ways));
    k.push_back(integer("chip.l2.slices").unit("slices").at_least(1).at_most(256)
                    .meaning("L2 banks; a transfer on few slices moves at most at those slices' share of bandwidth_gbps.")
                    .field(&ChipParams::l2, &L2Params::slices));
    k.push_back(Key("chip.l2.eager_writeback", ValueType::boolean)
                    .meaning("While HBM has no transfer in flight, the L2 writes its oldest dirty lines back (one interleave block per HBM channel at a time) and keeps them clean, so a later eviction costs no HBM time; false: dirty lines reach HBM only when evicted.")
                    .field(&ChipParams::l2, &L2Params::eager_writeback));

    // --- chip.hbm -------------------------------------------------------
    k.push_back(number("chip.hbm.bandwidth_gbps").unit("GB/s").required().above(0).at_most(kMaxGbps).plausible(50, 20000)
                    .meaning("Peak HBM (GM) bandwidth of the die, all channels; streams get efficiency x this, less with mixed reads and writes.")
                    .field(&ChipParams::hbm, &HbmParams::bandwidth_gbps));
    k.push_back(number("chip.hbm.latency_ns").unit("ns").at_least(0).at_most(kMaxNs).plausible(50, 2000)
                    .meaning("Unloaded latency of an access that misses L2; queueing adds an M/D/1 wait that grows with HBM load.")
                    .field(&ChipParams::hbm, &HbmParams::latency_ns));
    k.push_back(number("chip.hbm.size_gb").unit("GB").above(0).at_most(kMaxKb).plausible(1, 1024)
                    .meaning("HBM capacity of the die.")
                    .field(&ChipParams::hbm, &HbmParams::size_gb));
    k.push_back(integer("chip.hbm.channels").unit("channels").at_least(1).at_most(4096)
                    .meaning("Independent channels, each bandwidth_gbps / channels.")
                    .field(&ChipParams::hbm, &HbmParams::channels));
    k.push_back(integer("chip.hbm.interleave_bytes").unit("B").at_least(32).at_most(1 << 20)
                    .meaning("Address interleave: consecutive blocks of this size go to consecutive channels; also the burst of the queueing wait.")
                    .field(&ChipParams::hbm, &HbmParams::interleave_bytes));
    k.push_back(number("chip.hbm.efficiency").unit("").above(0).at_most(1)
                    .meaning("Share of peak a pure read or write stream gets (refresh, row switches).")
                    .field(&ChipParams::hbm, &HbmParams::efficiency));
    k.push_back(number("chip.hbm.turnaround_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("Time a channel idles when it switches between reading and writing.")
                    .field(&ChipParams::hbm, &HbmParams::turnaround_ns));
    k.push_back(integer("chip.hbm.write_batch_bytes").unit("B").at_least(32).at_most(1 << 24)
                    .meaning("Writes a channel drains per switch of direction; mixed traffic pays two turnarounds per batch of its minority direction.")
                    .field(&ChipParams::hbm, &HbmParams::write_batch_bytes));

    // --- chip.interconnect (supernode mesh, docs/design.md §1.3, §2 Links) --------
    k.push_back(integer("chip.interconnect.ranks").unit("dies").at_least(1).at_most(384)
                    .meaning("Dies (ranks) joined by the memory-semantic mesh; 1 = a single die without a mesh. Required in a chip file with an `interconnect` section.")
                    .field(&ChipParams::interconnect, &InterconnectParams::ranks));
    k.push_back(integer("chip.interconnect.planes").unit("planes").at_least(1).at_most(64)
                    .meaning("Parallel link planes per rank; block addresses hash to planes, each plane has its own bandwidth and FIFO queues. Required with a mesh.")
                    .field(&ChipParams::interconnect, &InterconnectParams::planes));
    k.push_back(integer("chip.interconnect.node_size").unit("dies").at_least(1).at_most(384)
                    .meaning("Ranks per node: ranks r and s share a node when r / node_size = s / node_size. Writes inside a node use `intra_node`, writes between nodes `inter_node` (the switch tier). Required with a mesh of more than one rank.")
                    .field(&ChipParams::interconnect, &InterconnectParams::node_size));
    for (const auto& [tier, member, where, latency_meaning] :
         {std::tuple{"intra_node", &InterconnectParams::intra_node, "ranks of one node",
                     "through the node's switch"},
          std::tuple{"inter_node", &InterconnectParams::inter_node, "ranks of different nodes",
                     "through the switch tier between nodes"}}) {
        const std::string base = std::string("chip.interconnect.") + tier;
        k.push_back(number(base + ".latency_ns").unit("ns").at_least(0).at_most(kMaxNs).plausible(50, 100000)
                        .meaning(std::string("Between ") + where + ": time from a chunk's first byte leaving the sender's plane to its first byte reaching the receiver's plane, " + latency_meaning + "; also the write acknowledgement's way back. Required when some pair of ranks uses this tier.")
                        .field(&ChipParams::interconnect, member, &LinkTier::latency_ns));
        k.push_back(number(base + ".plane_bandwidth_gbps").unit("GB/s").above(0).at_most(kMaxGbps).plausible(1, 1000)
                        .meaning(std::string("Between ") + where + ": bandwidth of one plane end to end, per direction; a chunk occupies the sender's and the receiver's plane for (payload + headers) / this. Required when some pair of ranks uses this tier.")
                        .field(&ChipParams::interconnect, member, &LinkTier::plane_bandwidth_gbps));
    }
    k.push_back(integer("chip.interconnect.datablock_bytes").unit("B").at_least(64).at_most(65536)
                    .meaning("Aligned block the fabric delivers atomically (a multiple of 32); Data-as-Flag blocks carry this minus 8 B of payload. Required with a mesh.")
                    .field(&ChipParams::interconnect, &InterconnectParams::datablock_bytes));
    k.push_back(integer("chip.interconnect.header_bytes").unit("B").at_least(0).at_most(65535)
                    .meaning("Bytes on the wire with every DataBlock (address, length, CRC): a full 512 B block of payload costs 512 + this. Less than datablock_bytes.")
                    .field(&ChipParams::interconnect, &InterconnectParams::header_bytes));
    k.push_back(integer("chip.interconnect.ingress_buffer_bytes").unit("B").at_least(64).at_most(1 << 30).plausible(4096, 64 << 20)
                    .meaning("Per receiver plane: bytes that may wait there to land (credits). A sender's plane, and the MTE3 behind it, is held until its chunk's last byte fits, so an incast runs at the receiver's rate. At least one DataBlock with its header.")
                    .field(&ChipParams::interconnect, &InterconnectParams::ingress_buffer_bytes));
    k.push_back(Key("chip.interconnect.plane_hash", VT::enumeration).one_of({"mix", "modulo"})
                    .meaning("Block address to plane: `modulo` = block index mod planes, `mix` = a bit mix of the block index mod planes.")
                    .field(&ChipParams::interconnect, &InterconnectParams::plane_hash));
    k.push_back(integer("chip.interconnect.reorder_seed").at_least(0).at_most(2147483647)
                    .meaning("0: deterministic delivery without jitter. Otherwise each chunk gets a jitter in [0, latency_ns of its tier) from this seed, reordering writes across planes (never within a plane) so protocol bugs surface.")
                    .field(&ChipParams::interconnect, &InterconnectParams::reorder_seed));

    // --- chip.kernel (kernel API costs) -------------------------------------
    k.push_back(number("chip.kernel.sync_all_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("SyncAll: from the last AIV core of a die arriving to all of them leaving the barrier.")
                    .field(&ChipParams::kernel, &KernelCostParams::sync_all_ns));
    k.push_back(number("chip.kernel.flag_poll_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("One poll of a flag in GM (read and compare); a waiting core sees a flag this long after its block lands.")
                    .field(&ChipParams::kernel, &KernelCostParams::flag_poll_ns));
    // A DataCopy's fixed cost, in its physical parts (the memory latency is
    // the die's chip.l2 / chip.hbm latency, the bytes its ports' and tiers' rates).
    k.push_back(number("chip.kernel.descriptor_issue_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("MTE engine: fetching and decoding a DataCopy's descriptor and translating its addresses, from the instruction reaching the head of its pipe to its first byte moving.")
                    .field(&ChipParams::kernel, &KernelCostParams::descriptor_issue_ns));
    k.push_back(number("chip.kernel.completion_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("MTE engine: from a DataCopy's last byte arriving (or leaving, for a write to another rank) to the instruction reporting done.")
                    .field(&ChipParams::kernel, &KernelCostParams::completion_ns));
    k.push_back(number("chip.kernel.flag_handshake_ns").unit("ns").at_least(0).at_most(kMaxNs)
                    .meaning("SetFlag/WaitFlag: from an instruction reporting done to a dependent instruction of another pipe (or the waiting scalar) seeing it.")
                    .field(&ChipParams::kernel, &KernelCostParams::flag_handshake_ns));
    k.push_back(number("chip.kernel.issue_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("Scalar cycles to issue one MTE or vector instruction into its pipe's queue.")
                    .field(&ChipParams::kernel, &KernelCostParams::issue_cycles));
    k.push_back(number("chip.kernel.scalar_loop_cycles").unit("cycles").at_least(0).at_most(kMaxCycles)
                    .meaning("One iteration of a scalar loop over data in UB (load, compare, branch, update).")
                    .field(&ChipParams::kernel, &KernelCostParams::scalar_loop_cycles));

    // --- chip.host: the framework host runtime (docs/design.md §1.2, docs/host.md) ---
    k.push_back(integer("chip.host.threads").unit("threads").at_least(1).at_most(1024)
                    .meaning("Host threads the runtime may use: sync needs 1, async 2, pipeline 3, hetero 3 + at least 1 CPU worker.")
                    .field(&ChipParams::host, &HostParams::threads));
    {
        static const HostStageCosts d;
        auto cost = [&](const char* key, double HostStageCosts::*m, const std::string& meaning) {
            k.push_back(number(std::string("chip.host.") + key).unit("µs").at_least(0).at_most(1e6).def(d.*m)
                            .meaning(meaning)
                            .apply([m](ChipParams& c, const json& v) { c.host.costs.*m = v.get<double>(); }));
        };
        cost("frontend_us", &HostStageCosts::frontend_us,
             "Framework frontend per op on the caller thread (Python binding, dispatcher, op registration; static shapes). Paid before prepare, in every mode; CPU-subgraph ops pay it too.");
        cost("frontend_dynamic_us", &HostStageCosts::frontend_dynamic_us, "Framework frontend per op (dynamic shapes).");
        cost("prepare_us", &HostStageCosts::prepare_us, "Input preparation per op (static shapes).");
        cost("prepare_dynamic_us", &HostStageCosts::prepare_dynamic_us, "Input preparation per op (dynamic shapes).");
        cost("infer_us", &HostStageCosts::infer_us, "InferShape per op: output shapes and attributes (static shapes).");
        cost("infer_dynamic_us", &HostStageCosts::infer_dynamic_us, "InferShape per op (dynamic shapes).");
        cost("resize_us", &HostStageCosts::resize_us, "Resize per op: tiling and memory sizes (static shapes).");
        cost("resize_dynamic_us", &HostStageCosts::resize_dynamic_us, "Resize per op (dynamic shapes: tiling recomputed).");
        cost("alloc_us", &HostStageCosts::alloc_us, "Launch stage: device memory allocation of the op's output (static shapes).");
        cost("alloc_dynamic_us", &HostStageCosts::alloc_dynamic_us, "Allocation (dynamic shapes).");
        cost("launch_us", &HostStageCosts::launch_us, "Launch stage: the kernel launch call, before descriptor submission (static shapes).");
        cost("launch_dynamic_us", &HostStageCosts::launch_dynamic_us, "Launch call (dynamic shapes).");
        cost("free_us", &HostStageCosts::free_us, "Launch stage: one free of a tensor whose last reader was just launched (static shapes).");
        cost("free_dynamic_us", &HostStageCosts::free_dynamic_us, "One free (dynamic shapes).");
    }
    k.push_back(Key("chip.host.op_costs", VT::object).def(host::default_op_costs())
                    .meaning("Per-op-type costs that differ from the chip-wide ones, e.g. `{\"Conv2D\": {\"resize_us\": 10}}`; "
                             "keys as above, merged over this default table per op type and key.")
                    .apply([](ChipParams& c, const json& v) { c.host.op_costs = host::resolve_op_costs(v); }));
    k.push_back(integer("chip.host.descriptor_bytes").unit("B").at_least(1).at_most(1048576)
                    .meaning("Size of one task descriptor written to the device's queues at launch.")
                    .field(&ChipParams::host, &HostParams::descriptor_bytes));
    k.push_back(integer("chip.host.param_block_bytes").unit("B").at_least(0).at_most(1048576)
                    .meaning("Size of one task's parameter block, written with its descriptor.")
                    .field(&ChipParams::host, &HostParams::param_block_bytes));
    k.push_back(number("chip.host.link_gbps").unit("GB/s").above(0).at_most(kMaxGbps).plausible(1, 1000)
                    .meaning("Host <-> device link bandwidth (descriptor submission, value and shape copies).")
                    .field(&ChipParams::host, &HostParams::link_gbps));
    k.push_back(number("chip.host.submit_latency_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Fixed cost of one descriptor submission (doorbell, runtime call), paid per batch.")
                    .field(&ChipParams::host, &HostParams::submit_latency_us));
    k.push_back(number("chip.host.copy_latency_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Fixed cost of one device <-> host copy (value of a value-dependent op, shape of a compute-dependent op, CPU-op operands).")
                    .field(&ChipParams::host, &HostParams::copy_latency_us));
    k.push_back(number("chip.host.sync_latency_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("From the device finishing to a waiting host thread resuming (stream synchronize).")
                    .field(&ChipParams::host, &HostParams::sync_latency_us));
    k.push_back(number("chip.host.queue_push_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Handing a task to another host thread's queue (lock, enqueue, notify), on the pushing thread: runner/resize -> launch, infer -> resize, infer -> CPU workers.")
                    .field(&ChipParams::host, &HostParams::queue_push_us));
    k.push_back(number("chip.host.queue_pop_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Taking a task from a queue, on the serving thread.")
                    .field(&ChipParams::host, &HostParams::queue_pop_us));
    k.push_back(Key("chip.host.worker_wait", VT::enumeration).one_of({"sleep", "spin"}).def("sleep")
                    .meaning("How an idle host thread waits for work or for the device: `sleep` (off its core, woken after wake_latency_us) or `spin` (polls on a core: spin_latency_us, but it takes a host core while it waits).")
                    .field(&ChipParams::host, &HostParams::worker_wait));
    k.push_back(number("chip.host.wake_latency_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Sleeping worker: from the push of a task to the worker running (futex / eventfd wake-up and scheduling).")
                    .field(&ChipParams::host, &HostParams::wake_latency_us));
    k.push_back(number("chip.host.spin_latency_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Spinning worker: from the push of a task to the worker seeing it (cache-line hand-over).")
                    .field(&ChipParams::host, &HostParams::spin_latency_us));
    k.push_back(integer("chip.host.launch_queue_depth").unit("tasks").at_least(1).at_most(1048576)
                    .meaning("Capacity of each queue on the launch path (async: runner -> launch; pipeline, hetero: infer -> resize and resize -> launch). A full queue blocks the pushing thread until its server takes a task (back-pressure), so a slow launch thread holds the caller back.")
                    .field(&ChipParams::host, &HostParams::launch_queue_depth));
    k.push_back(integer("chip.host.cores").unit("cores").at_least(1).at_most(4096)
                    .meaning("Host cores the runtime's threads share. With more busy threads (and spinning waiters) than cores, each runs at cores / busy of full speed (processor sharing).")
                    .field(&ChipParams::host, &HostParams::cores));
    k.push_back(number("chip.host.pool_segment_mb").unit("MB").above(0).at_most(1048576)
                    .meaning("The device memory pool reserves device memory from the driver in multiples of this segment (a caching allocator's block).")
                    .field(&ChipParams::host, &HostParams::pool_segment_mb));
    k.push_back(number("chip.host.pool_grow_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("An allocation that grows the pool past its reserved segments pays this on the launch thread (a driver allocation call).")
                    .field(&ChipParams::host, &HostParams::pool_grow_us));
        k.push_back(number("chip.host.cpu.gflops_per_thread").unit("GFLOP/s").above(0).at_most(1e6).plausible(1, 2000)
                    .meaning("Compute rate of one host thread running a CPU-subgraph op (hetero).")
                    .field(&ChipParams::host, &HostParams::cpu_gflops_per_thread));
    k.push_back(number("chip.host.cpu.gbps_per_thread").unit("GB/s").above(0).at_most(kMaxGbps).plausible(0.5, 200)
                    .meaning("Memory rate of one host thread running a CPU-subgraph op (hetero).")
                    .field(&ChipParams::host, &HostParams::cpu_gbps_per_thread));
    k.push_back(number("chip.host.cpu.op_overhead_us").unit("µs").at_least(0).at_most(1e6)
                    .meaning("Fixed cost of one CPU-subgraph op (hetero).")
                    .field(&ChipParams::host, &HostParams::cpu_op_overhead_us));

    // --- workload ---------------------------------------------------------
    // A new workload kind adds its name to workload.kind's list, its keys
    // with .kind("name") and a section in build_sections().
    k.push_back(Key("workload.kind", VT::enumeration)
                    .one_of(workload_kind_names())
                    .required()
                    .meaning("What the workload is; selects which other workload keys exist.")
                    .field(&WorkloadParams::kind));
    k.push_back(Key("workload.file", VT::string)
                    .kind("tasks")
                    .required()
                    .meaning("Task-descriptor stream (JSON Lines) to replay; in a `.json` workload file, relative to that file.")
                    .field(&WorkloadParams::file));

    // Kind "graph": a model graph compiled on the fly (docs/design.md §4.6).
    k.push_back(Key("workload.file", VT::string)
                    .kind("graph")
                    .required()
                    .meaning("The model graph file (set from `--workload`).")
                    .field(&WorkloadParams::file));
    k.push_back(Key("workload.batch", VT::integer).kind("graph").def(1).at_least(1).at_most(65536)
                    .default_note("the graph's `dims.batch`, else 1")
                    .meaning("Batch size: the graph's `batch` dimension (set, it overrides the graph's own `dims.batch`).")
                    .field(&WorkloadParams::graph, &GraphWorkload::batch));
    k.push_back(Key("workload.sync", VT::enumeration).kind("graph").def("tile").one_of({"op", "tile"})
                    .meaning("Event granularity: `op` waits for all tiles of a producer, `tile` only for the tiles a task reads.")
                    .field_enum(&WorkloadParams::graph, &GraphWorkload::sync));
    k.push_back(Key("workload.input_layout", VT::enumeration).kind("graph").def("NCHW").one_of({"NCHW", "NC1HWC0"})
                    .meaning("Layout the framework hands 4-D graph inputs over in; `NC1HWC0` needs no input conversion.")
                    .field_enum(&WorkloadParams::graph, &GraphWorkload::input_layout));
    k.push_back(Key("workload.passes.fold_bn", VT::boolean).kind("graph").def(true)
                    .meaning("Fold BatchNorm into the preceding Conv2D's weights and bias.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.passes.fold_bn = v.get<bool>(); }));
    k.push_back(Key("workload.passes.fuse_activation", VT::boolean).kind("graph").def(true)
                    .meaning("Apply ReLU in the Cube core's FixPipe instead of a separate Vector task.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.passes.fuse_activation = v.get<bool>(); }));
    k.push_back(Key("workload.passes.fuse_vector", VT::boolean).kind("graph").def(true)
                    .meaning("Fuse chains of element-wise Vector ops into one task (data enters UB once).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.passes.fuse_vector = v.get<bool>(); }));
    k.push_back(
        Key("workload.passes.explore_cube_cores", VT::boolean)
            .kind("graph")
            .def(true)
            .meaning(
                "Also plan the graph for fewer Cube cores (every multiple of 4 below the chip's count down to 4; every count below 8 cores) and keep the plan whose run on the die model (in this process, with the modules of a run) ends first (on a tie, the one for fewer cores). Skipped for graphs of more than 16 Cube kernels (compile time) and for graphs that wait on other ranks or run kernel programs (Dispatch, Combine): one die cannot run them alone.")
            .apply_workload(
                [](WorkloadParams& w, const json& v) { w.graph.passes.explore_cube_cores = v.get<bool>(); }));
    k.push_back(
        Key("workload.passes.search_cube_plans", VT::boolean)
            .kind("graph")
            .def(true)
            .meaning(
                "Also plan the graph with each Cube kernel's runner-up block counts (the best with more row blocks, with more tiles, with fewer tiles, with tiles of whole rows, within 15% of its own estimate) and the two fastest by the estimate that move fewer bytes than every count estimated faster, each forced on every kernel of the same dims at once, and keep each that makes the whole plan run faster on the die model. Skipped for graphs of more than 16 Cube kernels (compile time) and for graphs that wait on other ranks or run kernel programs (Dispatch, Combine).")
            .apply_workload(
                [](WorkloadParams& w, const json& v) { w.graph.passes.search_cube_plans = v.get<bool>(); }));
    k.push_back(
        Key("workload.passes.explore_vector_cores", VT::boolean)
            .kind("graph")
            .def(true)
            .meaning(
                "Also plan the graph for fewer vector cores (the counts explore_cube_cores tries, of vector cores), run each plan the Vector tiler cuts otherwise than those before it on the die model, and when one ends sooner than the plan for every vector core, run the Cube searches from it too; the searched plan that ends first goes. Skipped where explore_cube_cores is.")
            .apply_workload(
                [](WorkloadParams& w, const json& v) { w.graph.passes.explore_vector_cores = v.get<bool>(); }));
    k.push_back(Key("workload.passes.hoist_layout", VT::boolean).kind("graph").def(true)
                    .meaning("Merge FormatConvert tasks per tensor and hoist them toward the graph inputs.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.passes.hoist_layout = v.get<bool>(); }));
    k.push_back(Key("workload.fusion_boundary", VT::enumeration).kind("graph").def("auto").one_of({"auto", "fuse", "split"})
                    .meaning("Cube op followed by heavy Vector work: decide by cost (`auto`) or force fusing / splitting.")
                    .field_enum(&WorkloadParams::graph, &GraphWorkload::fusion_boundary));
    k.push_back(Key("workload.dims", VT::object).kind("graph").def(json::object())
                    .meaning("Values for the graph's symbolic dimensions, e.g. `{\"seq_len\": 256}` (unset ones keep the graph's defaults).")
                    .apply_workload(read_dims));
    k.push_back(Key("workload.tiling", VT::object).kind("graph").def(json::object())
                    .meaning("Forced tilings by node name (or an inserted FormatConvert's, as the compile report lists it), e.g. `{\"conv1\": {\"m_blocks\": 2, \"n_blocks\": 8}}`; `k_blocks` splits a MatMul's K, `tiles` cuts a Vector op.")
                    .apply_workload(read_tiling));
    // Host runtime (docs/design.md §1.2, docs/host.md).
    k.push_back(Key("workload.host_mode", VT::enumeration).kind("graph").def("off")
                    .one_of({"off", "sync", "async", "pipeline", "hetero"})
                    .meaning("Framework host model: `off` launches every kernel at time 0 (device only); `sync`, `async`, `pipeline`, `hetero` as in docs/host.md.")
                    .field_enum(&WorkloadParams::graph, &GraphWorkload::host_mode));
    k.push_back(Key("workload.submit_batch", VT::integer).kind("graph").def(16).at_least(0).at_most(1048576)
                    .meaning("Task descriptors per submission at launch; 0 = all of a kernel's descriptors in one submission.")
                    .field(&WorkloadParams::graph, &GraphWorkload::submit_batch));
    k.push_back(Key("workload.cpu_ops", VT::string_or_strings).kind("graph").def(json::array())
                    .meaning("Node names run on host CPU threads in `hetero` mode, besides nodes with `\"device\": \"cpu\"`.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.cpu_ops = strings(v); }));
    k.push_back(Key("workload.dynamic_shapes", VT::boolean).kind("graph").def(false)
                    .meaning("Host pays the dynamic-shape costs (chip.host.*_dynamic_us) for every op.")
                    .field(&WorkloadParams::graph, &GraphWorkload::dynamic_shapes));

    k.push_back(Key("workload.capacity", VT::enumeration).kind("graph").def("error").one_of({"error", "warn"})
                    .meaning("A graph whose HBM footprint (weights + inputs + the most activations alive at once) exceeds chip.hbm.size_gb: exit 2 with the figures (`error`), or a warning and the run goes on (`warn`, for what-if studies past the die's capacity).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.capacity_error = v.get<std::string>() == "error"; }));

    // Graphs that span ranks (docs/graph-format.md): defaults of the communication ops.
    k.push_back(Key("workload.variant", VT::enumeration).kind("graph").def("optimized").one_of({"baseline", "optimized"})
                    .meaning("Dispatch and Combine nodes without attrs.variant: `baseline` (BSP: SyncAll between phases, data and counts checked together) or `optimized` (counts first, Data-as-Flag blocks, reorder on arrival, no SyncAll).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.comm_optimized = v.get<std::string>() == "optimized"; }));
    k.push_back(Key("workload.flag_in_block", VT::boolean).kind("graph").def(true)
                    .meaning("Optimized Dispatch: the 8 B flag travels in every 512 B block with the payload (Data-as-Flag); false = one separate flag block after the data, with no barrier (unsafe: the stale reads it causes are counted).")
                    .field(&WorkloadParams::graph, &GraphWorkload::flag_in_block));
    k.push_back(Key("workload.routing.distribution", VT::enumeration).kind("graph").def("uniform").one_of({"uniform", "zipf"})
                    .meaning("How a Dispatch's tokens pick their top-k experts: `uniform`, or `zipf` (Zipf over a seeded permutation of the experts, exponent `skew`).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.routing.zipf = v.get<std::string>() == "zipf"; }));
    k.push_back(Key("workload.routing.skew", VT::number).kind("graph").def(1.0).at_least(0).at_most(4)
                    .meaning("Zipf exponent of the `zipf` distribution.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.routing.skew = v.get<double>(); }));
    k.push_back(Key("workload.routing.seed", VT::integer).kind("graph").def(1).at_least(0).at_most(2147483647)
                    .meaning("Seed of the token routing (each token's top-k experts, from (seed, rank, token)).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.routing.seed = v.get<std::uint64_t>(); }));
    k.push_back(Key("workload.routing.redundant_experts", VT::integer).kind("graph").def(0).at_least(0).at_most(4096)
                    .meaning("Extra expert slots holding copies of the hottest experts (EPLB); a token routed to a copied expert takes one copy by hash. Experts + these must divide across a Dispatch's ranks.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.graph.routing.redundant_experts = v.get<int>(); }));

    // Kind "collective": one collective over every rank (docs/collectives.md).
    k.push_back(Key("workload.op", VT::enumeration).kind("collective").required()
                    .one_of({"allreduce", "allgather", "reduce_scatter", "alltoall"})
                    .meaning("The collective: `allreduce` (every rank ends with the sum), `allgather` (every rank ends with every rank's piece), `reduce_scatter` (rank r ends with the sum of piece r), `alltoall` (rank r's piece d goes to rank d).")
                    .field_enum(&WorkloadParams::collective, &CollectiveWorkload::op));
    k.push_back(Key("workload.algorithm", VT::enumeration).kind("collective").def("ring").one_of({"ring", "mesh"})
                    .meaning("`ring`: N-1 steps to the next rank (2(N-1) for allreduce), each step's chunk sent Data-as-Flag and reduced on arrival; `mesh`: every rank writes its pieces straight to every peer in one step (two for allreduce).")
                    .field_enum(&WorkloadParams::collective, &CollectiveWorkload::algorithm));
    k.push_back(Key("workload.bytes", VT::integer).kind("collective").unit("B").required().at_least(1).at_most(17179869184.0)
                    .meaning("Buffer per rank: the input of allreduce, reduce_scatter and alltoall, the output of allgather; a whole number of `dtype` elements.")
                    .field(&WorkloadParams::collective, &CollectiveWorkload::bytes));
    k.push_back(Key("workload.dtype", VT::enumeration).kind("collective").def("fp16").one_of({"fp16", "bf16", "fp32", "int8"})
                    .meaning("Element type: the reductions' vector lanes (2, 2, 4 or 1 B).")
                    .field_enum(&WorkloadParams::collective, &CollectiveWorkload::dtype));
    k.push_back(Key("workload.notes", VT::string_or_strings).kind("collective").def(json::array())
                    .meaning("Free text about the workload. Not read by the simulator."));
    add_llm_keys(k);
    return k;
}

// workload.streams: {"attention": {"cube": N, "vector": N}, "moe": {...}}.
void read_streams(WorkloadParams& w, const json& v) {
    static const std::vector<std::string> streams = {"attention", "moe"}, cores = {"cube", "vector"};
    w.llm.attention_cores = w.llm.moe_cores = {};
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string where = "workload.streams." + it.key();
        if (std::find(streams.begin(), streams.end(), it.key()) == streams.end())
            throw InputError(fmt::format("workload.streams: unknown stream '{}'; expected attention and moe{}", it.key(),
                                         did_you_mean(it.key(), streams)));
        if (!it->is_object())
            throw InputError(fmt::format("{}: expected an object like {{\"cube\": 16, \"vector\": 32}}", where));
        LlmWorkload::Cores& c = it.key() == "attention" ? w.llm.attention_cores : w.llm.moe_cores;
        for (auto kv = it->begin(); kv != it->end(); ++kv) {
            if (std::find(cores.begin(), cores.end(), kv.key()) == cores.end())
                throw InputError(fmt::format("{}: unknown key '{}'; expected cube and vector{}", where, kv.key(),
                                             did_you_mean(kv.key(), cores)));
            if (!kv->is_number_integer() || kv->get<std::int64_t>() < 1 || kv->get<std::int64_t>() > 4096)
                throw InputError(fmt::format("{}.{}: expected a core count 1..4096, got {}", where, kv.key(), kv->dump()));
            (kv.key() == "cube" ? c.cube : c.vector) = kv->get<int>();
        }
        if (c.cube == 0 || c.vector == 0)
            throw InputError(fmt::format("{}: give both cube and vector core counts", where));
    }
}

// Kind "llm" (docs/llm.md): a serving step of a Hugging Face model.
void add_llm_keys(std::vector<KeySpec>& k) {
    using VT = ValueType;
    k.push_back(Key("workload.model", VT::string).kind("llm").required()
                    .meaning("The model's Hugging Face `config.json`, as its authors publish it; in a run file, relative to that file.")
                    .field(&WorkloadParams::llm, &LlmWorkload::model));
    k.push_back(Key("workload.phase", VT::enumeration).kind("llm").def("decode").one_of({"decode", "prefill"})
                    .meaning("`decode`: one output token for each of `batch` sequences per die, over a KV cache of `kv_len`; `prefill`: `batch` prompts of `prompt_len` tokens per die.")
                    .field_enum(&WorkloadParams::llm, &LlmWorkload::phase));
    k.push_back(Key("workload.batch", VT::integer).kind("llm").def(1).at_least(1).at_most(4096)
                    .meaning("Sequences per die (with `microbatches` 2, split between the two).")
                    .field(&WorkloadParams::llm, &LlmWorkload::batch));
    k.push_back(
        Key("workload.kv_len", VT::integer)
            .kind("llm")
            .only_with("workload.phase", "decode")
            .def(4096)
            .at_least(1)
            .at_most(16777216)
            .unit("tokens")
            .meaning(
                "Decode: tokens already in each sequence's KV cache (at most the config's max_position_embeddings).")
            .field(&WorkloadParams::llm, &LlmWorkload::kv_len));
    k.push_back(Key("workload.prompt_len", VT::integer)
                    .kind("llm")
                    .only_with("workload.phase", "prefill")
                    .def(4096)
                    .at_least(1)
                    .at_most(16777216)
                    .unit("tokens")
                    .meaning("Prefill: tokens per prompt (at most the config's max_position_embeddings).")
                    .field(&WorkloadParams::llm, &LlmWorkload::prompt_len));
    k.push_back(Key("workload.layers", VT::integer).kind("llm").def(0).at_least(0).at_most(4096)
                    .meaning("Run the model's first N decoder layers (then the final norm and the LM head); 0 = all of them.")
                    .field(&WorkloadParams::llm, &LlmWorkload::layers));
    k.push_back(Key("workload.ep", VT::integer).kind("llm").def(0).at_least(0).at_most(4096)
                    .meaning("Expert-parallel width in dies: consecutive blocks of `ep` dies share the experts; 0 = every die. Must divide the dies, and the experts (+ redundant copies) must divide across it.")
                    .field(&WorkloadParams::llm, &LlmWorkload::ep));
    k.push_back(Key("workload.attention_tp", VT::integer).kind("llm").def(1).at_least(1).at_most(64)
                    .meaning("Attention tensor parallelism: consecutive groups of this many dies split the heads of `attention_tp` x `batch` sequences (ReduceScatter after the output projection, AllGather before the next layer's); 1 = data-parallel attention.")
                    .field(&WorkloadParams::llm, &LlmWorkload::attention_tp));
    k.push_back(Key("workload.quant", VT::enumeration).kind("llm").def("w8a8").one_of({"w8a8", "bf16"})
                    .meaning("`w8a8`: int8 weights and per-token int8 activations into every linear layer (and int8 Dispatch); `bf16`: bf16 throughout.")
                    .field_enum(&WorkloadParams::llm, &LlmWorkload::quant));
    k.push_back(Key("workload.microbatches", VT::integer).kind("llm").def(1).at_least(1).at_most(2)
                    .meaning("2: two micro-batches of batch/2 each, one's attention overlapping the other's MoE, on the core split of `streams`.")
                    .field(&WorkloadParams::llm, &LlmWorkload::microbatches));
    k.push_back(
        Key("workload.streams", VT::object)
            .kind("llm")
            .only_with("workload.microbatches", 2)
            .def(json::object())
            .meaning(
                "The die's core split between two streams, e.g. `{\"attention\": {\"cube\": 16, \"vector\": 32}, \"moe\": {\"cube\": 8, \"vector\": 16}}`: attention, norms and residuals on the first cores, gating, Dispatch, experts, shared expert and Combine on the next ones. Required with `microbatches` 2.")
            .apply_workload(read_streams));
    k.push_back(Key("workload.shared_expert_ranks", VT::integer).kind("llm").def(0).at_least(0).at_most(4096)
                    .meaning("Dies that host only shared-expert replicas (the last ones of each EP group); 0 = every die runs the shared expert of its own tokens.")
                    .field(&WorkloadParams::llm, &LlmWorkload::shared_expert_ranks));
    k.push_back(Key("workload.variant", VT::enumeration).kind("llm").def("optimized").one_of({"baseline", "optimized"})
                    .meaning("Dispatch and Combine kernels: `baseline` (BSP) or `optimized` (Data-as-Flag), as for graphs.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.comm_optimized = v.get<std::string>() == "optimized"; }));
    k.push_back(Key("workload.capacity", VT::enumeration).kind("llm").def("error").one_of({"error", "warn"})
                    .meaning("A deployment whose die needs more HBM than chip.hbm.size_gb (weights + KV cache, then with the activations alive at once): exit 2 with the figures (`error`), or a warning and the run goes on (`warn`).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.capacity_error = v.get<std::string>() == "error"; }));
    k.push_back(Key("workload.routing.distribution", VT::enumeration).kind("llm").def("uniform").one_of({"uniform", "zipf"})
                    .meaning("How tokens pick their experts: `uniform`, or `zipf` (exponent `skew`) over a seeded permutation; each layer draws its own (seed + layer).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.routing.zipf = v.get<std::string>() == "zipf"; }));
    k.push_back(Key("workload.routing.skew", VT::number).kind("llm").def(1.0).at_least(0).at_most(4)
                    .meaning("Zipf exponent of the `zipf` distribution.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.routing.skew = v.get<double>(); }));
    k.push_back(Key("workload.routing.seed", VT::integer).kind("llm").def(1).at_least(0).at_most(2147483647)
                    .meaning("Seed of the routing; layer L draws with seed + L.")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.routing.seed = v.get<std::uint64_t>(); }));
    k.push_back(Key("workload.routing.redundant_experts", VT::integer).kind("llm").def(0).at_least(0).at_most(4096)
                    .meaning("Extra expert slots holding copies of the hottest experts (EPLB).")
                    .apply_workload([](WorkloadParams& w, const json& v) { w.llm.routing.redundant_experts = v.get<int>(); }));
    k.push_back(Key("workload.file", VT::string).kind("llm").required()
                    .meaning("The run file (set from `--workload`).")
                    .field(&WorkloadParams::file));
    k.push_back(Key("workload.name", VT::string).kind("llm").def("")
                    .meaning("A name for the run: the built graph's name.")
                    .field(&WorkloadParams::llm, &LlmWorkload::name));
    k.push_back(Key("workload.notes", VT::string_or_strings).kind("llm").def(json::array())
                    .meaning("Free text about the workload. Not read by the simulator."));
}

std::vector<SectionSpec> build_sections() {
    return {
        {"chip", "", "Chip", "Top-level keys of a chip file."},
        {"chip.cores.cube", "", "Cube cores", "Matrix cores (AIC on split parts): MTE2 -> L1 -> MTE1 -> L0A/L0B -> cube -> L0C -> FixPipe."},
        {"chip.cores.vector", "", "Vector cores", "Vector cores (AIV on split parts): MTE2 -> UB -> V pipe -> UB -> MTE3."},
        {"chip.cores.scalar", "", "Scalar cores", "Control cores that fetch task descriptors, resolve events and dispatch."},
        {"chip.buffers", "", "On-core buffers", "Buffer capacities per core; tiles must fit in them."},
        {"chip.l2", "", "L2", "Shared L2 of the die, in front of HBM."},
        {"chip.hbm", "", "HBM", "Global memory of the die."},
        {"chip.host", "", "Host runtime", "The framework host of kernel-by-kernel execution (docs/design.md §1.2): per-op costs, threads, descriptor submission. Used when workload.host_mode is not `off`; see docs/host.md."},
        {"chip.host.cpu", "", "Host CPU cost model", "Cost of ops of the CPU subgraph in `hetero` host mode, per host thread."},
        {"chip.interconnect", "", "Interconnect (supernode mesh)",
         "Memory-semantic mesh joining `ranks` dies in nodes of `node_size` (docs/design.md §1.3, §2 Links): per rank "
         "and plane an egress and an ingress FIFO, the tier's latency plus (payload + headers) / the tier's bandwidth, "
         "writes cut into atomic DataBlocks and hashed to planes by address, unordered across planes; a receiver "
         "plane holds at most `ingress_buffer_bytes` waiting to land and holds senders back beyond that. The keys get "
         "defaults on every chip; a chip file that has an `interconnect` section must give `ranks`, `planes` and "
         "`datablock_bytes`, with more than one rank also `node_size`, and the `latency_ns` and "
         "`plane_bandwidth_gbps` of every tier some pair of ranks uses (`intra_node` if `node_size` > 1, "
         "`inter_node` if `ranks` > `node_size`). The flat `plane_bandwidth_gbps` and `plane_latency_ns` of "
         "earlier versions are errors naming these keys."},
        {"chip.interconnect.intra_node", "", "Mesh tier inside a node",
         "Writes between ranks of one node (through the node's switch)."},
        {"chip.interconnect.inter_node", "", "Mesh tier between nodes",
         "Writes between ranks of different nodes (through the switch tier between nodes; non-blocking: contention "
         "is at the sender's and the receiver's planes only)."},
        {"chip.kernel", "", "Kernel API costs",
         "Fixed costs of the AIV kernel API (hw/aiv_core) that are not bandwidth: barriers, polls, instruction overheads."},
        {"workload", "graph", "Workload kind `graph`",
         "Compiles a model graph (docs/graph-format.md) on the fly. Given as `--workload MODEL.json`; the graph file's own "
         "`workload` object gives per-model defaults, `--set workload.*` overrides them."},
        {"workload.passes", "graph", "Compiler passes (kind `graph`)", "Each pass of the built-in compiler, switchable."},
        {"workload.routing", "graph", "Token routing (kind `graph`)",
         "How the Dispatch nodes of a graph route tokens to experts; every rank draws the same routing (docs/graph-format.md, \"Dispatch\")."},
        {"workload", "tasks", "Workload kind `tasks`",
         "Replays a task-descriptor stream (docs/design.md §4.3). Given directly as `--workload FILE.jsonl`, the section is "
         "`{\"kind\": \"tasks\", \"file\": \"FILE.jsonl\"}`."},
        {"workload", "llm", "Workload kind `llm`",
         "A decode or prefill step of a Hugging Face model (`workload.model`) on every die of the chip: npusim builds "
         "each die's graph (attention, MoE with Dispatch / experts / Combine, dense FFN, LM head), compiles it once for "
         "all dies and runs them as one system. Given as `--workload models/llm/deepseek_v3.json`; see docs/llm.md."},
        {"workload.routing", "llm", "Token routing (kind `llm`)", "How each MoE layer's Dispatch routes tokens to experts."},
        {"workload", "collective", "Workload kind `collective`",
         "One collective over every rank of the chip (`chip.interconnect.ranks`, at least 2), generated into a "
         "cross-rank task stream: copies between ranks over the mesh (Data-as-Flag), reductions on every rank's "
         "vector cores. Given as `--workload models/collective_allreduce.json`; see docs/collectives.md."},
    };
}

std::string parent_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string escape_cell(std::string s) {
    // Table cells cannot hold a bare '|'.
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else out += c;
    }
    return out;
}

std::string type_cell(const KeySpec& k) {
    switch (k.type) {
        case ValueType::integer: return "integer";
        case ValueType::number: return "number";
        case ValueType::boolean: return "boolean";
        case ValueType::string: return "string";
        case ValueType::string_or_strings: return "string or list of strings";
        case ValueType::object: return "object";
        case ValueType::enumeration: {
            std::string s = "one of ";
            for (std::size_t i = 0; i < k.allowed.size(); ++i) {
                if (i) s += ", ";
                s += "`" + k.allowed[i] + "`";
            }
            return s;
        }
    }
    return "?";
}

std::string default_cell(const KeySpec& k) {
    if (k.required) return "**required**";
    if (!k.default_note.empty()) return k.default_note;
    const json& d = k.default_value;
    if (d.is_number()) return format_number(d.get<double>());
    return "`" + d.dump() + "`";
}

// The schema's only_with rule, in words.
std::string only_with_note(const KeySpec& k) {
    if (k.only_with.first.empty()) return "";
    const json& v = k.only_with.second;
    return fmt::format(
        " Read only when `{}` is `{}`: given otherwise, an error (unless it comes from the workload file and "
        "a `--set` changed `{}`).",
        k.only_with.first, v.is_string() ? v.get<std::string>() : v.dump(), k.only_with.first);
}

std::string range_cell(const KeySpec& k) {
    std::string s;
    if (k.min) s += std::string(k.min->inclusive ? ">= " : "> ") + format_number(k.min->value);
    if (k.max) {
        if (!s.empty()) s += ", ";
        s += std::string(k.max->inclusive ? "<= " : "< ") + format_number(k.max->value);
    }
    if (k.plausible)
        s += fmt::format("{}plausible {} to {}", s.empty() ? "" : "; ", format_number(k.plausible->first),
                         format_number(k.plausible->second));
    return s.empty() ? "—" : s;
}

}  // namespace

std::string plausibility_warning(const KeySpec& key, double value) {
    if (!key.plausible || (value >= key.plausible->first && value <= key.plausible->second)) return "";
    const std::string unit = key.unit.empty() ? "" : " " + key.unit;
    return fmt::format("{} = {}{} is far outside what real chips have (plausible: {} to {}{}); running it as given",
                       key.path, format_number(value), unit, format_number(key.plausible->first),
                       format_number(key.plausible->second), unit);
}

const std::vector<KeySpec>& config_keys() {
    static const std::vector<KeySpec> keys = build_keys();
    return keys;
}

const std::vector<SectionSpec>& config_sections() {
    static const std::vector<SectionSpec> sections = build_sections();
    return sections;
}

const std::vector<std::string>& workload_kinds() {
    static const std::vector<std::string> kinds = find_key("workload.kind", "")->allowed;
    return kinds;
}

bool key_applies(const KeySpec& key, const std::string& kind) {
    return key.workload_kind.empty() || key.workload_kind == kind;
}

const KeySpec* find_key(const std::string& path, const std::string& kind) {
    for (const auto& k : config_keys())
        if (k.path == path && key_applies(k, kind)) return &k;
    return nullptr;
}

bool is_group(const std::string& path, const std::string& kind) {
    const std::string prefix = path + ".";
    for (const auto& k : config_keys())
        if (key_applies(k, kind) && k.path.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
}

std::string retired_key_message(const std::string& path) {
    // The one-tier mesh's flat link keys became the two tiers' (docs/design.md §2 Links).
    for (const char* key : {"plane_bandwidth_gbps", "plane_latency_ns"}) {
        if (path != std::string("chip.interconnect.") + key) continue;
        const std::string now = std::string(key) == "plane_latency_ns" ? "latency_ns" : key;
        return path + " is no longer a key: the mesh has two tiers; give chip.interconnect.intra_node." + now +
               " and chip.interconnect.inter_node." + now;
    }
    static const std::map<std::string, std::string> split = {
        {"chip.kernel.mte_setup_ns",
         "chip.kernel.mte_setup_ns was split into chip.kernel.descriptor_issue_ns, chip.kernel.completion_ns and "
         "chip.kernel.flag_handshake_ns; the memory latency is the die's own (chip.l2.latency_ns, chip.hbm.latency_ns)"},
        {"chip.kernel.vector_setup_cycles",
         "chip.kernel.vector_setup_cycles is gone: a kernel's vector() is costed like a vector task, with "
         "chip.cores.vector.issue_cycles per instruction"},
    };
    const auto it = split.find(path);
    return it == split.end() ? std::string() : it->second;
}

std::vector<std::string> child_names(const std::string& path, const std::string& kind) {
    const std::string prefix = path.empty() ? std::string() : path + ".";
    std::set<std::string> names;
    for (const auto& k : config_keys()) {
        if (!key_applies(k, kind) || k.path.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = k.path.substr(prefix.size());
        names.insert(rest.substr(0, rest.find('.')));
    }
    return {names.begin(), names.end()};
}

std::string unknown_key_hint(const std::string& name, const std::string& path, const std::string& kind) {
    const std::vector<std::string> siblings = child_names(path, kind);
    if (std::string hint = did_you_mean(name, siblings); !hint.empty()) return hint;
    // A key with its unit left off: the shortest sibling that is it plus "_...".
    std::string unit;
    for (const auto& s : siblings)
        if (s.size() > name.size() + 1 && s.compare(0, name.size() + 1, name + "_") == 0 && (unit.empty() || s.size() < unit.size()))
            unit = s;
    if (!unit.empty()) return " (did you mean '" + unit + "'?)";
    if (path == "workload" && kind == "graph")
        return " (did you mean 'workload.dims." + name + "', a dimension of the graph?)";
    return "";
}

std::string type_phrase(const KeySpec& k) {
    switch (k.type) {
        case ValueType::integer: return "an integer";
        case ValueType::number: return "a number";
        case ValueType::boolean: return "true or false";
        case ValueType::string: return "a string";
        case ValueType::string_or_strings: return "a string or a list of strings";
        case ValueType::object: return "an object";
        case ValueType::enumeration: {
            std::string s = "one of ";
            for (std::size_t i = 0; i < k.allowed.size(); ++i) {
                if (i) s += ", ";
                s += "'" + k.allowed[i] + "'";
            }
            return s;
        }
    }
    return "?";
}

std::string format_number(double v) { return fmt::format("{}", v); }

std::string configuration_reference_markdown() {
    std::ostringstream md;
    md << "# Configuration reference\n\n"
          "<!-- Generated from the schema table in sim/config/schema.cpp by\n"
          "     configuration_reference_markdown(); do not edit by hand. A test in\n"
          "     tests/config/test_config.cpp fails when this file and the table disagree;\n"
          "     regenerate with: build/npusim config-reference > docs/configuration.md\n"
          "     (or NPUSIM_UPDATE_DOCS=1 build/npusim_tests '[docs]') -->\n\n"
          "A run is one JSON document `{\"chip\": {...}, \"workload\": {...}}` (docs/design.md §4.2). "
          "It is built from the chip file (`--chip`), the workload file (`--workload`) and the "
          "`--set` overrides, checked against the table below, completed with defaults, and "
          "echoed as `config` in every statistics file.\n\n"
          "- **Chip file.** A JSON object holding the `chip` keys below without the `chip.` "
          "prefix. `\"extends\": \"other.json\"` (a path relative to the extending file) deep-merges "
          "the other file underneath: objects merge key by key, the extending file wins, numbers, "
          "strings and lists are replaced. Chains are allowed; a cycle is an error. After "
          "extends, every key marked **required** must be present; every other key missing "
          "gets its default, so the resolved document is complete.\n"
          "- **Workload.** A `.jsonl` file is a task stream: the section becomes "
          "`{\"kind\": \"tasks\", \"file\": PATH}`. A `.json` file is a JSON object with a string "
          "`kind`; each kind has its own section of keys below.\n"
          "- **`--set PATH=VALUE`** (repeatable, applied in order after the files) changes one "
          "key by dotted path, e.g. `--set chip.hbm.bandwidth_gbps=3200`. PATH starts with "
          "`chip.` or `workload.` and must name a key below. VALUE is read as JSON when it "
          "parses (`3200`, `true`, `\"text\"`, `{\"bandwidth_gbps\": 800}` merges into a group), "
          "otherwise as plain text; for string keys the text is always taken as written.\n"
          "- **Errors** exit with code 2. The message names the file (or the `--set` argument), "
          "the JSON line:column or the full key path, and what was expected; unknown keys get a "
          "did-you-mean. Integers must be whole numbers (`2.0` is read as 2, `1.5` is an error). "
          "Bounds in the *Range* column keep every value in a range the simulator computes with "
          "safely. *Plausible* ranges (also in that column) are what real chips have, with a wide "
          "margin: a value outside one runs as given, with a warning on stderr naming the key, its "
          "unit and the range (`--set chip.hbm.bandwidth_gbps=1.6`, TB/s meant, warns: plausible 50 "
          "to 20000 GB/s). Across keys: the die needs at least one cube or vector core, and "
          "2 x `chip.cores.vector.tile_kb` (double buffering) must fit in `chip.buffers.ub_kb`.\n";

    for (const auto& sec : config_sections()) {
        md << "\n## `" << sec.path << "`";
        if (!sec.workload_kind.empty()) md << " (kind `" << sec.workload_kind << "`)";
        md << " — " << sec.title << "\n\n" << sec.meaning << "\n\n";
        md << "| Key | Type | Unit | Default | Range | Meaning |\n";
        md << "|---|---|---|---|---|---|\n";
        for (const auto& k : config_keys()) {
            if (parent_of(k.path) != sec.path) continue;
            if (!sec.workload_kind.empty() && !key_applies(k, sec.workload_kind)) continue;
            md << "| `" << k.path << "` | " << escape_cell(type_cell(k)) << " | " << (k.unit.empty() ? "—" : k.unit)
               << " | " << escape_cell(default_cell(k)) << " | " << range_cell(k) << " | "
               << escape_cell(k.meaning + only_with_note(k)) << " |\n";
        }
    }
    return md.str();
}

std::vector<std::string> split_key_path(const std::string& path) { return split(path, '.'); }

}  // namespace npusim
