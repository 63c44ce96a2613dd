#include "host/host_model.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "hw/die.hpp"
#include "stats/stats.hpp"

namespace npusim::host {

std::unique_ptr<HostModel> HostModel::create(const GraphWorkload& w, const ChipParams& chip,
                                             const compiler::CompileResult& compiled) {
    const Mode mode = w.host_mode;
    if (mode == Mode::off) return nullptr;
    if (chip.host.threads < threads_needed(mode))
        throw InputError(fmt::format("workload.host_mode = {} needs {} host threads{}, but chip.host.threads is {}",
                                     to_string(mode), threads_needed(mode),
                                     mode == Mode::hetero ? " (infer, resize, launch and at least one CPU worker)" : "",
                                     chip.host.threads));
    std::unique_ptr<HostModel> m(new HostModel());
    m->chip_ = &chip;
    m->opt_.mode = mode;
    m->opt_.dynamic_shapes = w.dynamic_shapes;
    m->opt_.submit_batch = w.submit_batch;
    m->plan_ = make_plan(compiled.ops, compiled.stream, w.cpu_ops, mode == Mode::hetero, chip.host);
    m->gated_ = gate_stream(compiled.stream, m->plan_, m->opt_.submit_batch);
    return m;
}

TaskStream HostModel::take_stream() { return std::move(gated_.stream); }

void HostModel::attach(Die& die, TraceWriter* trace) {
    runtime_ = std::make_unique<HostRuntime>("host", opt_, chip_->host, plan_, gated_, die, trace);
}

void HostModel::finish() {
    if (!runtime_->finished()) throw DeadlockError(runtime_->stall_report());
    runtime_->emit_flows();
    runtime_->end_critical_path();
}

void HostModel::collect(Stats& s) const { runtime_->collect(s); }

std::string HostModel::summary(const Stats& s) const {
    return fmt::format(
        "  host {:<8} end-to-end {:.3f} us   device idle {:.1f}%   launches {}   submissions {}   drains {}   waits {}   "
        "peak device memory {:.1f} MB\n",
        to_string(opt_.mode), s.number("host.end_to_end_ns") / 1000.0, s.number("host.device_idle_fraction") * 100.0,
        s.number("host.launches"), s.number("host.submissions"), s.number("host.drains"), s.number("host.waits"),
        s.number("host.peak_device_memory_bytes") / 1048576.0) +
           breakdown_line(s);
}

// Thread time per host stage group, the waits included: where the host's time went.
std::string HostModel::breakdown_line(const Stats& s) {
    std::string line = "  host time   ";
    for (const char* b : HostRuntime::kBreakdown)
        line += fmt::format("  {} {:.1f}", b, s.number(std::string("host.breakdown.") + b + "_ns") / 1000.0);
    return line + " us (thread time)\n";
}

}  // namespace npusim::host
