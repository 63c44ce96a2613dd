#include "compiler/compiler.hpp"

#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "compiler/dispatcher.hpp"
#include "compiler/fold_bn.hpp"
#include "compiler/fusion_pass.hpp"
#include "compiler/graph_reader.hpp"
#include "compiler/layout_pass.hpp"
#include "compiler/memory_plan.hpp"
#include "compiler/sync_pass.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_reader.hpp"

namespace npusim::compiler {

CompileResult compile(const Graph& input, const ChipParams& chip, const CompileOptions& opt) {
    CompileResult r;
    Graph g = input;
    if (opt.fold_bn)
        for (auto& n : fold_batchnorm(g)) r.notes.push_back(n);
    for (auto& n : assign_layouts(g, opt.input_layout, opt.hoist_layout)) r.notes.push_back(n);
    const KernelPlan plan = form_kernels(g, opt, chip);
    r.notes.insert(r.notes.end(), plan.notes.begin(), plan.notes.end());
    r.kernels = plan.kernels.size();
    const MemoryPlan mem(g);
    std::vector<TileTask> tasks = tile_kernels(g, plan, mem, chip, opt, r.tilings);
    if (tasks.empty()) throw InputError(fmt::format("{}: the graph compiles to no tasks", g.file));
    const SyncPlan sync = insert_sync(tasks, plan, opt.sync);
    r.edges_before_reduction = sync.edges_before;
    r.edges_after_reduction = sync.edges_after;
    const std::vector<Placement> where = place_tasks(tasks, sync.preds, chip);

    TaskStream ts;
    ts.file = g.file + " (compiled)";
    std::map<std::string, std::uint32_t> stream_index;
    std::map<std::string, EventIndex> event_index;
    for (const auto& [id, count] : sync.events) {
        event_index[id] = static_cast<EventIndex>(ts.events.size());
        ts.events.push_back(EventDecl{id, count, 0});
    }
    std::vector<int> tile_no(plan.kernels.size(), 0);
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
        ts.tasks.push_back(std::move(t));
    }
    r.events = ts.events.size();
    // Canonical form: exactly what `compile --emit-tasks` writes and `run`
    // reads back, so both give the same cycles.
    std::stringstream text;
    write_task_stream(ts, text);
    r.stream = parse_task_stream(text, g.file + " (compiled)");
    r.tasks = r.stream.tasks.size();
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
}

std::string CompileResult::summary() const {
    std::string out = fmt::format("compiled: {} kernels -> {} tasks, {} events ({} FormatConvert tasks, {} KB)\n", kernels,
                                  tasks, events, format_converts, format_convert_bytes / 1024);
    for (const auto& n : notes) out += "  pass: " + n + "\n";
    for (const auto& t : tilings)
        out += fmt::format("  tile: {:<40} {:>4} tasks  {}{}\n", t.kernel, t.tiles, t.shape, t.forced ? " (forced)" : "");
    return out;
}

std::map<std::string, std::int64_t> dims_from_workload(const nlohmann::json& w) {
    std::map<std::string, std::int64_t> dims;
    dims["batch"] = w.value("batch", 1);
    if (w.contains("dims"))
        for (auto it = w["dims"].begin(); it != w["dims"].end(); ++it) {
            if (!it->is_number_integer() || it->get<std::int64_t>() < 1)
                throw InputError(fmt::format("workload.dims.{}: expected a positive integer, got {}", it.key(), it->dump()));
            dims[it.key()] = it->get<std::int64_t>();
        }
    return dims;
}

CompileOptions options_from_workload(const nlohmann::json& w) {
    CompileOptions o;
    o.sync = w.value("sync", "tile") == "op" ? SyncGranularity::op : SyncGranularity::tile;
    o.input_layout = w.value("input_layout", "NCHW") == "NC1HWC0" ? Layout::NC1HWC0 : Layout::NCHW;
    if (w.contains("passes")) {
        const auto& p = w["passes"];
        o.fold_bn = p.value("fold_bn", true);
        o.fuse_activation = p.value("fuse_activation", true);
        o.fuse_vector = p.value("fuse_vector", true);
        o.hoist_layout = p.value("hoist_layout", true);
    }
    const std::string b = w.value("fusion_boundary", "auto");
    o.boundary = b == "fuse" ? FusionBoundary::fuse : b == "split" ? FusionBoundary::split : FusionBoundary::automatic;
    if (w.contains("tiling"))
        for (auto it = w["tiling"].begin(); it != w["tiling"].end(); ++it) {
            const std::string where = "workload.tiling." + it.key();
            if (!it->is_object())
                throw InputError(fmt::format("{}: expected an object like {{\"m_blocks\": 2, \"n_blocks\": 8}}", where));
            ForcedTiling f;
            for (auto kv = it->begin(); kv != it->end(); ++kv) {
                const std::vector<std::string> keys = {"m_blocks", "n_blocks", "tiles"};
                if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end())
                    throw InputError(fmt::format("{}.{}: unknown key{}", where, kv.key(), did_you_mean(kv.key(), keys)));
                if (!kv->is_number_integer() || kv->get<std::int64_t>() < 1 || kv->get<std::int64_t>() > 4096)
                    throw InputError(fmt::format("{}.{}: expected an integer in [1, 4096], got {}", where, kv.key(), kv->dump()));
                const int v = static_cast<int>(kv->get<std::int64_t>());
                if (kv.key() == "m_blocks") f.m_blocks = v;
                else if (kv.key() == "n_blocks") f.n_blocks = v;
                else f.tiles = v;
            }
            o.tiling[it.key()] = f;
        }
    return o;
}

CompileResult compile_workload(const nlohmann::json& w, const ChipParams& chip) {
    const std::string file = w.at("file").get<std::string>();
    const Graph g = read_graph(file, dims_from_workload(w));
    const CompileOptions opt = options_from_workload(w);
    for (const auto& [name, f] : opt.tiling) {
        bool found = false;
        std::vector<std::string> names;
        for (const auto& n : g.nodes) {
            found = found || n.name == name;
            names.push_back(n.name);
        }
        if (!found)
            throw InputError(fmt::format("workload.tiling.{}: no node of that name in {}{}", name, file, did_you_mean(name, names)));
        (void)f;
    }
    return compile(g, chip, opt);
}

}  // namespace npusim::compiler
