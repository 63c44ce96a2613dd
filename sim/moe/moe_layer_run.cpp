#include "moe/moe_layer_run.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "common/output_file.hpp"
#include "common/version.hpp"
#include "config/run_config.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/system.hpp"
#include "kernel_api/kernel_runtime.hpp"
#include "moe/combine.hpp"
#include "moe/expert_stream.hpp"
#include "moe/layer_phases.hpp"
#include "stats/stats.hpp"
#include "tasks/stream_checks.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {

// What the expert streams ask of the Cube cores, summed over the ranks.
struct ExpertWork {
    std::uint64_t tasks = 0;
    std::uint64_t rows = 0;  // tokens through the experts
    double flops = 0;        // 2 m n k over every GEMM tile
};

ExpertWork expert_work(const std::vector<TaskStream>& streams) {
    ExpertWork w;
    for (const TaskStream& ts : streams)
        for (const Task& t : ts.tasks) {
            if (t.kernel != Kernel::matmul) continue;
            ++w.tasks;
            w.flops += 2.0 * static_cast<double>(t.params.m) * static_cast<double>(t.params.n) * static_cast<double>(t.params.k);
            // The first column of tiles of each gate_up holds every row of its expert once.
            const std::string& tile = ts.name(t.tile);
            if (ts.name(t.op).find(".gate_up") != std::string::npos && tile.size() >= 2 &&
                tile.compare(tile.size() - 2, 2, "n0") == 0)
                w.rows += t.params.m;
        }
    return w;
}

std::string summary(const Stats& s, const MoeParams& p, const ChipParams& chip, const LayerPhases& phases,
                    const ExpertWork& work, const PhaseProfile& prof, const MoeRunOptions& opt) {
    static const char* const kDType[] = {"fp16", "bf16", "int8"};
    std::string out = fmt::format(
        "npusim: MoE layer ({}) on {}: {} ranks x ({} AIV + {} AIC), batch {}, hidden {}, top-{}, {} expert(s) per rank, "
        "expert FFN {} ({}), {}\n",
        p.variant_name(), chip.name, p.ranks, chip.vector.count, chip.cube.count, p.batch, p.hidden, p.top_k,
        p.experts_per_rank, p.expert_ffn, kDType[static_cast<int>(p.expert_dtype)],
        p.skewed() ? fmt::format("skewed (Zipf {})", p.skew) : std::string("uniform"));
    out += fmt::format("  total        {:.0f} cycles  ({:.3f} us)\n", s.number("total_cycles"), s.number("total_ns") / 1000.0);
    out += "  layer phase  start us    end us   mean us   share  (per rank: start -> end, over the ranks)\n";
    for (const LayerPhase& ph : phases)
        out += fmt::format("  {:<10} {:9.2f} {:9.2f} {:9.2f} {:6.1f}%\n", ph.name, ph.start_ns / 1000.0, ph.end_ns / 1000.0,
                           ph.mean_ns / 1000.0, ph.share * 100.0);
    out += fmt::format("  expert GEMMs {} tasks, {} rows (= tokens received), {:.1f} GFLOP; cube utilization {:.1f}%\n",
                       work.tasks, work.rows, work.flops / 1e9, s.number("units.cube.utilization") * 100.0);
    out += "  core phase          mean us   max us   (per AIV core; end of phase: mean / max us)\n";
    for (const auto& name : prof.phases()) {
        const std::string k = "phases." + name;
        out += fmt::format("  {:<18} {:7.2f}  {:7.2f}   ({:.2f} / {:.2f})\n", name, s.number(k + ".mean_ns") / 1000.0,
                           s.number(k + ".max_ns") / 1000.0, s.number(k + ".end_mean_ns") / 1000.0,
                           s.number(k + ".end_max_ns") / 1000.0);
    }
    out += fmt::format("  mesh {:.2f} MB per rank, utilization {:.1f}%, busiest link {:.1f}%\n",
                       s.number("mesh.bytes") / 1e6 / p.ranks, s.number("units.mesh.utilization") * 100.0,
                       s.number("mesh.busiest_link_fraction") * 100.0);
    return out + moe_summary_tail(s, chip, opt);
}

}  // namespace

int run_moe_layer(const RunConfig& cfg, const MoeParams& p, const MoeRunOptions& opt) {
    const ChipParams& chip = cfg.chip();
    const auto block = static_cast<std::uint32_t>(chip.interconnect.datablock_bytes);
    const auto t_build = std::chrono::steady_clock::now();
    const DispatchLayout dlayout(p, block);
    const Routing routing(p);
    const DispatchContext dctx(p, routing, dlayout);
    const LayerLayout layout(p, chip.vector.count, block);
    const LayerContext ctx(dctx, layout);

    std::vector<TaskStream> streams;
    streams.reserve(static_cast<std::size_t>(p.ranks));
    for (int r = 0; r < p.ranks; ++r) {
        streams.push_back(expert_stream(ctx, chip, r));
        check_stream_fits_chip(streams.back(), chip);
    }
    const ExpertWork work = expert_work(streams);

    std::unique_ptr<TraceWriter> trace =
        opt.trace_file.empty() ? std::make_unique<TraceWriter>() : std::make_unique<TraceWriter>(opt.trace_file);
    std::vector<int> traced;
    for (int r = 0; r < std::min(p.trace_ranks, p.ranks); ++r) traced.push_back(r);
    System sys("system", chip, std::move(streams), trace.get(), traced);
    KernelRuntime rt("kernels", sys, [&ctx](AivCore& k) { moe_layer_kernel(k, ctx); }, trace.get(), p.trace_ranks);

    const std::uint64_t events0 = sim_events_total();
    const auto t_sim = std::chrono::steady_clock::now();
    rt.run();
    sys.check_finished();
    const auto t_end = std::chrono::steady_clock::now();
    const double sim_s = std::chrono::duration<double>(t_end - t_sim).count();
    const double wall_s = std::chrono::duration<double>(t_end - t_build).count();
    const std::uint64_t events = sim_events_total() - events0;

    Stats stats;
    sys.collect(stats);  // the dies: Cube work, L2, HBM
    rt.collect(stats);   // the kernels: the layer's end, the phases, the mesh
    const LayerPhases phases = layer_phases(rt.profile(), p.ranks, chip.vector.count);
    report_layer_phases(phases, stats);
    stats.set("moe.layer", 1);
    stats.set("moe.variant", p.variant_name());
    stats.set("moe.token_bytes", dlayout.token_bytes);
    stats.set("moe.row_bytes", layout.row_bytes);
    stats.set("moe.pairs_per_rank", routing.pairs());
    stats.set("moe.experts", routing.experts());
    stats.set("moe.expert_ffn", p.expert_ffn);
    std::int64_t received = 0;
    for (int r = 0; r < p.ranks; ++r) received += routing.received(r);
    stats.set("moe.received_tokens.total", received);
    stats.set("moe.expert_gemm.tasks", work.tasks);
    stats.set("moe.expert_gemm.rows", work.rows);
    stats.set("moe.expert_gemm.flops", work.flops);
    stats.set("sim_events", events);
    stats.set_json("config", cfg.dump());
    stats.set("version", version());

    if (!opt.stats_file.empty()) write_output_file(opt.stats_file, stats.to_json());
    if (!opt.profile_file.empty()) write_output_file(opt.profile_file, rt.profile().csv());
    trace->close(fmt::format(R"({{"chip":"{}","workload":"{}","total_ns":{},"version":"{}"}})", json_escape(chip.name),
                             json_escape(opt.workload_file), stats.number("total_ns"), json_escape(version())));
    if (!opt.quiet) {
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        std::cout << summary(stats, p, chip, phases, work, rt.profile(), opt);
        // Wall-clock figures go to the terminal only, never into the stats.
        std::cout << fmt::format("  sim     {:.2f} s wall ({:.2f} s simulating), {} events, peak RSS {:.0f} MB\n", wall_s,
                                 sim_s, events, static_cast<double>(ru.ru_maxrss) / 1024.0);
    }
    const double stale = stats.number("memory_model.stale_reads");
    if (opt.fail_on_stale && stale > 0) {
        std::cerr << fmt::format("npusim: --fail-on-stale: {:.0f} stale read{} on the mesh (memory_model.stale_read_samples in "
                                 "the stats names them)\n",
                                 stale, stale == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

}  // namespace npusim
