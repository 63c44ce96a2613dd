#include "system/system.hpp"
#include "common/arith.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
constexpr std::uint64_t kNeverPs = ~std::uint64_t{0};
}  // namespace

namespace {


// Per destination rank, the GM ranges that copies of any rank write into it,
// sorted and merged.
std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> landing_ranges(
    const std::vector<std::shared_ptr<const TaskStream>>& streams, int ranks, std::uint64_t block) {
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> out(static_cast<std::size_t>(ranks));
    std::vector<const TaskStream*> seen;
    for (const auto& ts : streams) {
        if (!ts || std::find(seen.begin(), seen.end(), ts.get()) != seen.end()) continue;
        seen.push_back(ts.get());
        for (const Task& t : ts->tasks) {
            if (t.remote.dst_rank < 0 || t.remote.dst_rank >= ranks) continue;
            const std::uint64_t payload = t.remote.has_flag ? block - 8 : block;
            const std::uint64_t blocks = (t.params.bytes + payload - 1) / payload;
            out[static_cast<std::size_t>(t.remote.dst_rank)].emplace_back(t.remote.addr, t.remote.addr + blocks * block);
        }
    }
    for (auto& v : out) {
        std::sort(v.begin(), v.end());
        std::size_t n = 0;
        for (const auto& r : v) {
            if (n > 0 && r.first <= v[n - 1].second) v[n - 1].second = std::max(v[n - 1].second, r.second);
            else v[n++] = r;
        }
        v.resize(n);
    }
    return out;
}

}  // namespace

System::System(sc_core::sc_module_name name, const ChipParams& chip, std::vector<std::shared_ptr<const TaskStream>> per_rank,
               TraceWriter* trace, std::vector<int> traced_ranks, bool trace_pipes)
    : sc_core::sc_module(name), chip_(chip), streams_(std::move(per_rank)), traced_(std::move(traced_ranks)), hub_("hub") {
    const int ranks = chip.interconnect.ranks;
    streams_.resize(static_cast<std::size_t>(ranks));
    static const TaskStream kNoTasks;
    for (auto& s : streams_)
        if (!s) s = std::shared_ptr<const TaskStream>(std::shared_ptr<const TaskStream>{}, &kNoTasks);
    std::sort(traced_.begin(), traced_.end());
    traced_.erase(std::unique(traced_.begin(), traced_.end()), traced_.end());
    const bool tracing = trace && trace->enabled();
    memory_ = std::make_unique<GlobalMemory>(ranks, static_cast<std::uint32_t>(chip.interconnect.datablock_bytes));
    memory_->set_fire(&System::on_fire, this);
    mesh_ = std::make_unique<Mesh>("mesh", chip, *memory_, tracing ? trace : nullptr, traced_);
    remote_ranges_ = landing_ranges(streams_, ranks, static_cast<std::uint64_t>(chip.interconnect.datablock_bytes));
    // Nothing posted at t lands before t + the shorter of the own L2's latency
    // and a plane's; a fence's acknowledgement takes the slowest tier's.
    // The hub runs each die up to half the shortest link latency ahead of
    // the earliest (docs/architecture.md, "How time works"): a remote write
    // lands at least a link latency after it is posted, so no die can
    // affect another within the window. A program reading shared state at
    // its scalar time must then stay within the other half of it.
    const std::uint64_t link_min = ns_to_ps(chip.interconnect.min_latency_ns());
    const std::uint64_t window = ranks > 1 ? link_min / 2 : 0;
    hub_.set_window(window);
    hub_.set_listener(this);
    tracing_ = tracing;
    trace_ = tracing ? trace : nullptr;
    min_landing_ps_ = std::min(ns_to_ps(chip.l2.latency_ns), link_min - window);
    max_latency_ps_ = ns_to_ps(chip.interconnect.max_latency_ns());
    dies_.reserve(streams_.size());
    // Ranks that run one stream share its descriptor table (the streams are
    // few: one per distinct rank program).
    struct Shared {
        const TaskStream* stream;
        std::shared_ptr<const DescriptorTable> table;
        std::shared_ptr<const PostHorizon> horizon;
    };
    std::vector<Shared> shared;
    for (int r = 0; r < ranks; ++r) {
        const TaskStream& stream = *streams_[static_cast<std::size_t>(r)];
        auto it = std::find_if(shared.begin(), shared.end(), [&](const Shared& t) { return t.stream == &stream; });
        if (it == shared.end())
            it = shared.insert(shared.end(), {&stream, std::make_shared<const DescriptorTable>(stream),
                                              std::make_shared<const PostHorizon>(stream, chip)});
        dies_.push_back(std::make_unique<Die>(fmt::format("rank{}", r).c_str(), chip, stream,
                                              traced(r) ? trace : nullptr, trace_pipes, DiePlace{r, this}, it->table));
        dies_.back()->scheduler().attach(hub_, r);
        dies_.back()->scalar().set_post_horizon(it->horizon);
    }
    quiet_until_.assign(dies_.size(), 0);
}

bool System::traced(int rank) const { return std::binary_search(traced_.begin(), traced_.end(), rank); }

void System::set_threads(int n) { hub_.set_threads(tracing_ ? 1 : n); }

void System::on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps) {
    auto* self = static_cast<System*>(ctx);
    const int rank = static_cast<int>(owner >> kUnitBits), unit = static_cast<int>(owner & ((1u << kUnitBits) - 1));
    // A die's write into its own GM may come true within the window: now.
    if (rank == self->posting_rank_) self->die(rank).watch_fired(unit, tag, fire_ps);
    else self->deferred_.push_back(Deferred{rank, unit, fire_ps, tag, 0});
}

void System::window_over() {
    for (const Deferred& d : deferred_) {
        quiet_until_[static_cast<std::size_t>(d.rank)] = 0;  // a landing may set its die going
        if (d.unit < 0) die(d.rank).memory_system().landed_write_at(d.t_ps, d.addr_or_tag, d.bytes);
        else die(d.rank).watch_fired(d.unit, d.addr_or_tag, d.t_ps);
    }
    deferred_.clear();
    if (progress_.due()) report_progress();
}

void System::report_progress() const {
    std::uint64_t done = 0, tasks = 0;
    for (std::size_t r = 0; r < dies_.size(); ++r) {
        done += dies_[r]->scalar().tasks_done();
        tasks += streams_[r]->tasks.size();
    }
    progress_.print(done, tasks, ranks(), sc_core::sc_time_stamp().value());
}

// Cells up to the first in which a die may post a write to another: no
// die reaches another before that cell (docs/architecture.md, "How time
// works"). Each die's bound holds until something lands in it, so it is
// found again only when a later window needs it later or after a landing.
std::uint64_t System::window_end(std::uint64_t now, std::uint64_t end) {
    if (lookahead_ != Lookahead::posts) return end;
    constexpr std::uint64_t kHorizonPs = 25'000'000;  // how far a die's bound looks ahead (25 us)
    const std::uint64_t cell = hub_.window(), need = end + cell;
    std::uint64_t first = kNeverPs;
    for (std::size_t r = 0; r < dies_.size(); ++r) {
        std::uint64_t& quiet = quiet_until_[r];
        if (quiet < need) {
            Die& d = *dies_[r];
            const std::uint64_t next = d.scheduler().next_ps();
            const std::uint64_t base = std::max(now, next);
            quiet =
                next == kNeverPs ? kNeverPs : d.scalar().post_bound(base, base + kHorizonPs, need, horizon_scratch_);
            if (quiet < need) return end;
        }
        first = std::min(first, quiet);
    }
    return first / cell * cell;
}

// --- Fabric ----------------------------------------------------------------------
// Each call that reads or writes what the dies share first waits its turn
// (WakeHub::serialize): the fabric sees the dies in the window's (time,
// lane) order whichever thread runs them.

PostedWrite System::post(const WriteRequest& w, std::uint64_t t0_ps) {
    hub_.serialize();
    posting_rank_ = w.src_rank;
    const PostedWrite pw = mesh_->post(w, t0_ps);
    posting_rank_ = -1;
    // The blocks land in the receiver's GM through its write-back L2, in the
    // receiver's time, once the window is over (they land after it).
    const std::uint32_t block = memory_->block_bytes();
    deferred_.push_back(Deferred{w.dst_rank, -1, pw.land_ps, w.addr, static_cast<std::uint64_t>(write_blocks(w, block)) * block});
    return pw;
}

void System::post_local(const WriteRequest& w, std::uint64_t land_ps) {
    hub_.serialize();
    posting_rank_ = w.src_rank;
    mesh_->post_local(w, land_ps);
    posting_rank_ = -1;
}

bool System::watch(int rank, int unit, Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag,
                   std::uint64_t& fire_ps) {
    hub_.serialize();
    const auto owner = static_cast<std::uint32_t>(rank) << kUnitBits | static_cast<std::uint32_t>(unit);
    return memory_->watch(rank, memory_->block_of(addr), blocks, true, value, owner, tag, fire_ps);
}

Writer System::writer_of(int rank, Addr addr, std::uint32_t blocks) const {
    hub_.serialize();
    return memory_->writer(rank, memory_->block_of(addr), blocks);
}

bool System::block_written(int rank, Addr addr, std::uint64_t& flag) const {
    hub_.serialize();
    const std::uint64_t b = memory_->block_of(addr);
    flag = memory_->flag(rank, b);
    return memory_->land_time(rank, b) != GlobalMemory::kNever;
}

bool System::check_read(int rank, Addr addr, std::uint64_t bytes, int core, std::uint64_t now_ps) {
    hub_.serialize();
    return memory_->check_read(rank, addr, bytes, core, now_ps);
}

// --- running -----------------------------------------------------------------------

void System::run() {
    const EventCounts before = sim_event_counts();
    sc_core::sc_start();
    events_ = sim_event_counts() - before;
    check_finished();
}

void System::check_finished() const {
    // A wait across ranks shows on each side: name a stuck task on up to two ranks.
    std::string first;
    for (const auto& d : dies_) {
        const std::string report = d->deadlock_report();
        if (report.empty()) continue;
        const std::string line = ranks() > 1 ? fmt::format("rank {}: {}", d->rank(), report) : report;
        if (first.empty()) {
            first = line;
            continue;
        }
        throw DeadlockError(first + "; and " + line);
    }
    if (!first.empty()) throw DeadlockError(first);
}

std::uint64_t System::end_ps() const {
    std::uint64_t end = 0;
    for (const auto& d : dies_) end = std::max(end, d->end_ps());
    return end;
}

int System::last_rank() const {
    int last = 0;
    std::uint64_t end = 0;
    for (const auto& d : dies_)
        if (d->end_ps() > end) {
            end = d->end_ps();
            last = d->rank();
        }
    return last;
}

}  // namespace npusim
