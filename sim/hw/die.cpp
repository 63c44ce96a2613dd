#include "hw/die.hpp"

#include <algorithm>
#include <stdexcept>
#include <map>

#include <fmt/format.h>

#include "tasks/stream_footprint.hpp"
#include "common/errors.hpp"
#include "hw/op_profile.hpp"
#include "stats/intervals.hpp"
#include "stats/run_span.hpp"
#include "stats/stats.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

Die::Die(sc_core::sc_module_name name, const ChipParams& chip, const TaskStream& stream, TraceWriter* trace,
         bool trace_pipes, DiePlace place, std::shared_ptr<const DescriptorTable> descriptors,
         WakeScheduler::Kernel kernel)
    : sc_core::sc_module(name), ctx_(chip, stream), scheduler_("scheduler", kernel) {
    ctx_.scheduler = &scheduler_;
    ctx_.trace = trace;
    ctx_.tracing = trace && trace->enabled();
    ctx_.trace_pipes = trace_pipes;
    ctx_.place = place;
    ctx_.trace_pid = place.rank + 1;
    if (ctx_.tracing)
        ctx_.trace->process(ctx_.trace_pid,
                            place.fabric ? fmt::format("rank {} ({})", place.rank, chip.name)
                                         : fmt::format("die 0 ({})", chip.name),
                            place.rank);
    if (!stream.programs.empty()) {
        if (!place.fabric)
            throw std::logic_error(stream.file + ": kernel programs run on a System of dies (its fabric), not a lone die");
        programs_ = std::make_unique<ProgramRuntime>(stream, chip, chip.vector.count);
        ctx_.programs = programs_.get();
    }
    memory_ = std::make_unique<MemorySystem>("memory", scheduler_, chip, ctx_.tracing ? trace : nullptr, ctx_.trace_pid);
    ctx_.memory = memory_.get();
    // The scalar core listens to every core, so it comes first.
    scalar_ = std::make_unique<ScalarCore>("scalar", ctx_, std::move(descriptors));
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

Die::~Die() = default;

void Die::watch_fired(int unit, std::uint64_t tag, std::uint64_t fire_ps) {
    if (unit == ScalarCore::kWatchUnit) scalar_->memory_ready(static_cast<std::uint32_t>(tag), fire_ps);
    else vector_[static_cast<std::size_t>(unit - 1)]->program_watch_fired(tag, fire_ps);
}

std::string Die::deadlock_report() const {
    // A program still running waits inside its task: name it first.
    for (const auto& v : vector_) {
        const std::string what = v->program_wait();
        if (what.empty()) continue;
        const Task& t = ctx_.stream.tasks[v->running_task()];
        const std::uint64_t addr = v->program_wait_addr();
        return fmt::format("deadlock: task '{}' ({}:{}, program '{}', block {}) on vector core {} waits for {}{} that "
                           "nothing will bring",
                           t.id, ctx_.stream.file, t.line, ctx_.stream.programs[t.params.program].id, t.params.block,
                           v->index(), what, addr ? fmt::format(" at {:#x}", addr) : std::string());
    }
    return scalar_->deadlock_report();
}

void Die::run() {
    sc_core::sc_start();
    check_finished();
}

void Die::run_alone() {
    scheduler_.run_alone();
    check_finished();
}

void Die::check_finished() const {
    const std::string report = deadlock_report();
    if (!report.empty()) throw DeadlockError(report);
}

std::uint64_t Die::end_ps() const {
    std::uint64_t end = 0;
    for (const auto& t : ctx_.timing) end = std::max(end, t.end_ps);
    return end;
}

void Die::collect(Stats& s, std::uint64_t span_ps, std::optional<std::uint64_t> addressed_bytes) const {
    const ChipParams& chip = ctx_.chip;
    // With a host modelled the run ends when the later of the two does (the
    // host's last step after the device's last task ends the critical path).
    const std::uint64_t end = std::max(end_ps(), host_tail_.end_ps);
    const RunSpan span{span_ps ? span_ps : end, chip.ps_per_cycle()};
    s.set("total_ps", end);
    s.set("total_ns", static_cast<double>(end) / 1000.0);
    s.set("total_cycles", span.cycles(static_cast<double>(end)));
    s.set("clock_ghz", chip.clock_ghz);
    s.set("memory.hbm.addressed_bytes", addressed_bytes ? *addressed_bytes : gm_addressed_bytes(ctx_.stream));

    // Each module reports what it counted.
    auto cores = [](const auto& owned) {
        std::vector<const AiCore*> v;
        for (const auto& c : owned) v.push_back(c.get());
        return v;
    };
    const std::vector<const AiCore*> cubes = cores(cube_), vectors = cores(vector_);
    for (const AiCore* c : cubes) c->report(s, span);
    for (const AiCore* c : vectors) c->report(s, span);
    AiCore::report_units(s, span, cubes);
    AiCore::report_units(s, span, vectors);
    CubeCore::report_buffers(s, cubes);
    VectorCore::report_buffers(s, vectors);
    scalar_->report(s, span);
    memory_->report(s, span);
    if (programs_) programs_->report(s);

    // What no one module holds: the per-task timing record and the stream.
    report_overlap(s, span);
    report_tasks(s, span);
    report_ops(s, ctx_);
    report_critical_path(s, ctx_, critical_path());
}

void Die::trace_critical_path() {
    if (!ctx_.tracing) return;
    npusim::trace_critical_path(*ctx_.trace, ctx_.trace_pid, ctx_.next_tid++, ctx_, critical_path());
}

void Die::report_overlap(Stats& s, const RunSpan& span) const {
    // Busy intervals per core type from the task records (a core runs one
    // task at a time, so these are its busy intervals), gathered here
    // rather than appended per task during the run.
    std::vector<Interval> cube_busy, vector_busy;
    for (std::size_t i = 0; i < ctx_.timing.size(); ++i) {
        const TaskTiming& t = ctx_.timing[i];
        const CoreType type = ctx_.stream.tasks[i].core_type;
        if (!t.done || type == CoreType::scalar) continue;
        (type == CoreType::cube ? cube_busy : vector_busy).emplace_back(t.start_ps, t.end_ps);
    }
    const auto cube_u = merge_intervals(cube_busy), vector_u = merge_intervals(vector_busy);
    auto cycles = [&](std::uint64_t ps) { return span.cycles(static_cast<double>(ps)); };
    s.set("overlap.cube_vector", overlap_ratio(cube_u, vector_u));
    s.set("overlap.cube_busy_cycles", cycles(total_length(cube_u)));
    s.set("overlap.vector_busy_cycles", cycles(total_length(vector_u)));
    s.set("overlap.both_busy_cycles", cycles(intersection_length(cube_u, vector_u)));
}

void Die::report_tasks(Stats& s, const RunSpan& span) const {
    const TaskStream& ts = ctx_.stream;
    s.set("tasks.count", static_cast<std::uint64_t>(ts.tasks.size()));
    s.set("tasks.streams", static_cast<std::uint64_t>(ts.streams.size()));
    s.set("events.count", static_cast<std::uint64_t>(ts.events.size()));
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
    auto cycles = [&](std::uint64_t ps) { return span.cycles(static_cast<double>(ps)); };
    s.set("events.wait_cycles", cycles(wait_ps));
    s.set("events.max_wait_cycles", cycles(max_wait_ps));
    s.set("tasks.dispatch_wait_cycles", cycles(dispatch_wait_ps));
}

}  // namespace npusim
