#include "cli/llm_run.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/phase.hpp"
#include "common/split.hpp"
#include "compiler/graph_reader.hpp"
#include "stats/intervals.hpp"
#include "stats/stats.hpp"
#include "system/system.hpp"
#include "tasks/stream_checks.hpp"

namespace npusim::cli {

namespace {

// The graph workload an llm run compiles with: the graph defaults, the
// llm keys' variant and routing.
GraphWorkload graph_options(const LlmWorkload& w) {
    GraphWorkload g = default_workload_params("graph").graph;
    g.comm_optimized = w.comm_optimized;
    g.routing = w.routing;
    g.capacity_error = w.capacity_error;
    return g;
}

// llm.*: per die, each compiled op's time (while any of its tasks runs) by
// kind and by micro-batch, and its end by layer; then over dies.
std::string llm_stats(Stats& s, const System& sys, const LlmBuild& b, const LlmWorkload& w) {
    const llm::LlmGraph& g = b.graph;
    constexpr int kKinds = 5;
    std::vector<double> share_sum(kKinds, 0.0);
    std::vector<double> layer_end(static_cast<std::size_t>(g.layers) + 1, 0.0);  // max over dies, per layer
    double overlap_sum = 0;
    for (int r = 0; r < sys.ranks(); ++r) {
        const SimContext& c = sys.die(r).context();
        std::map<NameIndex, std::vector<Interval>> runs;  // each op's tasks, start to end
        for (std::size_t i = 0; i < c.stream.tasks.size(); ++i) {
            const TaskTiming& t = c.timing[i];
            if (t.done) runs[c.stream.tasks[i].op].emplace_back(t.start_ps, t.end_ps);
        }
        std::vector<double> kind(kKinds, 0.0);
        std::vector<std::vector<Interval>> mb(2);
        for (const auto& [name, tasks] : runs) {
            // A fused kernel is named by its nodes joined with '+': the first one says what it is.
            const std::string first = split(c.stream.name(name), '+').front();
            const auto it = g.nodes.find(first);
            const llm::NodeInfo info = it != g.nodes.end() ? it->second : llm::NodeInfo{};
            // Its time: while any of its tasks runs (a profiler's kernel
            // time; not the gaps where its tiles wait for their inputs).
            const std::vector<Interval> ran = merge_intervals(tasks);
            kind[static_cast<std::size_t>(info.kind)] += static_cast<double>(total_length(ran));
            if (info.layer >= 0) {
                double& e = layer_end[static_cast<std::size_t>(info.layer) + 1];
                for (const Interval& t : tasks) e = std::max(e, static_cast<double>(t.second));
            }
            // A micro-batch is busy while its tasks run, as an op is: a
            // tile queued behind the other's work does not count.
            if (info.microbatch < 2) {
                auto& m = mb[static_cast<std::size_t>(info.microbatch)];
                m.insert(m.end(), ran.begin(), ran.end());
            }
        }
        double total = 0;
        for (const double k : kind) total += k;
        for (int k = 0; k < kKinds; ++k) share_sum[static_cast<std::size_t>(k)] += total > 0 ? kind[static_cast<std::size_t>(k)] / total : 0;
        if (g.microbatches == 2)
            overlap_sum += overlap_ratio(merge_intervals(std::move(mb[0])), merge_intervals(std::move(mb[1])));
    }
    const double ranks = sys.ranks(), step_ns = s.number("total_ns");
    for (int k = 0; k < kKinds; ++k)
        s.set(fmt::format("llm.op_time_shares.{}", llm::to_string(static_cast<llm::OpKind>(k))), share_sum[static_cast<std::size_t>(k)] / ranks);
    // A layer's time: from the previous layer's end (on the die that ends it
    // last) to its own.
    std::string table = "  layer      ends at us   time us\n", ends = "[";
    double layer_sum = 0;
    for (int l = 1; l <= g.layers; ++l) {
        const double dt = (layer_end[static_cast<std::size_t>(l)] - layer_end[static_cast<std::size_t>(l) - 1]) / 1000.0;
        layer_sum += dt;
        table += fmt::format("  {:>5}  {:>14.3f} {:>9.3f}\n", l - 1, layer_end[static_cast<std::size_t>(l)] / 1e6, dt / 1000.0);
        ends += fmt::format("{}{:.3f}", l > 1 ? "," : "", layer_end[static_cast<std::size_t>(l)] / 1000.0);
    }
    s.set_json("llm.layer_ends_ns", ends + "]");
    const double tokens_per_s = g.tokens_per_die / (step_ns * 1e-9);
    s.set("llm.step_ns", step_ns);
    s.set("llm.layers", g.layers);
    s.set("llm.layer_ns", g.layers > 0 ? layer_sum / g.layers : 0.0);
    if (w.phase == LlmWorkload::Phase::decode) s.set("llm.tpot_ns", step_ns);
    s.set("llm.tokens_per_s_per_die", tokens_per_s);
    const double end_mean_ns = s.number_or("ranks.end_mean_ns", 0);  // one die reports no ranks.*
    s.set("llm.rank_imbalance", end_mean_ns > 0 ? step_ns / end_mean_ns : 1.0);
    if (g.microbatches == 2) s.set("llm.microbatch_overlap", overlap_sum / ranks);
    // Byte and parameter counts are whole numbers (summed as reals).
    auto whole = [](double v) { return static_cast<std::uint64_t>(std::llround(v)); };
    s.set("llm.weight_bytes_per_die", whole(g.weight_bytes));
    s.set("llm.kv_cache_bytes_per_die", whole(g.kv_bytes));
    s.set("llm.params.total", whole(llm::count_params(b.model).total()));
    s.set("llm.params.active", whole(llm::active_params(b.model, false)));
    std::string out = fmt::format("  llm          {} {}: step {:.3f} us, {:.0f} tokens/s per die, mean layer {:.3f} us, slowest die / mean {:.3f}\n",
                                  b.model.model_type, w.phase == LlmWorkload::Phase::decode ? "decode" : "prefill", step_ns / 1000.0,
                                  tokens_per_s, s.number("llm.layer_ns") / 1000.0, s.number("llm.rank_imbalance"));
    out += "  op time      ";
    for (int k = 0; k < kKinds; ++k)
        out += fmt::format("{} {:.1f}%  ", llm::to_string(static_cast<llm::OpKind>(k)), 100.0 * share_sum[static_cast<std::size_t>(k)] / ranks);
    if (g.microbatches == 2) out += fmt::format("(micro-batch overlap {:.1f}%)", 100.0 * s.number("llm.microbatch_overlap"));
    return out + "\n" + table;
}

}  // namespace

LlmBuild build_llm(const RunConfig& cfg) {
    const LlmWorkload& w = cfg.workload().llm;
    LlmBuild b;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(w.model, ec))
        throw InputError(
            fmt::format("{}: workload.model: no model config at '{}' (a path in a run file is relative to the run "
                        "file, one given with --set to the working directory)",
                        cfg.source_of("workload.model"), w.model));
    b.model = llm::read_hf_config(w.model);
    try {
        b.graph = llm::build_llm_graph(b.model, w, cfg.chip());
    } catch (const InputError& e) {
        // A deployment check names its key first ("workload.ep: ..."): the
        // input that set it (the run file or a --set) leads the message.
        const std::string what = e.what();
        const auto colon = what.find(": ");
        const std::string key = what.substr(0, colon == std::string::npos ? 0 : colon);
        const bool named = key.rfind("workload.", 0) == 0 && key.find(' ') == std::string::npos;
        throw InputError((named ? cfg.source_of(key) : cfg.workload().file) + ": " + what);
    }
    for (const std::string& w : b.graph.warnings)
        std::cerr << "npusim: warning: " << cfg.workload().file << ": " << w << "\n";
    return b;
}

compiler::SpmdCompile compile_llm(const RunConfig& cfg, const LlmBuild& b) {
    const GraphWorkload opts = graph_options(cfg.workload().llm);
    compiler::SpmdView spmd;
    spmd.ranks = std::max(1, cfg.chip().interconnect.ranks);
    spmd.routing = compiler::routing_spec(opts);
    const compiler::Graph g = compiler::read_graph_text(b.graph.text, cfg.workload().file + " (built graph)", {}, spmd);
    return compiler::compile_spmd(g, cfg.chip(), compiler::CompileOptions(opts));
}

int run_llm(const RunConfig& cfg, SystemRunOptions opt) {
    std::optional<Phase> phase(std::in_place, "building " + cfg.workload().file);
    const LlmBuild b = build_llm(cfg);
    phase.emplace("compiling " + cfg.workload().file);
    const compiler::SpmdCompile spmd = compile_llm(cfg, b);
    print_warnings(spmd);
    for (const auto& ts : spmd.streams) check_stream_fits_chip(*ts, cfg.chip());
    phase.emplace("simulating " + cfg.workload().file);
    const LlmWorkload w = cfg.workload().llm;
    opt.workload_stats = [&](Stats& s) {
        spmd.plans.front().report(s);
        s.set("compile.rank_programs", static_cast<std::uint64_t>(spmd.plans.size()));
        return fmt::format("compiled {}: {} distinct rank program(s) over {} ranks; rank 0: {} kernels -> {} tasks\n",
                           cfg.workload().file, spmd.plans.size(), cfg.chip().interconnect.ranks, spmd.plans.front().kernels,
                           spmd.plans.front().tasks);
    };
    opt.system_stats = [&](Stats& s, const System& sys) { return llm_stats(s, sys, b, w); };
    return run_system(cfg, spmd.streams, opt);
}

}  // namespace npusim::cli
