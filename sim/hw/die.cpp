#include "hw/die.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "stats/intervals.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

Die::Die(sc_core::sc_module_name name, const ChipParams& chip, const TaskStream& stream, TraceWriter* trace,
         bool trace_pipes)
    : sc_core::sc_module(name), ctx_(chip, stream), scheduler_("scheduler") {
    ctx_.scheduler = &scheduler_;
    ctx_.trace = trace;
    ctx_.tracing = trace && trace->enabled();
    ctx_.trace_pipes = trace_pipes;
    if (ctx_.tracing) ctx_.trace->process(ctx_.trace_pid, fmt::format("die 0 ({})", chip.name), 0);
    memory_ = std::make_unique<MemorySystem>("memory", scheduler_, chip, ctx_.tracing ? trace : nullptr, ctx_.trace_pid);
    ctx_.memory = memory_.get();
    // The scalar core listens to every core, so it comes first.
    scalar_ = std::make_unique<ScalarCore>("scalar", ctx_);
    std::vector<AiCore*> cubes, vectors;
    for (int i = 0; i < chip.cube.count; ++i) {
        cube_.push_back(std::make_unique<CubeCore>(fmt::format("cube{}", i).c_str(), i, ctx_, *scalar_));
        cubes.push_back(cube_.back().get());
    }
    for (int i = 0; i < chip.vector.count; ++i) {
        vector_.push_back(std::make_unique<VectorCore>(fmt::format("vector{}", i).c_str(), i, ctx_, *scalar_));
        vectors.push_back(vector_.back().get());
    }
    scalar_->attach_cores(std::move(cubes), std::move(vectors));
}

void Die::run() {
    sc_core::sc_start();
    end_ps_ = 0;
    for (const auto& t : ctx_.timing) end_ps_ = std::max(end_ps_, t.end_ps);
    const std::string report = scalar_->deadlock_report();
    if (!report.empty()) throw DeadlockError(report);
}

void Die::collect(Stats& s) const {
    const ChipParams& chip = ctx_.chip;
    const double ps_per_cycle = chip.ps_per_cycle();
    const double total_ps = static_cast<double>(end_ps_);
    auto cycles = [&](double ps) { return static_cast<std::int64_t>(std::llround(ps / ps_per_cycle)); };
    auto util = [&](double busy_ps, double units) { return total_ps > 0 && units > 0 ? busy_ps / (total_ps * units) : 0.0; };

    s.set("total_ps", end_ps_);
    s.set("total_ns", total_ps / 1000.0);
    s.set("total_cycles", cycles(total_ps));
    s.set("clock_ghz", chip.clock_ghz);

    // Per core, per core type, per pipe.
    std::vector<Interval> cube_busy, vector_busy;
    struct PipeSum {
        double busy_ps = 0;
        std::uint64_t bytes = 0;
        int units = 0;
    };
    std::map<std::string, PipeSum> pipes;
    auto per_core = [&](const AiCore& c) {
        const std::string key = fmt::format("cores.{}{}", to_string(c.type()), c.index());
        s.set(key + ".busy_cycles", cycles(static_cast<double>(c.busy_ps())));
        s.set(key + ".utilization", util(static_cast<double>(c.busy_ps()), 1));
        s.set(key + ".tasks", c.tasks_run());
        for (std::size_t p = 0; p < c.pipe_names().size(); ++p) {
            const std::string& name = c.pipe_names()[p];
            s.set(key + ".pipes." + name + ".busy_cycles", cycles(static_cast<double>(c.pipe(static_cast<int>(p)).busy_ps)));
            PipeSum& ps = pipes[fmt::format("{}_{}", to_string(c.type()), name)];
            ps.busy_ps += static_cast<double>(c.pipe(static_cast<int>(p)).busy_ps);
            ps.bytes += c.pipe(static_cast<int>(p)).bytes;
            ++ps.units;
        }
    };
    double cube_ps = 0, vector_ps = 0;
    for (const auto& c : cube_) { per_core(*c); cube_ps += static_cast<double>(c->busy_ps()); }
    for (const auto& c : vector_) { per_core(*c); vector_ps += static_cast<double>(c->busy_ps()); }
    // Busy intervals per core type from the task records (a core runs one
    // task at a time, so these are its busy intervals), gathered here
    // rather than appended per task during the run.
    for (std::size_t i = 0; i < ctx_.timing.size(); ++i) {
        const TaskTiming& t = ctx_.timing[i];
        const CoreType type = ctx_.stream.tasks[i].core_type;
        if (!t.done || type == CoreType::scalar) continue;
        (type == CoreType::cube ? cube_busy : vector_busy).emplace_back(t.start_ps, t.end_ps);
    }
    auto unit = [&](const std::string& name, double busy_ps, int count) {
        s.set("units." + name + ".count", count);
        s.set("units." + name + ".busy_cycles", cycles(busy_ps));
        s.set("units." + name + ".utilization", util(busy_ps, count));
    };
    if (chip.cube.count) unit("cube", cube_ps, chip.cube.count);
    if (chip.vector.count) unit("vector", vector_ps, chip.vector.count);
    unit("scalar", static_cast<double>(scalar_->busy_ps()), chip.scalar.count);
    for (const auto& [name, p] : pipes) {
        unit(name, p.busy_ps, p.units);
        s.set("units." + name + ".bytes", p.bytes);
    }

    const auto cube_u = merge_intervals(cube_busy), vector_u = merge_intervals(vector_busy);
    s.set("overlap.cube_vector", overlap_ratio(cube_u, vector_u));
    s.set("overlap.cube_busy_cycles", cycles(static_cast<double>(total_length(cube_u))));
    s.set("overlap.vector_busy_cycles", cycles(static_cast<double>(total_length(vector_u))));
    s.set("overlap.both_busy_cycles", cycles(static_cast<double>(intersection_length(cube_u, vector_u))));

    // Memory traffic per tier.
    const MemoryTraffic& m = memory_->traffic();
    s.set("memory.hbm.read_bytes", m.hbm_read_bytes);
    s.set("memory.hbm.write_bytes", m.hbm_write_bytes);
    const double hbm_bytes = static_cast<double>(m.hbm_read_bytes + m.hbm_write_bytes);
    const double hbm_cap = chip.hbm.bandwidth_gbps / 1000.0 * total_ps;
    s.set("units.hbm.utilization", hbm_cap > 0 ? hbm_bytes / hbm_cap : 0.0);
    s.set("memory.l2.hit_bytes", m.l2_hit_bytes);
    s.set("memory.l2.miss_bytes", m.l2_miss_bytes);
    s.set("memory.l2.write_bytes", m.l2_write_bytes);
    const double reads = static_cast<double>(m.l2_hit_bytes + m.l2_miss_bytes);
    s.set("memory.l2.hit_rate", reads > 0 ? static_cast<double>(m.l2_hit_bytes) / reads : 0.0);
    s.set("memory.transfers", m.transfers);
    const double l2_cap = chip.l2.bandwidth_gbps / 1000.0 * total_ps;
    s.set("units.l2.utilization", l2_cap > 0 ? static_cast<double>(m.l2_served_bytes) / l2_cap : 0.0);
    auto bytes_of = [&](const char* pipe) { auto it = pipes.find(pipe); return it == pipes.end() ? 0 : it->second.bytes; };
    std::uint64_t cube_mte2 = 0, vector_mte2 = 0, vector_mte3 = 0;
    for (const auto& c : cube_) cube_mte2 += c->pipe(CubeCore::mte2).bytes;
    for (const auto& c : vector_) {
        vector_mte2 += c->pipe(VectorCore::mte2).bytes;
        vector_mte3 += c->pipe(VectorCore::mte3).bytes;
    }
    s.set("memory.l1.in_bytes", cube_mte2);
    s.set("memory.l0.in_bytes", bytes_of("cube_mte1"));
    s.set("memory.l0c.out_bytes", bytes_of("cube_fixpipe"));
    s.set("memory.ub.in_bytes", vector_mte2);
    s.set("memory.ub.out_bytes", vector_mte3);

    // Tasks and events.
    const TaskStream& ts = ctx_.stream;
    s.set("tasks.count", static_cast<std::uint64_t>(ts.tasks.size()));
    s.set("tasks.streams", static_cast<std::uint64_t>(ts.streams.size()));
    std::uint64_t wait_ps = 0, dispatch_wait_ps = 0, max_wait_ps = 0;
    std::map<std::string, std::uint64_t> by_kernel;
    for (std::size_t i = 0; i < ts.tasks.size(); ++i) {
        const TaskTiming& t = ctx_.timing[i];
        const std::uint64_t w = t.released_ps > t.head_ps ? t.released_ps - t.head_ps : 0;
        wait_ps += w;
        max_wait_ps = std::max(max_wait_ps, w);
        const std::uint64_t ready = std::max(t.head_ps, t.released_ps);
        dispatch_wait_ps += t.start_ps > ready ? t.start_ps - ready : 0;
        ++by_kernel[to_string(ts.tasks[i].kernel)];
    }
    for (const auto& [k, n] : by_kernel) s.set("tasks.by_kernel." + k, n);
    s.set("tasks.dispatched", scalar_->dispatched());
    s.set("events.count", static_cast<std::uint64_t>(ts.events.size()));
    std::uint64_t signals = 0, fired = 0;
    for (const auto& e : scalar_->events()) {
        signals += e.signals;
        fired += e.fired ? 1 : 0;
    }
    s.set("events.fired", fired);
    s.set("events.signals", signals);
    s.set("events.wait_cycles", cycles(static_cast<double>(wait_ps)));
    s.set("events.max_wait_cycles", cycles(static_cast<double>(max_wait_ps)));
    s.set("tasks.dispatch_wait_cycles", cycles(static_cast<double>(dispatch_wait_ps)));
}

}  // namespace npusim
