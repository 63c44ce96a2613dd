// sc_spawn needs the dynamic-process part of the SystemC headers.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "kernel_api/kernel_runtime.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chip/timing.hpp"
#include "common/errors.hpp"
#include "engine/wake_scheduler.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
std::vector<int> first_ranks(int n) {
    std::vector<int> v(static_cast<std::size_t>(std::max(0, n)));
    for (int r = 0; r < n; ++r) v[static_cast<std::size_t>(r)] = r;
    return v;
}
}  // namespace

KernelRuntime::KernelRuntime(sc_core::sc_module_name name, const ChipParams& chip, Kernel kernel, TraceWriter* trace,
                             int traced_ranks, std::size_t stack_bytes)
    : sc_core::sc_module(name),
      chip_(chip),
      kernel_(std::move(kernel)),
      trace_(trace && trace->enabled() ? trace : nullptr),
      traced_ranks_(std::min(traced_ranks, chip.interconnect.ranks)),
      ranks_(chip.interconnect.ranks),
      cores_(chip.vector.count),
      // Dies that only host kernels: no tasks, no per-pipe task tracks.
      own_(std::make_unique<System>("system", chip, std::vector<TaskStream>(static_cast<std::size_t>(chip.interconnect.ranks)),
                                    trace_, first_ranks(traced_ranks_), false)),
      system_(*own_),
      profile_(chip.interconnect.ranks, chip.vector.count) {
    build(stack_bytes);
}

KernelRuntime::KernelRuntime(sc_core::sc_module_name name, System& system, Kernel kernel, TraceWriter* trace,
                             int traced_ranks, std::size_t stack_bytes)
    : sc_core::sc_module(name),
      chip_(system.die(0).context().chip),
      kernel_(std::move(kernel)),
      trace_(trace && trace->enabled() ? trace : nullptr),
      traced_ranks_(std::min(traced_ranks, system.ranks())),
      ranks_(system.ranks()),
      cores_(chip_.vector.count),
      system_(system),
      profile_(system.ranks(), chip_.vector.count) {
    build(stack_bytes);
}

void KernelRuntime::build(std::size_t stack_bytes) {
    const ChipParams& chip = chip_;
    if (cores_ < 1) throw InputError("the supernode kernel runs on AIV cores: chip.cores.vector.count must be >= 1");
    system_.set_kernel_fire(&KernelRuntime::on_fire, this);
    // The shortest post-to-landing time: a write's descriptor, then the L2
    // latency (own GM) or a plane's latency (another rank).
    lookahead_ps_ = static_cast<std::uint64_t>(std::llround(
        1000.0 * (chip.kernel.descriptor_issue_ns + std::min(chip.l2.latency_ns, chip.interconnect.min_latency_ns()))));
    completion_ps_ = static_cast<std::uint64_t>(std::llround(1000.0 * chip.kernel.completion_ns));
    const double ps_per_cycle = chip.ps_per_cycle();
    gm_cap_ = chip.vector.gm_bytes_per_cycle / ps_per_cycle;
    l2_read_cap_ = timing::l2_port_bytes_per_cycle(chip, CoreType::vector, false, 1) / ps_per_cycle;
    l2_write_cap_ = timing::l2_port_bytes_per_cycle(chip, CoreType::vector, true, 1) / ps_per_cycle;

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

void KernelRuntime::submit_at(AivCore& k, std::uint64_t t_ps) {
    system_.die(k.rank()).scheduler().at(t_ps, *this, k.id_);
}

void KernelRuntime::wake(std::uint64_t core_id) {
    AivCore& k = *cores_v_[static_cast<std::size_t>(core_id)];
    const AivCore::PortJob& j = k.port_q_.front();
    // A read sees what has landed by its start (landing times are final by then).
    for (std::uint32_t i = 0; i < j.items; ++i)
        system_.memory().check_read(k.rank(), j.read_addr + i * j.stride, j.item_bytes, k.core(), j.start);
    system_.die(k.rank()).memory_system().transfer(j.req, this, core_id << 32 | j.idx);
    k.port_q_.pop_front();
}

// The memory system's callbacks: a core waiting for this transfer re-checks.
void KernelRuntime::transfer_drained(std::uint64_t tag) {
    AivCore& k = *cores_v_[static_cast<std::size_t>(tag >> 32)];
    const auto idx = static_cast<std::uint32_t>(tag & 0xFFFFFFFFu);
    k.xfers_[idx].drained = now_ps();
    k.port_busy_ = false;
    if (!k.port_q_.empty()) k.start_port(now_ps());
    if (k.waiting_ && k.awaited_ == (idx << 1 | 1)) k.ev_.notify(sc_core::SC_ZERO_TIME);
}

void KernelRuntime::transfer_done(std::uint64_t tag) {
    AivCore& k = *cores_v_[static_cast<std::size_t>(tag >> 32)];
    const auto idx = static_cast<std::uint32_t>(tag & 0xFFFFFFFFu);
    k.xfers_[idx].done = now_ps();
    // Woken when the completion is reported, not before.
    if (k.waiting_ && k.awaited_ == (idx << 1)) k.ev_.notify(sc_core::sc_time::from_value(completion_ps_));
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
    system_.memory().report(s);
    report_memory(s);
    system_.mesh().report(s, span);
    profile_.report(s, "phases");
    report_critical_path(s);
}

void KernelRuntime::report_memory(Stats& s) const {
    MemoryTraffic m;
    for (int r = 0; r < ranks_; ++r) {
        const MemoryTraffic& t = static_cast<const System&>(system_).die(r).memory_system().traffic();
        m.hbm_read_bytes += t.hbm_read_bytes;
        m.hbm_write_bytes += t.hbm_write_bytes;
        m.l2_hit_bytes += t.l2_hit_bytes;
        m.l2_miss_bytes += t.l2_miss_bytes;
        m.l2_write_bytes += t.l2_write_bytes;
        m.l2_served_bytes += t.l2_served_bytes;
        m.transfers += t.transfers;
    }
    s.set("memory.hbm.read_bytes", m.hbm_read_bytes);
    s.set("memory.hbm.write_bytes", m.hbm_write_bytes);
    s.set("memory.l2.hit_bytes", m.l2_hit_bytes);
    s.set("memory.l2.miss_bytes", m.l2_miss_bytes);
    s.set("memory.l2.write_bytes", m.l2_write_bytes);
    const double reads = static_cast<double>(m.l2_hit_bytes + m.l2_miss_bytes);
    s.set("memory.l2.hit_rate", reads > 0 ? static_cast<double>(m.l2_hit_bytes) / reads : 0.0);
    s.set("memory.transfers", m.transfers);
    // Share of all dies' bandwidth over the run.
    const double span_ps = static_cast<double>(end_ps_) * ranks_;
    const double hbm_cap = chip_.hbm.bandwidth_gbps / 1000.0 * span_ps, l2_cap = chip_.l2.bandwidth_gbps / 1000.0 * span_ps;
    s.set("units.hbm.utilization",
          hbm_cap > 0 ? static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes) / hbm_cap : 0.0);
    s.set("units.l2.utilization", l2_cap > 0 ? static_cast<double>(m.l2_served_bytes) / l2_cap : 0.0);
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
            const std::uint64_t mem = std::min(w.memory_ps, dur - mesh - sync);
            const std::string& phase = profile_.phases()[static_cast<std::size_t>(w.phase)];
            add("compute", phase, at, w.end_ps - mesh - sync - mem);
            add("memory", phase, w.end_ps - mesh - sync - mem, w.end_ps - mesh - sync);
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
