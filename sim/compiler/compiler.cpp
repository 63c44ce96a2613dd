#include "compiler/compiler.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "compiler/dispatcher.hpp"
#include "compiler/fold_bn.hpp"
#include "compiler/fusion_pass.hpp"
#include "compiler/graph_reader.hpp"
#include "compiler/layout_pass.hpp"
#include "compiler/memory_plan.hpp"
#include "compiler/sync_pass.hpp"
#include "compiler/tiler.hpp"
#include "onnx/onnx_import.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::compiler {

namespace {

// Beyond this many Cube kernels the variants cost too much compile time
// (ResNet-50's 53 convolutions: each variant is another full tiling).
constexpr long kMaxExploredCubeKernels = 16;
constexpr double kExploreMargin = 0.02;

// Each fused attention kernel hands its score tiles between Cube and Vector
// through a workspace [heads, S, Sk] (addresses for the sync pass; the bytes
// stay in UB / L2). A tensor of the compiled graph only: the op table and
// the host never see it.
void add_attention_workspaces(Graph& g, KernelPlan& plan) {
    for (Kernel& k : plan.kernels) {
        if (k.kind != KernelKind::attention) continue;
        const Shape& q = g.tensors[static_cast<std::size_t>(k.inputs[0])].shape;
        const Shape& v = g.tensors[static_cast<std::size_t>(k.inputs[2])].shape;
        std::int64_t heads = 1;
        for (std::size_t i = 0; i + 2 < q.size(); ++i) heads *= q[i];
        Tensor ws;
        ws.name = k.name + ".scores";
        ws.shape = {heads, q[q.size() - 2], v[v.size() - 2]};
        ws.dtype = g.tensors[static_cast<std::size_t>(k.inputs[0])].dtype;
        ws.layout = Layout::ND;
        g.tensors.push_back(std::move(ws));
        k.workspace = static_cast<int>(g.tensors.size() - 1);
    }
}

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

CompileResult compile(const Graph& input, const ChipParams& chip, const CompileOptions& opt) {
    CompileResult r;
    Graph g = input;
    if (opt.fold_bn)
        for (auto& n : fold_batchnorm(g)) r.notes.push_back(n);
    for (auto& n : assign_layouts(g, opt.input_layout, opt.hoist_layout)) r.notes.push_back(n);
    check_forced_names(g, input.file, opt);
    const Graph g_laid = g;
    struct Variant {
        Graph g;
        KernelPlan plan;
        std::vector<TilingChoice> tilings;
        std::vector<TileTask> tasks;
        SyncPlan sync;
        std::vector<Placement> where;
        double makespan = 0;
        int cubes = 0;
    };
    const auto plan_for = [&](const ChipParams& c, const CompileOptions& o) {
        Variant v;
        v.g = g_laid;
        v.cubes = c.cube.count;
        v.plan = form_kernels(v.g, o, c);
        add_attention_workspaces(v.g, v.plan);
        const MemoryPlan mem(v.g);
        v.tasks = tile_kernels(v.g, v.plan, mem, c, o, v.tilings);
        if (v.tasks.empty()) throw InputError(fmt::format("{}: the graph compiles to no tasks", v.g.file));
        // The tiles exist; the sync plan and the stream are still to come.
        check_memory_budget(fmt::format("{}: compiling its {} tasks", v.g.file, v.tasks.size()),
                            static_cast<std::uint64_t>(v.tasks.size()) * kCompileBytesPerTask,
                            "make the graph smaller with a lower --set workload.batch=N or --set workload.dims.NAME=N, or "
                            "force fewer tiles with --set workload.tiling.NODE={\"tiles\": N}");
        v.sync = insert_sync(v.tasks, v.plan, o.sync);
        v.where = place_tasks(v.tasks, v.sync.preds, c);
        v.makespan = schedule_end(v.tasks, v.sync.preds, v.where, c);
        return v;
    };
    // Planned for every Cube core, a kernel's tiling sees only its own
    // estimate: one wave of larger tiles can beat two of smaller ones there
    // and lose in the graph, where coarser tiles start later behind their
    // producers (BERT-512 on a2 ran 2-5% slower on 36-64 cube cores than on
    // 32). Planning for fewer cores and keeping the plan whose list
    // schedule ends first makes a larger chip, by that estimate, never worse.
    // A variant must win by kExploreMargin: below it the list schedule's
    // error (1-2% against the run) would pick at random.
    Variant best = plan_for(chip, opt);
    const auto cube_kernels = std::count_if(best.plan.kernels.begin(), best.plan.kernels.end(),
                                            [](const Kernel& k) { return k.core == CoreType::cube; });
    const int all = chip.cube.count, step = all < 8 ? 1 : 4;
    if (opt.explore_cube_cores && cube_kernels > 0 && cube_kernels <= kMaxExploredCubeKernels) {
        for (int c = all - step; c >= (all + 1) / 2; c -= step) {
            ChipParams less = chip;
            less.cube.count = c;
            Variant v = plan_for(less, opt);
            if (v.makespan < best.makespan * (1 - kExploreMargin)) best = std::move(v);
        }
        if (best.cubes < all)
            r.notes.push_back(fmt::format("explore cube cores: planned for {} of the {} cube cores (estimated {:.0f} "
                                          "cycles, at least {:.0f}% fewer than with more; tried every {} from {} down to {})",
                                          best.cubes, all, best.makespan, kExploreMargin * 100, step, all, (all + 1) / 2));
    }
    // The tiler chooses each Cube kernel's block counts by the kernel's own
    // estimate; what its neighbours make of them (a conversion it waits
    // for, a consumer waiting for its last rows, a kernel beside it) only
    // the whole schedule sees. A 2048^3 MatMul behind its input conversion
    // ran 6.7% / 9.2% slower with L0C / L0B doubled: the larger buffer let a
    // plan win whose every tile reads all rows of A. So each Cube kernel's
    // runners-up (kernel order, each kept if the whole plan ends
    // kExploreMargin sooner, as above) are tried with the plan found so
    // far, on every kernel of the same dims at once: BERT's q, k and v
    // projections run side by side, and one of them alone in coarser tiles
    // frees too little (48 cube cores: 0.4% by the schedule; all three 2.1%,
    // and the run 5.4% faster).
    if (opt.search_cube_plans && cube_kernels > 0 && cube_kernels <= kMaxExploredCubeKernels) {
        ChipParams c = chip;
        c.cube.count = best.cubes;
        CompileOptions kept = opt;
        const std::vector<TilingChoice> first = best.tilings;
        std::set<std::string> searched;
        for (const TilingChoice& tc : first) {
            if (tc.runners_up.empty() || !searched.insert(tc.dims).second) continue;
            const auto alike = std::count_if(first.begin(), first.end(), [&](const TilingChoice& other) {
                return other.dims == tc.dims && !other.runners_up.empty();
            });
            for (const TilingChoice::Blocks& b : tc.runners_up) {
                // Coarser tiles only pay where they leave cores to kernels
                // alike running beside (alone, the schedule's preference for
                // them is within its error: a 2048^3 MatMul's 3 x 12 x 2 ran
                // 1.5% slower than the 12 x 1 x 8 it rated 0.8% worse).
                if (b.fewer_tiles && alike < 2) continue;
                CompileOptions o = kept;
                for (const TilingChoice& other : first)
                    if (other.dims == tc.dims && !other.runners_up.empty())
                        o.tiling[other.node] = ForcedTiling{b.m, b.n, 0, b.k, true};
                Variant v = plan_for(c, o);
                if (v.makespan < best.makespan * (1 - kExploreMargin)) {
                    r.notes.push_back(fmt::format("search cube plans: {}{} as {} x {}{} blocks (estimated {:.0f} cycles, "
                                                  "{:.0f}% fewer)",
                                                  tc.kernel, alike > 1 ? fmt::format(" and {} alike", alike - 1) : "",
                                                  b.m, b.n, b.k > 1 ? fmt::format(" x {}", b.k) : "", v.makespan,
                                                  (1 - v.makespan / best.makespan) * 100));
                    best = std::move(v);
                    kept = std::move(o);
                }
            }
        }
    }
    r.cube_cores_planned = best.cubes;
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

    TaskStream ts;
    ts.file = g.file + " (compiled)";
    std::map<std::string, std::uint32_t> stream_index;
    std::map<std::string, EventIndex> event_index;
    for (const auto& [id, count] : sync.events) {
        event_index[id] = static_cast<EventIndex>(ts.events.size());
        ts.events.push_back(EventDecl{id, count, 0});
    }
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
        const std::string stream = fmt::format("{}{}", to_string(tt.core), where[i].core);
        auto [it, fresh] = stream_index.emplace(stream, static_cast<std::uint32_t>(ts.streams.size()));
        if (fresh) ts.streams.push_back(stream);
        t.stream = it->second;
        t.core = where[i].core;
        t.priority = where[i].priority;
        t.op = ts.intern(k.name);
        t.tile = ts.intern(tt.label);
        for (const auto& e : sync.wait[i]) t.wait.push_back(event_index.at(e));
        for (const auto& e : sync.signal[i]) t.signal.push_back(event_index.at(e));
        t.params = tt.params;
        t.reads = tt.reads;
        t.writes = tt.writes;
        for (const auto& rg : t.reads) r.gm_bytes += rg.bytes;
        for (const auto& rg : t.writes) r.gm_bytes += rg.bytes;
        if (k.kind == KernelKind::format) {
            ++r.format_converts;
            r.format_convert_bytes += t.params.bytes;
        }
        t.line = static_cast<std::uint32_t>(i + 1);
        r.est_cycles.push_back(tt.est_cycles);


        ts.tasks.push_back(std::move(t));
    }
    r.events = ts.events.size();
    // Canonical form: exactly what `compile --emit-tasks` writes and `run`
    // reads back, so both give the same cycles.
    // Line by line, each task freed once written: the stream is held about
    // once, not three times (text, written form, read form).
    std::vector<TileTask>().swap(tasks);
    TaskStreamParser parser(g.file + " (compiled)", ts.tasks.size(), true);
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
    r.stream = parser.finish();
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
    s.set("compile.cube_cores_planned", static_cast<std::uint64_t>(cube_cores_planned));
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
    std::map<std::string, std::int64_t> dims = {{"batch", w.batch}};
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
