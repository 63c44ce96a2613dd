#include "cli/system_run.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/report_trace.hpp"
#include "cli/run_summary.hpp"
#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "common/output_file.hpp"
#include "common/split.hpp"
#include "common/version.hpp"
#include "hw/l2_cache.hpp"
#include "report/html_report.hpp"
#include "system/system.hpp"
#include "stats/stats.hpp"
#include "tasks/rank_split.hpp"
#include "trace/trace_writer.hpp"

namespace npusim::cli {

namespace {

// What the run's events were, largest share first (kinds of 0.5% or more).
std::string event_split(const EventCounts& c) {
    const double total = static_cast<double>(c.total());
    if (total <= 0) return {};
    std::vector<std::size_t> order(kEventKinds);
    for (std::size_t i = 0; i < kEventKinds; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.by[a] > c.by[b]; });
    std::string out = "  events      ";
    for (const std::size_t i : order)
        if (static_cast<double>(c.by[i]) >= 0.005 * total)
            out += fmt::format(" {} {:.1f}%", kEventKindNames[i], 100.0 * static_cast<double>(c.by[i]) / total);
    return out + "  (engine.events_by)\n";
}

int rank_number(const std::string& item, const std::string& text, int ranks) {
    std::size_t used = 0;
    int v = -1;
    try {
        v = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || v < 0)
        throw InputError(fmt::format("--trace-ranks: '{}' is not a rank or a range like 8-15", item));
    if (v >= ranks)
        throw InputError(fmt::format("--trace-ranks: rank {} is out of range: the chip has {} ranks (0..{})", v, ranks, ranks - 1));
    return v;
}

// Kernel programs' phases (phases.<name>.order in the stats), in order: the
// mean and longest time per core, and when the phase ended.
std::string phase_summary(const Stats& s) {
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [key, v] : s.values()) {
        (void)v;
        const std::string suffix = ".order";
        if (key.rfind("phases.", 0) != 0 || key.size() <= 7 + suffix.size() ||
            key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        order.emplace_back(s.number(key), key.substr(7, key.size() - 7 - suffix.size()));
    }
    if (order.empty()) return {};
    std::sort(order.begin(), order.end());
    std::string out = "  program phase      mean us   max us   (per AIV core; end of phase: mean / max us)\n";
    for (const auto& [o, name] : order) {
        const std::string k = "phases." + name;
        out += fmt::format("  {:<18} {:7.2f}  {:7.2f}   ({:.2f} / {:.2f})\n", name, s.number(k + ".mean_ns") / 1000.0,
                           s.number(k + ".max_ns") / 1000.0, s.number(k + ".end_mean_ns") / 1000.0,
                           s.number(k + ".end_max_ns") / 1000.0);
    }
    return out;
}

// The functional memory (system/global_memory.hpp) keeps what it knows of
// each written DataBlock in pages of 64 (land time, flag, writer) behind a
// hash table: about 1.9 KB a page (a 2 GiB ring allreduce on 8 ranks, its
// 932,176 pages nearly all of it, peaked at 1.77 GB).
constexpr std::uint64_t kPageBlocks = 64;
constexpr std::uint64_t kLandedPageBytes = 1900;
// A rank's own state per task of a stream other ranks run too (its timing
// record, event states, queues; the stream and its descriptors are shared),
// measured: a DeepSeek-V3 decode on 288 dies held 338 MB more for two more
// MoE layers, 2.15 M task instances (157 B each).
constexpr std::uint64_t kRankBytesPerTask = 160;
// A die's fixed state besides its L2's tags (cores, memory system, HBM
// channels, scheduler, its share of the mesh), measured: a 1 MiB ring
// allreduce held 156 MB on 64 ranks and 1.0 GB on 288, 1.3-1.6 MB a rank
// beyond its tasks, tags and pages.
constexpr std::uint64_t kDieBytes = 1280 * 1024;

// Pages of DataBlocks that the streams' remote writes land in, over all
// ranks: per destination rank, the union of the written ranges (a block
// written twice is stored once), and the blocks tasks wait on. Kernel
// programs' writes are not known before they run.
std::uint64_t landed_pages(const std::vector<std::shared_ptr<const TaskStream>>& per_rank, std::uint64_t block) {
    std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> ranges;
    const std::uint64_t page = block * kPageBlocks;
    for (std::size_t r = 0; r < per_rank.size(); ++r)
        for (const Task& t : per_rank[r]->tasks) {
            for (const MemoryWait& w : t.wait_memory)  // watched blocks are kept too
                ranges[static_cast<int>(r)].emplace_back(w.addr / page, (w.addr + w.blocks * block + page - 1) / page);
            if (t.remote.dst_rank < 0) continue;
            const std::uint64_t bytes = std::max<std::uint64_t>({t.params.bytes, t.params.out_bytes, 1});
            ranges[t.remote.dst_rank].emplace_back(t.remote.addr / page, (t.remote.addr + bytes + page - 1) / page);
        }
    std::uint64_t pages = 0;
    for (auto& [rank, r] : ranges) {
        std::sort(r.begin(), r.end());
        std::uint64_t end = 0;
        for (const auto& [lo, hi] : r) {
            const std::uint64_t from = std::max(lo, end);
            if (hi > from) pages += hi - from;
            end = std::max(end, hi);
        }
    }
    return pages;
}

// Before a System is built: every rank's die (its L2's tag arrays, 28 B a
// way, and its per-task state as a die's run holds it) and the functional
// memory's pages.
void check_system_memory(const std::vector<std::shared_ptr<const TaskStream>>& per_rank, const ChipParams& chip,
                         const std::string& workload) {
    // A stream is held once however many ranks run it; each rank adds its
    // own per-task state.
    std::uint64_t tasks = 0, stream_tasks = 0;
    std::vector<const TaskStream*> seen;
    for (const auto& s : per_rank) {
        tasks += s->tasks.size();
        if (std::find(seen.begin(), seen.end(), s.get()) != seen.end()) continue;
        seen.push_back(s.get());
        stream_tasks += s->tasks.size();
    }
    const std::uint64_t pages = landed_pages(per_rank, static_cast<std::uint64_t>(chip.interconnect.datablock_bytes));

    const auto l2_tags = static_cast<std::uint64_t>(chip.l2.size_mb * 1024 * 1024) /
                         static_cast<std::uint64_t>(std::max(1, chip.l2.region_kb) * 1024) * L2Cache::kHostBytesPerWay;
    const std::uint64_t bytes = per_rank.size() * (l2_tags + kDieBytes) + stream_tasks * kStreamBytesPerTask +
                                (tasks - stream_tasks) * kRankBytesPerTask + pages * kLandedPageBytes;
    check_memory_budget(fmt::format("{}: simulating {} tasks on {} ranks with {} pages of DataBlocks landing over the mesh",
                                    workload, tasks, per_rank.size(), pages),
                        bytes, "use fewer ranks (--set chip.interconnect.ranks=N), fewer bytes or fewer layers");
}

}  // namespace

std::vector<int> parse_trace_ranks(const std::string& list, int ranks) {
    std::vector<int> out;
    if (list.empty()) {
        for (int r = 0; r < std::min(ranks, kDefaultTracedRanks); ++r) out.push_back(r);
        return out;
    }
    for (const std::string& item : split(list, ',')) {
        const auto dash = item.find('-');
        if (dash == std::string::npos) {
            out.push_back(rank_number(item, item, ranks));
            continue;
        }
        const int lo = rank_number(item, item.substr(0, dash), ranks), hi = rank_number(item, item.substr(dash + 1), ranks);
        if (hi < lo) throw InputError(fmt::format("--trace-ranks: range '{}' runs backwards", item));
        for (int r = lo; r <= hi; ++r) out.push_back(r);
    }
    return out;
}

int run_system(const RunConfig& cfg, const TaskStream& stream, const SystemRunOptions& opt) {
    std::vector<std::shared_ptr<const TaskStream>> per_rank;
    for (TaskStream& ts : split_by_rank(stream, cfg.chip().interconnect.ranks))
        per_rank.push_back(std::make_shared<const TaskStream>(std::move(ts)));
    return run_system(cfg, std::move(per_rank), opt);
}

int run_system(const RunConfig& cfg, std::vector<std::shared_ptr<const TaskStream>> per_rank, const SystemRunOptions& opt) {
    const ChipParams& chip = cfg.chip();
    const std::vector<int> traced = parse_trace_ranks(opt.trace_ranks, chip.interconnect.ranks);
    check_system_memory(per_rank, chip, opt.workload_file);
    // The report's timeline reads the trace: without --trace, a temporary one.
    const ReportTrace report_trace(opt.trace_file, !opt.report_file.empty());
    const std::string& trace_path = report_trace.path();
    std::unique_ptr<TraceWriter> trace =
        trace_path.empty() ? std::make_unique<TraceWriter>() : std::make_unique<TraceWriter>(trace_path);
    trace->set_filter(opt.trace_filter);
    System system("system", chip, std::move(per_rank), trace.get(), traced, !opt.trace_tasks_only);
    system.set_lookahead(opt.lookahead_cells ? System::Lookahead::cell : System::Lookahead::posts);
    system.set_threads(opt.threads > 0 ? opt.threads : std::thread::hardware_concurrency() >= 2 ? 2 : 1);
    if (!opt.elaborate_only) system.run();

    Stats stats;
    system.collect(stats);
    stats.set_json("config", cfg.dump());
    stats.set("version", version());
    std::string workload_summary = opt.workload_stats ? opt.workload_stats(stats) : "";
    if (opt.system_stats) workload_summary += opt.system_stats(stats, system);
    system.trace_critical_path();
    system.trace_fabric();
    if (!opt.stats_file.empty()) write_output_file(opt.stats_file, stats.to_json());
    if (!opt.profile_file.empty()) write_output_file(opt.profile_file, system.phase_csv());
    trace->close(fmt::format(R"({{"chip":"{}","workload":"{}","total_ns":{},"version":"{}"}})", json_escape(chip.name),
                             json_escape(opt.workload_file), stats.number("total_ns"), json_escape(version())));
    warn_if_selected_nothing(*trace, opt.trace_filter);
    if (!opt.quiet) {
        const std::string traced_to = trace->selected_nothing() ? std::string() : opt.trace_file;
        std::cout << run_summary(stats, chip, opt.stats_file, traced_to) << phase_summary(stats) << workload_summary;
        if (!opt.profile_file.empty())
            std::cout << "  profile -> " << opt.profile_file << "  (tools/plot_phases.py draws it)\n";
        int busy = 0;
        for (int r = 0; r < system.ranks(); ++r) busy += system.die(r).context().stream.tasks.empty() ? 0 : 1;
        std::cout << fmt::format(
            "  system       {} rank{} ({} with tasks) on {} thread{}, last to finish: rank {}; mesh {:.3f} MB in {} writes, "
            "stale reads {:.0f}; {} simulation events\n",
            system.ranks(), system.ranks() == 1 ? "" : "s", busy, system.threads(), system.threads() == 1 ? "" : "s",
            system.last_rank(),
            // One die without kernel programs reports no mesh or functional memory.
            stats.number_or("mesh.bytes", 0) / 1e6, system.mesh().writes(),
            stats.number_or("memory_model.stale_reads", 0), system.events());
        std::cout << event_split(system.events_by_kind());
        if (!traced_to.empty())
            std::cout << fmt::format("  traced ranks {}{}\n", traced.size() <= 16 ? fmt::format("{}", fmt::join(traced, ",")) :
                                                                    fmt::format("{} of them", traced.size()),
                                     traced.size() < static_cast<std::size_t>(system.ranks()) ? " (--trace-ranks LIST for others)" : "");
    }
    finish_run(opt.after_run, opt.stats_file, stats.to_json(), opt.report_file,
               trace->selected_nothing() ? std::string() : trace_path, opt.workload_file, opt.sets, opt.quiet);
    const double stale = stats.number_or("memory_model.stale_reads", 0);
    if (opt.fail_on_stale && stale > 0) {
        std::cerr << fmt::format("npusim: --fail-on-stale: {:.0f} stale read{} on the mesh\n", stale, stale == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

void finish_run(const std::function<void()>& after_run, const std::string& stats_file, const std::string& stats_json,
                const std::string& report_file, const std::string& trace_path, const std::string& workload,
                const std::vector<std::string>& sets, bool quiet) {
    if (after_run) after_run();
    if (report_file.empty()) return;
    std::string text = stats_json;
    if (after_run && !stats_file.empty()) {
        std::ifstream in(stats_file, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    report::write_run_report(report_file, nlohmann::json::parse(text), trace_path, workload, sets);
    if (!quiet) std::cout << "  report -> " << report_file << "\n";
}

void warn_if_selected_nothing(const TraceWriter& trace, const TraceFilter& filter) {
    if (trace.selected_nothing())
        std::cerr << fmt::format("npusim: warning: {} selected no slice on the traced tracks; no trace written\n",
                                 filter.options());
}

void print_warnings(const compiler::SpmdCompile& spmd) {
    std::set<std::string> said;
    for (const auto& plan : spmd.plans)
        for (const auto& w : plan.warnings)
            if (said.insert(w).second) std::cerr << "npusim: warning: " << w << "\n";
}

}  // namespace npusim::cli
