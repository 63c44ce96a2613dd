#include "hw/system.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

System::System(sc_core::sc_module_name name, const ChipParams& chip, std::vector<TaskStream> per_rank,
               TraceWriter* trace, std::vector<int> traced_ranks, bool trace_pipes)
    : sc_core::sc_module(name), chip_(chip), streams_(std::move(per_rank)), traced_(std::move(traced_ranks)) {
    const int ranks = chip.interconnect.ranks;
    streams_.resize(static_cast<std::size_t>(ranks));
    std::sort(traced_.begin(), traced_.end());
    traced_.erase(std::unique(traced_.begin(), traced_.end()), traced_.end());
    const bool tracing = trace && trace->enabled();
    memory_ = std::make_unique<GlobalMemory>(ranks, static_cast<std::uint32_t>(chip.interconnect.datablock_bytes));
    memory_->set_fire(&System::on_fire, this);
    // The mesh traces planes of the ranks below the highest traced one.
    const int mesh_traced = tracing && !traced_.empty() ? traced_.back() + 1 : 0;
    mesh_ = std::make_unique<Mesh>("mesh", chip, *memory_, tracing ? trace : nullptr, mesh_traced);
    // Where copies land, per destination rank, from every rank's stream.
    remote_ranges_.resize(streams_.size());
    const std::uint64_t block = static_cast<std::uint64_t>(chip.interconnect.datablock_bytes);
    for (const TaskStream& ts : streams_)
        for (const Task& t : ts.tasks) {
            if (t.remote.dst_rank < 0) continue;
            const std::uint64_t payload = t.remote.has_flag ? block - 8 : block;
            const std::uint64_t blocks = (t.params.bytes + payload - 1) / payload;
            remote_ranges_[static_cast<std::size_t>(t.remote.dst_rank)].emplace_back(t.remote.addr, t.remote.addr + blocks * block);
        }
    for (auto& v : remote_ranges_) {
        std::sort(v.begin(), v.end());
        std::size_t out = 0;
        for (const auto& r : v) {
            if (out > 0 && r.first <= v[out - 1].second) v[out - 1].second = std::max(v[out - 1].second, r.second);
            else v[out++] = r;
        }
        v.resize(out);
    }
    dies_.reserve(streams_.size());
    for (int r = 0; r < ranks; ++r) {
        const RankLink link{r, mesh_.get(), memory_.get(), &remote_ranges_[static_cast<std::size_t>(r)]};
        dies_.push_back(std::make_unique<Die>(fmt::format("rank{}", r).c_str(), chip, streams_[static_cast<std::size_t>(r)],
                                              traced(r) ? trace : nullptr, trace_pipes, link));
    }
}

bool System::traced(int rank) const { return std::binary_search(traced_.begin(), traced_.end(), rank); }

void System::on_fire(void* ctx, std::uint32_t owner, std::uint64_t tag, std::uint64_t fire_ps) {
    auto* self = static_cast<System*>(ctx);
    if (owner & ScalarCore::kWatchOwner) {
        self->die(static_cast<int>(owner & ~ScalarCore::kWatchOwner)).scalar().memory_ready(static_cast<std::uint32_t>(tag), fire_ps);
    } else if (self->kernel_fire_) {
        self->kernel_fire_(self->kernel_ctx_, owner, tag, fire_ps);
    }
}

void System::run() {
    sc_core::sc_start();
    check_finished();
}

void System::check_finished() const {
    for (const auto& d : dies_) {
        const std::string report = d->scalar().deadlock_report();
        if (report.empty()) continue;
        throw DeadlockError(ranks() > 1 ? fmt::format("rank {}: {}", d->rank(), report) : report);
    }
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

void System::collect(Stats& s) const {
    if (ranks() == 1) {
        dies_[0]->collect(s);
        return;
    }
    const std::uint64_t end = end_ps();
    const RunSpan span{end, chip_.ps_per_cycle()};
    // Sums of integers, sums of doubles (averaged at the end) and how many
    // ranks reported each double.
    std::map<std::string, std::int64_t> ints;
    std::map<std::string, std::pair<double, int>> doubles;
    std::map<std::string, std::string> texts;
    const int last = last_rank();
    for (const auto& d : dies_) {
        Stats one;
        d->collect(one, end);
        for (const auto& [key, v] : one.values()) {
            if (const auto* i = std::get_if<std::int64_t>(&v)) ints[key] += *i;
            else if (const auto* x = std::get_if<double>(&v)) {
                auto& acc = doubles[key];
                acc.first += *x;
                ++acc.second;
            } else if (!texts.count(key)) texts[key] = std::get<std::string>(v);
        }
        if (d->rank() == last)
            for (const auto& [key, text] : one.json_values()) s.set_json(key, text);
        const std::string r = fmt::format("ranks.r{}.", d->rank());
        s.set(r + "total_ns", static_cast<double>(d->end_ps()) / 1000.0);
        s.set(r + "tasks", static_cast<std::uint64_t>(d->context().stream.tasks.size()));
        s.set(r + "cube_utilization", one.number("units.cube.utilization"));
        s.set(r + "vector_utilization", one.number("units.vector.utilization"));
        s.set(r + "hbm_bytes", static_cast<std::uint64_t>(one.number("memory.hbm.read_bytes") + one.number("memory.hbm.write_bytes")));
    }
    for (const auto& [key, v] : ints) s.set(key, v);
    for (const auto& [key, acc] : doubles) s.set(key, acc.first / acc.second);
    for (const auto& [key, v] : texts) s.set(key, v);
    // What the whole system did, not a sum over ranks.
    s.set("total_ps", end);
    s.set("total_ns", static_cast<double>(end) / 1000.0);
    s.set("total_cycles", span.cycles(static_cast<double>(end)));
    s.set("clock_ghz", chip_.clock_ghz);
    s.set("ranks.count", ranks());
    s.set("ranks.last", last);
    mesh_->report(s, span);
    memory_->report(s);
}

void System::trace_critical_path() {
    const int last = last_rank();
    if (traced(last)) die(last).trace_critical_path();
}

}  // namespace npusim
