// sc_spawn needs the dynamic-process part of the SystemC headers.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "kernel_api/kernel_runtime.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "engine/wake_scheduler.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

KernelRuntime::KernelRuntime(sc_core::sc_module_name name, const ChipParams& chip, Kernel kernel, TraceWriter* trace,
                             int traced_ranks, std::size_t stack_bytes)
    : sc_core::sc_module(name),
      chip_(chip),
      kernel_(std::move(kernel)),
      trace_(trace && trace->enabled() ? trace : nullptr),
      traced_ranks_(std::min(traced_ranks, chip.interconnect.ranks)),
      ranks_(chip.interconnect.ranks),
      cores_(chip.vector.count),
      profile_(chip.interconnect.ranks, chip.vector.count) {
    if (cores_ < 1) throw InputError("the supernode kernel runs on AIV cores: chip.cores.vector.count must be >= 1");
    memory_ = std::make_unique<GlobalMemory>(ranks_, static_cast<std::uint32_t>(chip.interconnect.datablock_bytes));
    mesh_ = std::make_unique<Mesh>("mesh", chip, *memory_, trace_, traced_ranks_);
    memory_->set_fire(&KernelRuntime::on_fire, this);
    lookahead_ps_ = static_cast<std::uint64_t>(
        std::llround(1000.0 * (chip.kernel.mte_setup_ns + std::min(chip.hbm.latency_ns, chip.interconnect.min_latency_ns()))));

    if (trace_)
        for (int r = 0; r < traced_ranks_; ++r) {
            trace_->process(r + 1, fmt::format("rank {} ({})", r, chip.name), r);
            for (int c = 0; c < cores_; ++c) trace_->thread(r + 1, c + 1, fmt::format("aiv{}", c), c);
        }

    barriers_.reserve(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) barriers_.push_back(std::make_unique<Barrier>());
    cores_v_.reserve(static_cast<std::size_t>(ranks_) * cores_);
    for (int r = 0; r < ranks_; ++r)
        for (int c = 0; c < cores_; ++c) cores_v_.push_back(std::make_unique<AivCore>(*this, r, c));

    // One thread per core, small stacks: kernels keep their data on the heap.
    sc_core::sc_spawn_options opts;
    opts.set_stack_size(static_cast<int>(stack_bytes));
    for (std::uint32_t id = 0; id < cores_v_.size(); ++id) {
        const std::string n = fmt::format("r{}c{}", id / cores_, id % cores_);
        sc_core::sc_spawn([this, id] { core_main(id); }, n.c_str(), &opts);
    }
}

KernelRuntime::~KernelRuntime() = default;

Addr KernelRuntime::cross_core_addr(int id, int core) const {
    return kCrossCoreBase + (static_cast<Addr>(id) * cores_ + core) * static_cast<Addr>(chip_.interconnect.datablock_bytes);
}

// A watch of `owner` completed while some core posted a write: it becomes
// true at fire_ps (now or later). A waiting owner is woken for then.
void KernelRuntime::on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps) {
    auto* self = static_cast<KernelRuntime*>(ctx);
    AivCore& k = *self->cores_v_[owner];
    if (tag == AivCore::kWaitTag) k.single_ps_ = fire_ps;
    else k.ready_.push(AivCore::Ready{fire_ps, k.ready_seq_++, tag});
    if (k.waiting_) {
        const std::uint64_t now = now_ps();
        k.ev_.notify(sc_core::sc_time::from_value(fire_ps > now ? fire_ps - now : 0));
    }
}

void KernelRuntime::core_main(std::uint32_t id) {
    AivCore& k = *cores_v_[id];
    profile_.start(k.rank(), k.core(), now_ps());
    k.last_stamp_ps_ = now_ps();
    kernel_(k);
    k.pipe_barrier();
    k.sync();
    k.done_ = true;
    k.end_ps_ = now_ps();
    end_ps_ = std::max(end_ps_, k.end_ps_);
    // Park instead of returning: SystemC removes a finished thread from a list
    // in linear time, which is quadratic over 13,824 threads.
    sc_core::wait(never_);
}

void KernelRuntime::run() {
    sc_core::sc_start();
    std::size_t stuck = 0;
    const AivCore* first = nullptr;
    for (const auto& k : cores_v_)
        if (!k->done_) {
            ++stuck;
            if (!first) first = k.get();
        }
    if (first)
        throw DeadlockError(fmt::format(
            "deadlock: rank {} core {} waits for {}{} that no write will bring; {} of {} cores never finished",
            first->rank(), first->core(), first->wait_what_ ? first->wait_what_ : "something",
            first->wait_addr_ ? fmt::format(" at {:#x}", first->wait_addr_) : std::string(), stuck, cores_v_.size()));
}

void KernelRuntime::collect(Stats& s) const {
    const RunSpan span{end_ps_, chip_.ps_per_cycle()};
    s.set("total_ps", end_ps_);
    s.set("total_ns", static_cast<double>(end_ps_) / 1000.0);
    s.set("total_cycles", span.cycles(static_cast<double>(end_ps_)));
    s.set("clock_ghz", chip_.clock_ghz);
    s.set("supernode.ranks", ranks_);
    s.set("supernode.aiv_cores_per_rank", cores_);
    s.set("kernel.instances", static_cast<std::uint64_t>(cores_v_.size()));
    s.set("kernel.ops", ops_);
    s.set("kernel.waits", waits_);
    s.set("kernel.sync_alls", sync_alls_);
    // Per-rank end (the op is done on a rank when its last core is).
    std::uint64_t min_rank_end = UINT64_MAX, sum_rank_end = 0;
    for (int r = 0; r < ranks_; ++r) {
        std::uint64_t e = 0;
        for (int c = 0; c < cores_; ++c) e = std::max(e, cores_v_[static_cast<std::size_t>(r * cores_ + c)]->end_ps_);
        min_rank_end = std::min(min_rank_end, e);
        sum_rank_end += e;
    }
    s.set("supernode.rank_end_min_ns", static_cast<double>(min_rank_end) / 1000.0);
    s.set("supernode.rank_end_mean_ns", static_cast<double>(sum_rank_end) / 1000.0 / ranks_);
    memory_->report(s);
    mesh_->report(s, span);
    profile_.report(s, "phases");
    report_critical_path(s);
}

// The core that finished last, phase by phase: in each phase the time it was
// blocked on the mesh (flags, landings) and in SyncAll, the rest its own
// work (docs/design.md §4.4). A per-core chain: the mesh waits stand for the
// other ranks' steps that set them.
void KernelRuntime::report_critical_path(Stats& s) const {
    const AivCore* last = nullptr;
    for (const auto& c : cores_v_)
        if (!last || c->end_ps_ > last->end_ps_) last = c.get();
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; };
    nlohmann::json segs = nlohmann::json::array();
    std::map<std::string, std::uint64_t> by_kind;
    auto add = [&](const char* kind, const std::string& op, std::uint64_t a, std::uint64_t b) {
        if (b <= a) return;
        by_kind[kind] += b - a;
        segs.push_back({{"kind", kind}, {"task", fmt::format("rank {} core {}", last->rank(), last->core())}, {"op", op},
                        {"start_ns", ns(a)}, {"end_ns", ns(b)}});
    };
    if (last) {
        std::uint64_t at = profile_.start_of(last->rank(), last->core());
        add("idle", "start", 0, at);
        for (const auto& w : last->phase_waits_) {
            if (w.end_ps < at) continue;
            const std::uint64_t dur = w.end_ps - at, mesh = std::min(w.mesh_ps, dur), sync = std::min(w.sync_ps, dur - mesh);
            const std::string& phase = profile_.phases()[static_cast<std::size_t>(w.phase)];
            add("compute", phase, at, w.end_ps - mesh - sync);
            add("mesh", phase, w.end_ps - mesh - sync, w.end_ps - sync);
            add("sync", phase, w.end_ps - sync, w.end_ps);
            at = w.end_ps;
        }
        add("compute", "end", at, end_ps_);
    }
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [k, ps] : by_kind) kinds[k] = ns(ps);
    s.set_json("critical_path", nlohmann::json{{"total_ns", ns(end_ps_)}, {"by_kind", kinds}, {"segments", segs},
                                               {"segments_omitted", 0}}.dump());
}

}  // namespace npusim
