#include "moe/moe_run.hpp"

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/version.hpp"
#include "config/run_config.hpp"
#include "engine/wake_scheduler.hpp"
#include "kernel_api/kernel_runtime.hpp"
#include "moe/dispatch.hpp"
#include "moe/moe_layer_run.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {

void write_file(const std::string& path, const std::string& text, const char* /*what*/) { write_output_file(path, text); }

std::string summary(const Stats& s, const MoeParams& p, const ChipParams& chip, const DispatchLayout& L,
                    const PhaseProfile& prof, const MoeRunOptions& opt) {
    std::string out = fmt::format(
        "npusim: MoE dispatch ({}{}) on {}: {} ranks x {} AIV, batch {}, hidden {}, top-{}, {} expert(s) per rank, {}\n",
        p.variant_name(),
        p.variant == MoeParams::Variant::optimized ? (p.flag_in_block ? ", Data-as-Flag" : ", separate flag block") : "",
        chip.name, p.ranks, chip.vector.count, p.batch, p.hidden, p.top_k, p.experts_per_rank,
        p.skewed() ? fmt::format("skewed (Zipf {})", p.skew) : std::string("uniform"));
    out += fmt::format("  total        {:.0f} cycles  ({:.3f} us)\n", s.number("total_cycles"), s.number("total_ns") / 1000.0);
    out += "  phase        mean us   max us   (per core; end of phase: mean / max us)\n";
    for (const auto& name : prof.phases()) {
        const std::string k = "phases." + name;
        out += fmt::format("  {:<12} {:7.2f}  {:7.2f}   ({:.2f} / {:.2f})\n", name, s.number(k + ".mean_ns") / 1000.0,
                           s.number(k + ".max_ns") / 1000.0, s.number(k + ".end_mean_ns") / 1000.0,
                           s.number(k + ".end_max_ns") / 1000.0);
    }
    if (const std::string* cp = s.json("critical_path")) {  // the last core's time by kind
        const auto j = nlohmann::json::parse(*cp);
        const double total = j.value("total_ns", 0.0);
        std::string kinds;
        for (const auto& [k, v] : j["by_kind"].items())
            kinds += fmt::format("  {} {:.1f}%", k, total > 0 ? v.get<double>() / total * 100.0 : 0.0);
        if (!j["segments"].empty())
            out += fmt::format("  critical path {}:{}\n", j["segments"].back()["task"].get<std::string>(), kinds);
    }
    out += fmt::format("  token {} B in {} blocks of {} B; mesh {:.2f} MB per rank, utilization {:.1f}%, busiest link {:.1f}%\n",
                       L.token_bytes, L.slot_blocks, L.block, s.number("mesh.bytes") / 1e6 / p.ranks,
                       s.number("units.mesh.utilization") * 100.0, s.number("mesh.busiest_link_fraction") * 100.0);
    return out + moe_summary_tail(s, chip, opt);
}

}  // namespace

std::string moe_summary_tail(const Stats& s, const ChipParams& chip, const MoeRunOptions& opt) {
    std::string out = fmt::format("  memory_model.stale_reads {:.0f}  (reorder_seed {})\n",
                                  s.number("memory_model.stale_reads"), chip.interconnect.reorder_seed);
    if (!opt.stats_file.empty()) out += fmt::format("  stats   -> {}\n", opt.stats_file);
    if (!opt.trace_file.empty()) out += fmt::format("  trace   -> {}  (open in ui.perfetto.dev)\n", opt.trace_file);
    if (!opt.profile_file.empty()) out += fmt::format("  profile -> {}  (tools/plot_phases.py draws it)\n", opt.profile_file);
    return out;
}

int run_moe(const RunConfig& cfg, const MoeRunOptions& opt) {
    const ChipParams& chip = cfg.chip();
    const MoeParams p = MoeParams::from_run(cfg.workload().moe, chip);
    if (p.layer) return run_moe_layer(cfg, p, opt);
    const DispatchLayout layout(p, static_cast<std::uint32_t>(chip.interconnect.datablock_bytes));
    const auto t_build = std::chrono::steady_clock::now();
    const Routing routing(p);
    const DispatchContext ctx(p, routing, layout);

    std::unique_ptr<TraceWriter> trace =
        opt.trace_file.empty() ? std::make_unique<TraceWriter>() : std::make_unique<TraceWriter>(opt.trace_file);
    const bool baseline = p.variant == MoeParams::Variant::baseline;
    KernelRuntime rt(
        "supernode", chip,
        [&ctx, baseline](AivCore& k) {
            if (baseline) dispatch_baseline(k, ctx);
            else dispatch_optimized(k, ctx);
        },
        trace.get(), p.trace_ranks);

    const std::uint64_t events0 = sim_events_total();
    const auto t_sim = std::chrono::steady_clock::now();
    rt.run();
    const auto t_end = std::chrono::steady_clock::now();
    const double sim_s = std::chrono::duration<double>(t_end - t_sim).count();
    const double wall_s = std::chrono::duration<double>(t_end - t_build).count();
    const std::uint64_t events = sim_events_total() - events0;

    Stats stats;
    rt.collect(stats);
    stats.set("moe.variant", p.variant_name());
    stats.set("moe.flag_in_block", p.variant == MoeParams::Variant::optimized && p.flag_in_block ? 1 : 0);
    stats.set("moe.token_bytes", layout.token_bytes);
    stats.set("moe.token_blocks", static_cast<std::uint64_t>(layout.slot_blocks));
    stats.set("moe.pairs_per_rank", routing.pairs());
    stats.set("moe.experts", routing.experts());
    int max_recv = 0;
    std::int64_t sum_recv = 0;
    for (int r = 0; r < p.ranks; ++r) {
        max_recv = std::max(max_recv, routing.received(r));
        sum_recv += routing.received(r);
    }
    stats.set("moe.received_tokens.max", max_recv);
    stats.set("moe.received_tokens.mean", static_cast<double>(sum_recv) / p.ranks);
    stats.set("sim_events", events);
    stats.set_json("config", cfg.dump());
    stats.set("version", version());

    if (!opt.stats_file.empty()) write_file(opt.stats_file, stats.to_json(), "stats file");
    if (!opt.profile_file.empty()) write_file(opt.profile_file, rt.profile().csv(), "profile");
    trace->close(fmt::format(R"({{"chip":"{}","workload":"{}","total_ns":{},"version":"{}"}})", json_escape(chip.name),
                             json_escape(opt.workload_file), stats.number("total_ns"), json_escape(version())));
    if (!opt.quiet) {
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        std::cout << summary(stats, p, chip, layout, rt.profile(), opt);
        // Wall-clock figures go to the terminal only, never into the stats.
        std::cout << fmt::format("  sim     {:.2f} s wall ({:.2f} s simulating), {} events, {:.2f} M events/s, peak RSS {:.0f} MB\n",
                                 wall_s, sim_s, events, static_cast<double>(events) / sim_s / 1e6,
                                 static_cast<double>(ru.ru_maxrss) / 1024.0);
    }
    const double stale = stats.number("memory_model.stale_reads");
    if (opt.fail_on_stale && stale > 0) {
        std::cerr << fmt::format("npusim: --fail-on-stale: {:.0f} stale read{} on the mesh ({:.0f} DataBlocks read before "
                                 "they landed; memory_model.stale_read_samples in the stats names them)\n",
                                 stale, stale == 1 ? "" : "s", stats.number("memory_model.stale_blocks"));
        return 1;
    }
    return 0;
}

}  // namespace npusim
