#include "compiler/compiler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "compiler/comm_ops.hpp"
#include "compiler/fold_bn.hpp"
#include "compiler/graph_reader.hpp"
#include "compiler/layout_pass.hpp"
#include "compiler/plan_search.hpp"
#include "onnx/onnx_import.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::compiler {

namespace {

// workload.tiling names nodes of the graph, or the FormatConvert nodes the
// layout pass inserted (trans_<tensor>_<layout>, as the compile report
// lists them).
void check_forced_names(const Graph& g, const std::string& file, const CompileOptions& opt) {
    std::vector<std::string> names;
    for (const auto& n : g.nodes) names.push_back(n.name);
    for (const auto& entry : opt.tiling) {
        const std::string& name = entry.first;
        if (std::find(names.begin(), names.end(), name) == names.end())
            throw InputError(fmt::format("workload.tiling.{}: no node of that name in {}{}", name, file, did_you_mean(name, names)));
    }
}

}  // namespace

namespace {

// The die's HBM against what the graph needs of it (before planning: an
// over-capacity run is refused at once).
void check_capacity(const Graph& g, const ChipParams& chip, const CompileOptions& opt, CompileResult& r) {
    r.hbm = hbm_footprint(g);
    const double have = chip.hbm.size_gb * 1e9;
    if (static_cast<double>(r.hbm.total()) <= have) return;
    const std::string what =
        fmt::format("{}: a die needs {:.2f} GB of HBM (weights {:.2f} GB + inputs {:.2f} GB + activations alive at once "
                    "{:.2f} GB) but holds {:.2f} GB (chip.hbm.size_gb)",
                    g.file, r.hbm.total() / 1e9, r.hbm.weights / 1e9, r.hbm.inputs / 1e9, r.hbm.activations_peak / 1e9,
                    chip.hbm.size_gb);
    if (opt.capacity_error)
        throw InputError(what + "; use a smaller batch or model, a chip with more HBM, or --set workload.capacity=warn to run "
                                "it anyway");
    r.warnings.push_back(what + "; running anyway (workload.capacity warn)");
}

}  // namespace

namespace {

// The task stream a compile writes, put together from the tiler's tasks,
// the sync plan's events and the dispatcher's placement.
struct StreamAssembly {
    explicit StreamAssembly(std::string file) { ts.file = std::move(file); }
    void declare_events(const SyncPlan& sync, const std::vector<TileTask>& tasks, const KernelPlan& plan);
    void declare_programs(const std::vector<TileTask>& tasks, const KernelPlan& plan);
    void add_tasks(const std::vector<TileTask>& tasks, const KernelPlan& plan, const SyncPlan& sync,
                   const std::vector<Placement>& where, CompileResult& r);
    std::uint32_t stream_of(const TileTask& tt, const Placement& where);

    TaskStream ts;
    std::map<std::string, std::uint32_t> stream_index;
    std::map<std::string, EventIndex> event_index;
    std::map<int, std::uint32_t> program_of;
};

void StreamAssembly::declare_events(const SyncPlan& sync, const std::vector<TileTask>& tasks, const KernelPlan& plan) {
    // The sync plan's events first, in its order: its indices are theirs.
    for (const auto& [id, count] : sync.events) {
        event_index[id] = static_cast<EventIndex>(ts.events.size());
        ts.events.push_back(EventDecl{id, count, 0});
    }
    // Communication steps' own events (a collective's, between its steps).
    for (const TileTask& tt : tasks)
        for (const auto* own : {&tt.own_wait, &tt.own_signal})
            for (const std::string& e : *own) {
                const std::string id = plan.kernels[static_cast<std::size_t>(tt.kernel)].name + ":" + e;
                if (event_index.emplace(id, static_cast<EventIndex>(ts.events.size())).second)
                    ts.events.push_back(EventDecl{id, 1, 0});
            }
}

// Kernel programs: one declaration per kernel that runs one.
void StreamAssembly::declare_programs(const std::vector<TileTask>& tasks, const KernelPlan& plan) {
    for (const TileTask& tt : tasks) {
        if (tt.type != npusim::Kernel::program || program_of.count(tt.kernel)) continue;
        program_of[tt.kernel] = static_cast<std::uint32_t>(ts.programs.size());
        ProgramDecl d;
        d.id = plan.kernels[static_cast<std::size_t>(tt.kernel)].name;
        d.name = tt.program_name;
        d.args = tt.program_args;
        d.blocks = tt.program_blocks;
        ts.programs.push_back(std::move(d));
    }
}

std::uint32_t StreamAssembly::stream_of(const TileTask& tt, const Placement& where) {
    // A scalar step (a collective's end) runs on a dispatch slot, not a core.
    const bool on_scalar = tt.core == CoreType::scalar;
    const std::string stream = on_scalar ? std::string("scalar") : fmt::format("{}{}", to_string(tt.core), where.core);
    auto [it, fresh] = stream_index.emplace(stream, static_cast<std::uint32_t>(ts.streams.size()));
    if (fresh) ts.streams.push_back(stream);
    return it->second;
}

void StreamAssembly::add_tasks(const std::vector<TileTask>& tasks, const KernelPlan& plan, const SyncPlan& sync,
                               const std::vector<Placement>& where, CompileResult& r) {
    std::vector<int> tile_no(plan.kernels.size(), 0);
    ts.tasks.reserve(tasks.size());
    r.est_cycles.reserve(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const TileTask& tt = tasks[i];
        const Kernel& k = plan.kernels[static_cast<std::size_t>(tt.kernel)];
        Task t;
        t.id = fmt::format("{}#{}", k.name, tile_no[static_cast<std::size_t>(tt.kernel)]++);
        t.core_type = tt.core;
        t.kernel = tt.type;
        t.stream = stream_of(tt, where[i]);
        t.core = tt.core == CoreType::scalar ? -1 : where[i].core;
        t.priority = where[i].priority;
        t.op = ts.intern(k.name);
        t.tile = ts.intern(tt.label);
        t.wait.assign(sync.wait[i].begin(), sync.wait[i].end());
        t.signal.assign(sync.signal[i].begin(), sync.signal[i].end());
        for (const auto& e : tt.own_wait) t.wait.push_back(event_index.at(k.name + ":" + e));
        for (const auto& e : tt.own_signal) t.signal.push_back(event_index.at(k.name + ":" + e));
        t.params = tt.params;
        if (tt.type == npusim::Kernel::program) t.params.program = program_of.at(tt.kernel);
        t.wait_memory = tt.wait_memory;
        t.remote = tt.remote;
        if (!t.wait_memory.empty() || t.remote.dst_rank >= 0) ts.cross_rank = true;
        t.reads = tt.reads;
        t.writes = tt.writes;
        for (const auto& rg : t.reads) r.gm_bytes += rg.total();
        for (const auto& rg : t.writes) r.gm_bytes += rg.total();
        if (k.kind == KernelKind::format) {
            ++r.format_converts;
            r.format_convert_bytes += t.params.bytes;
        }
        t.line = static_cast<std::uint32_t>(i + 1);
        r.est_cycles.push_back(tt.est_cycles);
        ts.tasks.push_back(std::move(t));
    }
}

// Canonical form: exactly what `compile --emit-tasks` writes and `run`
// reads back, so both give the same cycles. Each task is freed once
// written.
TaskStream canonical_stream(TaskStream& ts, const std::string& name) {
    TaskStreamParser parser(name, ts.tasks.size(), true);
    std::string line;
    for (const char c : event_declaration_lines(ts)) {
        if (c != '\n') {
            line += c;
            continue;
        }
        parser.line(line);
        line.clear();
    }
    for (Task& t : ts.tasks) {
        line = task_line(ts, t);
        line.pop_back();  // the newline
        parser.line(line);
        t = Task();
    }
    return parser.finish();
}

}  // namespace

TaskStream plan_stream(const PlannedGraph& v) {
    StreamAssembly a(v.g.file + " (candidate)");
    a.declare_events(v.sync, v.tasks, v.plan);
    a.declare_programs(v.tasks, v.plan);
    for (const int d : capacity_dispatches(v.g)) a.ts.row_tables.push_back(dispatch_row_table(v.g, d));
    CompileResult scratch;
    a.add_tasks(v.tasks, v.plan, v.sync, v.where, scratch);
    if (a.ts.cross_rank || !a.ts.programs.empty()) return {};  // kernel programs run on a System of dies
    return std::move(a.ts);
}

CompileResult compile(const Graph& input, const ChipParams& chip, const CompileOptions& opt) {
    CompileResult r;
    Graph g = input;
    if (opt.fold_bn)
        for (auto& n : fold_batchnorm(g)) r.notes.push_back(n);
    const CubeConversions on_the_way{chip.cube.mte2_nd2nz, chip.cube.fixpipe_nz2nd};
    for (auto& n : assign_layouts(g, opt.input_layout, opt.hoist_layout, on_the_way)) r.notes.push_back(n);
    check_forced_names(g, input.file, opt);
    check_capacity(g, chip, opt, r);
    PlannedGraph best = plan_best(g, chip, opt, r.notes);
    r.cube_cores_planned = best.cubes;
    r.vector_cores_planned = best.vectors;
    g = std::move(best.g);
    KernelPlan plan = std::move(best.plan);
    r.tilings = std::move(best.tilings);
    std::vector<TileTask> tasks = std::move(best.tasks);
    const SyncPlan sync = std::move(best.sync);
    const std::vector<Placement> where = std::move(best.where);
    r.notes.insert(r.notes.end(), plan.notes.begin(), plan.notes.end());
    r.kernels = plan.kernels.size();
    r.edges_before_reduction = sync.edges_before;
    r.edges_after_reduction = sync.edges_after;

    StreamAssembly a(g.file + " (compiled)");
    a.declare_events(sync, tasks, plan);
    a.declare_programs(tasks, plan);
    // Row tables: per capacity Dispatch, the tokens each rank's experts hold.
    for (const int d : capacity_dispatches(g)) a.ts.row_tables.push_back(dispatch_row_table(g, d));
    a.add_tasks(tasks, plan, sync, where, r);
    r.events = a.ts.events.size();
    // Line by line, each task freed once written: the stream is held about
    // once, not three times (text, written form, read form).
    std::vector<TileTask>().swap(tasks);
    r.stream = canonical_stream(a.ts, g.file + " (compiled)");
    r.tasks = r.stream.tasks.size();
    r.ops = make_op_table(input, r.tilings, r.stream);
    return r;
}

void CompileResult::report(Stats& s) const {
    s.set("compile.kernels", static_cast<std::uint64_t>(kernels));
    s.set("compile.tasks", static_cast<std::uint64_t>(tasks));
    s.set("compile.events", static_cast<std::uint64_t>(events));
    s.set("compile.format_converts", static_cast<std::uint64_t>(format_converts));
    s.set("compile.format_convert_bytes", format_convert_bytes);
    s.set("compile.sync_edges_before_reduction", static_cast<std::uint64_t>(edges_before_reduction));
    s.set("compile.sync_waits", static_cast<std::uint64_t>(edges_after_reduction));
    s.set("compile.gm_region_bytes", gm_bytes);
    s.set("compile.hbm_footprint_bytes", hbm.total());
    s.set("compile.hbm_weights_bytes", hbm.weights);
    s.set("compile.hbm_inputs_bytes", hbm.inputs);
    s.set("compile.hbm_activations_peak_bytes", hbm.activations_peak);
    s.set("compile.cube_cores_planned", static_cast<std::uint64_t>(cube_cores_planned));
    s.set("compile.vector_cores_planned", static_cast<std::uint64_t>(vector_cores_planned));
}

std::string CompileResult::summary() const {
    std::string out = fmt::format("compiled: {} kernels -> {} tasks, {} events ({} FormatConvert tasks, {} KB)\n", kernels,
                                  tasks, events, format_converts, format_convert_bytes / 1024);
    for (const auto& n : notes) out += "  pass: " + n + "\n";
    for (const auto& t : tilings)
        out += fmt::format("  tile: {:<40} {:>4} tasks  {}{}\n", t.kernel, t.tiles, t.shape,
                           t.forced ? " (forced)" : t.searched ? " (plan search)" : "");
    return out;
}

std::map<std::string, std::int64_t> graph_dims(const GraphWorkload& w) {
    // workload.batch when the user set it; otherwise the graph's own
    // dims.batch holds (and a graph without one takes 1).
    std::map<std::string, std::int64_t> dims;
    if (w.batch_given) dims["batch"] = w.batch;
    for (const auto& [name, value] : w.dims) dims[name] = value;  // an explicit dims.batch wins
    return dims;
}

CompileResult compile_workload(const WorkloadParams& w, const ChipParams& chip) {
    // An ONNX model is imported into the graph format first (docs/onnx.md);
    // the dims bind its symbolic input dims instead of the graph's.
    const Graph g = onnx_import::is_onnx_file_name(w.file)
                        ? read_graph_text(onnx_import::import_model(w.file, graph_dims(w.graph)), w.file)
                        : read_graph(w.file, graph_dims(w.graph));
    return compile(g, chip, CompileOptions(w.graph));
}

}  // namespace npusim::compiler
